//! Reaching the daemon: connect, start it on demand, check that it speaks our protocol.

use hermes_proto::{
    client::{self, protocol_mismatch},
    pb::{
        self, cron_client::CronClient, daemon_client::DaemonClient, memory_client::MemoryClient,
        models_client::ModelsClient, sessions_client::SessionsClient, skills_client::SkillsClient,
    },
};
use tonic::transport::Channel;

use crate::{context::Context, daemon_process, error::CliError};

/// A connected daemon and what it said about itself.
#[derive(Debug, Clone)]
pub struct Daemon {
    pub channel: Channel,
    pub status: pb::GetStatusResponse,
}

impl Daemon {
    pub fn daemon(&self) -> DaemonClient<Channel> {
        DaemonClient::new(self.channel.clone())
    }

    pub fn sessions(&self) -> SessionsClient<Channel> {
        SessionsClient::new(self.channel.clone())
    }

    pub fn models(&self) -> ModelsClient<Channel> {
        ModelsClient::new(self.channel.clone())
    }

    pub fn memory(&self) -> MemoryClient<Channel> {
        MemoryClient::new(self.channel.clone())
    }

    pub fn gateway(&self) -> hermes_proto::pb::gateway_client::GatewayClient<Channel> {
        hermes_proto::pb::gateway_client::GatewayClient::new(self.channel.clone())
    }

    pub fn auth(&self) -> hermes_proto::pb::auth_client::AuthClient<Channel> {
        hermes_proto::pb::auth_client::AuthClient::new(self.channel.clone())
    }

    pub fn mcp(&self) -> hermes_proto::pb::mcp_client::McpClient<Channel> {
        hermes_proto::pb::mcp_client::McpClient::new(self.channel.clone())
    }

    pub fn skills(&self) -> SkillsClient<Channel> {
        SkillsClient::new(self.channel.clone())
    }

    /// The Cron service. No deadline is set: `RunNow` with `wait` answers only when the run ends.
    /// The Cron client. A list of every job can pass gRPC's default 4 MiB (about 12,000 jobs):
    /// it may take up to 256 MiB.
    pub fn cron(&self) -> CronClient<Channel> {
        CronClient::new(self.channel.clone()).max_decoding_message_size(256 << 20)
    }

    /// Attach to a session: send `hello` first, then return the sender for later frames and the
    /// event stream (the replay, then live events).
    pub async fn attach(
        &self,
        hello: pb::Hello,
    ) -> Result<
        (
            tokio::sync::mpsc::Sender<pb::ClientFrame>,
            tonic::Streaming<pb::SessionEvent>,
        ),
        CliError,
    > {
        let (frames, outbound) = tokio::sync::mpsc::channel(16);
        frames
            .send(pb::ClientFrame {
                kind: Some(pb::client_frame::Kind::Hello(hello)),
            })
            .await
            .map_err(|_| CliError::new("the connection to hermesd closed"))?;
        let events = self
            .sessions()
            .attach(tokio_stream::wrappers::ReceiverStream::new(outbound))
            .await?
            .into_inner();
        Ok((frames, events))
    }
}

/// Connect without starting anything; `Ok(None)` when no daemon runs.
pub async fn probe(ctx: &Context) -> Result<Option<Daemon>, CliError> {
    let channel = match client::connect(&ctx.socket).await {
        Ok(channel) => channel,
        Err(e) if e.is_not_running() => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let status = DaemonClient::new(channel.clone())
        .get_status(pb::GetStatusRequest {})
        .await?
        .into_inner();
    Ok(Some(Daemon { channel, status }))
}

/// Connect, starting the daemon when none runs, and refuse a daemon of another protocol.
pub async fn connect(ctx: &Context) -> Result<Daemon, CliError> {
    let daemon = match probe(ctx).await? {
        Some(daemon) => daemon,
        None => {
            daemon_process::start(ctx).await?;
            probe(ctx).await?.ok_or_else(|| {
                CliError::new(format!(
                    "hermesd started but does not answer on {}",
                    ctx.socket.display()
                ))
            })?
        }
    };
    if let Some(message) = protocol_mismatch(&daemon.status) {
        return Err(CliError::new(message));
    }
    Ok(daemon)
}
