//! The provider chain: the primary, then `fallback_providers` in order, each error class with its
//! one recovery. Built per turn, so every turn starts again at the primary.

use std::{sync::Arc, time::Duration};

use super::{
    endpoint::Endpoint,
    error::{ErrorClass, LlmError},
    provider,
    types::{ChatRequest, Completion, EventSink, StreamEvent},
};
use crate::auth::{Credentials, Lease};

/// How often and how long to wait before retrying the same provider.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// First backoff; doubles per retry, with ±50% jitter.
    pub base_delay: Duration,
}

impl RetryPolicy {
    fn backoff(&self, retry: u32) -> Duration {
        let factor = 2f64.powi(retry as i32) * (0.5 + fastrand::f64());
        self.base_delay.mul_f64(factor)
    }
}

/// Things worth telling the user while a call is being recovered.
#[derive(Debug, Clone, PartialEq)]
pub enum ChainNotice {
    Retrying {
        provider: String,
        wait: Duration,
        reason: String,
    },
    FallingBack {
        from: String,
        to: String,
        reason: String,
    },
}

/// Every configured endpoint in order, with the shared HTTP client and the credential pools.
#[derive(Debug, Clone)]
pub struct Chain {
    pub endpoints: Vec<Endpoint>,
    pub policy: RetryPolicy,
    pub client: super::HttpClient,
    pub credentials: Option<Arc<Credentials>>,
}

impl Chain {
    /// Run `request` through the chain. Stream events go to `sink` (a `Reset` precedes any
    /// retry after output was streamed); recoveries are reported to `notice`.
    pub async fn complete(
        &self,
        request: &ChatRequest,
        sink: &mut EventSink<'_>,
        notice: &mut (dyn FnMut(ChainNotice) + Send),
    ) -> Result<Completion, LlmError> {
        let mut last: Option<LlmError> = None;
        for (position, endpoint) in self.endpoints.iter().enumerate() {
            if let Some(previous) = &last {
                notice(ChainNotice::FallingBack {
                    from: previous.provider.clone(),
                    to: endpoint.label(),
                    reason: previous.message.clone(),
                });
            }
            match self.with_retries(endpoint, request, sink, notice).await {
                Ok(completion) => return Ok(completion),
                Err(e)
                    if matches!(
                        e.class,
                        ErrorClass::Auth
                            | ErrorClass::Billing
                            | ErrorClass::Timeout
                            | ErrorClass::RateLimit
                            | ErrorClass::Server
                            | ErrorClass::StreamCut
                    ) && position + 1 < self.endpoints.len() =>
                {
                    tracing::warn!(provider = %e.provider, class = e.class.as_str(), error = %e.message, "provider failed; falling back");
                    last = Some(e);
                }
                Err(e) => {
                    let tried = position + 1;
                    return Err(
                        if tried > 1
                            && !e.class.needs_compression()
                            && e.class != ErrorClass::BadRequest
                        {
                            LlmError {
                                message: format!(
                                    "all {tried} providers failed; the last said: {}",
                                    e.message
                                ),
                                ..e
                            }
                        } else {
                            e
                        },
                    );
                }
            }
        }
        Err(last.unwrap_or_else(|| {
            LlmError::new(
                ErrorClass::BadRequest,
                "none",
                "no model endpoint is configured",
            )
        }))
    }

    /// The credential of `endpoint`'s pool to use next, none of `tried`.
    fn lease(&self, endpoint: &Endpoint, tried: &[String]) -> Option<(String, Lease)> {
        let pool = endpoint.pool.as_ref()?;
        let lease = self.credentials.as_ref()?.choose(pool, tried)?;
        Some((pool.clone(), lease))
    }

    /// One endpoint with its retries: rate limits and server errors back off and retry; a stream
    /// cut is retried once without streaming; a credential the provider refuses (401/403, 402, a
    /// used-up quota, a second 429 in a row) is parked and the next one of the pool is tried at
    /// once; everything else returns at once.
    async fn with_retries(
        &self,
        endpoint: &Endpoint,
        request: &ChatRequest,
        sink: &mut EventSink<'_>,
        notice: &mut (dyn FnMut(ChainNotice) + Send),
    ) -> Result<Completion, LlmError> {
        let mut retries = 0;
        let mut stream = true;
        let mut tried: Vec<String> = Vec::new();
        let mut rate_limited: Option<String> = None;
        // The credential already chosen for the next attempt (after a refusal).
        let mut chosen: Option<(String, Lease)> = None;
        loop {
            let lease = chosen.take().or_else(|| self.lease(endpoint, &tried));
            let provider = match &lease {
                Some((_, lease)) => provider::for_endpoint(&Endpoint {
                    api_key: Some(lease.secret.expose().to_string()),
                    ..endpoint.clone()
                }),
                None => provider::for_endpoint(endpoint),
            };
            let mut streamed = false;
            let result = {
                let mut counting = |event: StreamEvent| {
                    streamed = true;
                    sink(event);
                };
                let mut counting_sink: EventSink<'_> = &mut counting;
                provider
                    .call(&self.client, request, stream, &mut counting_sink)
                    .await
            };
            let error = match result {
                Ok(completion) => return Ok(completion),
                Err(error) => error,
            };
            if streamed {
                sink(StreamEvent::Reset);
            }
            if let Some((pool, lease)) = &lease {
                let again = error.class == ErrorClass::RateLimit
                    && rate_limited.as_deref() == Some(lease.id.as_str());
                if matches!(error.class, ErrorClass::Auth | ErrorClass::Billing) || again {
                    self.park(pool, lease, &error);
                    tried.push(lease.id.clone());
                    rate_limited = None;
                    chosen = self.lease(endpoint, &tried);
                    if chosen.is_some() {
                        continue;
                    }
                    return Err(error);
                }
                rate_limited = (error.class == ErrorClass::RateLimit).then(|| lease.id.clone());
            }
            match error.class {
                ErrorClass::StreamCut if stream => {
                    tracing::warn!(provider = %error.provider, error = %error.message, "stream cut; retrying without streaming");
                    stream = false;
                }
                ErrorClass::RateLimit | ErrorClass::Server if retries < self.policy.max_retries => {
                    let wait = error
                        .retry_after
                        .unwrap_or_else(|| self.policy.backoff(retries));
                    retries += 1;
                    notice(ChainNotice::Retrying {
                        provider: error.provider.clone(),
                        wait,
                        reason: error.message.clone(),
                    });
                    tracing::warn!(provider = %error.provider, wait_ms = wait.as_millis() as u64, error = %error.message, "retrying");
                    tokio::time::sleep(wait).await;
                }
                _ => return Err(error),
            }
        }
    }

    /// Park the credential `error` refused: at once in memory, so the next attempt skips it;
    /// the store is written off the async threads while the request goes on.
    fn park(&self, pool: &str, lease: &Lease, error: &LlmError) {
        let Some(credentials) = self.credentials.clone() else {
            return;
        };
        tracing::warn!(pool, credential = %lease.label, class = error.class.as_str(), error = %error.message, "credential refused; trying the next one");
        credentials.park(
            pool,
            &lease.id,
            error.status,
            &error.message,
            error.retry_after,
        );
        tokio::task::spawn_blocking(move || {
            if let Err(e) = credentials.persist() {
                tracing::warn!(error = %e, "cannot record a parked credential");
            }
        });
    }
}
