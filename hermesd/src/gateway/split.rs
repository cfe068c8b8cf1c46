//! Splitting a long Markdown answer into messages of a platform's size.
//!
//! Owns where a reply is cut and what each piece needs to render on its own.
//! A platform that sends the Markdown nearly as written (Discord, Slack) counts
//! its limit on that text ([`Measure::Source`]). Telegram caps a message at
//! 4,096 UTF-16 code units of text *after* entity parsing ([`Measure::Rendered`]). The Markdown source is no sound stand-in for that: the rendering
//! adds text the source lacks (a table's padding and `-+-` rule, `10.` for a
//! lazily numbered `1.`, the blank line before a list touching a paragraph).
//! So each candidate piece is measured rendered, `utf16_len(to_plain_text(..))`:
//! the HTML's visible text plus link targets, which bounds both the HTML message
//! and its plain-text retry. Markup costs nothing, so a reopened fence counts
//! for what it renders: nothing.
//!
//! Cuts prefer a paragraph break, then a line break, then a space, each first
//! where it breaks no markup; else a hard cut on a `char` boundary (never inside
//! a surrogate pair). A top-level fenced code block cut in two is closed with its
//! fence and reopened with its opening line; a top-level table repeats its
//! header. Like Hermes, a split's pieces end in a `(i/n)` counter, counted too.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};

use super::markup::{markdown_options, to_plain_text};

/// Telegram's limit on a message's text, in UTF-16 code units.
pub const TELEGRAM_MAX: usize = 4096;

/// What a platform's message limit counts, always in UTF-16 code units (never fewer than the
/// characters a platform that counts characters sees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Measure {
    /// The text as rendered from the Markdown (Telegram's entities).
    #[default]
    Rendered,
    /// The Markdown itself, as sent.
    Source,
}

impl Measure {
    fn len(self, markdown: &str) -> usize {
        match self {
            Self::Rendered => utf16_len(&to_plain_text(markdown)),
            Self::Source => utf16_len(markdown),
        }
    }
}

/// Below this limit pieces carry no `(i/n)` counter: it would crowd out the text.
const MIN_LIMIT_FOR_COUNTER: usize = 64;
/// The most counter digits tried before giving up on counters.
const MAX_COUNTER_DIGITS: u32 = 5;
/// Cut preferences, best first; `DEMOTED` is added to a cut that would
/// break markup.
const PARAGRAPH: u8 = 0;
const LINE: u8 = 1;
const SPACE: u8 = 2;
const DEMOTED: u8 = 3;
const TIERS: u8 = 6;
/// How many candidates of one tier are tried before falling to the next.
const TRIES_PER_TIER: usize = 8;
/// Per-byte flags: inside a protected span, a forbidden cut (in a fence or
/// table header), inside a region's body (reopened if a piece starts there).
const PROTECTED: u8 = 1;
const FORBIDDEN: u8 = 2;
const REOPENED: u8 = 4;

/// The number of UTF-16 code units in `s`, the unit Telegram counts in.
pub fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// `markdown` in pieces whose rendered text is at most `limit` UTF-16 code
/// units each (see the module doc for why the rendering is measured), cut at
/// the last paragraph break before the limit, else the last line break, else
/// the last space, else hard; a cut in the first half of a piece is taken only
/// when its second half has none. Text within the limit comes back unchanged.
pub fn split_markdown(markdown: &str, limit: usize) -> Vec<String> {
    split(markdown, limit, Measure::Rendered)
}

/// [`split_markdown`] with the limit counted by `measure`.
pub fn split(markdown: &str, limit: usize, measure: Measure) -> Vec<String> {
    if measure.len(markdown) <= limit {
        return vec![markdown.to_owned()];
    }
    let layout = Layout::new(markdown, limit, measure);
    if limit >= MIN_LIMIT_FOR_COUNTER {
        for digits in 1..=MAX_COUNTER_DIGITS {
            let pieces = layout.cut(&counter_reserve(digits));
            if pieces.len() < 10_usize.pow(digits) {
                return numbered(pieces);
            }
        }
    }
    layout.cut("")
}

/// Room for the widest counter of `digits` digits, as it will be appended.
fn counter_reserve(digits: u32) -> String {
    let nines = "9".repeat(digits as usize);
    format!("\n\n({nines}/{nines})")
}

fn numbered(pieces: Vec<String>) -> Vec<String> {
    let total = pieces.len();
    if total < 2 {
        return pieces;
    }
    let number = |(index, piece): (usize, String)| format!("{piece}\n\n({}/{total})", index + 1);
    pieces.into_iter().enumerate().map(number).collect()
}

/// A top-level block that must be reopened when a cut falls inside it.
struct Region {
    /// Start of the opening line (fence, or table header).
    start: usize,
    /// The lines between the opener and the closing fence (or table end).
    body: Range<usize>,
    /// End of the closing fence line, or of the table.
    end: usize,
    /// Prepended to a piece starting inside `body`.
    reopen: String,
    /// Appended to a piece ending inside `body`.
    close: String,
}

impl Region {
    /// Where a cut at `at` belongs if `at` is inside the opener or the closing
    /// fence: before the opener, or before the closing fence.
    fn markup_edge(&self, at: usize) -> Option<usize> {
        if self.start < at && at <= self.body.start {
            Some(self.start)
        } else if self.body.end < at && at < self.end {
            Some(self.body.end)
        } else {
            None
        }
    }
}

/// A place a piece may end (`at`) and where the next one picks up.
struct Cut {
    at: usize,
    resume: usize,
    tier: u8,
}

/// Where a piece starts, and the region it starts inside, if any.
struct Start<'r> {
    at: usize,
    reopen: Option<&'r Region>,
}

/// The source with what the cutter needs to know about it.
struct Layout<'a> {
    src: &'a str,
    limit: usize,
    measure: Measure,
    regions: Vec<Region>,
    cuts: Vec<Cut>,
}

impl<'a> Layout<'a> {
    fn new(src: &'a str, limit: usize, measure: Measure) -> Self {
        let (regions, spans) = scan_blocks(src);
        let mut flags = vec![0; src.len() + 1];
        for span in spans {
            flag(&mut flags, span.start + 1..span.end, PROTECTED);
        }
        for region in &regions {
            flag(
                &mut flags,
                region.start + 1..region.body.start + 1,
                FORBIDDEN,
            );
            flag(&mut flags, region.body.end + 1..region.end, FORBIDDEN);
            flag(&mut flags, region.body.clone(), REOPENED);
        }
        let cuts = candidate_cuts(src, &flags);
        Self {
            src,
            limit,
            measure,
            regions,
            cuts,
        }
    }

    /// The pieces, each measured with `reserve` (the counter to come) appended.
    fn cut(&self, reserve: &str) -> Vec<String> {
        let mut pieces = Vec::new();
        let mut start = self.start_at(0);
        while start.at < self.src.len() {
            let reach = self.longest_fit(&start, reserve);
            if reach == self.src.len() {
                pieces.push(self.piece(&start, reach));
                break;
            }
            let (end, resume) = self.best_cut(&start, reach, reserve);
            pieces.push(self.piece(&start, end));
            start = self.start_at(resume);
        }
        pieces
    }

    fn fits_until(&self, start: &Start<'_>, end: usize, reserve: &str) -> bool {
        let piece = self.piece(start, end);
        self.measure.len(&format!("{piece}{reserve}")) <= self.limit
    }

    /// The source from `start` to `end`, reopened and closed as needed.
    fn piece(&self, start: &Start<'_>, end: usize) -> String {
        let reopen = start.reopen.map_or("", |region| region.reopen.as_str());
        let inside = |region: &&Region| region.body.start < end && end <= region.body.end;
        let close = self
            .regions
            .iter()
            .find(inside)
            .map_or("", |region| region.close.as_str());
        format!("{reopen}{}{close}", self.src[start.at..end].trim_end())
    }

    /// The next piece's start from `at`: past blank lines and closing fences.
    fn start_at(&self, mut at: usize) -> Start<'_> {
        loop {
            at = skip_blank_lines(self.src, at);
            match self.regions.iter().find(|r| r.start < at && at < r.end) {
                Some(region) if at >= region.body.end => at = region.end,
                reopen => return Start { at, reopen },
            }
        }
    }

    /// The best-tiered, latest cut that fits before `reach`, looked for first in
    /// the second half of what fits (as Hermes does, so no piece is left near
    /// empty), then anywhere; else the longest hard cut.
    fn best_cut(&self, start: &Start<'_>, reach: usize, reserve: &str) -> (usize, usize) {
        let half = start.at + (reach - start.at) / 2;
        for floor in [half, start.at] {
            if let Some(cut) = self.best_tiered_cut(start, floor..reach, reserve) {
                return (cut.at, cut.resume);
            }
        }
        let end = self.hard_cut(start, reach, reserve);
        (end, end)
    }

    /// The latest fitting cut of the best tier with `span.start < at <= span.end`.
    fn best_tiered_cut(
        &self,
        start: &Start<'_>,
        span: Range<usize>,
        reserve: &str,
    ) -> Option<&Cut> {
        let first = self.cuts.partition_point(|cut| cut.at <= span.start);
        let last = self.cuts.partition_point(|cut| cut.at <= span.end);
        let window = self.cuts.get(first..last).unwrap_or_default();
        let has_text = |cut: &&Cut| !self.src[start.at..cut.at].trim().is_empty();
        let fits = |cut: &&Cut| self.fits_until(start, cut.at, reserve);
        (0..TIERS).find_map(|tier| {
            let in_tier = window.iter().rev().filter(|cut| cut.tier == tier);
            in_tier.filter(has_text).take(TRIES_PER_TIER).find(fits)
        })
    }

    /// The furthest `char` boundary up to which the piece still fits (the end
    /// when the rest does), found by galloping then bisecting: the rendering
    /// grows roughly with the source, and each probe costs one rendering.
    fn longest_fit(&self, start: &Start<'_>, reserve: &str) -> usize {
        let len = self.src.len();
        let (mut fit, mut miss) = (start.at, len + 1);
        let mut step = self.limit.max(1);
        while miss > len {
            let probe = self.floor(fit.saturating_add(step)).max(self.after(fit));
            if probe > len {
                return fit;
            } else if !self.fits_until(start, probe, reserve) {
                miss = probe;
            } else if probe == len {
                return len;
            } else {
                (fit, step) = (probe, step.saturating_mul(2));
            }
        }
        while self.after(fit) < miss {
            let mid = self.floor(fit + (miss - fit) / 2).max(self.after(fit));
            if self.fits_until(start, mid, reserve) {
                fit = mid;
            } else {
                miss = mid;
            }
        }
        fit
    }

    /// A cut inside a word: at `reach`, moved off a fence or table header it
    /// lands in; one `char` when nothing fits, so splitting always progresses.
    fn hard_cut(&self, start: &Start<'_>, reach: usize, reserve: &str) -> usize {
        let edge = self
            .regions
            .iter()
            .find_map(|region| region.markup_edge(reach));
        let end = edge.unwrap_or(reach);
        let has_text = end > start.at && !self.src[start.at..end].trim().is_empty();
        if has_text && self.fits_until(start, end, reserve) {
            end
        } else if reach > start.at {
            reach
        } else {
            self.after(start.at).min(self.src.len())
        }
    }

    /// The last `char` boundary at or before `at`, capped at the end.
    fn floor(&self, at: usize) -> usize {
        let at = at.min(self.src.len());
        (0..=at)
            .rev()
            .find(|&at| self.src.is_char_boundary(at))
            .unwrap_or(0)
    }

    /// The first `char` boundary after `at` (`len + 1` past the end).
    fn after(&self, at: usize) -> usize {
        let next = self.src.get(at..).and_then(|rest| rest.chars().next());
        at + next.map_or(1, char::len_utf8)
    }
}

fn flag(flags: &mut [u8], range: Range<usize>, bit: u8) {
    for flag in flags.get_mut(range).unwrap_or_default() {
        *flag |= bit;
    }
}

/// `at` moved past any lines (or rest of a line) holding only whitespace.
fn skip_blank_lines(src: &str, mut at: usize) -> usize {
    while at < src.len() {
        let line_end = src[at..].find('\n').map_or(src.len(), |offset| at + offset);
        if !src[at..line_end].trim().is_empty() {
            break;
        }
        at = (line_end + 1).min(src.len());
    }
    at
}

/// Whether `line` is indented enough to be an indented code block's.
fn starts_indented(line: &str) -> bool {
    line.starts_with("    ") || line.starts_with('\t')
}

fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |newline| newline + 1)
}

/// Every line break and word-ending space, tiered, except where `flags` forbid.
/// A cut is demoted inside a protected span, or when the next piece would start
/// indented four columns (outside a fence that line would turn into code).
fn candidate_cuts(src: &str, flags: &[u8]) -> Vec<Cut> {
    let bytes = src.as_bytes();
    let flag_at = |at: usize| flags.get(at).copied().unwrap_or(0);
    let mut cuts = Vec::new();
    for (at, &byte) in bytes.iter().enumerate() {
        let (tier, resume) = match byte {
            b'\n' if skip_blank_lines(src, at + 1) > at + 1 => (PARAGRAPH, at + 1),
            b'\n' => (LINE, at + 1),
            b' ' | b'\t' if at > 0 && !bytes[at - 1].is_ascii_whitespace() => {
                let run = bytes[at..].iter().take_while(|b| matches!(b, b' ' | b'\t'));
                (SPACE, at + run.count())
            }
            _ => continue,
        };
        if flag_at(at) & FORBIDDEN != 0 {
            continue;
        }
        let next = || skip_blank_lines(src, resume);
        let indented = tier != SPACE && starts_indented(&src[next()..]);
        let turns_code = indented && flag_at(next()) & REOPENED == 0;
        let demoted = flag_at(at) & PROTECTED != 0 || turns_code;
        cuts.push(Cut {
            at,
            resume,
            tier: tier + DEMOTED * u8::from(demoted),
        });
    }
    cuts
}

/// The top-level fenced code blocks and tables as regions, and the spans
/// (inline markup, nested code blocks) a cut inside would break.
fn scan_blocks(src: &str) -> (Vec<Region>, Vec<Range<usize>>) {
    let (mut regions, mut spans) = (Vec::new(), Vec::new());
    let mut depth = 0_usize;
    let mut fence: Option<(Range<usize>, usize)> = None;
    let mut table: Option<Range<usize>> = None;
    for (event, range) in Parser::new_ext(src, markdown_options()).into_offset_iter() {
        match event {
            Event::Start(Tag::BlockQuote(_) | Tag::Item | Tag::FootnoteDefinition(_)) => depth += 1,
            Event::End(TagEnd::BlockQuote(_) | TagEnd::Item | TagEnd::FootnoteDefinition) => {
                depth = depth.saturating_sub(1)
            }
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_))) if depth == 0 => {
                fence = Some((range.clone(), range.start));
            }
            Event::Text(_) if fence.is_some() => {
                fence.iter_mut().for_each(|(_, end)| *end = range.end)
            }
            Event::End(TagEnd::CodeBlock) => {
                let block = fence.take();
                regions
                    .extend(block.and_then(|(block, text_end)| fence_region(src, block, text_end)));
            }
            Event::Start(Tag::Table(_)) if depth == 0 => table = Some(range),
            Event::Start(Tag::TableHead) => {
                let block = table.take();
                regions.extend(block.and_then(|block| table_region(src, block, range.end)));
            }
            Event::Start(Tag::CodeBlock(_)) | Event::Code(_) | Event::InlineHtml(_) => {
                spans.push(range)
            }
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => spans.push(range),
            Event::Start(Tag::Emphasis | Tag::Strong | Tag::Strikethrough) => spans.push(range),
            _ => {}
        }
    }
    (regions, spans)
}

/// A fenced block as a region; `text_end` is where its last line of code ends.
fn fence_region(src: &str, block: Range<usize>, text_end: usize) -> Option<Region> {
    let start = line_start(src, block.start);
    let body_start = block.start + src[block.start..block.end].find('\n')? + 1;
    let fence_char = src[block.start..].chars().next()?;
    let fence_len = src[block.start..]
        .chars()
        .take_while(|&c| c == fence_char)
        .count();
    let fence = fence_char.to_string().repeat(fence_len);
    let close = format!("\n{}{fence}", &src[start..block.start]);
    let reopen = src[start..body_start].to_owned();
    let (body, end) = (body_start..text_end, block.end.max(text_end));
    (text_end > body_start).then_some(Region {
        start,
        body,
        end,
        reopen,
        close,
    })
}

/// A table as a region whose reopening repeats the header and delimiter rows.
fn table_region(src: &str, block: Range<usize>, head_end: usize) -> Option<Region> {
    let start = line_start(src, block.start);
    let body_start = head_end + src.get(head_end..block.end)?.find('\n')? + 1;
    let (reopen, close) = (src[start..body_start].to_owned(), String::new());
    let (body, end) = (body_start..block.end, block.end);
    (block.end > body_start).then_some(Region {
        start,
        body,
        end,
        reopen,
        close,
    })
}

#[cfg(test)]
#[path = "split_tests.rs"]
mod tests;
