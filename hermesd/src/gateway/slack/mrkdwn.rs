//! Markdown from the model as Slack's mrkdwn: `**bold**` → `*bold*`, `*italic*` → `_italic_`,
//! `~~struck~~` → `~struck~`, headings bold, links `<url|text>`, lists with `•` and numbers,
//! quotes `> `, code spans and fenced blocks kept (a fence's language dropped: Slack shows it as
//! text), a table as a preformatted block. Text is escaped (`&`, `<`, `>`) except Slack's own
//! entities the model may write (`<@U…>`, `<#C…>`, `<!here>`), which pass through so a mention
//! still mentions. Raw HTML is shown as text. Like Hermes' `format_message`, but from a parse
//! rather than regular expressions, so markup inside code is never touched.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

use crate::gateway::markup::markdown_options;

/// `markdown` as Slack mrkdwn.
pub fn to_mrkdwn(markdown: &str) -> String {
    let mut r = Renderer::default();
    for event in Parser::new_ext(markdown, markdown_options()) {
        r.event(event);
    }
    r.flush_text();
    r.out.trim_end().to_string()
}

#[derive(Default)]
struct Renderer {
    out: String,
    /// Text of the current run (pulldown splits a run at `<`, `&`…): escaped as a whole.
    text: String,
    /// Newlines owed before the next block.
    gap: usize,
    lists: Vec<Option<u64>>,
    quote: usize,
    links: Vec<(String, usize)>,
    in_code_block: bool,
    /// The rows of the table being read.
    table: Option<Vec<Vec<String>>>,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        if let Event::Text(text) = &event {
            if self.in_code_block || self.table.is_some() {
                self.raw_text(text);
            } else {
                self.text.push_str(text);
            }
            return;
        }
        self.flush_text();
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Code(code) => {
                if let Some(rows) = &mut self.table {
                    push_cell(rows, &code);
                } else {
                    self.write(&format!("`{}`", escape(&code)));
                }
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                self.text.push_str(&html);
                self.flush_text();
            }
            Event::SoftBreak | Event::HardBreak => self.newline(),
            Event::Rule => {
                self.block();
                self.write("──────────");
                self.gap = 2;
            }
            _ => {}
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block(),
            Tag::Heading { .. } => {
                self.block();
                self.write("*");
            }
            Tag::Strong => self.write("*"),
            Tag::Emphasis => self.write("_"),
            Tag::Strikethrough => self.write("~"),
            Tag::BlockQuote(_) => {
                self.block();
                self.quote += 1;
            }
            Tag::CodeBlock(_) => {
                self.block();
                self.write("```\n");
                self.in_code_block = true;
            }
            Tag::List(first) => {
                if self.lists.is_empty() {
                    self.block();
                }
                self.lists.push(first);
            }
            Tag::Item => {
                self.newline_if_needed();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "• ".to_string(),
                };
                self.write(&format!("{}{marker}", "    ".repeat(depth)));
            }
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.out.len()));
            }
            Tag::Table(_) => {
                self.block();
                self.table = Some(Vec::new());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(rows) = &mut self.table {
                    rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                if let Some(row) = self.table.as_mut().and_then(|rows| rows.last_mut()) {
                    row.push(String::new());
                }
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.gap = 2,
            TagEnd::Heading(_) => {
                self.write("*");
                self.gap = 2;
            }
            TagEnd::Strong => self.write("*"),
            TagEnd::Emphasis => self.write("_"),
            TagEnd::Strikethrough => self.write("~"),
            TagEnd::BlockQuote(_) => {
                self.quote = self.quote.saturating_sub(1);
                self.gap = 2;
            }
            TagEnd::CodeBlock => {
                self.in_code_block = false;
                if !self.out.ends_with('\n') {
                    self.out.push('\n');
                }
                self.out.push_str("```");
                self.gap = 2;
            }
            TagEnd::List(_) => {
                self.lists.pop();
                self.gap = if self.lists.is_empty() { 2 } else { 1 };
            }
            TagEnd::Item => self.gap = self.gap.max(1),
            TagEnd::Link | TagEnd::Image => self.end_link(),
            TagEnd::Table => self.end_table(),
            _ => {}
        }
    }

    /// Start a block: pay the newlines owed.
    fn block(&mut self) {
        if !self.out.is_empty() {
            for _ in 0..self.gap.max(1) {
                self.newline();
            }
        }
        self.gap = 0;
    }

    fn newline_if_needed(&mut self) {
        if !self.out.is_empty() && !self.out.ends_with('\n') {
            self.newline();
        }
        self.gap = 0;
    }

    fn newline(&mut self) {
        self.out.push('\n');
        if self.quote > 0 {
            self.out.push_str(&"> ".repeat(self.quote));
        }
    }

    fn write(&mut self, s: &str) {
        if self.quote > 0 && (self.out.is_empty() || self.out.ends_with('\n')) {
            self.out.push_str(&"> ".repeat(self.quote));
        }
        self.out.push_str(s);
    }

    fn raw_text(&mut self, text: &str) {
        if let Some(rows) = &mut self.table {
            push_cell(rows, text);
            return;
        }
        self.out.push_str(&escape(text));
    }

    fn flush_text(&mut self) {
        if self.text.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.text);
        let escaped = escape_keeping_entities(&text);
        self.write(&escaped);
    }

    fn end_link(&mut self) {
        let Some((url, at)) = self.links.pop() else {
            return;
        };
        let label = self.out.split_off(at.min(self.out.len()));
        let url = url
            .replace('|', "%7C")
            .replace('>', "%3E")
            .replace('<', "%3C");
        if label.is_empty() || label == url {
            self.out.push_str(&format!("<{url}>"));
        } else {
            self.out
                .push_str(&format!("<{url}|{}>", label.replace('|', "¦")));
        }
    }

    fn end_table(&mut self) {
        let Some(rows) = self.table.take() else {
            return;
        };
        let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                rows.iter()
                    .filter_map(|r| r.get(c))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut lines = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let cells: Vec<String> = (0..columns)
                .map(|c| {
                    let cell = row.get(c).map(String::as_str).unwrap_or("");
                    format!("{cell:<width$}", width = widths[c])
                })
                .collect();
            lines.push(cells.join(" | ").trim_end().to_string());
            if i == 0 {
                let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                lines.push(rule.join("-+-"));
            }
        }
        self.write(&format!("```\n{}\n```", escape(&lines.join("\n"))));
        self.gap = 2;
    }
}

fn push_cell(rows: &mut [Vec<String>], text: &str) {
    if let Some(cell) = rows.last_mut().and_then(|row| row.last_mut()) {
        cell.push_str(text);
    }
}

/// Slack's three escapes.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// [`escape`], but Slack's entities (`<@U…>`, `<#C…>`, `<!here>`, `<!subteam^…>`) pass through.
fn escape_keeping_entities(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('<') {
        out.push_str(&escape(&rest[..start]));
        let candidate = &rest[start..];
        let entity = candidate
            .find('>')
            .map(|end| &candidate[..=end])
            .filter(|e| is_entity(e));
        match entity {
            Some(entity) => {
                out.push_str(entity);
                rest = &candidate[entity.len()..];
            }
            None => {
                out.push_str("&lt;");
                rest = &candidate[1..];
            }
        }
    }
    out.push_str(&escape(rest));
    out
}

fn is_entity(candidate: &str) -> bool {
    let inner = &candidate[1..candidate.len() - 1];
    let id_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '^' | '|' | '.' | '_' | '-'))
    };
    match inner.chars().next() {
        Some('@') | Some('#') | Some('!') => id_ok(&inner[1..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markdown_becomes_mrkdwn() {
        assert_eq!(to_mrkdwn("Hello from **Hermes**"), "Hello from *Hermes*");
        assert_eq!(to_mrkdwn("*it* and ~~old~~"), "_it_ and ~old~");
        assert_eq!(to_mrkdwn("## Title\n\ntext"), "*Title*\n\ntext");
        assert_eq!(
            to_mrkdwn("see [docs](https://x.io/a?b=1) now"),
            "see <https://x.io/a?b=1|docs> now"
        );
        assert_eq!(to_mrkdwn("- a\n- b"), "• a\n• b");
        assert_eq!(to_mrkdwn("1. a\n2. b"), "1. a\n2. b");
        assert_eq!(to_mrkdwn("> quoted\n\nafter"), "> quoted\n\nafter");
    }

    #[test]
    fn code_is_kept_and_text_escaped_but_entities_pass() {
        assert_eq!(
            to_mrkdwn("```rust\nlet a = b < c && **d**;\n```"),
            "```\nlet a = b &lt; c &amp;&amp; **d**;\n```"
        );
        assert_eq!(to_mrkdwn("`a<b`"), "`a&lt;b`");
        assert_eq!(to_mrkdwn("1 < 2 & 3 > 2"), "1 &lt; 2 &amp; 3 &gt; 2");
        assert_eq!(
            to_mrkdwn("hi <@U123> and <!here>"),
            "hi <@U123> and <!here>"
        );
        assert_eq!(
            to_mrkdwn("<script>x</script>"),
            "&lt;script&gt;x&lt;/script&gt;"
        );
    }

    #[test]
    fn a_table_is_preformatted() {
        let got = to_mrkdwn("| a | bb |\n|---|---|\n| 1 | 2 |");
        assert_eq!(got, "```\na | bb\n--+---\n1 | 2\n```");
    }
}
