//! A fake Slack for end-to-end tests: the Web API (`POST /api/{method}`, Slack's envelope and
//! error codes, tier limits and scriptable 429s with `Retry-After`, the external upload flow and
//! private file downloads), Socket Mode (a websocket handed out by `apps.connections.open`:
//! `hello`, envelopes for `events_api`, `interactive` and `slash_commands`, acks expected,
//! unacked envelopes redelivered on the next connection with `retry_attempt`, `disconnect`
//! envelopes, a connection that goes silent) and a signed Events API client that POSTs to the
//! daemon. The test pushes messages, presses buttons, runs slash commands, inspects what the
//! bot did and waits on it (event-driven) through a [`FakeSlack`] handle.
//!
//! Where it knowingly differs: every channel exists and the bot is in all of them; message
//! events carry empty `blocks`; `disconnect` does not close the old connection by itself;
//! envelopes are redelivered only on a new connection, not after a timeout on the same one.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod http;
mod methods;
mod payloads;
mod push;
mod socket;
mod state;
mod view;
mod web;

#[cfg(test)]
mod selftest;

pub use http::{Answer, Signing};
pub use payloads::channel_type;
pub use push::{Pushed, UserMessage};
pub use state::{Call, Envelope, Ephemeral, Fault, File, Message, Team, Upload};

use std::sync::Arc;

use state::{Shared, World};

/// A Socket Mode app token no other fake of this machine uses (the daemon's lock on it is
/// machine-wide).
fn unique_app_token() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("xapp-1-A0FAKEAPP-{}{n:03}-fakeapptoken", std::process::id())
}

/// A running fake. Clones share it; it stops when the last clone is dropped.
#[derive(Clone)]
pub struct FakeSlack {
    base_url: String,
    shared: Arc<Shared>,
    _running: Arc<Running>,
}

struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.stop.cancel();
    }
}

impl FakeSlack {
    /// Starts the Web API and Socket Mode on two free loopback ports, with one workspace
    /// (`T0001`, bot user `U0BOT1`) whose bot token is `xoxb-T0001-…`.
    pub async fn start() -> Self {
        let api = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap_or_else(|e| panic!("fake-slack: bind: {e}"));
        let socket = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap_or_else(|e| panic!("fake-slack: bind: {e}"));
        let base_url = format!(
            "http://{}",
            api.local_addr()
                .unwrap_or_else(|e| panic!("fake-slack: {e}"))
        );
        let socket_url = format!(
            "ws://{}",
            socket
                .local_addr()
                .unwrap_or_else(|e| panic!("fake-slack: {e}"))
        );
        let world = World {
            app_token: unique_app_token(),
            echo_bot_messages: true,
            base_url: base_url.clone(),
            socket_url,
            ..World::default()
        };
        let shared = Arc::new(Shared::new(world));
        let router = web::router(shared.clone());
        let stop = shared.stop.clone();
        tokio::spawn(async move {
            let serve = axum::serve(api, router).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(error) = serve.await {
                eprintln!("fake-slack: server error: {error}");
            }
        });
        tokio::spawn(socket::serve(socket, shared.clone()));
        let slack = Self {
            base_url,
            _running: Arc::new(Running(shared.clone())),
            shared,
        };
        slack.add_team("T0001", "fakeworkspace");
        slack
    }

    /// `http://127.0.0.1:PORT/api`, the value of `platforms.slack.extra.api_base`.
    pub fn api_base(&self) -> String {
        format!("{}/api", self.base_url)
    }

    /// The Socket Mode app token.
    pub fn app_token(&self) -> String {
        self.shared.read(|world| world.app_token.clone())
    }

    /// Installs the app in another workspace `id`; returns it (bot user `U0BOT<n>`).
    pub fn add_team(&self, id: &str, name: &str) -> Team {
        self.shared.write(|world| {
            let n = world.teams.len() + 1;
            let team = Team {
                id: id.to_owned(),
                name: name.to_owned(),
                bot_token: format!("xoxb-{id}-{}-fakebottoken", std::process::id()),
                bot_user_id: format!("U0BOT{n}"),
                bot_id: format!("B0BOT{n}"),
            };
            world.teams.push(team.clone());
            team
        })
    }

    /// The workspace `id`.
    pub fn team(&self, id: &str) -> Team {
        self.shared
            .read(|world| world.team(id).cloned())
            .unwrap_or_else(|| panic!("fake-slack: no workspace {id}"))
    }

    /// The first workspace.
    pub fn first_team(&self) -> Team {
        self.shared
            .read(|world| world.teams.first().cloned())
            .unwrap_or_else(|| panic!("fake-slack: no workspace"))
    }

    /// A user `users.info` knows, with a display name.
    pub fn add_user(&self, id: &str, name: &str) {
        self.shared
            .write(|world| world.users.insert(id.to_owned(), name.to_owned()));
    }

    /// Names the `channel_type` of `channel` (`im`, `mpim`, `channel`, `group`); otherwise it
    /// follows the id's first letter.
    pub fn set_channel_kind(&self, channel: &str, kind: &str) {
        self.shared.write(|world| {
            world
                .channel_kinds
                .insert(channel.to_owned(), kind.to_owned())
        });
    }

    /// Makes the next call of `method` suffer `fault`; faults queue up in order.
    pub fn fail_next(&self, method: &str, fault: Fault) {
        self.shared.write(|world| {
            world
                .faults
                .entry(method.to_owned())
                .or_default()
                .push_back(fault);
        });
    }

    /// Turns Slack's per-method tier limits on (off by default).
    pub fn enforce_tiers(&self, on: bool) {
        self.shared.write(|world| world.enforce_tiers = on);
    }

    /// Whether the bot's own posts come back as `message` events (on by default, as on Slack).
    pub fn echo_bot_messages(&self, on: bool) {
        self.shared.write(|world| world.echo_bot_messages = on);
    }

    /// Sends a `disconnect` envelope (`reason`: `warning`, `refresh_requested`,
    /// `link_disabled`) on the live connection; nothing more is sent on it.
    pub fn disconnect(&self, reason: &str) {
        self.shared.write(|world| {
            let live = world.live_link();
            if let Some(link) = live.and_then(|id| world.link_mut(id)) {
                link.disconnect = Some(reason.to_owned());
            }
        });
    }

    /// Slack's redelivery of the envelope `id` as if its ack never came: it is sent again on
    /// the live connection, with `retry_attempt` one higher.
    pub fn redeliver(&self, id: &str) {
        self.shared.write(|world| {
            if let Some(envelope) = world.envelopes.iter_mut().find(|e| e.id == id) {
                envelope.acked = false;
                envelope.sent_on = None;
            }
        });
    }

    /// Makes every open connection silent: it stops reading (pings go unanswered) and sending.
    /// Connections opened later are served normally.
    pub fn silence(&self) {
        self.shared.write(|world| {
            for link in world.links.iter_mut().filter(|l| l.open) {
                link.silent = true;
            }
        });
    }
}
