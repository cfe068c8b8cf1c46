//! Endpoints from configuration, with the Python Hermes keys: `model.{default, provider, base_url,
//! api_key, api_mode}`, `fallback_providers: [{provider, model, base_url, api_key, api_mode}]`, keys
//! from the provider's environment variable, and the provider guessed from the keys present.

use std::time::Duration;

use hermes_proto::env::Env;
use serde_yaml::Value;

use super::endpoint::{ApiMode, Endpoint};

/// What a configured provider name means.
struct KnownProvider {
    name: &'static str,
    base_url: &'static str,
    key_env: &'static str,
    mode: ApiMode,
    text_tool_calls: bool,
}

const KNOWN: &[KnownProvider] = &[
    KnownProvider {
        name: "openrouter",
        base_url: "https://openrouter.ai/api/v1",
        key_env: "OPENROUTER_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: false,
    },
    KnownProvider {
        name: "anthropic",
        base_url: "https://api.anthropic.com",
        key_env: "ANTHROPIC_API_KEY",
        mode: ApiMode::AnthropicMessages,
        text_tool_calls: false,
    },
    KnownProvider {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        key_env: "OPENAI_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: false,
    },
    KnownProvider {
        name: "nous",
        base_url: "https://inference-api.nousresearch.com/v1",
        key_env: "NOUS_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: false,
    },
    KnownProvider {
        name: "deepseek",
        base_url: "https://api.deepseek.com/v1",
        key_env: "DEEPSEEK_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: false,
    },
    KnownProvider {
        name: "ollama",
        base_url: "http://127.0.0.1:11434/v1",
        key_env: "OLLAMA_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: true,
    },
    KnownProvider {
        name: "llamacpp",
        base_url: "http://127.0.0.1:8080/v1",
        key_env: "LLAMACPP_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: true,
    },
    KnownProvider {
        name: "lmstudio",
        base_url: "http://127.0.0.1:1234/v1",
        key_env: "LMSTUDIO_API_KEY",
        mode: ApiMode::ChatCompletions,
        text_tool_calls: true,
    },
];

/// Hosted providers guessed from their key in the environment, in this order (KNOWN's order).
const GUESSED_FROM_KEYS: &[&str] = &["openrouter", "anthropic", "openai", "nous", "deepseek"];

/// The one line every client shows when no model is configured.
pub const HOW_TO_CONFIGURE: &str = "no model is configured: run e.g. `hermesctl model set openrouter:anthropic/claude-sonnet-4 --key-env OPENROUTER_API_KEY` with the key in ~/.hermes/.env (providers: openrouter, anthropic, openai, nous, deepseek, ollama, or custom with --base-url), or start a local Ollama, llama.cpp or LM Studio server";

/// Why the endpoints could not be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("{HOW_TO_CONFIGURE}")]
    NoModel,
    #[error("{0}")]
    Invalid(String),
}

/// Timeouts and retry settings shared by all endpoints (`model.*`).
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub stale_timeout: Duration,
    pub connect_timeout: Duration,
    pub max_retries: u32,
    pub retry_base_delay: Duration,
}

fn text<'a>(node: &'a Value, key: &str) -> &'a str {
    node.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or("")
}

fn seconds(node: &Value, key: &str, default: f64) -> Result<Duration, SettingsError> {
    match node.get(key) {
        None | Some(Value::Null) => Ok(Duration::from_secs_f64(default)),
        Some(v) => v
            .as_f64()
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                SettingsError::Invalid(format!("model.{key} must be a number of seconds"))
            }),
    }
}

/// Timing from the `model` section.
pub fn timing(tree: &Value) -> Result<Timing, SettingsError> {
    let model = tree.get("model").unwrap_or(&Value::Null);
    Ok(Timing {
        stale_timeout: seconds(model, "stale_timeout", 90.0)?,
        connect_timeout: seconds(model, "connect_timeout", 10.0)?,
        max_retries: model
            .get("max_retries")
            .and_then(Value::as_u64)
            .unwrap_or(3) as u32,
        retry_base_delay: seconds(model, "retry_base_delay", 1.0)?,
    })
}

/// The primary endpoint followed by the fallbacks, in order.
pub fn endpoints(tree: &Value, env: &Env) -> Result<Vec<Endpoint>, SettingsError> {
    let timing = timing(tree)?;
    let model = tree.get("model").unwrap_or(&Value::Null);
    let mut out = vec![endpoint(model, text(model, "default"), env, &timing, true)?];
    for (index, entry) in tree
        .get("fallback_providers")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let endpoint = endpoint(entry, text(entry, "model"), env, &timing, false)
            .map_err(|e| SettingsError::Invalid(format!("fallback_providers[{index}]: {e}")))?;
        out.push(endpoint);
    }
    Ok(out)
}

fn endpoint(
    node: &Value,
    model: &str,
    env: &Env,
    timing: &Timing,
    primary: bool,
) -> Result<Endpoint, SettingsError> {
    let base_url = text(node, "base_url");
    let mut provider = text(node, "provider").to_lowercase();
    if provider.is_empty() || provider == "auto" {
        provider = if !base_url.is_empty() {
            "custom".into()
        } else if let Some(found) = KNOWN
            .iter()
            .filter(|k| GUESSED_FROM_KEYS.contains(&k.name))
            .find(|k| env.get(k.key_env).is_some())
        {
            found.name.into()
        } else if primary {
            return Err(SettingsError::NoModel);
        } else {
            return Err(SettingsError::Invalid(
                "a provider or base_url is required".into(),
            ));
        };
    }
    if model.is_empty() {
        return Err(if primary {
            SettingsError::NoModel
        } else {
            SettingsError::Invalid("a model is required".into())
        });
    }
    let known = KNOWN.iter().find(|k| k.name == provider);
    let base_url = match (base_url, known) {
        ("", Some(k)) => k.base_url.to_string(),
        ("", None) => {
            return Err(SettingsError::Invalid(format!(
                "provider `{provider}` needs a base_url (an OpenAI-compatible server's URL ending in /v1)"
            )));
        }
        (url, _) => url.to_string(),
    };
    let api_mode = match text(node, "api_mode") {
        "anthropic_messages" | "anthropic" => ApiMode::AnthropicMessages,
        "chat_completions" | "openai" => ApiMode::ChatCompletions,
        "" if base_url.trim_end_matches('/').ends_with("/anthropic") => ApiMode::AnthropicMessages,
        "" => known.map_or(ApiMode::ChatCompletions, |k| k.mode),
        other => {
            return Err(SettingsError::Invalid(format!(
                "api_mode `{other}` is not one of chat_completions, anthropic_messages"
            )));
        }
    };
    let api_key = Some(text(node, "api_key"))
        .filter(|k| !k.is_empty() && !k.starts_with("${"))
        .map(str::to_string)
        .or_else(|| known.and_then(|k| env.get(k.key_env)).map(str::to_string));
    let text_tool_calls = node
        .get("text_tool_calls")
        .and_then(Value::as_bool)
        .unwrap_or_else(|| known.is_some_and(|k| k.text_tool_calls));
    Ok(Endpoint {
        provider,
        model: model.to_string(),
        base_url,
        api_key,
        api_mode,
        stale_timeout: timing.stale_timeout,
        connect_timeout: timing.connect_timeout,
        text_tool_calls,
    })
}

/// The environment variable a known provider's key is read from.
pub fn key_env(provider: &str) -> Option<&'static str> {
    KNOWN.iter().find(|k| k.name == provider).map(|k| k.key_env)
}

/// The context-window override `model.context_length`, if set.
pub fn context_override(tree: &Value) -> Option<u64> {
    tree.get("model")?.get("context_length")?.as_u64()
}

/// The endpoint configured for an auxiliary task (`auxiliary.<task>`: provider, model, base_url,
/// api_key, as Python Hermes), or `None` when the task uses the main model. A model without a
/// provider or base_url runs on the main model's provider.
pub fn auxiliary_endpoint(
    tree: &Value,
    env: &Env,
    task: &str,
) -> Result<Option<Endpoint>, SettingsError> {
    let Some(node) = tree.get("auxiliary").and_then(|a| a.get(task)) else {
        return Ok(None);
    };
    let model = text(node, "model");
    if model.is_empty() {
        return Ok(None);
    }
    let provider = text(node, "provider");
    if (provider.is_empty() || provider == "auto") && text(node, "base_url").is_empty() {
        let main = endpoints(tree, env)?.into_iter().next();
        return Ok(main.map(|main| Endpoint {
            model: model.to_string(),
            ..main
        }));
    }
    endpoint(node, model, env, &timing(tree)?, false)
        .map(Some)
        .map_err(|e| SettingsError::Invalid(format!("auxiliary.{task}: {e}")))
}

/// `auxiliary.<task>.timeout` in seconds, else `default`.
pub fn auxiliary_timeout(tree: &Value, task: &str, default: f64) -> Duration {
    let node = tree
        .get("auxiliary")
        .and_then(|a| a.get(task))
        .unwrap_or(&Value::Null);
    seconds(node, "timeout", default).unwrap_or(Duration::from_secs_f64(default))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(yaml: &str) -> Value {
        serde_yaml::from_str(yaml).unwrap()
    }

    #[test]
    fn provider_from_keys_and_defaults() {
        let env = Env::from_pairs([("ANTHROPIC_API_KEY", "sk-a")]);
        let list = endpoints(&tree("model: {default: claude-x}"), &env).unwrap();
        assert_eq!(list[0].provider, "anthropic");
        assert_eq!(list[0].api_mode, ApiMode::AnthropicMessages);
        assert_eq!(list[0].api_key.as_deref(), Some("sk-a"));
        assert_eq!(list[0].url(), "https://api.anthropic.com/v1/messages");
    }

    #[test]
    fn nothing_configured_says_how() {
        let err = endpoints(&tree("model: {default: ''}"), &Env::default()).unwrap_err();
        assert_eq!(err, SettingsError::NoModel);
        assert!(err.to_string().contains("hermesctl model set openrouter:"));
    }

    #[test]
    fn custom_base_url_fallbacks_and_anthropic_suffix() {
        let t = tree(
            "model: {default: m, base_url: 'http://h:1/v1', api_key: k}\n\
             fallback_providers:\n  - {provider: custom, model: n, base_url: 'http://h:2/anthropic'}\n  - {provider: ollama, model: q}",
        );
        let list = endpoints(&t, &Env::default()).unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].provider, "custom");
        assert_eq!(list[0].url(), "http://h:1/v1/chat/completions");
        assert_eq!(list[1].api_mode, ApiMode::AnthropicMessages);
        assert_eq!(list[1].url(), "http://h:2/anthropic/v1/messages");
        assert!(list[2].text_tool_calls);
        assert!(
            !format!("{:?}", list[0]).contains("\"k\""),
            "key not in Debug"
        );
    }

    #[test]
    fn bad_fallback_names_its_index() {
        let t = tree(
            "model: {default: m, provider: openai}\nfallback_providers: [{provider: nowhere, model: x}]",
        );
        let err = endpoints(&t, &Env::default()).unwrap_err().to_string();
        assert!(
            err.starts_with("fallback_providers[0]: provider `nowhere` needs a base_url"),
            "{err}"
        );
    }
}
