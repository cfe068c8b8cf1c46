//! What each key does, by where the focus is: Ctrl-C first (interrupt, twice quits, in any
//! state), then a modal question, the search overlay, the session list, the input box.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};
use hermes_proto::pb::{self, client_frame};

use super::{App, DOUBLE_CTRL_C, Effect, Focus, conversation::Pending, search::Search};
use crate::config::Action;

/// Lines a PgUp/PgDn moves, besides the screen's height.
const WHEEL_LINES: usize = 3;

impl App {
    pub(super) fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        if key.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let keys = self.config.keys.clone();
        if keys.is(Action::Interrupt, &key) {
            return self.ctrl_c();
        }
        if self.pending().is_some() {
            return self.modal_key(key);
        }
        if self.search.is_some() {
            return self.search_key(key);
        }
        if keys.is(Action::Search, &key) {
            self.open_search();
            return Vec::new();
        }
        if keys.is(Action::NewSession, &key) {
            return vec![Effect::CreateSession];
        }
        if keys.is(Action::ToggleTools, &key) {
            self.toggle_tools();
            return Vec::new();
        }
        if keys.is(Action::ScrollUp, &key) {
            self.scroll_by(self.page() as isize);
            return Vec::new();
        }
        if keys.is(Action::ScrollDown, &key) {
            self.scroll_by(-(self.page() as isize));
            return Vec::new();
        }
        if keys.is(Action::Follow, &key) && (self.focus == Focus::Sessions || self.input.is_empty())
        {
            self.scroll.back = 0;
            return Vec::new();
        }
        match self.focus {
            Focus::Sessions => self.list_key(key),
            Focus::Input => self.input_key(key),
        }
    }

    fn ctrl_c(&mut self) -> Vec<Effect> {
        let twice = self
            .last_ctrl_c
            .is_some_and(|t| self.now.duration_since(t) < DOUBLE_CTRL_C);
        if twice {
            self.quit = true;
            return vec![Effect::Quit];
        }
        self.last_ctrl_c = Some(self.now);
        let running = self.conversation().is_some_and(|c| c.running);
        if running {
            self.flash = Some("interrupting (Ctrl-C again to quit)".into());
            vec![Effect::Frame(client_frame::Kind::Interrupt(
                pb::InterruptTurn {},
            ))]
        } else {
            if !self.input.is_empty() {
                self.input.take();
            }
            self.flash = Some("Ctrl-C again to quit; the sessions go on".into());
            Vec::new()
        }
    }

    fn page(&self) -> usize {
        usize::from(self.size.1.saturating_sub(8)).max(1)
    }

    fn scroll_by(&mut self, lines: isize) {
        self.scroll.back = self.scroll.back.saturating_add_signed(lines);
    }

    pub(super) fn on_mouse(&mut self, mouse: MouseEvent) {
        match mouse.kind {
            MouseEventKind::ScrollUp => self.scroll_by(WHEEL_LINES as isize),
            MouseEventKind::ScrollDown => self.scroll_by(-(WHEEL_LINES as isize)),
            _ => {}
        }
    }

    pub(super) fn on_paste(&mut self, text: &str) {
        if let Some(search) = &mut self.search {
            search.query.push_str(&text.replace(['\n', '\r'], " "));
        } else if self.pending().is_some() {
            self.answer.push_str(&text.replace(['\n', '\r'], " "));
        } else {
            self.focus = Focus::Input;
            self.input.insert_str(text);
        }
    }

    fn open_search(&mut self) {
        self.search = Some(Search::default());
    }

    fn modal_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(pending) = self.pending().cloned() else {
            return Vec::new();
        };
        let choices: Vec<String> = match &pending {
            Pending::Approval(a) => approval_choices(a),
            Pending::Clarify(q) => q.choices.clone(),
        };
        match key.code {
            KeyCode::Up => self.choice = self.choice.saturating_sub(1),
            KeyCode::Down => self.choice = (self.choice + 1).min(choices.len().saturating_sub(1)),
            KeyCode::Enter => {
                let answer = match &pending {
                    Pending::Clarify(_) if !self.answer.trim().is_empty() => {
                        self.answer.trim().to_string()
                    }
                    _ => match choices.get(self.choice) {
                        Some(choice) => choice.clone(),
                        None => return Vec::new(),
                    },
                };
                return self.answer_pending(&pending, answer);
            }
            KeyCode::Esc => {
                if let Pending::Approval(_) = pending {
                    return self.answer_pending(&pending, "deny".into());
                }
                self.answer.clear();
            }
            KeyCode::Backspace => {
                self.answer.pop();
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => match &pending {
                Pending::Approval(_) => {
                    if let Some(choice) = choices.iter().find(|choice| choice.starts_with(c)) {
                        return self.answer_pending(&pending, choice.clone());
                    }
                }
                Pending::Clarify(_) => {
                    let by_number = c
                        .to_digit(10)
                        .filter(|_| self.answer.is_empty())
                        .and_then(|n| choices.get((n as usize).wrapping_sub(1)));
                    match by_number {
                        Some(choice) => {
                            let choice = choice.clone();
                            return self.answer_pending(&pending, choice);
                        }
                        None => self.answer.push(c),
                    }
                }
            },
            _ => {}
        }
        Vec::new()
    }

    pub(super) fn answer_pending(&mut self, pending: &Pending, answer: String) -> Vec<Effect> {
        self.answer.clear();
        self.choice = 0;
        if let Some(conversation) = self.conversation_mut() {
            conversation.pending = None;
        }
        let frame = match pending {
            Pending::Approval(a) => client_frame::Kind::ApprovalResponse(pb::ApprovalResponse {
                id: a.id.clone(),
                decision: answer,
            }),
            Pending::Clarify(q) => client_frame::Kind::ClarifyResponse(pb::ClarifyResponse {
                id: q.id.clone(),
                answer,
            }),
        };
        vec![Effect::Frame(frame)]
    }

    fn search_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(search) = &mut self.search else {
            return Vec::new();
        };
        match key.code {
            KeyCode::Esc => self.search = None,
            KeyCode::Up => search.move_by(-1),
            KeyCode::Down => search.move_by(1),
            KeyCode::Backspace => {
                search.query.pop();
            }
            KeyCode::Enter if search.is_stale() => {
                let query = search.query.trim().to_string();
                if !query.is_empty() {
                    search.waiting = true;
                    return vec![Effect::Search(query)];
                }
            }
            KeyCode::Enter => {
                let Some(hit) = search.selected_hit().cloned() else {
                    return Vec::new();
                };
                self.search = None;
                self.focus = Focus::Input;
                return self.open_hit(&hit);
            }
            KeyCode::Char(c) if !key.modifiers.contains(KeyModifiers::CONTROL) => {
                search.query.push(c);
            }
            _ => {}
        }
        Vec::new()
    }

    /// Open a search hit's conversation scrolled to its message: replayed in full, since the
    /// message may be older than what is held.
    fn open_hit(&mut self, hit: &pb::SearchHit) -> Vec<Effect> {
        let mut effects = self.switch_to(&hit.session_id);
        let held = self
            .conversation()
            .is_some_and(|c| c.position_of_message(hit.message_id).is_some());
        if held {
            self.scroll_to_message_now(hit.message_id);
            return effects;
        }
        self.jump_to = Some(hit.message_id);
        effects.retain(|e| !matches!(e, Effect::Attach { .. }));
        effects.extend(self.reload_current_fully());
        effects
    }

    fn scroll_to_message_now(&mut self, message_id: u64) {
        if let Some(index) = self
            .conversation()
            .and_then(|c| c.position_of_message(message_id))
        {
            self.scroll.to_block = Some(index);
        }
    }

    fn list_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let keys = self.config.keys.clone();
        if self.sessions.filtering {
            match key.code {
                KeyCode::Enter | KeyCode::Esc => self.sessions.filtering = false,
                KeyCode::Backspace => {
                    let mut filter = self.sessions.filter.clone();
                    filter.pop();
                    self.sessions.set_filter(filter);
                }
                KeyCode::Char(c) => {
                    let filter = format!("{}{c}", self.sessions.filter);
                    self.sessions.set_filter(filter);
                }
                _ => {}
            }
            return Vec::new();
        }
        if keys.is(Action::Quit, &key) {
            self.quit = true;
            return vec![Effect::Quit];
        }
        if keys.is(Action::Focus, &key) || key.code == KeyCode::Esc {
            self.focus = Focus::Input;
            return Vec::new();
        }
        if keys.is(Action::SourceFilter, &key) {
            self.sessions.cycle_source();
            return Vec::new();
        }
        if keys.is(Action::Filter, &key) {
            self.sessions.filtering = true;
            return Vec::new();
        }
        match key.code {
            KeyCode::Up | KeyCode::Char('k') => self.sessions.move_by(-1),
            KeyCode::Down | KeyCode::Char('j') => self.sessions.move_by(1),
            KeyCode::Home | KeyCode::Char('g') => self.sessions.selected = 0,
            KeyCode::Char('n') => return vec![Effect::CreateSession],
            KeyCode::Char('/') => self.open_search(),
            KeyCode::Enter => {
                if let Some(id) = self.sessions.selected_row().map(|s| s.id.clone()) {
                    self.focus = Focus::Input;
                    return self.switch_to(&id);
                }
            }
            _ => {}
        }
        Vec::new()
    }

    fn input_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let keys = self.config.keys.clone();
        let completions = self.completions().len();
        if keys.is(Action::Newline, &key) {
            self.input.newline();
            return Vec::new();
        }
        if keys.is(Action::Send, &key) {
            if completions > 0 && self.accept_completion() {
                return Vec::new();
            }
            return self.submit();
        }
        if keys.is(Action::Focus, &key) {
            if completions > 0 {
                self.accept_completion();
            } else {
                self.focus = Focus::Sessions;
            }
            return Vec::new();
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up if completions > 0 => self.completion = self.completion.saturating_sub(1),
            KeyCode::Down if completions > 0 => {
                self.completion = (self.completion + 1).min(completions - 1);
            }
            KeyCode::Char('a') if ctrl => self.input.home(),
            KeyCode::Char('e') if ctrl => self.input.end(),
            KeyCode::Char('u') if ctrl => self.input.delete_to_start(),
            KeyCode::Char('w') if ctrl => self.input.delete_word(),
            KeyCode::Char(c) if !ctrl => {
                self.input.insert_char(c);
                self.completion = 0;
            }
            KeyCode::Backspace => {
                self.input.backspace();
                self.completion = 0;
            }
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            KeyCode::Up => self.input.up(),
            KeyCode::Down => self.input.down(),
            KeyCode::Esc => self.completion = 0,
            _ => {}
        }
        Vec::new()
    }

    /// Complete the slash word to the highlighted command; `false` when it already is one.
    fn accept_completion(&mut self) -> bool {
        let Some(name) = self
            .completions()
            .get(self.completion)
            .map(|c| c.name.clone())
        else {
            return false;
        };
        if self.input.command_prefix() == Some(name.as_str()) {
            return false;
        }
        self.input.set_text(&format!("/{name} "));
        self.completion = 0;
        true
    }
}

/// The choices an approval offers, as the line client offers them.
pub fn approval_choices(a: &pb::ApprovalRequested) -> Vec<String> {
    if a.choices.is_empty() {
        ["once", "session", "always", "deny"]
            .map(String::from)
            .to_vec()
    } else {
        a.choices.clone()
    }
}
