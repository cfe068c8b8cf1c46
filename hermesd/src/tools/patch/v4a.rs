//! Parser for V4A multi-file patches (`*** Begin Patch` … `*** End Patch`) into file
//! operations and hunks, with line-numbered errors for malformed input.

use std::fmt;

use super::v4a_syntax::{Directive, Parser, directive};

/// A parsed V4A patch: its file operations in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The operations, in patch order.
    pub ops: Vec<FileOp>,
}

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileOp {
    /// `*** Add File:` — create (or overwrite) `path` with `content`.
    Add {
        /// Path as written in the patch.
        path: String,
        /// The `+` lines, each ending with a newline.
        content: String,
        /// 1-based patch line of the header.
        line: usize,
    },
    /// `*** Delete File:` — remove `path`.
    Delete {
        /// Path as written in the patch.
        path: String,
        /// 1-based patch line of the header.
        line: usize,
    },
    /// `*** Update File:` (optionally with `*** Move to:`) or `*** Move File: a -> b`.
    Update {
        /// Path as written in the patch.
        path: String,
        /// New location, for a move.
        move_to: Option<String>,
        /// Hunks, applied in order.
        hunks: Vec<Hunk>,
        /// 1-based patch line of the header.
        line: usize,
    },
}

/// A group of changes located by its context and removed lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hunk {
    /// Text of the `@@ … @@` header, if any.
    pub context_hint: Option<String>,
    /// The hunk's lines.
    pub lines: Vec<HunkLine>,
    /// Whether the hunk was closed by `*** End of File`.
    pub end_of_file: bool,
    /// 1-based patch line where the hunk starts.
    pub line: usize,
}

/// One line of a hunk, without its prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HunkLine {
    /// ` ` — unchanged context.
    Context(String),
    /// `-` — removed.
    Remove(String),
    /// `+` — added.
    Add(String),
}

/// Why a patch could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based patch line, when the problem is on one line.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.reason),
            None => f.write_str(&self.reason),
        }
    }
}

impl std::error::Error for ParseError {}

/// Paths named by the patch's headers (sources and destinations), deduplicated, in order.
/// Lenient: works on patches that would not parse.
pub fn touched_paths(patch_text: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut add = |path: &str| {
        if !path.is_empty() && !paths.iter().any(|known| known == path) {
            paths.push(path.to_owned());
        }
    };
    for line in patch_text.lines() {
        match directive(line) {
            Some(Directive::Update(p) | Directive::Add(p) | Directive::Delete(p)) => add(p),
            Some(Directive::MoveTo(p)) => add(p),
            Some(Directive::MoveFile(spec)) => match spec.split_once("->") {
                Some((from, to)) => {
                    add(from.trim());
                    add(to.trim());
                }
                None => add(spec),
            },
            _ => {}
        }
    }
    paths
}

/// Parses a V4A patch. Text before `*** Begin Patch` and after `*** End Patch` is ignored; both
/// markers are optional.
pub fn parse(patch_text: &str) -> Result<Patch, ParseError> {
    let lines: Vec<&str> = patch_text
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .collect();
    let begin = lines
        .iter()
        .position(|line| directive(line) == Some(Directive::Begin))
        .map_or(0, |at| at + 1);
    let mut parser = Parser::default();
    for (index, line) in lines.iter().enumerate().skip(begin) {
        if !parser.feed(line, index + 1)? {
            break;
        }
    }
    let ops = parser.finish()?;
    if ops.is_empty() {
        return Err(ParseError {
            line: None,
            reason: "no file operations found; expected '*** Update File: <path>', \
                     '*** Add File: <path>', '*** Delete File: <path>' or \
                     '*** Move File: <from> -> <to>' after '*** Begin Patch'"
                .to_owned(),
        });
    }
    Ok(Patch { ops })
}
