//! `hermesctl mcp list|test|add|rm`: the daemon's MCP servers. `add` and `rm` edit
//! `mcp_servers` in config.yaml (comments kept) and reload a running daemon. `serve` is
//! [`super::mcp_serve`].

use hermes_proto::{pb, yaml_edit};
use serde_json::{Value, json};
use serde_yaml::{Mapping, Value as Yaml};

use super::config::{edit_error, read, reload_running, write_atomically};
use crate::{cli::McpCommand, connection, context::Context, error::CliError, output};

fn server_json(s: &pb::McpServer) -> Value {
    json!({
        "name": s.name,
        "state": s.state,
        "transport": s.transport,
        "target": s.target,
        "tools": s.tools,
        "error": if s.error.is_empty() { Value::Null } else { json!(s.error) },
    })
}

/// Hermes' server names are free text; ours must be a plain key of config.yaml.
fn check_name(name: &str) -> Result<(), CliError> {
    let ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(CliError::new(format!(
            "{name:?} is not a server name (letters, digits, '-' and '_')"
        )))
    }
}

fn pairs(items: &[String], separator: char, what: &str) -> Result<Mapping, CliError> {
    let mut map = Mapping::new();
    for item in items {
        let Some((k, v)) = item.split_once(separator) else {
            return Err(CliError::new(format!("{what} {item:?} needs {separator}")));
        };
        map.insert(Yaml::String(k.trim().into()), Yaml::String(v.trim().into()));
    }
    Ok(map)
}

pub async fn run(ctx: &Context, command: McpCommand) -> Result<(), CliError> {
    match command {
        McpCommand::List => {
            let daemon = connection::connect(ctx).await?;
            let reply = daemon
                .mcp()
                .list(pb::ListMcpServersRequest {})
                .await?
                .into_inner();
            if ctx.json {
                output::json(&Value::Array(
                    reply.servers.iter().map(server_json).collect(),
                ));
            } else if reply.servers.is_empty() {
                output::line(
                    "no MCP servers configured (hermesctl mcp add NAME --command … | --url …)",
                );
            } else {
                output::line(format!(
                    "{:<16} {:<11} {:>5}  {}",
                    "NAME", "STATE", "TOOLS", "TARGET"
                ));
                for s in &reply.servers {
                    output::line(format!(
                        "{:<16} {:<11} {:>5}  {}",
                        s.name,
                        s.state,
                        s.tools.len(),
                        s.target
                    ));
                    if !s.error.is_empty() {
                        output::line(format!("{:<16} {}", "", s.error));
                    }
                }
            }
            Ok(())
        }
        McpCommand::Test { name } => {
            let daemon = connection::connect(ctx).await?;
            let reply = daemon
                .mcp()
                .test(pb::TestMcpServerRequest { name: name.clone() })
                .await?
                .into_inner();
            if ctx.json {
                output::json(&json!({
                    "name": name,
                    "ok": reply.ok,
                    "elapsed_ms": reply.elapsed_ms,
                    "transport": reply.transport,
                    "target": reply.target,
                    "tools": reply.tools.iter().map(|t| json!({"name": t.name, "description": t.description})).collect::<Vec<_>>(),
                    "error": if reply.error.is_empty() { Value::Null } else { json!(reply.error) },
                }));
            } else {
                output::line(format!("Transport: {} → {}", reply.transport, reply.target));
                if reply.ok {
                    output::line(format!("✓ Connected ({} ms)", reply.elapsed_ms));
                    output::line(format!("✓ Tools discovered: {}", reply.tools.len()));
                    for t in &reply.tools {
                        let d: String = t.description.chars().take(55).collect();
                        output::line(format!("  {}  {d}", t.name));
                    }
                }
            }
            if reply.ok {
                Ok(())
            } else {
                Err(CliError::new(format!(
                    "✗ Connection failed: {}",
                    reply.error
                )))
            }
        }
        McpCommand::Add {
            name,
            command,
            url,
            env,
            headers,
            mut args,
        } => {
            check_name(&name)?;
            if args.first().is_some_and(|a| a == "--") {
                args.remove(0);
            }
            let mut server = Mapping::new();
            match (command, url) {
                (Some(command), None) => {
                    server.insert("command".into(), Yaml::String(command));
                    if !args.is_empty() {
                        server.insert(
                            "args".into(),
                            Yaml::Sequence(args.into_iter().map(Yaml::String).collect()),
                        );
                    }
                    let env = pairs(&env, '=', "--env")?;
                    if !env.is_empty() {
                        server.insert("env".into(), Yaml::Mapping(env));
                    }
                }
                (None, Some(url)) => {
                    server.insert("url".into(), Yaml::String(url));
                    let headers = pairs(&headers, ':', "--header")?;
                    if !headers.is_empty() {
                        server.insert("headers".into(), Yaml::Mapping(headers));
                    }
                }
                _ => return Err(CliError::new("give --command or --url")),
            }
            server.insert("enabled".into(), Yaml::Bool(true));
            let path = ctx.home.config_file();
            let text = read(&path)?;
            let key = format!("mcp_servers.{name}");
            let updated = yaml_edit::set(&text, &key, &Yaml::Mapping(server))
                .map_err(|e| edit_error(&path, e))?;
            write_atomically(&path, &updated)?;
            finish(ctx, &name, "added to", &path).await
        }
        McpCommand::Serve => super::mcp_serve::run(ctx).await,
        McpCommand::Rm { name } => {
            check_name(&name)?;
            let path = ctx.home.config_file();
            let text = read(&path)?;
            let key = format!("mcp_servers.{name}");
            let Some(updated) = yaml_edit::remove(&text, &key).map_err(|e| edit_error(&path, e))?
            else {
                return Err(CliError::new(format!(
                    "no MCP server {name:?} in {}",
                    path.display()
                )));
            };
            write_atomically(&path, &updated)?;
            finish(ctx, &name, "removed from", &path).await
        }
    }
}

async fn finish(
    ctx: &Context,
    name: &str,
    verb: &str,
    path: &std::path::Path,
) -> Result<(), CliError> {
    let reload = reload_running(ctx).await;
    if ctx.json {
        output::json(&json!({
            "name": name,
            "path": path.display().to_string(),
            "reloaded": matches!(reload, super::config::Reload::Done(_)),
            "notices": reload.notices(),
        }));
    } else {
        output::line(format!(
            "✓ {name} {verb} {}; {}",
            path.display(),
            reload.describe()
        ));
        reload.warn_notices();
    }
    Ok(())
}
