//! `web_extract`'s work: each URL fetched (at most five, side by side), its body turned into
//! Markdown off the async threads, capped, and cut to the call's character budget as Hermes
//! cuts it — head and tail with a footer naming the file that holds the whole text.

use std::{path::Path, sync::LazyLock, time::Duration};

use futures_util::future::join_all;
use serde_json::{Value, json};

use super::{
    convert::{self, Kind},
    fetch,
};
use crate::{
    llm::HttpClient,
    policy::url::UrlPolicy,
    tools::{ToolError, spill},
};

/// URLs one call may name (Hermes' bound).
pub const MAX_URLS: usize = 5;
/// How long one URL may take, redirects and body included.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);
/// The most Markdown kept of one page (Hermes' cap on the stored copy).
const MAX_MARKDOWN_CHARS: usize = 2_000_000;

/// The URLs of a call: strings, or search results carrying `url` / `href` (as Hermes takes them).
pub fn urls_of(args: &Value) -> Result<Vec<Result<String, String>>, ToolError> {
    let Some(items) = args.get("urls").and_then(Value::as_array) else {
        return Err(ToolError::Arguments(
            "`urls` is required and must be a list of URLs".into(),
        ));
    };
    if items.is_empty() {
        return Err(ToolError::Arguments("`urls` is empty".into()));
    }
    if items.len() > MAX_URLS {
        return Err(ToolError::Arguments(format!(
            "`urls` names {} URLs; at most {MAX_URLS} per call",
            items.len()
        )));
    }
    Ok(items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let url = match item {
                Value::Object(o) => o
                    .get("url")
                    .or_else(|| o.get("href"))
                    .and_then(Value::as_str),
                other => other.as_str(),
            };
            url.map(str::trim)
                .filter(|u| !u.is_empty())
                .map(str::to_string)
                .ok_or_else(|| {
                    format!(
                        "Invalid URL item at index {i}: expected a URL string or an object with \
                         a string 'url' or 'href' field"
                    )
                })
        })
        .collect())
}

/// One call's extraction.
pub struct Job<'a> {
    pub client: &'a HttpClient,
    pub policy: UrlPolicy,
    pub char_limit: usize,
    pub spill_dir: &'a Path,
    pub call_id: &'a str,
}

impl Job<'_> {
    /// `{"results": [{url, title, content, error}]}` in the order the URLs were given.
    pub async fn run(&self, urls: Vec<Result<String, String>>) -> Value {
        let pages = urls.into_iter().enumerate().map(|(i, url)| async move {
            let url = match url {
                Ok(url) => url,
                Err(error) => return json!({"url": "", "title": "", "content": "", "error": error}),
            };
            match self.page(i, &url).await {
                Ok((title, content)) => {
                    json!({"url": url, "title": title, "content": content, "error": null})
                }
                Err(error) => json!({"url": url, "title": "", "content": "", "error": error}),
            }
        });
        json!({"results": join_all(pages).await})
    }

    async fn page(&self, index: usize, url: &str) -> Result<(String, String), String> {
        let fetched =
            tokio::time::timeout(FETCH_TIMEOUT, fetch::fetch(self.client, self.policy, url))
                .await
                .map_err(|_| {
                    format!("{url} did not answer within {}s", FETCH_TIMEOUT.as_secs())
                })??;
        let (title, mut text) = read(fetched).await?;
        if let Some((end, _)) = text.char_indices().nth(MAX_MARKDOWN_CHARS) {
            text.truncate(end);
        }
        let text = images_as_placeholders(&text);
        Ok((title, self.budget(index, url, text)))
    }

    /// The whole text when it fits the budget, else Hermes' head (¾) and tail (¼) cut at line
    /// ends, with a footer naming the file holding the whole text.
    fn budget(&self, index: usize, url: &str, text: String) -> String {
        let total = text.chars().count();
        if total <= self.char_limit {
            return text;
        }
        let head_chars = self.char_limit * 3 / 4;
        let tail_chars = self.char_limit - head_chars;
        let head_end = text
            .char_indices()
            .nth(head_chars)
            .map_or(text.len(), |(i, _)| i);
        let mut head = &text[..head_end];
        if let Some(nl) = head.rfind('\n')
            && nl > head_end / 2
        {
            head = &head[..nl];
        }
        let tail_start = text
            .char_indices()
            .nth(total - tail_chars)
            .map_or(text.len(), |(i, _)| i);
        let mut tail = &text[tail_start..];
        if let Some(nl) = tail.find('\n')
            && nl < tail.len() / 2
        {
            tail = &tail[nl + 1..];
        }
        let name = format!("{}-page{}.md", spill::safe_stem(self.call_id), index + 1);
        let path = self.spill_dir.join(name);
        let stored = match spill::write_private(self.spill_dir, &path, &text) {
            Ok(()) => format!(
                "Full text saved to: {}\nTo read the omitted middle: read_file path=\"{}\" \
                 offset={} limit=200",
                path.display(),
                path.display(),
                head.matches('\n').count() + 2
            ),
            Err(e) => {
                tracing::warn!(url, path = %path.display(), error = %e, "cannot store a page's text");
                format!("The full text could not be stored ({e}); extract a more specific URL.")
            }
        };
        format!(
            "{head}\n\n[... middle omitted — see footer ...]\n\n{tail}\n\n──────── [TRUNCATED] \
             ────────\nShowing {} chars (head) + {} chars (tail) of {total} total clean \
             characters.\n{stored}",
            head.chars().count(),
            tail.chars().count()
        )
    }
}

/// A fetched body as (title, text): HTML and PDFs converted on a blocking thread.
async fn read(fetched: fetch::Fetched) -> Result<(String, String), String> {
    let (media, charset) = convert::media_type(&fetched.content_type);
    let Some(kind) = convert::kind_of(&media, &fetched.body) else {
        return Err(format!(
            "{} is {media}, which web_extract cannot read (HTML, PDF and text only)",
            fetched.url
        ));
    };
    let note = if fetched.truncated {
        format!(
            "\n\n[Only the first {} MiB of the page were read.]",
            fetch::MAX_BODY_BYTES / (1024 * 1024)
        )
    } else {
        String::new()
    };
    let url = fetched.url.clone();
    let converted = tokio::task::spawn_blocking(move || match kind {
        Kind::Html => {
            let html = convert::decode(&fetched.body, charset.as_deref(), true);
            let page = convert::to_markdown(&html, &fetched.url);
            Ok((page.title, page.markdown))
        }
        Kind::Pdf if fetched.truncated => Err(format!(
            "{} is a PDF larger than {} MiB",
            fetched.url,
            fetch::MAX_BODY_BYTES / (1024 * 1024)
        )),
        Kind::Pdf => convert::pdf_text(&fetched.body).map(|t| (String::new(), t)),
        Kind::Text => Ok((
            String::new(),
            convert::decode(&fetched.body, charset.as_deref(), false),
        )),
    })
    .await
    .map_err(|_| format!("{url} could not be converted (the converter failed on it)"))??;
    Ok((converted.0, format!("{}{note}", converted.1.trim())))
}

/// Inline base64 images (`![alt](data:…)`) become `[IMAGE: alt]`, as Hermes shows them.
fn images_as_placeholders(text: &str) -> String {
    static DATA_IMAGE: LazyLock<Option<regex::Regex>> =
        LazyLock::new(|| regex::Regex::new(r"!\[([^\]]*)\]\(data:[^)]*\)").ok());
    match DATA_IMAGE.as_ref() {
        Some(re) if text.contains("](data:") => re.replace_all(text, "[IMAGE: $1]").into_owned(),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_strings_or_search_results() {
        let args = json!({"urls": ["https://a.test/", {"url": "https://b.test/"}, {"href": " https://c.test/ "}, 3]});
        let urls = urls_of(&args).unwrap();
        assert_eq!(urls[0], Ok("https://a.test/".into()));
        assert_eq!(urls[1], Ok("https://b.test/".into()));
        assert_eq!(urls[2], Ok("https://c.test/".into()));
        assert!(urls[3].as_ref().unwrap_err().contains("index 3"));
        assert!(urls_of(&json!({"urls": []})).is_err());
        assert!(urls_of(&json!({"urls": vec!["a"; 6]})).is_err());
        assert!(urls_of(&json!({})).is_err());
    }

    #[test]
    fn long_pages_keep_head_and_tail_and_the_whole_text_is_stored() {
        let dir = tempfile::tempdir().unwrap();
        let job = Job {
            client: &HttpClient::new(Duration::from_secs(1)).unwrap(),
            policy: UrlPolicy::new(false),
            char_limit: 2_000,
            spill_dir: dir.path(),
            call_id: "call/1",
        };
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let out = job.budget(0, "https://a.test/", text.clone());
        assert!(out.starts_with("line 0\n"), "{out}");
        assert!(out.contains("line 999"));
        assert!(!out.contains("line 500\n"));
        assert!(out.contains("[TRUNCATED]"));
        let stored = dir.path().join("call_1-page1.md");
        assert_eq!(std::fs::read_to_string(&stored).unwrap(), text);
        assert!(out.contains(&stored.display().to_string()));
        assert_eq!(job.budget(0, "u", "short".into()), "short");
        assert_eq!(
            images_as_placeholders("a ![cat](data:image/png;base64,AAA) b"),
            "a [IMAGE: cat] b"
        );
    }
}
