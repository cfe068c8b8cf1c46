//! The `web` toolset: `web_search` (SearXNG, Brave, Tavily, Exa or DuckDuckGo, as Hermes'
//! configuration picks) and `web_extract` (pages fetched by the daemon itself through the guarded
//! HTTP client and turned into Markdown). This file owns the tools' schemas and the shared
//! state: the `web` settings in force and the two HTTP clients, each built on first use.

mod convert;
mod ddg;
mod extract;
mod fetch;
mod large;
mod search;

use std::{
    sync::{Arc, Mutex, RwLock},
    time::Duration,
};

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Concurrency, Tool, ToolContext, ToolError};
use crate::{
    config::settings::WebSection, llm::HttpClient, policy::SecretMasker, policy::url::UrlPolicy,
};

pub use convert::{Page, to_markdown};

/// How long a connection to a search API or a page may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the web tools share across calls.
#[derive(Default)]
pub struct WebServices {
    settings: RwLock<Arc<WebSection>>,
    policy: RwLock<UrlPolicy>,
    /// For the search APIs the user configured (with the environment's proxies, like models).
    api: Mutex<Option<HttpClient>>,
    /// For URLs the model names: guarded by the policy it was built with.
    pages: Mutex<Option<(UrlPolicy, HttpClient)>>,
}

impl std::fmt::Debug for WebServices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebServices").finish_non_exhaustive()
    }
}

impl WebServices {
    /// Put the `web` section and `security.allow_private_urls` in force (start and reload).
    pub fn apply(&self, web: &WebSection, allow_private_urls: bool) {
        if let Ok(mut s) = self.settings.write() {
            *s = Arc::new(web.clone());
        }
        if let Ok(mut p) = self.policy.write() {
            *p = UrlPolicy::new(allow_private_urls);
        }
    }

    fn settings(&self) -> Arc<WebSection> {
        self.settings
            .read()
            .map(|s| Arc::clone(&s))
            .unwrap_or_default()
    }

    fn policy(&self) -> UrlPolicy {
        self.policy.read().map(|p| *p).unwrap_or_default()
    }

    /// The client for search APIs, built on first use (it reads the system's certificates).
    async fn api_client(&self) -> Result<HttpClient, ToolError> {
        if let Ok(slot) = self.api.lock()
            && let Some(client) = slot.as_ref()
        {
            return Ok(client.clone());
        }
        let client = build(None).await?;
        if let Ok(mut slot) = self.api.lock() {
            *slot = Some(client.clone());
        }
        Ok(client)
    }

    /// The guarded client for pages and the policy it enforces; rebuilt when the policy
    /// changed, so no pooled connection outlives the rule it was checked under.
    async fn page_client(&self) -> Result<(UrlPolicy, HttpClient), ToolError> {
        let policy = self.policy();
        if let Ok(slot) = self.pages.lock()
            && let Some((built_with, client)) = slot.as_ref()
            && *built_with == policy
        {
            return Ok((policy, client.clone()));
        }
        let client = build(Some(policy)).await?;
        if let Ok(mut slot) = self.pages.lock() {
            *slot = Some((policy, client.clone()));
        }
        Ok((policy, client))
    }
}

async fn build(guard: Option<UrlPolicy>) -> Result<HttpClient, ToolError> {
    tokio::task::spawn_blocking(move || match guard {
        Some(policy) => HttpClient::guarded(CONNECT_TIMEOUT, policy),
        None => HttpClient::new(CONNECT_TIMEOUT),
    })
    .await
    .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))?
    .map_err(|e| ToolError::Failed(format!("cannot set up the HTTP client: {e}")))
}

pub struct WebSearchTool;

#[async_trait]
impl Tool for WebSearchTool {
    fn name(&self) -> &'static str {
        "web_search"
    }

    fn toolset(&self) -> &'static str {
        "web"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "web_search",
            "description": "Search the web. Returns results with title, url and description; \
                operators such as site:, filetype: and \"phrases\" work where the backend has them.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string"},
                    "limit": {"type": "integer", "description": "Results (default 5, max 20).", "default": 5}
                },
                "required": ["query"]
            }
        })
    }

    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Safe
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let query = super::required_str(&args, "query")?.trim();
        if query.is_empty() {
            return Err(ToolError::Arguments("`query` is empty".into()));
        }
        let limit = args.get("limit").and_then(Value::as_u64).unwrap_or(5);
        let web = &ctx.services.web;
        let settings = web.settings();
        let client = web.api_client().await?;
        tokio::select! {
            result = search::search(&client, &settings, query, limit) => result,
            () = ctx.cancel.cancelled() => Err(ToolError::Interrupted),
        }
    }
}

pub struct WebExtractTool;

#[async_trait]
impl Tool for WebExtractTool {
    fn name(&self) -> &'static str {
        "web_extract"
    }

    fn toolset(&self) -> &'static str {
        "web"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "web_extract",
            "description": "Fetch web pages (or PDFs) and return their main content as Markdown. \
                Pages over char_limit (default 15000) come back as head and tail, with the file \
                holding the whole text for read_file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "urls": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
                    "char_limit": {"type": "integer", "minimum": 2000}
                },
                "required": ["urls"]
            }
        })
    }

    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Safe
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let masker = ctx.services.masker();
        let urls = extract::urls_of(&args)?
            .into_iter()
            .map(|url| url.and_then(|url| refuse_secrets_in(&url, &masker).map(|()| url)))
            .collect();
        let web = &ctx.services.web;
        let settings = web.settings();
        let char_limit = args
            .get("char_limit")
            .and_then(Value::as_u64)
            .map_or(settings.extract_char_limit, |n| {
                n.clamp(2_000, 500_000) as usize
            });
        let (policy, client) = web.page_client().await?;
        let job = extract::Job {
            client: &client,
            policy,
            char_limit,
            spill_dir: &ctx.settings.spill_dir,
            call_id: &ctx.call_id,
        };
        tokio::select! {
            result = job.run(urls) => Ok(result),
            () = ctx.cancel.cancelled() => Err(ToolError::Interrupted),
        }
    }
}

/// The one check of a URL the model asks a tool to fetch (`web_extract`, `browser_navigate`)
/// for a credential it carries: Hermes' rule (`policy::url::credential_in`) and any value of
/// the user's own secrets (the masker's), which a prompt-injected page may ask to be sent out.
pub fn refuse_secrets_in(url: &str, masker: &SecretMasker) -> Result<(), String> {
    if let Some(why) = crate::policy::url::credential_in(url) {
        return Err(why.to_string());
    }
    if masker.mask(url) != url {
        return Err(
            "Blocked: the URL contains what looks like a secret (a key, a token, a \
                    password or user info); secrets must not be sent in URLs"
                .into(),
        );
    }
    Ok(())
}

/// The bytes at `url` (an image for `vision_analyze`), fetched through the guarded client: the
/// URL and every redirect checked by the SSRF policy, at most `max_bytes`, within `limit`.
pub async fn fetch_bytes(
    services: &WebServices,
    url: &str,
    max_bytes: usize,
    limit: Duration,
) -> Result<bytes::Bytes, String> {
    let (policy, client) = services.page_client().await.map_err(|e| e.to_string())?;
    let fetched = tokio::time::timeout(limit, fetch::fetch(&client, policy, url))
        .await
        .map_err(|_| format!("{url}: no answer within {:.0} s", limit.as_secs_f64()))??;
    if fetched.truncated || fetched.body.len() > max_bytes {
        return Err(format!("{url}: larger than {max_bytes} bytes"));
    }
    Ok(fetched.body)
}
