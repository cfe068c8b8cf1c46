//! Endpoints from the configured provider entries (`config::settings::LlmSection`, Python Hermes'
//! keys): the provider catalog, keys from the provider's environment variable, and the provider
//! guessed from the keys present.

use hermes_proto::env::Env;

use super::{
    endpoint::{ApiMode, Endpoint},
    providers::{self, Known},
};
use crate::config::settings::{LlmSection, NamedEndpoint, ProviderEntry, Timing};

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
    let named = &models.named;
    let mut out = vec![endpoint(&models.primary, named, env, timing, true)?];
    for (index, entry) in models.fallbacks.iter().enumerate() {
        let endpoint = endpoint(entry, named, env, timing, false)
            .map_err(|e| SettingsError::Invalid(format!("fallback_providers[{index}]: {e}")))?;
        out.push(endpoint);
    }
    Ok(out)
}

fn endpoint(
    entry: &ProviderEntry,
    named: &[NamedEndpoint],
    env: &Env,
    timing: &Timing,
    primary: bool,
) -> Result<Endpoint, SettingsError> {
    let mut provider = entry.provider.trim().to_lowercase();
    if provider.is_empty() || provider == "auto" {
        provider = if !entry.base_url.is_empty() {
            "custom".into()
        } else if let Some(found) = providers::KNOWN
            .iter()
            .find(|k| k.guessed && k.env_key(env).is_some())
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
    // A built-in name wins over a `providers:` entry of the same name, as in Hermes.
    let known = providers::find(&provider);
    let own = known
        .is_none()
        .then(|| find_named(named, &provider))
        .flatten();
    let model = match (&entry.model, own) {
        (model, _) if !model.is_empty() => model.clone(),
        (_, Some(own)) if !own.default_model.is_empty() => own.default_model.clone(),
        _ if primary => return Err(SettingsError::NoModel),
        _ => return Err(SettingsError::Invalid("a model is required".into())),
    };
    let base_url = if !entry.base_url.is_empty() {
        entry.base_url.clone()
    } else if let Some(known) = known {
        known.base_url(env)
    } else if let Some(own) = own {
        own.base_url.clone()
    } else {
        return Err(SettingsError::Invalid(format!(
            "provider `{provider}` needs a base_url (an OpenAI-compatible server's URL ending in /v1), or a `providers: {{{provider}: {{base_url: …}}}}` entry"
        )));
    };
    let api_mode = entry
        .api_mode
        .or_else(|| own.and_then(|o| o.api_mode))
        .unwrap_or_else(|| mode_for(&base_url, known));
    let written_key = Some(entry.api_key.as_str())
        .filter(|k| !k.is_empty() && !k.starts_with("${"))
        .map(str::to_string);
    // A key written in the entry is the one key; otherwise the provider's credential pool, and
    // the key variable (or the named entry's key) when the pool has none.
    let (api_key, pool) = match (written_key, known, own) {
        (Some(key), _, _) => (Some(key), None),
        (None, Some(known), _) => (
            known.env_key(env).map(|(_, v)| v.to_string()),
            Some(known.name.to_string()),
        ),
        (None, None, Some(own)) => (
            env.get(&own.key_env)
                .filter(|_| !own.key_env.is_empty())
                .map(str::to_string)
                .or_else(|| (!own.api_key.is_empty()).then(|| own.api_key.clone())),
            Some(format!("custom:{}", own.name)),
        ),
        (None, None, None) => (None, None),
    };
    let text_tool_calls = entry
        .text_tool_calls
        .unwrap_or_else(|| known.is_some_and(|k| k.text_tool_calls));
    let context_length = own.and_then(|o| {
        o.models
            .iter()
            .find(|(name, _)| *name == model)
            .and_then(|(_, context)| *context)
            .or(o.context_length)
    });
    Ok(Endpoint {
        provider: own.map_or(provider, |o| o.name.clone()),
        model,
        base_url,
        api_key,
        api_mode,
        stale_timeout: timing.stale_timeout,
        connect_timeout: timing.connect_timeout,
        text_tool_calls,
        pool,
        context_length,
    })
}

/// The `providers:` entry `name` means: its key, or `custom:<key>`.
fn find_named<'n>(named: &'n [NamedEndpoint], name: &str) -> Option<&'n NamedEndpoint> {
    let name = name.trim().to_ascii_lowercase().replace(' ', "-");
    let bare = name.strip_prefix("custom:").unwrap_or(&name);
    named.iter().find(|n| n.name == bare)
}

/// The wire format a URL implies, as Hermes decides it: `…/anthropic` speaks Anthropic's,
/// OpenAI's and xAI's own hosts the Responses API; otherwise the provider's.
fn mode_for(base_url: &str, known: Option<&Known>) -> ApiMode {
    let host = base_url
        .parse::<http::Uri>()
        .ok()
        .and_then(|uri| uri.host().map(str::to_ascii_lowercase));
    if base_url.trim_end_matches('/').ends_with("/anthropic") {
        ApiMode::AnthropicMessages
    } else if matches!(host.as_deref(), Some("api.openai.com" | "api.x.ai")) {
        ApiMode::CodexResponses
    } else {
        known.map_or(ApiMode::ChatCompletions, |k| k.mode)
    }
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
    let Some(known) = providers::find(&provider) else {
        return Err(format!(
            "unknown provider {provider:?}: use one of {} or \"custom\"",
            providers::KNOWN
                .iter()
                .map(|k| k.name)
                .collect::<Vec<_>>()
                .join(", ")
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
    providers::find(provider).map(|k| k.base_url)
}

/// The environment variable a known provider's key is read from first.
pub fn key_env(provider: &str) -> Option<&'static str> {
    providers::find(provider).and_then(|k| k.key_envs.first().copied())
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
    endpoint(own, &models.named, env, &models.timing, false)
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
    fn openais_own_host_speaks_the_responses_api() {
        let env = Env::from_pairs([("OPENAI_API_KEY", "sk-o")]);
        let list = endpoints(&tree("model: {default: gpt-5, provider: openai}"), &env).unwrap();
        assert_eq!(list[0].api_mode, ApiMode::CodexResponses);
        assert_eq!(list[0].url(), "https://api.openai.com/v1/responses");
        let local =
            tree("model: {default: m, provider: openai, base_url: 'http://127.0.0.1:9/v1'}");
        let list = endpoints(&local, &env).unwrap();
        assert_eq!(
            list[0].api_mode,
            ApiMode::ChatCompletions,
            "another server keeps chat"
        );
        let pinned = tree("model: {default: gpt-4o, provider: openai, api_mode: chat_completions}");
        assert_eq!(
            endpoints(&pinned, &env).unwrap()[0].api_mode,
            ApiMode::ChatCompletions
        );
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
