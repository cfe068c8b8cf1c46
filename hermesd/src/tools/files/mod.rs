//! File tools for the agent: `read_file`, `write_file` and `search_files`.
//!
//! Each tool is a blocking function that returns the tool's result JSON; the
//! daemon runs them through `spawn_blocking`. Path policy (credential deny
//! lists, secret redaction, repeat-call tracking) lives outside this module.

mod guards;
mod lines;
pub mod read;
pub mod schema;
pub mod search;
mod search_content;
mod search_names;
pub mod settings;
mod suggest;
pub mod write;

pub use read::{ReadHints, read_file, read_file_with, read_settings_with};
pub use schema::{read_file_schema, search_files_schema, write_file_schema};
pub use search::{OutputMode, SearchRequest, SearchTarget, search_files};
pub use write::write_file;

#[cfg(test)]
mod tests;
