//! Turns no client asked for: a background process's report (`process_reports.rs`) and a
//! delegation's results re-enter their conversation as a turn like any other, queued after a
//! running one, and the answer goes to the chat the conversation belongs to — a Telegram
//! conversation has nobody attached to read it otherwise. Attached clients see the turn live,
//! as always.

use std::{sync::Arc, time::Duration};

use tokio_util::sync::CancellationToken;

use super::{BusyPolicy, Submitted, Target, TurnEnd, TurnInput, TurnRunner, prepare, submit};
use crate::{
    store,
    tools::messenger::{Destination, Messenger, SendError, Sent},
};

/// How long an answer waits for its chat's platform to connect again.
const PLATFORM_PATIENCE: Duration = Duration::from_secs(3600);

/// A message for a conversation that nobody typed.
pub struct Unasked {
    pub text: String,
    /// Who sent it, as the turn records its client (`process`, `delegate_task`).
    pub from: &'static str,
}

/// Run `unasked` as a turn of `conversation`, then take its answer to the conversation's chat.
pub async fn run_unasked(runner: &Arc<TurnRunner>, conversation: &str, unasked: Unasked) {
    let target = Target {
        session_id: Some(conversation.to_string()),
        ..Target::default()
    };
    let (row, chain) = match prepare(runner, target, &unasked.text).await {
        Ok(prepared) => prepared,
        Err(e) => {
            tracing::warn!(
                session = %conversation, from = unasked.from, error = %e,
                "a message for the conversation could not start a turn"
            );
            return;
        }
    };
    let conversation = row.conversation_id.clone();
    let input = TurnInput {
        text: unasked.text,
        source_client: unasked.from.into(),
        yolo: false,
        // Never steered into a running turn (whose follower may be gone by the time it takes
        // it) nor interrupting one: its own turn, after the running one.
        busy: Some(BusyPolicy::Queue),
        toolsets: Vec::new(),
        context_from: None,
        turn_id: None,
        stop: None,
        delegated: None,
    };
    let Submitted::Turn(handle) = submit(runner, row, chain, input) else {
        return;
    };
    let outcome = match handle.await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(e)) => {
            tracing::warn!(session = %conversation, error = %e, "an unasked turn failed");
            return;
        }
        Err(e) => {
            tracing::warn!(session = %conversation, error = %e, "an unasked turn stopped");
            return;
        }
    };
    let answer = match outcome.end {
        TurnEnd::Finished if !outcome.answer.trim().is_empty() => outcome.answer,
        TurnEnd::Failed { message, .. } => format!("⚠️ {message}"),
        _ => return,
    };
    to_chat(runner, &conversation, &answer).await;
}

/// Send `answer` to the chat `conversation` belongs to, if it is a chat's.
async fn to_chat(runner: &Arc<TurnRunner>, conversation: &str, answer: &str) {
    let wanted = conversation.to_string();
    let place = runner
        .store
        .read(move |conn| store::conversation_place(conn, &wanted))
        .await;
    let place = match place {
        Ok(Some(place)) => place,
        Ok(None) => return,
        Err(e) => {
            tracing::warn!(session = %conversation, error = %e, "cannot read the conversation's chat");
            return;
        }
    };
    let to = Destination {
        platform: place.platform,
        chat: place.chat_id,
        thread_id: place.thread_id,
    };
    let messenger = runner.tool_services.messenger();
    let sent = send_when_connected(
        messenger.as_ref(),
        &to,
        answer,
        PLATFORM_PATIENCE,
        &runner.shutdown,
    )
    .await;
    match sent {
        Ok(sent) => tracing::info!(
            session = %conversation, to = %to, pieces = sent.pieces,
            "an unasked turn's answer went to its chat"
        ),
        Err(e) => tracing::warn!(
            session = %conversation, to = %to, error = %e,
            "an unasked turn's answer did not reach its chat (it stays in the conversation)"
        ),
    }
}

/// Send `text` to `to`; while its platform is not connected, send again each time a platform
/// connects, for at most `patience` (or until the daemon stops).
async fn send_when_connected(
    messenger: &dyn Messenger,
    to: &Destination,
    text: &str,
    patience: Duration,
    shutdown: &CancellationToken,
) -> Result<Sent, SendError> {
    let mut connections = messenger.connections();
    let give_up = tokio::time::Instant::now() + patience;
    loop {
        match messenger.send(to, text, None).await {
            Err(SendError::Unavailable(why)) => {
                let connected = tokio::select! {
                    changed = connections.changed() => changed.is_ok(),
                    () = tokio::time::sleep_until(give_up) => false,
                    () = shutdown.cancelled() => false,
                };
                if !connected {
                    return Err(SendError::Unavailable(why));
                }
            }
            sent => return sent,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::sync::Mutex;

    use async_trait::async_trait;
    use tokio::sync::watch;

    use super::*;
    use crate::tools::messenger::{AlsoStore, PlatformTargets};

    /// A platform that is down until the test connects it.
    struct Flaky {
        up: Mutex<bool>,
        connected: watch::Sender<u64>,
        tries: Mutex<usize>,
    }

    #[async_trait]
    impl Messenger for Flaky {
        fn has_platforms(&self) -> bool {
            true
        }
        async fn targets(&self) -> Vec<PlatformTargets> {
            Vec::new()
        }
        async fn send(
            &self,
            to: &Destination,
            _text: &str,
            _also: Option<AlsoStore>,
        ) -> Result<Sent, SendError> {
            *self.tries.lock().unwrap() += 1;
            if !*self.up.lock().unwrap() {
                return Err(SendError::Unavailable("telegram is not connected".into()));
            }
            Ok(Sent {
                platform: to.platform.clone(),
                chat_id: to.chat.clone(),
                thread_id: String::new(),
                message_id: "7".into(),
                pieces: 1,
                home: false,
            })
        }
        fn connections(&self) -> watch::Receiver<u64> {
            self.connected.subscribe()
        }
    }

    fn chat() -> Destination {
        Destination::parse("telegram:42").unwrap()
    }

    #[tokio::test]
    async fn an_answer_waits_for_its_platform_to_connect() {
        let flaky = Arc::new(Flaky {
            up: Mutex::new(false),
            connected: watch::Sender::new(0),
            tries: Mutex::new(0),
        });
        let shutdown = CancellationToken::new();
        let sending = {
            let flaky = Arc::clone(&flaky);
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                send_when_connected(
                    flaky.as_ref(),
                    &chat(),
                    "done",
                    Duration::from_secs(60),
                    &shutdown,
                )
                .await
            })
        };
        // The first try found it down; it connects.
        while *flaky.tries.lock().unwrap() == 0 {
            tokio::task::yield_now().await;
        }
        *flaky.up.lock().unwrap() = true;
        flaky.connected.send_modify(|n| *n += 1);
        let sent = sending.await.unwrap().unwrap();
        assert_eq!(sent.message_id, "7");
        assert_eq!(*flaky.tries.lock().unwrap(), 2);
    }

    #[tokio::test]
    async fn an_answer_gives_up_after_its_patience_or_with_no_platform() {
        let flaky = Flaky {
            up: Mutex::new(false),
            connected: watch::Sender::new(0),
            tries: Mutex::new(0),
        };
        let shutdown = CancellationToken::new();
        let gave_up =
            send_when_connected(&flaky, &chat(), "x", Duration::from_millis(1), &shutdown).await;
        assert!(matches!(gave_up, Err(SendError::Unavailable(_))));
        let none = crate::tools::messenger::NoPlatforms;
        let never =
            send_when_connected(&none, &chat(), "x", Duration::from_secs(3600), &shutdown).await;
        assert!(matches!(never, Err(SendError::Unavailable(_))));
    }
}
