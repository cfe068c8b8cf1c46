//! What hermesd remembers about each skill directory: its origin (written by the agent, synced
//! from the bundle, installed, found on disk, or edited by hand after hermesd wrote it), the
//! content digest it last checked, and whether the model may see it.

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{StoreError, now_ms};

/// One skill directory's record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillRecord {
    pub dir: String,
    pub name: String,
    pub digest: String,
    /// Stat fingerprint of the files when `digest` was taken (see `skills::fingerprint`).
    pub fingerprint: String,
    /// `agent`, `bundled`, `installed`, `found` or `edited`.
    pub origin: String,
    /// `trusted` or `quarantined`.
    pub trust: String,
    /// Why it is quarantined.
    pub reason: Option<String>,
}

impl SkillRecord {
    pub fn is_trusted(&self) -> bool {
        self.trust == "trusted"
    }
}

const COLUMNS: &str = "dir, name, digest, fingerprint, origin, trust, reason";

fn from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<SkillRecord> {
    Ok(SkillRecord {
        dir: row.get(0)?,
        name: row.get(1)?,
        digest: row.get(2)?,
        fingerprint: row.get(3)?,
        origin: row.get(4)?,
        trust: row.get(5)?,
        reason: row.get(6)?,
    })
}

/// Every record.
pub fn skill_records(conn: &Connection) -> Result<Vec<SkillRecord>, StoreError> {
    let mut stmt = conn
        .prepare(&format!("SELECT {COLUMNS} FROM skill_records"))
        .map_err(StoreError::sql("list skill records"))?;
    let rows = stmt
        .query_map([], from_row)
        .map_err(StoreError::sql("list skill records"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("list skill records"))
}

/// The record of one directory.
pub fn skill_record(conn: &Connection, dir: &str) -> Result<Option<SkillRecord>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM skill_records WHERE dir = ?1"),
        [dir],
        from_row,
    )
    .optional()
    .map_err(StoreError::sql("read skill record"))
}

/// Insert or replace a record.
pub fn put_skill_record(tx: &Transaction<'_>, record: &SkillRecord) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO skill_records (dir, name, digest, fingerprint, origin, trust, reason, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (dir) DO UPDATE SET name = ?2, digest = ?3, fingerprint = ?4, origin = ?5,
             trust = ?6, reason = ?7, updated_at = ?8",
        params![
            record.dir,
            record.name,
            record.digest,
            record.fingerprint,
            record.origin,
            record.trust,
            record.reason,
            now_ms()
        ],
    )
    .map_err(StoreError::sql("store skill record"))?;
    Ok(())
}

/// Forget a directory (the skill was deleted).
pub fn delete_skill_record(tx: &Transaction<'_>, dir: &str) -> Result<(), StoreError> {
    tx.execute("DELETE FROM skill_records WHERE dir = ?1", [dir])
        .map_err(StoreError::sql("delete skill record"))?;
    Ok(())
}
