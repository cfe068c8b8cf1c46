//! `hermesctl model list|show|set|test`.

use hermes_proto::pb;
use serde_json::{Value, json};

use super::config::{Reload, edit_error, read, reload_running, write_atomically};
use hermes_proto::yaml_edit;

use crate::{cli::ModelCommand, connection, context::Context, error::CliError, output};

pub async fn run(ctx: &Context, command: ModelCommand) -> Result<(), CliError> {
    match command {
        ModelCommand::Set {
            spec,
            base_url,
            key_env,
        } => set(ctx, &spec, base_url, key_env).await,
        ModelCommand::List => {
            let daemon = connection::connect(ctx).await?;
            let models = daemon
                .models()
                .list(pb::ListModelsRequest::default())
                .await?
                .into_inner()
                .models;
            if ctx.json {
                output::json(&Value::Array(models.iter().map(info_json).collect()));
                return Ok(());
            }
            output::line(format!(
                "{:<9} {:<11} {:<32} {:>9}  BASE URL",
                "ROLE", "PROVIDER", "MODEL", "CONTEXT"
            ));
            for (index, info) in models.iter().enumerate() {
                let r = info.r#ref.clone().unwrap_or_default();
                let role = if index == 0 {
                    "default".to_string()
                } else {
                    format!("fallback{index}")
                };
                output::line(format!(
                    "{role:<9} {:<11} {:<32} {:>9}  {}",
                    r.provider, r.model, info.context_length, r.base_url
                ));
            }
            Ok(())
        }
        ModelCommand::Show => {
            let daemon = connection::connect(ctx).await?;
            let info = daemon
                .models()
                .get_default(pb::GetDefaultModelRequest {})
                .await?
                .into_inner()
                .model
                .unwrap_or_default();
            if ctx.json {
                output::json(&info_json(&info));
                return Ok(());
            }
            let r = info.r#ref.clone().unwrap_or_default();
            output::line(format!("model     {}:{}", r.provider, r.model));
            output::line(format!("base url  {}", r.base_url));
            output::line(format!("api       {}", r.api_mode));
            let key = if r.api_key_env.is_empty() {
                "from config or none".to_string()
            } else {
                r.api_key_env.clone()
            };
            output::line(format!("key       {key}"));
            output::line(format!(
                "context   {} tokens ({})",
                info.context_length, info.context_source
            ));
            output::line(format!("prices    {}", prices(&info)));
            Ok(())
        }
        ModelCommand::Test { all } => {
            let daemon = connection::connect(ctx).await?;
            let mut models = daemon.models();
            let refs: Vec<pb::ModelRef> = if all {
                models
                    .list(pb::ListModelsRequest::default())
                    .await?
                    .into_inner()
                    .models
                    .into_iter()
                    .filter_map(|m| m.r#ref)
                    .collect()
            } else {
                vec![pb::ModelRef::default()]
            };
            let mut results = Vec::new();
            let mut failed = false;
            for r in refs {
                let label = if r.model.is_empty() {
                    "default".to_string()
                } else {
                    format!("{}:{}", r.provider, r.model)
                };
                let reply = models
                    .test(pb::TestModelRequest { r#ref: Some(r) })
                    .await?
                    .into_inner();
                failed |= !reply.ok;
                if !ctx.json {
                    if reply.ok {
                        output::line(format!("{label}: ok in {} ms", reply.latency_ms));
                    } else {
                        output::line(format!("{label}: {} ({})", reply.error, reply.error_class));
                    }
                }
                results.push(
                    json!({"model": label, "ok": reply.ok, "latency_ms": reply.latency_ms,
                    "error": reply.error, "error_class": reply.error_class}),
                );
            }
            if ctx.json {
                output::json(&Value::Array(results));
            }
            if failed {
                return Err(CliError::new(""));
            }
            Ok(())
        }
    }
}

fn prices(info: &pb::ModelInfo) -> String {
    match (info.input_price_per_mtok, info.output_price_per_mtok) {
        (Some(i), Some(o)) => format!("${i} in / ${o} out per million tokens"),
        _ => "unknown".into(),
    }
}

fn info_json(info: &pb::ModelInfo) -> Value {
    let r = info.r#ref.clone().unwrap_or_default();
    json!({
        "provider": r.provider,
        "model": r.model,
        "base_url": r.base_url,
        "api_mode": r.api_mode,
        "api_key_env": r.api_key_env,
        "context_length": info.context_length,
        "context_source": info.context_source,
        "input_price_per_mtok": info.input_price_per_mtok,
        "output_price_per_mtok": info.output_price_per_mtok,
    })
}

async fn set(
    ctx: &Context,
    spec: &str,
    base_url: Option<String>,
    key_env: Option<String>,
) -> Result<(), CliError> {
    let (provider, model) = match spec.split_once(':') {
        Some((provider, model)) if !provider.contains('/') => (Some(provider.trim()), model.trim()),
        _ => (None, spec.trim()),
    };
    if model.is_empty() {
        return Err(CliError::new(
            "a model name is required, e.g. openrouter:anthropic/claude-sonnet-4",
        ));
    }
    if let Some(var) = &key_env
        && (var.is_empty() || !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(CliError::new(format!(
            "--key-env `{var}` is not an environment variable name"
        )));
    }
    let path = ctx.home.config_file();
    let mut text = read(&path)?;
    let mut edits: Vec<(&str, String)> = vec![("model.default", model.to_string())];
    if let Some(provider) = provider {
        edits.push(("model.provider", provider.to_lowercase()));
    }
    if let Some(url) = &base_url {
        edits.push(("model.base_url", url.clone()));
    }
    if let Some(var) = &key_env {
        edits.push(("model.api_key", format!("${{{var}}}")));
    }
    for (key, value) in &edits {
        text = yaml_edit::set(&text, key, &serde_yaml::Value::String(value.clone()))
            .map_err(|e| edit_error(&path, e))?;
    }
    write_atomically(&path, &text)?;
    let reload = reload_running(ctx).await;
    let shown = match provider {
        Some(p) => format!("{p}:{model}"),
        None => model.to_string(),
    };
    if ctx.json {
        output::json(&json!({"model": shown, "path": path.display().to_string(),
            "reloaded": matches!(reload, Reload::Done(_)), "notices": reload.notices()}));
    } else {
        let after = reload.describe();
        output::line(format!(
            "model set to {shown} in {}; {after}",
            path.display()
        ));
        reload.warn_notices();
    }
    if let Reload::Refused(e) = reload {
        return Err(CliError::new(format!("the file was written, but {e}")));
    }
    Ok(())
}
