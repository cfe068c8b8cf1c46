//! `hermesctl auth list|add|rm`: the daemon's credential pools. A pasted key is read from the
//! terminal with echo off (or from standard input when it is not a terminal) and goes to the
//! daemon over the socket, never onto the command line.

use std::{
    io::{BufRead, IsTerminal, Write},
    os::fd::AsFd,
};

use hermes_proto::pb;
use nix::sys::termios::{self, LocalFlags, SetArg};
use serde_json::{Value, json};

use crate::{cli::AuthCommand, connection, context::Context, error::CliError, output};

pub async fn run(ctx: &Context, command: AuthCommand) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let mut auth = daemon.auth();
    match command {
        AuthCommand::List { provider } => {
            let reply = auth
                .list(pb::ListCredentialsRequest {
                    provider: provider.unwrap_or_default(),
                })
                .await?
                .into_inner();
            for problem in &reply.problems {
                output::warn(format!("hermesctl: {problem}"));
            }
            if ctx.json {
                let rows = reply.credentials.iter().map(credential_json).collect();
                output::json(&Value::Array(rows));
            } else {
                print_pools(&reply.credentials);
            }
            Ok(())
        }
        AuthCommand::Add {
            provider,
            key_env,
            api_key,
            label,
            kind,
        } => {
            if !matches!(kind.as_str(), "api-key" | "api_key") {
                return Err(CliError::new(format!(
                    "--type {kind}: only API keys are added with `auth add`; logins use `hermesctl login {provider}`"
                )));
            }
            let api_key = match (&key_env, api_key) {
                (Some(_), _) => String::new(),
                (None, Some(key)) => key,
                (None, None) => read_key()?,
            };
            let credential = auth
                .add(pb::AddCredentialRequest {
                    provider: provider.clone(),
                    label: label.unwrap_or_default(),
                    api_key,
                    key_env: key_env.unwrap_or_default(),
                })
                .await?
                .into_inner()
                .credential
                .unwrap_or_default();
            if ctx.json {
                output::json(&credential_json(&credential));
            } else {
                output::line(format!(
                    "Added {} credential #{}: \"{}\"",
                    credential.pool, credential.position, credential.label
                ));
            }
            Ok(())
        }
        AuthCommand::Rm { provider, target } => {
            let credential = auth
                .remove(pb::RemoveCredentialRequest { provider, target })
                .await?
                .into_inner()
                .credential
                .unwrap_or_default();
            if ctx.json {
                output::json(&credential_json(&credential));
            } else {
                let note = match credential.origin.as_str() {
                    "hermesd" => "",
                    "auth.json" => " — hermesd no longer uses it; Hermes' auth.json is unchanged",
                    _ => " — hermesd no longer uses this variable's key",
                };
                output::line(format!(
                    "Removed {} credential #{} ({}){note}",
                    credential.pool, credential.position, credential.label
                ));
            }
            Ok(())
        }
    }
}

/// The key, pasted on the terminal without echo, or the first line of standard input.
fn read_key() -> Result<String, CliError> {
    let stdin = std::io::stdin();
    let mut line = String::new();
    if stdin.is_terminal() {
        eprint!("Paste your API key: ");
        let _ = std::io::stderr().flush();
        let saved = termios::tcgetattr(stdin.as_fd())
            .map_err(|e| CliError::new(format!("cannot read the terminal's settings: {e}")))?;
        let mut quiet = saved.clone();
        quiet.local_flags.remove(LocalFlags::ECHO);
        termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &quiet)
            .map_err(|e| CliError::new(format!("cannot turn echo off: {e}")))?;
        let read = stdin.lock().read_line(&mut line);
        let _ = termios::tcsetattr(stdin.as_fd(), SetArg::TCSANOW, &saved);
        eprintln!();
        read.map_err(|e| CliError::new(format!("cannot read the key: {e}")))?;
    } else {
        stdin
            .lock()
            .read_line(&mut line)
            .map_err(|e| CliError::new(format!("cannot read the key from standard input: {e}")))?;
    }
    let key = line.trim().to_string();
    if key.is_empty() {
        return Err(CliError::new(
            "no key given: paste it at the prompt, pipe it on standard input, or use --key-env VAR",
        ));
    }
    Ok(key)
}

fn credential_json(c: &pb::Credential) -> Value {
    json!({
        "pool": c.pool, "position": c.position, "id": c.id, "label": c.label,
        "auth_type": c.auth_type, "source": c.source, "origin": c.origin, "status": c.status,
        "status_code": (c.status_code != 0).then_some(c.status_code), "reason": c.reason,
        "seconds_left": (c.seconds_left != 0).then_some(c.seconds_left), "uses": c.uses,
        "strategy": c.strategy,
    })
}

/// Hermes' layout: a heading per pool, a row per credential, the trouble and the time left.
fn print_pools(credentials: &[pb::Credential]) {
    if credentials.is_empty() {
        output::line(
            "No credentials: add one with `hermesctl auth add PROVIDER`, or set the provider's key variable in ~/.hermes/.env",
        );
        return;
    }
    let mut pools: Vec<&str> = credentials.iter().map(|c| c.pool.as_str()).collect();
    pools.dedup();
    for pool in pools {
        let rows: Vec<&pb::Credential> = credentials.iter().filter(|c| c.pool == pool).collect();
        let strategy = rows.first().map_or("fill_first", |c| c.strategy.as_str());
        output::line(format!("{pool} ({} credentials, {strategy}):", rows.len()));
        for c in rows {
            let source = c.source.strip_prefix("manual:").unwrap_or(&c.source);
            let status = match c.status.as_str() {
                "parked" => {
                    let code = if c.status_code != 0 {
                        format!(" ({})", c.status_code)
                    } else {
                        String::new()
                    };
                    format!(" {}{code} ({} left)", c.reason, left(c.seconds_left))
                }
                "dead" => format!(" dead: {}", c.reason),
                "no_secret" => " (its key is not available to hermesd)".into(),
                _ => String::new(),
            };
            output::line(
                format!(
                    "  #{}  {:<20} {:<7} {} [{}]{status}",
                    c.position, c.label, c.auth_type, source, c.origin
                )
                .trim_end(),
            );
        }
        output::line("");
    }
}

/// `1h 0m`, `4m 59s`, `12s`, as Hermes shows the time a credential stays parked.
fn left(seconds: u64) -> String {
    let (d, h, m, s) = (
        seconds / 86_400,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60,
    );
    if d > 0 {
        format!("{d}d {h}h")
    } else if h > 0 {
        format!("{h}h {m}m")
    } else if m > 0 {
        format!("{m}m {s}s")
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn time_left_reads_as_hermes_writes_it() {
        assert_eq!(super::left(3600), "1h 0m");
        assert_eq!(super::left(299), "4m 59s");
        assert_eq!(super::left(12), "12s");
        assert_eq!(super::left(90_000), "1d 1h");
    }
}
