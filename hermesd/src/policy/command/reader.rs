//! How a shell reads text, without running any of it: its quoting contexts (`'…'`, `"…"`,
//! `$'…'`, `$"…"`, `$(…)`, `$((…))`, `${…}`, backticks), comments, line continuations and
//! here-documents — and so where each complete command ends.
//!
//! One scan serves two readers: [`super::lex::decode_quoting`] rewrites the `$'…'` and `$"…"`
//! it finds before any rule splits words, and [`super::stdin`] cuts what is written to a
//! background shell's stdin at the ends of complete commands, holding the rest.
//!
//! Offsets are byte offsets into the scanned text, always on character boundaries: the scan
//! only stops at ASCII bytes.

use super::shell::char_len_at;

/// Something the scan found, in the order of the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mark {
    /// `$'…'` (ANSI-C quoting), from its `$` to just past its closing quote. `in_double` when
    /// it stands inside `"…"`, where bash leaves it as text — but the string may be a script
    /// another shell runs (`bash -c "$'\x72\x6d' -rf /"`), which decodes it; its text is then
    /// read as that shell gets it, with the double quotes' escapes undone.
    AnsiC {
        start: usize,
        end: usize,
        in_double: bool,
    },
    /// The `$` of a `$"…"` (locale quoting: in the C locale a plain double-quoted string).
    Locale { at: usize },
    /// A here-document's body: the lines after its operator's line, up to its delimiter line
    /// (excluded).
    Body { start: usize, end: usize },
    /// A complete command ends just before `at`: past a top-level `;` or newline, or past the
    /// delimiter line of the last here-document its line opened.
    End { at: usize },
}

/// How the end of the text reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Input {
    /// A whole command line (`terminal`'s command): a here-document whose delimiter never comes
    /// ends at the end of the text, as bash ends it at end of file.
    Script,
    /// Text written to a shell's stdin so far: more may follow, so a line is complete only once
    /// its newline has come, and a here-document only once its delimiter line has.
    Stream,
}

/// What one scan found.
#[derive(Debug, Default)]
pub(super) struct Scan {
    pub(super) marks: Vec<Mark>,
    /// The text ends inside something still open: a quote, a substitution, a trailing
    /// backslash, or (for [`Input::Stream`]) a here-document missing its delimiter line.
    pub(super) open: bool,
}

/// A quoting context of the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    /// Unquoted text at the top level.
    Top,
    /// `$(…)`, with the depth of the plain parentheses opened inside it.
    Substitution(u32),
    /// `$((…))` or `((…))`, with the depth of the parentheses opened inside it: `<<` is a shift.
    Arithmetic(u32),
    /// `${…}`, with the depth of the braces opened inside it.
    Parameter(u32),
    /// A backtick substitution.
    Backtick,
    /// `"…"`.
    Double,
}

/// A here-document waiting for its body.
struct Heredoc {
    delimiter: String,
    /// `<<-`: leading tabs are stripped from the body's lines and the delimiter line.
    strip_tabs: bool,
}

/// Bytes that end an unquoted word.
fn ends_word(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')' | b'<' | b'>'
    )
}

/// Scans `text` as a shell reads it.
pub(super) fn scan(text: &str, input: Input) -> Scan {
    let mut scanner = Scanner {
        text,
        bytes: text.as_bytes(),
        input,
        stack: vec![Context::Top],
        heredocs: Vec::new(),
        found: Scan::default(),
    };
    scanner.run();
    scanner.found.open |= scanner.stack.len() > 1 || !scanner.heredocs.is_empty();
    scanner.found
}

struct Scanner<'t> {
    text: &'t str,
    bytes: &'t [u8],
    input: Input,
    stack: Vec<Context>,
    heredocs: Vec<Heredoc>,
    found: Scan,
}

impl Scanner<'_> {
    fn context(&self) -> Context {
        self.stack.last().copied().unwrap_or(Context::Top)
    }

    /// The offset just past the character at `i`.
    fn after(&self, i: usize) -> usize {
        i + char_len_at(self.text, i)
    }

    fn run(&mut self) {
        let mut i = 0;
        while i < self.bytes.len() {
            let next = if self.context() == Context::Double {
                self.double_quoted(i)
            } else {
                self.unquoted(i)
            };
            match next {
                Some(next) => i = next,
                None => {
                    self.found.open = true;
                    return;
                }
            }
        }
    }

    /// One step inside `"…"`; the offset to go on from, `None` when the text ends open.
    fn double_quoted(&mut self, i: usize) -> Option<usize> {
        let next = self.bytes.get(i + 1).copied();
        Some(match self.bytes[i] {
            b'\\' => match next {
                None => return None,
                Some(_) => self.after(i + 1),
            },
            b'"' => {
                self.stack.pop();
                i + 1
            }
            b'$' if next == Some(b'(') => self.open_paren(i + 1),
            b'$' if next == Some(b'{') => {
                self.stack.push(Context::Parameter(0));
                i + 2
            }
            b'`' => {
                self.stack.push(Context::Backtick);
                i + 1
            }
            b'$' if next == Some(b'\'') => match ansi_c_end_in_double(self.bytes, i) {
                Some(end) => {
                    self.found.marks.push(Mark::AnsiC {
                        start: i,
                        end,
                        in_double: true,
                    });
                    end
                }
                None => i + 1,
            },
            _ => self.after(i),
        })
    }

    /// `$(`, `$((` or `((` starting with the `(` at `at`: pushes its context.
    fn open_paren(&mut self, at: usize) -> usize {
        if self.bytes.get(at + 1) == Some(&b'(') {
            self.stack.push(Context::Arithmetic(0));
            at + 2
        } else {
            self.stack.push(Context::Substitution(0));
            at + 1
        }
    }

    /// One step outside double quotes; the offset to go on from, `None` when the text ends
    /// open.
    fn unquoted(&mut self, i: usize) -> Option<usize> {
        let context = self.context();
        let next = self.bytes.get(i + 1).copied();
        let word_start = i == 0 || ends_word(self.bytes[i - 1]);
        Some(match (self.bytes[i], context) {
            (b'\\', _) => match next {
                None => return None,
                Some(_) => self.after(i + 1),
            },
            (b'\'', _) => i + 1 + self.text[i + 1..].find('\'')? + 1,
            (b'"', _) => {
                self.stack.push(Context::Double);
                i + 1
            }
            (b'$', _) => match next {
                Some(b'\'') => {
                    let end = ansi_c_end(self.bytes, i)?;
                    self.found.marks.push(Mark::AnsiC {
                        start: i,
                        end,
                        in_double: false,
                    });
                    end
                }
                Some(b'"') => {
                    self.found.marks.push(Mark::Locale { at: i });
                    self.stack.push(Context::Double);
                    i + 2
                }
                Some(b'(') => self.open_paren(i + 1),
                Some(b'{') => {
                    self.stack.push(Context::Parameter(0));
                    i + 2
                }
                Some(b'$') => i + 2,
                _ => i + 1,
            },
            (b'`', Context::Backtick) => {
                self.stack.pop();
                i + 1
            }
            (b'`', _) => {
                self.stack.push(Context::Backtick);
                i + 1
            }
            (b'#', Context::Top | Context::Substitution(_) | Context::Backtick) if word_start => {
                // A comment, to the end of its line (the newline is read as a newline).
                self.text[i..]
                    .find('\n')
                    .map_or(self.bytes.len(), |n| i + n)
            }
            (b'(', Context::Top | Context::Substitution(_)) if word_start && next == Some(b'(') => {
                self.stack.push(Context::Arithmetic(0));
                i + 2
            }
            (b'(', Context::Substitution(depth)) => {
                self.replace(Context::Substitution(depth + 1), i)
            }
            (b'(', Context::Arithmetic(depth)) => self.replace(Context::Arithmetic(depth + 1), i),
            (b')', Context::Substitution(0)) => {
                self.stack.pop();
                i + 1
            }
            (b')', Context::Substitution(depth)) => {
                self.replace(Context::Substitution(depth - 1), i)
            }
            (b')', Context::Arithmetic(0)) if next == Some(b')') => {
                self.stack.pop();
                i + 2
            }
            (b')', Context::Arithmetic(depth)) => {
                self.replace(Context::Arithmetic(depth.saturating_sub(1)), i)
            }
            (b'{', Context::Parameter(depth)) => self.replace(Context::Parameter(depth + 1), i),
            (b'}', Context::Parameter(0)) => {
                self.stack.pop();
                i + 1
            }
            (b'}', Context::Parameter(depth)) => self.replace(Context::Parameter(depth - 1), i),
            (b'<', Context::Arithmetic(_)) => i + 1,
            (b'<', _) if next == Some(b'<') => self.heredoc_operator(i),
            (b'\n', _) => self.newline(i)?,
            (b';', Context::Top) if self.heredocs.is_empty() => {
                self.found.marks.push(Mark::End { at: i + 1 });
                i + 1
            }
            _ => self.after(i),
        })
    }

    /// Replaces the innermost context by `context`; steps past the byte at `i`.
    fn replace(&mut self, context: Context, i: usize) -> usize {
        if let Some(top) = self.stack.last_mut() {
            *top = context;
        }
        i + 1
    }

    /// A `<<` at `i`: a here-string (`<<<`) or a here-document operator, whose delimiter word
    /// is read (quotes removed) and queued for the bodies after the line.
    fn heredoc_operator(&mut self, i: usize) -> usize {
        let mut at = i + 2;
        if self.bytes.get(at) == Some(&b'<') {
            return at + 1;
        }
        let strip_tabs = self.bytes.get(at) == Some(&b'-');
        if strip_tabs {
            at += 1;
        }
        while matches!(self.bytes.get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        let (delimiter, end) = self.delimiter_word(at);
        if !delimiter.is_empty() {
            self.heredocs.push(Heredoc {
                delimiter,
                strip_tabs,
            });
        }
        end
    }

    /// The word starting at `at` with its quotes removed, and the offset past it.
    fn delimiter_word(&self, mut at: usize) -> (String, usize) {
        let mut word = String::new();
        while let Some(&b) = self.bytes.get(at) {
            match b {
                b'\'' => {
                    let Some(close) = self.text[at + 1..].find('\'') else {
                        break;
                    };
                    word.push_str(&self.text[at + 1..at + 1 + close]);
                    at += close + 2;
                }
                b'"' => {
                    at += 1;
                    while let Some(&c) = self.bytes.get(at) {
                        if c == b'"' {
                            at += 1;
                            break;
                        }
                        if c == b'\\' && at + 1 < self.bytes.len() {
                            at += 1;
                        }
                        let end = self.after(at);
                        word.push_str(&self.text[at..end]);
                        at = end;
                    }
                }
                b'\\' if at + 1 < self.bytes.len() => {
                    let end = self.after(at + 1);
                    word.push_str(&self.text[at + 1..end]);
                    at = end;
                }
                _ if ends_word(b) => break,
                _ => {
                    let end = self.after(at);
                    word.push_str(&self.text[at..end]);
                    at = end;
                }
            }
        }
        (word, at)
    }

    /// A newline at `i` outside quotes: the here-document bodies queued on its line follow it,
    /// and at the top level it ends a command. `None` when a body is still open.
    fn newline(&mut self, i: usize) -> Option<usize> {
        let mut at = i + 1;
        for doc in std::mem::take(&mut self.heredocs) {
            match body_end(self.text, at, &doc, self.input) {
                Some((end, past)) => {
                    self.found.marks.push(Mark::Body { start: at, end });
                    at = past;
                }
                None if self.input == Input::Script => {
                    self.found.marks.push(Mark::Body {
                        start: at,
                        end: self.bytes.len(),
                    });
                    at = self.bytes.len();
                }
                None => return None,
            }
        }
        if self.context() == Context::Top {
            self.found.marks.push(Mark::End { at });
        }
        Some(at)
    }
}

/// The offset just past the closing quote of the `$'…'` whose `$` is at `start`, where a
/// backslash escapes any character (so `\'` is a quote inside); `None` when it is not closed.
pub(super) fn ansi_c_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 2;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\'' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// [`ansi_c_end`] of a `$'…'` inside `"…"`, read as the shell the string is given to reads
/// it: the double quotes' escapes (`\\`, `\"`, `\$`, `` \` ``, backslash-newline) undone first.
/// `None` when the double-quoted string ends first.
pub(super) fn ansi_c_end_in_double(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 2;
    let mut escaped = false;
    while i < bytes.len() {
        let (byte, next) = match (bytes[i], bytes.get(i + 1)) {
            (b'\\', Some(b'\n')) => {
                i += 2;
                continue;
            }
            (b'\\', Some(&c @ (b'\\' | b'"' | b'$' | b'`'))) => (c, i + 2),
            (b'"', _) => return None,
            (c, _) => (c, i + 1),
        };
        if escaped {
            escaped = false;
        } else if byte == b'\\' {
            escaped = true;
        } else if byte == b'\'' {
            return Some(next);
        }
        i = next;
    }
    None
}

/// Where the body of `doc` starting at `start` ends (the start of its delimiter line) and the
/// offset past the delimiter line; `None` when the delimiter line has not come (for a
/// [`Input::Stream`], a last line without its newline has not come yet).
fn body_end(text: &str, start: usize, doc: &Heredoc, input: Input) -> Option<(usize, usize)> {
    let mut line_start = start;
    while line_start < text.len() {
        let newline = text[line_start..].find('\n');
        let (line, past) = match newline {
            Some(n) => (&text[line_start..line_start + n], line_start + n + 1),
            None => (&text[line_start..], text.len()),
        };
        let line = if doc.strip_tabs {
            line.trim_start_matches('\t')
        } else {
            line
        };
        if line == doc.delimiter {
            if newline.is_none() && input == Input::Stream {
                return None;
            }
            return Some((line_start, past));
        }
        line_start = past;
    }
    None
}
