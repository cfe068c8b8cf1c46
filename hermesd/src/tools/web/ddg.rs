//! DuckDuckGo's keyless HTML results page (Hermes' `ddgs` fallback) read into results: each
//! organic result's link (DuckDuckGo's redirect unwrapped), title and snippet; ads left out.

use dom_query::{Document, Selection};

use super::search::Hit;

/// The results of one page, at most `limit`.
pub fn results(html: &str, limit: usize) -> Vec<Hit> {
    let doc = Document::from(html);
    let mut hits = Vec::new();
    for node in doc.select("div.result").nodes() {
        let result = Selection::from(*node);
        if result.has_class("result--ad") {
            continue;
        }
        let link = result.select("a.result__a");
        let Some(href) = link.attr("href") else {
            continue;
        };
        let url = unwrap_redirect(&href);
        if url.is_empty() {
            continue;
        }
        let snippet = result.select(".result__snippet").text();
        hits.push(Hit::new(&link.text(), &url, &snippet));
        if hits.len() >= limit {
            break;
        }
    }
    hits
}

/// `//duckduckgo.com/l/?uddg=<encoded>&rut=…` → the encoded URL; other links as they are.
fn unwrap_redirect(href: &str) -> String {
    let Some(query) = href.split_once('?').map(|(_, q)| q) else {
        return href.to_string();
    };
    if !href.contains("/l/") {
        return href.to_string();
    }
    query
        .split('&')
        .find_map(|pair| pair.strip_prefix("uddg="))
        .map(percent_decode)
        .unwrap_or_else(|| href.to_string())
}

/// A form-encoded value decoded (`+` is a space, `%XX` a byte; invalid UTF-8 replaced).
fn percent_decode(text: &str) -> String {
    percent_encoding::percent_decode_str(&text.replace('+', " "))
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn organic_results_are_read_and_ads_skipped() {
        let html = r#"<html><body>
          <div class="result result--ad"><a class="result__a" href="https://ad.example/">Ad</a></div>
          <div class="result results_links"><h2><a class="result__a"
             href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2Flearn&amp;rut=ab">The <b>Rust</b> Book</a></h2>
             <a class="result__snippet" href="x">Learn <b>Rust</b> today.</a></div>
          <div class="result"><a class="result__a" href="https://docs.rs/">Docs.rs</a></div>
        </body></html>"#;
        let hits = results(html, 5);
        assert_eq!(hits.len(), 2, "{hits:?}");
        assert_eq!(hits[0].url, "https://www.rust-lang.org/learn");
        assert_eq!(hits[0].title, "The Rust Book");
        assert_eq!(hits[0].description, "Learn Rust today.");
        assert_eq!(results(html, 1).len(), 1);
        assert_eq!(percent_decode("a%2"), "a%2");
    }
}
