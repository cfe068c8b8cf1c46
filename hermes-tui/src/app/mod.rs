//! The TUI's state and its update function (Elm-style): every input — a key, a session event, a
//! listing from the daemon — is a [`Msg`]; [`App::update`] changes the state and returns the
//! [`Effect`]s for the daemon link to carry out. Nothing here touches the terminal or the socket,
//! so all of it is tested without either.

pub mod conversation;
pub mod input;
mod keyboard;
pub mod search;
pub mod sessions;
mod slash;

use std::{
    collections::{HashMap, VecDeque},
    time::{Duration, Instant},
};

use hermes_proto::pb::{self, client_frame};

pub use self::keyboard::approval_choices;
use self::{
    conversation::{Block, Conversation},
    input::Input,
    search::Search,
    sessions::SessionList,
};
use crate::config::TuiConfig;

/// Conversations kept in memory besides the current one; switching back to one of them
/// re-attaches from its last seq, to any other replays its last messages.
pub const CACHED_CONVERSATIONS: usize = 16;
/// Messages replayed when attaching to a session not in memory.
pub const BACKLOG_MESSAGES: u32 = 100;
/// Two Ctrl-C within this quit.
pub const DOUBLE_CTRL_C: Duration = Duration::from_secs(2);

/// Something that happened: a key, a paste, an event of the attached session, an answer of the
/// daemon.
#[derive(Debug, Clone)]
pub enum Msg {
    Key(crossterm::event::KeyEvent),
    Paste(String),
    Mouse(crossterm::event::MouseEvent),
    Resize(u16, u16),
    /// The attachment to this session is up.
    Attached {
        session_id: String,
    },
    Event(pb::SessionEvent),
    /// The attachment to this session ended (daemon gone, stream closed).
    LinkLost {
        session_id: String,
        reason: String,
    },
    Sessions(Vec<pb::Session>),
    SearchResults {
        query: String,
        hits: Vec<pb::SearchHit>,
    },
    Commands(Vec<pb::SlashCommand>),
    /// The default model and its context window.
    Model {
        model: String,
        context_length: u64,
    },
    ContextTokens {
        session_id: String,
        tokens: u64,
    },
    /// A session was created for us (`n`, `/new`).
    Created(pb::Session),
    /// A line to show in the conversation (the outcome of a slash command).
    Info(String),
    /// Send this text again as input (`/retry`).
    Resend(String),
    /// An RPC failed; shown in the status bar.
    Failed(String),
    /// The clock moved on (ages in the session list).
    Tick {
        now_unix: i64,
    },
}

/// What the daemon link is asked to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Attach to a session (dropping any other attachment), replaying after `since_seq`, or the
    /// last `last_messages` messages when `since_seq` is 0; retried until it succeeds or another
    /// attach replaces it.
    Attach {
        session_id: String,
        since_seq: u64,
        last_messages: u32,
    },
    /// A frame on the current attachment.
    Frame(client_frame::Kind),
    CreateSession,
    Search(String),
    /// A slash command that needs an RPC (`/title`, `/undo`, `/compress`…).
    Command {
        session_id: String,
        name: String,
        args: String,
    },
    /// Read the input tokens of assistant message `message_id`: the context in use.
    FetchContext {
        session_id: String,
        message_id: u64,
    },
    Quit,
}

/// Where keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Input,
    Sessions,
}

/// The link to the daemon, as the status bar shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Connection {
    Connecting,
    Connected,
    Reconnecting(String),
}

/// How far the conversation is scrolled back from its newest line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Scroll {
    /// Lines above the bottom; 0 follows the newest text.
    pub back: usize,
    /// Total lines at the last draw, to keep a scrolled-back view still while text arrives.
    pub last_total: usize,
    /// Put this block at the top at the next draw (a search hit).
    pub to_block: Option<usize>,
}

/// The whole state of the TUI.
#[derive(Debug)]
pub struct App {
    pub config: TuiConfig,
    pub sessions: SessionList,
    pub current: Option<String>,
    conversations: HashMap<String, Conversation>,
    /// Least recently used first.
    recency: VecDeque<String>,
    pub input: Input,
    pub focus: Focus,
    pub scroll: Scroll,
    pub search: Option<Search>,
    pub commands: Vec<pb::SlashCommand>,
    /// The highlighted completion.
    pub completion: usize,
    pub connection: Connection,
    pub model: String,
    pub context_length: u64,
    /// A one-line message in the status bar.
    pub flash: Option<String>,
    /// The free-text answer being typed in a clarify modal.
    pub answer: String,
    /// The highlighted choice of the modal.
    pub choice: usize,
    /// Input sent while disconnected, sent once re-attached.
    pub unsent: Option<String>,
    /// Image files (absolute paths) attached with `/image`, sent with the next message.
    pub images: Vec<String>,
    /// After a search hit opens: the message to scroll to once it is here.
    pub jump_to: Option<u64>,
    pub last_ctrl_c: Option<Instant>,
    /// The clock for key timing, set by the caller before each update.
    pub now: Instant,
    pub now_unix: i64,
    pub size: (u16, u16),
    pub quit: bool,
}

impl App {
    pub fn new(config: TuiConfig, history: Vec<String>, now_unix: i64) -> Self {
        Self {
            config,
            sessions: SessionList::default(),
            current: None,
            conversations: HashMap::new(),
            recency: VecDeque::new(),
            input: Input::new(history),
            focus: Focus::Input,
            scroll: Scroll::default(),
            search: None,
            commands: Vec::new(),
            completion: 0,
            connection: Connection::Connecting,
            model: String::new(),
            context_length: 0,
            flash: None,
            answer: String::new(),
            choice: 0,
            unsent: None,
            images: Vec::new(),
            jump_to: None,
            last_ctrl_c: None,
            now: Instant::now(),
            now_unix,
            size: (80, 24),
            quit: false,
        }
    }

    /// The conversation on screen.
    pub fn conversation(&self) -> Option<&Conversation> {
        self.conversations.get(self.current.as_deref()?)
    }

    pub fn conversation_mut(&mut self) -> Option<&mut Conversation> {
        self.conversations.get_mut(self.current.as_deref()?)
    }

    /// The current session's row of the list.
    pub fn current_session(&self) -> Option<&pb::Session> {
        let id = self.current.as_deref()?;
        self.sessions.rows.iter().find(|s| s.id == id)
    }

    /// The question the current session waits on, if any.
    pub fn pending(&self) -> Option<&conversation::Pending> {
        self.conversation()?.pending.as_ref()
    }

    pub fn update(&mut self, msg: Msg) -> Vec<Effect> {
        match msg {
            Msg::Key(key) => self.on_key(key),
            Msg::Paste(text) => {
                self.on_paste(&text);
                Vec::new()
            }
            Msg::Mouse(mouse) => {
                self.on_mouse(mouse);
                Vec::new()
            }
            Msg::Resize(w, h) => {
                self.size = (w, h);
                Vec::new()
            }
            Msg::Attached { session_id } => self.on_attached(&session_id),
            Msg::Event(event) => self.on_event(event),
            Msg::LinkLost { session_id, reason } => self.on_link_lost(&session_id, reason),
            Msg::Sessions(rows) => {
                self.sessions.replace(rows, self.current.as_deref());
                Vec::new()
            }
            Msg::SearchResults { query, hits } => {
                if let Some(search) = &mut self.search {
                    search.results(&query, hits);
                }
                Vec::new()
            }
            Msg::Commands(commands) => {
                self.commands = commands;
                Vec::new()
            }
            Msg::Model {
                model,
                context_length,
            } => {
                self.model = model;
                self.context_length = context_length;
                Vec::new()
            }
            Msg::ContextTokens { session_id, tokens } => {
                if let Some(conversation) = self.conversations.get_mut(&session_id) {
                    conversation.context_tokens = tokens;
                }
                Vec::new()
            }
            Msg::Created(session) => {
                let id = session.id.clone();
                if !self.sessions.rows.iter().any(|s| s.id == id) {
                    self.sessions.rows.insert(0, session);
                }
                self.focus = Focus::Input;
                self.switch_to(&id)
            }
            Msg::Resend(text) => self.send_text(text),
            Msg::Info(text) => {
                self.note(text);
                Vec::new()
            }
            Msg::Failed(text) => {
                self.flash = Some(text);
                Vec::new()
            }
            Msg::Tick { now_unix } => {
                self.now_unix = now_unix;
                Vec::new()
            }
        }
    }

    /// Show `text` as a dim line in the current conversation.
    pub fn note(&mut self, text: String) {
        if let Some(conversation) = self.conversation_mut() {
            conversation.note(text);
        } else {
            self.flash = Some(text);
        }
    }

    /// Make `id` the session on screen and attach to it from what this client already has.
    pub fn switch_to(&mut self, id: &str) -> Vec<Effect> {
        if self.current.as_deref() == Some(id) {
            return Vec::new();
        }
        // Images attached with /image belong to the conversation they were meant for.
        if self.current.is_some() && !self.images.is_empty() {
            self.flash = Some(format!(
                "{} attached image(s) dropped: they were for the other conversation",
                self.images.len()
            ));
            self.images.clear();
        }
        self.current = Some(id.to_string());
        self.connection = Connection::Connecting;
        self.scroll = Scroll::default();
        self.choice = 0;
        self.answer.clear();
        self.recency.retain(|s| s != id);
        self.recency.push_back(id.to_string());
        while self.recency.len() > CACHED_CONVERSATIONS + 1 {
            if let Some(old) = self.recency.pop_front() {
                self.conversations.remove(&old);
            }
        }
        self.sessions.select_id(id);
        let since_seq = self
            .conversations
            .entry(id.to_string())
            .or_default()
            .last_seq;
        vec![self.attach_effect(id, since_seq)]
    }

    fn attach_effect(&self, id: &str, since_seq: u64) -> Effect {
        Effect::Attach {
            session_id: id.to_string(),
            since_seq,
            last_messages: if since_seq == 0 { BACKLOG_MESSAGES } else { 0 },
        }
    }

    /// Forget what is held of the current conversation and replay all of it.
    pub fn reload_current_fully(&mut self) -> Vec<Effect> {
        let Some(id) = self.current.clone() else {
            return Vec::new();
        };
        self.conversations
            .insert(id.clone(), Conversation::default());
        vec![Effect::Attach {
            session_id: id,
            since_seq: 0,
            last_messages: 0,
        }]
    }

    fn on_attached(&mut self, session_id: &str) -> Vec<Effect> {
        if self.current.as_deref() != Some(session_id) {
            return Vec::new();
        }
        self.connection = Connection::Connected;
        self.flash = None;
        match self.unsent.take() {
            Some(text) => self.send_text(text),
            None => Vec::new(),
        }
    }

    fn on_link_lost(&mut self, session_id: &str, reason: String) -> Vec<Effect> {
        if self.current.as_deref() != Some(session_id) {
            return Vec::new();
        }
        self.connection = Connection::Reconnecting(reason);
        let since = self.conversation().map_or(0, |c| c.last_seq);
        vec![self.attach_effect(session_id, since)]
    }

    fn on_event(&mut self, event: pb::SessionEvent) -> Vec<Effect> {
        let mut effects = Vec::new();
        let Some(current) = self.current.clone() else {
            return effects;
        };
        if event.session_id != current && !event.session_id.is_empty() {
            return effects;
        }
        if let Some(pb::session_event::Kind::Lagged(lagged)) = &event.kind {
            // The daemon dropped this client for falling behind: re-attach from what we have.
            let since = self.conversation().map_or(0, |c| c.last_seq);
            self.flash = Some(format!(
                "fell behind at seq {}; catching up",
                lagged.last_delivered_seq
            ));
            effects.push(self.attach_effect(&current, since));
            return effects;
        }
        let state = match &event.kind {
            Some(pb::session_event::Kind::StateChanged(s)) => Some(s.state),
            _ => None,
        };
        let Some(conversation) = self.conversations.get_mut(&current) else {
            return effects;
        };
        let applied = conversation.apply(&event);
        let seq = conversation.last_seq;
        if applied && let Some(pb::session_event::Kind::AssistantMessage(m)) = &event.kind {
            effects.push(Effect::FetchContext {
                session_id: current.clone(),
                message_id: m.message_id,
            });
        }
        if applied && conversation.pending.is_some() {
            self.choice = 0;
        }
        let replay_done = matches!(&event.kind, Some(pb::session_event::Kind::ReplayDone(_)));
        self.sessions.mark_seen(&current, seq);
        if let Some(state) = state {
            self.sessions.set_state(&current, state);
        }
        if replay_done && let Some(message_id) = self.jump_to.take() {
            self.scroll_to_message(message_id);
        }
        effects
    }

    /// Scroll so that the block holding `message_id` is at the top; the view turns the block
    /// position into lines.
    fn scroll_to_message(&mut self, message_id: u64) {
        let position = self
            .conversation()
            .and_then(|c| c.position_of_message(message_id));
        match position {
            Some(index) => self.scroll.to_block = Some(index),
            None => self.flash = Some(format!("message {message_id} is not in this conversation")),
        }
    }

    /// Send `text` as input to the current session (or keep it until the link is back).
    fn send_text(&mut self, text: String) -> Vec<Effect> {
        if self.current.is_none() {
            // The first message of a TUI started without a session makes one.
            self.unsent = Some(text);
            return vec![Effect::CreateSession];
        }
        if self.connection != Connection::Connected {
            if self.connection == Connection::Connecting {
                self.unsent = Some(text);
                return Vec::new();
            }
            self.flash = Some("not connected: the input is sent once the daemon is back".into());
            self.unsent = Some(text);
            return Vec::new();
        }
        self.scroll = Scroll::default();
        if let Some(conversation) = self.conversation_mut() {
            conversation.running = true;
        }
        vec![Effect::Frame(client_frame::Kind::UserInput(
            pb::UserInput {
                text,
                attachments: std::mem::take(&mut self.images),
                ..pb::UserInput::default()
            },
        ))]
    }

    /// Completions of the slash word being typed: built-ins and skills the daemon offers.
    pub fn completions(&self) -> Vec<&pb::SlashCommand> {
        let Some(prefix) = self.input.command_prefix() else {
            return Vec::new();
        };
        let prefix = prefix.to_lowercase().replace('-', "_");
        self.commands
            .iter()
            .filter(|c| c.terminal && c.name.starts_with(&prefix))
            .take(8)
            .collect()
    }

    /// Fold or unfold the tool and reasoning blocks of the current conversation.
    pub fn toggle_tools(&mut self) {
        if let Some(conversation) = self.conversation_mut() {
            let expanded = !conversation
                .entries
                .iter()
                .any(|e| e.expanded && matches!(e.block, Block::Tool(_) | Block::Reasoning { .. }));
            conversation.set_expanded(expanded);
        }
    }
}

#[cfg(test)]
mod tests;
