//! Markdown from the model, rendered for Telegram.
//!
//! Owns the one conversion the Telegram gateway needs: CommonMark (plus GFM
//! strikethrough and tables) to Telegram's HTML parse mode, and the same walk
//! with markup switched off for the plain-text retry. The model's output is
//! untrusted, so raw HTML is escaped as text, only Telegram's tags are ever
//! emitted, and every tag is opened lazily (no empty entities) and closed in
//! order. Telegram's nesting rules are kept: nothing inside `<pre>`/`<code>`,
//! no `<code>` inside `<a>`, no `<a>` inside `<a>`, no nested `<blockquote>`.
//!
//! Both renderings come from one walk, so the plain text is the HTML's visible
//! text except that a link keeps its target (`text (url)`): the plain text is
//! never shorter than what Telegram counts for the HTML, which is what
//! [`super::split`] measures.

use pulldown_cmark::{Alignment, CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Telegram's HTML for `markdown` (<https://core.telegram.org/bots/api#html-style>).
pub fn to_telegram_html(markdown: &str) -> String {
    render(markdown, true)
}

/// The visible text of `markdown` without markup, for the plain-text retry
/// when Telegram rejects the HTML. Links keep their target as `text (url)`.
pub fn to_plain_text(markdown: &str) -> String {
    render(markdown, false)
}

/// The parser options both renderings (and the splitter) share.
pub(crate) fn markdown_options() -> Options {
    Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES
}

const RULE: &str = "——————————";
const LINK_SCHEMES: [&str; 4] = ["http://", "https://", "tg://", "mailto:"];

fn render(markdown: &str, html: bool) -> String {
    let mut renderer = Renderer {
        html,
        ..Renderer::default()
    };
    for event in Parser::new_ext(markdown, markdown_options()) {
        renderer.event(event);
    }
    renderer.out
}

/// Newlines owed before the next block: one between lines, two between blocks.
const LINE: usize = 1;
const BLANK: usize = 2;

/// An open Telegram tag, written only once text arrives inside it.
struct OpenTag {
    open: String,
    close: &'static str,
    written: bool,
}

/// An open link or image: its target and the visible text seen so far.
struct OpenLink {
    href: String,
    shown_url: String,
    text: String,
    tagged: bool,
}

#[derive(Default)]
struct Renderer {
    html: bool,
    out: String,
    gap: usize,
    tags: Vec<Option<OpenTag>>,
    lists: Vec<Option<u64>>,
    indents: Vec<usize>,
    /// Where the last list marker ended: a block right after it stays on its line.
    marker_end: usize,
    links: Vec<OpenLink>,
    /// The cells of the table being read, and its columns' alignment.
    table: Option<Vec<Vec<String>>>,
    aligns: Vec<Alignment>,
    /// The verbatim text of the code or HTML block being read.
    raw: Option<String>,
    /// The language of the code block being read; `None` in an HTML block.
    code_lang: Option<String>,
}

impl Renderer {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::Html(text) | Event::InlineHtml(text) => self.text(&text),
            Event::Code(code) => self.inline_code(&code),
            Event::SoftBreak | Event::HardBreak => self.line_break(),
            Event::Rule => self.rule(),
            _ => {} // math, footnotes and task lists are not enabled
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Strong => self.open_tag("<b>", "</b>"),
            Tag::Heading { .. } => self.open_block_tag("<b>", "</b>"),
            Tag::Emphasis => self.open_tag("<i>", "</i>"),
            Tag::Strikethrough => self.open_tag("<s>", "</s>"),
            Tag::BlockQuote(_) => self.open_block_tag("<blockquote>", "</blockquote>"),
            Tag::List(first) => self.start_list(first),
            Tag::Item => self.start_item(),
            Tag::CodeBlock(kind) => self.start_raw(Some(code_language(&kind))),
            Tag::HtmlBlock => self.start_raw(None),
            Tag::Table(aligns) => {
                self.start_block();
                (self.table, self.aligns) = (Some(Vec::new()), aligns);
            }
            Tag::TableHead | Tag::TableRow => {
                self.table.iter_mut().for_each(|rows| rows.push(Vec::new()))
            }
            Tag::TableCell => self.table_cell(),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => self.start_link(&dest_url),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Strong | TagEnd::Emphasis | TagEnd::Strikethrough => self.pop_tag(),
            TagEnd::Heading(_) | TagEnd::BlockQuote(_) => {
                self.pop_tag();
                self.gap = 0; // what the quote's last paragraph owed is inside it
                self.end_block();
            }
            TagEnd::Paragraph => self.owe(BLANK),
            TagEnd::List(_) => self.end_list(),
            TagEnd::Item => {
                self.indents.pop();
                self.owe(LINE);
            }
            TagEnd::CodeBlock | TagEnd::HtmlBlock => self.end_raw_block(),
            TagEnd::Table => self.end_table(),
            TagEnd::Link | TagEnd::Image => self.end_link(),
            _ => {}
        }
    }

    fn owe(&mut self, gap: usize) {
        self.gap = self.gap.max(gap);
    }

    /// A block starts on a line of its own, unless it opens a list item.
    fn start_block(&mut self) {
        if self.out.len() != self.marker_end {
            self.owe(LINE);
        }
    }

    /// A block is followed by a blank line, or a line break inside a list item.
    fn end_block(&mut self) {
        self.owe(if self.indents.is_empty() { BLANK } else { LINE });
    }

    fn content_indent(&self) -> usize {
        self.indents.last().copied().unwrap_or(0)
    }

    fn newlines(&mut self, count: usize, indent: usize) {
        self.out.extend(std::iter::repeat_n('\n', count));
        self.out.extend(std::iter::repeat_n(' ', indent));
    }

    /// Writes the owed gap, the indent and any tags still waiting for text.
    fn begin_output(&mut self, indent: usize) {
        let gap = std::mem::take(&mut self.gap);
        if gap > 0 && !self.out.is_empty() {
            self.newlines(gap, indent);
        }
        for tag in self.tags.iter_mut().flatten().filter(|tag| !tag.written) {
            self.out.push_str(&tag.open);
            tag.written = true;
        }
    }

    fn push_escaped(&mut self, text: &str) {
        if self.html {
            self.out.push_str(&escape(text, false));
        } else {
            self.out.push_str(text);
        }
    }

    fn text(&mut self, text: &str) {
        if let Some(raw) = self.raw.as_mut() {
            return raw.push_str(text);
        }
        for link in &mut self.links {
            link.text.push_str(text);
        }
        if let Some(cell) = self
            .table
            .as_mut()
            .and_then(|rows| rows.last_mut()?.last_mut())
        {
            return cell.push_str(text);
        }
        self.begin_output(self.content_indent());
        self.push_escaped(text);
    }

    fn line_break(&mut self) {
        if self.table.is_some() {
            return self.text(" ");
        }
        self.newlines(LINE, self.content_indent());
    }

    fn rule(&mut self) {
        self.start_block();
        self.begin_output(self.content_indent());
        self.out.push_str(RULE);
        self.end_block();
    }

    fn inline_code(&mut self, code: &str) {
        let in_anchor = self.links.iter().any(|link| link.tagged);
        if !self.html || self.table.is_some() || in_anchor {
            return self.text(code);
        }
        self.wrapped(self.content_indent(), "<code>", code, "</code>");
    }

    fn open_block_tag(&mut self, open: &str, close: &'static str) {
        self.start_block();
        self.open_tag(open, close);
    }

    /// Opens a tag lazily; suppressed (pushed as `None`) in plain text, in a
    /// table, or when the same tag is already open (a quote in a quote).
    fn open_tag(&mut self, open: &str, close: &'static str) {
        let nested = self.tags.iter().flatten().any(|tag| tag.close == close);
        let allowed = self.html && self.table.is_none() && !nested;
        self.tags
            .push(allowed.then(|| OpenTag::new(open.to_owned(), close)));
    }

    fn pop_tag(&mut self) {
        if let Some(tag) = self.tags.pop() {
            self.close_tag(tag);
        }
    }

    fn close_tag(&mut self, tag: Option<OpenTag>) {
        if let Some(tag) = tag.filter(|tag| tag.written) {
            self.out.push_str(tag.close);
        }
    }

    fn start_list(&mut self, first: Option<u64>) {
        if !self.indents.is_empty() {
            self.owe(LINE);
        }
        self.lists.push(first);
    }

    fn end_list(&mut self) {
        self.lists.pop();
        let nested = !self.lists.is_empty();
        self.owe(if nested { LINE } else { BLANK });
    }

    fn start_item(&mut self) {
        let number = self.lists.last_mut().and_then(Option::as_mut);
        let marker = number.map_or("• ".to_owned(), |n| {
            format!("{}. ", std::mem::replace(n, *n + 1))
        });
        let base = self.content_indent();
        self.begin_output(base);
        self.out.push_str(&marker);
        self.marker_end = self.out.len();
        self.indents.push(base + marker.chars().count());
    }

    fn start_raw(&mut self, code_lang: Option<String>) {
        self.start_block();
        self.raw = Some(String::new());
        self.code_lang = code_lang;
    }

    fn end_raw_block(&mut self) {
        let Some(raw) = self.raw.take() else { return };
        let body = raw.trim_end_matches(['\n', '\r']);
        match self.code_lang.take() {
            Some(lang) if !body.is_empty() => self.code_block(&lang, body),
            Some(_) => {}
            None => self.text(body.trim_end()),
        }
        self.end_block();
    }

    fn code_block(&mut self, lang: &str, body: &str) {
        let class = match lang {
            "" => String::new(),
            lang => format!(" class=\"language-{lang}\""),
        };
        self.wrapped(0, &format!("<pre><code{class}>"), body, "</code></pre>");
    }

    /// `body` escaped between `open` and `close` (written in HTML only).
    fn wrapped(&mut self, indent: usize, open: &str, body: &str, close: &str) {
        self.begin_output(indent);
        if self.html {
            self.out.push_str(open);
        }
        self.push_escaped(body);
        if self.html {
            self.out.push_str(close);
        }
    }

    fn table_cell(&mut self) {
        if let Some(row) = self.table.as_mut().and_then(|rows| rows.last_mut()) {
            row.push(String::new());
        }
    }

    fn end_table(&mut self) {
        if let Some(rows) = self.table.take() {
            self.wrapped(0, "<pre>", &table_layout(&rows, &self.aligns), "</pre>");
            self.end_block();
        }
    }

    fn start_link(&mut self, dest: &str) {
        let href = link_href(dest);
        let outermost = self.table.is_none() && self.links.is_empty();
        let tagged = self.html && outermost && is_safe_href(&href);
        if tagged {
            let open = format!("<a href=\"{}\">", escape(&href, true));
            self.tags.push(Some(OpenTag::new(open, "</a>")));
        }
        let (shown_url, text) = (dest.to_owned(), String::new());
        self.links.push(OpenLink {
            href,
            shown_url,
            text,
            tagged,
        });
    }

    /// Closes the anchor, or spells the target out after the text (`text (url)`)
    /// when it could not be a Telegram link or the rendering is plain.
    fn end_link(&mut self) {
        let Some(link) = self.links.pop() else { return };
        if link.text.trim().is_empty() {
            self.text(&link.shown_url);
        } else if !link.tagged && self.links.is_empty() && !link.shows_target() {
            self.text(&format!(" ({})", link.href));
        }
        if link.tagged {
            self.pop_tag();
        }
    }
}

impl OpenTag {
    fn new(open: String, close: &'static str) -> Self {
        Self {
            open,
            close,
            written: false,
        }
    }
}

impl OpenLink {
    fn shows_target(&self) -> bool {
        self.text == self.shown_url || self.text == self.href
    }
}

/// The rows as monospace text: cells padded to their column's width and
/// alignment, joined by ` | `, with a `-+-` rule under the header.
fn table_layout(rows: &[Vec<String>], aligns: &[Alignment]) -> String {
    let mut widths = vec![0; aligns.len()];
    for row in rows {
        widths.resize(widths.len().max(row.len()), 0);
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.trim().chars().count());
        }
    }
    let mut lines = Vec::new();
    for (index, row) in rows.iter().enumerate() {
        let cells = widths.iter().enumerate().map(|(column, &width)| {
            let align = aligns.get(column).copied().unwrap_or(Alignment::None);
            pad(row.get(column).map_or("", |cell| cell.trim()), width, align)
        });
        lines.push(cells.collect::<Vec<_>>().join(" | ").trim_end().to_owned());
        if index == 0 {
            let dashes = widths.iter().map(|&width| "-".repeat(width.max(1)));
            lines.push(dashes.collect::<Vec<_>>().join("-+-"));
        }
    }
    lines.join("\n")
}

fn pad(cell: &str, width: usize, align: Alignment) -> String {
    match align {
        Alignment::Right => format!("{cell:>width$}"),
        Alignment::Center => format!("{cell:^width$}"),
        Alignment::Left | Alignment::None => format!("{cell:<width$}"),
    }
}

/// A fenced block's language: its info string's first word, only `[A-Za-z0-9_+-]`.
fn code_language(kind: &CodeBlockKind<'_>) -> String {
    let CodeBlockKind::Fenced(info) = kind else {
        return String::new();
    };
    let word = info.split_whitespace().next().unwrap_or("");
    word.chars()
        .filter(|c| c.is_ascii_alphanumeric() || "_+-".contains(*c))
        .collect()
}

/// The target Telegram gets: an address without a scheme (as `<me@example.org>`
/// gives) as a `mailto:` link, anything else as written.
fn link_href(dest: &str) -> String {
    let bare_email = dest.contains('@') && !dest.contains([':', '/']);
    let scheme = if bare_email { "mailto:" } else { "" };
    format!("{scheme}{dest}")
}

/// Whether Telegram may carry `href` as a link: one of its schemes, something
/// after the scheme, and no whitespace or control characters.
fn is_safe_href(href: &str) -> bool {
    let lower = href.to_ascii_lowercase();
    let scheme = LINK_SCHEMES
        .iter()
        .find(|scheme| lower.starts_with(**scheme));
    let clean = !href.chars().any(|c| c.is_whitespace() || c.is_control());
    scheme.is_some_and(|scheme| href.len() > scheme.len()) && clean
}

/// `text` with `&`, `<`, `>` (and `"` in attributes) as HTML entities.
fn escape(text: &str, attribute: bool) -> String {
    let escaped = text
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    if attribute {
        escaped.replace('"', "&quot;")
    } else {
        escaped
    }
}

#[cfg(test)]
#[path = "markup_tests.rs"]
pub(super) mod tests;
