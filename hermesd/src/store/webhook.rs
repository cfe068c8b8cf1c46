//! The webhook platform's memory of delivery ids (`webhook_deliveries`): a sender's retry of a
//! delivery it already made is recognised for an hour, across restarts, so it never starts a
//! second run. Rows older than the hour are deleted as new ones come, so the table holds at
//! most an hour of deliveries (which the routes' rate limits bound).

use rusqlite::{Transaction, params};

use super::StoreError;

pub const WEBHOOK_MIGRATION: &str = r#"
CREATE TABLE webhook_deliveries (
    route       TEXT NOT NULL,
    delivery_id TEXT NOT NULL,
    seen_at     INTEGER NOT NULL,
    PRIMARY KEY (route, delivery_id)
) WITHOUT ROWID;
CREATE INDEX webhook_deliveries_seen ON webhook_deliveries (seen_at);
"#;

/// Record delivery `id` of `route` at `now_ms`; false when it was seen within `ttl_ms`.
pub fn claim_webhook_delivery(
    tx: &Transaction<'_>,
    route: &str,
    id: &str,
    now_ms: i64,
    ttl_ms: i64,
) -> Result<bool, StoreError> {
    tx.execute(
        "DELETE FROM webhook_deliveries WHERE seen_at <= ?1",
        params![now_ms - ttl_ms],
    )
    .map_err(StoreError::sql("forget old webhook deliveries"))?;
    let inserted = tx
        .execute(
            "INSERT OR IGNORE INTO webhook_deliveries (route, delivery_id, seen_at)
             VALUES (?1, ?2, ?3)",
            params![route, id, now_ms],
        )
        .map_err(StoreError::sql("record a webhook delivery"))?;
    Ok(inserted == 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_delivery_is_claimed_once_within_its_hour() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrations::apply(&conn).unwrap();
        let tx = conn.transaction().unwrap();
        let hour = 3_600_000;
        assert!(claim_webhook_delivery(&tx, "gh", "d1", 1_000, hour).unwrap());
        assert!(!claim_webhook_delivery(&tx, "gh", "d1", 2_000, hour).unwrap());
        assert!(claim_webhook_delivery(&tx, "other", "d1", 2_000, hour).unwrap());
        // An hour later it is forgotten, and so is every row as old.
        assert!(claim_webhook_delivery(&tx, "gh", "d1", 1_000 + hour, hour).unwrap());
        let rows: i64 = tx
            .query_row("SELECT count(*) FROM webhook_deliveries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }
}
