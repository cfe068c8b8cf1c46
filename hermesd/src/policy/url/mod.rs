//! The one rule on which URLs a tool may fetch (Hermes' `url_safety`): http and https only;
//! loopback, private, unique-local and other internal addresses refused unless
//! `security.allow_private_urls` is on; link-local addresses (169.254.0.0/16 with the cloud
//! metadata services, fe80::/10), the other metadata addresses and metadata host names refused
//! always. A name is resolved once, here, and every address it resolves to is judged: the
//! connection goes to one of the addresses returned, never to a second lookup's answer, so DNS
//! rebinding has no gap to use. Every fetching path asks here: the guarded HTTP client's
//! connector for each connection, the fetcher for each URL and each redirect.

mod address;
mod credentials;
mod host;

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

pub use address::{AddressClass, classify};
pub use credentials::credential_in;
pub use host::{Host, parse_host};

/// Host names of metadata services, refused before any lookup.
const METADATA_NAMES: &[&str] = &["metadata.google.internal", "metadata.goog"];
/// What a refusal of a private address tells the model and the user.
const ALLOW_HINT: &str = "set security.allow_private_urls: true to allow private addresses";

/// Why a URL or an address may not be fetched; its text starts with `Blocked:`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Blocked: {0}")]
pub struct UrlRefusal(pub String);

/// A URL that passed the checks that need no lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub host: Host,
    pub port: u16,
    pub https: bool,
}

/// The rule in force: whether private addresses may be fetched.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    allow_private: bool,
}

impl UrlPolicy {
    pub fn new(allow_private: bool) -> Self {
        Self { allow_private }
    }

    pub fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// Whether `ip` may be connected to; `shown` is how the refusal names it (the host).
    pub fn check_ip(&self, ip: IpAddr, shown: &str) -> Result<(), UrlRefusal> {
        let named = if shown == ip.to_string() {
            shown.to_string()
        } else {
            format!("{shown} ({ip})")
        };
        match classify(ip) {
            AddressClass::Public => Ok(()),
            AddressClass::Private(_) if self.allow_private => Ok(()),
            AddressClass::Private(what) => {
                Err(UrlRefusal(format!("{named} is {what}; {ALLOW_HINT}")))
            }
            AddressClass::Forbidden(what) => Err(UrlRefusal(format!(
                "{named} is {what}, never fetched (security.allow_private_urls does not change this)"
            ))),
        }
    }

    /// The checks of `url` that need no lookup: scheme, host form, metadata names, IP literals.
    pub fn check_url(&self, url: &str) -> Result<Destination, UrlRefusal> {
        let uri: http::Uri = url
            .parse()
            .map_err(|e| UrlRefusal(format!("{url:?} is not a valid URL ({e})")))?;
        self.check_uri(&uri)
    }

    /// [`Self::check_url`] of a parsed URI.
    pub fn check_uri(&self, uri: &http::Uri) -> Result<Destination, UrlRefusal> {
        let https = match uri.scheme_str().map(str::to_ascii_lowercase).as_deref() {
            Some("https") => true,
            Some("http") => false,
            other => {
                return Err(UrlRefusal(format!(
                    "only http:// and https:// URLs are fetched, not {}",
                    other.map_or("a URL without a scheme".to_string(), |s| format!("{s}://"))
                )));
            }
        };
        let raw = uri
            .host()
            .ok_or_else(|| UrlRefusal("the URL has no host".into()))?;
        let host = parse_host(raw).map_err(UrlRefusal)?;
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        match &host {
            Host::Ip(ip) => self.check_ip(*ip, raw)?,
            Host::Name(name) => {
                if METADATA_NAMES.contains(&name.as_str()) {
                    return Err(UrlRefusal(format!(
                        "{name} is a cloud metadata service, never fetched"
                    )));
                }
            }
        }
        Ok(Destination { host, port, https })
    }

    /// The addresses to connect to for `destination`: an IP literal as it is, a name resolved
    /// once within `timeout` with every address judged (one refused address refuses the name,
    /// as Hermes does).
    pub async fn addresses(
        &self,
        destination: &Destination,
        timeout: Duration,
    ) -> Result<Vec<SocketAddr>, UrlRefusal> {
        let name = match &destination.host {
            Host::Ip(ip) => return Ok(vec![SocketAddr::new(*ip, destination.port)]),
            Host::Name(name) => name,
        };
        let lookup = tokio::net::lookup_host((name.as_str(), destination.port));
        let found: Vec<SocketAddr> = match tokio::time::timeout(timeout, lookup).await {
            Ok(Ok(found)) => found.collect(),
            Ok(Err(e)) => return Err(UrlRefusal(format!("cannot resolve {name}: {e}"))),
            Err(_) => {
                return Err(UrlRefusal(format!(
                    "cannot resolve {name} within {}s",
                    timeout.as_secs()
                )));
            }
        };
        if found.is_empty() {
            return Err(UrlRefusal(format!("{name} resolves to no address")));
        }
        for addr in &found {
            self.check_ip(addr.ip(), name)?;
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests;
