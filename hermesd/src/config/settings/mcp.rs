//! MCP servers with Hermes' keys: `mcp_servers.<name>` — stdio (`command`, `args`, `env`, `cwd`)
//! or HTTP (`url`, `headers`), `enabled`, `timeout` (per call), `connect_timeout`,
//! `tools.include` / `tools.exclude` (raw tool names; include wins), `tools.resources` /
//! `tools.prompts` — and `mcp.connect_wait`, how long a new session waits for servers still
//! connecting. `${VAR}` and `${env:VAR}` in any string are the daemon's environment (with
//! `.env`); an unset variable stays as written, as in Hermes.

use std::{collections::BTreeMap, time::Duration};

use hermes_proto::env::Env;
use serde_yaml::Value;

use super::read::Reader;

/// Hermes' per-call deadline.
pub const DEFAULT_CALL_TIMEOUT: f64 = 300.0;
/// Hermes' deadline for connecting and listing.
pub const DEFAULT_CONNECT_TIMEOUT: f64 = 60.0;
/// How long a new session waits for servers still connecting.
pub const DEFAULT_CONNECT_WAIT: f64 = 10.0;

/// How a server is reached.
#[derive(Clone, PartialEq)]
pub enum McpTransport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

impl McpTransport {
    /// What `mcp list` shows: the URL, or the command line.
    pub fn describe(&self) -> String {
        match self {
            Self::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Self::Http { url, .. } => url.clone(),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
        }
    }
}

impl std::fmt::Debug for McpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Environment values and headers carry keys: names only.
        match self {
            Self::Stdio {
                command, args, env, ..
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .finish_non_exhaustive(),
            Self::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerConfig {
    pub name: String,
    pub transport: McpTransport,
    pub enabled: bool,
    pub timeout: Duration,
    pub connect_timeout: Duration,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub resources: bool,
    pub prompts: bool,
}

impl McpServerConfig {
    /// Whether the server's tool `name` (as the server names it) is offered.
    pub fn offers(&self, name: &str) -> bool {
        if !self.include.is_empty() {
            return self.include.iter().any(|i| i == name);
        }
        !self.exclude.iter().any(|e| e == name)
    }
}

/// The whole section.
#[derive(Debug, Clone, PartialEq)]
pub struct McpSection {
    pub servers: Vec<McpServerConfig>,
    pub connect_wait: Duration,
}

impl Default for McpSection {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            connect_wait: Duration::from_secs_f64(DEFAULT_CONNECT_WAIT),
        }
    }
}

impl McpSection {
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let connect_wait =
            Duration::from_secs_f64(r.seconds("mcp.connect_wait", DEFAULT_CONNECT_WAIT));
        r.expect_mapping("mcp_servers");
        let mut servers = Vec::new();
        if let Some(Value::Mapping(map)) = r.get("mcp_servers") {
            for (name, node) in map {
                let Some(name) = name.as_str().map(str::trim).filter(|n| !n.is_empty()) else {
                    r.notice_raw(format!(
                        "mcp_servers: {} is not a server name; the server is not started",
                        super::read::show(name)
                    ));
                    continue;
                };
                let expanded = interpolate(node, env);
                let mut part = Reader::under(&expanded, format!("mcp_servers.{name}."));
                let server = server(&mut part, name);
                r.absorb(part);
                if let Some(server) = server {
                    servers.push(server);
                }
            }
        }
        Self {
            servers,
            connect_wait,
        }
    }
}

fn server(r: &mut Reader<'_>, name: &str) -> Option<McpServerConfig> {
    let url = r.text("url");
    let command = r.text("command");
    let transport = if !url.is_empty() {
        McpTransport::Http {
            url,
            headers: string_map(r, "headers"),
        }
    } else if !command.is_empty() {
        McpTransport::Stdio {
            command,
            args: args(r),
            env: string_map(r, "env"),
            cwd: Some(r.text("cwd")).filter(|c| !c.is_empty()),
        }
    } else {
        r.notice_raw(format!(
            "mcp_servers.{name}: neither `command` nor `url` is set; the server is not started"
        ));
        return None;
    };
    Some(McpServerConfig {
        name: name.to_string(),
        transport,
        enabled: r.flag("enabled", true),
        timeout: Duration::from_secs_f64(r.seconds("timeout", DEFAULT_CALL_TIMEOUT)),
        connect_timeout: Duration::from_secs_f64(
            r.seconds("connect_timeout", DEFAULT_CONNECT_TIMEOUT),
        ),
        include: r.list("tools.include", &[]),
        exclude: r.list("tools.exclude", &[]),
        resources: r.flag("tools.resources", true),
        prompts: r.flag("tools.prompts", true),
    })
}

/// `args`: a list, or one string split into words.
fn args(r: &mut Reader<'_>) -> Vec<String> {
    match r.get("args") {
        None => Vec::new(),
        Some(Value::Sequence(items)) => items
            .iter()
            .filter_map(|item| match item {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            })
            .collect(),
        Some(Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(other) => {
            r.notice("args", other, "is not a list of arguments", &"none");
            Vec::new()
        }
    }
}

/// A mapping of names to strings (numbers and booleans written as text).
fn string_map(r: &mut Reader<'_>, key: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    match r.get(key) {
        None => {}
        Some(Value::Mapping(map)) => {
            for (k, v) in map {
                let value = match v {
                    Value::String(s) => s.clone(),
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    _ => continue,
                };
                if let Some(k) = k.as_str() {
                    out.insert(k.to_string(), value);
                }
            }
        }
        Some(other) => r.notice(key, other, "is not a mapping", &"nothing"),
    }
    out
}

/// Every string of `node` with `${VAR}` / `${env:VAR}` replaced from `env`.
fn interpolate(node: &Value, env: &Env) -> Value {
    match node {
        Value::String(s) => Value::String(expand(s, env)),
        Value::Sequence(items) => {
            Value::Sequence(items.iter().map(|v| interpolate(v, env)).collect())
        }
        Value::Mapping(map) => Value::Mapping(
            map.iter()
                .map(|(k, v)| (k.clone(), interpolate(v, env)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn expand(text: &str, env: &Env) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let name = after[..end].trim();
        let name = name.strip_prefix("env:").unwrap_or(name);
        match env.get(name) {
            Some(value) => out.push_str(value),
            None => out.push_str(&rest[start..start + 2 + end + 1]),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &[(&str, &str)]) -> (McpSection, Vec<String>) {
        let tree: Value = serde_yaml::from_str(yaml).unwrap();
        let env = Env::from_pairs(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let mut r = Reader::new(&tree);
        let section = McpSection::read(&mut r, &env);
        (section, r.into_notices())
    }

    #[test]
    fn stdio_and_http_servers_with_hermes_keys() {
        let (section, notices) = read(
            "mcp_servers:\n  fs:\n    command: npx\n    args: [-y, server, 3]\n    env: {TOKEN: '${GH_TOKEN}', LEVEL: 2}\n    tools:\n      include: [read]\n      exclude: [read, write]\n  web:\n    url: http://127.0.0.1:9/mcp\n    headers: {Authorization: 'Bearer ${env:KEY}'}\n    timeout: 5\n    enabled: false\n  broken: {}\nmcp:\n  connect_wait: 2\n",
            &[("GH_TOKEN", "t0k"), ("KEY", "k3y")],
        );
        assert_eq!(section.connect_wait, Duration::from_secs(2));
        assert_eq!(section.servers.len(), 2, "{notices:?}");
        let fs = &section.servers[0];
        let McpTransport::Stdio {
            command, args, env, ..
        } = &fs.transport
        else {
            panic!("stdio expected")
        };
        assert_eq!(command, "npx");
        assert_eq!(args, &["-y", "server", "3"]);
        assert_eq!(env["TOKEN"], "t0k");
        assert_eq!(env["LEVEL"], "2");
        assert!(fs.offers("read") && !fs.offers("write") && !fs.offers("other"));
        assert_eq!(fs.timeout, Duration::from_secs(300));
        let web = &section.servers[1];
        assert!(!web.enabled);
        assert_eq!(web.timeout, Duration::from_secs(5));
        let McpTransport::Http { headers, .. } = &web.transport else {
            panic!("http expected")
        };
        assert_eq!(headers["Authorization"], "Bearer k3y");
        assert!(
            notices.iter().any(|n| n.contains("mcp_servers.broken")),
            "{notices:?}"
        );
        // Keys never appear in a debug line.
        assert!(!format!("{section:?}").contains("k3y"));
    }

    #[test]
    fn an_unset_variable_stays_as_written() {
        let env = Env::from_pairs(Vec::<(String, String)>::new());
        assert_eq!(expand("a ${NOPE} b ${", &env), "a ${NOPE} b ${");
    }
}
