//! Credentials for model providers: every pool a provider has — the rows of Hermes' `auth.json`
//! (read-only), the keys added to hermesd (its own store), and the provider's key variables —
//! which credential a request uses, and which are parked after a refusal. One registry per
//! daemon, rebuilt on reload with the parking it had.

pub mod credential;
mod hermes_file;
pub mod own_store;
pub mod pool;

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Mutex,
    time::{Duration, SystemTime},
};

use hermes_proto::env::Env;

pub use credential::{AuthType, Credential, Origin, Parked, Secret};
use hermes_file::HermesAuth;
use own_store::{OwnRow, OwnStore};
pub use pool::{Lease, Pool, Strategy};

use crate::config::providers;

/// Every provider's pool.
#[derive(Debug)]
pub struct Credentials {
    home: PathBuf,
    inner: Mutex<Inner>,
    /// Held while the store is written, so that writes land in order, each with the state as
    /// it is when it runs.
    writing: Mutex<()>,
}

#[derive(Debug, Default)]
struct Inner {
    pools: BTreeMap<String, Pool>,
    own: OwnStore,
    /// Why a file could not be used (shown by `auth list`, logged at load).
    problems: Vec<String>,
    env: Env,
    strategies: Vec<(String, Strategy)>,
}

/// One credential as `hermesctl auth list` shows it.
#[derive(Debug, Clone)]
pub struct CredentialView {
    pub pool: String,
    pub position: usize,
    pub id: String,
    pub label: String,
    pub auth_type: AuthType,
    pub source: String,
    pub origin: Origin,
    /// Whether its secret is available to hermesd.
    pub has_secret: bool,
    pub parked: Option<Parked>,
    pub uses: u64,
    pub strategy: Strategy,
}

/// `credential_pool_strategies` as the pools use it.
pub fn strategies(models: &crate::config::settings::LlmSection) -> Vec<(String, Strategy)> {
    models
        .pool_strategies
        .iter()
        .filter_map(|(key, word)| Some((pool_key(key), Strategy::parse(word)?)))
        .collect()
}

/// The pool key of a provider name (`OpenRouter` → `openrouter`; a `providers:` entry's is
/// `custom:<name>`).
pub fn pool_key(provider: &str) -> String {
    providers::find(provider).map_or_else(
        || provider.trim().to_ascii_lowercase(),
        |k| k.name.to_string(),
    )
}

impl Credentials {
    /// Read `auth.json` and hermesd's store under `home`; `strategies` is
    /// `credential_pool_strategies`.
    pub fn load(home: &Path, env: &Env, strategies: &[(String, Strategy)]) -> Self {
        let credentials = Self {
            home: home.to_path_buf(),
            inner: Mutex::new(Inner::default()),
            writing: Mutex::new(()),
        };
        credentials.reload(env, strategies);
        credentials
    }

    /// Read the files again (start-up, `reload`): parking and use counts of the credentials that
    /// are still there carry over.
    pub fn reload(&self, env: &Env, strategies: &[(String, Strategy)]) {
        let mut problems = Vec::new();
        if let Err(e) = OwnStore::prepare(&self.home) {
            problems.push(e);
        }
        let (hermes, problem) = HermesAuth::read(&self.home.join("auth.json"), env);
        problems.extend(problem);
        let (mut own, problem) = OwnStore::read(&self.home);
        problems.extend(problem);
        for problem in &problems {
            tracing::warn!(problem, "credentials");
        }
        let mut inner = self.lock();
        let mut pools = build_pools(&hermes, &own, env, strategies);
        for (key, pool) in &mut pools {
            if let Some(old) = inner.pools.get(key) {
                for credential in &pool.credentials {
                    // A parking not yet written to the store is kept, in memory and in the
                    // copy of the store the next write starts from.
                    if let Some(parked) = old.parked.get(&credential.id) {
                        pool.parked.insert(credential.id.clone(), parked.clone());
                        own.parked
                            .entry(key.clone())
                            .or_default()
                            .insert(credential.id.clone(), parked.clone());
                    }
                    if let Some(uses) = old.uses.get(&credential.id) {
                        pool.uses.insert(credential.id.clone(), *uses);
                    }
                }
            }
        }
        *inner = Inner {
            pools,
            own,
            problems,
            env: env.clone(),
            strategies: strategies.to_vec(),
        };
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A credential of pool `key` for one request, none of `tried`; `None` when the pool has no
    /// usable credential (the endpoint's own key, if any, is used then).
    pub fn choose(&self, key: &str, tried: &[String]) -> Option<Lease> {
        let now = SystemTime::now();
        self.lock().pools.get_mut(key)?.choose(now, tried)
    }

    /// Credential `id` of pool `key` was refused with `status`: park it (until the provider's
    /// reset when it gave one, else Hermes' TTL), in memory at once; [`Self::persist`] records
    /// it in hermesd's store.
    pub fn park(
        &self,
        key: &str,
        id: &str,
        status: Option<u16>,
        message: &str,
        reset_after: Option<Duration>,
    ) {
        let ttl = reset_after
            .filter(|d| *d > Duration::from_secs(60))
            .unwrap_or_else(|| credential::park_ttl(status));
        let parked = Parked::new(SystemTime::now(), ttl, status, message);
        {
            let mut inner = self.lock();
            let Some(pool) = inner.pools.get_mut(key) else {
                return;
            };
            pool.park(id, parked.clone());
            inner
                .own
                .parked
                .entry(key.to_string())
                .or_default()
                .insert(id.to_string(), parked);
            let now = credential::epoch_seconds(SystemTime::now());
            for parked in inner.own.parked.values_mut() {
                parked.retain(|_, p| p.until.is_none_or(|until| until > now));
            }
        }
        tracing::warn!(pool = key, credential = id, status, "credential parked");
    }

    /// Write hermesd's store as it is now (blocking: a file write and fsync).
    pub fn persist(&self) -> Result<(), String> {
        let _writing = self
            .writing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let snapshot = self.lock().own.clone();
        snapshot.write(&self.home)
    }

    /// Every credential of every pool, in order.
    pub fn list(&self) -> (Vec<CredentialView>, Vec<String>) {
        let now = SystemTime::now();
        let inner = self.lock();
        let mut views = Vec::new();
        for (key, pool) in &inner.pools {
            for (position, c) in pool.credentials.iter().enumerate() {
                views.push(CredentialView {
                    pool: key.clone(),
                    position: position + 1,
                    id: c.id.clone(),
                    label: c.label.clone(),
                    auth_type: c.auth_type,
                    source: c.source.clone(),
                    origin: c.origin,
                    has_secret: c.secret.is_some(),
                    parked: pool.parked.get(&c.id).filter(|p| p.holds(now)).cloned(),
                    uses: pool.uses.get(&c.id).copied().unwrap_or(0),
                    strategy: pool.strategy,
                });
            }
        }
        (views, inner.problems.clone())
    }

    /// Add a key to pool `provider` (a pasted `secret`, or `key_env`, read at each load).
    pub fn add(
        &self,
        provider: &str,
        label: &str,
        secret: Option<&str>,
        key_env: Option<&str>,
    ) -> Result<CredentialView, String> {
        let key = pool_key(provider);
        if providers::find(&key).is_none() && !key.starts_with("custom:") {
            return Err(format!(
                "unknown provider {provider:?}: use a provider name (openrouter, anthropic, …) or custom:<name> for a `providers:` entry"
            ));
        }
        let (source, secret) = match (secret.map(str::trim), key_env.map(str::trim)) {
            (Some(s), None) if !s.is_empty() => ("manual".to_string(), Some(s.to_string())),
            (None, Some(var)) if is_variable_name(var) => (format!("env:{var}"), None),
            (None, Some(var)) => {
                return Err(format!("{var:?} is not an environment variable name"));
            }
            _ => return Err("give either a key or --key-env VAR".into()),
        };
        let id = new_id();
        let (env, strategies) = {
            let mut inner = self.lock();
            let rows = inner.own.credentials.entry(key.clone()).or_default();
            let label = if label.trim().is_empty() {
                format!("api-key-{}", rows.len() + 1)
            } else {
                label.trim().to_string()
            };
            rows.push(OwnRow {
                id: id.clone(),
                label,
                auth_type: AuthType::ApiKey,
                source: source.clone(),
                secret,
            });
            if let Some(removed) = inner.own.removed.get_mut(&key) {
                removed.retain(|r| *r != source);
            }
            (inner.env.clone(), inner.strategies.clone())
        };
        self.persist()?;
        self.reload(&env, &strategies);
        self.list()
            .0
            .into_iter()
            .find(|v| v.id == id)
            .ok_or_else(|| format!("the key was stored but pool {key} does not show it"))
    }

    /// Remove a credential of pool `provider` by id, label or 1-based position: a key added to
    /// hermesd is deleted; a row of `auth.json` or a key variable is no longer used by hermesd
    /// (Hermes' file is not touched).
    pub fn remove(&self, provider: &str, target: &str) -> Result<CredentialView, String> {
        let key = pool_key(provider);
        let (views, _) = self.list();
        let in_pool: Vec<&CredentialView> = views.iter().filter(|v| v.pool == key).collect();
        let target = target.trim();
        let by_label: Vec<&&CredentialView> = in_pool
            .iter()
            .filter(|v| v.label.eq_ignore_ascii_case(target))
            .collect();
        let found = in_pool
            .iter()
            .find(|v| v.id == target)
            .copied()
            .or(match by_label.as_slice() {
                [one] => Some(**one),
                _ => None,
            })
            .or_else(|| {
                let position: usize = target.parse().ok()?;
                in_pool.iter().find(|v| v.position == position).copied()
            });
        let Some(found) = found.cloned() else {
            return Err(if by_label.len() > 1 {
                format!(
                    "{} credentials of {key} are labelled {target:?}: name one by id",
                    by_label.len()
                )
            } else {
                format!("no credential {target:?} in pool {key} (see `hermesctl auth list`)")
            });
        };
        let (env, strategies) = {
            let mut inner = self.lock();
            if let Some(rows) = inner.own.credentials.get_mut(&key) {
                rows.retain(|r| r.id != found.id);
            }
            if found.origin != Origin::Own {
                let what = if found.origin == Origin::Environment {
                    found.source.clone()
                } else {
                    found.id.clone()
                };
                inner.own.removed.entry(key.clone()).or_default().push(what);
            }
            if let Some(parked) = inner.own.parked.get_mut(&key) {
                parked.remove(&found.id);
            }
            (inner.env.clone(), inner.strategies.clone())
        };
        self.persist()?;
        self.reload(&env, &strategies);
        Ok(found)
    }
}

fn is_variable_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Six hex characters, as Hermes' ids.
fn new_id() -> String {
    format!("{:06x}", fastrand::u32(..0x100_0000))
}

/// Each pool: `auth.json`'s rows, then hermesd's own, then the provider's key variables that no
/// row names yet — minus what the user removed or suppressed.
fn build_pools(
    hermes: &HermesAuth,
    own: &OwnStore,
    env: &Env,
    strategies: &[(String, Strategy)],
) -> BTreeMap<String, Pool> {
    let mut keys: Vec<String> = hermes
        .pools
        .keys()
        .chain(own.credentials.keys())
        .cloned()
        .collect();
    keys.extend(
        providers::KNOWN
            .iter()
            .filter(|k| k.env_key(env).is_some())
            .map(|k| k.name.to_string()),
    );
    keys.sort();
    keys.dedup();
    let mut pools = BTreeMap::new();
    for key in keys {
        let mut credentials: Vec<Credential> = Vec::new();
        let mut parked: Vec<(String, Parked)> = Vec::new();
        for (credential, parking) in hermes.pools.get(&key).into_iter().flatten() {
            if own.is_removed(&key, &credential.id, &credential.source) {
                continue;
            }
            if let Some(parking) = parking {
                parked.push((credential.id.clone(), parking.clone()));
            }
            credentials.push(credential.clone());
        }
        for row in own.credentials.get(&key).into_iter().flatten() {
            let secret = match row.source.strip_prefix("env:") {
                Some(var) => env.get(var).and_then(Secret::new),
                None => row.secret.as_deref().and_then(Secret::new),
            };
            credentials.push(Credential {
                id: row.id.clone(),
                label: row.label.clone(),
                auth_type: row.auth_type,
                source: row.source.clone(),
                secret,
                origin: Origin::Own,
            });
        }
        let suppressed = hermes.suppressed.get(&key);
        for var in providers::find(&key).map_or(&[][..], |k| k.key_envs) {
            let source = format!("env:{var}");
            let Some(secret) = env.get(var).and_then(Secret::new) else {
                continue;
            };
            let named = credentials.iter().any(|c| c.source == source);
            let gone = suppressed.is_some_and(|s| s.contains(&source))
                || own.is_removed(&key, &source, &source);
            if !named && !gone {
                credentials.push(Credential {
                    id: source.clone(),
                    label: (*var).to_string(),
                    auth_type: AuthType::ApiKey,
                    source,
                    secret: Some(secret),
                    origin: Origin::Environment,
                });
            }
        }
        if let Some(own_parked) = own.parked.get(&key) {
            parked.extend(own_parked.iter().map(|(id, p)| (id.clone(), p.clone())));
        }
        let strategy = strategies
            .iter()
            .find(|(k, _)| pool_key(k) == key)
            .map_or_else(Strategy::default, |(_, s)| *s);
        let mut pool = Pool::new(credentials, strategy);
        for (id, parking) in parked {
            pool.park(&id, parking);
        }
        pools.insert(key, pool);
    }
    pools
}

#[cfg(test)]
mod tests;
