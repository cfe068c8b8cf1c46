//! The launched browser's only way out: a SOCKS5 proxy on 127.0.0.1 that the browser is
//! started with (`--proxy-server`, loopback not bypassed, WebRTC kept off direct UDP). Every
//! connection the browser opens — pages, subresources, WebSockets, which the `Fetch` guard does
//! not pause — names its host here; `policy::url` resolves it once and judges every address,
//! and the connection goes to a judged address. The browser never resolves a name itself, so a
//! DNS answer that changes after the check (rebinding) reaches nothing. The proxy lives as long
//! as its browser (`Launched` owns it; dropping it ends every connection).

use std::{
    net::{Ipv4Addr, Ipv6Addr},
    sync::Arc,
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::Semaphore,
    task::{JoinHandle, JoinSet},
};

use super::BrowserError;
use crate::policy::url::UrlPolicy;

/// Connections relayed at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 256;
/// How long the SOCKS greeting and request may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a name lookup and a connect may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// SOCKS5 reply codes.
const SUCCEEDED: u8 = 0x00;
const NOT_ALLOWED: u8 = 0x02;
const HOST_UNREACHABLE: u8 = 0x04;
const COMMAND_NOT_SUPPORTED: u8 = 0x07;
const ADDRESS_NOT_SUPPORTED: u8 = 0x08;

/// A running proxy; dropping it stops it and every connection through it.
#[derive(Debug)]
pub struct Proxy {
    pub port: u16,
    task: JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    /// Listen on a free port of 127.0.0.1, judging by `policy`.
    pub async fn start(policy: UrlPolicy) -> Result<Self, BrowserError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|e| BrowserError::Start(format!("cannot start the browser's proxy: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| BrowserError::Start(format!("the browser's proxy has no port: {e}")))?
            .port();
        let task = tokio::spawn(serve(listener, policy));
        Ok(Self { port, task })
    }

    /// The browser's arguments that send everything through this proxy.
    pub fn browser_args(&self) -> [String; 3] {
        [
            format!("--proxy-server=socks5://127.0.0.1:{}", self.port),
            // Chromium bypasses proxies for loopback unless told not to.
            "--proxy-bypass-list=<-loopback>".into(),
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp".into(),
        ]
    }
}

async fn serve(listener: TcpListener, policy: UrlPolicy) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    // Owned here: when the proxy is dropped, this task and every connection end together.
    let mut connections = JoinSet::new();
    loop {
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                connections.spawn(async move {
                    let _slot = slot;
                    if let Err(e) = relay(stream, policy).await {
                        tracing::debug!("browser proxy connection ended: {e}");
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// One SOCKS5 connection: greeting, CONNECT request, the rule, then bytes both ways.
async fn relay(mut client: TcpStream, policy: UrlPolicy) -> std::io::Result<()> {
    let target = tokio::time::timeout(HANDSHAKE_TIMEOUT, handshake(&mut client))
        .await
        .map_err(|_| std::io::Error::other("the SOCKS handshake timed out"))??;
    let Some((host, port)) = target else {
        return Ok(());
    };
    let upstream = match judge_and_connect(&policy, &host, port).await {
        Ok(upstream) => upstream,
        Err((code, why)) => {
            tracing::info!(host = %host, port, "browser connection refused: {why}");
            reply(&mut client, code).await?;
            return Ok(());
        }
    };
    reply(&mut client, SUCCEEDED).await?;
    let mut upstream = upstream;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// Read the greeting and the request; the target, or `None` when a refusal was sent.
async fn handshake(client: &mut TcpStream) -> std::io::Result<Option<(String, u16)>> {
    let mut head = [0u8; 2];
    client.read_exact(&mut head).await?;
    let mut methods = vec![0u8; usize::from(head[1])];
    client.read_exact(&mut methods).await?;
    if head[0] != 5 || !methods.contains(&0) {
        client.write_all(&[5, 0xff]).await?;
        return Ok(None);
    }
    client.write_all(&[5, 0]).await?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request).await?;
    let host = match request[3] {
        1 => {
            let mut ip = [0u8; 4];
            client.read_exact(&mut ip).await?;
            Ipv4Addr::from(ip).to_string()
        }
        4 => {
            let mut ip = [0u8; 16];
            client.read_exact(&mut ip).await?;
            format!("[{}]", Ipv6Addr::from(ip))
        }
        3 => {
            let mut len = [0u8; 1];
            client.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        _ => {
            reply(client, ADDRESS_NOT_SUPPORTED).await?;
            return Ok(None);
        }
    };
    let mut port = [0u8; 2];
    client.read_exact(&mut port).await?;
    if request[0] != 5 || request[1] != 1 {
        reply(client, COMMAND_NOT_SUPPORTED).await?;
        return Ok(None);
    }
    Ok(Some((host, u16::from_be_bytes(port))))
}

/// The rule on `host`, then a connection to the first judged address that answers.
async fn judge_and_connect(
    policy: &UrlPolicy,
    host: &str,
    port: u16,
) -> Result<TcpStream, (u8, String)> {
    let refused = |e: crate::policy::url::UrlRefusal| (NOT_ALLOWED, e.to_string());
    let destination = policy
        .check_url(&format!("http://{host}:{port}/"))
        .map_err(refused)?;
    let addresses = policy
        .addresses(&destination, CONNECT_TIMEOUT)
        .await
        .map_err(refused)?;
    let mut last = String::from("no address");
    for address in addresses {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => last = format!("{address}: {e}"),
            Err(_) => last = format!("{address}: no answer"),
        }
    }
    Err((HOST_UNREACHABLE, last))
}

/// A reply with no bound address (0.0.0.0:0), which clients ignore.
async fn reply(client: &mut TcpStream, code: u8) -> std::io::Result<()> {
    client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Connect through the proxy to `host`:`port` (a domain name); the reply code.
    async fn socks_connect(proxy: u16, host: &str, port: u16) -> (u8, TcpStream) {
        let mut s = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        s.write_all(&[5, 1, 0]).await.unwrap();
        let mut greeting = [0u8; 2];
        s.read_exact(&mut greeting).await.unwrap();
        assert_eq!(greeting, [5, 0]);
        let mut request = vec![5, 1, 0, 3, host.len() as u8];
        request.extend_from_slice(host.as_bytes());
        request.extend_from_slice(&port.to_be_bytes());
        s.write_all(&request).await.unwrap();
        let mut answer = [0u8; 10];
        s.read_exact(&mut answer).await.unwrap();
        (answer[1], s)
    }

    #[tokio::test]
    async fn connections_go_only_where_the_url_rule_allows() {
        let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let echo_port = echo.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = echo.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        let strict = Proxy::start(UrlPolicy::new(false)).await.unwrap();
        let (code, _) = socks_connect(strict.port, "localhost", echo_port).await;
        assert_eq!(code, NOT_ALLOWED, "loopback needs allow_private_urls");
        let (code, _) = socks_connect(strict.port, "169.254.169.254", 80).await;
        assert_eq!(code, NOT_ALLOWED);

        let open = Proxy::start(UrlPolicy::new(true)).await.unwrap();
        let (code, _) = socks_connect(open.port, "metadata.google.internal", 80).await;
        assert_eq!(code, NOT_ALLOWED, "metadata is never reached");
        let (code, mut s) = socks_connect(open.port, "localhost", echo_port).await;
        assert_eq!(code, SUCCEEDED);
        s.write_all(b"ping").await.unwrap();
        let mut back = [0u8; 4];
        s.read_exact(&mut back).await.unwrap();
        assert_eq!(&back, b"ping");
        // Dropping the proxy ends the connections through it.
        drop(open);
        let mut rest = Vec::new();
        let ended = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut rest)).await;
        assert!(ended.is_ok(), "the relayed connection ended with its proxy");
    }
}
