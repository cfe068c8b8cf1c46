//! The HTTP client for model calls: hyper's HTTP/1.1 client over rustls with the system's
//! certificates, the environment's proxies (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`),
//! and a bounded read buffer, so a fast server's burst cannot grow a connection's buffer (hyper's
//! default lets it reach 400 KiB, and keeps it for the connection's life). A guarded client
//! (`HttpClient::guarded`, for URLs a tool fetches) connects only where `policy::url` allows.

use std::{sync::Arc, time::Duration};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header, uri::Scheme};
use http_body_util::{BodyDataStream, BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper_rustls::HttpsConnector;
use hyper_util::{
    client::{
        legacy::{self, connect::HttpConnector},
        proxy::matcher::Matcher,
    },
    rt::{TokioExecutor, TokioTimer},
};
use rustls_platform_verifier::BuilderVerifierExt;
use serde::{Serialize, de::DeserializeOwned};

use crate::policy::url::UrlPolicy;

mod error;
mod proxy;

pub use error::{TransportError, TransportKind};
use proxy::ProxyConnector;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The largest read buffer of a connection, which also bounds a response's head. Token streams
/// arrive in small pieces; a larger buffer only holds more of a burst at once.
const MAX_READ_BUFFER: usize = 16 * 1024;
/// The largest whole body read into memory (a non-streamed answer, an error, a model listing).
const MAX_WHOLE_BODY: usize = 64 * 1024 * 1024;
/// How long an unused connection stays open for the next call.
const POOL_IDLE: Duration = Duration::from_secs(90);
/// Idle connections kept per host: a burst (100 chats answered at once) would otherwise leave
/// a hundred open connections with their buffers for the whole idle timeout.
const POOL_IDLE_PER_HOST: usize = 8;

/// A cheap-to-clone HTTP client; clones share connections.
#[derive(Clone)]
pub struct HttpClient(Arc<Inner>);

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpClient")
    }
}

struct Inner {
    hyper: legacy::Client<HttpsConnector<ProxyConnector>, Full<Bytes>>,
    proxies: Arc<Matcher>,
    /// Why HTTPS cannot work here (no CA certificates found), said on every HTTPS request.
    tls_problem: Option<String>,
}

/// TLS with the system's trust store. A machine without CA certificates can still reach a local
/// model over plain HTTP, so their absence is reported per HTTPS request, not as a failed client.
/// Also the TLS of the gateway's websockets (Discord's Gateway), so every connection the daemon
/// makes trusts the same certificates.
pub fn tls_config() -> Result<(rustls::ClientConfig, Option<String>), String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?;
    Ok(match builder.clone().with_platform_verifier() {
        Ok(verified) => (verified.with_no_client_auth(), None),
        Err(e) => (
            builder
                .with_root_certificates(rustls::RootCertStore::empty())
                .with_no_client_auth(),
            Some(format!("cannot verify HTTPS servers: {e}")),
        ),
    })
}

impl HttpClient {
    /// A client whose connections must be established within `connect_timeout`. Reads the
    /// system's CA certificates, so call it off the async runtime where that matters.
    pub fn new(connect_timeout: Duration) -> Result<Self, String> {
        Self::build(connect_timeout, None)
    }

    /// A client for URLs a tool fetches: no proxy, and every connection made to an address
    /// `policy` allows, checked on the address the name resolved to (see `policy::url`).
    /// A refused destination fails the request with [`TransportKind::Refused`].
    pub fn guarded(connect_timeout: Duration, policy: UrlPolicy) -> Result<Self, String> {
        Self::build(connect_timeout, Some(policy))
    }

    fn build(connect_timeout: Duration, guard: Option<UrlPolicy>) -> Result<Self, String> {
        let (tls, tls_problem) = tls_config()?;
        let mut tcp = HttpConnector::new();
        tcp.enforce_http(false); // https URLs pass through here on their way to TLS
        tcp.set_nodelay(true);
        tcp.set_connect_timeout(Some(connect_timeout));
        let proxies = Arc::new(match guard {
            Some(_) => Matcher::builder().build(),
            None => Matcher::from_env(),
        });
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(tls)
            .https_or_http()
            .enable_http1()
            .wrap_connector(ProxyConnector {
                tcp,
                proxies: proxies.clone(),
                guard: guard.map(|policy| (policy, connect_timeout)),
            });
        let hyper = legacy::Client::builder(TokioExecutor::new())
            .http1_max_buf_size(MAX_READ_BUFFER)
            .pool_idle_timeout(POOL_IDLE)
            .pool_max_idle_per_host(POOL_IDLE_PER_HOST)
            .pool_timer(TokioTimer::new())
            .build(connector);
        Ok(Self(Arc::new(Inner {
            hyper,
            proxies,
            tls_problem,
        })))
    }

    pub fn get(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::GET, url.into())
    }

    pub fn post(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::POST, url.into())
    }

    pub fn delete(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::DELETE, url.into())
    }

    pub fn patch(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::PATCH, url.into())
    }

    pub fn put(&self, url: impl Into<String>) -> RequestBuilder {
        self.request(Method::PUT, url.into())
    }

    fn request(&self, method: Method, url: String) -> RequestBuilder {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::USER_AGENT,
            HeaderValue::from_static(concat!("hermesd/", env!("CARGO_PKG_VERSION"))),
        );
        headers.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
        RequestBuilder {
            client: self.clone(),
            method,
            url,
            headers,
            body: Bytes::new(),
            invalid: None,
        }
    }
}

/// A request being put together; mistakes surface when it is sent.
pub struct RequestBuilder {
    client: HttpClient,
    method: Method,
    url: String,
    headers: HeaderMap,
    body: Bytes,
    invalid: Option<String>,
}

impl RequestBuilder {
    /// Add a header; a value that cannot be a header (a newline in a key, say) fails the send.
    /// Values are marked sensitive, so they are never printed in a debug log.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(name), Ok(mut value)) => {
                value.set_sensitive(true);
                self.headers.insert(name, value);
            }
            _ => self.invalid = Some(format!("the {name} header holds invalid characters")),
        }
        self
    }

    pub fn bearer_auth(self, token: &str) -> Self {
        self.header("authorization", &format!("Bearer {token}"))
    }

    /// Send `body` as JSON.
    pub fn json(mut self, body: &impl Serialize) -> Self {
        match serde_json::to_vec(body) {
            Ok(bytes) => {
                self.body = bytes.into();
                self.headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
            }
            Err(e) => self.invalid = Some(format!("cannot encode the request body: {e}")),
        }
        self
    }

    /// Send `body` as is, of type `content_type` (a multipart form, say).
    pub fn body(mut self, body: impl Into<Bytes>, content_type: &str) -> Self {
        match HeaderValue::from_str(content_type) {
            Ok(value) => {
                self.body = body.into();
                self.headers.insert(header::CONTENT_TYPE, value);
            }
            Err(_) => self.invalid = Some(format!("invalid content type {content_type:?}")),
        }
        self
    }

    /// Send the request and wait for the response's head.
    pub async fn send(self) -> Result<Response, TransportError> {
        if let Some(message) = self.invalid {
            return Err(TransportError::invalid(message));
        }
        let uri = absolute_uri(&self.url)?;
        if let Some(problem) = &self.client.0.tls_problem
            && uri.scheme() == Some(&Scheme::HTTPS)
        {
            return Err(TransportError {
                kind: TransportKind::Connect,
                message: problem.clone(),
                timed_out: false,
            });
        }
        let mut headers = self.headers;
        if uri.scheme() == Some(&Scheme::HTTP) {
            // Plain HTTP goes to the proxy as a whole URL; HTTPS is tunnelled by the connector.
            if let Some(auth) = self
                .client
                .0
                .proxies
                .intercept(&uri)
                .and_then(|proxy| proxy.basic_auth().cloned())
            {
                headers.insert(header::PROXY_AUTHORIZATION, auth);
            }
        }
        let mut request = http::Request::new(Full::new(self.body));
        *request.method_mut() = self.method;
        *request.uri_mut() = uri;
        *request.headers_mut() = headers;
        let response = self
            .client
            .0
            .hyper
            .request(request)
            .await
            .map_err(TransportError::from_client)?;
        let (head, body) = response.into_parts();
        Ok(Response {
            status: head.status,
            headers: head.headers,
            body,
        })
    }
}

fn absolute_uri(url: &str) -> Result<Uri, TransportError> {
    let uri: Uri = url
        .parse()
        .map_err(|e| TransportError::invalid(format!("invalid URL {url:?}: {e}")))?;
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"));
    if !scheme_ok || uri.host().is_none() {
        return Err(TransportError::invalid(format!(
            "invalid URL {url:?}: it needs http:// or https:// and a host"
        )));
    }
    Ok(uri)
}

/// A response whose head has arrived; the body is read by one of the consuming methods.
pub struct Response {
    status: StatusCode,
    headers: HeaderMap,
    body: Incoming,
}

impl Response {
    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The whole body as text (invalid UTF-8 replaced), up to 64 MiB.
    pub async fn text(self) -> Result<String, TransportError> {
        let bytes = Limited::new(self.body, MAX_WHOLE_BODY)
            .collect()
            .await
            .map_err(TransportError::body)?
            .to_bytes();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The whole body as JSON.
    pub async fn json<T: DeserializeOwned>(self) -> Result<T, TransportError> {
        let text = self.text().await?;
        serde_json::from_str(&text).map_err(|e| TransportError {
            kind: TransportKind::Body,
            message: format!("the response is not the JSON expected ({e})"),
            timed_out: false,
        })
    }

    /// The body's data as it arrives.
    pub fn into_stream(self) -> BodyDataStream<Incoming> {
        BodyDataStream::new(self.body)
    }

    /// The body itself, for a reader that takes an HTTP body (an SSE parser).
    pub fn into_body(self) -> Incoming {
        self.body
    }

    /// At most `limit` bytes of the body; more is an error of kind `Body`.
    pub async fn bytes_limited(self, limit: usize) -> Result<Bytes, TransportError> {
        Ok(Limited::new(self.body, limit)
            .collect()
            .await
            .map_err(TransportError::body)?
            .to_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_need_a_scheme_and_a_host() {
        assert!(absolute_uri("https://api.example.com/v1/chat/completions").is_ok());
        for bad in [
            "localhost:8080/v1",
            "/v1/models",
            "ftp://host/x",
            "not a url",
        ] {
            let e = absolute_uri(bad).unwrap_err();
            assert_eq!(e.kind, TransportKind::Invalid, "{bad}");
            assert!(e.message.contains(bad), "{}", e.message);
        }
    }
}
