//! A provider's pool of credentials and how one is chosen: Hermes' strategies (`fill_first`,
//! `round_robin`, `random`, `least_used`), parking after a refusal, and return to service once the
//! parking ends. Pure bookkeeping: no I/O, so the choice costs microseconds.

use std::{collections::HashMap, time::SystemTime};

use super::credential::{Credential, Parked, Secret};

/// `credential_pool_strategies.<provider>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// The first usable credential in order, until it is parked.
    #[default]
    FillFirst,
    /// Each request the next usable one after the last used.
    RoundRobin,
    /// Any usable one.
    Random,
    /// The usable one chosen the fewest times.
    LeastUsed,
}

impl Strategy {
    pub const WORDS: [(&'static str, Strategy); 4] = [
        ("fill_first", Self::FillFirst),
        ("round_robin", Self::RoundRobin),
        ("random", Self::Random),
        ("least_used", Self::LeastUsed),
    ];

    pub fn parse(word: &str) -> Option<Self> {
        Self::WORDS
            .iter()
            .find(|(w, _)| *w == word.trim())
            .map(|(_, s)| *s)
    }

    pub fn as_str(self) -> &'static str {
        Self::WORDS
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("fill_first", |(w, _)| w)
    }
}

/// The credential chosen for one request.
#[derive(Debug, Clone)]
pub struct Lease {
    pub id: String,
    pub label: String,
    pub secret: Secret,
}

/// One pool: its credentials in order, their parking and use counts.
#[derive(Debug, Default)]
pub struct Pool {
    pub credentials: Vec<Credential>,
    pub strategy: Strategy,
    /// Parked credentials by id (a credential not here is usable).
    pub parked: HashMap<String, Parked>,
    /// Times each credential was chosen, by id.
    pub uses: HashMap<String, u64>,
    /// The index chosen last (round robin continues after it).
    last: Option<usize>,
}

impl Pool {
    pub fn new(credentials: Vec<Credential>, strategy: Strategy) -> Self {
        Self {
            credentials,
            strategy,
            ..Self::default()
        }
    }

    /// Whether credential `index` can be used at `now`; a parking that ended is dropped.
    fn usable(&mut self, index: usize, now: SystemTime) -> bool {
        let credential = &self.credentials[index];
        if credential.secret.is_none() {
            return false;
        }
        match self.parked.get(&credential.id) {
            Some(parked) if parked.holds(now) => false,
            Some(_) => {
                self.parked.remove(&credential.id);
                true
            }
            None => true,
        }
    }

    /// Choose a credential for one request, skipping `tried` (ids already refused in this
    /// request); `None` when none is usable.
    pub fn choose(&mut self, now: SystemTime, tried: &[String]) -> Option<Lease> {
        let count = self.credentials.len();
        let usable: Vec<usize> = (0..count)
            .filter(|&i| self.usable(i, now) && !tried.contains(&self.credentials[i].id))
            .collect();
        let index = match self.strategy {
            Strategy::FillFirst => usable.first().copied(),
            Strategy::RoundRobin => {
                let after = self.last.map_or(0, |last| last + 1);
                usable
                    .iter()
                    .copied()
                    .find(|&i| i >= after)
                    .or_else(|| usable.first().copied())
            }
            Strategy::Random => {
                (!usable.is_empty()).then(|| usable[fastrand::usize(..usable.len())])
            }
            Strategy::LeastUsed => usable
                .iter()
                .copied()
                .min_by_key(|&i| self.uses.get(&self.credentials[i].id).copied().unwrap_or(0)),
        }?;
        self.last = Some(index);
        let credential = &self.credentials[index];
        *self.uses.entry(credential.id.clone()).or_default() += 1;
        Some(Lease {
            id: credential.id.clone(),
            label: credential.label.clone(),
            secret: credential.secret.clone()?,
        })
    }

    /// Take credential `id` out of use.
    pub fn park(&mut self, id: &str, parked: Parked) {
        if self.credentials.iter().any(|c| c.id == id) {
            self.parked.insert(id.to_string(), parked);
        }
    }

    /// Whether any credential could be chosen at `now`.
    pub fn any_usable(&mut self, now: SystemTime) -> bool {
        (0..self.credentials.len()).any(|i| self.usable(i, now))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::auth::credential::{AuthType, Origin, park_ttl};

    fn pool(strategy: Strategy, n: usize) -> Pool {
        let credentials = (0..n)
            .map(|i| Credential {
                id: format!("id{i}"),
                label: format!("key-{i}"),
                auth_type: AuthType::ApiKey,
                source: "manual".into(),
                secret: Secret::new(&format!("sk-{i}")),
                origin: Origin::Own,
            })
            .collect();
        Pool::new(credentials, strategy)
    }

    fn picks(pool: &mut Pool, now: SystemTime, n: usize) -> Vec<String> {
        (0..n).map(|_| pool.choose(now, &[]).unwrap().id).collect()
    }

    #[test]
    fn strategies_choose_as_hermes_does() {
        let now = SystemTime::now();
        assert_eq!(
            picks(&mut pool(Strategy::FillFirst, 3), now, 3),
            ["id0", "id0", "id0"]
        );
        assert_eq!(
            picks(&mut pool(Strategy::RoundRobin, 3), now, 4),
            ["id0", "id1", "id2", "id0"]
        );
        let mut least = pool(Strategy::LeastUsed, 3);
        least.uses.insert("id0".into(), 5);
        assert_eq!(picks(&mut least, now, 3), ["id1", "id2", "id1"]);
        let mut random = pool(Strategy::Random, 3);
        let chosen = picks(&mut random, now, 60);
        for id in ["id0", "id1", "id2"] {
            assert!(chosen.iter().any(|c| c == id), "{id} never chosen");
        }
    }

    #[test]
    fn parked_credentials_are_skipped_until_their_time_and_tried_ones_in_the_request() {
        let now = SystemTime::now();
        let mut pool = pool(Strategy::FillFirst, 3);
        pool.park(
            "id0",
            Parked::new(now, park_ttl(Some(429)), Some(429), "quota"),
        );
        assert_eq!(pool.choose(now, &[]).unwrap().id, "id1");
        assert_eq!(pool.choose(now, &["id1".into()]).unwrap().id, "id2");
        assert!(pool.choose(now, &["id1".into(), "id2".into()]).is_none());
        let later = now + Duration::from_secs(3601);
        assert_eq!(pool.choose(later, &[]).unwrap().id, "id0");
        assert!(pool.parked.is_empty(), "an ended parking is dropped");
    }

    #[test]
    fn a_row_without_its_secret_is_never_chosen() {
        let mut pool = pool(Strategy::FillFirst, 2);
        pool.credentials[0].secret = None;
        assert_eq!(pool.choose(SystemTime::now(), &[]).unwrap().id, "id1");
    }
}
