//! `hermesctl import hermes`: copy a Python Hermes Agent history (its `state.db`, any schema from
//! v6 to v30) into hermesd's `sessions` and `messages`, keeping the session ids, idempotently and
//! incrementally (bookkeeping in `hermes_imports`, see [`IMPORT_MIGRATION`]).
//!
//! How Python's shapes map onto hermesd's:
//! - Lineage (see `lineage.rs`): a child with `model_config._delegate_from` is a subagent, with
//!   `_branched_from` a branch; a child of a parent that ended with `end_reason = 'compression'`
//!   is that parent's compression continuation (`continued_by` on the parent; when several
//!   qualify, the one Python's `get_compression_tip` would follow, the others become branches);
//!   the legacy `end_reason = 'branched'` parent makes a branch; any other child is a subagent.
//!   A parent missing from the source (or from hermesd) leaves the child a root, except an
//!   orphaned delegate, which stays a subagent (hidden from lists, as in Python).
//! - In-place compaction (`hermes_state.py:4421` `archive_and_compact`, on by default per
//!   `hermes_cli/config.py:1515`): the archived rows (`active = 0, compacted = 1`) are the
//!   history the summary replaced. They go to an extra segment `<id>-compacted` whose
//!   `continued_by` is the session itself, which keeps the live rows (summary + what followed)
//!   under the Python id: hermesd's own compression shape, so the model reloads what Python
//!   would reload while the old turns stay searchable.
//! - Rows the user rewound/undid (`active = 0, compacted = 0`) and roles other than
//!   system/user/assistant/tool (e.g. `session_meta`) are skipped and counted.
//! - Python's `system_prompt` is not copied: hermesd builds its own for its own tools.

mod convert;
mod copy;
mod lineage;
mod open;
mod sessions;
mod source;
mod target;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_incremental;
#[cfg(test)]
mod tests_open;
#[cfg(test)]
mod tests_units;
#[cfg(test)]
mod tests_v6;

use rusqlite::{Connection, Transaction};

use super::StoreError;

pub use open::open_source;

/// Migration SQL creating the bookkeeping table: one row per imported Python session.
/// `source_max_message_id` is the highest Python `messages.id` already handled for it,
/// `source_max_compacted_id` the highest one already seen archived by an in-place compaction,
/// `last_message_id` the hermesd `messages.id` of the last message the import put into the
/// session (a later own message means hermesd continued it, and further imports leave it alone).
/// No foreign key: a session the user deleted in hermesd stays deleted.
pub const IMPORT_MIGRATION: &str = r#"
CREATE TABLE hermes_imports (
    session_id              TEXT PRIMARY KEY,
    source_max_message_id   INTEGER NOT NULL,
    source_max_compacted_id INTEGER NOT NULL DEFAULT 0,
    last_message_id         INTEGER NOT NULL DEFAULT 0,
    imported_at             INTEGER NOT NULL
) WITHOUT ROWID;
"#;

/// Suffix of the segment that holds a session's in-place-compacted history.
pub const ARCHIVE_SUFFIX: &str = "-compacted";

/// What one import did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// Python sessions created in hermesd by this run (their `-compacted` segments not counted).
    pub sessions: usize,
    /// Messages inserted by this run, into sessions and their `-compacted` segments.
    pub messages: usize,
    /// Python sessions left alone: the id belongs to a hermesd session that was never imported
    /// (or its `-compacted` id does), the session was imported before and deleted in hermesd
    /// since, or hermesd continued it since the last import while Python did too.
    pub skipped_sessions: usize,
    /// Source rows not imported: roles hermesd does not keep (e.g. `session_meta`), rows the
    /// user rewound or undid in Python, and the not-yet-imported rows of skipped sessions.
    pub skipped_messages: usize,
    /// Previously imported sessions that got new messages, or whose imported messages moved to
    /// the `-compacted` segment because Python compacted the session in place since.
    pub updated_sessions: usize,
    /// `schema_version` of the source, when it records one.
    pub source_schema_version: Option<i64>,
}

/// Import every session of `source` (a Python Hermes `state.db` from [`open_source`]) into the
/// hermesd database behind `target`, within that transaction. Reads one consistent snapshot of
/// the source. Blocking: the daemon calls it through `spawn_blocking`.
pub fn import(source: &Connection, target: &Transaction<'_>) -> Result<ImportReport, StoreError> {
    let schema = source::inspect(source)?;
    let snapshot = source
        .unchecked_transaction()
        .map_err(StoreError::sql("begin reading the Hermes state.db"))?;
    let python_sessions = source::read_sessions(&snapshot, &schema)?;
    let stats = source::message_stats(&snapshot, &schema)?;
    let links = lineage::plan(&python_sessions, &stats);

    let mut report = ImportReport {
        source_schema_version: schema.version,
        ..ImportReport::default()
    };
    let mut routes = sessions::prepare(
        &snapshot,
        target,
        &schema,
        &python_sessions,
        &stats,
        &links,
        &mut report,
    )?;
    copy::copy_messages(&snapshot, target, &schema, &mut routes, &mut report)?;
    sessions::finish(target, &stats, &routes, &mut report)?;
    snapshot
        .finish()
        .map_err(StoreError::sql("end reading the Hermes state.db"))?;
    Ok(report)
}
