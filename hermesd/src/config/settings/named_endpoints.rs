//! The endpoints a user names themselves and how each provider's credentials are taken turns
//! with, as Python Hermes writes them: `providers: {<name>: {base_url, key_env, api_key,
//! api_mode, default_model, models, context_length, enabled}}`, the older list
//! `custom_providers: [{name, base_url, …}]`, and `credential_pool_strategies: {<provider>:
//! fill_first | round_robin | random | least_used}`.

use serde_yaml::Value;

use super::{
    provider::{API_MODES, ApiMode},
    read::{Reader, Verdict, names},
};

/// One `providers:` entry.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct NamedEndpoint {
    /// The key under `providers:` (or `name` of a `custom_providers` item), lower case.
    pub name: String,
    pub base_url: String,
    /// `key_env` (or `api_key_env`): the variable holding the key.
    pub key_env: String,
    /// An inline `api_key`.
    pub api_key: String,
    pub api_mode: Option<ApiMode>,
    /// `default_model` (or `model`).
    pub default_model: String,
    /// `models`: the names, with a context length where given.
    pub models: Vec<(String, Option<u64>)>,
    pub context_length: Option<u64>,
}

impl std::fmt::Debug for NamedEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NamedEndpoint")
            .field("name", &self.name)
            .field("base_url", &self.base_url)
            .field("key_env", &self.key_env)
            .field("api_key", &(!self.api_key.is_empty()).then_some("<set>"))
            .field("api_mode", &self.api_mode)
            .field("default_model", &self.default_model)
            .finish()
    }
}

/// The strategy words, in Hermes' spelling.
pub const STRATEGIES: [&str; 4] = ["fill_first", "round_robin", "random", "least_used"];

/// `providers:` and `custom_providers:` (a `providers:` entry wins over a list item of the same
/// name; `enabled: false` leaves one out).
pub fn read_named(r: &mut Reader<'_>) -> Vec<NamedEndpoint> {
    let mut out: Vec<NamedEndpoint> = Vec::new();
    match r.get("providers") {
        Some(Value::Mapping(entries)) => {
            for (name, node) in entries {
                let Some(name) = name.as_str() else { continue };
                if let Some(entry) = read_entry(r, &format!("providers.{name}"), name, node) {
                    out.push(entry);
                }
            }
        }
        Some(Value::Null) | None => {}
        Some(other) => r.notice(
            "providers",
            other,
            "is not a mapping of named endpoints",
            &"none",
        ),
    }
    if let Some(Value::Sequence(items)) = r.get("custom_providers") {
        for (index, node) in items.iter().enumerate() {
            let name = node.get("name").and_then(Value::as_str).unwrap_or_default();
            let key = format!("custom_providers[{index}]");
            if name.trim().is_empty() {
                r.notice(&key, node, "has no name", &"nothing");
                continue;
            }
            if let Some(entry) = read_entry(r, &key, name, node)
                && !out.iter().any(|e| e.name == entry.name)
            {
                out.push(entry);
            }
        }
    }
    out
}

fn read_entry(r: &mut Reader<'_>, key: &str, name: &str, node: &Value) -> Option<NamedEndpoint> {
    if !node.is_mapping() {
        r.notice(key, node, "is not a mapping of endpoint keys", &"nothing");
        return None;
    }
    let mut part = Reader::under(node, r.name(&format!("{key}.")));
    let first = |part: &mut Reader<'_>, keys: &[&str]| {
        keys.iter()
            .map(|k| part.text(k))
            .find(|v| !v.is_empty())
            .unwrap_or_default()
    };
    let enabled = part.flag("enabled", true);
    let entry = NamedEndpoint {
        name: name.trim().to_ascii_lowercase().replace(' ', "-"),
        base_url: first(&mut part, &["base_url", "url", "api"]),
        key_env: first(&mut part, &["key_env", "api_key_env"]),
        api_key: part.secret("api_key"),
        api_mode: read_mode(&mut part),
        default_model: first(&mut part, &["default_model", "model"]),
        models: read_models(part.get("models")),
        context_length: part.whole_opt("context_length", "what the endpoint reports"),
    };
    r.absorb(part);
    if entry.base_url.is_empty() {
        let why = "has no base_url";
        r.notice(key, node, why, &"nothing (the entry is left out)");
        return None;
    }
    enabled.then_some(entry)
}

fn read_mode(part: &mut Reader<'_>) -> Option<ApiMode> {
    let key = if part.get("api_mode").is_some() {
        "api_mode"
    } else {
        "transport"
    };
    part.value(key, None, &"the URL's format", |value| {
        let word = value.as_str().map(str::trim);
        match API_MODES.iter().find(|(w, _)| Some(*w) == word) {
            Some((_, mode)) => Verdict::Use(Some(*mode)),
            None => Verdict::Bad(format!("is not one of {}", names(&API_MODES[..3]))),
        }
    })
}

/// `models`: a mapping `name → {context_length}` or a list of names or `{id|name, context_length}`.
fn read_models(node: Option<&Value>) -> Vec<(String, Option<u64>)> {
    let context = |v: &Value| v.get("context_length").and_then(Value::as_u64);
    match node {
        Some(Value::Mapping(models)) => models
            .iter()
            .filter_map(|(name, v)| Some((name.as_str()?.to_string(), context(v))))
            .collect(),
        Some(Value::Sequence(models)) => models
            .iter()
            .filter_map(|m| match m {
                Value::String(name) => Some((name.clone(), None)),
                Value::Mapping(_) => {
                    let name = m.get("id").or_else(|| m.get("name"))?.as_str()?;
                    Some((name.to_string(), context(m)))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `credential_pool_strategies`: provider → strategy word; an unknown word is a notice and
/// `fill_first`.
pub fn read_strategies(r: &mut Reader<'_>) -> Vec<(String, &'static str)> {
    let Some(node) = r.get("credential_pool_strategies") else {
        return Vec::new();
    };
    let Value::Mapping(entries) = node else {
        let why = "is not a mapping of provider → strategy";
        r.notice(
            "credential_pool_strategies",
            node,
            why,
            &"fill_first for every provider",
        );
        return Vec::new();
    };
    let mut out = Vec::new();
    for (provider, word) in entries {
        let Some(provider) = provider.as_str() else {
            continue;
        };
        let key = format!("credential_pool_strategies.{provider}");
        match STRATEGIES
            .iter()
            .find(|s| word.as_str().map(str::trim) == Some(**s))
        {
            Some(strategy) => out.push((provider.trim().to_ascii_lowercase(), *strategy)),
            None => r.notice(
                &key,
                word,
                &format!("is not one of {}", STRATEGIES.join(", ")),
                &"fill_first",
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str) -> (Vec<NamedEndpoint>, Vec<(String, &'static str)>, Vec<String>) {
        let tree: Value = serde_yaml::from_str(yaml).unwrap();
        let mut r = Reader::new(&tree);
        let named = read_named(&mut r);
        let strategies = read_strategies(&mut r);
        (named, strategies, r.into_notices())
    }

    #[test]
    fn providers_entries_and_the_older_list() {
        let (named, _, notices) = read(
            "providers:\n  My Box:\n    base_url: http://127.0.0.1:9/v1\n    key_env: BOX_KEY\n    default_model: qwen\n    models: {qwen: {context_length: 32768}}\n  off: {base_url: 'http://x/v1', enabled: false}\n\
             custom_providers:\n  - {name: my box, base_url: 'http://other/v1'}\n  - {name: lab, url: 'http://lab/v1', api_key: k, api_mode: anthropic_messages, models: [a, {id: b, context_length: 8}]}\n",
        );
        assert!(notices.is_empty(), "{notices:?}");
        assert_eq!(named.len(), 2);
        assert_eq!(named[0].name, "my-box");
        assert_eq!(named[0].base_url, "http://127.0.0.1:9/v1");
        assert_eq!(named[0].key_env, "BOX_KEY");
        assert_eq!(named[0].models, [("qwen".to_string(), Some(32768))]);
        assert_eq!(named[1].name, "lab");
        assert_eq!(named[1].api_mode, Some(ApiMode::AnthropicMessages));
        assert_eq!(named[1].models[1], ("b".to_string(), Some(8)));
        assert!(!format!("{:?}", named[1]).contains("\"k\""));
    }

    #[test]
    fn strategies_and_their_notices() {
        let (_, strategies, notices) = read(
            "credential_pool_strategies: {OpenRouter: round_robin, anthropic: sometimes}\nproviders: {bad: {key_env: X}}",
        );
        assert_eq!(strategies, [("openrouter".to_string(), "round_robin")]);
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(
            notices
                .iter()
                .any(|n| n.contains("credential_pool_strategies.anthropic"))
        );
        assert!(notices.iter().any(|n| n.contains("has no base_url")));
    }
}
