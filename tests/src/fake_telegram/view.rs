//! Inspecting the fake: a [`StateView`] of the world (what the waiters' predicates get), the
//! same getters on the handle, and a JSON snapshot of everything for failure messages.

use std::fmt;

use serde_json::{Value, json};

use super::{
    Call, CallbackAnswer, ChatAction, FakeTelegram, SentMessage,
    state::{StoredMessage, World},
};

/// A read-only look at the fake's state at one moment.
pub struct StateView<'a> {
    world: &'a World,
}

impl<'a> StateView<'a> {
    pub(super) fn new(world: &'a World) -> Self {
        Self { world }
    }

    /// Every request so far, in arrival order.
    pub fn calls(&self) -> Vec<Call> {
        self.world.calls.clone()
    }

    /// The calls of `method` (case-insensitive), in order.
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        self.world
            .calls
            .iter()
            .filter(|c| c.is(method))
            .cloned()
            .collect()
    }

    /// How many `getUpdates` requests arrived.
    pub fn polls(&self) -> usize {
        self.world
            .calls
            .iter()
            .filter(|c| c.is("getUpdates"))
            .count()
    }

    /// `getUpdates` requests whose client is still connected (answered ones leave).
    pub fn polls_in_flight(&self) -> usize {
        self.world.polls.in_flight
    }

    /// Whether a `getUpdates` is waiting for updates now (a long poll in progress).
    pub fn polling(&self) -> bool {
        self.world.polls.waiting.is_some()
    }

    /// The bot's messages in chat `chat_id` (deleted ones flagged), oldest first.
    pub fn messages(&self, chat_id: i64) -> Vec<SentMessage> {
        let Some(chat) = self.world.chats.get(&chat_id) else {
            return Vec::new();
        };
        chat.messages
            .values()
            .filter(|m| m.from_bot)
            .map(sent_message)
            .collect()
    }

    /// The files the bot sent to chat `chat_id`, oldest first.
    pub fn uploads(&self, chat_id: i64) -> Vec<super::Upload> {
        self.world
            .uploads
            .iter()
            .filter(|u| u.chat_id == chat_id)
            .cloned()
            .collect()
    }

    /// The bot's message `message_id` in chat `chat_id`.
    pub fn message(&self, chat_id: i64, message_id: i64) -> Option<SentMessage> {
        let message = self.world.chats.get(&chat_id)?.messages.get(&message_id)?;
        message.from_bot.then(|| sent_message(message))
    }

    /// The updates not yet confirmed, oldest first.
    pub fn pending_updates(&self) -> Vec<Value> {
        self.world.queue.iter().map(|u| u.json.clone()).collect()
    }

    /// The highest offset confirmed: every update below it is forgotten (0 before any).
    pub fn confirmed_offset(&self) -> i64 {
        self.world.confirmed
    }

    /// The default command list (no scope, no language) as `(command, description)`.
    pub fn commands(&self) -> Vec<(String, String)> {
        let key = "default/null/null/";
        let Some(Value::Array(list)) = self.world.commands.get(key) else {
            return Vec::new();
        };
        list.iter()
            .map(|c| {
                let text = |name: &str| c[name].as_str().unwrap_or_default().to_owned();
                (text("command"), text("description"))
            })
            .collect()
    }

    /// The webhook set: its URL and secret token.
    pub fn webhook(&self) -> Option<(String, Option<String>)> {
        let hook = self.world.webhook.as_ref()?;
        Some((hook.url.clone(), hook.secret.clone()))
    }

    /// The chat actions the bot sent to `chat_id`, in order.
    pub fn chat_actions(&self, chat_id: i64) -> Vec<ChatAction> {
        self.world
            .chats
            .get(&chat_id)
            .map(|c| c.actions.clone())
            .unwrap_or_default()
    }

    /// The bot's `answerCallbackQuery` calls that succeeded, in order.
    pub fn callback_answers(&self) -> Vec<CallbackAnswer> {
        self.world.answers.clone()
    }

    /// Everything, as JSON: calls, chats and their messages, pending updates, webhook, faults.
    pub fn snapshot_json(&self) -> Value {
        let world = self.world;
        let calls: Vec<Value> = world
            .calls
            .iter()
            .map(|c| json!({"method": c.method, "status": c.status, "params": c.params}))
            .collect();
        let chats: serde_json::Map<String, Value> = world
            .chats
            .iter()
            .map(|(id, chat)| {
                let messages: Vec<Value> = chat.messages.values().map(message_json).collect();
                let actions: Vec<&str> = chat.actions.iter().map(|a| a.action.as_str()).collect();
                let entry = json!({"chat": chat.json, "messages": messages, "actions": actions});
                (id.to_string(), entry)
            })
            .collect();
        let faults: serde_json::Map<String, Value> = world
            .faults
            .iter()
            .filter(|(_, queue)| !queue.is_empty())
            .map(|(method, queue)| {
                let queued: Vec<String> = queue.iter().map(|f| format!("{f:?}")).collect();
                (method.clone(), queued.into())
            })
            .collect();
        json!({
            "calls": calls,
            "chats": chats,
            "pending_updates": self.pending_updates(),
            "confirmed_offset": world.confirmed,
            "webhook": self.webhook(),
            "commands": world.commands,
            "faults": faults,
            "hang_polls": world.hang_polls,
            "conflict": world.conflict,
            "polls_in_flight": world.polls.in_flight,
        })
    }

    /// One line per call: method, status (`…` while pending), parameters (shortened).
    pub fn call_log(&self) -> String {
        let mut log = String::new();
        for call in &self.world.calls {
            let status = call.status.map_or("…".to_owned(), |s| s.to_string());
            let mut params = call.params.to_string();
            if params.len() > 300 {
                let mut cut = 300;
                while !params.is_char_boundary(cut) {
                    cut -= 1;
                }
                params.truncate(cut);
                params.push('…');
            }
            log.push_str(&format!("  {} {status} {params}\n", call.method));
        }
        if log.is_empty() {
            log.push_str("  (none)\n");
        }
        log
    }
}

fn sent_message(message: &StoredMessage) -> SentMessage {
    let (text, entities) = match &message.text {
        Some(text) => (text.text.clone(), text.entities.clone()),
        None => (String::new(), Vec::new()),
    };
    SentMessage {
        message_id: message.id,
        text,
        raw: message.raw.clone(),
        parse_mode: message.parse_mode.clone(),
        entities,
        edits: message.edits,
        reply_markup: message.reply_markup.clone(),
        deleted: message.deleted,
        thread_id: message.thread_id,
        reply_to_message_id: message.reply_to,
    }
}

fn message_json(message: &StoredMessage) -> Value {
    json!({
        "message_id": message.id,
        "from_bot": message.from_bot,
        "text": message.text.as_ref().map(|t| t.text.clone()),
        "raw": message.raw,
        "parse_mode": message.parse_mode,
        "edits": message.edits,
        "reply_markup": message.reply_markup,
        "deleted": message.deleted,
        "thread_id": message.thread_id,
    })
}

impl FakeTelegram {
    /// Runs `look` on the state as it is now.
    pub fn view<R>(&self, look: impl FnOnce(&StateView<'_>) -> R) -> R {
        self.shared.read(|world| look(&StateView::new(world)))
    }

    /// See [`StateView::calls`].
    pub fn calls(&self) -> Vec<Call> {
        self.view(|v| v.calls())
    }

    /// See [`StateView::calls_of`].
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        self.view(|v| v.calls_of(method))
    }

    /// See [`StateView::polls_in_flight`].
    pub fn polls_in_flight(&self) -> usize {
        self.view(|v| v.polls_in_flight())
    }

    /// See [`StateView::polling`].
    pub fn polling(&self) -> bool {
        self.view(|v| v.polling())
    }

    /// See [`StateView::messages`].
    pub fn messages(&self, chat_id: i64) -> Vec<SentMessage> {
        self.view(|v| v.messages(chat_id))
    }

    /// See [`StateView::pending_updates`].
    pub fn pending_updates(&self) -> Vec<Value> {
        self.view(|v| v.pending_updates())
    }

    /// See [`StateView::confirmed_offset`].
    pub fn confirmed_offset(&self) -> i64 {
        self.view(|v| v.confirmed_offset())
    }

    /// See [`StateView::commands`].
    pub fn commands(&self) -> Vec<(String, String)> {
        self.view(|v| v.commands())
    }

    /// See [`StateView::webhook`].
    pub fn webhook(&self) -> Option<(String, Option<String>)> {
        self.view(|v| v.webhook())
    }

    /// See [`StateView::chat_actions`].
    pub fn chat_actions(&self, chat_id: i64) -> Vec<ChatAction> {
        self.view(|v| v.chat_actions(chat_id))
    }

    /// See [`StateView::callback_answers`].
    pub fn callback_answers(&self) -> Vec<CallbackAnswer> {
        self.view(|v| v.callback_answers())
    }

    /// See [`StateView::snapshot_json`].
    pub fn snapshot_json(&self) -> Value {
        self.view(|v| v.snapshot_json())
    }
}

impl fmt::Debug for FakeTelegram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FakeTelegram at {} ", self.addr())?;
        let snapshot = self.snapshot_json();
        match serde_json::to_string_pretty(&snapshot) {
            Ok(text) => f.write_str(&text),
            Err(_) => write!(f, "{snapshot}"),
        }
    }
}
