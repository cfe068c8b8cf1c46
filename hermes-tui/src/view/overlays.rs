//! What is drawn over the panes: slash-command completion above the input box, the modal
//! question (an approval with the line client's choices, or a clarify question), and the search
//! overlay with its hits.

use ratatui::{
    Frame,
    layout::{Constraint, Layout, Rect},
    text::{Line, Span},
    widgets::{Block, Borders, Clear, Paragraph, Wrap},
};

use super::{Styles, wrap::truncate};
use crate::app::{App, conversation::Pending};

pub fn draw(frame: &mut Frame, main: Rect, input: Rect, app: &App, styles: &Styles) {
    if let Some(pending) = app.pending() {
        modal(frame, main, app, pending, styles);
    } else if app.search.is_some() {
        search(frame, main, app, styles);
    } else {
        completion(frame, input, app, styles);
    }
}

/// A rectangle of `width` × `height` centred in `area` (clipped to it).
fn centred(area: Rect, width: u16, height: u16) -> Rect {
    let width = width.min(area.width);
    let height = height.min(area.height);
    Rect::new(
        area.x + (area.width - width) / 2,
        area.y + (area.height - height) / 2,
        width,
        height,
    )
}

fn completion(frame: &mut Frame, input: Rect, app: &App, styles: &Styles) {
    let items = app.completions();
    if items.is_empty() {
        return;
    }
    let height = items.len() as u16 + 2;
    let width = input.width.min(60);
    let y = input.y.saturating_sub(height);
    let area = Rect::new(input.x, y, width, height.min(input.y));
    let lines: Vec<Line> = items
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let style = if i == app.completion {
                styles.selected
            } else {
                ratatui::style::Style::new()
            };
            let kind = if c.kind == "skill" { " (skill)" } else { "" };
            Line::from(vec![
                Span::styled(format!("/{} {}", c.name, c.args), style),
                Span::styled(
                    truncate(
                        &format!(" — {}{kind}", c.description),
                        usize::from(width).saturating_sub(c.name.len() + 6),
                    ),
                    styles.dim,
                ),
            ])
        })
        .collect();
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(styles.dim)
        .title(Line::styled(" Tab completes ", styles.dim));
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

fn modal(frame: &mut Frame, main: Rect, app: &App, pending: &Pending, styles: &Styles) {
    let width = main.width.saturating_sub(4).min(76);
    let (title, body, choices, hint) = match pending {
        Pending::Approval(a) => (
            " approval needed ",
            vec![
                Line::styled(a.reason.clone(), styles.bold),
                Line::default(),
                Line::styled(a.command.clone(), styles.code),
            ],
            crate::app::approval_choices(a),
            "o/s/a/d or ↑↓ Enter · Esc denies",
        ),
        Pending::Clarify(q) => (
            " question ",
            vec![Line::styled(q.question.clone(), styles.bold)],
            q.choices.clone(),
            "a number, or type an answer · Enter sends",
        ),
    };
    let mut lines = body;
    lines.push(Line::default());
    for (i, choice) in choices.iter().enumerate() {
        let selected = i == app.choice && app.answer.is_empty();
        let style = if selected {
            styles.selected
        } else {
            ratatui::style::Style::new()
        };
        let label = match pending {
            Pending::Approval(_) => {
                let mut chars = choice.chars();
                let first: String = chars.next().map(String::from).unwrap_or_default();
                format!(" [{first}]{} ", chars.as_str())
            }
            Pending::Clarify(_) => format!(" {}. {choice} ", i + 1),
        };
        lines.push(Line::styled(label, style));
    }
    if let Pending::Clarify(_) = pending {
        lines.push(Line::from(vec![
            Span::styled("› ", styles.accent),
            Span::raw(app.answer.clone()),
            Span::styled("▏", styles.accent),
        ]));
    }
    lines.push(Line::default());
    lines.push(Line::styled(hint, styles.dim));
    let inner_width = width.saturating_sub(2).max(1);
    let height: u16 = lines
        .iter()
        .map(|l| (l.width() as u16).div_ceil(inner_width).max(1))
        .sum::<u16>()
        + 2;
    let area = centred(main, width, height);
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(styles.accent)
        .title(Line::styled(title, styles.accent));
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        area,
    );
}

fn search(frame: &mut Frame, main: Rect, app: &App, styles: &Styles) {
    let Some(search) = &app.search else {
        return;
    };
    let area = centred(
        main,
        main.width.saturating_sub(4).min(100),
        main.height.saturating_sub(2),
    );
    frame.render_widget(Clear, area);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(styles.accent)
        .title(Line::styled(
            " search — Enter searches or opens, Esc closes ",
            styles.accent,
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [query, results] =
        Layout::vertical([Constraint::Length(2), Constraint::Fill(1)]).areas(inner);
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled("/ ", styles.accent),
            Span::raw(search.query.clone()),
            Span::styled("▏", styles.accent),
        ])),
        query,
    );
    let width = usize::from(results.width);
    let mut lines = Vec::new();
    if search.waiting {
        lines.push(Line::styled("searching…", styles.dim));
    } else if search.searched.is_some() && search.hits.is_empty() {
        lines.push(Line::styled("no matches", styles.dim));
    }
    let per_screen = usize::from(results.height / 2).max(1);
    let first = (search.selected + 1).saturating_sub(per_screen);
    for (i, hit) in search.hits.iter().enumerate().skip(first).take(per_screen) {
        let style = if i == search.selected {
            styles.selected
        } else {
            styles.bold
        };
        let title = if hit.title.is_empty() {
            hit.session_id.clone()
        } else {
            hit.title.clone()
        };
        lines.push(Line::from(vec![
            Span::styled(truncate(&title, width.saturating_sub(20)), style),
            Span::styled(format!("  {} · {}", hit.source, hit.role), styles.dim),
        ]));
        lines.push(snippet_line(&hit.snippet, width, styles));
    }
    frame.render_widget(Paragraph::new(lines), results);
}

/// The snippet with its match (between « and ») highlighted.
fn snippet_line(snippet: &str, width: usize, styles: &Styles) -> Line<'static> {
    let flat = truncate(&snippet.replace('\n', " "), width.saturating_sub(2));
    let mut spans = vec![Span::raw("  ")];
    let mut rest = flat.as_str();
    while let Some(start) = rest.find('«') {
        spans.push(Span::styled(rest[..start].to_string(), styles.dim));
        let after = &rest[start + '«'.len_utf8()..];
        let end = after.find('»').unwrap_or(after.len());
        spans.push(Span::styled(after[..end].to_string(), styles.accent));
        rest = after.get(end + '»'.len_utf8()..).unwrap_or("");
    }
    spans.push(Span::styled(rest.to_string(), styles.dim));
    Line::from(spans)
}
