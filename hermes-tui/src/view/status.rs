//! The status bar: a flash message when there is one, else the model, the context in use
//! against the window, the session's cost, its busy policy and the connection.

use hermes_proto::pb;
use ratatui::{
    Frame,
    layout::Rect,
    text::{Line, Span},
    widgets::Paragraph,
};

use super::{Styles, wrap::truncate};
use crate::app::{App, Connection};

fn thousands(n: u64) -> String {
    if n >= 1_000_000 {
        format!("{:.1}M", n as f64 / 1e6)
    } else if n >= 1_000 {
        format!("{:.1}k", n as f64 / 1e3)
    } else {
        n.to_string()
    }
}

fn busy_word(policy: i32) -> &'static str {
    match pb::BusyPolicy::try_from(policy).unwrap_or(pb::BusyPolicy::Unspecified) {
        pb::BusyPolicy::Steer => "steer",
        pb::BusyPolicy::Interrupt => "interrupt",
        pb::BusyPolicy::Queue | pb::BusyPolicy::Unspecified => "queue",
    }
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, styles: &Styles) {
    let width = usize::from(area.width);
    let connection = match &app.connection {
        Connection::Connected => Span::styled("● connected", styles.ok),
        Connection::Connecting => Span::styled("○ connecting", styles.dim),
        Connection::Reconnecting(_) => Span::styled("○ reconnecting", styles.error),
    };
    let session = app.current_session();
    let model = session
        .map(|s| s.model.as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or(app.model.as_str());
    let used = app.conversation().map_or(0, |c| c.context_tokens);
    let context = if app.context_length > 0 {
        format!(
            "ctx {}/{} ({}%)",
            thousands(used),
            thousands(app.context_length),
            used * 100 / app.context_length
        )
    } else {
        format!("ctx {}", thousands(used))
    };
    let cost = session
        .and_then(|s| s.usage.as_ref())
        .and_then(|u| u.cost_usd)
        .map_or_else(|| "$—".to_string(), |c| format!("${c:.4}"));
    let busy = session.map_or("queue", |s| busy_word(s.busy_policy));
    let attached = match app.images.len() {
        0 => String::new(),
        1 => "1 image attached · ".into(),
        n => format!("{n} images attached · "),
    };
    let facts = format!(" {model} · {context} · {cost} · busy: {busy} · {attached}");
    let line = match &app.flash {
        Some(flash) => Line::from(vec![
            Span::styled(
                truncate(&format!(" {flash} "), width.saturating_sub(14)),
                styles.selected,
            ),
            Span::raw(" "),
            connection,
        ]),
        None => Line::from(vec![
            Span::styled(truncate(&facts, width.saturating_sub(14)), styles.dim),
            connection,
        ]),
    };
    frame.render_widget(Paragraph::new(line), area);
}
