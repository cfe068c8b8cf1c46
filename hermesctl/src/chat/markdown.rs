//! Streamed Markdown for the terminal: text is shown as it arrives, and each line is drawn again
//! styled once it is complete — headings bold, lists with bullets, `code` in colour, **bold**
//! bold, fenced code blocks highlighted for their language (syntect). Without a terminal the text
//! passes through unchanged.

use std::sync::LazyLock;

use syntect::{
    easy::HighlightLines, highlighting::ThemeSet, parsing::SyntaxSet,
    util::as_24_bit_terminal_escaped,
};

/// Loaded on the first code block, not at start-up.
static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(SyntaxSet::load_defaults_newlines);
static THEMES: LazyLock<ThemeSet> = LazyLock::new(ThemeSet::load_defaults);

const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const CODE: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// Renders one streamed answer.
pub struct MarkdownStream {
    /// Terminal columns; `None` when stdout is not a terminal (no styling, no redraw).
    width: Option<usize>,
    partial: String,
    in_code: bool,
    /// The highlighter of the open code block, when its language is known.
    code: Option<HighlightLines<'static>>,
}

impl std::fmt::Debug for MarkdownStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MarkdownStream")
            .field("width", &self.width)
            .field("in_code", &self.in_code)
            .finish_non_exhaustive()
    }
}

/// A highlighter for the language named after the opening fence.
fn highlighter(language: &str) -> Option<HighlightLines<'static>> {
    let language = language.trim();
    if language.is_empty() {
        return None;
    }
    let syntax = SYNTAXES.find_syntax_by_token(language)?;
    let theme = THEMES.themes.get("base16-ocean.dark")?;
    Some(HighlightLines::new(syntax, theme))
}

impl MarkdownStream {
    pub fn new(width: Option<usize>) -> Self {
        Self {
            width,
            partial: String::new(),
            in_code: false,
            code: None,
        }
    }

    /// What to print for `text`: the raw characters at once, complete lines redrawn styled.
    pub fn push(&mut self, text: &str) -> String {
        let Some(width) = self.width else {
            // Unstyled, but remember whether the answer ends mid-line.
            match text.rfind('\n') {
                Some(end) => self.partial = text[end + 1..].to_string(),
                None => self.partial.push_str(text),
            }
            return text.to_string();
        };
        let mut out = String::new();
        for piece in text.split_inclusive('\n') {
            match piece.strip_suffix('\n') {
                Some(rest) => {
                    self.partial.push_str(rest);
                    out.push_str(rest);
                    out.push_str(&erase(&self.partial, width));
                    out.push_str(&self.style_line());
                    out.push('\n');
                    self.partial.clear();
                }
                None => {
                    self.partial.push_str(piece);
                    out.push_str(piece);
                }
            }
        }
        out
    }

    /// The end of the answer: the last line styled, and a newline.
    pub fn finish(&mut self) -> String {
        let out = match self.width {
            Some(width) if !self.partial.is_empty() => {
                format!("{}{}\n", erase(&self.partial, width), self.style_line())
            }
            _ if !self.partial.is_empty() => "\n".to_string(),
            _ => String::new(),
        };
        self.partial.clear();
        self.in_code = false;
        self.code = None;
        out
    }

    fn style_line(&mut self) -> String {
        let line = self.partial.as_str();
        let trimmed = line.trim_start();
        if let Some(language) = trimmed.strip_prefix("```") {
            self.in_code = !self.in_code;
            self.code = if self.in_code {
                highlighter(language)
            } else {
                None
            };
            return format!("{DIM}{line}{RESET}");
        }
        if self.in_code {
            let highlighted = self.code.as_mut().and_then(|h| {
                let with_newline = format!("{line}\n");
                h.highlight_line(&with_newline, &SYNTAXES)
                    .ok()
                    .map(|ranges| as_24_bit_terminal_escaped(&ranges, false))
            });
            return match highlighted {
                Some(text) => format!("{}{RESET}", text.trim_end_matches('\n')),
                None => format!("{CODE}{line}{RESET}"),
            };
        }
        if trimmed.starts_with('#') {
            return format!("{BOLD}{line}{RESET}");
        }
        let indent = &line[..line.len() - trimmed.len()];
        match trimmed
            .strip_prefix("- ")
            .or_else(|| trimmed.strip_prefix("* "))
        {
            Some(item) => format!("{indent}• {}", inline(item)),
            None => inline(line),
        }
    }
}

/// Move back over the raw text of the current line (it may have wrapped) and clear it.
fn erase(raw: &str, width: usize) -> String {
    let rows = raw.chars().count().max(1).div_ceil(width.max(1));
    if rows > 1 {
        format!("\r\x1b[{}A\x1b[J", rows - 1)
    } else {
        "\r\x1b[J".to_string()
    }
}

/// `code` and **bold** inside a line.
fn inline(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('`')
            && let Some(end) = after.find('`')
        {
            out.push_str(&format!("{CODE}{}{RESET}", &after[..end]));
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix("**")
            && let Some(end) = after.find("**")
        {
            out.push_str(&format!("{BOLD}{}{RESET}", &after[..end]));
            rest = &after[end + 2..];
        } else {
            let next = rest
                .char_indices()
                .skip(1)
                .find(|(_, c)| *c == '`' || *c == '*')
                .map_or(rest.len(), |(i, _)| i);
            out.push_str(&rest[..next]);
            rest = &rest[next..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_a_terminal_text_passes_through() {
        let mut stream = MarkdownStream::new(None);
        assert_eq!(stream.push("# Hi\n- a `b`"), "# Hi\n- a `b`");
        assert_eq!(stream.finish(), "\n");
    }

    #[test]
    fn complete_lines_are_redrawn_styled() {
        let mut stream = MarkdownStream::new(Some(80));
        assert_eq!(
            stream.push("- use `ls`"),
            "- use `ls`",
            "the partial line shows at once"
        );
        let out = stream.push(" now\n");
        assert!(out.starts_with(" now\r\x1b[J"), "{out:?}");
        assert!(
            out.ends_with(&format!("• use {CODE}ls{RESET} now\n")),
            "{out:?}"
        );
        let rust = stream.push("```rust\nlet x = 1;\n```\n");
        assert!(
            rust.contains("\x1b[38;2;"),
            "24-bit colours for a known language: {rust:?}"
        );
        let plain = stream.push("```\nplain\n```\n");
        assert!(plain.contains(&format!("{CODE}plain{RESET}")), "{plain:?}");
        assert!(stream.push("**done**").contains("**done**"));
        assert!(stream.finish().contains(&format!("{BOLD}done{RESET}")));
    }

    #[test]
    fn a_wrapped_line_is_erased_row_by_row() {
        assert_eq!(erase(&"x".repeat(25), 10), "\r\x1b[2A\x1b[J");
        assert_eq!(erase("", 10), "\r\x1b[J");
    }
}
