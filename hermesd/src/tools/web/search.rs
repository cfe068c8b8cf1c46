//! `web_search`'s backends: each turns a query into at most `limit` results of title, URL and
//! description, in Hermes' result shape (`{"success": true, "data": {"web": [...]}}`). Answers
//! are read up to a bound, fields are cut to a bound, and a failure names the backend and, when
//! it is a missing key or address, the setting to fix.

use serde_json::{Value, json};

use super::ddg;
use crate::{
    config::settings::{SearchBackend, WebSection},
    llm::{HttpClient, HttpResponse},
    tools::ToolError,
};

/// The most results one search returns.
pub const MAX_RESULTS: u64 = 20;
/// The largest answer read from a search API.
const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// Characters kept of a title, a URL and a description.
const TITLE_CHARS: usize = 300;
const URL_CHARS: usize = 2_000;
const DESCRIPTION_CHARS: usize = 600;
/// How long a search may take once connected.
const SEARCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// One result, as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub description: String,
}

fn cut(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

impl Hit {
    pub fn new(title: &str, url: &str, description: &str) -> Self {
        Self {
            title: cut(title, TITLE_CHARS),
            url: cut(url, URL_CHARS),
            description: cut(description, DESCRIPTION_CHARS),
        }
    }
}

/// Percent-encoding of a query-string value.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Search `query` with the configured backend.
pub async fn search(
    client: &HttpClient,
    settings: &WebSection,
    query: &str,
    limit: u64,
) -> Result<Value, ToolError> {
    let backend = settings.search_backend().map_err(ToolError::Failed)?;
    let limit = limit.clamp(1, MAX_RESULTS) as usize;
    let work = run(client, settings, backend, query, limit);
    let hits = match tokio::time::timeout(SEARCH_TIMEOUT, work).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(ToolError::Failed(format!(
                "{} search timed out after {}s",
                label(backend),
                SEARCH_TIMEOUT.as_secs()
            )));
        }
    };
    let web: Vec<Value> = hits
        .into_iter()
        .take(limit)
        .enumerate()
        .map(|(i, h)| {
            json!({"title": h.title, "url": h.url, "description": h.description, "position": i + 1})
        })
        .collect();
    Ok(json!({"success": true, "data": {"web": web}}))
}

fn label(backend: SearchBackend) -> &'static str {
    match backend {
        SearchBackend::Searxng => "SearXNG",
        SearchBackend::Brave => "Brave Search",
        SearchBackend::Tavily => "Tavily",
        SearchBackend::Exa => "Exa",
        SearchBackend::Ddgs => "DuckDuckGo",
    }
}

/// The key or address `backend` needs, as the error that it is missing.
fn missing(backend: SearchBackend) -> ToolError {
    let what = match backend {
        SearchBackend::Searxng => "SEARXNG_URL is not set (your SearXNG instance's address)",
        SearchBackend::Brave => "BRAVE_SEARCH_API_KEY is not set",
        SearchBackend::Tavily => "TAVILY_API_KEY is not set",
        SearchBackend::Exa => "EXA_API_KEY is not set",
        SearchBackend::Ddgs => "DuckDuckGo needs no key",
    };
    ToolError::Failed(format!(
        "web search uses {} ({}), but {what}: set it in the environment or \
         $HERMES_HOME/.env, or choose another backend with web.search_backend",
        label(backend),
        backend.name()
    ))
}

async fn run(
    client: &HttpClient,
    s: &WebSection,
    backend: SearchBackend,
    query: &str,
    limit: usize,
) -> Result<Vec<Hit>, ToolError> {
    if !s.configured(backend) {
        return Err(missing(backend));
    }
    let name = label(backend);
    let q = encode(query);
    let request = match backend {
        SearchBackend::Searxng => client
            .get(format!(
                "{}/search?q={q}&format=json&pageno=1",
                s.searxng_url
            ))
            .header("accept", "application/json"),
        SearchBackend::Brave => client
            .get(format!(
                "{}/res/v1/web/search?q={q}&count={limit}",
                s.brave_base_url
            ))
            .header("accept", "application/json")
            .header("x-subscription-token", &s.brave_api_key),
        SearchBackend::Tavily => client.post(format!("{}/search", s.tavily_base_url)).json(
            &json!({"query": query, "max_results": limit, "include_raw_content": false,
                    "include_images": false, "api_key": s.tavily_api_key}),
        ),
        SearchBackend::Exa => client
            .post(format!("{}/search", s.exa_base_url))
            .header("x-api-key", &s.exa_api_key)
            .json(&json!({"query": query, "numResults": limit,
                          "contents": {"highlights": true}})),
        SearchBackend::Ddgs => client
            .get(format!("{}/html/?q={q}", s.ddgs_base_url))
            .header("accept", "text/html"),
    };
    let response = request
        .send()
        .await
        .map_err(|e| ToolError::Failed(format!("could not reach {name}: {e}")))?;
    let body = answer(name, response).await?;
    if backend == SearchBackend::Ddgs {
        return Ok(ddg::results(&String::from_utf8_lossy(&body), limit));
    }
    let data: Value = serde_json::from_slice(&body)
        .map_err(|e| ToolError::Failed(format!("could not read {name}'s answer as JSON: {e}")))?;
    Ok(hits_of(backend, &data))
}

/// The body of a successful answer; a failed one becomes an error naming the status.
async fn answer(name: &str, response: HttpResponse) -> Result<bytes::Bytes, ToolError> {
    let status = response.status();
    let body = response
        .bytes_limited(MAX_ANSWER_BYTES)
        .await
        .map_err(|e| ToolError::Failed(format!("{name}'s answer could not be read: {e}")))?;
    if status.is_success() {
        return Ok(body);
    }
    let hint = match status.as_u16() {
        401 | 403 => " (is the API key right?)",
        429 => " (rate limited; try again later)",
        _ => "",
    };
    let text = cut(&String::from_utf8_lossy(&body), 300);
    Err(ToolError::Failed(format!(
        "{name} returned HTTP {}{hint}: {text}",
        status.as_u16()
    )))
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn list<'a>(v: &'a Value, path: &[&str]) -> &'a [Value] {
    let mut node = v;
    for key in path {
        node = node.get(key).unwrap_or(&Value::Null);
    }
    node.as_array().map_or(&[], Vec::as_slice)
}

/// The results of a JSON answer, in the backend's order (SearXNG's by score).
fn hits_of(backend: SearchBackend, data: &Value) -> Vec<Hit> {
    match backend {
        SearchBackend::Searxng => {
            let mut results: Vec<&Value> = list(data, &["results"]).iter().collect();
            let score = |r: &Value| r.get("score").and_then(Value::as_f64).unwrap_or(0.0);
            results.sort_by(|a, b| score(b).total_cmp(&score(a)));
            results
                .into_iter()
                .map(|r| Hit::new(text(r, "title"), text(r, "url"), text(r, "content")))
                .collect()
        }
        SearchBackend::Brave => list(data, &["web", "results"])
            .iter()
            .map(|r| Hit::new(text(r, "title"), text(r, "url"), text(r, "description")))
            .collect(),
        SearchBackend::Tavily => list(data, &["results"])
            .iter()
            .map(|r| Hit::new(text(r, "title"), text(r, "url"), text(r, "content")))
            .collect(),
        SearchBackend::Exa => list(data, &["results"])
            .iter()
            .map(|r| {
                let highlights: Vec<&str> = list(r, &["highlights"])
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                let description = if highlights.is_empty() {
                    text(r, "text").to_string()
                } else {
                    highlights.join(" ")
                };
                Hit::new(text(r, "title"), text(r, "url"), &description)
            })
            .collect(),
        SearchBackend::Ddgs => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_become_bounded_hits() {
        let searx = json!({"results": [
            {"title": "low", "url": "http://a", "content": "x", "score": 0.5},
            {"title": "high", "url": "http://b", "content": "y".repeat(5000), "score": 2.0}
        ]});
        let hits = hits_of(SearchBackend::Searxng, &searx);
        assert_eq!(hits[0].title, "high");
        assert_eq!(hits[0].description.chars().count(), DESCRIPTION_CHARS + 1);
        let exa = json!({"results": [{"title": "t", "url": "u", "highlights": ["a", "b"]}]});
        assert_eq!(hits_of(SearchBackend::Exa, &exa)[0].description, "a b");
        assert!(hits_of(SearchBackend::Brave, &json!({"error": 1})).is_empty());
        assert_eq!(encode("a b&c/é"), "a%20b%26c%2F%C3%A9");
    }
}
