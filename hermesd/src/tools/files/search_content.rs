//! Content search for `search_files`: ripgrep's regex engine and searcher over
//! an ignore-aware, name-sorted walk, stopping once a page is filled.

use std::io;
use std::path::Path;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};

use crate::policy::paths::PathPolicy;

use super::search::{
    Hit, MAX_MATCH_CHARS, OutputMode, SearchOutcome, SearchRequest, build_walker, display_path,
};

const NEWLINE_WARNING: &str = "0 results found. Note: search_files content search is line-oriented \
and does not run ripgrep with -U/--multiline, so `\\n` in the regex does not match line breaks. \
Use context=N to inspect neighboring lines, or escape as `\\\\n` when searching for a literal backslash+n.";

/// True when the regex asks for a newline: a literal one, or `\n` preceded by
/// an even number of further backslashes.
fn has_regex_newline(pattern: &str) -> bool {
    let mut backslashes = 0usize;
    for c in pattern.chars() {
        if c == '\n' || (c == 'n' && backslashes % 2 == 1) {
            return true;
        }
        backslashes = if c == '\\' { backslashes + 1 } else { 0 };
    }
    false
}

/// Line text without its terminator, lossily decoded, cut to `MAX_MATCH_CHARS`.
fn line_text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = String::from_utf8_lossy(bytes);
    match text.char_indices().nth(MAX_MATCH_CHARS) {
        Some((cut, _)) => text[..cut].to_owned(),
        None => text.into_owned(),
    }
}

/// Collects match and context lines of one file until `wanted` hits exist.
struct HitSink<'a> {
    path: Rc<str>,
    hits: &'a mut Vec<Hit>,
    wanted: usize,
    cancel: &'a AtomicBool,
}

impl HitSink<'_> {
    fn push(&mut self, line: Option<u64>, bytes: &[u8]) -> bool {
        let hit = Hit {
            path: Rc::clone(&self.path),
            line: line.unwrap_or(0),
            content: line_text(bytes),
        };
        self.hits.push(hit);
        self.hits.len() < self.wanted && !self.cancel.load(Ordering::Relaxed)
    }
}

impl Sink for HitSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        Ok(self.push(mat.line_number(), mat.bytes()))
    }

    fn context(&mut self, _: &Searcher, ctx: &SinkContext<'_>) -> Result<bool, io::Error> {
        Ok(self.push(ctx.line_number(), ctx.bytes()))
    }
}

/// Counts matching lines of one file; `stop_at_first` only asks "any match?".
struct CountSink<'a> {
    count: u64,
    stop_at_first: bool,
    cancel: &'a AtomicBool,
}

impl Sink for CountSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.count += 1;
        Ok(!self.stop_at_first && !self.cancel.load(Ordering::Relaxed))
    }
}

fn compile(pattern: &str) -> Result<RegexMatcher, grep_regex::Error> {
    RegexMatcherBuilder::new()
        .line_terminator(Some(b'\n'))
        .build(pattern)
}

/// Runs a content search below `root`; paths are shown relative to `shown_root`.
pub(crate) fn run(
    req: &SearchRequest,
    root: &Path,
    shown_root: &Path,
    glob_root: &Path,
    paths: &PathPolicy,
    cancel: &AtomicBool,
) -> SearchOutcome {
    let newline_pattern = has_regex_newline(&req.pattern);
    let matcher = match compile(&req.pattern) {
        Ok(matcher) => matcher,
        Err(_) if newline_pattern => {
            return SearchOutcome {
                warning: Some(NEWLINE_WARNING.to_owned()),
                ..SearchOutcome::default()
            };
        }
        Err(err) => return SearchOutcome::failed(format!("Search failed: {err}")),
    };
    let glob = req.file_glob.as_deref().filter(|g| !g.is_empty());
    let walker = match build_walker(root, glob_root, glob, true, paths) {
        Ok(walker) => walker,
        Err(message) => return SearchOutcome::failed(message),
    };
    let (offset, limit) = req.page();
    let wanted = offset.saturating_add(limit).saturating_add(1);
    let context = if req.output_mode == OutputMode::Content {
        req.context
    } else {
        0
    };
    let mut searcher = SearcherBuilder::new()
        .line_number(true)
        .binary_detection(BinaryDetection::quit(0))
        .before_context(context)
        .after_context(context)
        .build();

    let mut outcome = SearchOutcome::default();
    let mut found = 0usize;
    for entry in walker {
        if cancel.load(Ordering::Relaxed) {
            outcome.limit_reason = Some("cancelled");
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        let shown = display_path(entry.path(), root, shown_root);
        // A Hermes home's settings file is searched as shown: with its secrets masked.
        let settings = (req.mask_settings && super::settings::is_settings(entry.path(), paths))
            .then(|| super::settings::masked_text(entry.path()));
        // Unreadable files are skipped, as ripgrep does.
        match req.output_mode {
            OutputMode::Content => {
                let mut sink = HitSink {
                    path: shown.into(),
                    hits: &mut outcome.matches,
                    wanted,
                    cancel,
                };
                let _ = search_one(&mut searcher, &matcher, entry.path(), &settings, &mut sink);
                found = outcome.matches.len();
            }
            OutputMode::FilesOnly | OutputMode::Count => {
                let stop_at_first = req.output_mode == OutputMode::FilesOnly;
                let mut sink = CountSink {
                    count: 0,
                    stop_at_first,
                    cancel,
                };
                let searched =
                    search_one(&mut searcher, &matcher, entry.path(), &settings, &mut sink);
                if searched.is_ok() && sink.count > 0 {
                    found += 1;
                    if found > offset && found <= offset.saturating_add(limit) {
                        match req.output_mode {
                            OutputMode::Count => outcome.counts.push((shown, sink.count)),
                            _ => outcome.files.push(shown),
                        }
                    }
                }
            }
        }
        if found >= wanted {
            break;
        }
    }
    if cancel.load(Ordering::Relaxed) {
        outcome.limit_reason = Some("cancelled");
    }
    finish(
        outcome,
        found,
        offset,
        limit,
        newline_pattern,
        req.output_mode,
    )
}

/// Searches one walked file into `sink`: a settings file's masked text (`settings`), else the
/// file itself. A settings file too large to mask, or unreadable, is skipped.
fn search_one<S: Sink<Error = io::Error>>(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    settings: &Option<io::Result<Option<String>>>,
    sink: S,
) -> io::Result<()> {
    match settings {
        None => searcher.search_path(matcher, path, sink),
        Some(Ok(Some(text))) => searcher.search_slice(matcher, text.as_bytes(), sink),
        Some(_) => Ok(()),
    }
}

fn finish(
    mut outcome: SearchOutcome,
    found: usize,
    offset: usize,
    limit: usize,
    newline_pattern: bool,
    mode: OutputMode,
) -> SearchOutcome {
    let page_end = offset.saturating_add(limit);
    outcome.truncated = found > page_end || outcome.limit_reason.is_some();
    if mode == OutputMode::Content {
        outcome.matches.truncate(page_end);
        outcome.matches.drain(..offset.min(outcome.matches.len()));
    }
    outcome.total_count = match mode {
        OutputMode::Count => outcome.counts.iter().map(|(_, n)| *n as usize).sum(),
        _ => found,
    };
    if found == 0 && newline_pattern {
        outcome.warning = Some(NEWLINE_WARNING.to_owned());
    }
    outcome
}
