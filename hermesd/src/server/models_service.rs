//! The `Models` service: the configured chain, each model's context window and prices, and a
//! one-token test call. The configuration itself is edited in config.yaml (`hermesctl model set`).

use std::{sync::Arc, time::Instant};

use hermes_proto::pb;
use tonic::{Request, Response, Status};

use super::convert::not_built;
use crate::{
    llm::{self, ChatMessage, ChatRequest, Endpoint, StreamEvent},
    state::DaemonState,
};

#[derive(Debug)]
pub struct ModelsService {
    pub state: Arc<DaemonState>,
}

fn api_mode_word(mode: llm::ApiMode) -> &'static str {
    match mode {
        llm::ApiMode::ChatCompletions => "chat_completions",
        llm::ApiMode::AnthropicMessages => "anthropic_messages",
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
    async fn chain(&self) -> Result<llm::Chain, Status> {
        let config = self.state.config();
        let client = self.state.http_client().await.map_err(Status::internal)?;
        llm::chain_from_config(&config.tree, &config.env, client)
            .await
            .map_err(|e| Status::failed_precondition(e.to_string()))
    }

    async fn info(&self, chain: &llm::Chain, endpoint: &Endpoint) -> pb::ModelInfo {
        let config = self.state.config();
        let (context, source) = self
            .state
            .model_metadata
            .context_length(&chain.client, endpoint, llm::context_override(&config.tree))
            .await;
        let prices = llm::prices(&endpoint.provider, &endpoint.model);
        pb::ModelInfo {
            r#ref: Some(model_ref(endpoint)),
            context_length: context,
            context_source: source.as_str().into(),
            input_price_per_mtok: prices.map(|p| p.0),
            output_price_per_mtok: prices.map(|p| p.1),
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
        let chain = self.chain().await?;
        let primary = chain
            .endpoints
            .first()
            .ok_or_else(|| Status::failed_precondition(llm::HOW_TO_CONFIGURE))?;
        let model = self.info(&chain, primary).await;
        Ok(Response::new(pb::GetDefaultModelResponse {
            model: Some(model),
        }))
    }

    async fn set_default(
        &self,
        _request: Request<pb::SetDefaultModelRequest>,
    ) -> Result<Response<pb::SetDefaultModelResponse>, Status> {
        Err(not_built(
            "Models.SetDefault",
            "the model is set in config.yaml; `hermesctl model set PROVIDER:MODEL` edits it and reloads",
        ))
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
        _request: Request<pb::SetFallbacksRequest>,
    ) -> Result<Response<pb::SetFallbacksResponse>, Status> {
        Err(not_built(
            "Models.SetFallbacks",
            "fallbacks are set in config.yaml under fallback_providers (`hermesctl config path`)",
        ))
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
