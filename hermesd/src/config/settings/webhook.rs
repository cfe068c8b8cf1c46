//! The webhook platform's settings with Hermes' keys: whether it runs (`WEBHOOK_ENABLED`,
//! `platforms.webhook.enabled`), where it listens (`WEBHOOK_PORT`, `platforms.webhook.extra.host`
//! and `.port`), the global secret (`WEBHOOK_SECRET`, `extra.secret`), the limits
//! (`extra.rate_limit`, `extra.max_body_bytes`, also per route) and the routes
//! (`extra.routes`: events, secret, prompt, skills, deliver, deliver_extra, deliver_only,
//! enabled). What would make a route unsafe to serve is checked when the platform starts
//! (`gateway/webhook/`), with Hermes' sentences.

use hermes_proto::env::Env;
use serde_yaml::Value;

use super::read::{Reader, truthy};

/// The secret that turns signature checks off (loopback only, as in Hermes).
pub const INSECURE_NO_AUTH: &str = "INSECURE_NO_AUTH";
/// Requests per route per minute (Hermes' default).
pub const DEFAULT_RATE_LIMIT: u64 = 30;
/// Largest body accepted (Hermes' default, 1 MiB).
pub const DEFAULT_MAX_BODY: u64 = 1 << 20;

/// One route: `POST /webhooks/<name>`.
#[derive(Clone, PartialEq)]
pub struct WebhookRoute {
    pub name: String,
    /// The route's own secret; `None` when the key is absent (the global one applies). An
    /// explicit empty secret stays empty and is refused at start, as in Hermes.
    pub secret: Option<String>,
    /// Event types accepted; empty: all.
    pub events: Vec<String>,
    /// The prompt template over the payload; empty: Hermes' default prompt.
    pub prompt: String,
    /// Skills loaded into the prompt, the first that exists.
    pub skills: Vec<String>,
    /// `log` (default) or a platform (`telegram`), its home channel unless `deliver_extra`
    /// names a `chat_id`.
    pub deliver: String,
    /// Values rendered over the payload (`chat_id`, `thread_id`, `message_thread_id`).
    pub deliver_extra: serde_json::Map<String, serde_json::Value>,
    /// Send the rendered prompt itself, with no model call.
    pub deliver_only: bool,
    pub enabled: bool,
    pub rate_limit: u64,
    pub max_body_bytes: u64,
}

impl std::fmt::Debug for WebhookRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookRoute")
            .field("name", &self.name)
            .field("secret", &self.secret.as_ref().map(|_| "<hidden>"))
            .field("events", &self.events)
            .field("deliver", &self.deliver)
            .field("deliver_only", &self.deliver_only)
            .finish_non_exhaustive()
    }
}

/// The platform's settings; present only when it runs.
#[derive(Clone, PartialEq)]
pub struct WebhookSettings {
    /// `host:port` to bind.
    pub listen: String,
    pub host: String,
    pub secret: String,
    pub routes: Vec<WebhookRoute>,
}

impl std::fmt::Debug for WebhookSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookSettings")
            .field("listen", &self.listen)
            .field("routes", &self.routes)
            .finish_non_exhaustive()
    }
}

impl WebhookSettings {
    /// `None` when the platform is off.
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Option<Self> {
        let by_env = truthy(env.get("WEBHOOK_ENABLED"));
        if !by_env && !r.flag("platforms.webhook.enabled", false) {
            return None;
        }
        let mut host = r.text("platforms.webhook.extra.host");
        if host.is_empty() {
            // Hermes binds every interface: a webhook is called from outside.
            host = "0.0.0.0".into();
        }
        let mut port = r.whole("platforms.webhook.extra.port", 8644, 1, 65_535);
        let mut secret = r.secret("platforms.webhook.extra.secret");
        if by_env {
            if let Some(p) = env
                .get("WEBHOOK_PORT")
                .and_then(|p| p.trim().parse::<u16>().ok())
            {
                port = u64::from(p);
            }
            if let Some(s) = env.get("WEBHOOK_SECRET").filter(|s| !s.trim().is_empty()) {
                secret = s.trim().to_string();
            }
        }
        let rate_limit = r.whole(
            "platforms.webhook.extra.rate_limit",
            DEFAULT_RATE_LIMIT,
            0,
            100_000,
        );
        let max_body = r.whole(
            "platforms.webhook.extra.max_body_bytes",
            DEFAULT_MAX_BODY,
            0,
            64 << 20,
        );
        r.expect_mapping("platforms.webhook.extra.routes");
        let mut routes = Vec::new();
        if let Some(Value::Mapping(map)) = r.get("platforms.webhook.extra.routes") {
            for (name, node) in map {
                let Some(name) = name.as_str().map(str::trim).filter(|n| valid_name(n)) else {
                    r.notice_raw(format!(
                        "platforms.webhook.extra.routes: {} is not a route name (lowercase \
                         letters, digits, '-' and '_'); the route is not served",
                        super::read::show(name)
                    ));
                    continue;
                };
                let prefix = format!("platforms.webhook.extra.routes.{name}.");
                let mut part = Reader::under(node, prefix);
                routes.push(route(&mut part, name, rate_limit, max_body));
                r.absorb(part);
            }
        }
        Some(Self {
            listen: listen_address(&host, port),
            host,
            secret,
            routes,
        })
    }
}

/// `host:port`, bracketing an IPv6 address.
fn listen_address(host: &str, port: u64) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Hermes' route names: `^[a-z0-9][a-z0-9_-]*$`.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
        && name.len() <= 64
}

fn route(r: &mut Reader<'_>, name: &str, rate_limit: u64, max_body: u64) -> WebhookRoute {
    let secret = r.get("secret").is_some().then(|| r.secret("secret"));
    let deliver = r.text("deliver");
    let deliver_extra = match r.get("deliver_extra") {
        None => serde_json::Map::new(),
        Some(value) => match serde_json::to_value(value) {
            Ok(serde_json::Value::Object(map)) => map,
            _ => {
                r.notice("deliver_extra", value, "is not a mapping", &"nothing");
                serde_json::Map::new()
            }
        },
    };
    WebhookRoute {
        name: name.to_string(),
        secret,
        events: r.list("events", &[]),
        prompt: match r.get("prompt") {
            Some(Value::String(s)) => s.clone(),
            _ => r.text("prompt"),
        },
        skills: r.list("skills", &[]),
        deliver: if deliver.is_empty() {
            "log".into()
        } else {
            deliver.to_lowercase()
        },
        deliver_extra,
        deliver_only: r.flag("deliver_only", false),
        enabled: r.flag("enabled", true),
        rate_limit: r.whole("rate_limit", rate_limit, 0, 100_000),
        max_body_bytes: r.whole("max_body_bytes", max_body, 0, 64 << 20),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &[(&str, &str)]) -> (Option<WebhookSettings>, Vec<String>) {
        let tree: Value = serde_yaml::from_str(yaml).unwrap_or(Value::Null);
        let env = Env::from_pairs(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut r = Reader::new(&tree);
        let settings = WebhookSettings::read(&mut r, &env);
        (settings, r.into_notices())
    }

    #[test]
    fn off_unless_enabled() {
        assert!(read("{}", &[]).0.is_none());
        assert!(read("{}", &[("WEBHOOK_PORT", "9000")]).0.is_none());
        let (on, _) = read(
            "{}",
            &[("WEBHOOK_ENABLED", "true"), ("WEBHOOK_PORT", "9000")],
        );
        assert_eq!(on.map(|s| s.listen), Some("0.0.0.0:9000".to_string()));
    }

    #[test]
    fn routes_keep_hermes_keys_and_defaults() {
        let yaml = r#"
platforms:
  webhook:
    enabled: true
    extra:
      host: 127.0.0.1
      secret: global-secret
      rate_limit: 5
      routes:
        github:
          events: [pull_request, push]
          prompt: "PR {pull_request.title}"
          deliver: telegram
          deliver_extra: {chat_id: "42"}
        alerts:
          secret: ""
          deliver_only: true
          max_body_bytes: 100
        "Bad Name": {}
"#;
        let (settings, notices) = read(yaml, &[]);
        let Some(settings) = settings else {
            panic!("webhook off");
        };
        assert_eq!(settings.listen, "127.0.0.1:8644");
        assert_eq!(settings.routes.len(), 2, "{notices:?}");
        let github = &settings.routes[0];
        assert_eq!(github.secret, None);
        assert_eq!(github.events, ["pull_request", "push"]);
        assert_eq!(github.deliver, "telegram");
        assert_eq!(
            github.deliver_extra.get("chat_id").and_then(|v| v.as_str()),
            Some("42")
        );
        assert_eq!(github.rate_limit, 5);
        let alerts = &settings.routes[1];
        assert_eq!(alerts.secret.as_deref(), Some(""));
        assert_eq!(alerts.deliver, "log");
        assert!(alerts.deliver_only);
        assert_eq!(alerts.max_body_bytes, 100);
        assert!(
            notices.iter().any(|n| n.contains("Bad Name")),
            "{notices:?}"
        );
    }
}
