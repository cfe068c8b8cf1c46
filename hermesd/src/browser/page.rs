//! One session's browser: the process this daemon started (or a page in the browser at
//! `browser.cdp_url`), its own browser context and page, and the commands the tools send it.
//! Every wait is bounded by `browser.command_timeout`.

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde_json::{Value, json};
use tokio::sync::watch;

use super::{
    BrowserError, Start,
    cdp::Cdp,
    dialogs::changed,
    events::{EventTask, PageState},
    launch::{self, Launched},
};

/// A browser and the one page a session drives in it.
#[derive(Debug)]
pub struct Page {
    pub(super) cdp: Cdp,
    pub(super) session: String,
    pub(super) target: String,
    context: String,
    process: Option<Launched>,
    pub state: Arc<Mutex<PageState>>,
    loads: watch::Receiver<u64>,
    pub(super) dialogs_opened: watch::Receiver<u64>,
    pub(super) timeout: Duration,
    /// Whether anything was loaded yet (the tools need a `browser_navigate` first).
    pub navigated: bool,
}

impl Page {
    /// Start (or attach to) a browser and open a page in a context of its own.
    pub async fn open(start: &Start) -> Result<Self, BrowserError> {
        let timeout = start.settings.command_timeout;
        let (ws_url, process) = if start.settings.cdp_url.is_empty() {
            let exe = start
                .executable
                .as_deref()
                .ok_or_else(|| BrowserError::Start(super::unavailable_reason().to_string()))?;
            let launched = launch::launch(exe, &start.profiles, timeout, start.policy).await?;
            (launched.ws_url.clone(), Some(launched))
        } else {
            (
                resolve_endpoint(&start.settings.cdp_url, timeout).await?,
                None,
            )
        };
        let opened = Self::attach(&ws_url, process, start, timeout).await;
        match opened {
            Ok(page) => Ok(page),
            Err((e, Some(process))) => {
                process.stop().await;
                Err(e)
            }
            Err((e, None)) => Err(e),
        }
    }

    async fn attach(
        ws_url: &str,
        process: Option<Launched>,
        start: &Start,
        timeout: Duration,
    ) -> Result<Self, (BrowserError, Option<Launched>)> {
        let (cdp, events) = match Cdp::connect(ws_url, timeout).await {
            Ok(c) => c,
            Err(e) => return Err((e, process)),
        };
        let setup = async {
            let context = cdp
                .call(
                    None,
                    "Target.createBrowserContext",
                    json!({"disposeOnDetach": true}),
                    timeout,
                )
                .await?;
            let context = str_field(&context, "browserContextId")?;
            let target = cdp
                .call(
                    None,
                    "Target.createTarget",
                    json!({"url": "about:blank", "browserContextId": context}),
                    timeout,
                )
                .await?;
            let target = str_field(&target, "targetId")?;
            let attached = cdp
                .call(
                    None,
                    "Target.attachToTarget",
                    json!({"targetId": target, "flatten": true}),
                    timeout,
                )
                .await?;
            let session = str_field(&attached, "sessionId")?;
            Ok::<_, BrowserError>((context, target, session))
        };
        let (context, target, session) = match setup.await {
            Ok(ids) => ids,
            Err(e) => return Err((e, process)),
        };
        let state = Arc::new(Mutex::new(PageState::default()));
        let (loads_tx, loads) = watch::channel(0);
        let (dialogs_tx, dialogs_opened) = watch::channel(0);
        tokio::spawn(
            EventTask {
                cdp: cdp.clone(),
                session: session.clone(),
                state: Arc::clone(&state),
                policy: start.policy,
                dialogs: start.settings.dialog_policy,
                dialog_timeout: start.settings.dialog_timeout,
                loads: loads_tx,
                dialogs_opened: dialogs_tx,
                downloads: start.downloads.clone(),
            }
            .run(events),
        );
        let page = Self {
            cdp,
            session,
            target,
            context,
            process,
            state,
            loads,
            dialogs_opened,
            timeout,
            navigated: false,
        };
        let enable = async {
            page.call("Page.enable", json!({})).await?;
            page.call("Runtime.enable", json!({})).await?;
            page.call("Inspector.enable", json!({})).await?;
            // Every request waits for the URL rule (see `events.rs`).
            page.call("Fetch.enable", json!({"patterns": [{"urlPattern": "*"}]}))
                .await?;
            page.cdp
                .call(
                    None,
                    "Browser.setDownloadBehavior",
                    // Saved under a GUID name (a page cannot choose the file name) and
                    // reported by `Page.download*` events.
                    json!({
                        "behavior": "allowAndName",
                        "browserContextId": page.context,
                        "downloadPath": start.downloads.to_string_lossy(),
                        "eventsEnabled": true,
                    }),
                    timeout,
                )
                .await?;
            Ok::<_, BrowserError>(())
        };
        if let Err(e) = enable.await {
            let process = page.into_process().await;
            return Err((e, process));
        }
        Ok(page)
    }

    /// Close the page's context and connection; the launched process is handed back.
    async fn into_process(mut self) -> Option<Launched> {
        let quick = Duration::from_secs(2);
        if !self.cdp.is_closed() {
            let _ = self
                .cdp
                .call(
                    None,
                    "Target.closeTarget",
                    json!({"targetId": self.target}),
                    quick,
                )
                .await;
            let _ = self
                .cdp
                .call(
                    None,
                    "Target.disposeBrowserContext",
                    json!({"browserContextId": self.context}),
                    quick,
                )
                .await;
        }
        self.cdp.close();
        self.process.take()
    }

    /// Close the page, and the browser when this daemon started it (its process group killed,
    /// its profile removed).
    pub async fn close(self) {
        if let Some(process) = self.into_process().await {
            process.stop().await;
        }
    }

    /// The browser's process id, when this daemon started it.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(Launched::pid)
    }

    /// Whether the browser is still there to use.
    pub fn alive(&mut self) -> bool {
        let crashed = self.state.lock().map(|s| s.crashed).unwrap_or(true);
        !self.cdp.is_closed() && !crashed && !self.process.as_mut().is_some_and(Launched::exited)
    }

    /// A command to the page.
    pub async fn call(&self, method: &str, params: Value) -> Result<Value, BrowserError> {
        self.cdp
            .call(Some(&self.session), method, params, self.timeout)
            .await
    }

    /// A command to the page whose answer is read into `T`.
    pub async fn call_as<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
    ) -> Result<T, BrowserError> {
        self.cdp
            .call_as(Some(&self.session), method, json!({}), self.timeout)
            .await
    }

    /// Evaluate `expression` in the page; its value (by value) or the exception's text.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, BrowserError> {
        self.blocked()?;
        let answer = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true, "awaitPromise": true,
                       "userGesture": true}),
            )
            .await?;
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details
                .pointer("/exception/description")
                .and_then(Value::as_str)
                .or_else(|| details.get("text").and_then(Value::as_str))
                .unwrap_or("the expression threw");
            return Err(BrowserError::Page(text.to_string()));
        }
        Ok(answer
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }

    /// Load `url` and wait for its `load` event; a refused navigation or redirect says why.
    pub async fn navigate(&mut self, url: &str) -> Result<(), BrowserError> {
        if let Ok(mut s) = self.state.lock() {
            s.refused_document = None;
        }
        let before = *self.loads.borrow_and_update();
        let answer = self.call("Page.navigate", json!({"url": url})).await?;
        self.navigated = true;
        if let Some(error) = answer.get("errorText").and_then(Value::as_str) {
            return Err(self.refusal().unwrap_or_else(|| {
                BrowserError::Page(format!("navigation to {url} failed: {error}"))
            }));
        }
        // A same-document navigation (a fragment) has no loader and no load event.
        if answer.get("loaderId").is_none() {
            return Ok(());
        }
        self.wait_load(before).await
    }

    /// Wait until a `load` event after the `before`th.
    pub async fn wait_load(&mut self, before: u64) -> Result<(), BrowserError> {
        let timeout = self.timeout;
        let mut opened = self.dialogs_opened.clone();
        opened.borrow_and_update();
        let waited = {
            let wait = self.loads.wait_for(|n| *n > before);
            tokio::select! {
                // A dialog the page opened while loading holds the load until it is answered.
                () = changed(&mut opened) => Ok(()),
                waited = tokio::time::timeout(timeout, wait) => match waited {
                    Ok(Ok(_)) => Ok(()),
                    Ok(Err(_)) => Err(false),
                    Err(_) => Err(true),
                },
            }
        };
        match waited {
            Ok(()) => Ok(()),
            Err(false) => Err(BrowserError::Gone),
            Err(true) => Err(self.refusal().unwrap_or_else(|| {
                BrowserError::Timeout(format!(
                    "the page did not finish loading within {}s",
                    timeout.as_secs()
                ))
            })),
        }
    }

    /// The load events seen so far.
    pub fn loads(&mut self) -> u64 {
        *self.loads.borrow_and_update()
    }

    fn refusal(&self) -> Option<BrowserError> {
        let why = self.state.lock().ok()?.refused_document.take()?;
        Some(BrowserError::Refused(why))
    }

    /// The current URL and title.
    pub async fn location(&self) -> Result<(String, String), BrowserError> {
        let v = self.evaluate("[location.href, document.title]").await?;
        let get = |i: usize| v.get(i).and_then(Value::as_str).unwrap_or("").to_string();
        Ok((get(0), get(1)))
    }

    /// Downloads that ended since the model was last told, marked told.
    pub fn finished_downloads(&self) -> Vec<Value> {
        let Ok(mut s) = self.state.lock() else {
            return Vec::new();
        };
        s.downloads
            .iter_mut()
            .filter(|d| d.state != "inProgress" && !d.reported)
            .map(|d| {
                d.reported = true;
                d.to_json()
            })
            .collect()
    }

    /// Call `function` (JavaScript source) with `this` = the object `object`.
    pub async fn call_on(
        &self,
        object: &str,
        function: &str,
        args: Value,
    ) -> Result<Value, BrowserError> {
        self.blocked()?;
        let mut opened = self.dialogs_opened.clone();
        opened.borrow_and_update();
        let call = self.call(
            "Runtime.callFunctionOn",
            json!({"objectId": object, "functionDeclaration": function,
                   "arguments": args, "returnByValue": true, "userGesture": true}),
        );
        let answer = tokio::select! {
            answer = call => answer?,
            // The function opened a dialog, which holds its answer until the dialog is closed.
            () = changed(&mut opened) => return Ok(Value::Null),
        };
        if let Some(details) = answer.get("exceptionDetails") {
            let text = details
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("threw");
            return Err(BrowserError::Page(text.to_string()));
        }
        Ok(answer
            .pointer("/result/value")
            .cloned()
            .unwrap_or(Value::Null))
    }
}

fn str_field(v: &Value, key: &str) -> Result<String, BrowserError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| BrowserError::Protocol(format!("the browser's answer has no {key}")))
}

/// The browser WebSocket URL of `browser.cdp_url`: a `ws://` URL as it is, an `http://`
/// endpoint asked for it at `/json/version`.
async fn resolve_endpoint(cdp_url: &str, timeout: Duration) -> Result<String, BrowserError> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    if cdp_url.starts_with("ws://") || cdp_url.starts_with("wss://") {
        return Ok(cdp_url.to_string());
    }
    let authority = cdp_url
        .strip_prefix("http://")
        .unwrap_or(cdp_url)
        .trim_end_matches('/')
        .split('/')
        .next()
        .unwrap_or("");
    let bad = |why: String| BrowserError::Start(format!("browser.cdp_url {cdp_url}: {why}"));
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(authority)
            .await
            .map_err(|e| bad(e.to_string()))?;
        let request = format!("GET /json/version HTTP/1.0\r\nHost: {authority}\r\n\r\n");
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| bad(e.to_string()))?;
        let mut body = Vec::new();
        stream
            .take(1 << 20)
            .read_to_end(&mut body)
            .await
            .map_err(|e| bad(e.to_string()))?;
        Ok::<_, BrowserError>(body)
    };
    let body = tokio::time::timeout(timeout, ask)
        .await
        .map_err(|_| bad("no answer".into()))??;
    let text = String::from_utf8_lossy(&body);
    let json_part = text.split("\r\n\r\n").nth(1).unwrap_or("");
    let version: Value =
        serde_json::from_str(json_part).map_err(|e| bad(format!("/json/version: {e}")))?;
    version
        .get("webSocketDebuggerUrl")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| bad("/json/version names no webSocketDebuggerUrl".into()))
}

/// Whether `path` exists (for the downloads directory).
pub fn ensure_dir(path: &Path) -> Result<(), BrowserError> {
    std::fs::create_dir_all(path)
        .map_err(|e| BrowserError::Start(format!("cannot create {}: {e}", path.display())))
}
