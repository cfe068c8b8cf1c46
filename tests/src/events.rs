//! Reading a session's events through `Sessions.Attach`, as any client does.

use hermes_proto::pb::{self, client_frame, sessions_client::SessionsClient};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// A short name for an event kind, for assertions.
pub fn kind_name(event: &pb::SessionEvent) -> &'static str {
    event
        .kind
        .as_ref()
        .map_or("none", hermes_proto::events::kind_name)
}

/// An attached client: send frames, read events.
pub struct Attached {
    pub frames: mpsc::Sender<pb::ClientFrame>,
    pub events: tonic::Streaming<pb::SessionEvent>,
}

impl Attached {
    /// Attach to `session_id` after `since_seq`; `read_only` clients cannot answer.
    pub async fn open(
        socket: &std::path::Path,
        session_id: &str,
        since_seq: u64,
        read_only: bool,
    ) -> Self {
        let channel = hermes_proto::client::connect(socket).await.unwrap();
        let (frames, outbound) = mpsc::channel(16);
        frames
            .send(pb::ClientFrame {
                kind: Some(client_frame::Kind::Hello(pb::Hello {
                    session_id: session_id.into(),
                    since_seq,
                    read_only,
                    client_name: "test".into(),
                    ..pb::Hello::default()
                })),
            })
            .await
            .unwrap();
        let events = SessionsClient::new(channel)
            .attach(ReceiverStream::new(outbound))
            .await
            .unwrap()
            .into_inner();
        Self { frames, events }
    }

    pub async fn send(&self, kind: client_frame::Kind) {
        self.frames
            .send(pb::ClientFrame { kind: Some(kind) })
            .await
            .unwrap();
    }

    /// The next event, failing the test after 20 s.
    pub async fn next(&mut self) -> pb::SessionEvent {
        tokio::time::timeout(std::time::Duration::from_secs(20), self.events.message())
            .await
            .expect("an event within 20 s")
            .unwrap()
            .expect("the stream is open")
    }

    /// Events until one of kind `name` (inclusive).
    pub async fn until(&mut self, name: &str) -> Vec<pb::SessionEvent> {
        let mut seen: Vec<pb::SessionEvent> = Vec::new();
        loop {
            let event =
                tokio::time::timeout(std::time::Duration::from_secs(20), self.events.message())
                    .await
                    .unwrap_or_else(|_| {
                        let kinds: Vec<&str> = seen.iter().map(kind_name).collect();
                        panic!("no `{name}` within 20 s; saw {kinds:?}")
                    })
                    .unwrap()
                    .expect("the stream is open");
            let done = kind_name(&event) == name;
            seen.push(event);
            if done {
                return seen;
            }
        }
    }
}

/// A new session (source `cli`) with this working directory.
pub async fn create_session(socket: &std::path::Path, cwd: &std::path::Path) -> pb::Session {
    let channel = hermes_proto::client::connect(socket).await.unwrap();
    SessionsClient::new(channel)
        .create(pb::CreateSessionRequest {
            source: "cli".into(),
            cwd: cwd.display().to_string(),
            ..pb::CreateSessionRequest::default()
        })
        .await
        .unwrap()
        .into_inner()
        .session
        .unwrap()
}

/// Every stored event of a session (the replay part of an attach).
pub async fn stored(socket: &std::path::Path, session_id: &str) -> Vec<pb::SessionEvent> {
    let mut attached = Attached::open(socket, session_id, 0, true).await;
    let mut events = attached.until("replay_done").await;
    events.pop();
    events
}
