//! Slack's rate limits on the client side: each Web API method belongs to a tier (Tier 2: 20
//! calls a minute, Tier 3: 50, Tier 4: 100; `chat.postMessage` about one a second per
//! channel), counted per workspace (bot token) and method, as a token bucket that allows the
//! tier's burst. A call waits for its turn when the wait is short; a longer one, or a 429's
//! `Retry-After` still running, comes back as [`PlatformError::RateLimited`] for the caller's
//! own retry (the outbox's, the streamed reply's next edit). With pacing off
//! (`platforms.slack.extra.pace_calls: false`, for a server with limits of its own) only the
//! 429s hold calls back.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use crate::gateway::adapter::PlatformError;

/// The longest a call waits for its turn before it is handed back as rate limited.
const MAX_WAIT: Duration = Duration::from_secs(5);
/// Buckets kept (workspaces × methods × channels posted to); the oldest go first.
const MAX_BUCKETS: usize = 4096;

/// A method's budget: calls allowed at once, and calls a second after that.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tier {
    pub burst: f64,
    pub per_second: f64,
}

/// The tier of `method`; `None`: not paced here (Tier 1 `apps.connections.open`, whose 429
/// the reconnect's backoff absorbs, and downloads).
pub fn tier(method: &str) -> Option<Tier> {
    let per_minute = |n: f64| Tier {
        burst: n,
        per_second: n / 60.0,
    };
    Some(match method {
        "chat.postMessage" => Tier {
            burst: 5.0,
            per_second: 1.0,
        },
        "files.getUploadURLExternal" | "files.completeUploadExternal" => per_minute(20.0),
        "chat.update" | "chat.postEphemeral" | "conversations.info" => per_minute(50.0),
        "auth.test" | "users.info" => per_minute(100.0),
        _ => return None,
    })
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    at: Instant,
    /// A 429 said to wait until then.
    blocked_until: Option<Instant>,
}

/// The buckets of every workspace.
#[derive(Debug)]
pub struct Limits {
    buckets: Mutex<HashMap<String, Bucket>>,
    /// Whether the tiers pace calls (else only 429s do).
    pace: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self::new(true)
    }
}

impl Limits {
    pub fn new(pace: bool) -> Self {
        Self {
            buckets: Mutex::default(),
            pace,
        }
    }

    /// Wait for the turn of `method` under `key` (the workspace, and for posts the channel);
    /// `RateLimited` when the wait would be long.
    pub async fn acquire(&self, key: &str, method: &str) -> Result<(), PlatformError> {
        let wait = self.reserve(key, method, Instant::now())?;
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        Ok(())
    }

    /// Take a call's token, returning how long to wait for it.
    fn reserve(&self, key: &str, method: &str, now: Instant) -> Result<Duration, PlatformError> {
        let Some(tier) = tier(method) else {
            return Ok(Duration::ZERO);
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_BUCKETS
            && !buckets.contains_key(key)
            && let Some(oldest) = buckets
                .iter()
                .min_by_key(|(_, b)| b.at)
                .map(|(k, _)| k.clone())
        {
            buckets.remove(&oldest);
        }
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: tier.burst,
            at: now,
            blocked_until: None,
        });
        if let Some(until) = bucket.blocked_until {
            if until > now {
                return Err(PlatformError::RateLimited(until - now));
            }
            bucket.blocked_until = None;
        }
        if !self.pace {
            bucket.at = now;
            return Ok(Duration::ZERO);
        }
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * tier.per_second).min(tier.burst);
        bucket.at = now;
        let wait = if bucket.tokens >= 1.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((1.0 - bucket.tokens) / tier.per_second)
        };
        if wait > MAX_WAIT {
            return Err(PlatformError::RateLimited(wait));
        }
        bucket.tokens -= 1.0;
        Ok(wait)
    }

    /// Slack answered 429: no call under `key` before `wait` is over.
    pub fn block(&self, key: &str, wait: Duration) {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: 0.0,
            at: now,
            blocked_until: None,
        });
        bucket.tokens = 0.0;
        bucket.blocked_until = Some(now + wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tier_allows_its_burst_then_paces_then_hands_back() {
        let limits = Limits::default();
        let start = Instant::now();
        for _ in 0..5 {
            assert_eq!(
                limits.reserve("T1:C1", "chat.postMessage", start),
                Ok(Duration::ZERO)
            );
        }
        // The sixth post waits for the next second's token; other channels do not.
        let wait = limits.reserve("T1:C1", "chat.postMessage", start).unwrap();
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert_eq!(
            limits.reserve("T1:C2", "chat.postMessage", start),
            Ok(Duration::ZERO)
        );
        for _ in 0..4 {
            let _ = limits.reserve("T1:C1", "chat.postMessage", start);
        }
        assert!(matches!(
            limits.reserve("T1:C1", "chat.postMessage", start),
            Err(PlatformError::RateLimited(_))
        ));
        // Tier 1 and unknown methods are not paced here.
        assert_eq!(
            limits.reserve("T1", "apps.connections.open", start),
            Ok(Duration::ZERO)
        );
    }

    #[test]
    fn without_pacing_only_a_429_holds_calls_back() {
        let limits = Limits::new(false);
        let start = Instant::now();
        for _ in 0..200 {
            assert_eq!(
                limits.reserve("T1", "chat.update", start),
                Ok(Duration::ZERO)
            );
        }
        limits.block("T1", Duration::from_secs(30));
        assert!(matches!(
            limits.reserve("T1", "chat.update", start),
            Err(PlatformError::RateLimited(_))
        ));
    }

    #[test]
    fn a_429_blocks_its_key_until_retry_after() {
        let limits = Limits::default();
        limits.block("T1:chat.update", Duration::from_secs(30));
        assert!(matches!(
            limits.reserve("T1:chat.update", "chat.update", Instant::now()),
            Err(PlatformError::RateLimited(w)) if w > Duration::from_secs(29)
        ));
        let later = Instant::now() + Duration::from_secs(31);
        assert_eq!(
            limits.reserve("T1:chat.update", "chat.update", later),
            Ok(Duration::ZERO)
        );
    }
}
