//! Proxies from the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, as curl and
//! Python's HTTP clients read them) in the connector under TLS; or, for a guarded client, no
//! proxy and every connection through `policy::url`: the host resolved once, every address
//! judged, and the connection made to a judged address.

use std::{
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
    time::Duration,
};

use http::{Uri, uri::Scheme};
use hyper::rt;
use hyper_util::{
    client::{
        legacy::connect::{Connected, Connection, HttpConnector, proxy::Tunnel},
        proxy::matcher::Matcher,
    },
    rt::TokioIo,
};
use tokio::net::TcpStream;
use tower::ServiceExt;

use super::BoxError;
use crate::policy::url::UrlPolicy;

/// Connects to the destination, or through the proxy the environment names for it: an HTTPS
/// destination through a CONNECT tunnel, a plain HTTP one by talking to the proxy itself.
#[derive(Clone)]
pub(super) struct ProxyConnector {
    pub(super) tcp: HttpConnector,
    pub(super) proxies: Arc<Matcher>,
    /// A guarded client's rule: no proxy, only addresses the rule allows.
    pub(super) guard: Option<(UrlPolicy, Duration)>,
}

/// Connect to `destination` at an address `policy` judged: a proxy would resolve the name
/// itself, so a guarded connection never goes through one.
async fn guarded(
    tcp: HttpConnector,
    policy: UrlPolicy,
    timeout: Duration,
    destination: Uri,
) -> Result<ProxiedTcp, BoxError> {
    let target = policy.check_uri(&destination)?;
    let mut last: Option<BoxError> = None;
    for addr in policy.addresses(&target, timeout).await? {
        let uri: Uri = format!("http://{addr}").parse()?;
        match tcp.clone().oneshot(uri).await {
            Ok(io) => return Ok(ProxiedTcp { io, via: false }),
            Err(e) => last = Some(e.into()),
        }
    }
    Err(last.unwrap_or_else(|| "no address to connect to".into()))
}

impl tower::Service<Uri> for ProxyConnector {
    type Response = ProxiedTcp;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<ProxiedTcp, BoxError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, destination: Uri) -> Self::Future {
        let tcp = self.tcp.clone();
        if let Some((policy, timeout)) = self.guard {
            return Box::pin(guarded(tcp, policy, timeout, destination));
        }
        let proxy = self.proxies.intercept(&destination);
        Box::pin(async move {
            let Some(proxy) = proxy else {
                let io = tcp.oneshot(destination).await?;
                return Ok(ProxiedTcp { io, via: false });
            };
            if proxy.uri().scheme() != Some(&Scheme::HTTP) {
                // Named by scheme and host only: the URL may carry a password.
                let uri = proxy.uri();
                let scheme = uri.scheme_str().unwrap_or("?");
                let host = uri.host().unwrap_or("?");
                return Err(
                    format!("proxy {scheme}://{host}: only http:// proxies are supported").into(),
                );
            }
            if destination.scheme() == Some(&Scheme::HTTPS) {
                let mut tunnel = Tunnel::new(proxy.uri().clone(), tcp);
                if let Some(auth) = proxy.basic_auth() {
                    tunnel = tunnel.with_auth(auth.clone());
                }
                let io = tunnel.oneshot(destination).await?;
                Ok(ProxiedTcp { io, via: false })
            } else {
                let io = tcp.oneshot(proxy.uri().clone()).await?;
                Ok(ProxiedTcp { io, via: true })
            }
        })
    }
}

/// A TCP connection that knows whether requests on it go to a proxy in absolute form.
pub(super) struct ProxiedTcp {
    io: TokioIo<TcpStream>,
    via: bool,
}

impl Connection for ProxiedTcp {
    fn connected(&self) -> Connected {
        self.io.connected().proxy(self.via)
    }
}

impl rt::Read for ProxiedTcp {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl rt::Write for ProxiedTcp {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_shutdown(cx)
    }
}
