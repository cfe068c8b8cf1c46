//! The API server's settings with Hermes' keys: whether it runs (`API_SERVER_ENABLED`,
//! `platforms.api_server.enabled`), where it listens (`API_SERVER_HOST` 127.0.0.1,
//! `API_SERVER_PORT` 8642), its key (`API_SERVER_KEY`), the model name it advertises
//! (`API_SERVER_MODEL_NAME`, default `hermes-agent`), the browser origins it answers
//! (`API_SERVER_CORS_ORIGINS`) — each also under `platforms.api_server.extra`, which wins, as in
//! Hermes — and how many runs it serves at once (`gateway.api_server.max_concurrent_runs`, 10;
//! 0 = no limit). A missing or short key is refused when the platform starts.

use hermes_proto::env::Env;

use super::read::{Reader, truthy};

/// The shortest key the server accepts (Hermes' rule).
pub const MIN_KEY_CHARS: usize = 16;

#[derive(Clone, PartialEq)]
pub struct ApiServerSettings {
    pub host: String,
    pub port: u16,
    /// Never printed.
    pub key: String,
    pub model_name: String,
    /// Allowed browser origins; `*` allows any. Empty: no CORS headers.
    pub cors_origins: Vec<String>,
    /// 0: no limit.
    pub max_concurrent_runs: usize,
}

impl std::fmt::Debug for ApiServerSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServerSettings")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("key", &"<hidden>")
            .field("model_name", &self.model_name)
            .field("cors_origins", &self.cors_origins)
            .field("max_concurrent_runs", &self.max_concurrent_runs)
            .finish()
    }
}

impl ApiServerSettings {
    /// `None` when the platform is off.
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Option<Self> {
        let by_env = truthy(env.get("API_SERVER_ENABLED"));
        if !by_env && !r.flag("platforms.api_server.enabled", false) {
            return None;
        }
        let var = |name: &str| env.get(name).map(str::trim).unwrap_or_default().to_string();
        let extra = |key: &str, variable: &str, r: &mut Reader<'_>| {
            let key = format!("platforms.api_server.extra.{key}");
            match r.get(&key) {
                Some(serde_yaml::Value::Number(n)) => n.to_string(),
                Some(_) => r.secret(&key),
                None => var(variable),
            }
        };
        let mut host = extra("host", "API_SERVER_HOST", r);
        if host.is_empty() {
            host = "127.0.0.1".into();
        }
        let port_text = extra("port", "API_SERVER_PORT", r);
        let port = if port_text.is_empty() {
            8642
        } else {
            match port_text.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => {
                    r.notice_raw(format!(
                        "API_SERVER_PORT: {port_text:?} is not a port; using 8642"
                    ));
                    8642
                }
            }
        };
        let key = extra("key", "API_SERVER_KEY", r);
        let mut model_name = extra("model_name", "API_SERVER_MODEL_NAME", r);
        if model_name.is_empty() {
            model_name = "hermes-agent".into();
        }
        let cors_key = "platforms.api_server.extra.cors_origins";
        let cors_origins = if r.get(cors_key).is_some() {
            r.list(cors_key, &[])
        } else {
            super::read::comma_list(&var("API_SERVER_CORS_ORIGINS"))
        };
        let runs = r.whole("gateway.api_server.max_concurrent_runs", 10, 0, 100_000);
        Some(Self {
            host,
            port,
            key,
            model_name,
            cors_origins,
            max_concurrent_runs: usize::try_from(runs).unwrap_or(usize::MAX),
        })
    }

    /// `host:port`, bracketing an IPv6 address.
    pub fn listen(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Why the server must not start with these settings (Hermes' sentence), if it must not.
    pub fn refusal(&self) -> Option<String> {
        if self.key.is_empty() {
            return Some(format!(
                "Refusing to start: API_SERVER_KEY is required for the API server, including \
                 loopback-only binds on {}.",
                self.host
            ));
        }
        (self.key.chars().count() < MIN_KEY_CHARS).then(|| {
            format!(
                "Refusing to start: API_SERVER_KEY is a placeholder or too short (<{MIN_KEY_CHARS} \
                 chars). This endpoint dispatches terminal-capable agent work — a guessable key \
                 is remote code execution. Generate a strong secret (e.g. `openssl rand -hex 32`) \
                 and set API_SERVER_KEY before starting the API server on {}.",
                self.host
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &[(&str, &str)]) -> Option<ApiServerSettings> {
        let tree: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap_or_default();
        let env = Env::from_pairs(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        ApiServerSettings::read(&mut Reader::new(&tree), &env)
    }

    #[test]
    fn off_by_default_and_hermes_defaults_when_on() {
        assert!(read("{}", &[("API_SERVER_KEY", "x")]).is_none());
        let Some(s) = read("{}", &[("API_SERVER_ENABLED", "true")]) else {
            panic!("off");
        };
        assert_eq!(s.listen(), "127.0.0.1:8642");
        assert_eq!(s.model_name, "hermes-agent");
        assert_eq!(s.max_concurrent_runs, 10);
        assert!(s.refusal().is_some_and(|r| r.contains("is required")));
    }

    #[test]
    fn extra_wins_over_the_environment() {
        let yaml = "platforms: {api_server: {enabled: true, extra: {port: 9001, key: \
                    0123456789abcdef, cors_origins: [http://a.test]}}}\n\
                    gateway: {api_server: {max_concurrent_runs: 0}}";
        let Some(s) = read(
            yaml,
            &[("API_SERVER_PORT", "9000"), ("API_SERVER_MODEL_NAME", "m")],
        ) else {
            panic!("off");
        };
        assert_eq!(s.port, 9001);
        assert_eq!(s.model_name, "m");
        assert_eq!(s.cors_origins, ["http://a.test"]);
        assert_eq!(s.max_concurrent_runs, 0);
        assert!(s.refusal().is_none());
    }
}
