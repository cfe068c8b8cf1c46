//! Waiting for the bot: each waiter looks at the state after every change (the change counter
//! wakes it; nothing polls on a clock) and fails the test after its timeout with the calls so
//! far.

use std::time::Duration;

use super::{Call, CallbackAnswer, FakeTelegram, SentMessage, StateView};

impl FakeTelegram {
    /// Waits for the bot's `answerCallbackQuery` of the press `callback_query_id`.
    pub async fn wait_press_answer(
        &self,
        callback_query_id: &str,
        timeout: Duration,
    ) -> CallbackAnswer {
        self.wait_until("the press answered", timeout, |view| {
            view.callback_answers()
                .into_iter()
                .find(|a| a.callback_query_id == callback_query_id)
        })
        .await
    }

    /// Waits until `check` yields a value; panics after `timeout`, naming `what`.
    pub async fn wait_until<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut(&StateView<'_>) -> Option<T>,
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
                panic!("fake-telegram: waited {timeout:?} in vain for {what}; calls so far:\n{log}")
            }
        }
    }

    /// A receiver that sees every later change of the state (a request, its answer, a push…);
    /// mark it seen before looking, then await `changed()`.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.subscribe()
    }

    /// Waits until `predicate` holds.
    pub async fn wait_for(
        &self,
        mut predicate: impl FnMut(&StateView<'_>) -> bool,
        timeout: Duration,
    ) {
        self.wait_until("a condition", timeout, |view| predicate(view).then_some(()))
            .await;
    }

    /// Waits for a call of `method`; returns the first.
    pub async fn wait_call(&self, method: &str, timeout: Duration) -> Call {
        let what = format!("a {method} call");
        self.wait_until(&what, timeout, |view| {
            view.calls_of(method).into_iter().next()
        })
        .await
    }

    /// Waits for `n` calls of `method`; returns the first `n`.
    pub async fn wait_calls(&self, method: &str, n: usize, timeout: Duration) -> Vec<Call> {
        let what = format!("{n} {method} calls");
        self.wait_until(&what, timeout, |view| {
            let mut calls = view.calls_of(method);
            (calls.len() >= n).then(|| {
                calls.truncate(n);
                calls
            })
        })
        .await
    }

    /// Waits for a (not deleted) bot message in `chat_id` whose visible text satisfies
    /// `predicate`; returns the first.
    pub async fn wait_message_text(
        &self,
        chat_id: i64,
        predicate: impl Fn(&str) -> bool,
        timeout: Duration,
    ) -> SentMessage {
        let what = format!("a bot message in chat {chat_id} with the expected text");
        self.wait_until(&what, timeout, |view| {
            view.messages(chat_id)
                .into_iter()
                .find(|m| !m.deleted && predicate(&m.text))
        })
        .await
    }

    /// Waits until `n` `getUpdates` requests have arrived.
    pub async fn wait_polls(&self, n: usize, timeout: Duration) {
        let what = format!("{n} getUpdates requests");
        self.wait_until(&what, timeout, |view| (view.polls() >= n).then_some(()))
            .await;
    }

    /// Waits until the bot confirmed every update below `offset`.
    pub async fn wait_confirmed(&self, offset: i64, timeout: Duration) {
        let what = format!("getUpdates confirming offset {offset}");
        self.wait_until(&what, timeout, |view| {
            (view.confirmed_offset() >= offset).then_some(())
        })
        .await;
    }
}
