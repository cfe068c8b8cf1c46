//! Python Hermes' `auth.json`, read and never written: its `credential_pool` rows (keys added with
//! `hermes auth add`, rows seeded from key variables, logins), the `providers.<id>` login state,
//! and the sources the user suppressed. A row Python parked stays parked here until its time.

use std::{collections::BTreeMap, path::Path};

use hermes_proto::env::Env;
use serde_json::{Map, Value};

use super::credential::{AuthType, Credential, Origin, Parked, Secret, park_ttl};

/// What `auth.json` holds for hermesd.
#[derive(Debug, Default)]
pub struct HermesAuth {
    /// Pool key → rows in priority order, each with the parking Python recorded.
    pub pools: BTreeMap<String, Vec<(Credential, Option<Parked>)>>,
    /// Pool key → sources not to seed again (`env:OPENROUTER_API_KEY`).
    pub suppressed: BTreeMap<String, Vec<String>>,
}

impl HermesAuth {
    /// Read `path`; a missing file is empty, an unreadable or malformed one is empty with the
    /// reason (Python keeps working on its own copy; hermesd never rewrites it).
    pub fn read(path: &Path, env: &Env) -> (Self, Option<String>) {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (Self::default(), None),
            Err(e) => {
                return (
                    Self::default(),
                    Some(format!("cannot read {}: {e}", path.display())),
                );
            }
        };
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(top)) => (Self::from_json(&top, env), None),
            Ok(_) => (
                Self::default(),
                Some(format!("{} is not a JSON object", path.display())),
            ),
            Err(e) => (
                Self::default(),
                Some(format!("{} is not valid JSON: {e}", path.display())),
            ),
        }
    }

    fn from_json(top: &Map<String, Value>, env: &Env) -> Self {
        let mut auth = Self::default();
        if let Some(Value::Object(pools)) = top.get("credential_pool") {
            for (key, rows) in pools {
                let Value::Array(rows) = rows else { continue };
                let mut rows: Vec<&Map<String, Value>> =
                    rows.iter().filter_map(Value::as_object).collect();
                rows.sort_by_key(|row| row.get("priority").and_then(Value::as_i64).unwrap_or(0));
                let parsed = rows
                    .into_iter()
                    .filter_map(|row| pool_row(row, env))
                    .collect();
                auth.pools.insert(key.to_ascii_lowercase(), parsed);
            }
        }
        if let Some(Value::Object(providers)) = top.get("providers") {
            for (provider, state) in providers {
                add_login(&mut auth, provider, state);
            }
        }
        if let Some(Value::Object(suppressed)) = top.get("suppressed_sources") {
            for (key, sources) in suppressed {
                let sources = sources
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect();
                auth.suppressed.insert(key.to_ascii_lowercase(), sources);
            }
        }
        auth
    }
}

fn text<'a>(row: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    row.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|t| !t.is_empty())
}

/// One `credential_pool` row. An `env:VAR` row takes its secret from the variable (Python stores
/// only a fingerprint); a row whose secret lives elsewhere is kept without one (listed, never
/// chosen).
fn pool_row(row: &Map<String, Value>, env: &Env) -> Option<(Credential, Option<Parked>)> {
    let id = text(row, "id")?.to_string();
    let source = text(row, "source").unwrap_or("manual").to_string();
    let secret = match source.strip_prefix("env:") {
        Some(var) => env.get(var).and_then(Secret::new),
        None => text(row, "agent_key")
            .or_else(|| text(row, "access_token"))
            .or_else(|| text(row, "api_key"))
            .and_then(Secret::new),
    };
    let auth_type = match text(row, "auth_type") {
        Some("oauth") => AuthType::OAuth,
        _ => AuthType::ApiKey,
    };
    let credential = Credential {
        label: text(row, "label").unwrap_or(&id).to_string(),
        id,
        auth_type,
        source,
        secret,
        origin: Origin::HermesFile,
    };
    Some((credential, parking(row)))
}

/// The parking Python recorded: `exhausted` until `last_error_reset_at`, else until
/// `last_status_at` plus the TTL of `last_error_code`; `dead` for good.
fn parking(row: &Map<String, Value>) -> Option<Parked> {
    let status = text(row, "last_status")?;
    let at = row
        .get("last_status_at")
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let code = row
        .get("last_error_code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok());
    let message = text(row, "last_error_message")
        .or_else(|| text(row, "last_error_reason"))
        .unwrap_or("")
        .to_string();
    let until = match status {
        "dead" => None,
        "exhausted" => Some(
            row.get("last_error_reset_at")
                .and_then(Value::as_f64)
                .map(|reset| if reset > 1e12 { reset / 1000.0 } else { reset })
                .unwrap_or_else(|| at + park_ttl(code).as_secs_f64()),
        ),
        _ => return None,
    };
    Some(Parked {
        until,
        code,
        message,
        at,
    })
}

/// A login kept under `providers.<id>` that the pool has no row for: Nous' invoke token,
/// the Codex login's access token.
fn add_login(auth: &mut HermesAuth, provider: &str, state: &Value) {
    let token = match provider {
        "nous" => state
            .get("agent_key")
            .or_else(|| state.get("access_token"))
            .and_then(Value::as_str),
        "openai-codex" | "xai-oauth" => state
            .pointer("/tokens/access_token")
            .and_then(Value::as_str),
        _ => None,
    };
    let Some(secret) = token.and_then(Secret::new) else {
        return;
    };
    let rows = auth.pools.entry(provider.to_string()).or_default();
    if rows.iter().any(|(c, _)| c.source == "device_code") {
        return;
    }
    let label = state
        .get("label")
        .and_then(Value::as_str)
        .unwrap_or("device_code");
    rows.push((
        Credential {
            id: format!("providers.{provider}"),
            label: label.to_string(),
            auth_type: AuthType::OAuth,
            source: "device_code".into(),
            secret: Some(secret),
            origin: Origin::HermesFile,
        },
        None,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"{
      "version": 1,
      "providers": {"openai-codex": {"tokens": {"access_token": "eyJcodex", "refresh_token": "rt"}, "auth_mode": "chatgpt"}},
      "credential_pool": {
        "openrouter": [
          {"id": "b1e23e", "label": "second", "auth_type": "api_key", "priority": 1, "source": "manual",
           "access_token": "sk-or-2", "last_status": null},
          {"id": "2e3e9e", "label": "primary", "auth_type": "api_key", "priority": 0, "source": "manual",
           "access_token": "sk-or-1", "last_status": "exhausted", "last_status_at": 1000.0,
           "last_error_code": 429, "last_error_message": "Rate limit exceeded"},
          {"id": "622904", "label": "OPENROUTER_API_KEY", "auth_type": "api_key", "priority": 2,
           "source": "env:OPENROUTER_API_KEY", "secret_fingerprint": "sha256:12b2d9a873db9687"},
          {"id": "c0ffee", "label": "gh", "priority": 3, "source": "gh_cli", "secret_fingerprint": "sha256:00"}
        ]
      },
      "suppressed_sources": {"anthropic": ["env:ANTHROPIC_API_KEY"]}
    }"#;

    #[test]
    fn rows_in_priority_order_with_env_secrets_and_pythons_parking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        std::fs::write(&path, FILE).unwrap();
        let env = Env::from_pairs([("OPENROUTER_API_KEY", "sk-env")]);
        let (auth, problem) = HermesAuth::read(&path, &env);
        assert!(problem.is_none());
        let rows = &auth.pools["openrouter"];
        let ids: Vec<&str> = rows.iter().map(|(c, _)| c.id.as_str()).collect();
        assert_eq!(ids, ["2e3e9e", "b1e23e", "622904", "c0ffee"]);
        let parked = rows[0].1.as_ref().unwrap();
        assert_eq!(parked.until, Some(1000.0 + 3600.0));
        assert_eq!(parked.code, Some(429));
        assert_eq!(rows[2].0.secret.as_ref().unwrap().expose(), "sk-env");
        assert!(
            rows[3].0.secret.is_none(),
            "a borrowed secret stays where it lives"
        );
        let codex = &auth.pools["openai-codex"][0].0;
        assert_eq!(codex.secret.as_ref().unwrap().expose(), "eyJcodex");
        assert_eq!(auth.suppressed["anthropic"], ["env:ANTHROPIC_API_KEY"]);
    }

    #[test]
    fn missing_is_empty_and_malformed_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let (auth, problem) = HermesAuth::read(&dir.path().join("auth.json"), &Env::default());
        assert!(auth.pools.is_empty() && problem.is_none());
        std::fs::write(dir.path().join("auth.json"), "{not json").unwrap();
        let (_, problem) = HermesAuth::read(&dir.path().join("auth.json"), &Env::default());
        assert!(problem.unwrap().contains("is not valid JSON"));
    }
}
