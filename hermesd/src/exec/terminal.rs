//! The `terminal` tool's argument handling and policy, as in Python's
//! `tools/terminal_tool.py`: defaults and the foreground timeout cap, the
//! refusal of long-lived/backgrounding commands in foreground mode, the
//! meaning of well-known non-zero exit codes, and the background-start result.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

/// Default command timeout in seconds (`TERMINAL_TIMEOUT`).
pub const DEFAULT_TIMEOUT_SECS: u64 = 180;
/// Largest timeout a foreground command may request (`TERMINAL_MAX_FOREGROUND_TIMEOUT`).
pub const FOREGROUND_MAX_TIMEOUT_SECS: u64 = 600;
/// Foreground output cap in characters (`tool_output.max_bytes`).
pub const DEFAULT_MAX_OUTPUT_CHARS: usize = 50_000;

/// Parsed `terminal` tool arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalArgs {
    /// Shell command line.
    pub command: String,
    /// Run as a tracked background process.
    pub background: bool,
    /// Requested timeout in seconds.
    pub timeout: Option<u64>,
    /// Working directory for this command.
    pub workdir: Option<String>,
    /// PTY requested (not supported locally; the command runs on pipes).
    pub pty: bool,
    /// Notify once when the background process exits.
    pub notify_on_complete: bool,
    /// Output substrings to watch for in a background process.
    pub watch_patterns: Option<Vec<String>>,
}

fn error_result(error: String) -> Value {
    json!({"output": "", "exit_code": -1, "error": error, "status": "error"})
}

fn json_type_name(value: Option<&Value>) -> &'static str {
    match value {
        None | Some(Value::Null) => "NoneType",
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(n)) if n.is_f64() => "float",
        Some(Value::Number(_)) => "int",
        Some(Value::String(_)) => "str",
        Some(Value::Array(_)) => "list",
        Some(Value::Object(_)) => "dict",
    }
}

/// Reads a JSON bool leniently (`true`, `"true"`, `1`).
pub(super) fn lenient_bool(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => {
            matches!(s.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes")
        }
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        _ => false,
    }
}

/// Reads a JSON integer leniently (numbers, numeric strings); `None` if absent.
pub(super) fn lenient_int(value: Option<&Value>) -> Option<i64> {
    match value? {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse::<f64>().ok().map(|f| f as i64),
        _ => None,
    }
}

impl TerminalArgs {
    /// What a background process started with these arguments reports unasked.
    pub fn notify(&self) -> super::Notify {
        super::Notify {
            on_complete: self.notify_on_complete,
            watch_patterns: self.watch_patterns.clone().unwrap_or_default(),
        }
    }

    /// Parses and checks the arguments. On refusal returns the tool result
    /// Python returns: an invalid command, a foreground timeout above
    /// [`FOREGROUND_MAX_TIMEOUT_SECS`], or a foreground command that should
    /// run in the background.
    pub fn parse(args: &Value) -> Result<Self, Value> {
        let command = match args.get("command") {
            Some(Value::String(c)) => c.clone(),
            other => {
                let got = json_type_name(other);
                return Err(error_result(format!(
                    "Invalid command: expected string, got {got}"
                )));
            }
        };
        let timeout = lenient_int(args.get("timeout"))
            .filter(|t| *t > 0)
            .map(|t| t.unsigned_abs());
        let watch_patterns = args
            .get("watch_patterns")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            });
        let parsed = Self {
            command,
            background: lenient_bool(args.get("background")),
            timeout,
            workdir: args
                .get("workdir")
                .and_then(Value::as_str)
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
            pty: lenient_bool(args.get("pty")),
            notify_on_complete: lenient_bool(args.get("notify_on_complete")),
            watch_patterns: watch_patterns.filter(|p| !p.is_empty()),
        };
        if !parsed.background {
            if let Some(t) = parsed.timeout.filter(|t| *t > FOREGROUND_MAX_TIMEOUT_SECS) {
                return Err(json!({"error": format!(
                    "Foreground timeout {t}s exceeds the maximum of {FOREGROUND_MAX_TIMEOUT_SECS}s. \
                     Use background=true with notify_on_complete=true for long-running commands."
                )}));
            }
            if let Some(guidance) = foreground_guidance(&parsed.command) {
                return Err(error_result(guidance.to_owned()));
            }
        }
        Ok(parsed)
    }

    /// The requested timeout, or `default_secs`.
    pub fn effective_timeout_secs(&self, default_secs: u64) -> u64 {
        self.timeout.unwrap_or(default_secs)
    }
}

fn compile(pattern: &str) -> Option<Regex> {
    Regex::new(pattern).ok()
}

static SHELL_BACKGROUND: LazyLock<Option<Regex>> = LazyLock::new(|| {
    compile(r"(?im)(?:^|[;&|]\s*|&&\s*|\|\|\s*|\$\(\s*)(?:nohup|disown|setsid)\b")
});
static SEGMENT_SPLIT: LazyLock<Option<Regex>> =
    LazyLock::new(|| compile(r"\s*(?:\|\||&&|[|;])\s*"));
static INLINE_AMP: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\s&\s"));
static TRAILING_AMP: LazyLock<Option<Regex>> = LazyLock::new(|| compile(r"\s&\s*(?:#.*)?$"));
static QUOTED: LazyLock<[Option<Regex>; 3]> = LazyLock::new(|| {
    [
        compile(r"'[^']*'"),
        compile(r#""(?:[^"\\]|\\.)*""#),
        compile(r"`[^`]*`"),
    ]
});
static LONG_LIVED: LazyLock<Vec<Regex>> = LazyLock::new(|| {
    [
        r"(?i)\b(?:npm|pnpm|yarn|bun)\s+(?:run\s+)?(?:dev|start|serve|watch)\b",
        r"(?i)\bdocker\s+compose\s+up\b",
        r"(?i)\bnext\s+dev\b",
        r"(?i)\bvite(?:\s|$)",
        r"(?i)\bnodemon\b",
        r"(?i)\buvicorn\b",
        r"(?i)\bgunicorn\b",
        r"(?i)\bpython(?:3)?\s+-m\s+http\.server\b",
    ]
    .into_iter()
    .filter_map(compile)
    .collect()
});

fn matches(re: &LazyLock<Option<Regex>>, text: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(text))
}

/// Python's `_foreground_background_guidance`: why a foreground command
/// should use `background=true` instead, if it should.
pub fn foreground_guidance(command: &str) -> Option<&'static str> {
    let normalized = command
        .to_lowercase()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let informational = normalized.contains(" --help")
        || normalized.ends_with(" -h")
        || normalized.contains(" --version")
        || normalized.ends_with(" -v");
    if informational {
        return None;
    }
    let [single, double, backtick] = &*QUOTED;
    let mut unquoted = command.to_owned();
    for (re, empty) in [(single, "''"), (double, "\"\""), (backtick, "``")] {
        if let Some(re) = re {
            unquoted = re.replace_all(&unquoted, empty).into_owned();
        }
    }
    if matches(&SHELL_BACKGROUND, &unquoted) {
        return Some(
            "Foreground command uses shell-level background wrappers (nohup/disown/setsid). \
             Use terminal(background=true) so Hermes can track the process, then run \
             readiness checks and tests in separate commands.",
        );
    }
    if matches(&INLINE_AMP, &unquoted) || matches(&TRAILING_AMP, &unquoted) {
        return Some(
            "Foreground command uses '&' backgrounding. Use terminal(background=true) for long-lived \
             processes, then run health checks and tests in follow-up terminal calls.",
        );
    }
    if LONG_LIVED.iter().any(|re| re.is_match(&unquoted)) {
        return Some(
            "This foreground command appears to start a long-lived server/watch process. \
             Run it with background=true, verify readiness (health endpoint/log signal), \
             then execute tests in a separate command.",
        );
    }
    None
}

/// Python's `_interpret_exit_code`: a note for non-zero exit codes that are
/// not real errors (grep 1 = no matches, diff 1 = files differ, …).
pub fn interpret_exit_code(command: &str, exit_code: i32) -> Option<&'static str> {
    if exit_code == 0 {
        return None;
    }
    let last_segment = match SEGMENT_SPLIT.as_ref() {
        Some(re) => re.split(command).last().unwrap_or(command),
        None => command,
    }
    .trim();
    let first_word = last_segment
        .split_whitespace()
        .find(|w| !w.contains('=') || w.starts_with('-'))?;
    let base = first_word.rsplit('/').next().unwrap_or(first_word);
    let no_match = "No matches found (not an error)";
    let differ = "Files differ (expected, not an error)";
    let falsy = "Condition evaluated to false (expected, not an error)";
    match (base, exit_code) {
        ("grep" | "egrep" | "fgrep" | "rg" | "ag" | "ack", 1) => Some(no_match),
        ("diff" | "colordiff", 1) => Some(differ),
        ("find", 1) => {
            Some("Some directories were inaccessible (partial results may still be valid)")
        }
        ("test" | "[", 1) => Some(falsy),
        ("curl", 6) => Some("Could not resolve host"),
        ("curl", 7) => Some("Failed to connect to host"),
        ("curl", 22) => Some("HTTP response code indicated error (e.g. 404, 500)"),
        ("curl", 28) => Some("Operation timed out"),
        ("git", 1) => {
            Some("Non-zero exit (often normal — e.g. 'git diff' returns 1 when files differ)")
        }
        _ => None,
    }
}

/// The `terminal` result for a started background process.
pub fn background_started(session_id: &str, pid: u32, args: &TerminalArgs) -> Value {
    let mut result = Map::new();
    result.insert("output".into(), json!("Background process started"));
    result.insert("session_id".into(), json!(session_id));
    result.insert("pid".into(), json!(pid));
    result.insert("exit_code".into(), json!(0));
    result.insert("error".into(), Value::Null);
    if args.pty {
        result.insert(
            "pty_note".into(),
            json!("PTY is not available here; the process runs with pipes. Use process(action='submit'/'write'/'close') for stdin."),
        );
    }
    if args.notify_on_complete {
        result.insert("notify_on_complete".into(), json!(true));
        if args.watch_patterns.is_some() {
            result.insert(
                "watch_patterns_ignored".into(),
                json!("watch_patterns ignored because notify_on_complete=True; these two flags produce duplicate notifications when combined"),
            );
        }
    } else if let Some(patterns) = &args.watch_patterns {
        result.insert("watch_patterns".into(), json!(patterns));
    } else {
        result.insert(
            "hint".into(),
            json!("Runs silently: you will not be told when it exits. For a bounded task (tests, build, deploy) relaunch with notify_on_complete=true, or use process(action='poll'/'wait'). Ignore for servers/watchers."),
        );
    }
    Value::Object(result)
}
