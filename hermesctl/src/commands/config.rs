//! `hermesctl config path|get|set`: direct edits of config.yaml that keep its comments, then a
//! reload of a running daemon (never a start), so a config that stops the daemon can be repaired.

use std::path::Path;

use hermes_proto::{
    pb,
    yaml_edit::{self, EditError},
};
use serde_json::json;

use crate::{cli::ConfigCommand, connection, context::Context, error::CliError, output};

pub async fn run(ctx: &Context, command: ConfigCommand) -> Result<(), CliError> {
    let path = ctx.home.config_file();
    match command {
        ConfigCommand::Path => {
            if ctx.json {
                output::json(&json!({"path": path.display().to_string(), "exists": path.exists()}));
            } else {
                output::line(path.display().to_string());
            }
            Ok(())
        }
        ConfigCommand::Get { key } => {
            let text = read(&path)?;
            let value = yaml_edit::get(&text, &key).map_err(|e| edit_error(&path, e))?;
            let Some(value) = value else {
                return Err(CliError::new(format!(
                    "`{key}` is not set in {} (the built-in default applies)",
                    path.display()
                )));
            };
            if ctx.json {
                let value: serde_json::Value =
                    serde_json::to_value(&value).unwrap_or(serde_json::Value::Null);
                output::json(&json!({"key": key, "value": value}));
            } else {
                output::line(render(&value));
            }
            Ok(())
        }
        ConfigCommand::Set { key, value } => set(ctx, &path, &key, &value).await,
    }
}

async fn set(ctx: &Context, path: &Path, key: &str, raw: &str) -> Result<(), CliError> {
    let text = read(path)?;
    let value = yaml_edit::parse_cli_value(raw);
    let updated = yaml_edit::set(&text, key, &value).map_err(|e| edit_error(path, e))?;
    if updated != text {
        write_atomically(path, &updated)?;
    }
    let reload = reload_running(ctx).await;
    let shown = render(&value);
    if ctx.json {
        let (reloaded, error) = match &reload {
            Reload::Done(_) => (true, None),
            Reload::NotRunning => (false, None),
            Reload::Refused(e) => (false, Some(e.clone())),
        };
        output::json(&json!({
            "key": key,
            "value": serde_json::to_value(&value).unwrap_or(serde_json::Value::Null),
            "path": path.display().to_string(),
            "reloaded": reloaded,
            "reload_error": error,
            "notices": reload.notices(),
        }));
    } else {
        let after = reload.describe();
        output::line(format!("{key} = {shown} in {}; {after}", path.display()));
        reload.warn_notices();
    }
    match reload {
        Reload::Refused(e) => Err(CliError::new(format!("the file was written, but {e}"))),
        _ => Ok(()),
    }
}

pub enum Reload {
    /// Reloaded, with the notices of settings that were not usable (each kept at its default).
    Done(Vec<String>),
    NotRunning,
    Refused(String),
}

impl Reload {
    /// The reload's notices (none unless it was done).
    pub fn notices(&self) -> &[String] {
        match self {
            Self::Done(notices) => notices,
            _ => &[],
        }
    }

    /// Each notice on stderr, so a bad value is seen where it was typed.
    pub fn warn_notices(&self) {
        for notice in self.notices() {
            output::warn(format!("hermesd: {notice}"));
        }
    }

    /// What happened, as the end of a sentence about an edit.
    pub fn describe(&self) -> String {
        match self {
            Self::Done(notices) if !notices.is_empty() => format!(
                "hermesd reloaded it, with {} notice{}",
                notices.len(),
                if notices.len() == 1 { "" } else { "s" }
            ),
            Self::Done(_) => "hermesd reloaded it".into(),
            Self::NotRunning => "hermesd is not running; it applies at the next start".into(),
            Self::Refused(e) => format!("hermesd did not reload: {e}"),
        }
    }
}

pub async fn reload_running(ctx: &Context) -> Reload {
    let daemon = match connection::probe(ctx).await {
        Ok(Some(daemon)) => daemon,
        Ok(None) => return Reload::NotRunning,
        Err(e) => return Reload::Refused(e.message),
    };
    match daemon
        .daemon()
        .reload_config(pb::ReloadConfigRequest {})
        .await
    {
        Ok(reply) => Reload::Done(reply.into_inner().notices),
        Err(status) => Reload::Refused(status.message().to_string()),
    }
}

pub fn read(path: &Path) -> Result<String, CliError> {
    yaml_edit::read_config(path)
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", path.display())))
}

/// Write next to the file and rename over it, keeping the file's mode (0600 for a new file).
pub fn write_atomically(path: &Path, text: &str) -> Result<(), CliError> {
    yaml_edit::write_atomically(path, text)
        .map_err(|e| CliError::new(format!("cannot write {}: {e}", path.display())))
}

pub fn edit_error(path: &Path, e: EditError) -> CliError {
    CliError::new(format!("{}: {e}", path.display()))
}

/// A value as YAML on one line (flow style for lists and mappings).
fn render(value: &serde_yaml::Value) -> String {
    match value {
        serde_yaml::Value::String(s) => s.clone(),
        other => serde_yaml::to_string(other)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default(),
    }
}
