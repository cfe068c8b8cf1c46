//! The session list on the side: every session the daemon lists (all sources), newest activity
//! first, with its live state and an unread marker; a text filter and a source filter.

use std::collections::HashMap;

use hermes_proto::pb;

/// Sessions asked for on each refresh.
pub const LIST_LIMIT: u32 = 200;

/// The list and what this client has seen of each session.
#[derive(Debug, Default)]
pub struct SessionList {
    pub rows: Vec<pb::Session>,
    /// Index into [`Self::visible`].
    pub selected: usize,
    /// Matched against title, source and id; empty shows all.
    pub filter: String,
    /// Typing goes to the filter.
    pub filtering: bool,
    /// Only this source; `None` shows all.
    pub source: Option<String>,
    /// The last seq seen of each listed session (pruned to the listed ones on every refresh).
    seen: HashMap<String, u64>,
    /// The first listing sets what counts as seen.
    listed_once: bool,
}

impl SessionList {
    /// A new listing from the daemon.
    pub fn replace(&mut self, rows: Vec<pb::Session>, current: Option<&str>) {
        let selected_id = self.selected_row().map(|s| s.id.clone());
        if !self.listed_once {
            self.seen = rows.iter().map(|s| (s.id.clone(), s.last_seq)).collect();
            self.listed_once = true;
        } else {
            self.seen
                .retain(|id, _| rows.iter().any(|s| &s.id == id) || Some(id.as_str()) == current);
            for s in &rows {
                // A session that appeared since the last listing is new to this client: unread
                // once it has anything in it.
                self.seen.entry(s.id.clone()).or_insert(0);
            }
        }
        self.rows = rows;
        if let Some(id) = selected_id {
            self.select_id(&id);
        }
        self.clamp();
    }

    /// The current session was seen up to `seq`.
    pub fn mark_seen(&mut self, id: &str, seq: u64) {
        let seen = self.seen.entry(id.to_string()).or_insert(0);
        *seen = (*seen).max(seq);
        if let Some(row) = self.rows.iter_mut().find(|s| s.id == id) {
            row.last_seq = row.last_seq.max(seq);
        }
    }

    pub fn is_unread(&self, session: &pb::Session) -> bool {
        session.last_seq > self.seen.get(&session.id).copied().unwrap_or(0)
    }

    /// The rows the filters let through, in order.
    pub fn visible(&self) -> Vec<&pb::Session> {
        let needle = self.filter.to_lowercase();
        self.rows
            .iter()
            .filter(|s| {
                self.source
                    .as_ref()
                    .is_none_or(|wanted| &s.source == wanted)
            })
            .filter(|s| {
                needle.is_empty()
                    || s.title.to_lowercase().contains(&needle)
                    || s.source.contains(&needle)
                    || s.id.contains(&needle)
            })
            .collect()
    }

    pub fn selected_row(&self) -> Option<&pb::Session> {
        self.visible().get(self.selected).copied()
    }

    pub fn select_id(&mut self, id: &str) {
        if let Some(i) = self.visible().iter().position(|s| s.id == id) {
            self.selected = i;
        }
    }

    pub fn move_by(&mut self, delta: isize) {
        let len = self.visible().len();
        if len == 0 {
            self.selected = 0;
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(len - 1);
    }

    fn clamp(&mut self) {
        let len = self.visible().len();
        self.selected = self.selected.min(len.saturating_sub(1));
    }

    /// Step the source filter through the sources listed: all, then each in turn.
    pub fn cycle_source(&mut self) {
        let mut sources: Vec<&str> = self.rows.iter().map(|s| s.source.as_str()).collect();
        sources.sort_unstable();
        sources.dedup();
        let next = match &self.source {
            None => sources.first().map(|s| s.to_string()),
            Some(current) => sources
                .iter()
                .position(|s| s == current)
                .and_then(|i| sources.get(i + 1))
                .map(|s| s.to_string()),
        };
        self.source = next;
        self.selected = 0;
    }

    pub fn set_filter(&mut self, filter: String) {
        self.filter = filter;
        self.selected = 0;
    }

    /// Update one row from the attached session's own events.
    pub fn set_state(&mut self, id: &str, state: i32) {
        if let Some(row) = self.rows.iter_mut().find(|s| s.id == id) {
            row.state = state;
        }
    }
}

/// The word for a session's state.
pub fn state_word(state: i32) -> &'static str {
    use pb::SessionState as S;
    match S::try_from(state).unwrap_or(S::Unspecified) {
        S::Running => "running",
        S::WaitingApproval => "approval",
        S::WaitingClarify => "question",
        S::Interrupted => "stopped",
        S::Failed => "failed",
        S::Idle | S::Stored | S::Unspecified => "idle",
    }
}

/// "now", "5m", "3h", "2d" since `at`, from `now` (both in Unix seconds).
pub fn age(at: Option<&prost_types::Timestamp>, now: i64) -> String {
    let Some(at) = at else {
        return String::new();
    };
    let seconds = (now - at.seconds).max(0);
    match seconds {
        0..60 => "now".into(),
        60..3_600 => format!("{}m", seconds / 60),
        3_600..86_400 => format!("{}h", seconds / 3_600),
        _ => format!("{}d", seconds / 86_400),
    }
}
