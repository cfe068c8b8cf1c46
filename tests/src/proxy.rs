//! A recording HTTP proxy for tests: it keeps the head of every request it receives, forwards
//! plain-HTTP requests (absolute-form) to their destination one per connection, and refuses every CONNECT tunnel with
//! 403 (the tests' HTTPS destinations do not exist).

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// A running proxy; it serves until the test's runtime ends.
pub struct RecordingProxy {
    addr: SocketAddr,
    heads: Arc<Mutex<Vec<String>>>,
}

impl RecordingProxy {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let heads = Arc::new(Mutex::new(Vec::new()));
        let recorded = heads.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, recorded.clone()));
            }
        });
        Self { addr, heads }
    }

    /// `http://user:secret@127.0.0.1:PORT`, for `HTTP_PROXY` and friends.
    pub fn url_with_credentials(&self) -> String {
        format!("http://user:secret@{}", self.addr)
    }

    /// The `Proxy-Authorization` value `url_with_credentials` leads to.
    pub const EXPECTED_AUTH: &'static str = "Basic dXNlcjpzZWNyZXQ=";

    /// The heads received so far (request line and headers, lines joined with `\n`).
    pub fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("proxy log").clone()
    }
}

async fn serve(mut client: TcpStream, heads: Arc<Mutex<Vec<String>>>) {
    let mut buffer = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let n = match client.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).replace("\r\n", "\n");
    heads
        .lock()
        .expect("proxy log")
        .push(head.trim_end().to_string());
    let request_line = head.lines().next().unwrap_or_default().to_string();
    if request_line.starts_with("CONNECT ") {
        let _ = client
            .write_all(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    }
    // "POST http://host:port/path HTTP/1.1": forward everything received to host:port as is.
    let Some(authority) = request_line
        .split_whitespace()
        .nth(1)
        .and_then(|url| url.strip_prefix("http://"))
        .and_then(|rest| rest.split('/').next())
    else {
        return;
    };
    let Ok(mut upstream) = TcpStream::connect(authority).await else {
        return;
    };
    // One request per connection, so the next one arrives on a new connection with its own head:
    // the upstream answers `connection: close` and the client does not reuse this one.
    let mut forwarded = buffer[..head_end - 2].to_vec();
    forwarded.extend_from_slice(b"connection: close\r\n\r\n");
    forwarded.extend_from_slice(&buffer[head_end..]);
    if upstream.write_all(&forwarded).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}
