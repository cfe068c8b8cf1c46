//! `search_files`: the request type, root resolution, shared walker setup and
//! the result JSON (Hermes' shape, including the dense path-grouped form).

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use super::{search_content, search_names, suggest};
use crate::policy::paths::PathPolicy;

/// Results per page when the caller gives no limit.
pub const DEFAULT_SEARCH_LIMIT: usize = 50;
/// Characters kept of each matching line.
pub const MAX_MATCH_CHARS: usize = 500;
/// From this many content matches on, they are rendered as one dense block.
const DENSIFY_MIN_MATCHES: usize = 5;

/// What `search_files` looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(from = "String")]
pub enum SearchTarget {
    /// Regex search inside files (`"content"`, alias `"grep"`).
    #[default]
    Content,
    /// File names matching a glob (`"files"`, alias `"find"`).
    Files,
}

impl From<String> for SearchTarget {
    fn from(value: String) -> Self {
        match value.as_str() {
            "files" | "find" => Self::Files,
            _ => Self::Content,
        }
    }
}

/// How content matches are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(from = "String")]
pub enum OutputMode {
    /// Matching lines (and context lines) with line numbers.
    #[default]
    Content,
    /// Only the paths of files that match.
    FilesOnly,
    /// Matching-line counts per file.
    Count,
}

impl From<String> for OutputMode {
    fn from(value: String) -> Self {
        match value.as_str() {
            "files_only" => Self::FilesOnly,
            "count" => Self::Count,
            _ => Self::Content,
        }
    }
}

/// Arguments of the `search_files` tool (deserialisable from the tool call),
/// plus the directory relative paths are resolved against.
#[derive(Debug, Clone, Deserialize)]
pub struct SearchRequest {
    /// Regex for content search, glob for file-name search.
    #[serde(default)]
    pub pattern: String,
    /// Content or file-name search.
    #[serde(default)]
    pub target: SearchTarget,
    /// Directory or file to search, as the model wrote it (default `"."`).
    #[serde(default = "default_path", deserialize_with = "de_path")]
    pub path: String,
    /// Glob restricting which files content search looks at.
    #[serde(default)]
    pub file_glob: Option<String>,
    /// Page size (at least 1).
    #[serde(default = "default_limit", deserialize_with = "de_limit")]
    pub limit: usize,
    /// Results to skip.
    #[serde(default, deserialize_with = "de_non_negative")]
    pub offset: usize,
    /// Report shape for content search.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Context lines before and after each match (content mode).
    #[serde(default, deserialize_with = "de_non_negative")]
    pub context: usize,
    /// Base directory for a relative `path` (the task's working directory).
    #[serde(skip)]
    pub base: PathBuf,
    /// Whether a Hermes home's settings file is searched with its secret values masked (the
    /// default; off only when `security.redact_secrets` is).
    #[serde(skip, default = "masked_by_default")]
    pub mask_settings: bool,
}

fn masked_by_default() -> bool {
    true
}

impl SearchRequest {
    /// A request with Hermes' defaults for `pattern`, resolved against `base`.
    pub fn new(pattern: impl Into<String>, base: impl Into<PathBuf>) -> Self {
        Self {
            pattern: pattern.into(),
            target: SearchTarget::Content,
            path: default_path(),
            file_glob: None,
            limit: DEFAULT_SEARCH_LIMIT,
            offset: 0,
            output_mode: OutputMode::Content,
            context: 0,
            base: base.into(),
            mask_settings: true,
        }
    }

    /// `(offset, limit)` with the limit forced to at least 1.
    pub(crate) fn page(&self) -> (usize, usize) {
        (self.offset, self.limit.max(1))
    }
}

fn default_path() -> String {
    ".".to_owned()
}

fn default_limit() -> usize {
    DEFAULT_SEARCH_LIMIT
}

/// Integer coercion like Hermes' `int(value)`: numbers, numeric strings, else `None`.
fn coerce_int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Value::String(s) => s.trim().parse().ok(),
        Value::Bool(b) => Some(i64::from(*b)),
        _ => None,
    }
}

fn de_limit<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(coerce_int(&value).map_or(DEFAULT_SEARCH_LIMIT, |n| n.max(1) as usize))
}

fn de_non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let value = Value::deserialize(d)?;
    Ok(coerce_int(&value).map_or(0, |n| n.max(0) as usize))
}

fn de_path<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let path = Option::<String>::deserialize(d)?;
    Ok(path.filter(|p| !p.is_empty()).unwrap_or_else(default_path))
}

/// One reported line: a match or a context line.
#[derive(Debug)]
pub(crate) struct Hit {
    pub(crate) path: Rc<str>,
    pub(crate) line: u64,
    pub(crate) content: String,
}

/// Collected results before they are rendered as JSON.
#[derive(Debug, Default)]
pub(crate) struct SearchOutcome {
    pub(crate) matches: Vec<Hit>,
    pub(crate) files: Vec<String>,
    pub(crate) counts: Vec<(String, u64)>,
    pub(crate) total_count: usize,
    pub(crate) truncated: bool,
    pub(crate) limit_reason: Option<&'static str>,
    pub(crate) warning: Option<String>,
    pub(crate) error: Option<String>,
}

impl SearchOutcome {
    pub(crate) fn failed(message: String) -> Self {
        Self {
            error: Some(message),
            ..Self::default()
        }
    }

    fn into_json(self, next_offset: usize) -> Value {
        let mut map = Map::new();
        map.insert("total_count".into(), json!(self.total_count));
        if self.matches.len() >= DENSIFY_MIN_MATCHES {
            map.insert(
                "matches_format".into(),
                json!(
                    "path-grouped: each file path on its own line, followed by \
                     indented '<line>: <content>' rows for matches in that file"
                ),
            );
            map.insert("matches_text".into(), Value::String(densify(&self.matches)));
        } else if !self.matches.is_empty() {
            let rows: Vec<Value> = self
                .matches
                .iter()
                .map(|hit| json!({"path": &*hit.path, "line": hit.line, "content": hit.content}))
                .collect();
            map.insert("matches".into(), Value::Array(rows));
        }
        if !self.files.is_empty() {
            map.insert("files".into(), json!(self.files));
        }
        if !self.counts.is_empty() {
            let counts: Map<String, Value> = self
                .counts
                .into_iter()
                .map(|(p, n)| (p, json!(n)))
                .collect();
            map.insert("counts".into(), Value::Object(counts));
        }
        if self.truncated {
            map.insert("truncated".into(), Value::Bool(true));
        }
        if let Some(reason) = self.limit_reason {
            map.insert("limit_reason".into(), json!(reason));
        }
        if let Some(warning) = self.warning {
            map.insert("warning".into(), Value::String(warning));
        }
        if let Some(error) = self.error {
            map.insert("error".into(), Value::String(error));
        }
        if self.truncated && self.limit_reason.is_none() {
            map.insert(
                "hint".into(),
                json!(format!(
                    "Results truncated. Use offset={next_offset} to see more, \
                     or narrow with a more specific pattern or file_glob."
                )),
            );
        }
        Value::Object(map)
    }
}

/// Groups consecutive hits under their path: `path` then `  <line>: <content>`.
fn densify(hits: &[Hit]) -> String {
    let mut out = String::new();
    let mut current: Option<&str> = None;
    for hit in hits {
        if current != Some(&*hit.path) {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&hit.path);
            current = Some(&hit.path);
        }
        out.push_str(&format!("\n  {}: {}", hit.line, hit.content.trim_end()));
    }
    out
}

/// Builds a ripgrep-style walker: honours `.gitignore` (inside git repos),
/// `.ignore` and `.rgignore`, skips hidden entries, applies `glob` the
/// way `rg --glob` does (relative to `glob_root`), and never enters or yields
/// what the path policy forbids reading (a symlink is judged by its target).
pub(crate) fn build_walker(
    root: &Path,
    glob_root: &Path,
    glob: Option<&str>,
    sorted: bool,
    paths: &PathPolicy,
) -> Result<ignore::Walk, String> {
    let mut builder = WalkBuilder::new(root);
    let paths = paths.clone();
    builder.filter_entry(move |entry| {
        let path = if entry.path_is_symlink() {
            crate::policy::paths::real(entry.path())
        } else {
            entry.path().to_path_buf()
        };
        paths.check_read(&path).is_ok()
    });
    builder.add_custom_ignore_filename(".rgignore");
    if let Some(glob) = glob {
        let mut overrides = OverrideBuilder::new(glob_root);
        overrides
            .add(glob)
            .map_err(|e| format!("Search failed: invalid glob '{glob}': {e}"))?;
        let built = overrides
            .build()
            .map_err(|e| format!("Search failed: invalid glob '{glob}': {e}"))?;
        builder.overrides(built);
    }
    if sorted {
        builder.sort_by_file_name(|a, b| a.cmp(b));
    }
    Ok(builder.build())
}

/// Renders a walked path the way ripgrep prints it: the root as the user
/// wrote it, followed by the path below the root.
pub(crate) fn display_path(found: &Path, root: &Path, shown_root: &Path) -> String {
    match found.strip_prefix(root) {
        Ok(rest) if rest.as_os_str().is_empty() => shown_root.to_string_lossy().into_owned(),
        Ok(rest) => shown_root.join(rest).to_string_lossy().into_owned(),
        Err(_) => found.to_string_lossy().into_owned(),
    }
}

/// Runs a `search_files` request and returns Hermes' result JSON. Checks
/// `cancel` between files and matches; a cancelled search returns what it
/// found with `limit_reason: "cancelled"`.
pub fn search_files(req: &SearchRequest, paths: &PathPolicy, cancel: &AtomicBool) -> Value {
    let shown_root =
        crate::policy::paths::expand(&req.path, paths.user_home(), paths.hermes_home());
    let root = paths.resolve(&req.path, &req.base);
    let outcome = if let Err(denied) = paths.check_read(&root) {
        SearchOutcome::failed(denied)
    } else if root.exists() {
        let glob_root = if req.base.as_os_str().is_empty() {
            root.as_path()
        } else {
            req.base.as_path()
        };
        match req.target {
            SearchTarget::Files => {
                search_names::run(req, &root, &shown_root, glob_root, paths, cancel)
            }
            SearchTarget::Content => {
                search_content::run(req, &root, &shown_root, glob_root, paths, cancel)
            }
        }
    } else {
        SearchOutcome::failed(suggest::path_not_found_message(&shown_root, &root))
    };
    let (offset, limit) = req.page();
    outcome.into_json(offset.saturating_add(limit))
}
