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

/// Every record.
pub fn skill_records(conn: &Connection) -> Result<Vec<SkillRecord>, StoreError> {
    let mut stmt = conn
        .prepare("SELECT dir, name, digest, origin, trust, reason FROM skill_records")
        .map_err(StoreError::sql("list skill records"))?;
    let rows = stmt
        .query_map([], |row| {
            Ok(SkillRecord {
                dir: row.get(0)?,
                name: row.get(1)?,
                digest: row.get(2)?,
                origin: row.get(3)?,
                trust: row.get(4)?,
                reason: row.get(5)?,
            })
        })
        .map_err(StoreError::sql("list skill records"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("list skill records"))
}

/// The record of one directory.
pub fn skill_record(conn: &Connection, dir: &str) -> Result<Option<SkillRecord>, StoreError> {
    conn.query_row(
        "SELECT dir, name, digest, origin, trust, reason FROM skill_records WHERE dir = ?1",
        [dir],
        |row| {
            Ok(SkillRecord {
                dir: row.get(0)?,
                name: row.get(1)?,
                digest: row.get(2)?,
                origin: row.get(3)?,
                trust: row.get(4)?,
                reason: row.get(5)?,
            })
        },
    )
    .optional()
    .map_err(StoreError::sql("read skill record"))
}

/// Insert or replace a record.
pub fn put_skill_record(tx: &Transaction<'_>, record: &SkillRecord) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO skill_records (dir, name, digest, origin, trust, reason, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (dir) DO UPDATE SET name = ?2, digest = ?3, origin = ?4, trust = ?5,
             reason = ?6, updated_at = ?7",
        params![
            record.dir,
            record.name,
            record.digest,
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
