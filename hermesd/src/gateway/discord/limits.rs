//! Discord's REST rate limits, as its headers describe them: each route belongs to a bucket
//! (`X-RateLimit-Bucket`), shared per major parameter (the channel, guild or webhook in the
//! path), with `X-RateLimit-Remaining` uses left until `X-RateLimit-Reset-After` seconds pass;
//! a 429 names how long to wait (`retry_after`) and whether the limit is the bot's global one.
//! [`Limits::acquire`] says when a request may go (reserving one use), so a caller waits for a
//! timer derived from what Discord said, never a guessed sleep. Both maps are bounded.

use std::{collections::HashMap, time::Duration};

use http::HeaderMap;
use tokio::time::Instant;

/// Routes and buckets remembered at most; past that the ones whose limits have passed go, then
/// all (a forgotten bucket only costs one request's headers to learn again).
const MAX_ENTRIES: usize = 1024;

/// What one response's headers said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Headers {
    pub bucket: Option<String>,
    pub remaining: Option<u32>,
    pub reset_after: Option<Duration>,
    pub global: bool,
}

impl Headers {
    pub fn parse(headers: &HeaderMap) -> Self {
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        Self {
            bucket: get("x-ratelimit-bucket").map(str::to_string),
            remaining: get("x-ratelimit-remaining").and_then(|v| v.parse().ok()),
            reset_after: get("x-ratelimit-reset-after").and_then(seconds),
            global: get("x-ratelimit-global").is_some_and(|v| v.eq_ignore_ascii_case("true")),
        }
    }
}

/// Seconds as Discord writes them (`1.234`), bounded to a day.
pub fn seconds(text: &str) -> Option<Duration> {
    let secs: f64 = text.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    remaining: u32,
    reset_at: Instant,
}

/// The limits learnt so far.
#[derive(Debug, Default)]
pub struct Limits {
    /// A route's bucket hash.
    routes: HashMap<String, String>,
    /// A bucket's state, by `hash:major`.
    buckets: HashMap<String, Bucket>,
    global_until: Option<Instant>,
}

impl Limits {
    fn key(&self, route: &str, major: &str) -> String {
        let hash = self.routes.get(route).map_or(route, String::as_str);
        format!("{hash}:{major}")
    }

    /// `None` when a request on `route` may go now (one use of its bucket is taken); else the
    /// moment to ask again.
    pub fn acquire(&mut self, route: &str, major: &str, now: Instant) -> Option<Instant> {
        if let Some(until) = self.global_until {
            if until > now {
                return Some(until);
            }
            self.global_until = None;
        }
        let key = self.key(route, major);
        let bucket = self.buckets.get_mut(&key)?;
        if bucket.reset_at <= now {
            self.buckets.remove(&key);
            return None;
        }
        if bucket.remaining == 0 {
            return Some(bucket.reset_at);
        }
        bucket.remaining -= 1;
        None
    }

    /// Learn from a response's headers.
    pub fn learn(&mut self, route: &str, major: &str, headers: &Headers, now: Instant) {
        if let Some(hash) = &headers.bucket
            && self.routes.get(route) != Some(hash)
        {
            self.bound(now);
            self.routes.insert(route.to_string(), hash.clone());
        }
        if let (Some(remaining), Some(after)) = (headers.remaining, headers.reset_after) {
            let key = self.key(route, major);
            self.bound(now);
            self.buckets.insert(
                key,
                Bucket {
                    remaining,
                    reset_at: now + after,
                },
            );
        }
    }

    /// A 429: nothing goes on the bucket (or, `global`, anywhere) for `retry_after`.
    pub fn limited(
        &mut self,
        route: &str,
        major: &str,
        retry_after: Duration,
        global: bool,
        now: Instant,
    ) {
        let until = now + retry_after;
        if global {
            self.global_until = Some(self.global_until.map_or(until, |old| old.max(until)));
            return;
        }
        let key = self.key(route, major);
        self.bound(now);
        self.buckets.insert(
            key,
            Bucket {
                remaining: 0,
                reset_at: until,
            },
        );
    }

    /// Keep the maps under [`MAX_ENTRIES`].
    fn bound(&mut self, now: Instant) {
        if self.buckets.len() >= MAX_ENTRIES {
            self.buckets.retain(|_, b| b.reset_at > now);
            if self.buckets.len() >= MAX_ENTRIES {
                self.buckets.clear();
            }
        }
        if self.routes.len() >= MAX_ENTRIES {
            self.routes.clear();
        }
    }

    #[cfg(test)]
    fn len(&self) -> (usize, usize) {
        (self.routes.len(), self.buckets.len())
    }
}

/// The route of a request, as Discord groups them into buckets: the method and the path with
/// ids replaced, except the major parameter (the id after `channels`, `guilds` or
/// `webhooks`), which is returned apart. Interaction and webhook tokens never appear.
pub fn route(method: &str, path: &str) -> (String, String) {
    let path = path.split('?').next().unwrap_or(path);
    let segments: Vec<&str> = path.split('/').collect();
    let is_id = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut major = String::new();
    let mut out = Vec::with_capacity(segments.len());
    for (i, segment) in segments.iter().copied().enumerate() {
        let before = |n: usize| i.checked_sub(n).and_then(|at| segments.get(at)).copied();
        let after_token_owner =
            matches!(before(2), Some("interactions" | "webhooks")) && before(1).is_some_and(is_id);
        if after_token_owner {
            out.push(":token");
        } else if is_id(segment) {
            if major.is_empty() && matches!(before(1), Some("channels" | "guilds" | "webhooks")) {
                major = segment.to_string();
                out.push(segment);
            } else {
                out.push(":id");
            }
        } else {
            out.push(segment);
        }
    }
    (format!("{method} {}", out.join("/")), major)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn routes_keep_the_major_parameter_and_hide_tokens() {
        assert_eq!(
            route("PATCH", "/channels/123/messages/456"),
            ("PATCH /channels/123/messages/:id".into(), "123".into())
        );
        assert_eq!(
            route("POST", "/interactions/99/aW50ZXJhY3Rpb24/callback"),
            (
                "POST /interactions/:id/:token/callback".into(),
                String::new()
            )
        );
        assert_eq!(
            route("POST", "/webhooks/7/tok3n.x"),
            ("POST /webhooks/7/:token".into(), "7".into())
        );
        assert_eq!(
            route("PUT", "/applications/5/guilds/6/commands"),
            ("PUT /applications/:id/guilds/6/commands".into(), "6".into())
        );
    }

    #[test]
    fn a_bucket_is_used_up_then_waits_for_its_reset() {
        let now = Instant::now();
        let mut limits = Limits::default();
        let (r, m) = route("POST", "/channels/1/messages");
        assert_eq!(limits.acquire(&r, &m, now), None, "unknown: go");
        let h = Headers::parse(&headers(&[
            ("x-ratelimit-bucket", "abc"),
            ("x-ratelimit-remaining", "1"),
            ("x-ratelimit-reset-after", "2.5"),
        ]));
        assert_eq!(h.reset_after, Some(Duration::from_millis(2500)));
        limits.learn(&r, &m, &h, now);
        assert_eq!(limits.acquire(&r, &m, now), None, "one use left");
        assert_eq!(
            limits.acquire(&r, &m, now),
            Some(now + Duration::from_millis(2500))
        );
        // Another channel has its own bucket of the same hash.
        let (r2, m2) = route("POST", "/channels/2/messages");
        assert_eq!(limits.acquire(&r2, &m2, now), None);
        // After the reset it goes again.
        assert_eq!(limits.acquire(&r, &m, now + Duration::from_secs(3)), None);
    }

    #[test]
    fn a_429_blocks_its_bucket_or_everything_when_global() {
        let now = Instant::now();
        let mut limits = Limits::default();
        let (r, m) = route("PATCH", "/channels/1/messages/9");
        limits.limited(&r, &m, Duration::from_secs(2), false, now);
        assert_eq!(
            limits.acquire(&r, &m, now),
            Some(now + Duration::from_secs(2))
        );
        let (r2, m2) = route("POST", "/channels/1/typing");
        assert_eq!(limits.acquire(&r2, &m2, now), None);
        limits.limited(&r, &m, Duration::from_secs(1), true, now);
        assert_eq!(
            limits.acquire(&r2, &m2, now),
            Some(now + Duration::from_secs(1))
        );
        assert_eq!(limits.acquire(&r2, &m2, now + Duration::from_secs(1)), None);
    }

    #[test]
    fn the_maps_stay_bounded() {
        let now = Instant::now();
        let mut limits = Limits::default();
        let h = Headers {
            bucket: Some("b".into()),
            remaining: Some(5),
            reset_after: Some(Duration::from_secs(60)),
            global: false,
        };
        for channel in 0..5000 {
            let (r, m) = route("POST", &format!("/channels/{channel}/messages/{channel}"));
            limits.learn(&format!("{r}{channel}"), &m, &h, now);
        }
        let (routes, buckets) = limits.len();
        assert!(
            routes <= MAX_ENTRIES && buckets <= MAX_ENTRIES,
            "{routes} {buckets}"
        );
        assert_eq!(seconds("-1"), None);
        assert_eq!(seconds("0.5"), Some(Duration::from_millis(500)));
    }
}
