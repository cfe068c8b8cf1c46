//! Transport failures: what failed (the request, the connection, the exchange, the body), the
//! whole chain of causes as one message, and whether a timeout was among them.

use hyper_util::client::legacy;

use super::BoxError;
use crate::policy::url::UrlRefusal;

/// What failed in a transport error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportKind {
    /// The request could not be made (a bad URL or header).
    Invalid,
    /// No connection: refused, unreachable, TLS, proxy, or the connect timeout.
    Connect,
    /// Connected, but the exchange failed (the server closed early, say).
    Request,
    /// Reading the body failed.
    Body,
    /// A guarded client's rule refused the destination (`policy::url`).
    Refused,
}

/// A failed HTTP exchange, with the whole chain of causes in its message.
#[derive(Debug)]
pub struct TransportError {
    pub kind: TransportKind,
    pub message: String,
    /// A cause is the operating system's or the connector's timeout.
    pub timed_out: bool,
}

impl TransportError {
    pub(super) fn invalid(message: String) -> Self {
        Self {
            kind: TransportKind::Invalid,
            message,
            timed_out: false,
        }
    }

    pub(super) fn from_client(e: legacy::Error) -> Self {
        if let Some(refusal) = refusal_in(&e) {
            return Self {
                kind: TransportKind::Refused,
                message: refusal,
                timed_out: false,
            };
        }
        let kind = if e.is_connect() {
            TransportKind::Connect
        } else {
            TransportKind::Request
        };
        Self {
            kind,
            message: chain_message(&e),
            timed_out: has_timeout(&e),
        }
    }

    pub(super) fn body(e: BoxError) -> Self {
        Self {
            kind: TransportKind::Body,
            message: chain_message(e.as_ref()),
            timed_out: has_timeout(e.as_ref()),
        }
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TransportError {}

/// The URL rule's refusal among `e`'s causes, as its own text.
fn refusal_in(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    let mut current = Some(e);
    while let Some(error) = current {
        if let Some(refusal) = error.downcast_ref::<UrlRefusal>() {
            return Some(refusal.to_string());
        }
        current = error.source();
    }
    None
}

/// Whether `e` or one of its sources is an I/O timeout.
fn has_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(e);
    while let Some(error) = current {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        current = error.source();
    }
    false
}

/// `e` and its sources, joined with ": ", without a cause repeated by the one before it.
fn chain_message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        let text = inner.to_string();
        if !message.ends_with(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        source = inner.source();
    }
    message
}
