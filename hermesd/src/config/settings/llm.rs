//! The model chain as configured (Python Hermes' keys): the primary entry under `model.*`, the
//! `fallback_providers` tried after it, the timeouts and retries shared by every endpoint, and
//! the context-window override.

use std::time::Duration;

use super::{provider::ProviderEntry, read::Reader};

/// Timeouts and retry settings shared by all endpoints (`model.*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// `model.stale_timeout`: silence after which a call is abandoned.
    pub stale_timeout: Duration,
    /// `model.connect_timeout`.
    pub connect_timeout: Duration,
    /// `model.max_retries`: retries of 429/529/5xx on one provider.
    pub max_retries: u32,
    /// `model.retry_base_delay`: the first backoff.
    pub retry_base_delay: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Self {
            stale_timeout: Duration::from_secs(90),
            connect_timeout: Duration::from_secs(10),
            max_retries: 3,
            retry_base_delay: Duration::from_secs(1),
        }
    }
}

impl Timing {
    fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let mut seconds = |key: &str, default: Duration| {
            Duration::from_secs_f64(r.seconds(key, default.as_secs_f64()))
        };
        Self {
            stale_timeout: seconds("model.stale_timeout", d.stale_timeout),
            connect_timeout: seconds("model.connect_timeout", d.connect_timeout),
            retry_base_delay: seconds("model.retry_base_delay", d.retry_base_delay),
            max_retries: r.whole(
                "model.max_retries",
                d.max_retries.into(),
                0,
                u32::MAX.into(),
            ) as u32,
        }
    }
}

/// The configured chain.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmSection {
    /// `model.{default, provider, base_url, api_key, api_mode, text_tool_calls}`.
    pub primary: ProviderEntry,
    /// `fallback_providers: [{provider, model, base_url, api_key, api_mode, text_tool_calls}]`.
    pub fallbacks: Vec<ProviderEntry>,
    pub timing: Timing,
    /// `model.context_length`: the context window, overriding what the endpoint reports.
    pub context_length: Option<u64>,
    /// `model.supports_vision`: whether the main model takes images, overriding the shipped
    /// table (`llm::vision`).
    pub supports_vision: Option<bool>,
    /// `providers:` and `custom_providers:`: endpoints the user named.
    pub named: Vec<super::NamedEndpoint>,
    /// `credential_pool_strategies`: pool key → strategy word.
    pub pool_strategies: Vec<(String, &'static str)>,
    /// `prompt_caching.cache_ttl: 1h` (Anthropic's hour-long cache; `5m`, the default, is false).
    pub cache_ttl_1h: bool,
    /// The notices reading these keys gave (also in `Config::notices`): an edit of the model
    /// configuration through the Models service that leads to one is refused.
    pub problems: Vec<String>,
}

impl LlmSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let mut own = r.fork();
        let mut section = Self {
            primary: ProviderEntry::read_at(&mut own, "model", "default").unwrap_or_default(),
            fallbacks: ProviderEntry::read_list(&mut own, "fallback_providers"),
            timing: Timing::read(&mut own),
            context_length: own.whole_opt("model.context_length", "what the endpoint reports"),
            supports_vision: own.flag_opt("model.supports_vision", "the model's known capability"),
            named: super::named_endpoints::read_named(&mut own),
            pool_strategies: super::named_endpoints::read_strategies(&mut own),
            cache_ttl_1h: own.word(
                "prompt_caching.cache_ttl",
                "5m",
                &[("5m", "5m"), ("1h", "1h")],
            ) == "1h",
            problems: Vec::new(),
        };
        section.problems = own.notices().to_vec();
        r.absorb(own);
        section
    }

    /// The same chain with `model` as the primary's model (a cron job's own model); a blank
    /// `model` changes nothing.
    pub fn with_model(&self, model: &str) -> Self {
        self.for_job(model, "", "")
    }

    /// The chain a cron job runs on: its own `model`, and its own `provider` and `base_url`
    /// when it names them (Hermes' per-job pins). A provider other than the configured one
    /// starts from nothing configured (its key comes from its own variable; a `custom` one has
    /// none), so a job never carries the configured key to another server. Blank changes nothing.
    pub fn for_job(&self, model: &str, provider: &str, base_url: &str) -> Self {
        let mut chain = self.clone();
        let (model, provider, base_url) = (model.trim(), provider.trim(), base_url.trim());
        let other_provider =
            !provider.is_empty() && !provider.eq_ignore_ascii_case(&chain.primary.provider);
        let other_server = !base_url.is_empty()
            && base_url.trim_end_matches('/') != chain.primary.base_url.trim_end_matches('/');
        if other_provider || other_server {
            let provider = if provider.is_empty() {
                chain.primary.provider.clone()
            } else {
                provider.to_ascii_lowercase()
            };
            chain.primary = ProviderEntry {
                provider,
                model: chain.primary.model.clone(),
                base_url: base_url.to_string(),
                ..ProviderEntry::default()
            };
        }
        if !model.is_empty() {
            chain.primary.model = model.to_string();
        }
        chain
    }
}
