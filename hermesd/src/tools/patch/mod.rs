//! Hermes' `patch` tool core: fuzzy find-and-replace, V4A multi-file patches, atomic
//! application to files with unified diffs, and the tool schema.

mod apply;
mod fsio;
mod fuzzy;
mod hint;
mod hunks;
mod schema;
mod seqmatch;
mod strategies;
mod v4a;
mod v4a_syntax;
mod workspace;

pub use apply::{patch_replace, patch_v4a};
pub use fuzzy::{PatchError, Replacement, fuzzy_replace};
pub use hint::closest_sections;
pub use schema::patch_schema;
pub use v4a::{FileOp, Hunk, HunkLine, ParseError, Patch, parse as parse_v4a, touched_paths};

#[cfg(test)]
mod tests;
