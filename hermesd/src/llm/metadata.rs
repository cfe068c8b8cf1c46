//! What an endpoint says about its model, asked once and cached per base URL and model: the
//! context window (`/v1/models` `context_length` or vLLM's `max_model_len`, Ollama's
//! `/api/show`) and whether it takes images (OpenRouter's `architecture.input_modalities`,
//! Ollama's `capabilities`). Each answer falls back the same way: the user's setting first, then
//! the endpoint, then the shipped table, then a safe default.

use std::{
    collections::HashMap,
    sync::Mutex,
    time::{Duration, Instant},
};

use serde_json::Value;

use super::{
    catalog,
    endpoint::{ApiMode, Endpoint},
};

const METADATA_TIMEOUT: Duration = Duration::from_secs(5);
/// Models remembered at once; past this the cache starts again (a daemon sees a handful).
const MAX_MODELS: usize = 64;
/// How long an endpoint that did not answer at all is left alone before it is asked again.
const RETRY_UNANSWERED: Duration = Duration::from_secs(60);

/// Where a context length came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextSource {
    Override,
    Endpoint,
    Catalog,
    Floor,
    /// Stated by the provider in an overflow error.
    Learned,
}

impl ContextSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Override => "override",
            Self::Endpoint => "endpoint",
            Self::Catalog => "table",
            Self::Floor => "floor",
            Self::Learned => "provider error",
        }
    }
}

/// What the endpoint said about one model.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Facts {
    context: Option<u64>,
    vision: Option<bool>,
    /// Whether any metadata request got a lasting answer (a success, or 404/405 for a route the
    /// server lacks); else the facts are asked again after [`RETRY_UNANSWERED`].
    answered: bool,
}

#[derive(Debug, Clone, Copy)]
struct Known {
    /// `None` until the endpoint has been asked.
    facts: Option<Facts>,
    asked: Instant,
    /// A context length the provider stated in an overflow error, above all but the setting.
    learned: Option<u64>,
}

/// Model facts learned so far, per (base URL, model).
#[derive(Debug, Default)]
pub struct MetadataCache {
    known: Mutex<HashMap<(String, String), Known>>,
}

fn key(endpoint: &Endpoint) -> (String, String) {
    (endpoint.base_url.clone(), endpoint.model.clone())
}

impl MetadataCache {
    /// The context window of `endpoint`'s model.
    pub async fn context_length(
        &self,
        client: &super::HttpClient,
        endpoint: &Endpoint,
        override_tokens: Option<u64>,
    ) -> (u64, ContextSource) {
        let written = override_tokens.or(endpoint.context_length);
        if let Some(tokens) = written.filter(|t| *t > 0) {
            return (tokens, ContextSource::Override);
        }
        let known = self.known(client, endpoint).await;
        if let Some(tokens) = known.learned {
            return (tokens, ContextSource::Learned);
        }
        match known.facts.and_then(|f| f.context) {
            Some(tokens) => (tokens, ContextSource::Endpoint),
            None => match catalog::context_length(&endpoint.model) {
                Some(tokens) => (tokens, ContextSource::Catalog),
                None => (catalog::CONTEXT_FLOOR, ContextSource::Floor),
            },
        }
    }

    /// Whether `endpoint`'s model takes images: `setting` (`model.supports_vision`) when given,
    /// else what the endpoint says, else the shipped table ([`super::vision`]).
    pub async fn supports_vision(
        &self,
        client: &super::HttpClient,
        endpoint: &Endpoint,
        setting: Option<bool>,
    ) -> bool {
        let facts = match setting {
            Some(_) => None,
            None => self.known(client, endpoint).await.facts,
        };
        vision_answer(setting, facts, endpoint)
    }

    /// As [`Self::supports_vision`], from what is already known: the endpoint is not asked, so
    /// a turn that carries no image of the user's never waits for it.
    pub fn supports_vision_known(&self, endpoint: &Endpoint, setting: Option<bool>) -> bool {
        let known = self
            .known
            .lock()
            .ok()
            .and_then(|k| k.get(&key(endpoint)).copied());
        vision_answer(setting, known.and_then(|k| k.facts), endpoint)
    }

    /// Remember a context length the provider stated (in an overflow error) for `endpoint`.
    pub fn learn(&self, endpoint: &Endpoint, tokens: u64) {
        if let Ok(mut known) = self.known.lock() {
            let entry = known.entry(key(endpoint)).or_insert(Known {
                facts: None,
                asked: Instant::now(),
                learned: None,
            });
            entry.learned = Some(tokens);
        }
    }

    /// The cached facts of `endpoint`'s model, asking the endpoint when there are none (or
    /// when it did not answer a while ago).
    async fn known(&self, client: &super::HttpClient, endpoint: &Endpoint) -> Known {
        let key = key(endpoint);
        let cached = self.known.lock().ok().and_then(|k| k.get(&key).copied());
        if let Some(known) = cached
            && let Some(facts) = known.facts
            && (facts.answered || known.asked.elapsed() < RETRY_UNANSWERED)
        {
            return known;
        }
        let facts = from_endpoint(client, endpoint).await;
        let known = Known {
            facts: Some(facts),
            asked: Instant::now(),
            learned: cached.and_then(|c| c.learned),
        };
        if let Ok(mut map) = self.known.lock() {
            if map.len() >= MAX_MODELS && !map.contains_key(&key) {
                map.clear();
            }
            map.insert(key, known);
        }
        known
    }
}

/// The setting, else the endpoint's facts, else the shipped table.
fn vision_answer(setting: Option<bool>, facts: Option<Facts>, endpoint: &Endpoint) -> bool {
    setting
        .or_else(|| facts.and_then(|f| f.vision))
        .unwrap_or_else(|| super::vision::supports_vision(&endpoint.model, None))
}

async fn get_json(request: super::transport::RequestBuilder, answered: &mut bool) -> Option<Value> {
    let response = tokio::time::timeout(METADATA_TIMEOUT, request.send())
        .await
        .ok()?
        .ok()?;
    // A success, or a route the server does not have, is an answer to keep; a refused key, a
    // rate limit or a server error is asked again later.
    let status = response.status();
    *answered |= status.is_success() || matches!(status.as_u16(), 404 | 405);
    if !status.is_success() {
        return None;
    }
    tokio::time::timeout(METADATA_TIMEOUT, response.json())
        .await
        .ok()?
        .ok()
}

async fn from_endpoint(client: &super::HttpClient, endpoint: &Endpoint) -> Facts {
    let mut facts = Facts::default();
    if endpoint.api_mode != ApiMode::ChatCompletions {
        facts.answered = true;
        return facts;
    }
    let base = endpoint.base_url.trim_end_matches('/');
    let mut request = client.get(format!("{base}/models"));
    if let Some(key) = &endpoint.api_key {
        request = request.bearer_auth(key);
    }
    if let Some(listing) = get_json(request, &mut facts.answered).await {
        let entry = listing
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(endpoint.model.as_str()));
        if let Some(entry) = entry {
            facts.context = listing_context(entry);
            facts.vision = listing_vision(entry);
        }
    }
    if facts.context.is_some() && facts.vision.is_some() {
        return facts;
    }
    // Ollama says more in /api/show.
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let show = get_json(
        client
            .post(format!("{root}/api/show"))
            .json(&serde_json::json!({"model": endpoint.model})),
        &mut facts.answered,
    )
    .await;
    if let Some(show) = show {
        facts.context = facts.context.or_else(|| show_context(&show));
        facts.vision = facts.vision.or_else(|| show_vision(&show));
    }
    facts
}

/// A `/v1/models` entry's context window (OpenRouter, LM Studio, vLLM).
fn listing_context(entry: &Value) -> Option<u64> {
    [
        "/context_length",
        "/max_model_len",
        "/top_provider/context_length",
    ]
    .iter()
    .find_map(|p| entry.pointer(p).and_then(Value::as_u64))
}

/// Whether a `/v1/models` entry takes images: OpenRouter's `architecture.input_modalities`
/// (or the older `architecture.modality`, `text+image->text`).
fn listing_vision(entry: &Value) -> Option<bool> {
    if let Some(inputs) = entry
        .pointer("/architecture/input_modalities")
        .and_then(Value::as_array)
    {
        return Some(inputs.iter().any(|m| m.as_str() == Some("image")));
    }
    let modality = entry.pointer("/architecture/modality")?.as_str()?;
    let inputs = modality.split("->").next().unwrap_or_default();
    Some(inputs.split('+').any(|m| m.trim() == "image"))
}

/// Ollama's `/api/show` context window: `model_info["<architecture>.context_length"]`.
fn show_context(show: &Value) -> Option<u64> {
    show.get("model_info")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}

/// Whether Ollama's `/api/show` says the model sees: `capabilities` (Ollama 0.6+) names
/// `vision`, or, on older servers, `model_info` has a vision tower.
fn show_vision(show: &Value) -> Option<bool> {
    if let Some(capabilities) = show.get("capabilities").and_then(Value::as_array)
        && !capabilities.is_empty()
    {
        return Some(
            capabilities
                .iter()
                .any(|c| c.as_str().is_some_and(|c| c.eq_ignore_ascii_case("vision"))),
        );
    }
    let info = show.get("model_info")?.as_object()?;
    info.keys()
        .any(|k| k.ends_with("vision.block_count"))
        .then_some(true)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_listing_says_whether_a_model_sees() {
        let sees = json!({"architecture": {"input_modalities": ["text", "image"]}});
        let blind = json!({"architecture": {"input_modalities": ["text"]}});
        let old = json!({"architecture": {"modality": "text+image->text"}});
        let old_blind = json!({"architecture": {"modality": "text->text"}});
        assert_eq!(listing_vision(&sees), Some(true));
        assert_eq!(listing_vision(&blind), Some(false));
        assert_eq!(listing_vision(&old), Some(true));
        assert_eq!(listing_vision(&old_blind), Some(false));
        assert_eq!(listing_vision(&json!({"id": "m"})), None);
    }

    #[test]
    fn ollama_says_whether_a_model_sees() {
        let sees = json!({"capabilities": ["completion", "vision"]});
        let blind = json!({"capabilities": ["completion", "tools"]});
        let old = json!({"model_info": {"mllama.vision.block_count": 32}});
        assert_eq!(show_vision(&sees), Some(true));
        assert_eq!(show_vision(&blind), Some(false));
        assert_eq!(show_vision(&old), Some(true));
        assert_eq!(show_vision(&json!({"model_info": {}})), None);
    }
}
