//! With no model configured, a local OpenAI-compatible server on its usual port is found and used:
//! Ollama (11434), llama.cpp (8080), LM Studio (1234).

use std::time::Duration;

use serde_json::Value;

use super::endpoint::{ApiMode, Endpoint};
use crate::config::settings::Timing;

const LOCAL_SERVERS: &[(&str, u16)] = &[("ollama", 11434), ("llamacpp", 8080), ("lmstudio", 1234)];
const PROBE_TIMEOUT: Duration = Duration::from_millis(500);

/// The first local server that answers `/v1/models` with at least one model, as an endpoint for
/// its first model.
pub async fn local_server(client: &super::HttpClient, timing: &Timing) -> Option<Endpoint> {
    for (provider, port) in LOCAL_SERVERS {
        let base_url = format!("http://127.0.0.1:{port}/v1");
        let request = client.get(format!("{base_url}/models"));
        let probe = async { request.send().await.ok()?.json::<Value>().await.ok() };
        let Ok(Some(listing)) = tokio::time::timeout(PROBE_TIMEOUT, probe).await else {
            continue;
        };
        let model = listing
            .pointer("/data/0/id")
            .and_then(Value::as_str)
            .or_else(|| listing.pointer("/models/0/name").and_then(Value::as_str));
        if let Some(model) = model {
            tracing::info!(
                provider,
                port,
                model,
                "no model configured; using the local server found"
            );
            return Some(Endpoint {
                provider: (*provider).to_string(),
                model: model.to_string(),
                base_url,
                api_key: None,
                api_mode: ApiMode::ChatCompletions,
                stale_timeout: timing.stale_timeout,
                connect_timeout: timing.connect_timeout,
                text_tool_calls: true,
                pool: None,
                context_length: None,
            });
        }
    }
    None
}
