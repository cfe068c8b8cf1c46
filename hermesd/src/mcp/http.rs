//! MCP's Streamable HTTP transport over the daemon's own HTTP client (the one model calls use:
//! rustls with the system's certificates, the environment's proxies), so MCP adds no second HTTP
//! or TLS stack. rmcp's worker drives the protocol; this file only carries its messages: a POST
//! answered with JSON, an SSE stream or 202, the GET stream and the session's DELETE.

use std::{collections::HashMap, sync::Arc};

use futures_util::{StreamExt, stream::BoxStream};
use http::{HeaderName, HeaderValue, StatusCode};
use rmcp::{
    model::{ClientJsonRpcMessage, ServerJsonRpcMessage},
    transport::streamable_http_client::{
        HttpStatusError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    },
};
use sse_stream::{Error as SseError, Sse, SseStream};

use crate::llm::{HttpClient, HttpResponse, TransportError};

/// The session header of the Streamable HTTP transport.
const SESSION_HEADER: &str = "mcp-session-id";
/// The largest JSON answer read into memory.
const MAX_JSON_BODY: usize = 16 * 1024 * 1024;
/// Bytes of an error answer kept for its message.
const MAX_ERROR_BODY: usize = 4 * 1024;

/// The daemon's HTTP client, with the server's configured headers on every request.
#[derive(Clone)]
pub struct McpHttp {
    client: HttpClient,
    headers: Arc<Vec<(String, String)>>,
}

impl McpHttp {
    pub fn new(client: HttpClient, headers: Vec<(String, String)>) -> Self {
        Self {
            client,
            headers: Arc::new(headers),
        }
    }

    fn with_headers(
        &self,
        mut request: crate::llm::HttpRequest,
        session_id: Option<&str>,
        auth: Option<String>,
        custom: HashMap<HeaderName, HeaderValue>,
    ) -> crate::llm::HttpRequest {
        for (name, value) in self.headers.iter() {
            request = request.header(name, value);
        }
        for (name, value) in &custom {
            if let Ok(value) = value.to_str() {
                request = request.header(name.as_str(), value);
            }
        }
        if let Some(token) = auth {
            request = request.bearer_auth(&token);
        }
        if let Some(id) = session_id {
            request = request.header(SESSION_HEADER, id);
        }
        request
    }
}

type Failure = StreamableHttpError<TransportError>;

fn session_of(response: &HttpResponse) -> Option<String> {
    response
        .headers()
        .get(SESSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn content_type(response: &HttpResponse) -> String {
    response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
}

fn sse_of(response: HttpResponse) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::new(response.into_body()).boxed()
}

/// A response that is not a success, as rmcp's worker classifies failures.
async fn failure(response: HttpResponse, session_attached: bool) -> Failure {
    let status = response.status();
    if status == StatusCode::NOT_FOUND && session_attached {
        return StreamableHttpError::SessionExpired;
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        let retry_after = response
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| v.len() <= 128)
            .map(str::to_string);
        return StreamableHttpError::HttpStatus(HttpStatusError::new(status.as_u16(), retry_after));
    }
    let body = response
        .bytes_limited(MAX_ERROR_BODY)
        .await
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    StreamableHttpError::UnexpectedServerResponse(format!("HTTP {status}: {body}").into())
}

impl StreamableHttpClient for McpHttp {
    type Error = TransportError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let request = self
            .client
            .post(uri.as_ref())
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        let request =
            self.with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            return Err(failure(response, session_id.is_some()).await);
        }
        let session = session_of(&response);
        match content_type(&response).as_str() {
            "text/event-stream" => Ok(StreamableHttpPostResponse::Sse(sse_of(response), session)),
            "application/json" => {
                let body = response.bytes_limited(MAX_JSON_BODY).await.map_err(|_| {
                    StreamableHttpError::ResponseBodyTooLarge {
                        max_size: MAX_JSON_BODY,
                    }
                })?;
                if body.iter().all(u8::is_ascii_whitespace) {
                    return Ok(StreamableHttpPostResponse::Accepted);
                }
                let message: ServerJsonRpcMessage = serde_json::from_slice(&body)?;
                Ok(StreamableHttpPostResponse::Json(message, session))
            }
            other => Err(StreamableHttpError::UnexpectedContentType(Some(
                other.to_string(),
            ))),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        let request = self.client.delete(uri.as_ref());
        let request = self.with_headers(request, Some(&session_id), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        match response.status() {
            StatusCode::METHOD_NOT_ALLOWED => {
                Err(StreamableHttpError::ServerDoesNotSupportDeleteSession)
            }
            s if s.is_success() => Ok(()),
            _ => Err(failure(response, true).await),
        }
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, Failure> {
        let mut request = self
            .client
            .get(uri.as_ref())
            .header("accept", "text/event-stream");
        if let Some(id) = &last_event_id {
            request = request.header("last-event-id", id);
        }
        let request =
            self.with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !status.is_success() {
            return Err(failure(response, session_id.is_some()).await);
        }
        if content_type(&response) != "text/event-stream" {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        Ok(sse_of(response))
    }
}
