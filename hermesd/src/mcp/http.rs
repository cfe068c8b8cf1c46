//! MCP's Streamable HTTP transport over the daemon's own HTTP client (the one model calls use:
//! rustls with the system's certificates, the environment's proxies), so MCP adds no second HTTP
//! or TLS stack. rmcp's worker drives the protocol; this file only carries its messages: a POST
//! answered with JSON, an SSE stream or 202, the GET stream and the session's DELETE.
//!
//! One message is read into memory at most [`MAX_MESSAGE`] bytes: a JSON answer past it, or an
//! SSE event growing past it (counted before parsing, so a server streaming one endless event
//! cannot grow the daemon), is refused. The call waiting on it fails at once with an error
//! naming the cap; an oversized event on the GET stream ends that stream (rmcp logs it).

use std::{collections::HashMap, sync::Arc};

use bytes::Bytes;
use futures_util::{Stream, StreamExt, stream::BoxStream};
use http::{HeaderName, HeaderValue, StatusCode};
use http_body_util::BodyDataStream;
use rmcp::{
    model::{ClientJsonRpcMessage, RequestId, ServerJsonRpcMessage},
    transport::streamable_http_client::{
        HttpStatusError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    },
};
use sse_stream::{Error as SseError, Sse, SseStream};

use crate::llm::{HttpClient, HttpResponse, TransportError};

/// The session header of the Streamable HTTP transport.
const SESSION_HEADER: &str = "mcp-session-id";
/// The largest message read into memory from an HTTP server: a JSON answer, or one SSE event.
/// A tool result is one message, so this is also the largest result (a base64 image of about
/// 6 MB fits); larger is refused rather than buffered.
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;
/// The JSON-RPC code of a refused answer (internal error).
const REFUSED_CODE: i64 = -32603;
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

/// Why a body was not read further.
#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error("{0}")]
    Read(Box<dyn std::error::Error + Send + Sync>),
    #[error(
        "the MCP server sent an SSE event larger than {cap} bytes (the cap on one message): refused"
    )]
    Oversized { cap: usize },
}

/// Counts the bytes of the SSE event being received, as the parser will hold them: every
/// non-comment line of the event (plus the newline joining it) and the line under way. A blank
/// line ends the event and starts the count again.
#[derive(Debug)]
struct EventBound {
    cap: usize,
    retained: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventBound {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            retained: 0,
            line: 0,
            comment: false,
            after_cr: false,
        }
    }

    /// Look at the next bytes of the stream: `Ok` while the event under way is within the cap,
    /// else `Err(n)`, where the first `n` bytes of `chunk` end the last complete event.
    fn observe(&mut self, chunk: &[u8]) -> Result<(), usize> {
        let mut complete = 0;
        for (i, &byte) in chunk.iter().enumerate() {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match byte {
                // The `\n` of a `\r\n` ends nothing more.
                b'\n' if after_cr => continue,
                b'\r' | b'\n' => {
                    if self.line == 0 {
                        self.retained = 0;
                        complete = i + 1;
                    } else if !self.comment {
                        self.retained = self.retained.saturating_add(self.line + 1);
                    }
                    self.line = 0;
                    self.comment = false;
                    self.after_cr = byte == b'\r';
                }
                _ => {
                    if self.line == 0 {
                        self.comment = byte == b':';
                    }
                    self.line += 1;
                }
            }
            if self.retained.saturating_add(self.line) > self.cap {
                return Err(complete);
            }
        }
        Ok(())
    }
}

/// `body` passed on while each SSE event in it stays within `cap` bytes; the events completed
/// before one that grows past it are passed on, then [`BodyError::Oversized`] ends the stream.
fn bounded<S, E>(body: S, cap: usize) -> impl Stream<Item = Result<Bytes, BodyError>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin,
    E: std::error::Error + Send + Sync + 'static,
{
    struct Reading<S> {
        body: S,
        bound: EventBound,
        refused: bool,
        done: bool,
    }
    let start = Reading {
        body,
        bound: EventBound::new(cap),
        refused: false,
        done: false,
    };
    futures_util::stream::unfold(start, |mut reading| async move {
        if reading.done {
            return None;
        }
        if reading.refused {
            reading.done = true;
            let cap = reading.bound.cap;
            return Some((Err(BodyError::Oversized { cap }), reading));
        }
        match reading.body.next().await? {
            Err(e) => {
                reading.done = true;
                Some((Err(BodyError::Read(Box::new(e))), reading))
            }
            Ok(chunk) => match reading.bound.observe(&chunk) {
                Ok(()) => Some((Ok(chunk), reading)),
                Err(complete) => {
                    reading.refused = true;
                    Some((Ok(chunk.slice(..complete)), reading))
                }
            },
        }
    })
}

/// The SSE events of `body`, each within `cap` bytes. On a POST's stream (`request` is the
/// request it answers), an oversized event becomes a JSON-RPC error answering that request, so
/// the call fails now with the reason instead of waiting on a stream that was cut.
fn sse_events<S, E>(
    body: S,
    cap: usize,
    request: Option<RequestId>,
) -> BoxStream<'static, Result<Sse, SseError>>
where
    S: Stream<Item = Result<Bytes, E>> + Send + Unpin + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let events = SseStream::from_bytes_stream(bounded(body, cap));
    let Some(id) = request else {
        return events.boxed();
    };
    events
        .map(move |event| match event {
            Err(SseError::Body(e))
                if e.downcast_ref::<BodyError>()
                    .is_some_and(|e| matches!(e, BodyError::Oversized { .. })) =>
            {
                let refusal = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": REFUSED_CODE, "message": e.to_string()},
                });
                Ok(Sse::default().data(refusal.to_string()))
            }
            other => other,
        })
        .boxed()
}

fn sse_of(
    response: HttpResponse,
    request: Option<RequestId>,
) -> BoxStream<'static, Result<Sse, SseError>> {
    sse_events(
        BodyDataStream::new(response.into_body()),
        MAX_MESSAGE,
        request,
    )
}

/// The JSON answer of `response`, refused past [`MAX_MESSAGE`] bytes.
async fn json_body(response: HttpResponse) -> Result<Bytes, Failure> {
    use http_body_util::BodyExt;
    match http_body_util::Limited::new(response.into_body(), MAX_MESSAGE)
        .collect()
        .await
    {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            Err(StreamableHttpError::ResponseBodyTooLarge {
                max_size: MAX_MESSAGE,
            })
        }
        Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(
            format!("the answer could not be read: {e}").into(),
        )),
    }
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
        let request = match &message {
            ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let post = self
            .client
            .post(uri.as_ref())
            .header("accept", "application/json, text/event-stream")
            .json(&message);
        let post = self.with_headers(post, session_id.as_deref(), auth_header, custom_headers);
        let response = post.send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            return Err(failure(response, session_id.is_some()).await);
        }
        let session = session_of(&response);
        match content_type(&response).as_str() {
            "text/event-stream" => Ok(StreamableHttpPostResponse::Sse(
                sse_of(response, request),
                session,
            )),
            "application/json" => {
                let body = json_body(response).await?;
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
        Ok(sse_of(response, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn chunks(parts: &[&'static [u8]]) -> impl Stream<Item = Result<Bytes, std::io::Error>> {
        futures_util::stream::iter(
            parts
                .iter()
                .map(|p| Ok(Bytes::from_static(p)))
                .collect::<Vec<_>>(),
        )
    }

    #[tokio::test]
    async fn events_within_the_cap_pass_with_crlf_and_comments_counted_as_the_parser_keeps_them() {
        // Comment lines are not kept, so keep-alives never add up; `\r\n` split across chunks.
        let body = chunks(&[
            b": ping\n: ping\n: ping\ndata: abcd\r",
            b"\n\r\ndata: efgh\n\n",
        ]);
        let events: Vec<_> = sse_events(body, 11, None).collect().await;
        let data: Vec<_> = events
            .into_iter()
            .map(|e| e.unwrap().data.unwrap())
            .collect();
        assert_eq!(data, ["abcd", "efgh"]);
    }

    #[tokio::test]
    async fn an_oversized_event_on_the_get_stream_ends_it_with_an_error_after_the_complete_ones() {
        let body = chunks(&[b"data: ok\n\ndata: 0123456789", b"0123456789\n\n"]);
        let mut events = sse_events(body, 16, None);
        assert_eq!(events.next().await.unwrap().unwrap().data.unwrap(), "ok");
        let error = events.next().await.unwrap().unwrap_err().to_string();
        assert!(error.contains("larger than 16 bytes"), "{error}");
        assert!(events.next().await.is_none());
    }

    /// Answer one request on a local port with `head`, then `body` (which may never end: the
    /// server writes until the client goes).
    async fn serve_once(head: String, body: Vec<Vec<u8>>, endless: Option<Vec<u8>>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buf).await.unwrap();
                assert!(n > 0, "the request ended early");
                request.extend_from_slice(&buf[..n]);
            }
            socket.write_all(head.as_bytes()).await.unwrap();
            for part in body {
                if socket.write_all(&part).await.is_err() {
                    return;
                }
            }
            if let Some(chunk) = endless {
                while socket.write_all(&chunk).await.is_ok() {}
            }
        });
        format!("http://{addr}/mcp")
    }

    fn client() -> McpHttp {
        McpHttp::new(
            HttpClient::new(std::time::Duration::from_secs(5)).unwrap(),
            Vec::new(),
        )
    }

    fn call(id: i64) -> ClientJsonRpcMessage {
        serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "big"}
        }))
        .unwrap()
    }

    #[tokio::test]
    async fn an_endless_sse_event_is_refused_at_the_cap_and_answers_the_call_with_the_reason() {
        let uri = serve_once(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                .to_string(),
            vec![
                b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n".to_vec(),
                b"id: 9\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"".to_vec(),
            ],
            Some(vec![b'x'; 64 * 1024]),
        )
        .await;
        let answer = client()
            .post_message(uri.into(), call(42), None, None, HashMap::new())
            .await
            .unwrap();
        let StreamableHttpPostResponse::Sse(mut events, _) = answer else {
            panic!("an SSE answer expected");
        };
        let first = events.next().await.unwrap().unwrap();
        assert!(first.data.unwrap().contains("notifications/progress"));
        let refusal: Value =
            serde_json::from_str(&events.next().await.unwrap().unwrap().data.unwrap()).unwrap();
        assert_eq!(refusal["id"], 42, "{refusal}");
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("larger than {MAX_MESSAGE} bytes")),
            "{message}"
        );
        // The refusal parses as the call's answer, as rmcp's worker reads it.
        let parsed: ServerJsonRpcMessage = serde_json::from_value(refusal).unwrap();
        assert!(matches!(parsed, ServerJsonRpcMessage::Error(_)));
        assert!(events.next().await.is_none(), "the stream ends there");
    }

    #[tokio::test]
    async fn a_json_answer_over_the_cap_is_refused() {
        let size = MAX_MESSAGE + 1;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {size}\r\n\r\n"
        );
        let uri = serve_once(head, vec![vec![b' '; size]], None).await;
        let refused = client()
            .post_message(uri.into(), call(7), None, None, HashMap::new())
            .await
            .expect_err("the answer is refused");
        assert!(
            matches!(refused, StreamableHttpError::ResponseBodyTooLarge { max_size } if max_size == MAX_MESSAGE),
            "{refused}"
        );
    }
}
