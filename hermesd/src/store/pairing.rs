//! Pairing records: strangers who asked for a code (only a hash of the code is kept) and the
//! users the owner approved, per platform, with the count of failed approvals behind the
//! lockout. The rules (limits, expiry, code shape) are the gateway's; these are the rows.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::StoreError;

/// One pairing record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairingRow {
    pub platform: String,
    pub user_id: String,
    pub user_name: String,
    pub code_hash: Option<String>,
    pub approved: bool,
    pub requested_at: i64,
    pub expires_at: Option<i64>,
    pub approved_at: Option<i64>,
}

const COLUMNS: &str =
    "platform, user_id, user_name, code_hash, approved, requested_at, expires_at, approved_at";

fn pairing_row(row: &Row<'_>) -> rusqlite::Result<PairingRow> {
    Ok(PairingRow {
        platform: row.get(0)?,
        user_id: row.get(1)?,
        user_name: row.get(2)?,
        code_hash: row.get(3)?,
        approved: row.get(4)?,
        requested_at: row.get(5)?,
        expires_at: row.get(6)?,
        approved_at: row.get(7)?,
    })
}

/// The record of `user_id` on `platform`.
pub fn pairing(
    conn: &Connection,
    platform: &str,
    user_id: &str,
) -> Result<Option<PairingRow>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM gateway_pairing WHERE platform = ?1 AND user_id = ?2"),
        [platform, user_id],
        pairing_row,
    )
    .optional()
    .map_err(StoreError::sql("read a pairing record"))
}

/// Every record (of `platform`, when given), approved users first.
pub fn pairings(conn: &Connection, platform: Option<&str>) -> Result<Vec<PairingRow>, StoreError> {
    const CTX: &str = "list pairing records";
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM gateway_pairing WHERE ?1 IS NULL OR platform = ?1
              ORDER BY approved DESC, platform, requested_at"
        ))
        .map_err(StoreError::sql(CTX))?;
    stmt.query_map([platform], pairing_row)
        .map_err(StoreError::sql(CTX))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql(CTX))
}

/// Insert or replace the record of `row.platform` / `row.user_id`.
pub fn put_pairing(tx: &Transaction<'_>, row: &PairingRow) -> Result<(), StoreError> {
    tx.execute(
        &format!(
            "INSERT OR REPLACE INTO gateway_pairing ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
        ),
        params![
            row.platform,
            row.user_id,
            row.user_name,
            row.code_hash,
            row.approved,
            row.requested_at,
            row.expires_at,
            row.approved_at
        ],
    )
    .map_err(StoreError::sql("store a pairing record"))?;
    Ok(())
}

/// Delete the record of `user_id`; whether there was one.
pub fn delete_pairing(
    tx: &Transaction<'_>,
    platform: &str,
    user_id: &str,
) -> Result<bool, StoreError> {
    tx.execute(
        "DELETE FROM gateway_pairing WHERE platform = ?1 AND user_id = ?2",
        [platform, user_id],
    )
    .map(|n| n > 0)
    .map_err(StoreError::sql("delete a pairing record"))
}

/// Forget pending requests of `platform` made before `before_ms` (approved users stay).
pub fn prune_pairing_requests(
    tx: &Transaction<'_>,
    platform: &str,
    before_ms: i64,
) -> Result<usize, StoreError> {
    tx.execute(
        "DELETE FROM gateway_pairing WHERE platform = ?1 AND approved = 0 AND requested_at < ?2",
        params![platform, before_ms],
    )
    .map_err(StoreError::sql("prune pairing requests"))
}

/// `(failed approvals in a row, locked until)` of `platform`.
pub fn pairing_failures(
    conn: &Connection,
    platform: &str,
) -> Result<(u32, Option<i64>), StoreError> {
    conn.query_row(
        "SELECT failures, locked_until FROM gateway_pairing_failures WHERE platform = ?1",
        [platform],
        |row| Ok((row.get(0)?, row.get(1)?)),
    )
    .optional()
    .map(Option::unwrap_or_default)
    .map_err(StoreError::sql("read failed pairing approvals"))
}

/// Store the failure count and lockout of `platform`.
pub fn set_pairing_failures(
    tx: &Transaction<'_>,
    platform: &str,
    failures: u32,
    locked_until: Option<i64>,
) -> Result<(), StoreError> {
    tx.execute(
        "INSERT OR REPLACE INTO gateway_pairing_failures (platform, failures, locked_until)
         VALUES (?1, ?2, ?3)",
        params![platform, failures, locked_until],
    )
    .map_err(StoreError::sql("store failed pairing approvals"))?;
    Ok(())
}
