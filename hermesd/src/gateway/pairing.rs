//! DM pairing with Hermes' rules: a stranger who writes to the bot gets an 8-character code from
//! the 32-letter unambiguous alphabet (from the OS's random source); it expires after an hour; at
//! most 3 codes are pending per platform; one request per user per 10 minutes; 5 failed
//! approvals in a row lock approvals of the platform for an hour. Only a hash of a code is
//! stored, and codes are never logged.

use rusqlite::Transaction;
use sha2::{Digest, Sha256};

use crate::store::{self, PairingRow, StoreError};

pub const ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
pub const CODE_LEN: usize = 8;
pub const CODE_TTL_MS: i64 = 3_600_000;
pub const MAX_PENDING: usize = 3;
pub const REQUEST_INTERVAL_MS: i64 = 600_000;
pub const MAX_FAILURES: u32 = 5;
pub const LOCKOUT_MS: i64 = 3_600_000;

/// What a stranger's message led to.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    /// A new code, to send to the user (and nowhere else).
    Code(String),
    /// No code now (rate limit, too many pending, lockout).
    TooMany,
}

/// Why an approval failed.
#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    #[error("no pending request has that code (or it expired)")]
    NoMatch,
    #[error("too many failed approvals; try again in {0} minutes")]
    Locked(i64),
    #[error("{0}")]
    Store(#[from] StoreError),
}

fn code_hash(platform: &str, code: &str) -> String {
    let digest = Sha256::digest(format!("{platform}\0{}", code.trim().to_uppercase()).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh code, from the OS's random source (rejection sampling is unneeded: 256 is a multiple
/// of 32).
pub fn new_code() -> Result<String, String> {
    let mut bytes = [0u8; CODE_LEN];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    Ok(bytes
        .iter()
        .map(|b| char::from(ALPHABET[usize::from(*b) % ALPHABET.len()]))
        .collect())
}

/// Handle a stranger's direct message, in the caller's transaction.
pub fn request(
    tx: &Transaction<'_>,
    platform: &str,
    user_id: &str,
    user_name: &str,
    now: i64,
) -> Result<Request, StoreError> {
    // Requests older than both the TTL and the per-user interval have no effect any more.
    store::prune_pairing_requests(tx, platform, now - CODE_TTL_MS.max(REQUEST_INTERVAL_MS))?;
    if let Some(existing) = store::pairing(tx, platform, user_id)? {
        if existing.approved {
            return Ok(Request::TooMany);
        }
        if now - existing.requested_at < REQUEST_INTERVAL_MS {
            return Ok(Request::TooMany);
        }
    }
    let (_, locked_until) = store::pairing_failures(tx, platform)?;
    if locked_until.is_some_and(|until| until > now) {
        return Ok(Request::TooMany);
    }
    let pending = store::pairings(tx, Some(platform))?
        .into_iter()
        .filter(|p| !p.approved && p.expires_at.is_some_and(|e| e > now))
        .count();
    if pending >= MAX_PENDING {
        return Ok(Request::TooMany);
    }
    let code = new_code().map_err(StoreError::Refused)?;
    store::put_pairing(
        tx,
        &PairingRow {
            platform: platform.to_string(),
            user_id: user_id.to_string(),
            user_name: user_name.to_string(),
            code_hash: Some(code_hash(platform, &code)),
            approved: false,
            requested_at: now,
            expires_at: Some(now + CODE_TTL_MS),
            approved_at: None,
        },
    )?;
    Ok(Request::Code(code))
}

/// Approve the pending request holding `code`, in the caller's transaction.
pub fn approve(
    tx: &Transaction<'_>,
    platform: &str,
    code: &str,
    now: i64,
) -> Result<PairingRow, ApproveError> {
    let (failures, locked_until) = store::pairing_failures(tx, platform)?;
    if let Some(until) = locked_until.filter(|until| *until > now) {
        return Err(ApproveError::Locked((until - now + 59_999) / 60_000));
    }
    let wanted = code_hash(platform, code);
    let found = store::pairings(tx, Some(platform))?.into_iter().find(|p| {
        !p.approved
            && p.expires_at.is_some_and(|e| e > now)
            && p.code_hash.as_deref() == Some(wanted.as_str())
    });
    let Some(mut row) = found else {
        let failures = failures + 1;
        let (failures, locked) = if failures >= MAX_FAILURES {
            (0, Some(now + LOCKOUT_MS))
        } else {
            (failures, None)
        };
        store::set_pairing_failures(tx, platform, failures, locked)?;
        return Err(ApproveError::NoMatch);
    };
    store::set_pairing_failures(tx, platform, 0, None)?;
    row.approved = true;
    row.code_hash = None;
    row.expires_at = None;
    row.approved_at = Some(now);
    store::put_pairing(tx, &row)?;
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_tx<T>(f: impl FnOnce(&Transaction<'_>) -> T) -> T {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::Store::open(&dir.path().join("t.db")).unwrap();
        store
            .with_writer_blocking(|conn| {
                let tx = conn.transaction().unwrap();
                Ok(f(&tx))
            })
            .unwrap()
    }

    fn code_of(r: Request) -> String {
        match r {
            Request::Code(code) => code,
            Request::TooMany => panic!("no code"),
        }
    }

    #[test]
    fn codes_have_hermes_shape() {
        for _ in 0..100 {
            let code = new_code().unwrap();
            assert_eq!(code.len(), CODE_LEN);
            assert!(code.bytes().all(|b| ALPHABET.contains(&b)), "{code}");
        }
    }

    #[test]
    fn approve_by_code_and_the_limits() {
        with_tx(|tx| {
            let now = 1_000_000_000;
            let code = code_of(request(tx, "telegram", "1", "ann", now).unwrap());
            // One request per user per 10 minutes.
            assert_eq!(
                request(tx, "telegram", "1", "ann", now + 1000).unwrap(),
                Request::TooMany
            );
            code_of(request(tx, "telegram", "2", "bob", now).unwrap());
            code_of(request(tx, "telegram", "3", "cy", now).unwrap());
            // At most three pending per platform.
            assert_eq!(
                request(tx, "telegram", "4", "dee", now).unwrap(),
                Request::TooMany
            );
            let row = approve(tx, "telegram", &code.to_lowercase(), now + 5).unwrap();
            assert_eq!(row.user_id, "1");
            assert!(row.approved && row.code_hash.is_none());
            // A code works once.
            assert!(matches!(
                approve(tx, "telegram", &code, now + 6),
                Err(ApproveError::NoMatch)
            ));
        });
    }

    #[test]
    fn codes_expire_and_failures_lock_out() {
        with_tx(|tx| {
            let now = 2_000_000_000;
            let code = code_of(request(tx, "telegram", "1", "", now).unwrap());
            assert!(matches!(
                approve(tx, "telegram", &code, now + CODE_TTL_MS + 1),
                Err(ApproveError::NoMatch)
            ));
            let later = now + CODE_TTL_MS + 10;
            let code = code_of(request(tx, "telegram", "1", "", later).unwrap());
            // The expired code was the first failure; four more make five.
            for i in 1..MAX_FAILURES {
                assert!(matches!(
                    approve(tx, "telegram", "WRONGONE", later + i64::from(i)),
                    Err(ApproveError::NoMatch)
                ));
            }
            // Locked: even the right code is refused, and no new code is handed out.
            assert!(matches!(
                approve(tx, "telegram", &code, later + 100),
                Err(ApproveError::Locked(60))
            ));
            assert_eq!(
                request(tx, "telegram", "9", "", later + 100).unwrap(),
                Request::TooMany
            );
        });
    }
}
