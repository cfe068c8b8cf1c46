//! Word-wrapping styled text to a width in terminal cells, with a prefix on the first line and
//! another on the lines that continue it (a list bullet and its hanging indent, a quote bar).

use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// One styled piece of text.
pub type Piece = Span<'static>;

/// Wrap `spans` to `width` cells; the result has at least one line.
pub fn wrap(spans: &[Piece], first: &[Piece], rest: &[Piece], width: usize) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let mut line: Vec<Piece> = first.to_vec();
    let mut used: usize = first.iter().map(|s| s.content.width()).sum();
    let indent: usize = rest.iter().map(|s| s.content.width()).sum();
    let width = width.max(indent + 4);
    let mut at_start = true;
    for span in spans {
        for word in split_words(&span.content) {
            let w = word.width();
            let blank = word.chars().all(char::is_whitespace);
            if used + w > width && !at_start {
                if blank {
                    continue;
                }
                lines.push(finish(std::mem::take(&mut line)));
                line = rest.to_vec();
                used = indent;
                at_start = true;
            }
            if blank && at_start && !lines.is_empty() {
                continue;
            }
            if used + w <= width {
                line.push(Span::styled(word.to_string(), span.style));
                used += w;
                at_start = false;
                continue;
            }
            // A word longer than the line: break it by characters.
            let mut piece = String::new();
            for c in word.chars() {
                let cw = c.width().unwrap_or(0);
                if used + cw > width && used > indent {
                    line.push(Span::styled(std::mem::take(&mut piece), span.style));
                    lines.push(finish(std::mem::take(&mut line)));
                    line = rest.to_vec();
                    used = indent;
                }
                piece.push(c);
                used += cw;
            }
            if !piece.is_empty() {
                line.push(Span::styled(piece, span.style));
            }
            at_start = false;
        }
    }
    lines.push(finish(line));
    lines
}

/// A line without the spaces it ended on.
fn finish(mut line: Vec<Piece>) -> Line<'static> {
    while line.len() > 1 && line.last().is_some_and(|s| s.content.trim().is_empty()) {
        line.pop();
    }
    Line::from(line)
}

/// Words and the runs of spaces between them, in order.
fn split_words(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let space = rest.starts_with(char::is_whitespace);
        let end = rest
            .find(|c: char| c.is_whitespace() != space)
            .unwrap_or(rest.len());
        let (word, tail) = rest.split_at(end);
        rest = tail;
        Some(word)
    })
}

/// Cut `text` to `width` cells, ending in `…` when it was longer.
pub fn truncate(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let cw = c.width().unwrap_or(0);
        if used + cw + 1 > width {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_words_with_a_hanging_indent() {
        let spans = [Span::raw("one two three four five")];
        let lines = wrap(&spans, &[Span::raw("• ")], &[Span::raw("  ")], 11);
        assert_eq!(texts(&lines), ["• one two", "  three", "  four five"]);
    }

    #[test]
    fn breaks_a_word_longer_than_the_line_and_counts_wide_characters() {
        let spans = [Span::raw("abcdefghij 日本語です")];
        let lines = wrap(&spans, &[], &[], 6);
        assert_eq!(texts(&lines), ["abcdef", "ghij", "日本語", "です"]);
        assert_eq!(truncate("日本語です", 7), "日本語…");
    }
}
