//! Drawing the state (the view of the Elm split): the session list on the left, the
//! conversation, the input box and the status bar on the right, and the overlays (completion,
//! the approval or clarify modal, search). Reads [`App`]; writes only its scroll bookkeeping and
//! the block cache.

mod blocks;
pub mod highlight;
pub mod markdown;
mod overlays;
mod sidebar;
mod status;
pub mod wrap;

use ratatui::{
    Frame,
    layout::{Constraint, Layout, Rect},
    style::{Modifier, Style},
    text::Line,
    widgets::{Block, Borders, Paragraph},
};

pub use self::blocks::BlockCache;
use crate::{
    app::{App, Focus},
    config::Theme,
};

/// Below this width the session list is hidden (the conversation needs the room).
const MIN_WIDTH_FOR_SIDEBAR: u16 = 60;
/// The input box grows to this many lines of text, then scrolls.
const MAX_INPUT_LINES: u16 = 8;

/// The styles of every element, from the theme: colours only when colour is on.
#[derive(Debug, Clone)]
pub struct Styles {
    pub color: bool,
    pub accent: Style,
    pub user: Style,
    pub error: Style,
    pub ok: Style,
    pub code: Style,
    pub code_block: Style,
    pub dim: Style,
    pub selected: Style,
    pub bold: Style,
}

impl Styles {
    pub fn new(theme: &Theme) -> Self {
        let fg = |c| {
            if theme.color {
                Style::new().fg(c)
            } else {
                Style::new()
            }
        };
        Self {
            color: theme.color,
            accent: fg(theme.accent),
            user: fg(theme.user).add_modifier(Modifier::BOLD),
            error: fg(theme.error).add_modifier(Modifier::BOLD),
            ok: fg(theme.ok),
            code: if theme.color {
                fg(theme.code)
            } else {
                Style::new().add_modifier(Modifier::BOLD)
            },
            code_block: Style::new(),
            dim: Style::new().add_modifier(Modifier::DIM),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            bold: Style::new().add_modifier(Modifier::BOLD),
        }
    }
}

/// Draw the whole screen.
pub fn draw(frame: &mut Frame, app: &mut App, cache: &mut BlockCache) {
    let styles = Styles::new(&app.config.theme);
    let [area, status_line] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(frame.area());
    let sidebar_width = if area.width >= MIN_WIDTH_FOR_SIDEBAR {
        app.config.sidebar_width.min(area.width * 2 / 5)
    } else {
        0
    };
    let [side, main] =
        Layout::horizontal([Constraint::Length(sidebar_width), Constraint::Fill(1)]).areas(area);
    if sidebar_width > 0 {
        sidebar::draw(frame, side, app, &styles);
    }
    let input_lines = (app.input.lines().len() as u16).clamp(1, MAX_INPUT_LINES);
    let [conversation, input] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(input_lines + 2)]).areas(main);
    blocks::draw(frame, conversation, app, cache, &styles);
    draw_input(frame, input, app, &styles);
    status::draw(frame, status_line, app, &styles);
    overlays::draw(frame, main, input, app, &styles);
}

fn draw_input(frame: &mut Frame, area: Rect, app: &App, styles: &Styles) {
    let focused = app.focus == Focus::Input && app.search.is_none() && app.pending().is_none();
    let border = if focused { styles.accent } else { styles.dim };
    let running = app.conversation().is_some_and(|c| c.running);
    let title = if running {
        " running — Ctrl-C stops it "
    } else {
        " message — Enter sends, Alt+Enter new line, /help "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(border)
        .title(Line::styled(title, styles.dim));
    let inner = block.inner(area);
    let (row, col) = app.input.cursor();
    let visible = usize::from(inner.height.max(1));
    let first = (row + 1).saturating_sub(visible);
    let lines: Vec<Line> = app
        .input
        .lines()
        .iter()
        .skip(first)
        .take(visible)
        .map(|l| Line::raw(l.as_str()))
        .collect();
    // Keep the cursor's column in view on a long line.
    let line = &app.input.lines()[row];
    let before: String = line.chars().take(col).collect();
    let cursor_x = unicode_width::UnicodeWidthStr::width(before.as_str()) as u16;
    let shift = cursor_x.saturating_sub(inner.width.saturating_sub(1));
    frame.render_widget(Paragraph::new(lines).block(block).scroll((0, shift)), area);
    if focused {
        frame.set_cursor_position((inner.x + cursor_x - shift, inner.y + (row - first) as u16));
    }
}

#[cfg(test)]
mod tests;
