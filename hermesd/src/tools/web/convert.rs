//! What a fetched body becomes for the model: HTML's main content as Markdown (dom_smoothie,
//! a port of readability.js: navigation, ads and footers dropped; title, headings, lists,
//! links, tables and code kept; pages over 256 KB by `large.rs`), a PDF's text (pdf-extract), plain text as it is. Bodies are
//! decoded from their charset (the header's, a byte-order mark, a `<meta>` tag, else UTF-8).

use dom_smoothie::{Config, Readability, TextMode};
use encoding_rs::{Encoding, UTF_8};

/// How much of a document's start is searched for a `<meta charset>`.
const META_SCAN_BYTES: usize = 2_048;
/// Tags left out when a page has no main content to extract and is converted whole.
const BOILERPLATE_TAGS: &[&str] = &[
    "head", "script", "style", "noscript", "nav", "header", "footer", "aside", "form", "iframe",
    "svg",
];

/// A page as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub title: String,
    pub markdown: String,
}

/// The kinds of body `web_extract` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Html,
    Pdf,
    Text,
}

/// What `body` is, by its media type and, when that says little, its first bytes.
pub fn kind_of(media_type: &str, body: &[u8]) -> Option<Kind> {
    let start = &body[..body.len().min(512)];
    let head = String::from_utf8_lossy(start)
        .trim_start()
        .to_ascii_lowercase();
    match media_type {
        "application/pdf" => Some(Kind::Pdf),
        "text/html" | "application/xhtml+xml" => Some(Kind::Html),
        _ if body.starts_with(b"%PDF-") => Some(Kind::Pdf),
        _ if head.starts_with("<!doctype html") || head.starts_with("<html") => Some(Kind::Html),
        "" | "application/octet-stream" if std::str::from_utf8(start).is_ok() => Some(Kind::Text),
        t if t.starts_with("text/")
            || t.ends_with("json")
            || t.ends_with("+xml")
            || t.ends_with("/xml") =>
        {
            Some(Kind::Text)
        }
        _ => None,
    }
}

/// The media type and charset of a `Content-Type` value, lower-cased.
pub fn media_type(content_type: &str) -> (String, Option<String>) {
    let mut parts = content_type.split(';');
    let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
    let charset = parts.find_map(|p| {
        let (k, v) = p.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("charset"))
            .then(|| v.trim().trim_matches(['"', '\'']).to_ascii_lowercase())
    });
    (media, charset)
}

/// `body` as text: decoded from `charset` (a header's), else the byte-order mark, else the
/// `<meta>` charset of an HTML page, else UTF-8; undecodable bytes become U+FFFD.
pub fn decode(body: &[u8], charset: Option<&str>, html: bool) -> String {
    let from_meta = || html.then(|| meta_charset(body)).flatten();
    let encoding = Encoding::for_bom(body)
        .map(|(e, _)| e)
        .or_else(|| charset.and_then(|c| Encoding::for_label(c.as_bytes())))
        .or_else(from_meta)
        .unwrap_or(UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The encoding a `<meta charset=…>` or `<meta http-equiv … content="…; charset=…">` names.
fn meta_charset(body: &[u8]) -> Option<&'static Encoding> {
    let head = &body[..body.len().min(META_SCAN_BYTES)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], b"<meta") {
        let tag_start = from + at;
        let tag_end = find(&lower[tag_start..], b">").map_or(lower.len(), |e| tag_start + e);
        let tag = &lower[tag_start..tag_end];
        if let Some(c) = find(tag, b"charset=") {
            let value: Vec<u8> = tag[c + 8..]
                .iter()
                .copied()
                .skip_while(|b| *b == b'"' || *b == b'\'')
                .take_while(|b| !matches!(b, b'"' | b'\'' | b' ' | b';' | b'/' | b'>'))
                .collect();
            if let Some(encoding) = Encoding::for_label(&value) {
                // A page that says UTF-16 in ASCII is not UTF-16 (as browsers decide).
                return Some(if encoding.is_single_byte() || encoding == UTF_8 {
                    encoding
                } else {
                    encoding.output_encoding()
                });
            }
        }
        from = tag_end;
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The main content of `html` as Markdown; `url` makes relative links absolute. A page with no
/// article-like content is converted whole, less its boilerplate tags. A very large page takes
/// the one-pass path of `large.rs` instead of readability's scoring.
pub fn to_markdown(html: &str, url: &str) -> Page {
    if html.len() >= super::large::LARGE_PAGE_BYTES {
        let page = super::large::to_markdown(html);
        return Page {
            markdown: unescape(&page.markdown),
            ..page
        };
    }
    let cfg = Config {
        text_mode: TextMode::Markdown,
        ..Config::default()
    };
    let article = Readability::new(html, Some(url), Some(cfg)).and_then(|mut r| r.parse());
    match article {
        Ok(article) if !article.text_content.trim().is_empty() => {
            let title = article.title.trim().to_string();
            let body = unescape(article.text_content.trim());
            let body = body.as_str();
            let markdown = if title.is_empty() || body.starts_with(&format!("# {title}")) {
                body.to_string()
            } else {
                format!("# {title}\n\n{body}")
            };
            Page { title, markdown }
        }
        _ => {
            let doc = dom_query::Document::from(html);
            let title = doc.select("title").text().trim().to_string();
            let markdown = unescape(doc.md(Some(BOILERPLATE_TAGS)).trim());
            Page { title, markdown }
        }
    }
}

/// Characters the converter escapes everywhere though Markdown reads them as syntax only at a
/// line's start (`1.`, `-`, `+`, `#`) or never alone (`(`, `)`, `!`, `=`).
const NEEDLESS_ESCAPES: &[char] = &['.', '(', ')', '!', '-', '+', '#', '='];

/// The Markdown without the escapes that only cost the model tokens (`2\.08`, `\(m\)`): kept
/// at a line's start (`1\. `, `\- `), inside code spans and fenced blocks left as they are.
fn unescape(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fenced = false;
    for line in markdown.split_inclusive('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.contains('\\') {
            out.push_str(line);
            continue;
        }
        let lead = line.len() - line.trim_start().len();
        let mut in_code = false;
        let mut chars = line.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '`' {
                in_code = !in_code;
            }
            if c == '\\'
                && !in_code
                && let Some(&(_, next)) = chars.peek()
                && NEEDLESS_ESCAPES.contains(&next)
            {
                let numbered = next == '.' && line[lead..i].bytes().all(|b| b.is_ascii_digit());
                if i != lead && !numbered {
                    out.push(next);
                    chars.next();
                    continue;
                }
            }
            out.push(c);
        }
    }
    out
}

/// The text of a PDF. pdf-extract panics on some malformed files, so callers run this where a
/// panic is caught (a blocking task).
pub fn pdf_text(body: &[u8]) -> Result<String, String> {
    pdf_extract::extract_text_from_mem(body).map_err(|e| format!("cannot read the PDF: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charsets_come_from_the_header_the_bom_or_the_page() {
        let latin1 = b"<html><head><meta charset=\"iso-8859-1\"></head><body>caf\xe9</body></html>";
        assert!(decode(latin1, None, true).contains("café"));
        assert!(decode(b"caf\xe9", Some("windows-1252"), false).contains("café"));
        let sjis = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">\x93\xfa\x96\x7b";
        assert!(decode(sjis, None, true).contains("日本"));
        assert_eq!(decode(b"\xef\xbb\xbfhi", Some("iso-8859-1"), false), "hi");
        assert_eq!(decode(b"caf\xc3\xa9", None, true), "café");
        assert_eq!(
            media_type("Text/HTML; Charset=\"UTF-8\""),
            ("text/html".into(), Some("utf-8".into()))
        );
    }

    #[test]
    fn escapes_that_matter_stay() {
        let md = "Level \\(m\\) is 2\\.08\\!\n1\\. not a list\n\\- not an item\n`a\\.b` x\\.y\n```\nq\\.r\n```\n";
        assert_eq!(
            unescape(md),
            "Level (m) is 2.08!\n1\\. not a list\n\\- not an item\n`a\\.b` x.y\n```\nq\\.r\n```\n"
        );
    }

    #[test]
    fn kinds_come_from_the_type_or_the_first_bytes() {
        assert_eq!(kind_of("application/pdf", b""), Some(Kind::Pdf));
        assert_eq!(
            kind_of("application/octet-stream", b"%PDF-1.4"),
            Some(Kind::Pdf)
        );
        assert_eq!(kind_of("", b"  <!DOCTYPE html><html>"), Some(Kind::Html));
        assert_eq!(kind_of("application/json", b"{}"), Some(Kind::Text));
        assert_eq!(kind_of("image/png", b"\x89PNG"), None);
    }
}
