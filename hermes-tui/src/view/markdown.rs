//! Markdown (pulldown-cmark) to wrapped, styled lines: headings, lists, emphasis, links, block
//! quotes, tables, and fenced code highlighted by language. A half-streamed answer renders too
//! (an open code fence is a code block to the end).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::{
    style::{Modifier, Style},
    text::{Line, Span},
};
use unicode_width::UnicodeWidthStr;

use super::{
    Styles, highlight,
    wrap::{Piece, truncate, wrap},
};

struct ListLevel {
    next: Option<u64>,
}

struct Table {
    alignments: Vec<Alignment>,
    rows: Vec<Vec<String>>,
    cell: String,
    row: Vec<String>,
}

struct Renderer<'a> {
    styles: &'a Styles,
    width: usize,
    out: Vec<Line<'static>>,
    spans: Vec<Piece>,
    first_prefix: Vec<Piece>,
    rest_prefix: Vec<Piece>,
    styles_stack: Vec<Style>,
    lists: Vec<ListLevel>,
    quote: usize,
    code: Option<(String, String)>,
    table: Option<Table>,
    link: Option<String>,
}

/// Render `text` to lines at most `width` cells wide.
pub fn render(text: &str, width: usize, styles: &Styles) -> Vec<Line<'static>> {
    let mut r = Renderer {
        styles,
        width: width.max(8),
        out: Vec::new(),
        spans: Vec::new(),
        first_prefix: Vec::new(),
        rest_prefix: Vec::new(),
        styles_stack: vec![Style::new()],
        lists: Vec::new(),
        quote: 0,
        code: None,
        table: None,
        link: None,
    };
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    for event in Parser::new_ext(text, options) {
        r.event(event);
    }
    if let Some((language, code)) = r.code.take() {
        r.code_block(&language, &code);
    }
    r.flush();
    while r.out.last().is_some_and(|l| l.width() == 0) {
        r.out.pop();
    }
    r.out
}

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles_stack.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, f: impl FnOnce(Style) -> Style) {
        let style = f(self.style());
        self.styles_stack.push(style);
    }

    fn pop_style(&mut self) {
        if self.styles_stack.len() > 1 {
            self.styles_stack.pop();
        }
    }

    fn quote_prefix(&self) -> Vec<Piece> {
        (0..self.quote)
            .map(|_| Span::styled("│ ", self.styles.dim))
            .collect()
    }

    /// End the current line of text, wrapped.
    fn flush(&mut self) {
        if self.spans.is_empty() && self.first_prefix.is_empty() {
            return;
        }
        let mut first = self.quote_prefix();
        first.extend(std::mem::take(&mut self.first_prefix));
        let mut rest = self.quote_prefix();
        rest.extend(self.rest_prefix.iter().cloned());
        let spans = std::mem::take(&mut self.spans);
        self.out.extend(wrap(&spans, &first, &rest, self.width));
    }

    fn blank(&mut self) {
        if self.out.last().is_some_and(|l| l.width() > 0) {
            self.out.push(Line::default());
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
        } else if let Some(table) = &mut self.table {
            table.cell.push_str(text);
        } else {
            let style = self.style();
            self.spans.push(Span::styled(text.to_string(), style));
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                if let Some(table) = &mut self.table {
                    table.cell.push_str(&code);
                } else {
                    self.spans
                        .push(Span::styled(code.to_string(), self.styles.code));
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                self.flush();
                self.first_prefix = self.rest_prefix.clone();
            }
            Event::Rule => {
                self.flush();
                let rule = "─".repeat(self.width.min(40));
                self.out.push(Line::styled(rule, self.styles.dim));
                self.blank();
            }
            Event::TaskListMarker(done) => self.text(if done { "[x] " } else { "[ ] " }),
            Event::Html(html) | Event::InlineHtml(html) => self.text(&html),
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
            Event::FootnoteReference(f) => self.text(&format!("[{f}]")),
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Heading { level, .. } => {
                self.flush();
                let accent = self.styles.accent;
                self.push_style(|_| {
                    let s = accent.add_modifier(Modifier::BOLD);
                    if level == HeadingLevel::H1 {
                        s.add_modifier(Modifier::UNDERLINED)
                    } else {
                        s
                    }
                });
            }
            Tag::Paragraph => {}
            Tag::BlockQuote(_) => {
                self.flush();
                self.quote += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                let language = match kind {
                    CodeBlockKind::Fenced(lang) => lang.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                self.lists.push(ListLevel { next: start });
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let bullet = match self.lists.last_mut() {
                    Some(ListLevel { next: Some(n) }) => {
                        let bullet = format!("{n}. ");
                        *n += 1;
                        bullet
                    }
                    _ => "• ".to_string(),
                };
                let indent = "  ".repeat(depth);
                self.rest_prefix =
                    vec![Span::raw(format!("{indent}{}", " ".repeat(bullet.width())))];
                self.first_prefix =
                    vec![Span::raw(indent), Span::styled(bullet, self.styles.accent)];
            }
            Tag::Emphasis => self.push_style(|s| s.add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.push_style(|s| s.add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.push_style(|s| s.add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                let accent = self.styles.accent;
                self.push_style(|_| accent.add_modifier(Modifier::UNDERLINED));
                self.link = Some(dest_url.to_string());
            }
            Tag::Table(alignments) => {
                self.flush();
                self.table = Some(Table {
                    alignments,
                    rows: Vec::new(),
                    cell: String::new(),
                    row: Vec::new(),
                });
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Heading(_) => {
                self.pop_style();
                self.flush();
                self.blank();
            }
            TagEnd::Paragraph => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.quote = self.quote.saturating_sub(1);
                self.blank();
            }
            TagEnd::CodeBlock => {
                if let Some((language, code)) = self.code.take() {
                    self.code_block(&language, &code);
                }
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.rest_prefix.clear();
                if self.lists.is_empty() {
                    self.blank();
                }
            }
            TagEnd::Item => {
                self.flush();
                self.rest_prefix.clear();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                if let Some(url) = self.link.take() {
                    let shown: String = self.spans.iter().map(|s| s.content.as_ref()).collect();
                    if !shown.ends_with(&url) {
                        self.spans
                            .push(Span::styled(format!(" ({url})"), self.styles.dim));
                    }
                }
            }
            TagEnd::TableCell => {
                if let Some(table) = &mut self.table {
                    let cell = std::mem::take(&mut table.cell);
                    table.row.push(cell.trim().to_string());
                }
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(&table);
                    self.blank();
                }
            }
            _ => {}
        }
    }

    fn code_block(&mut self, language: &str, code: &str) {
        let base = self.styles.code_block;
        let rows = highlight::highlight(code, language, base, self.styles.color);
        let gutter = self.quote_prefix();
        for pieces in rows {
            let mut first = gutter.clone();
            first.push(Span::styled("  ", base));
            let mut rest = gutter.clone();
            rest.push(Span::styled("  ", base));
            self.out.extend(wrap(&pieces, &first, &rest, self.width));
        }
        self.blank();
    }

    fn table_lines(&mut self, table: &Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.width());
            }
        }
        // Shrink the widest columns until the table fits (3 cells of separator per column).
        let budget = self.width.saturating_sub(3 * columns).max(columns * 3);
        while widths.iter().sum::<usize>() > budget {
            let Some(widest) = widths.iter_mut().max() else {
                break;
            };
            if *widest <= 3 {
                break;
            }
            *widest -= 1;
        }
        for (r, row) in table.rows.iter().enumerate() {
            let mut spans = Vec::new();
            for (i, width) in widths.iter().enumerate() {
                let cell = truncate(row.get(i).map_or("", String::as_str), *width);
                let pad = width.saturating_sub(cell.width());
                let (left, right) = match table.alignments.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                if i > 0 {
                    spans.push(Span::styled(" │ ", self.styles.dim));
                }
                let style = if r == 0 {
                    Style::new().add_modifier(Modifier::BOLD)
                } else {
                    Style::new()
                };
                spans.push(Span::styled(
                    format!("{}{cell}{}", " ".repeat(left), " ".repeat(right)),
                    style,
                ));
            }
            self.out.push(Line::from(spans));
            if r == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                self.out
                    .push(Line::styled(rule.join("─┼─"), self.styles.dim));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str, width: usize) -> Vec<String> {
        render(text, width, &Styles::new(&crate::config::Theme::default()))
            .iter()
            .map(|l| l.to_string())
            .collect()
    }

    #[test]
    fn headings_lists_and_paragraphs() {
        let lines = plain(
            "# Title\n\nSome *text* here.\n\n- one\n- two long item\n\n1. first\n2. second\n",
            14,
        );
        assert_eq!(
            lines,
            [
                "Title",
                "",
                "Some text",
                "here.",
                "",
                "• one",
                "• two long",
                "  item",
                "",
                "1. first",
                "2. second"
            ]
        );
    }

    #[test]
    fn links_show_their_target_and_tables_line_up() {
        let lines = plain(
            "[docs](https://x.y/z)\n\n| a | bb |\n|---|---:|\n| 1 | 2 |\n",
            40,
        );
        assert_eq!(lines[0], "docs (https://x.y/z)");
        assert_eq!(lines[2], "a │ bb");
        assert_eq!(lines[3], "──┼───");
        assert_eq!(lines[4], "1 │  2");
    }

    #[test]
    fn an_open_code_fence_renders_as_code() {
        let lines = plain("Look:\n\n```rust\nfn main() {}\n", 40);
        assert_eq!(lines, ["Look:", "", "  fn main() {}"]);
    }
}
