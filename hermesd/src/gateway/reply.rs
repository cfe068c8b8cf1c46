//! Answering one message: resolve the chat's conversation (a new `telegram` session on first
//! contact), run the turn through the hub like any client, and stream its answer — one message
//! sent early, edited at most every `streaming.edit_interval` while the answer grows, and the
//! final text put into it by an edit recorded in the outbox first (idempotent, so safe to
//! repeat). Typing shows while the turn runs; approvals become buttons; files the user sent are
//! fetched first (`files.rs`).

use std::{sync::Arc, time::Duration};

use hermes_proto::pb::{self, session_event::Kind};
use tokio::time::Instant;

use super::{
    Gateway, Link,
    adapter::{ChatRef, Outgoing},
    chats::chat_of,
    outbox, routing, split,
};
use crate::{
    agent::{self, Submitted, Target, TurnEnd, TurnError, TurnInput, TurnOutcome},
    hub::Received,
    ids,
    store::{self, InboundRow, SessionRow, StoreError, inbound_state, outbox_state},
};

/// How often the typing indicator is renewed (Telegram shows it for about 5 s).
const TYPING_EVERY: Duration = Duration::from_secs(4);

/// The conversation of the chat `key`, made on first contact.
pub async fn conversation(gateway: &Gateway, key: &str) -> Result<Option<SessionRow>, StoreError> {
    let key = key.to_string();
    let routed = gateway
        .runner
        .store
        .read(move |conn| {
            let Some(id) = store::gateway_route(conn, &key)? else {
                return Ok(None);
            };
            match store::resolve_conversation(conn, &id) {
                Ok(row) => Ok(Some(row)),
                Err(StoreError::SessionNotFound(_)) => Ok(None),
                Err(e) => Err(e),
            }
        })
        .await?;
    Ok(routed)
}

/// Route `key` to a new conversation (first contact, or `/new`).
pub async fn new_conversation(
    gateway: &Gateway,
    link: &Link,
    row: &InboundRow,
) -> Result<SessionRow, StoreError> {
    let key = row.session_key.clone();
    let place = place_of(link, row);
    let source = link.platform().to_string();
    gateway
        .runner
        .store
        .write(move |tx| {
            let row = store::insert_session(tx, &store::NewSession::root(source))?;
            store::set_gateway_route(tx, &key, &row.conversation_id)?;
            store::set_route_place(tx, &key, &place)?;
            Ok(row)
        })
        .await
}

/// The chat a message came from, as its route records it.
fn place_of(link: &Link, row: &InboundRow) -> store::ChatPlace {
    let personal = routing::is_personal(&row.session_key, &row.chat_id, &row.thread_id);
    store::ChatPlace {
        platform: link.platform().to_string(),
        chat_id: row.chat_id.clone(),
        thread_id: row.thread_id.clone(),
        // The key is `agent:main:<platform>:<kind>:…` (routing.rs).
        kind: row
            .session_key
            .split(':')
            .nth(3)
            .unwrap_or_default()
            .to_string(),
        name: row.chat_name.clone(),
        // A conversation with one person: theirs; a shared one is nobody's.
        user_id: if personal {
            row.user_id.clone()
        } else {
            String::new()
        },
        user_name: if personal {
            row.user_name.clone()
        } else {
            String::new()
        },
    }
}

/// Answer a stored message from start to delivered answer.
pub async fn answer(gateway: &Arc<Gateway>, link: &Arc<Link>, row: InboundRow) {
    let row = super::threads::open_if_wanted(gateway, link, row).await;
    let fetched = super::files::with_files(gateway, link, &row).await;
    super::voice::echo(gateway, link, &row, &fetched).await;
    run_turn_heard(
        gateway,
        link,
        &row,
        fetched.text,
        fetched.images,
        fetched.voice,
    )
    .await;
}

/// Run a turn of `text` (with `images` attached) for the chat of `row` and deliver its answer.
pub async fn run_turn(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    text: String,
    images: Vec<crate::llm::image_prep::Prepared>,
) {
    run_turn_heard(gateway, link, row, text, images, false).await;
}

/// [`run_turn`] for a message that was spoken (`voice`) or typed.
async fn run_turn_heard(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    mut text: String,
    images: Vec<crate::llm::image_prep::Prepared>,
    voice: bool,
) {
    let chat = chat_of(row);
    let session = match conversation(gateway, &row.session_key).await {
        // A conversation the reset policy says is over starts again; the model is told.
        Ok(Some(session)) => match super::reset::fresh_if_due(gateway, link, row, session).await {
            Ok((session, reset)) => {
                if let Some(reason) = reset {
                    text = format!("{}\n\n{text}", reason.note());
                }
                Ok(session)
            }
            Err(e) => Err(e),
        },
        Ok(None) => new_conversation(gateway, link, row).await,
        Err(e) => Err(e),
    };
    let session = match session {
        Ok(session) => session,
        Err(e) => {
            return fail(
                gateway,
                link,
                row,
                &format!("the conversation is unavailable: {e}"),
            )
            .await;
        }
    };
    let runner = &gateway.runner;
    let target = Target {
        session_id: Some(session.id.clone()),
        ..Target::default()
    };
    let (session, chain, text) =
        match agent::prepare_with_loaded(runner, target, &text, images).await {
            Ok(prepared) => prepared,
            Err(e) => return fail(gateway, link, row, &e.to_string()).await,
        };
    let (id, conversation) = (row.id, session.conversation_id.clone());
    let (key, place) = (row.session_key.clone(), place_of(link, row));
    let marked = runner
        .store
        .write(move |tx| {
            // Routes made before chats were recorded learn theirs here.
            store::set_route_place(tx, &key, &place)?;
            store::set_inbound_state(tx, id, inbound_state::RUNNING, Some(&conversation))
        })
        .await;
    if let Err(e) = marked {
        return fail(
            gateway,
            link,
            row,
            &format!("the message could not be stored: {e}"),
        )
        .await;
    }
    let live = runner.hub.load(&session);
    let _interactive = live.interactive_guard();
    let (events, _) = live.subscribe();
    let turn_id = ids::short_id("turn");
    let input = TurnInput {
        text,
        source_client: link.platform().into(),
        yolo: false,
        // The chat's busy policy was applied as the message was queued (chats.rs); here it
        // waits its turn, so its answer is always followed to this chat.
        busy: Some(agent::BusyPolicy::Queue),
        toolsets: Vec::new(),
        context_from: None,
        turn_id: Some(turn_id.clone()),
        stop: None,
        delegated: None,
    };
    let conversation = session.conversation_id.clone();
    let submitted = agent::submit(runner, session, chain, input);
    let mut spoken = None;
    let mut files = Vec::new();
    let ended = match submitted {
        Submitted::Steered => Ended::Steered,
        Submitted::Turn(handle) => {
            let mut stream = Stream::new(gateway, link, row, chat.clone());
            let ended = stream.follow(events, &turn_id, handle).await;
            files = std::mem::take(&mut stream.files);
            spoken = stream.answered.take().map(|text| (text, stream.tts_calls));
            ended
        }
    };
    if !files.is_empty() {
        super::media::send(gateway, link, &chat, row.id, &files).await;
    }
    if let Some((text, tts_calls)) = spoken {
        let turn = super::voice::Turn {
            conversation,
            answer: text,
            tts_calls,
            voice_input: voice,
        };
        super::voice::after_turn(gateway, link, row, &chat, turn).await;
    }
    drop(_interactive);
    runner.hub.release(live);
    let id = row.id;
    let state = match ended {
        // The daemon stopped it: the restart tells the chat (once) and offers /retry.
        Ended::Stopping => return,
        _ => inbound_state::DONE,
    };
    if let Err(e) = runner
        .store
        .write(move |tx| store::set_inbound_state(tx, id, state, None))
        .await
    {
        tracing::error!(error = %e, "gateway: cannot mark a message answered");
    }
}

async fn fail(gateway: &Arc<Gateway>, link: &Arc<Link>, row: &InboundRow, why: &str) {
    tracing::warn!(chat = %row.chat_id, error = %why, "gateway: a message could not run");
    let id = row.id;
    let _ = gateway
        .runner
        .store
        .write(move |tx| store::set_inbound_state(tx, id, inbound_state::DONE, None))
        .await;
    outbox::send_now(
        gateway,
        link,
        &chat_of(row),
        Some(row.id),
        &format!("⚠️ {why}"),
    )
    .await;
}

/// How a followed turn ended.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    Answered,
    Steered,
    /// Interrupted because the daemon is stopping.
    Stopping,
}

/// The streamed answer of one turn.
struct Stream<'a> {
    gateway: &'a Arc<Gateway>,
    link: &'a Arc<Link>,
    row: &'a InboundRow,
    chat: ChatRef,
    text: String,
    /// The streamed message: its outbox row and platform id, once sent.
    message: Option<(i64, String)>,
    /// Whether a first send is under way or failed (no second early send).
    tried: bool,
    shown: String,
    next_edit: Instant,
    interval: Duration,
    /// The final answer, once the turn finished with one (not a failure or a stop).
    answered: Option<String>,
    /// The `text_to_speech` calls of the turn, whose audio goes to the chat.
    tts_calls: Vec<String>,
    /// The files the final answer named with `MEDIA:` tags (`media.rs`).
    files: Vec<std::path::PathBuf>,
}

impl<'a> Stream<'a> {
    fn new(
        gateway: &'a Arc<Gateway>,
        link: &'a Arc<Link>,
        row: &'a InboundRow,
        chat: ChatRef,
    ) -> Self {
        let interval = gateway.runner.config().settings.gateway.edit_interval;
        Self {
            gateway,
            link,
            row,
            chat,
            text: String::new(),
            message: None,
            tried: false,
            shown: String::new(),
            next_edit: Instant::now(),
            interval,
            answered: None,
            tts_calls: Vec::new(),
            files: Vec::new(),
        }
    }

    /// Follow the events of `turn_id` until it ends, streaming its text. The turn's own result
    /// ends it too — a turn that could not start emits no events, and a follower that fell
    /// behind stops reading them — and then gives the final text.
    async fn follow(
        &mut self,
        mut events: crate::hub::Subscription,
        turn_id: &str,
        mut turn: tokio::task::JoinHandle<Result<TurnOutcome, TurnError>>,
    ) -> Ended {
        let mut typing = tokio::time::interval(TYPING_EVERY);
        let mut reading = true;
        loop {
            let pending_edit = self.message.is_some() && self.shown != self.text;
            let edit_at = self.next_edit;
            tokio::select! {
                received = events.recv(), if reading => match received {
                    Received::Event(event) if event.turn_id == turn_id => {
                        if let Some(ended) = self.on_event(&event).await {
                            return ended;
                        }
                    }
                    Received::Event(_) => {}
                    Received::Lagged | Received::Closed => reading = false,
                },
                joined = &mut turn => return self.on_result(joined).await,
                () = tokio::time::sleep_until(edit_at), if pending_edit => self.edit_partial().await,
                _ = typing.tick() => {
                    if let Err(e) = self.link.adapter.typing(&self.chat).await {
                        tracing::debug!(error = %e, "gateway: typing not shown");
                    }
                }
            }
        }
    }

    /// The turn ended before its last event was read: finish from its result.
    async fn on_result(
        &mut self,
        joined: Result<Result<TurnOutcome, TurnError>, tokio::task::JoinError>,
    ) -> Ended {
        let text = match joined {
            Ok(Ok(outcome)) => match outcome.end {
                TurnEnd::Finished if outcome.answer.trim().is_empty() => "(no answer)".to_string(),
                TurnEnd::Finished => {
                    self.answered = Some(outcome.answer.clone());
                    outcome.answer
                }
                TurnEnd::Interrupted if self.gateway.runner.hub.is_stopping() => {
                    return Ended::Stopping;
                }
                TurnEnd::Interrupted => format!("{}\n\n(stopped)", outcome.answer.trim_end()),
                TurnEnd::Failed { message, hint, .. } => format!("⚠️ {message}\n{hint}"),
            },
            Ok(Err(TurnError::Stopping)) => return Ended::Stopping,
            Ok(Err(e)) => format!("⚠️ {e}"),
            Err(e) => format!("⚠️ the turn stopped: {e}"),
        };
        self.finish(text.trim()).await;
        Ended::Answered
    }

    async fn on_event(&mut self, event: &pb::SessionEvent) -> Option<Ended> {
        match event.kind.as_ref()? {
            Kind::TextDelta(delta) => {
                self.text.push_str(&delta.text);
                if !self.tried {
                    self.send_first().await;
                }
            }
            Kind::AssistantMessage(_) if !self.text.is_empty() && !self.text.ends_with("\n\n") => {
                self.text.push_str("\n\n");
            }
            Kind::ApprovalRequested(asked) => {
                super::approvals::ask(self.gateway, self.link, self.row, &self.chat, asked).await;
            }
            Kind::ToolStarted(started) if started.name == "text_to_speech" => {
                self.tts_calls.push(started.call_id.clone());
            }
            Kind::TurnFinished(done) => {
                let text = if done.final_text.trim().is_empty() {
                    "(no answer)".to_string()
                } else {
                    self.answered = Some(done.final_text.clone());
                    done.final_text.clone()
                };
                self.finish(&text).await;
                return Some(Ended::Answered);
            }
            Kind::TurnInterrupted(why) => {
                if why.by == crate::hub::STOPPING {
                    return Some(Ended::Stopping);
                }
                let text = format!("{}\n\n(stopped)", self.text.trim_end());
                self.finish(text.trim()).await;
                return Some(Ended::Answered);
            }
            Kind::TurnFailed(failed) => {
                let mut text = format!("⚠️ {}", failed.message);
                if !failed.hint.is_empty() {
                    text.push_str(&format!("\n{}", failed.hint));
                }
                self.finish(&text).await;
                return Some(Ended::Answered);
            }
            _ => {}
        }
        None
    }

    /// What the streamed message shows of the text so far (the first piece, marked as going on).
    fn visible(&self) -> String {
        let caps = self.link.adapter.capabilities();
        let (text, _) = super::media::take_tags(&self.text);
        let pieces = split::split(&text, caps.max_len.saturating_sub(4), caps.measure);
        let mut first = pieces.into_iter().next().unwrap_or_default();
        first.push_str(" …");
        first
    }

    async fn send_first(&mut self) {
        self.tried = true;
        let shown = self.visible();
        let recorded = outbox::record(
            self.gateway,
            self.link,
            &self.chat,
            Some(self.row.id),
            vec![shown.clone()],
        )
        .await;
        let Ok(Some(row)) = recorded.map(|rows| rows.into_iter().next()) else {
            return;
        };
        outbox::mark(self.gateway, row.id, outbox_state::ATTEMPTED, None, None).await;
        let message = Outgoing::text(shown.clone());
        match self.link.adapter.send(&self.chat, &message).await {
            Ok(message_id) => {
                self.link.status.sent();
                outbox::mark(
                    self.gateway,
                    row.id,
                    outbox_state::STREAMING,
                    None,
                    Some(message_id.clone()),
                )
                .await;
                self.message = Some((row.id, message_id));
                self.shown = self.text.clone();
                self.next_edit = Instant::now() + self.interval;
            }
            Err(e) => {
                // The final answer goes as a message of its own.
                tracing::debug!(error = %e, "gateway: the streamed message was not sent");
                outbox::mark(self.gateway, row.id, outbox_state::DONE, None, None).await;
            }
        }
    }

    async fn edit_partial(&mut self) {
        let Some((_, message_id)) = &self.message else {
            return;
        };
        let message = Outgoing::text(self.visible());
        match self
            .link
            .adapter
            .edit(&self.chat, message_id, &message)
            .await
        {
            Ok(()) => self.link.status.sent(),
            Err(super::PlatformError::RateLimited(wait)) => {
                self.next_edit = Instant::now() + wait;
                return;
            }
            Err(e) => tracing::debug!(error = %e, "gateway: a streamed edit failed"),
        }
        self.shown = self.text.clone();
        self.next_edit = Instant::now() + self.interval;
    }

    /// Record the final text (split at the platform's limit) and mark the message answered,
    /// in one transaction — from here a restart delivers it rather than calling the turn cut —
    /// then deliver it: the first piece into the streamed message, the rest as messages of
    /// their own.
    async fn finish(&mut self, text: &str) {
        let (mut text, files) = super::media::take_tags(text);
        if text.is_empty() && !files.is_empty() {
            text = "📎".to_string();
        }
        self.files = files;
        let caps = self.link.adapter.capabilities();
        let pieces = split::split(&text, caps.max_len, caps.measure);
        let streamed = self.message.clone();
        let (platform, chat, inbound) = (self.link.platform(), self.chat.clone(), self.row.id);
        let recorded = self
            .gateway
            .runner
            .store
            .write(move |tx| {
                let mut rows = Vec::new();
                for (index, piece) in pieces.into_iter().enumerate() {
                    let mut row = store::OutboxRow {
                        id: 0,
                        inbound_id: Some(inbound),
                        platform: platform.to_string(),
                        chat_id: chat.chat_id.clone(),
                        thread_id: chat.thread_id.clone(),
                        text: piece,
                        state: outbox_state::PENDING.to_string(),
                        message_id: None,
                    };
                    match (&streamed, index) {
                        (Some((id, message_id)), 0) => {
                            store::outbox_set(tx, *id, outbox_state::FINAL, Some(&row.text), None)?;
                            row.id = *id;
                            row.state = outbox_state::FINAL.to_string();
                            row.message_id = Some(message_id.clone());
                        }
                        _ => {
                            row.id = store::outbox_add(
                                tx,
                                platform,
                                Some(inbound),
                                &chat.chat_id,
                                &chat.thread_id,
                                &row.text,
                                outbox_state::PENDING,
                            )?;
                        }
                    }
                    rows.push(row);
                }
                store::set_inbound_state(tx, inbound, inbound_state::DONE, None)?;
                Ok(rows)
            })
            .await;
        let rows = match recorded {
            Ok(rows) => rows,
            Err(e) => {
                tracing::error!(error = %e, "gateway: the answer could not be recorded");
                return;
            }
        };
        for row in rows {
            outbox::deliver(self.gateway, self.link, row).await;
        }
    }
}
