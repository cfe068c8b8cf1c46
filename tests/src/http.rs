//! A bare HTTP/1.1 client for the daemon's HTTP platforms (the API server, webhooks): a free
//! port to give one, a wait until it listens, and one POST per connection whose whole answer is
//! read. Raw on purpose: a test controls every header and byte it sends.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A loopback port nothing listens on right now.
pub fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("its address").port()
}

/// Wait until something accepts connections on `port` (`what` names it in a timeout).
pub async fn listening(what: &str, port: u16) {
    crate::wait::until(what, Duration::from_secs(30), || async move {
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()
    })
    .await;
}

/// An answer: its status and its body (chunked bodies are left as sent).
pub struct Answer {
    pub status: u16,
    pub body: String,
}

impl Answer {
    /// The body as JSON, or `null` when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// POST `body` (JSON) to `path` on `port` with `headers`, over a new connection.
pub async fn post(port: u16, path: &str, headers: &[(&str, String)], body: &str) -> Answer {
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .await
        .expect("read the answer");
    let text = String::from_utf8_lossy(&answer);
    let status = text.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Answer { status, body }
}
