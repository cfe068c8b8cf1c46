//! The webhook platform's memory of deliveries: their ids (`webhook_deliveries`) and the SHA-256
//! digests of the signed requests it accepted (`webhook_bodies`, per route). A sender's retry of
//! a delivery it already made — or a captured signed request replayed under a new delivery id,
//! or none — is recognised for an hour, across restarts, so it never starts a second run. Rows
//! older than the hour are deleted as new ones come, so each table holds at most an hour of
//! deliveries (which the routes' rate limits bound), and a route keeps at most
//! [`MAX_BODIES_PER_ROUTE`] digests, its oldest forgotten first.

use rusqlite::{OptionalExtension, Transaction, params};

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

pub const WEBHOOK_BODIES_MIGRATION: &str = r#"
CREATE TABLE webhook_bodies (
    route   TEXT NOT NULL,
    digest  BLOB NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (route, digest)
) WITHOUT ROWID;
CREATE INDEX webhook_bodies_seen ON webhook_bodies (seen_at);
CREATE INDEX webhook_bodies_by_route ON webhook_bodies (route, seen_at);
"#;

/// The most digests one route keeps; past it the oldest are forgotten (a route's rate limit
/// keeps it far below: the default 30 a minute is 1,800 an hour).
pub const MAX_BODIES_PER_ROUTE: i64 = 10_000;

/// What a delivery is to the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// New: recorded.
    Fresh,
    /// Its delivery id was seen within the hour.
    SeenDelivery,
    /// Its signed request (by digest) was accepted within the hour, under another delivery id.
    SeenBody,
}

/// How long deliveries are remembered, and how many digests a route keeps.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub ttl_ms: i64,
    pub max_bodies: i64,
}

/// Record delivery `id` of `route` at `now_ms`, with `digest` the SHA-256 of the signed request
/// when it was signed; nothing is recorded when either was seen within the window.
pub fn claim_webhook(
    tx: &Transaction<'_>,
    route: &str,
    id: &str,
    digest: Option<&[u8]>,
    now_ms: i64,
    window: Window,
) -> Result<Claim, StoreError> {
    let expired = now_ms - window.ttl_ms;
    tx.execute(
        "DELETE FROM webhook_deliveries WHERE seen_at <= ?1",
        params![expired],
    )
    .map_err(StoreError::sql("forget old webhook deliveries"))?;
    tx.execute(
        "DELETE FROM webhook_bodies WHERE seen_at <= ?1",
        params![expired],
    )
    .map_err(StoreError::sql("forget old webhook bodies"))?;
    let seen_id = tx
        .query_row(
            "SELECT 1 FROM webhook_deliveries WHERE route = ?1 AND delivery_id = ?2",
            params![route, id],
            |_| Ok(()),
        )
        .optional()
        .map_err(StoreError::sql("look up a webhook delivery"))?
        .is_some();
    if seen_id {
        return Ok(Claim::SeenDelivery);
    }
    if let Some(digest) = digest {
        let seen_body = tx
            .query_row(
                "SELECT 1 FROM webhook_bodies WHERE route = ?1 AND digest = ?2",
                params![route, digest],
                |_| Ok(()),
            )
            .optional()
            .map_err(StoreError::sql("look up a webhook body"))?
            .is_some();
        if seen_body {
            return Ok(Claim::SeenBody);
        }
        tx.execute(
            "INSERT INTO webhook_bodies (route, digest, seen_at) VALUES (?1, ?2, ?3)",
            params![route, digest, now_ms],
        )
        .map_err(StoreError::sql("record a webhook body"))?;
        tx.execute(
            "DELETE FROM webhook_bodies WHERE route = ?1 AND digest IN (
                 SELECT digest FROM webhook_bodies WHERE route = ?1
                 ORDER BY seen_at DESC LIMIT -1 OFFSET ?2)",
            params![route, window.max_bodies],
        )
        .map_err(StoreError::sql("forget a route's oldest webhook bodies"))?;
    }
    tx.execute(
        "INSERT INTO webhook_deliveries (route, delivery_id, seen_at) VALUES (?1, ?2, ?3)",
        params![route, id, now_ms],
    )
    .map_err(StoreError::sql("record a webhook delivery"))?;
    Ok(Claim::Fresh)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn db() -> rusqlite::Connection {
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::store::migrations::apply(&conn).unwrap();
        conn
    }

    const HOUR: i64 = 3_600_000;
    const WINDOW: Window = Window {
        ttl_ms: HOUR,
        max_bodies: MAX_BODIES_PER_ROUTE,
    };

    #[test]
    fn a_delivery_is_claimed_once_within_its_hour() {
        let mut conn = db();
        let tx = conn.transaction().unwrap();
        let claim = |id: &str, route: &str, now: i64| {
            claim_webhook(&tx, route, id, None, now, WINDOW).unwrap()
        };
        assert_eq!(claim("d1", "gh", 1_000), Claim::Fresh);
        assert_eq!(claim("d1", "gh", 2_000), Claim::SeenDelivery);
        assert_eq!(claim("d1", "other", 2_000), Claim::Fresh);
        // An hour later it is forgotten, and so is every row as old.
        assert_eq!(claim("d1", "gh", 1_000 + HOUR), Claim::Fresh);
        let rows: i64 = tx
            .query_row("SELECT count(*) FROM webhook_deliveries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }

    #[test]
    fn a_signed_body_is_claimed_once_within_its_hour_whatever_its_delivery_id() {
        let mut conn = db();
        let tx = conn.transaction().unwrap();
        let (a, b) = ([1u8; 32], [2u8; 32]);
        let claim = |id: &str, route: &str, digest: &[u8], now: i64| {
            claim_webhook(&tx, route, id, Some(digest), now, WINDOW).unwrap()
        };
        assert_eq!(claim("d1", "gh", &a, 1_000), Claim::Fresh);
        assert_eq!(claim("d2", "gh", &a, 2_000), Claim::SeenBody);
        assert_eq!(claim("d1", "gh", &b, 2_000), Claim::SeenDelivery);
        // Nothing of a refused delivery is recorded: its id is still new.
        assert_eq!(claim("d2", "gh", &b, 3_000), Claim::Fresh);
        assert_eq!(claim("d3", "other", &a, 3_000), Claim::Fresh);
        assert_eq!(claim("d4", "gh", &a, 1_000 + HOUR), Claim::Fresh);
        let rows: i64 = tx
            .query_row("SELECT count(*) FROM webhook_bodies", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 3);
    }

    #[test]
    fn a_route_keeps_at_most_its_cap_of_digests_the_oldest_forgotten() {
        let mut conn = db();
        let tx = conn.transaction().unwrap();
        let window = Window {
            ttl_ms: HOUR,
            max_bodies: 3,
        };
        let claim = |id: &str, route: &str, n: u8, now: i64| {
            claim_webhook(&tx, route, id, Some(&[n; 32]), now, window).unwrap()
        };
        for n in 0..5 {
            assert_eq!(claim(&format!("d{n}"), "gh", n, i64::from(n)), Claim::Fresh);
        }
        assert_eq!(claim("x", "other", 0, 10), Claim::Fresh);
        let rows: i64 = tx
            .query_row(
                "SELECT count(*) FROM webhook_bodies WHERE route = 'gh'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(rows, 3);
        assert_eq!(claim("new", "gh", 4, 20), Claim::SeenBody);
        assert_eq!(claim("new", "gh", 2, 20), Claim::SeenBody);
        assert_eq!(claim("new", "gh", 1, 20), Claim::Fresh);
    }
}
