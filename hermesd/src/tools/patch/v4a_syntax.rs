//! Line-level grammar of V4A patches: `***` header recognition and the section/hunk state
//! machine that turns body lines into operations.

use super::v4a::{FileOp, Hunk, HunkLine, ParseError};

/// A `*** …` header line.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Directive<'a> {
    Begin,
    End,
    Update(&'a str),
    Add(&'a str),
    Delete(&'a str),
    MoveFile(&'a str),
    MoveTo(&'a str),
    EndOfFile,
    Unknown,
}

/// Words of a path header and the directive it makes.
type PathHeader<'a> = (&'static [&'static str], fn(&'a str) -> Directive<'a>);

/// `rest` after the space-separated `words` (the last one ending in `:` for path headers).
fn after_words<'a>(rest: &'a str, words: &[&str]) -> Option<&'a str> {
    let mut rest = rest;
    for (index, word) in words.iter().enumerate() {
        rest = rest.strip_prefix(word)?;
        if index + 1 < words.len() {
            let trimmed = rest.trim_start();
            if trimmed.len() == rest.len() {
                return None;
            }
            rest = trimmed;
        }
    }
    Some(rest.trim())
}

/// The directive on `line`, or `None` if the line is not a `***` header.
pub(super) fn directive<'a>(line: &'a str) -> Option<Directive<'a>> {
    let rest = line.strip_prefix("***")?.trim_start();
    let path_headers: [PathHeader<'a>; 6] = [
        (&["Update", "File:"], Directive::Update),
        (&["Add", "File:"], Directive::Add),
        (&["Delete", "File:"], Directive::Delete),
        (&["Move", "File:"], Directive::MoveFile),
        (&["Move", "to:"], Directive::MoveTo),
        (&["Move", "To:"], Directive::MoveTo),
    ];
    let marker = |words: &[&str]| after_words(rest, words).is_some();
    let found = if marker(&["Begin", "Patch"]) {
        Directive::Begin
    } else if marker(&["End", "Patch"]) {
        Directive::End
    } else if marker(&["End", "of", "File"]) {
        Directive::EndOfFile
    } else {
        path_headers
            .iter()
            .find_map(|(words, make)| after_words(rest, words).map(make))
            .unwrap_or(Directive::Unknown)
    };
    Some(found)
}

/// Splits `a -> b` of a `*** Move File:` header.
fn split_move(spec: &str) -> Option<(&str, &str)> {
    let (from, to) = spec.split_once("->")?;
    let (from, to) = (from.trim(), to.trim());
    (!from.is_empty() && !to.is_empty()).then_some((from, to))
}

/// The `@@` header's hint: the text between `@@` and an optional closing `@@`.
fn context_hint(line: &str) -> Option<String> {
    let inner = line.trim_start_matches('@').trim();
    let inner = inner.strip_suffix("@@").unwrap_or(inner).trim();
    (!inner.is_empty()).then(|| inner.to_owned())
}

/// What the lines after the latest header belong to.
#[derive(Default)]
enum Section {
    /// Before the first file header.
    #[default]
    Preamble,
    /// Inside an `*** Add File:` section.
    Add {
        path: String,
        lines: Vec<String>,
        line: usize,
    },
    /// Inside an `*** Update File:` section.
    Update {
        path: String,
        move_to: Option<String>,
        hunks: Vec<Hunk>,
        line: usize,
    },
    /// After a `*** Delete File:` or `*** Move File:` header (nothing may follow).
    Closed { header: &'static str },
}

/// Incremental parser state.
#[derive(Default)]
pub(super) struct Parser {
    ops: Vec<FileOp>,
    section: Section,
    hunk: Option<Hunk>,
    /// Bare empty lines seen since the last hunk line; kept only if more hunk lines follow.
    pending_blanks: usize,
}

impl Parser {
    /// Feeds one line (`number` is 1-based); `Ok(false)` at `*** End Patch`.
    pub(super) fn feed(&mut self, line: &str, number: usize) -> Result<bool, ParseError> {
        let at_line = |reason: String| ParseError {
            line: Some(number),
            reason,
        };
        match directive(line) {
            Some(Directive::End) => return Ok(false),
            Some(Directive::Begin) => {}
            Some(dir) => {
                if matches!(
                    dir,
                    Directive::Update(_)
                        | Directive::Add(_)
                        | Directive::Delete(_)
                        | Directive::MoveFile(_)
                ) {
                    self.finish_section()?;
                }
                self.header(dir, line, number).map_err(at_line)?;
            }
            None => self.body_line(line, number).map_err(at_line)?,
        }
        Ok(true)
    }

    /// Handles a `***` header line.
    fn header(&mut self, dir: Directive<'_>, line: &str, number: usize) -> Result<(), String> {
        let require_path = |path: &str, header: &str| {
            if path.is_empty() {
                Err(format!("missing file path after '*** {header}'"))
            } else {
                Ok(path.to_owned())
            }
        };
        match dir {
            Directive::Update(path) => {
                let path = require_path(path, "Update File:")?;
                self.section = Section::Update {
                    path,
                    move_to: None,
                    hunks: Vec::new(),
                    line: number,
                };
                Ok(())
            }
            Directive::Add(path) => {
                let path = require_path(path, "Add File:")?;
                self.section = Section::Add {
                    path,
                    lines: Vec::new(),
                    line: number,
                };
                Ok(())
            }
            Directive::Delete(path) => {
                let path = require_path(path, "Delete File:")?;
                self.section = Section::Closed {
                    header: "*** Delete File:",
                };
                self.ops.push(FileOp::Delete { path, line: number });
                Ok(())
            }
            Directive::MoveFile(spec) => {
                let (from, to) =
                    split_move(spec).ok_or("'*** Move File:' needs '<from> -> <to>'".to_owned())?;
                self.section = Section::Closed {
                    header: "*** Move File:",
                };
                self.ops.push(FileOp::Update {
                    path: from.to_owned(),
                    move_to: Some(to.to_owned()),
                    hunks: Vec::new(),
                    line: number,
                });
                Ok(())
            }
            Directive::MoveTo(dest) => {
                let dest = require_path(dest, "Move to:")?;
                match &mut self.section {
                    Section::Update {
                        move_to: slot @ None,
                        ..
                    } => {
                        *slot = Some(dest);
                        Ok(())
                    }
                    Section::Update { .. } => Err("second '*** Move to:' for the same file".into()),
                    _ => Err("'*** Move to:' must follow '*** Update File:'".into()),
                }
            }
            Directive::EndOfFile => match (&self.section, &mut self.hunk) {
                (Section::Update { .. }, Some(hunk)) => {
                    hunk.end_of_file = true;
                    self.pending_blanks = 0;
                    Ok(())
                }
                _ => Err("'*** End of File' must close a hunk of an '*** Update File:'".into()),
            },
            Directive::Begin | Directive::End | Directive::Unknown => {
                Err(format!("unknown header '{}'", line.trim()))
            }
        }
    }

    /// Handles a non-header line.
    fn body_line(&mut self, line: &str, number: usize) -> Result<(), String> {
        match &mut self.section {
            Section::Preamble if line.trim().is_empty() => Ok(()),
            Section::Preamble => Err(format!(
                "expected a file header ('*** Update File:', '*** Add File:', \
                 '*** Delete File:' or '*** Move File:'), found '{}'",
                line.trim()
            )),
            Section::Closed { .. } if line.trim().is_empty() => Ok(()),
            Section::Closed { header } => Err(format!(
                "unexpected line after '{header}' (only a new '***' header may follow)"
            )),
            Section::Add { lines, .. } => {
                if line.is_empty() {
                    self.pending_blanks += 1;
                } else if let Some(text) = line.strip_prefix('+') {
                    lines.extend(std::iter::repeat_n(String::new(), self.pending_blanks));
                    self.pending_blanks = 0;
                    lines.push(text.to_owned());
                } else if !line.starts_with("@@") {
                    return Err(
                        "every line of an '*** Add File:' section must start with '+'".into(),
                    );
                }
                Ok(())
            }
            Section::Update { hunks, .. } => {
                if line.starts_with("@@") {
                    close_hunk(hunks, &mut self.hunk, &mut self.pending_blanks);
                    self.hunk = Some(Hunk {
                        context_hint: context_hint(line),
                        line: number,
                        ..Hunk::default()
                    });
                    return Ok(());
                }
                if line.is_empty() {
                    self.pending_blanks += 1;
                    return Ok(());
                }
                let parsed = match line.as_bytes()[0] {
                    b'+' => HunkLine::Add(line[1..].to_owned()),
                    b'-' => HunkLine::Remove(line[1..].to_owned()),
                    b' ' => HunkLine::Context(line[1..].to_owned()),
                    b'\\' => return Ok(()), // "\ No newline at end of file"
                    _ => HunkLine::Context(line.to_owned()),
                };
                let hunk = self.hunk.get_or_insert_with(|| Hunk {
                    line: number,
                    ..Hunk::default()
                });
                hunk.lines.extend(std::iter::repeat_n(
                    HunkLine::Context(String::new()),
                    self.pending_blanks,
                ));
                self.pending_blanks = 0;
                hunk.lines.push(parsed);
                Ok(())
            }
        }
    }

    /// Ends the input and returns the operations.
    pub(super) fn finish(mut self) -> Result<Vec<FileOp>, ParseError> {
        self.finish_section()?;
        Ok(self.ops)
    }

    /// Ends the current section, pushing its operation.
    fn finish_section(&mut self) -> Result<(), ParseError> {
        let section = std::mem::replace(&mut self.section, Section::Preamble);
        match section {
            Section::Preamble | Section::Closed { .. } => {}
            Section::Add { path, lines, line } => {
                let mut content = lines.join("\n");
                if !lines.is_empty() {
                    content.push('\n');
                }
                self.ops.push(FileOp::Add {
                    path,
                    content,
                    line,
                });
            }
            Section::Update {
                path,
                move_to,
                mut hunks,
                line,
            } => {
                close_hunk(&mut hunks, &mut self.hunk, &mut self.pending_blanks);
                if hunks.is_empty() && move_to.is_none() {
                    return Err(ParseError {
                        line: Some(line),
                        reason: format!("'*** Update File: {path}' has no hunks"),
                    });
                }
                self.ops.push(FileOp::Update {
                    path,
                    move_to,
                    hunks,
                    line,
                });
            }
        }
        self.pending_blanks = 0;
        Ok(())
    }
}

/// Moves a non-empty open hunk into `hunks`, dropping trailing bare blank lines.
fn close_hunk(hunks: &mut Vec<Hunk>, open: &mut Option<Hunk>, pending_blanks: &mut usize) {
    *pending_blanks = 0;
    if let Some(hunk) = open.take()
        && !hunk.lines.is_empty()
    {
        hunks.push(hunk);
    }
}
