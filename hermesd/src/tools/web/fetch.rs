//! One page fetched for `web_extract` over the guarded HTTP client: the URL checked by
//! `policy::url` before each request, every redirect (at most five) checked again where it
//! leads, and the connection itself made only to an address the policy judged. The body is
//! read up to a cap; what lies past it is left unread.

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::{StatusCode, Uri, header};

use crate::{
    llm::{HttpClient, TransportKind},
    policy::url::UrlPolicy,
};

/// Redirects followed before a fetch gives up.
pub const MAX_REDIRECTS: usize = 5;
/// The most of a body read; a larger page is converted from its first part.
pub const MAX_BODY_BYTES: usize = 10 * 1024 * 1024;

/// A fetched body and what the server said it is.
#[derive(Debug)]
pub struct Fetched {
    /// Where the body came from (after redirects).
    pub url: String,
    pub content_type: String,
    pub body: Bytes,
    /// The body was longer than [`MAX_BODY_BYTES`] and was cut there.
    pub truncated: bool,
}

/// Fetch `url`, following redirects that the policy allows.
pub async fn fetch(client: &HttpClient, policy: UrlPolicy, url: &str) -> Result<Fetched, String> {
    let mut current = url.to_string();
    for hop in 0..=MAX_REDIRECTS {
        let via = if hop == 0 {
            String::new()
        } else {
            format!(" (redirected from {url})")
        };
        policy
            .check_url(&current)
            .map_err(|refusal| format!("{refusal}{via}"))?;
        let response = client
            .get(current.as_str())
            .header(
                "accept",
                "text/html,application/xhtml+xml,application/pdf;q=0.9,text/*;q=0.8,*/*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| match e.kind {
                TransportKind::Refused => format!("{e}{via}"),
                _ => format!("cannot fetch {current}{via}: {e}"),
            })?;
        let status = response.status();
        if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
            let location = response
                .headers()
                .get(header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or_else(|| {
                    format!("{current} redirected (HTTP {status}) without a Location")
                })?;
            current = join(&current, location)?;
            continue;
        }
        if !status.is_success() {
            return Err(format!("{current} returned HTTP {}", status.as_u16()));
        }
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let (body, truncated) = read_capped(response, &current).await?;
        return Ok(Fetched {
            url: current,
            content_type,
            body,
            truncated,
        });
    }
    Err(format!(
        "{url} redirected more than {MAX_REDIRECTS} times; fetch the final URL directly"
    ))
}

async fn read_capped(
    response: crate::llm::HttpResponse,
    url: &str,
) -> Result<(Bytes, bool), String> {
    let mut stream = response.into_stream();
    let mut body = BytesMut::new();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("reading {url} failed: {e}"))?;
        let room = MAX_BODY_BYTES - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            return Ok((body.freeze(), true));
        }
        body.extend_from_slice(&chunk);
    }
    Ok((body.freeze(), false))
}

/// `location` resolved against `base` (absolute, scheme-relative, absolute-path or relative).
pub fn join(base: &str, location: &str) -> Result<String, String> {
    let location = location.trim();
    let lower = location.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(location.to_string());
    }
    let uri: Uri = base
        .parse()
        .map_err(|e| format!("cannot follow a redirect from {base}: {e}"))?;
    let scheme = uri.scheme_str().unwrap_or("http");
    let authority = uri.authority().map(|a| a.as_str()).unwrap_or_default();
    if let Some(rest) = location.strip_prefix("//") {
        return Ok(format!("{scheme}://{rest}"));
    }
    if location.contains("://") {
        return Err(format!(
            "{base} redirected to {location}, which is not http or https"
        ));
    }
    if location.starts_with('/') {
        return Ok(format!("{scheme}://{authority}{location}"));
    }
    let path = uri.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    Ok(format!("{scheme}://{authority}{dir}{location}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirects_resolve_against_the_page() {
        let base = "http://a.test:8080/docs/page.html?x=1";
        assert_eq!(join(base, "https://b.test/x").unwrap(), "https://b.test/x");
        assert_eq!(join(base, "//c.test/y").unwrap(), "http://c.test/y");
        assert_eq!(join(base, "/root").unwrap(), "http://a.test:8080/root");
        assert_eq!(
            join(base, "next.html").unwrap(),
            "http://a.test:8080/docs/next.html"
        );
        assert!(join(base, "file:///etc/passwd").is_err());
    }
}
