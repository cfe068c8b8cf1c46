//! Endpoints from the configured provider entries (`config::settings::LlmSection`, Python Hermes'
//! keys): the provider catalog, keys from the provider's environment variable, and the provider
//! guessed from the keys present.

use hermes_proto::env::Env;

use super::endpoint::{ApiMode, Endpoint};
use crate::config::settings::{LlmSection, ProviderEntry, Timing};

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

/// The primary endpoint followed by the fallbacks, in order.
pub fn endpoints(models: &LlmSection, env: &Env) -> Result<Vec<Endpoint>, SettingsError> {
    let timing = &models.timing;
    let mut out = vec![endpoint(&models.primary, env, timing, true)?];
    for (index, entry) in models.fallbacks.iter().enumerate() {
        let endpoint = endpoint(entry, env, timing, false)
            .map_err(|e| SettingsError::Invalid(format!("fallback_providers[{index}]: {e}")))?;
        out.push(endpoint);
    }
    Ok(out)
}

fn endpoint(
    entry: &ProviderEntry,
    env: &Env,
    timing: &Timing,
    primary: bool,
) -> Result<Endpoint, SettingsError> {
    let base_url = entry.base_url.as_str();
    let mut provider = entry.provider.to_lowercase();
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
    if entry.model.is_empty() {
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
    let api_mode = match entry.api_mode {
        Some(mode) => mode,
        None if base_url.trim_end_matches('/').ends_with("/anthropic") => {
            ApiMode::AnthropicMessages
        }
        None => known.map_or(ApiMode::ChatCompletions, |k| k.mode),
    };
    let api_key = Some(entry.api_key.as_str())
        .filter(|k| !k.is_empty() && !k.starts_with("${"))
        .map(str::to_string)
        .or_else(|| known.and_then(|k| env.get(k.key_env)).map(str::to_string));
    let text_tool_calls = entry
        .text_tool_calls
        .unwrap_or_else(|| known.is_some_and(|k| k.text_tool_calls));
    Ok(Endpoint {
        provider,
        model: entry.model.clone(),
        base_url,
        api_key,
        api_mode,
        stale_timeout: timing.stale_timeout,
        connect_timeout: timing.connect_timeout,
        text_tool_calls,
    })
}

/// Why a cron job may not pin `base_url` with `provider` (Hermes' rule): a base URL needs a
/// provider; `custom` takes any URL (and no configured key); a known provider only its own host,
/// so a job cannot send that provider's key elsewhere.
pub fn check_job_base_url(provider: &str, base_url: &str) -> Result<(), String> {
    let (provider, base_url) = (provider.trim().to_ascii_lowercase(), base_url.trim());
    if base_url.is_empty() {
        return Ok(());
    }
    // Scheme, host and port: the same host on another port or without TLS is another server.
    let host = |url: &str| {
        let uri = url.parse::<http::Uri>().ok()?;
        let scheme = uri
            .scheme_str()
            .filter(|s| matches!(*s, "http" | "https"))?;
        let port = uri
            .port_u16()
            .unwrap_or(if scheme == "https" { 443 } else { 80 });
        let host = uri.host()?.trim_end_matches('.').to_ascii_lowercase();
        Some(format!("{scheme}://{host}:{port}"))
    };
    let Some(wanted) = host(base_url) else {
        return Err(format!(
            "base_url {base_url:?} is not an http(s) URL (e.g. http://localhost:11434/v1)"
        ));
    };
    if provider.is_empty() || provider == "auto" {
        return Err(
            "base_url needs an explicit provider: use provider \"custom\" for your own server"
                .into(),
        );
    }
    if provider == "custom" {
        return Ok(());
    }
    let Some(known) = KNOWN.iter().find(|k| k.name == provider) else {
        return Err(format!(
            "unknown provider {provider:?}: use one of {} or \"custom\"",
            KNOWN.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
        ));
    };
    if host(known.base_url).as_deref() != Some(wanted.as_str()) {
        return Err(format!(
            "base_url {base_url} is not {provider}'s endpoint ({}); a job that talks to another \
             server uses provider \"custom\"",
            known.base_url
        ));
    }
    Ok(())
}

/// A known provider's own endpoint.
pub fn known_base_url(provider: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|k| k.name.eq_ignore_ascii_case(provider))
        .map(|k| k.base_url)
}

/// The environment variable a known provider's key is read from.
pub fn key_env(provider: &str) -> Option<&'static str> {
    KNOWN.iter().find(|k| k.name == provider).map(|k| k.key_env)
}

/// The endpoint `own` configures for the auxiliary `task` (`auxiliary.<task>`: provider, model,
/// base_url, api_key, as Python Hermes), or `None` when the task uses the main model. A model
/// without a provider or base_url runs on the main model's provider.
pub fn auxiliary_endpoint(
    models: &LlmSection,
    own: &ProviderEntry,
    task: &str,
    env: &Env,
) -> Result<Option<Endpoint>, SettingsError> {
    if own.model.is_empty() {
        return Ok(None);
    }
    if (own.provider.is_empty() || own.provider == "auto") && own.base_url.is_empty() {
        let main = endpoints(models, env)?.into_iter().next();
        return Ok(main.map(|main| Endpoint {
            model: own.model.clone(),
            ..main
        }));
    }
    endpoint(own, env, &models.timing, false)
        .map(Some)
        .map_err(|e| SettingsError::Invalid(format!("auxiliary.{task}: {e}")))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_pinned_server_is_its_providers_own_scheme_host_and_port() {
        assert!(check_job_base_url("openrouter", "https://openrouter.ai/api/v1").is_ok());
        assert!(check_job_base_url("OpenRouter", "https://OPENROUTER.ai./api/v1").is_ok());
        for url in [
            "http://openrouter.ai/api/v1",
            "https://openrouter.ai:8443/api/v1",
            "https://openrouter.ai@evil.example/api/v1",
            "https://evil.example/v1",
        ] {
            assert!(check_job_base_url("openrouter", url).is_err(), "{url}");
        }
        assert!(check_job_base_url("ollama", "http://127.0.0.1:9999/v1").is_err());
        assert!(check_job_base_url("custom", "http://127.0.0.1:9999/v1").is_ok());
    }

    use super::*;

    /// The chain `yaml` configures (read as `Config::load` reads it).
    fn tree(yaml: &str) -> LlmSection {
        let tree: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap();
        let (settings, notices) = crate::config::Settings::read(&tree, &Env::default());
        assert!(notices.is_empty(), "{notices:?}");
        settings.llm
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
