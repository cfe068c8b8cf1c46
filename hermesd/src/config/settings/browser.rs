//! The `browser` section (Hermes' keys): a running browser to attach to (`browser.cdp_url`),
//! how long an idle browser lives (`browser.inactivity_timeout`), how long one browser command
//! may take (`browser.command_timeout`, also the start-up limit) and what happens to a page's
//! JavaScript dialogs (`browser.dialog_policy`, `browser.dialog_timeout_s`).

use std::{fmt, time::Duration};

use super::read::Reader;

/// What a JavaScript dialog (alert, confirm, prompt, beforeunload) gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DialogPolicy {
    /// Left open for the model to answer with `browser_dialog` (`must_respond`, Hermes'
    /// default), dismissed after `browser.dialog_timeout_s`.
    MustRespond,
    /// Dismissed at once (`auto_dismiss`).
    Dismiss,
    /// Accepted at once (`auto_accept`).
    Accept,
}

impl fmt::Display for DialogPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MustRespond => "must_respond",
            Self::Dismiss => "auto_dismiss",
            Self::Accept => "auto_accept",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct BrowserSection {
    /// `browser.cdp_url`: a running browser's DevTools endpoint; empty starts one per session.
    pub cdp_url: String,
    /// `browser.inactivity_timeout`: an idle session's browser is closed after this long.
    pub inactivity_timeout: Duration,
    /// `browser.command_timeout`: one command (a page load included) and the start-up.
    pub command_timeout: Duration,
    pub dialog_policy: DialogPolicy,
    /// `browser.dialog_timeout_s`: a dialog left open under `must_respond` is dismissed after
    /// this long, so a page cannot stay blocked.
    pub dialog_timeout: Duration,
}

impl Default for BrowserSection {
    fn default() -> Self {
        Self {
            cdp_url: String::new(),
            inactivity_timeout: Duration::from_secs(300),
            command_timeout: Duration::from_secs(30),
            dialog_policy: DialogPolicy::MustRespond,
            dialog_timeout: Duration::from_secs(300),
        }
    }
}

impl BrowserSection {
    pub fn read(r: &mut Reader<'_>) -> Self {
        let d = Self::default();
        let secs = |r: &mut Reader<'_>, key: &str, default: Duration| {
            let s = r.seconds(key, default.as_secs_f64());
            // Zero would close a browser between two calls of one turn.
            Duration::from_secs_f64(s.max(0.1))
        };
        Self {
            cdp_url: r.text("browser.cdp_url").trim().to_string(),
            inactivity_timeout: secs(r, "browser.inactivity_timeout", d.inactivity_timeout),
            command_timeout: secs(r, "browser.command_timeout", d.command_timeout),
            dialog_policy: r.word(
                "browser.dialog_policy",
                d.dialog_policy,
                &[
                    ("auto_dismiss", DialogPolicy::Dismiss),
                    ("must_respond", DialogPolicy::MustRespond),
                    ("auto_accept", DialogPolicy::Accept),
                ],
            ),
            dialog_timeout: secs(r, "browser.dialog_timeout_s", d.dialog_timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_and_bad_values_fall_back() {
        let tree: serde_yaml::Value = serde_yaml::from_str(
            "browser: {cdp_url: ' ws://127.0.0.1:9222 ', inactivity_timeout: 1.5, \
             command_timeout: nope, dialog_policy: auto_accept}",
        )
        .unwrap();
        let mut r = Reader::new(&tree);
        let s = BrowserSection::read(&mut r);
        assert_eq!(s.cdp_url, "ws://127.0.0.1:9222");
        assert_eq!(s.inactivity_timeout, Duration::from_millis(1500));
        assert_eq!(s.command_timeout, Duration::from_secs(30));
        assert_eq!(s.dialog_policy, DialogPolicy::Accept);
        assert_eq!(r.into_notices().len(), 1);
    }
}
