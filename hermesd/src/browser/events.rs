//! What a page's events do: every paused request is judged by `policy::url` before the
//! browser may send it (top-level navigations, their redirects and subresources alike), console
//! messages and uncaught exceptions go into bounded buffers, dialogs go to `dialogs.rs`,
//! downloads are recorded, and loads, new documents and crashes are recorded for the calls
//! waiting on them.

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use super::{cdp::Cdp, cdp::Event, dialogs::PendingDialog};
use crate::{config::settings::DialogPolicy, policy::url::UrlPolicy};

/// Console messages (and separately errors, and dialogs) kept per page.
const MAX_MESSAGES: usize = 500;
pub(super) const MAX_DIALOGS: usize = 20;
/// Downloads remembered per page.
const MAX_DOWNLOADS: usize = 20;
/// Characters kept of one message.
const MAX_MESSAGE_CHARS: usize = 2_000;
/// How long the guard's name lookups may take.
pub(super) const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// A console message or an uncaught exception.
#[derive(Debug, Clone)]
pub struct ConsoleEntry {
    pub kind: String,
    pub text: String,
}

/// The page's state the event task keeps and the tools read.
#[derive(Debug, Default)]
pub struct PageState {
    pub console: VecDeque<ConsoleEntry>,
    pub errors: VecDeque<ConsoleEntry>,
    pub dialogs: VecDeque<Value>,
    /// Downloads begun (by GUID) and finished ones not yet reported to the model.
    pub downloads: VecDeque<Download>,
    /// The dialog blocking the page under `must_respond`, until answered or timed out.
    pub pending_dialog: Option<PendingDialog>,
    pub(super) dialogs_opened: u64,
    /// The execution context of the daemon's isolated world in the current document (where
    /// the snapshot's refs live), once made.
    pub world: Option<i64>,
    /// Why the guard last refused a document request (a navigation or a redirect).
    pub refused_document: Option<String>,
    /// Requests refused since the page was opened.
    pub refused: u64,
    pub crashed: bool,
}

/// A file the page downloaded, saved under its GUID in the downloads directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    pub guid: String,
    pub url: String,
    pub suggested_name: String,
    pub path: std::path::PathBuf,
    /// `inProgress`, `completed` or `canceled`.
    pub state: String,
    /// Whether the model was told of its end.
    pub reported: bool,
}

impl Download {
    pub fn to_json(&self) -> Value {
        json!({"path": self.path.display().to_string(), "suggested_name": self.suggested_name,
               "url": self.url, "state": self.state})
    }
}

pub(super) fn push_bounded<T>(queue: &mut VecDeque<T>, item: T, max: usize) {
    if queue.len() == max {
        queue.pop_front();
    }
    queue.push_back(item);
}

pub(super) fn clip(text: &str) -> String {
    match text.char_indices().nth(MAX_MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// What the event task needs.
pub struct EventTask {
    pub cdp: Cdp,
    pub session: String,
    pub state: Arc<Mutex<PageState>>,
    pub policy: UrlPolicy,
    pub dialogs: DialogPolicy,
    /// How long a dialog may wait for `browser_dialog` under `must_respond`.
    pub dialog_timeout: Duration,
    /// Counts `load` events of the main frame.
    pub loads: watch::Sender<u64>,
    /// Counts dialogs left open for the model (a click that opened one stops waiting).
    pub dialogs_opened: watch::Sender<u64>,
    /// Where downloads are saved.
    pub downloads: std::path::PathBuf,
}

impl EventTask {
    /// Handle events until the connection ends.
    pub async fn run(self, mut events: mpsc::Receiver<Event>) {
        while let Some(event) = events.recv().await {
            if event.session.as_deref() != Some(self.session.as_str()) {
                continue;
            }
            self.handle(event);
        }
    }

    pub(super) fn with_state(&self, f: impl FnOnce(&mut PageState)) {
        if let Ok(mut state) = self.state.lock() {
            f(&mut state);
        }
    }

    fn handle(&self, event: Event) {
        let p = &event.params;
        match event.method.as_str() {
            "Fetch.requestPaused" => self.judge(p),
            "Page.loadEventFired" => {
                self.loads.send_modify(|n| *n += 1);
            }
            "Page.frameNavigated" => {
                let main = p.pointer("/frame/parentId").is_none();
                if main {
                    self.with_state(|s| s.world = None);
                }
            }
            "Runtime.executionContextsCleared" => self.with_state(|s| s.world = None),
            "Runtime.executionContextDestroyed" => {
                let id = p.get("executionContextId").and_then(Value::as_i64);
                self.with_state(|s| {
                    if s.world.is_some() && s.world == id {
                        s.world = None;
                    }
                });
            }
            "Runtime.consoleAPICalled" => {
                let kind = p.get("type").and_then(Value::as_str).unwrap_or("log");
                let text = p
                    .get("args")
                    .and_then(Value::as_array)
                    .map(|args| args.iter().map(remote_text).collect::<Vec<_>>().join(" "))
                    .unwrap_or_default();
                let entry = ConsoleEntry {
                    kind: kind.to_string(),
                    text: clip(&text),
                };
                self.with_state(|s| push_bounded(&mut s.console, entry, MAX_MESSAGES));
            }
            "Runtime.exceptionThrown" => {
                let details = p.get("exceptionDetails").unwrap_or(&Value::Null);
                let text = details
                    .pointer("/exception/description")
                    .and_then(Value::as_str)
                    .or_else(|| details.get("text").and_then(Value::as_str))
                    .unwrap_or("uncaught exception");
                let entry = ConsoleEntry {
                    kind: "exception".into(),
                    text: clip(text),
                };
                self.with_state(|s| push_bounded(&mut s.errors, entry, MAX_MESSAGES));
            }
            "Page.javascriptDialogOpening" => self.dialog_opened(p),
            "Page.downloadWillBegin" => {
                let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let guid = field("guid");
                // The GUID names the file; anything else is not a file of the directory.
                if guid.is_empty() || !guid.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
                    return;
                }
                let download = Download {
                    path: self.downloads.join(&guid),
                    guid,
                    url: clip(&field("url")),
                    suggested_name: clip(&field("suggestedFilename")),
                    state: "inProgress".into(),
                    reported: false,
                };
                self.with_state(|s| push_bounded(&mut s.downloads, download, MAX_DOWNLOADS));
            }
            "Page.downloadProgress" => {
                let guid = p.get("guid").and_then(Value::as_str).unwrap_or("");
                let state = p.get("state").and_then(Value::as_str).unwrap_or("");
                if state != "inProgress" {
                    self.with_state(|s| {
                        if let Some(d) = s.downloads.iter_mut().find(|d| d.guid == guid) {
                            d.state = state.to_string();
                        }
                    });
                }
            }
            // One dialog at a time blocks a page: whichever way it closed, none is open now.
            "Page.javascriptDialogClosed" => self.with_state(|s| s.pending_dialog = None),
            "Inspector.targetCrashed" => self.with_state(|s| s.crashed = true),
            _ => {}
        }
    }

    /// Let a paused request go on, or fail it when the URL rule refuses it.
    fn judge(&self, p: &Value) {
        let Some(id) = p.get("requestId").and_then(Value::as_str) else {
            return;
        };
        let id = id.to_string();
        let url = p
            .pointer("/request/url")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let document = p.get("resourceType").and_then(Value::as_str) == Some("Document");
        let cdp = self.cdp.clone();
        let session = self.session.clone();
        let policy = self.policy;
        let state = Arc::clone(&self.state);
        // Lookups run beside each other; the browser waits for each answer.
        tokio::spawn(async move {
            let verdict = check(&policy, &url).await;
            let (method, params) = match verdict {
                Ok(()) => ("Fetch.continueRequest", json!({"requestId": id})),
                Err(why) => {
                    tracing::info!(url = %url, "browser request refused: {why}");
                    if let Ok(mut s) = state.lock() {
                        s.refused += 1;
                        if document {
                            s.refused_document = Some(why);
                        }
                    }
                    (
                        "Fetch.failRequest",
                        json!({"requestId": id, "errorReason": "BlockedByClient"}),
                    )
                }
            };
            let _ = cdp
                .call(Some(&session), method, params, LOOKUP_TIMEOUT)
                .await;
        });
    }
}

/// The URL rule for one request: http(s) judged by `policy::url` (the name resolved and every
/// address judged), `data:`, `blob:` and `about:` allowed, anything else refused.
pub async fn check(policy: &UrlPolicy, url: &str) -> Result<(), String> {
    let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
    if matches!(scheme.as_str(), "data" | "blob" | "about") {
        return Ok(());
    }
    let destination = policy.check_url(url).map_err(|e| e.to_string())?;
    policy
        .addresses(&destination, LOOKUP_TIMEOUT)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A console argument as text.
fn remote_text(arg: &Value) -> String {
    match arg.get("value") {
        Some(Value::String(s)) => s.clone(),
        Some(v) if !v.is_null() => v.to_string(),
        _ => arg
            .get("description")
            .and_then(Value::as_str)
            .or_else(|| arg.get("type").and_then(Value::as_str))
            .unwrap_or("")
            .to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn requests_are_judged_by_the_url_rule() {
        let strict = UrlPolicy::new(false);
        let open = UrlPolicy::new(true);
        assert!(check(&strict, "data:text/html,hi").await.is_ok());
        assert!(check(&strict, "about:blank").await.is_ok());
        let file = check(&open, "file:///etc/passwd").await.unwrap_err();
        assert!(file.starts_with("Blocked:"), "{file}");
        let loopback = check(&strict, "http://127.0.0.1:8080/").await.unwrap_err();
        assert!(loopback.contains("allow_private_urls"), "{loopback}");
        assert!(check(&open, "http://127.0.0.1:8080/").await.is_ok());
        let metadata = check(&open, "http://169.254.169.254/latest/")
            .await
            .unwrap_err();
        assert!(metadata.contains("never fetched"), "{metadata}");
    }
}
