//! The session list: two lines per session — an unread dot, the state and the title; then the
//! source, state word and last activity — the selected one reversed, the current one marked.

use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::{Block, Borders, Paragraph},
};

use super::{Styles, wrap::truncate};
use crate::app::{
    App, Focus,
    sessions::{age, state_word},
};

fn state_glyph(state: i32) -> &'static str {
    match state_word(state) {
        "running" => "▶",
        "approval" | "question" => "?",
        "failed" => "✗",
        "stopped" => "■",
        _ => " ",
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, styles: &Styles) {
    let focused = app.focus == Focus::Sessions && app.search.is_none();
    let list = &app.sessions;
    let mut title = String::from(" sessions ");
    if let Some(source) = &list.source {
        title = format!(" sessions: {source} ");
    }
    if list.filtering || !list.filter.is_empty() {
        title.push_str(&format!(
            "/{}{} ",
            list.filter,
            if list.filtering { "▏" } else { "" }
        ));
    }
    let block = Block::default()
        .borders(Borders::RIGHT | Borders::TOP)
        .border_style(if focused { styles.accent } else { styles.dim })
        .title(Line::styled(title, styles.bold));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let width = usize::from(inner.width);
    let rows = list.visible();
    let per_screen = usize::from(inner.height / 2).max(1);
    let first = (list.selected + 1).saturating_sub(per_screen);
    let mut lines = Vec::new();
    for (i, session) in rows.iter().enumerate().skip(first).take(per_screen) {
        let current = app.current.as_deref() == Some(session.id.as_str());
        let unread = !current && list.is_unread(session);
        let title = if session.title.is_empty() {
            format!("({})", session.id)
        } else {
            session.title.clone()
        };
        let selected = focused && i == list.selected;
        let base = if selected {
            styles.selected
        } else if current {
            styles.bold
        } else {
            ratatui::style::Style::new()
        };
        let state = session.state;
        let busy = !matches!(state_word(state), "idle");
        let head = vec![
            Span::styled(if unread { "●" } else { " " }, styles.accent),
            Span::styled(
                state_glyph(state),
                if busy { styles.accent } else { styles.dim },
            ),
            Span::raw(" "),
            Span::styled(truncate(&title, width.saturating_sub(3)), base),
        ];
        let detail = format!(
            "   {} · {} · {}",
            session.source,
            state_word(state),
            age(session.updated_at.as_ref(), app.now_unix)
        );
        lines.push(Line::from(head));
        lines.push(Line::styled(truncate(&detail, width), styles.dim));
    }
    if rows.is_empty() {
        lines.push(Line::styled(
            if list.rows.is_empty() {
                " no sessions yet"
            } else {
                " nothing matches"
            },
            styles.dim,
        ));
    }
    frame.render_widget(Paragraph::new(lines), inner);
}
