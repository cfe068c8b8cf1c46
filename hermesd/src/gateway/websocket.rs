//! Opening a platform's websocket (Discord's Gateway, Slack's Socket Mode): `ws://` over plain
//! TCP (tests, a local relay) or `wss://` over TLS with the same rustls configuration and trust
//! store as the daemon's HTTP client, then the websocket handshake of `tokio-tungstenite`, all
//! within one deadline. Messages are capped so a peer cannot grow a frame's buffer without bound.

use std::{sync::Arc, time::Duration};

use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_tungstenite::{
    WebSocketStream,
    tungstenite::{client::IntoClientRequest, protocol::WebSocketConfig},
};
use tokio_util::either::Either;

/// A platform's websocket, over TLS or plain TCP.
pub type Socket = WebSocketStream<Either<TlsStream<TcpStream>, TcpStream>>;

/// The largest message taken from a platform (Discord's READY of a large bot runs to megabytes).
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

/// Open `url` (`ws://` or `wss://`) within `deadline`. The error says what failed, never
/// with the URL's query (which may carry a ticket).
pub async fn connect(url: &str, deadline: Duration) -> Result<Socket, String> {
    tokio::time::timeout(deadline, open(url))
        .await
        .map_err(|_| format!("the websocket did not open within {} s", deadline.as_secs()))?
}

async fn open(url: &str) -> Result<Socket, String> {
    let request = url
        .into_client_request()
        .map_err(|e| format!("invalid websocket URL: {e}"))?;
    let uri = request.uri().clone();
    let host = uri
        .host()
        .ok_or("the websocket URL has no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let tls = match uri.scheme_str() {
        Some("wss") => true,
        Some("ws") => false,
        _ => return Err("a websocket URL starts with ws:// or wss://".into()),
    };
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let tcp = TcpStream::connect((host.as_str(), port))
        .await
        .map_err(|e| format!("cannot reach {host}:{port}: {e}"))?;
    let _ = tcp.set_nodelay(true);
    let stream = if tls {
        let (config, problem) = crate::llm::tls_config()?;
        if let Some(problem) = problem {
            return Err(problem);
        }
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .map_err(|e| format!("{host} is not a server name: {e}"))?;
        let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
        let tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS with {host} failed: {e}"))?;
        Either::Left(tls)
    } else {
        Either::Right(tcp)
    };
    // A chat platform's socket carries small JSON frames: small buffers (tungstenite's 128 KiB
    // read buffer is allocated up front, per socket), and a bound on what waits to be written.
    let config = WebSocketConfig::default()
        .read_buffer_size(8 * 1024)
        .write_buffer_size(8 * 1024)
        .max_write_buffer_size(MAX_MESSAGE)
        .max_message_size(Some(MAX_MESSAGE))
        .max_frame_size(Some(MAX_MESSAGE));
    let (socket, _) = tokio_tungstenite::client_async_with_config(request, stream, Some(config))
        .await
        .map_err(|e| format!("the websocket handshake with {host} failed: {e}"))?;
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bad_urls_are_refused_with_a_reason() {
        let e = connect("http://127.0.0.1:1/", Duration::from_secs(1))
            .await
            .unwrap_err();
        assert!(e.contains("ws://"), "{e}");
        let e = connect("ws://127.0.0.1:1/", Duration::from_secs(5))
            .await
            .unwrap_err();
        assert!(e.contains("cannot reach"), "{e}");
    }
}
