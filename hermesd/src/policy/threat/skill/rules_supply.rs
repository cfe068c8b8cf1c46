//! Supply-chain rules: download-and-execute (`curl … | sh`, `bash <(curl …)`, fetched code
//! passed to exec), scripts run straight after download, unpinned installs, run-time fetches.

use std::ops::Range;

use super::Severity::{Critical, Medium};
use super::checks::is_loopback;
use super::rules::{Rule, SUPPLY_CHAIN as S, checked, rule};
use super::shell;
use super::text::after;

/// Interpreters that run code given on the command line or from a process substitution.
macro_rules! runner {
    () => {
        r"\b(?:(?:ba|z|k|da)?sh|python[\d.]*|perl|ruby|node|php)\s+(?:-[\w-]+\s+)*"
    };
}

pub(super) static RULES: &[Rule] = &[
    checked(
        "curl_pipe_shell",
        Critical,
        S,
        r"\b(?:curl|fetch)\b[^\n]*\|",
        "pipes a download into a shell (curl … | sh)",
        shell::curl_to_shell,
    ),
    checked(
        "wget_pipe_shell",
        Critical,
        S,
        r"\bwget\b[^\n]*\|",
        "pipes a download into a shell (wget … | sh)",
        shell::wget_to_shell,
    ),
    checked(
        "curl_pipe_python",
        Critical,
        S,
        r"\b(?:curl|wget|fetch)\b[^\n]*\|",
        "pipes a download into an interpreter (curl … | python)",
        shell::download_to_interpreter,
    ),
    rule(
        "remote_exec_substitution",
        Critical,
        S,
        concat!(
            runner!(),
            r"<\(\s*(?:sudo\s+)?(?:curl|wget)\b|\bsource\s+<\(\s*(?:curl|wget)\b|(?:^|[;&|]\s*)\.\s+<\(\s*(?:curl|wget)\b|",
            runner!(),
            r#"-[a-z]*[ce]\s+["']?(?:\$\(|`)\s*(?:curl|wget)\b|\beval\s+["']?(?:\$\(|`)\s*(?:curl|wget)\b"#
        ),
        "runs a download directly (bash <(curl …), sh -c \"$(curl …)\")",
    ),
    rule(
        "remote_code_exec",
        Critical,
        S,
        r"\b(?:exec|eval)\s*\(\s*(?:requests|httpx|urllib\.request\.urlopen|urlopen|urllib2\.urlopen)\b|\beval\s*\(\s*await\s+(?:\(\s*await\s+)?fetch\b|\b(?:iex|Invoke-Expression)\b[^\n]*\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString)\b|\b(?:iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString)\b[^\n]*\|\s*(?:iex|Invoke-Expression)\b",
        "executes code fetched from the network",
    ),
    checked(
        "download_exec_chain",
        Critical,
        S,
        r"\b(?:curl|wget)\b[^\n]*(?:&&|;)",
        "downloads a script and runs it without reading it",
        shell::runs_download,
    ),
    rule(
        "pep723_inline_deps",
        Medium,
        S,
        r"#\s*///\s*script\b",
        "PEP 723 inline script dependencies (check pinning)",
    ),
    checked(
        "unpinned_pip_install",
        Medium,
        S,
        r"\bpip[\d.]*\s+install\s+",
        "pip install without version pinning",
        pip_unpinned,
    ),
    checked(
        "unpinned_npm_install",
        Medium,
        S,
        r"\bnpm\s+(?:install|i)\s+",
        "npm install without version pinning",
        npm_unpinned,
    ),
    rule(
        "uv_run",
        Medium,
        S,
        r"\buv\s+run\s+",
        "uv run (may install unpinned dependencies)",
    ),
    checked(
        "remote_fetch",
        Medium,
        S,
        r#"\b(?:curl|wget)\b[^\n|;&]*?https?://|\b(?:httpx?\.get|requests\.get|fetch|urlopen)\s*\(\s*["']https?://"#,
        "fetches a remote resource at run time",
        not_loopback_url,
    ),
    rule(
        "git_clone",
        Medium,
        S,
        r"\bgit\s+clone\s+",
        "clones a git repository at run time",
    ),
    rule(
        "docker_pull",
        Medium,
        S,
        r"\bdocker\s+pull\s+",
        "pulls a Docker image at run time",
    ),
];

/// `pip install -r requirements.txt` and `pkg==1.2` are pinned (Hermes' look-aheads).
fn pip_unpinned(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.end);
    !(rest.starts_with("-r ") || rest.starts_with("--requirement") || rest.contains("=="))
}

/// `npm install pkg@1.2.3` is pinned.
fn npm_unpinned(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.end).as_bytes();
    !rest
        .windows(2)
        .any(|w| w[0] == b'@' && w[1].is_ascii_digit())
}

/// `curl http://localhost:8080/health` fetches nothing remote.
fn not_loopback_url(line: &str, m: Range<usize>) -> bool {
    let host = after(line, m.end)
        .split(['/', ':', '"', '\'', ' ', '?', '#'])
        .next()
        .unwrap_or("");
    !is_loopback(&host.to_ascii_lowercase())
}
