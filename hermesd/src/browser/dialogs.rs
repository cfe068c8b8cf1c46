//! JavaScript dialogs (alert, confirm, prompt, beforeunload): answered at once by
//! `browser.dialog_policy`, or — under `must_respond`, Hermes' default — left open for the model
//! to answer with `browser_dialog`, dismissed after `browser.dialog_timeout_s`. While one is
//! open the page's scripts are paused: anything that would run one is refused with the dialog
//! named, and input that opened one returns instead of waiting on it.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::{
    BrowserError,
    cdp::Cdp,
    events::{EventTask, LOOKUP_TIMEOUT, MAX_DIALOGS, clip, push_bounded},
    page::Page,
};
use crate::config::settings::DialogPolicy;

/// A JavaScript dialog waiting for `browser_dialog`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingDialog {
    pub id: String,
    pub kind: String,
    pub message: String,
    pub default_prompt: String,
}

impl PendingDialog {
    pub fn to_json(&self) -> Value {
        json!({"id": self.id, "type": self.kind, "message": self.message,
               "default_prompt": self.default_prompt})
    }
}

/// Answer the page's open dialog from the event side (policy or timeout).
async fn close_dialog(cdp: Cdp, session: String, accept: bool) {
    let params = json!({"accept": accept});
    let _ = cdp
        .call(
            Some(&session),
            "Page.handleJavaScriptDialog",
            params,
            LOOKUP_TIMEOUT,
        )
        .await;
}

impl EventTask {
    /// A dialog opened: answered by the policy at once, or left for the model with a
    /// watchdog that dismisses it after `browser.dialog_timeout_s`.
    pub(super) fn dialog_opened(&self, p: &Value) {
        let field = |k: &str| clip(p.get(k).and_then(Value::as_str).unwrap_or(""));
        let (kind, message) = (field("type"), field("message"));
        let answer = match self.dialogs {
            DialogPolicy::Accept => Some(true),
            DialogPolicy::Dismiss => Some(false),
            DialogPolicy::MustRespond => None,
        };
        let handled = match answer {
            Some(true) => "accepted",
            Some(false) => "dismissed",
            None => "waiting for browser_dialog",
        };
        let seen = json!({"type": kind, "message": message, "handled": handled});
        let mut pending = None;
        self.with_state(|s| {
            push_bounded(&mut s.dialogs, seen, MAX_DIALOGS);
            if answer.is_none() {
                s.dialogs_opened += 1;
                let dialog = PendingDialog {
                    id: format!("d-{}", s.dialogs_opened),
                    kind: kind.clone(),
                    message: message.clone(),
                    default_prompt: field("defaultPrompt"),
                };
                s.pending_dialog = Some(dialog.clone());
                pending = Some(dialog);
            }
        });
        let cdp = self.cdp.clone();
        let session = self.session.clone();
        let Some(dialog) = pending else {
            tokio::spawn(close_dialog(cdp, session, answer == Some(true)));
            return;
        };
        self.dialogs_opened.send_modify(|n| *n += 1);
        let state = Arc::clone(&self.state);
        let timeout = self.dialog_timeout;
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let expired = state.lock().is_ok_and(|mut s| {
                let same = s.pending_dialog.as_ref().is_some_and(|d| d.id == dialog.id);
                if same {
                    s.pending_dialog = None;
                }
                same
            });
            if expired {
                tracing::info!(dialog = %dialog.id, "browser dialog unanswered, dismissed");
                close_dialog(cdp, session, false).await;
            }
        });
    }
}

impl Page {
    /// Send user input (`Input.*`): done when the browser took it, or when it opened a dialog
    /// (which holds the browser's answer until the dialog is closed).
    pub async fn act(&self, method: &str, params: Value) -> Result<(), BrowserError> {
        self.blocked()?;
        let mut opened = self.dialogs_opened.clone();
        opened.borrow_and_update();
        tokio::select! {
            answer = self.call(method, params) => answer.map(|_| ()),
            () = changed(&mut opened) => Ok(()),
        }
    }

    /// The dialog waiting for `browser_dialog`, if one is open.
    pub fn pending_dialog(&self) -> Option<PendingDialog> {
        self.state.lock().ok()?.pending_dialog.clone()
    }

    /// An error when a dialog blocks the page (scripts and input would wait on it).
    pub(super) fn blocked(&self) -> Result<(), BrowserError> {
        match self.pending_dialog() {
            None => Ok(()),
            Some(d) => Err(BrowserError::Page(format!(
                "a JavaScript {} dialog blocks the page ({:?}, id {}): answer it with \
                 browser_dialog first",
                d.kind, d.message, d.id
            ))),
        }
    }

    /// Answer the open dialog (`dialog_id`, when given, must name it): accept, with
    /// `prompt_text` for a `prompt()`, or dismiss.
    pub async fn answer_dialog(
        &self,
        accept: bool,
        prompt_text: Option<&str>,
        dialog_id: Option<&str>,
    ) -> Result<PendingDialog, BrowserError> {
        let dialog = {
            let mut state = self
                .state
                .lock()
                .map_err(|_| BrowserError::Page("the page's state is unusable".into()))?;
            match (&state.pending_dialog, dialog_id) {
                (None, _) => {
                    return Err(BrowserError::Arguments(
                        "no dialog is open on the page".into(),
                    ));
                }
                (Some(d), Some(id)) if d.id != id.trim() => {
                    return Err(BrowserError::Arguments(format!(
                        "no dialog {id} is open; the open one is {}",
                        d.id
                    )));
                }
                _ => {}
            }
            state.pending_dialog.take()
        };
        let dialog = dialog.ok_or_else(|| BrowserError::Arguments("no dialog is open".into()))?;
        let mut params = json!({"accept": accept});
        if accept && dialog.kind == "prompt" {
            params["promptText"] = json!(prompt_text.unwrap_or(""));
        }
        self.call("Page.handleJavaScriptDialog", params).await?;
        Ok(dialog)
    }
}

/// Resolves when `opened` changes; never when its sender is gone.
pub(super) async fn changed(opened: &mut watch::Receiver<u64>) {
    if opened.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}
