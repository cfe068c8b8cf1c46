//! Looking at what the bot did and waiting for it: each waiter looks again after every change
//! of the state (nothing polls on a clock) and fails the test after its timeout with the calls
//! so far.

use std::time::Duration;

use super::{
    FakeSlack,
    state::{Call, Envelope, Ephemeral, File, Message, Upload},
};

impl FakeSlack {
    /// Every message in `channel` (users' and the bot's), oldest first.
    pub fn messages(&self, channel: &str) -> Vec<Message> {
        self.shared.read(|world| {
            world
                .messages
                .iter()
                .filter(|m| m.channel == channel)
                .cloned()
                .collect()
        })
    }

    /// The bot's messages in `channel`, oldest first.
    pub fn bot_messages(&self, channel: &str) -> Vec<Message> {
        let mut messages = self.messages(channel);
        messages.retain(|m| m.from_bot);
        messages
    }

    /// Every Web API call so far.
    pub fn calls(&self) -> Vec<Call> {
        self.shared.read(|world| world.calls.clone())
    }

    /// The calls of `method`.
    pub fn calls_of(&self, method: &str) -> Vec<Call> {
        let mut calls = self.calls();
        calls.retain(|c| c.method == method);
        calls
    }

    /// Every Socket Mode envelope queued so far, with its delivery state.
    pub fn envelopes(&self) -> Vec<Envelope> {
        self.shared.read(|world| world.envelopes.clone())
    }

    /// The envelope `id`.
    pub fn envelope(&self, id: &str) -> Option<Envelope> {
        self.shared
            .read(|world| world.envelopes.iter().find(|e| e.id == id).cloned())
    }

    /// How many Socket Mode connections were opened.
    pub fn connections(&self) -> usize {
        self.shared.read(|world| world.links.len())
    }

    /// How many Socket Mode connections are open now.
    pub fn open_connections(&self) -> usize {
        self.shared
            .read(|world| world.links.iter().filter(|l| l.open).count())
    }

    pub fn ephemerals(&self) -> Vec<Ephemeral> {
        self.shared.read(|world| world.ephemerals.clone())
    }

    /// Files the bot uploaded and completed (shared somewhere).
    pub fn shared_files(&self) -> Vec<File> {
        self.shared.read(|world| {
            world
                .files
                .iter()
                .filter(|f| f.shared_to.is_some())
                .cloned()
                .collect()
        })
    }

    /// Every file: those the bot announced with `files.getUploadURLExternal` (with the bytes
    /// POSTed for it, if any, and where it was shared, if it was) and those the test attached.
    pub fn files(&self) -> Vec<File> {
        self.shared.read(|world| world.files.clone())
    }

    /// Every POST of bytes to an upload URL, in order, with its place among the Web API calls.
    pub fn uploads(&self) -> Vec<Upload> {
        self.shared.read(|world| world.uploads.clone())
    }

    /// One line per call: method, status, parameters.
    pub fn call_log(&self) -> String {
        self.calls()
            .iter()
            .map(|c| {
                let mut params = c.params.to_string();
                if params.len() > 300 {
                    params.truncate(300);
                }
                format!("{} {:?} {params}", c.method, c.status)
            })
            .collect::<Vec<_>>()
            .join("\n")
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
        mut check: impl FnMut(&FakeSlack) -> Option<T>,
    ) -> T {
        let mut changes = self.shared.subscribe();
        let waiting = async {
            loop {
                changes.borrow_and_update();
                if let Some(value) = check(self) {
                    return value;
                }
                if changes.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
            }
        };
        match tokio::time::timeout(timeout, waiting).await {
            Ok(value) => value,
            Err(_) => panic!(
                "fake-slack: waited {timeout:?} in vain for {what}; calls so far:\n{}",
                self.call_log()
            ),
        }
    }

    /// Waits for a bot message in `channel` whose text satisfies `predicate`.
    pub async fn wait_bot_message(
        &self,
        channel: &str,
        predicate: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> Message {
        let what = format!("a bot message in {channel} with the expected text");
        self.wait_until(&what, timeout, |slack| {
            slack
                .bot_messages(channel)
                .into_iter()
                .find(|m| predicate(&m.text))
        })
        .await
    }

    /// Waits for `n` calls of `method`; returns the first `n`.
    pub async fn wait_calls(&self, method: &str, n: usize, timeout: Duration) -> Vec<Call> {
        let what = format!("{n} {method} calls");
        self.wait_until(&what, timeout, |slack| {
            let mut calls = slack.calls_of(method);
            (calls.len() >= n).then(|| {
                calls.truncate(n);
                calls
            })
        })
        .await
    }

    /// Waits until the envelope `id` is acked.
    pub async fn wait_acked(&self, id: &str, timeout: Duration) -> Envelope {
        let what = format!("the ack of envelope {id}");
        self.wait_until(&what, timeout, |slack| {
            slack.envelope(id).filter(|e| e.acked)
        })
        .await
    }

    /// Waits until `n` Socket Mode connections were opened.
    pub async fn wait_connections(&self, n: usize, timeout: Duration) {
        let what = format!("{n} Socket Mode connections");
        self.wait_until(&what, timeout, |slack| {
            (slack.connections() >= n).then_some(())
        })
        .await;
    }
}
