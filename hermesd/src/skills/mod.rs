//! Skills: discovering and parsing them, deciding which are active, the system-prompt index,
//! `skills_list` / `skill_view` / `skill_manage`, the security scan, the bundled set and its sync,
//! and the library that keeps each skill's origin and trust.
//!
//! Everything but `library` is synchronous file work; async callers use `spawn_blocking`.

pub mod activation;
pub mod bundled;
pub mod catalog;
mod discover;
mod fields;
mod files;
pub mod fingerprint;
pub mod frontmatter;
pub mod index;
pub mod library;
mod loader;
pub mod manage;
pub mod scan;
pub mod schema;
mod trust;
pub mod view;
pub mod watch;

pub use activation::{
    ActivationContext, InactiveReason, activation, availability, current_os, is_active,
};
pub use catalog::{Catalog, Conditions, SkillEntry, SkillProblem};
pub use discover::Signature;
pub use files::MAX_VIEW_BYTES;
pub use index::build_index;
pub use library::{SkillsLibrary, SkillsView};
pub use loader::{MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, files_digest, skill_digest};
pub use schema::{skill_view_schema, skills_list_schema};
pub use view::{skill_view, skills_list};

#[cfg(test)]
mod tests;
