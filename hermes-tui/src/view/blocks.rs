//! The conversation pane: each block rendered to wrapped lines once per width and revision
//! (the cache), so a frame of a 1,000-message conversation renders only the block that
//! streams; only the visible lines are handed to the terminal. Scrolled back, the view stays
//! where it is while text arrives below.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block as Frame_, Borders, Paragraph},
};

use super::{
    Styles, markdown,
    wrap::{truncate, wrap},
};
use crate::app::{
    App,
    conversation::{Block, Entry, ToolCall},
};

/// Lines of a folded tool block's output shown when unfolded.
const TOOL_OUTPUT_LINES: usize = 40;

#[derive(Debug, Clone)]
struct Rendered {
    width: u16,
    rev: u64,
    expanded: bool,
    lines: Vec<Line<'static>>,
}

/// Rendered blocks of the conversation on screen.
#[derive(Debug, Default)]
pub struct BlockCache {
    session: Option<String>,
    /// Blocks dropped from the front of the conversation when this cache was filled.
    dropped: usize,
    blocks: Vec<Option<Rendered>>,
}

impl BlockCache {
    /// Lines of every block, rendering what changed; returns per-block line counts.
    fn refresh(
        &mut self,
        session: &str,
        entries: &[Entry],
        dropped: usize,
        width: u16,
        styles: &Styles,
    ) {
        if self.session.as_deref() != Some(session) {
            self.session = Some(session.to_string());
            self.blocks.clear();
            self.dropped = dropped;
        }
        if dropped > self.dropped {
            let gone = (dropped - self.dropped).min(self.blocks.len());
            self.blocks.drain(..gone);
            self.dropped = dropped;
        }
        self.blocks.resize(entries.len(), None);
        for (slot, entry) in self.blocks.iter_mut().zip(entries) {
            let fresh = slot.as_ref().is_some_and(|r| {
                r.width == width && r.rev == entry.rev && r.expanded == entry.expanded
            });
            if !fresh {
                *slot = Some(Rendered {
                    width,
                    rev: entry.rev,
                    expanded: entry.expanded,
                    lines: render_block(entry, usize::from(width), styles),
                });
            }
        }
    }

    fn lines(&self, index: usize) -> &[Line<'static>] {
        self.blocks
            .get(index)
            .and_then(Option::as_ref)
            .map_or(&[], |r| r.lines.as_slice())
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &mut App, cache: &mut BlockCache, styles: &Styles) {
    let title = app
        .current_session()
        .map(|s| {
            if s.title.is_empty() {
                s.id.clone()
            } else {
                s.title.clone()
            }
        })
        .or_else(|| app.current.clone())
        .unwrap_or_else(|| "no session".into());
    let frame_block = Frame_::default()
        .borders(Borders::TOP)
        .border_style(styles.dim)
        .title(Line::styled(
            format!(
                " {} ",
                truncate(&title, usize::from(area.width).saturating_sub(4))
            ),
            styles.bold,
        ));
    let inner = frame_block.inner(area);
    frame.render_widget(frame_block, area);
    let Some(session) = app.current.clone() else {
        let hint = Paragraph::new(vec![
            Line::default(),
            Line::styled(
                "  No session yet: type a message to start one, or press",
                styles.dim,
            ),
            Line::styled(
                "  Tab to pick one from the list (n makes a new one).",
                styles.dim,
            ),
        ]);
        frame.render_widget(hint, inner);
        return;
    };
    let width = inner.width.saturating_sub(1).max(8);
    let height = usize::from(inner.height);
    let Some(conversation) = app.conversation() else {
        return;
    };
    cache.refresh(
        &session,
        &conversation.entries,
        conversation.dropped,
        width,
        styles,
    );
    let counts: Vec<usize> = (0..conversation.entries.len())
        .map(|i| cache.lines(i).len() + 1)
        .collect();
    let total: usize = counts.iter().sum();
    // Keep a scrolled-back view still while lines arrive below it.
    if app.scroll.back > 0 && total > app.scroll.last_total {
        app.scroll.back += total - app.scroll.last_total;
    }
    if let Some(index) = app.scroll.to_block.take() {
        let above: usize = counts.iter().take(index).sum();
        app.scroll.back = total.saturating_sub(above + height);
    }
    app.scroll.back = app.scroll.back.min(total.saturating_sub(height));
    app.scroll.last_total = total;
    let bottom = total - app.scroll.back;
    let top = bottom.saturating_sub(height);
    // Collect the visible lines: walk the blocks, skipping what is above the window.
    let mut visible: Vec<Line> = Vec::with_capacity(height);
    let mut at = 0;
    for (index, count) in counts.iter().enumerate() {
        if at + count <= top {
            at += count;
            continue;
        }
        if at >= bottom {
            break;
        }
        let lines = cache.lines(index);
        for (offset, line) in lines
            .iter()
            .chain(std::iter::once(&Line::default()))
            .enumerate()
        {
            let n = at + offset;
            if n >= top && n < bottom {
                visible.push(line.clone());
            }
        }
        at += count;
    }
    frame.render_widget(Paragraph::new(visible), inner);
    if app.scroll.back > 0 {
        let marker = format!(" ↓ {} more lines (End follows) ", app.scroll.back);
        let x = inner
            .right()
            .saturating_sub(marker.chars().count() as u16 + 1);
        let y = inner.bottom().saturating_sub(1);
        frame.render_widget(
            Paragraph::new(Line::styled(marker, styles.selected)),
            Rect::new(x.max(inner.x), y, inner.width.min(40), 1),
        );
    }
}

fn render_block(entry: &Entry, width: usize, styles: &Styles) -> Vec<Line<'static>> {
    match &entry.block {
        Block::User { text, .. } => {
            let mut lines = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let first = if i == 0 { "› " } else { "  " };
                lines.extend(wrap(
                    &[Span::styled(line.to_string(), styles.user)],
                    &[Span::styled(first, styles.user)],
                    &[Span::raw("  ")],
                    width,
                ));
            }
            lines
        }
        Block::Assistant {
            text, streaming, ..
        } => {
            let mut lines = markdown::render(text, width, styles);
            if *streaming {
                match lines.last_mut() {
                    Some(last) => last.spans.push(Span::styled("▍", styles.accent)),
                    None => lines.push(Line::styled("▍", styles.accent)),
                }
            }
            lines
        }
        Block::Reasoning { text } if entry.expanded => text
            .lines()
            .flat_map(|l| wrap(&[Span::styled(l.to_string(), styles.dim)], &[], &[], width))
            .collect(),
        Block::Reasoning { text } => {
            let words = text.split_whitespace().count();
            vec![Line::styled(
                format!("… thought for {words} words (Ctrl-O unfolds)"),
                styles.dim,
            )]
        }
        Block::Tool(tool) => tool_lines(tool, entry.expanded, width, styles),
        Block::Notice { text } => text
            .lines()
            .flat_map(|l| {
                wrap(
                    &[Span::styled(l.to_string(), styles.dim)],
                    &[Span::styled("· ", styles.dim)],
                    &[Span::raw("  ")],
                    width,
                )
            })
            .collect(),
        Block::TurnEnd { text } => vec![Line::styled(
            truncate(&format!("— {text}"), width),
            styles.dim,
        )],
        Block::Error { message, hint } => {
            let mut spans = vec![Span::styled(message.clone(), styles.error)];
            if !hint.is_empty() {
                spans.push(Span::raw(" — "));
                spans.push(Span::raw(hint.clone()));
            }
            wrap(
                &spans,
                &[Span::styled("✗ ", styles.error)],
                &[Span::raw("  ")],
                width,
            )
        }
    }
}

/// The argument that says most about a call: its command, path, query…
fn key_argument(arguments: &str) -> String {
    let parsed: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    [
        "command", "path", "pattern", "query", "url", "question", "action", "name",
    ]
    .iter()
    .find_map(|k| parsed.get(*k).and_then(|v| v.as_str()))
    .unwrap_or("")
    .replace('\n', " ")
}

fn tool_lines(
    tool: &ToolCall,
    expanded: bool,
    width: usize,
    styles: &Styles,
) -> Vec<Line<'static>> {
    let (mark, mark_style) = match tool.ok {
        None => ("⋯", styles.accent),
        Some(true) => ("✓", styles.ok),
        Some(false) => ("✗", styles.error),
    };
    let fold = if expanded { "▾" } else { "▸" };
    let timing = if tool.ok.is_some() {
        format!(" {} ms", tool.duration_ms)
    } else {
        " running".to_string()
    };
    let head = format!("{fold} {} ", tool.name);
    let room = width.saturating_sub(head.chars().count() + timing.len() + 3);
    let mut lines = vec![Line::from(vec![
        Span::styled(format!("{mark} "), mark_style),
        Span::styled(head, styles.bold),
        Span::styled(truncate(&key_argument(&tool.arguments), room), styles.dim),
        Span::styled(timing, styles.dim),
    ])];
    if tool.ok == Some(false) && !tool.summary.is_empty() && !expanded {
        lines.extend(wrap(
            &[Span::styled(tool.summary.clone(), styles.error)],
            &[Span::raw("  ")],
            &[Span::raw("  ")],
            width,
        ));
    }
    if !expanded {
        return lines;
    }
    let gutter = || vec![Span::styled("  │ ", styles.dim)];
    if !tool.arguments.is_empty() {
        lines.extend(wrap(
            &[Span::styled(tool.arguments.clone(), styles.dim)],
            &gutter(),
            &gutter(),
            width,
        ));
    }
    let output: Vec<&str> = tool.output.lines().collect();
    let skip = output.len().saturating_sub(TOOL_OUTPUT_LINES);
    if skip > 0 {
        lines.push(Line::styled(
            format!("  │ … {skip} earlier lines"),
            styles.dim,
        ));
    }
    for line in &output[skip..] {
        lines.extend(wrap(
            &[Span::raw(line.to_string())],
            &gutter(),
            &gutter(),
            width,
        ));
    }
    if !tool.summary.is_empty() {
        lines.extend(wrap(
            &[Span::styled(tool.summary.clone(), styles.dim)],
            &[Span::styled("  └ ", styles.dim)],
            &gutter(),
            width,
        ));
    }
    lines
}
