//! The `Models` service: the configured chain, each model's context window and prices, and a
//! one-token test call; setting the default model and the fallbacks edits config.yaml and reloads.

use std::{sync::Arc, time::Instant};

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use crate::{
    config::edit,
    llm::{self, ChatMessage, ChatRequest, Endpoint, StreamEvent},
    state::DaemonState,
};

#[derive(Debug)]
pub struct ModelsService {
    pub state: Arc<DaemonState>,
}

/// The config keys of a model reference (as under `model:`; `default` is the model name).
fn model_fields(wanted: &pb::ModelRef) -> Result<Vec<(&'static str, serde_yaml::Value)>, Status> {
    let text = |s: &str| serde_yaml::Value::String(s.trim().to_string());
    let model = wanted.model.trim();
    if model.is_empty() {
        return Err(Status::invalid_argument(
            "a model name is required, e.g. provider openrouter, model anthropic/claude-sonnet-4",
        ));
    }
    let mut fields = vec![("default", text(model))];
    if !wanted.provider.trim().is_empty() {
        fields.push(("provider", text(&wanted.provider.trim().to_lowercase())));
    }
    if !wanted.base_url.trim().is_empty() {
        fields.push(("base_url", text(&wanted.base_url)));
    }
    let var = wanted.api_key_env.trim();
    if !var.is_empty() {
        if !var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(Status::invalid_argument(format!(
                "api_key_env `{var}` is not an environment variable name"
            )));
        }
        fields.push(("api_key", text(&format!("${{{var}}}"))));
    }
    if !wanted.api_mode.trim().is_empty() {
        fields.push(("api_mode", text(&wanted.api_mode)));
    }
    Ok(fields)
}

fn api_mode_word(mode: llm::ApiMode) -> &'static str {
    match mode {
        llm::ApiMode::ChatCompletions => "chat_completions",
        llm::ApiMode::AnthropicMessages => "anthropic_messages",
        llm::ApiMode::CodexResponses => "codex_responses",
    }
}

fn model_ref(endpoint: &Endpoint) -> pb::ModelRef {
    pb::ModelRef {
        provider: endpoint.provider.clone(),
        model: endpoint.model.clone(),
        base_url: endpoint.base_url.clone(),
        api_key_env: endpoint
            .api_key
            .as_ref()
            .and_then(|_| llm::key_env(&endpoint.provider))
            .unwrap_or_default()
            .to_string(),
        api_mode: api_mode_word(endpoint.api_mode).into(),
    }
}

impl ModelsService {
    /// The primary model of the configured chain, with its context window and prices.
    async fn primary_info(&self) -> Result<pb::ModelInfo, Status> {
        let chain = self.chain().await?;
        let primary = chain
            .endpoints
            .first()
            .ok_or_else(|| Status::failed_precondition(llm::HOW_TO_CONFIGURE))?;
        Ok(self.info(&chain, primary).await)
    }

    /// Write `edits` to config.yaml and reload; a result the daemon cannot use (bad config, a
    /// model chain with a bad value or that does not resolve) is undone and reported.
    async fn edit_config(&self, edits: Vec<(String, serde_yaml::Value)>) -> Result<(), Status> {
        let path = self.state.home.config_file();
        let applied = tokio::task::spawn_blocking(move || {
            let edits: Vec<(&str, serde_yaml::Value)> =
                edits.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
            edit::apply(&path, &edits)
        })
        .await
        .map_err(|e| Status::internal(format!("the config edit failed: {e}")))?
        .map_err(|e| match e {
            edit::EditFailure::Edit { .. } => Status::failed_precondition(e.to_string()),
            edit::EditFailure::Io { .. } => Status::internal(e.to_string()),
        })?;
        let problem = match self.state.reload() {
            Err(e) => Some(e.to_string()),
            Ok(_) => {
                let config = self.state.config();
                let models = &config.settings.llm;
                models.problems.first().cloned().or_else(|| {
                    llm::endpoints(models, &config.env)
                        .err()
                        .map(|e| e.to_string())
                })
            }
        };
        if let Some(problem) = problem {
            let undone = tokio::task::spawn_blocking(move || edit::undo(&applied)).await;
            if !matches!(undone, Ok(Ok(()))) {
                tracing::error!("cannot restore config.yaml after a rejected edit");
            }
            let _ = self.state.reload();
            return Err(Status::invalid_argument(format!(
                "the change was not kept: {problem}"
            )));
        }
        tracing::info!("model configuration changed through the Models service");
        Ok(())
    }

    async fn chain(&self) -> Result<llm::Chain, Status> {
        let config = self.state.config();
        let client = self
            .state
            .runner
            .http_client()
            .await
            .map_err(Status::internal)?;
        llm::chain_from_config(
            &config.settings.llm,
            &config.env,
            client,
            &self.state.runner.credentials,
        )
        .await
        .map_err(|e| Status::failed_precondition(e.to_string()))
    }

    async fn info(&self, chain: &llm::Chain, endpoint: &Endpoint) -> pb::ModelInfo {
        let config = self.state.config();
        let (context, source) = self
            .state
            .runner
            .model_metadata
            .context_length(&chain.client, endpoint, config.settings.llm.context_length)
            .await;
        let prices = llm::prices(&endpoint.provider, &endpoint.model);
        pb::ModelInfo {
            r#ref: Some(model_ref(endpoint)),
            context_length: context,
            context_source: source.as_str().into(),
            input_price_per_mtok: prices.map(|p| p.input),
            output_price_per_mtok: prices.map(|p| p.output),
        }
    }
}

#[tonic::async_trait]
impl pb::models_server::Models for ModelsService {
    async fn list(
        &self,
        _request: Request<pb::ListModelsRequest>,
    ) -> Result<Response<pb::ListModelsResponse>, Status> {
        let chain = self.chain().await?;
        let mut models = Vec::with_capacity(chain.endpoints.len());
        for endpoint in &chain.endpoints {
            models.push(self.info(&chain, endpoint).await);
        }
        Ok(Response::new(pb::ListModelsResponse { models }))
    }

    async fn get_default(
        &self,
        _request: Request<pb::GetDefaultModelRequest>,
    ) -> Result<Response<pb::GetDefaultModelResponse>, Status> {
        Ok(Response::new(pb::GetDefaultModelResponse {
            model: Some(self.primary_info().await?),
        }))
    }

    async fn set_default(
        &self,
        request: Request<pb::SetDefaultModelRequest>,
    ) -> Result<Response<pb::SetDefaultModelResponse>, Status> {
        let wanted = request.into_inner().r#ref.unwrap_or_default();
        let fields = model_fields(&wanted)?;
        let edits: Vec<(String, serde_yaml::Value)> = fields
            .into_iter()
            .map(|(key, value)| (format!("model.{key}"), value))
            .collect();
        self.edit_config(edits).await?;
        Ok(Response::new(pb::SetDefaultModelResponse {
            model: Some(self.primary_info().await?),
        }))
    }

    async fn get_fallbacks(
        &self,
        _request: Request<pb::GetFallbacksRequest>,
    ) -> Result<Response<pb::GetFallbacksResponse>, Status> {
        let chain = self.chain().await?;
        Ok(Response::new(pb::GetFallbacksResponse {
            fallbacks: chain.endpoints.iter().skip(1).map(model_ref).collect(),
        }))
    }

    async fn set_fallbacks(
        &self,
        request: Request<pb::SetFallbacksRequest>,
    ) -> Result<Response<pb::SetFallbacksResponse>, Status> {
        let mut entries = Vec::new();
        for wanted in &request.into_inner().fallbacks {
            let mut entry = serde_yaml::Mapping::new();
            for (key, value) in model_fields(wanted)? {
                let key = if key == "default" { "model" } else { key };
                entry.insert(key.into(), value);
            }
            entries.push(serde_yaml::Value::Mapping(entry));
        }
        self.edit_config(vec![(
            "fallback_providers".into(),
            serde_yaml::Value::Sequence(entries),
        )])
        .await?;
        let chain = self.chain().await?;
        Ok(Response::new(pb::SetFallbacksResponse {
            fallbacks: chain.endpoints.iter().skip(1).map(model_ref).collect(),
        }))
    }

    async fn test(
        &self,
        request: Request<pb::TestModelRequest>,
    ) -> Result<Response<pb::TestModelResponse>, Status> {
        let wanted = request.into_inner().r#ref.unwrap_or_default();
        let chain = self.chain().await?;
        let endpoint = chain
            .endpoints
            .iter()
            .find(|e| {
                (wanted.provider.is_empty() || e.provider == wanted.provider)
                    && (wanted.model.is_empty() || e.model == wanted.model)
            })
            .ok_or_else(|| {
                Status::not_found(format!(
                    "no configured model {}:{} (see `hermesctl model list`)",
                    wanted.provider, wanted.model
                ))
            })?;
        let request = ChatRequest {
            system: String::new(),
            messages: vec![ChatMessage::user("Reply with the word: ok")],
            tools: Vec::new(),
            max_tokens: Some(1),
            reasoning_effort: None,
            cache_ttl: None,
        };
        let provider = llm::for_endpoint(endpoint);
        let mut ignore = |_: StreamEvent| {};
        let mut sink: llm::EventSink<'_> = &mut ignore;
        let started = Instant::now();
        let result = provider
            .call(&chain.client, &request, true, &mut sink)
            .await;
        let latency_ms = started.elapsed().as_millis() as u64;
        Ok(Response::new(match result {
            Ok(_) => pb::TestModelResponse {
                ok: true,
                latency_ms,
                error: String::new(),
                error_class: String::new(),
            },
            Err(e) => pb::TestModelResponse {
                ok: false,
                latency_ms,
                error: e.to_string(),
                error_class: e.class.as_str().into(),
            },
        }))
    }
}
