//! A model's context window: the configured override, else what the endpoint itself says
//! (`/v1/models` `context_length` or vLLM's `max_model_len`, Ollama's `/api/show`), else the shipped
//! catalog, else a safe floor. Answers are cached per base URL and model.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use serde_json::Value;

use super::{
    catalog,
    endpoint::{ApiMode, Endpoint},
};

const METADATA_TIMEOUT: Duration = Duration::from_secs(5);

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

/// Context lengths learned so far, per (base URL, model).
#[derive(Debug, Default)]
pub struct MetadataCache {
    known: Mutex<HashMap<(String, String), (u64, ContextSource)>>,
}

impl MetadataCache {
    /// The context window of `endpoint`'s model.
    pub async fn context_length(
        &self,
        client: &super::HttpClient,
        endpoint: &Endpoint,
        override_tokens: Option<u64>,
    ) -> (u64, ContextSource) {
        if let Some(tokens) = override_tokens.filter(|t| *t > 0) {
            return (tokens, ContextSource::Override);
        }
        let key = (endpoint.base_url.clone(), endpoint.model.clone());
        if let Some(found) = self.known.lock().ok().and_then(|k| k.get(&key).copied()) {
            return found;
        }
        let found = match from_endpoint(client, endpoint).await {
            Some(tokens) => (tokens, ContextSource::Endpoint),
            None => match catalog::context_length(&endpoint.model) {
                Some(tokens) => (tokens, ContextSource::Catalog),
                None => (catalog::CONTEXT_FLOOR, ContextSource::Floor),
            },
        };
        if let Ok(mut known) = self.known.lock() {
            known.insert(key, found);
        }
        found
    }
}

impl MetadataCache {
    /// Remember a context length the provider stated (in an overflow error) for `endpoint`.
    pub fn learn(&self, endpoint: &Endpoint, tokens: u64) {
        if let Ok(mut known) = self.known.lock() {
            known.insert(
                (endpoint.base_url.clone(), endpoint.model.clone()),
                (tokens, ContextSource::Learned),
            );
        }
    }
}

async fn get_json(request: super::transport::RequestBuilder) -> Option<Value> {
    let response = tokio::time::timeout(METADATA_TIMEOUT, request.send())
        .await
        .ok()?
        .ok()?;
    if !response.status().is_success() {
        return None;
    }
    tokio::time::timeout(METADATA_TIMEOUT, response.json())
        .await
        .ok()?
        .ok()
}

async fn from_endpoint(client: &super::HttpClient, endpoint: &Endpoint) -> Option<u64> {
    if endpoint.api_mode != ApiMode::ChatCompletions {
        return None;
    }
    let base = endpoint.base_url.trim_end_matches('/');
    let mut request = client.get(format!("{base}/models"));
    if let Some(key) = &endpoint.api_key {
        request = request.bearer_auth(key);
    }
    if let Some(listing) = get_json(request).await {
        let entry = listing
            .get("data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|m| m.get("id").and_then(Value::as_str) == Some(endpoint.model.as_str()));
        let tokens = entry.and_then(|m| {
            [
                "/context_length",
                "/max_model_len",
                "/top_provider/context_length",
            ]
            .iter()
            .find_map(|p| m.pointer(p).and_then(Value::as_u64))
        });
        if tokens.is_some() {
            return tokens;
        }
    }
    // Ollama keeps it in /api/show under "<architecture>.context_length".
    let root = base.strip_suffix("/v1").unwrap_or(base);
    let show = get_json(
        client
            .post(format!("{root}/api/show"))
            .json(&serde_json::json!({"model": endpoint.model})),
    )
    .await?;
    show.get("model_info")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_u64())
}
