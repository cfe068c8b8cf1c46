//! URLs that carry a credential (Hermes' refusal before `web_extract` or `browser_navigate`
//! fetches what the model asked for): a vendor key of a known shape anywhere in the URL, plain
//! or percent-encoded, or a query parameter whose name says it holds one (`token`, `api_key`,
//! `signature`, … — Hermes' deliberately narrow list: `code`, `key` or `session` are ordinary
//! page facets too). A secret in a URL ends up in the target's logs and in every referrer.

use super::UrlRefusal;
use crate::policy::secrets::has_vendor_key;

/// Query parameter names that hold a credential (Hermes' `_SENSITIVE_QUERY_PARAM_NAMES`).
const SENSITIVE_PARAMS: &[&str] = &[
    "access_token",
    "api_key",
    "apikey",
    "auth_token",
    "authorization",
    "awsaccesskeyid",
    "client_secret",
    "credential",
    "credentials",
    "jwt",
    "password",
    "passwd",
    "secret",
    "session_id",
    "signature",
    "token",
    "x_amz_security_token",
    "x_amz_signature",
    "x-amz-security-token",
    "x-amz-signature",
];

/// Why `url` may not be fetched for the model because it carries a credential, if it does.
pub fn credential_in(url: &str) -> Option<UrlRefusal> {
    let decoded = percent_decode(url);
    if has_vendor_key(url) || has_vendor_key(&decoded) {
        return Some(UrlRefusal(
            "the URL contains what appears to be an API key or token; secrets must not be \
             sent in URLs"
                .into(),
        ));
    }
    let lower = url.trim_start().to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return None;
    }
    let without_fragment = url.split('#').next().unwrap_or("");
    let query = without_fragment.split_once('?')?.1;
    query.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=')?;
        let name = percent_decode(&name.replace('+', " ")).to_ascii_lowercase();
        (!value.is_empty() && SENSITIVE_PARAMS.contains(&name.as_str())).then(|| {
            UrlRefusal(format!(
                "the URL contains a credential-like query parameter ({name}); remove it, or \
                 fetch the page some other way when this access is explicitly wanted"
            ))
        })
    })
}

/// `text` with `%XX` escapes decoded (invalid escapes kept, invalid UTF-8 replaced).
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_urls_are_found() {
        for url in [
            "https://api.example/v1?token=abc123",
            "https://s3.example/obj?X-Amz-Signature=deadbeef&x=1",
            "https://a.example/?q=1&API%5FKEY=zzz",
            "https://a.example/cb?access_token=t#top",
            "https://a.example/p?key=sk-abcdefghijklmnop1234",
            "https://a.example/p/sk%2Dabcdefghijklmnop1234",
        ] {
            assert!(credential_in(url).is_some(), "{url}");
        }
        for url in [
            "https://a.example/?q=token",
            "https://a.example/?code=1234&session=abc&key=x",
            "https://a.example/?token=",
            "https://a.example/token/abc",
            "https://a.example/%ZZ?x=1",
            "https://a.example/cb#x?token=1",
        ] {
            assert!(credential_in(url).is_none(), "{url}");
        }
        let why = credential_in("https://a.example/?password=hunter2").unwrap();
        assert!(why.to_string().starts_with("Blocked:") && why.0.contains("password"));
    }
}
