//! `browser_cdp`: a raw DevTools command to the conversation's page, within an allow-list.
//! The page's session only (never the browser's), and only methods that act on the page as
//! its own scripts or a user could: scripts, the DOM, input, emulation, screenshots, cookies.
//! Everything that would step around the daemon's rules is refused — the request interception
//! that judges every URL (`Fetch.*`), other targets and contexts (`Target.*`, `Browser.*`,
//! `Storage.*`), certificate errors ignored (`Security.*`), a navigation that skips
//! `browser_navigate`'s checks, or a debugger that pauses the page for good. The methods that
//! name local files — a file handed to a page (`DOM.setFileInputFiles`, a drop with
//! `Input.dispatchDragEvent`) or a download directory (`Page.setDownloadBehavior`) — pass only
//! with every path inside the workspace (`raw_files.rs`).

use serde_json::Value;

use super::{BrowserError, page::Page};

/// Domains whose every method acts only on the page.
const PAGE_DOMAINS: &[&str] = &[
    "Runtime",
    "Input",
    "Emulation",
    "Accessibility",
    "CSS",
    "DOMSnapshot",
    "DOMStorage",
    "Animation",
    "Performance",
    "Overlay",
    "Log",
    "LayerTree",
];
/// Single methods of domains that also hold dangerous ones.
const PAGE_METHODS: &[&str] = &[
    "DOM.getDocument",
    "DOM.querySelector",
    "DOM.querySelectorAll",
    "DOM.getOuterHTML",
    "DOM.setOuterHTML",
    "DOM.describeNode",
    "DOM.resolveNode",
    "DOM.requestNode",
    "DOM.getBoxModel",
    "DOM.getContentQuads",
    "DOM.getNodeForLocation",
    "DOM.focus",
    "DOM.scrollIntoViewIfNeeded",
    "DOM.setAttributeValue",
    "DOM.removeAttribute",
    "DOM.removeNode",
    "DOM.setNodeValue",
    "DOM.enable",
    "DOM.disable",
    "Page.captureScreenshot",
    "Page.printToPDF",
    "Page.reload",
    "Page.stopLoading",
    "Page.getFrameTree",
    "Page.getNavigationHistory",
    "Page.getLayoutMetrics",
    "Page.handleJavaScriptDialog",
    "Page.bringToFront",
    "Page.getResourceTree",
    "Page.getResourceContent",
    "Network.getCookies",
    "Network.setCookie",
    "Network.setCookies",
    "Network.deleteCookies",
    "Network.setExtraHTTPHeaders",
    "Network.setUserAgentOverride",
    "Network.emulateNetworkConditions",
    "Network.setCacheDisabled",
    "Network.getResponseBody",
];

/// Whether `method` may be sent by the model, or why not.
pub fn allowed(method: &str) -> Result<(), String> {
    let Some((domain, name)) = method.split_once('.') else {
        return Err(format!("{method:?} is not a CDP method (Domain.method)"));
    };
    if name.is_empty() || name.contains('.') {
        return Err(format!("{method:?} is not a CDP method (Domain.method)"));
    }
    if PAGE_DOMAINS.contains(&domain) || PAGE_METHODS.contains(&method) {
        return Ok(());
    }
    let instead = match method {
        "Page.navigate" => "; use browser_navigate",
        m if m.starts_with("Fetch.") => ": it would switch off the URL rule",
        _ => "",
    };
    Err(format!(
        "{method} is not allowed{instead} (browser_cdp acts on the page only: Runtime, DOM, \
         Input, Emulation, CSS, Page.captureScreenshot/reload/printToPDF, Network cookies and \
         headers)"
    ))
}

impl Page {
    /// Send `method` with `params` to the page when the allow-list lets it, local paths
    /// confined to the workspace `cwd` as `policy` judges them; the raw answer.
    pub async fn raw_command(
        &self,
        method: &str,
        params: Value,
        cwd: &std::path::Path,
        policy: &crate::policy::paths::PathPolicy,
    ) -> Result<Value, BrowserError> {
        if !params.is_object() {
            return Err(BrowserError::Arguments(
                "`params` must be a JSON object".into(),
            ));
        }
        let params = if super::raw_files::names_paths(method) {
            super::raw_files::confine_paths(method, params, cwd, policy)
                .map_err(BrowserError::Arguments)?
        } else {
            allowed(method).map_err(BrowserError::Arguments)?;
            params
        };
        self.call(method, params).await
    }
}

#[cfg(test)]
mod tests {
    use super::allowed;

    #[test]
    fn only_page_methods_pass() {
        for ok in [
            "Runtime.evaluate",
            "DOM.getOuterHTML",
            "Input.dispatchKeyEvent",
            "Page.captureScreenshot",
            "Network.getCookies",
        ] {
            assert!(allowed(ok).is_ok(), "{ok}");
        }
        for refused in [
            "Fetch.disable",
            "Target.createTarget",
            "Browser.setDownloadBehavior",
            "Page.setDownloadBehavior",
            "DOM.setFileInputFiles",
            "Security.setIgnoreCertificateErrors",
            "Storage.getCookies",
            "Debugger.pause",
            "Page.navigate",
            "Network.loadNetworkResource",
            "Runtime",
            "Runtime.a.b",
        ] {
            assert!(allowed(refused).is_err(), "{refused}");
        }
        assert!(allowed("Fetch.disable").unwrap_err().contains("URL rule"));
    }
}
