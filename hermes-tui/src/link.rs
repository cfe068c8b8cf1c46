//! The TUI's side of the daemon socket: carries out [`Effect`]s and turns what the daemon says
//! into [`Msg`]s. One attachment at a time (switching sessions drops the old one, which keeps
//! running in the daemon); a lost attachment is reported, and the next attach is retried with
//! backoff until the daemon is back. The session list is polled every two seconds.

mod commands;

use std::{path::PathBuf, time::Duration};

use hermes_proto::{
    PROTOCOL_VERSION,
    client::describe_status,
    pb::{
        self, gateway_client::GatewayClient, models_client::ModelsClient,
        sessions_client::SessionsClient,
    },
};
use tokio::{sync::mpsc, task::JoinHandle};
use tonic::transport::Channel;

use crate::app::{Effect, Msg, sessions::LIST_LIMIT};

pub const CLIENT_NAME: &str = "hermes-tui";
/// How often the session list is read again.
const LIST_EVERY: Duration = Duration::from_secs(2);
/// The longest wait between two attach attempts while the daemon is away.
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Frames waiting for the attachment (answers, input); a full queue waits.
const FRAME_QUEUE: usize = 32;

/// The channel to the daemon and the tasks working on it.
pub struct Link {
    channel: Channel,
    cwd: String,
    msgs: mpsc::Sender<Msg>,
    attachment: Option<(mpsc::Sender<pb::ClientFrame>, JoinHandle<()>)>,
    poller: JoinHandle<()>,
}

impl Drop for Link {
    fn drop(&mut self) {
        self.poller.abort();
        if let Some((_, task)) = self.attachment.take() {
            task.abort();
        }
    }
}

impl Link {
    pub fn start(channel: Channel, cwd: PathBuf, msgs: mpsc::Sender<Msg>) -> Self {
        let poller = tokio::spawn(poll(channel.clone(), msgs.clone()));
        Self {
            channel,
            cwd: cwd.display().to_string(),
            msgs,
            attachment: None,
            poller,
        }
    }

    fn sessions(&self) -> SessionsClient<Channel> {
        SessionsClient::new(self.channel.clone())
    }

    /// Carry out one effect; answers come back as messages.
    pub async fn run(&mut self, effect: Effect) {
        match effect {
            Effect::Attach {
                session_id,
                since_seq,
                last_messages,
            } => self.attach(session_id, since_seq, last_messages),
            Effect::Frame(kind) => {
                if let Some((frames, _)) = &self.attachment {
                    let _ = frames.send(pb::ClientFrame { kind: Some(kind) }).await;
                }
            }
            Effect::CreateSession => {
                let mut sessions = self.sessions();
                let msgs = self.msgs.clone();
                let cwd = self.cwd.clone();
                tokio::spawn(async move {
                    let reply = sessions
                        .create(pb::CreateSessionRequest {
                            source: "tui".into(),
                            cwd,
                            ..pb::CreateSessionRequest::default()
                        })
                        .await;
                    let msg = match reply.map(|r| r.into_inner().session) {
                        Ok(Some(session)) => Msg::Created(session),
                        Ok(None) => Msg::Failed("hermesd returned no session".into()),
                        Err(status) => Msg::Failed(describe_status(&status)),
                    };
                    let _ = msgs.send(msg).await;
                });
            }
            Effect::Search(query) => {
                let mut sessions = self.sessions();
                let msgs = self.msgs.clone();
                tokio::spawn(async move {
                    let reply = sessions
                        .search(pb::SearchSessionsRequest {
                            query: query.clone(),
                            limit: 50,
                            ..pb::SearchSessionsRequest::default()
                        })
                        .await;
                    let msg = match reply {
                        Ok(r) => Msg::SearchResults {
                            query,
                            hits: r.into_inner().hits,
                        },
                        Err(status) => Msg::Failed(describe_status(&status)),
                    };
                    let _ = msgs.send(msg).await;
                });
            }
            Effect::Command {
                session_id,
                name,
                args,
            } => {
                let channel = self.channel.clone();
                let msgs = self.msgs.clone();
                tokio::spawn(async move {
                    let reply = commands::run(channel, &session_id, &name, &args).await;
                    for msg in reply {
                        let _ = msgs.send(msg).await;
                    }
                });
            }
            Effect::FetchContext {
                session_id,
                message_id,
            } => {
                let mut sessions = self.sessions();
                let msgs = self.msgs.clone();
                tokio::spawn(async move {
                    let reply = sessions
                        .history(pb::SessionHistoryRequest {
                            id: session_id.clone(),
                            after_message_id: message_id.saturating_sub(1),
                            limit: 1,
                        })
                        .await;
                    if let Ok(reply) = reply
                        && let Some(m) = reply.into_inner().messages.first()
                        && m.id == message_id
                        && m.input_tokens > 0
                    {
                        let _ = msgs
                            .send(Msg::ContextTokens {
                                session_id,
                                tokens: m.input_tokens,
                            })
                            .await;
                    }
                });
            }
            Effect::Quit => self.detach(),
        }
    }

    /// Leave the current session (it goes on in the daemon).
    fn detach(&mut self) {
        if let Some((frames, task)) = self.attachment.take() {
            let _ = frames.try_send(pb::ClientFrame {
                kind: Some(pb::client_frame::Kind::Detach(pb::Detach {})),
            });
            task.abort();
        }
    }

    fn attach(&mut self, session_id: String, since_seq: u64, last_messages: u32) {
        self.detach();
        let (frames, pending) = mpsc::channel(FRAME_QUEUE);
        let hello = pb::Hello {
            session_id,
            since_seq,
            last_messages,
            read_only: false,
            client_name: CLIENT_NAME.into(),
            protocol_version: PROTOCOL_VERSION,
        };
        let task = tokio::spawn(attachment(
            self.channel.clone(),
            hello,
            pending,
            self.msgs.clone(),
        ));
        self.attachment = Some((frames, task));
    }
}

/// One attachment: attach (retrying with backoff while the daemon is away), forward events and
/// frames until the stream ends, then report it lost.
async fn attachment(
    channel: Channel,
    hello: pb::Hello,
    mut pending: mpsc::Receiver<pb::ClientFrame>,
    msgs: mpsc::Sender<Msg>,
) {
    let session_id = hello.session_id.clone();
    let mut backoff = Duration::from_millis(100);
    let (outbound, mut events) = loop {
        let (outbound, frames) = mpsc::channel(FRAME_QUEUE);
        let first = pb::ClientFrame {
            kind: Some(pb::client_frame::Kind::Hello(hello.clone())),
        };
        if outbound.send(first).await.is_err() {
            return;
        }
        let stream = tokio_stream::wrappers::ReceiverStream::new(frames);
        match SessionsClient::new(channel.clone()).attach(stream).await {
            Ok(reply) => break (outbound, reply.into_inner()),
            Err(status) if status.code() == tonic::Code::NotFound => {
                let _ = msgs.send(Msg::Failed(describe_status(&status))).await;
                return;
            }
            Err(status) => {
                tracing::debug!(session = %session_id, "attach failed: {status}");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    };
    if msgs
        .send(Msg::Attached {
            session_id: session_id.clone(),
        })
        .await
        .is_err()
    {
        return;
    }
    let reason = loop {
        tokio::select! {
            event = events.message() => match event {
                Ok(Some(event)) => {
                    if msgs.send(Msg::Event(event)).await.is_err() {
                        return;
                    }
                }
                Ok(None) => break "the daemon ended the stream".to_string(),
                Err(status) => break describe_status(&status),
            },
            Some(frame) = pending.recv() => {
                if outbound.send(frame).await.is_err() {
                    break "the attachment closed".to_string();
                }
            }
        }
    };
    tracing::info!(session = %session_id, "attachment lost: {reason}");
    let _ = msgs.send(Msg::LinkLost { session_id, reason }).await;
}

/// Every two seconds: the session list and the clock; at the start and then every minute, the
/// commands on offer and the default model.
async fn poll(channel: Channel, msgs: mpsc::Sender<Msg>) {
    let mut sessions = SessionsClient::new(channel.clone());
    let mut gateway = GatewayClient::new(channel.clone());
    let mut models = ModelsClient::new(channel);
    let mut ticks = tokio::time::interval(LIST_EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut round: u64 = 0;
    loop {
        ticks.tick().await;
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        if msgs.send(Msg::Tick { now_unix }).await.is_err() {
            return;
        }
        let listed = sessions
            .list(pb::ListSessionsRequest {
                limit: LIST_LIMIT,
                ..pb::ListSessionsRequest::default()
            })
            .await;
        if let Ok(reply) = listed {
            let _ = msgs.send(Msg::Sessions(reply.into_inner().sessions)).await;
        }
        if round.is_multiple_of(30) {
            if let Ok(reply) = gateway.list_commands(pb::ListCommandsRequest {}).await {
                let _ = msgs.send(Msg::Commands(reply.into_inner().commands)).await;
            }
            if let Ok(reply) = models.get_default(pb::GetDefaultModelRequest {}).await {
                let info = reply.into_inner().model.unwrap_or_default();
                let r = info.r#ref.unwrap_or_default();
                let model = if r.model.is_empty() {
                    String::new()
                } else {
                    format!("{}:{}", r.provider, r.model)
                };
                let _ = msgs
                    .send(Msg::Model {
                        model,
                        context_length: info.context_length,
                    })
                    .await;
            }
        }
        round += 1;
    }
}
