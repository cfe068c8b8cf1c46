//! Looking at what the bot did, and waiting for it: each waiter looks at the state after every
//! change (the change counter wakes it; nothing polls on a clock) and fails the test after its
//! timeout with the calls so far.

use std::time::Duration;

use serde_json::Value;

use super::{
    Call, FakeDiscord, GatewayStats, InteractionAnswer, OpenedThread, SentMessage, state::World,
};

/// A look at the fake's state.
pub struct View<'a>(&'a World);

impl View<'_> {
    /// The bot's messages in `channel` (a thread is a channel), oldest first.
    pub fn messages(&self, channel: &str) -> Vec<SentMessage> {
        let bot = &self.0.bot.id;
        self.0
            .messages
            .iter()
            .filter(|m| m.channel_id == channel && &m.author_id == bot)
            .cloned()
            .collect()
    }

    /// The bytes of the file `name` attached to the bot's message `message_id`.
    pub fn file(&self, message_id: &str, name: &str) -> Option<Vec<u8>> {
        let key = format!("{message_id}-{name}");
        self.0.files.get(&key).map(|(bytes, _)| bytes.to_vec())
    }

    /// The threads the bot opened on messages, oldest first.
    pub fn opened_threads(&self) -> Vec<OpenedThread> {
        self.0.opened_threads.clone()
    }

    /// The thread the bot opened on the message `message_id`.
    pub fn thread_on(&self, message_id: &str) -> Option<OpenedThread> {
        self.0
            .opened_threads
            .iter()
            .find(|t| t.message_id == message_id)
            .cloned()
    }

    /// Every REST call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.0.calls.clone()
    }

    /// The calls of `method` whose path contains `path`.
    pub fn calls_to(&self, method: &str, path: &str) -> Vec<Call> {
        self.0
            .calls
            .iter()
            .filter(|c| c.method == method && c.path.contains(path))
            .cloned()
            .collect()
    }

    pub fn gateway(&self) -> GatewayStats {
        self.0.gateway_stats()
    }

    pub fn answers(&self) -> Vec<InteractionAnswer> {
        self.0.answers.clone()
    }

    pub fn followups(&self) -> Vec<Value> {
        self.0.followups.clone()
    }

    /// Registered application commands: `(scope, list)`, scope `global` or a guild id.
    pub fn commands(&self) -> Vec<(String, Value)> {
        self.0.commands.clone()
    }

    /// Requests sent while their bucket was blocked by a 429 (or over its limit).
    pub fn violations(&self) -> usize {
        self.0.violations
    }

    /// The calls, one a line, for a failure's message.
    fn call_log(&self) -> String {
        self.0
            .calls
            .iter()
            .map(|c| format!("{} {} -> {:?}", c.method, c.path, c.status))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl FakeDiscord {
    /// Looks at the state.
    pub fn view<R>(&self, look: impl FnOnce(&View<'_>) -> R) -> R {
        self.shared.read(|world| look(&View(world)))
    }

    pub fn messages(&self, channel: &str) -> Vec<SentMessage> {
        self.view(|v| v.messages(channel))
    }

    pub fn calls_to(&self, method: &str, path: &str) -> Vec<Call> {
        self.view(|v| v.calls_to(method, path))
    }

    pub fn opened_threads(&self) -> Vec<OpenedThread> {
        self.view(|v| v.opened_threads())
    }

    pub fn gateway(&self) -> GatewayStats {
        self.view(|v| v.gateway())
    }

    pub fn answers(&self) -> Vec<InteractionAnswer> {
        self.view(|v| v.answers())
    }

    pub fn violations(&self) -> usize {
        self.view(|v| v.violations())
    }

    /// A receiver that wakes on every change of the fake's state (for waits across fakes).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.subscribe()
    }

    /// Waits until `check` yields a value; panics after `timeout`, naming `what`.
    pub async fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&View<'_>) -> Option<T>,
    ) -> T {
        let mut changes = self.shared.subscribe();
        let waiting = async {
            loop {
                changes.borrow_and_update();
                if let Some(value) = self.view(&mut check) {
                    return value;
                }
                if changes.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        match tokio::time::timeout(timeout, waiting).await {
            Ok(value) => value,
            Err(_) => {
                let log = self.view(|v| v.call_log());
                let gateway = self.gateway();
                panic!(
                    "fake-discord: waited {timeout:?} in vain for {what}; gateway {gateway:?}; \
                     calls so far:\n{log}"
                )
            }
        }
    }

    /// Waits for a (not deleted) bot message in `channel` whose content satisfies `predicate`.
    pub async fn wait_message(
        &self,
        channel: &str,
        predicate: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> SentMessage {
        let what = format!("a bot message in channel {channel} with the expected text");
        self.wait_until(&what, timeout, |view| {
            view.messages(channel)
                .into_iter()
                .find(|m| !m.deleted && predicate(&m.content))
        })
        .await
    }

    /// Waits until the bot has a session and registered its commands (it is ready to talk).
    pub async fn wait_ready(&self, timeout: Duration) {
        self.wait_until(
            "the bot connected and registered its commands",
            timeout,
            |view| {
                let stats = view.gateway();
                (stats.sessions >= 1 && stats.live >= 1 && !view.commands().is_empty())
                    .then_some(())
            },
        )
        .await;
    }
}
