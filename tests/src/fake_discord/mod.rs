//! A fake Discord for end-to-end tests: the REST API under `/api/v10` (`rest.rs`, `routes.rs`:
//! the Gateway's URL, the bot, channels, messages, threads opened on messages, typing,
//! application commands, interaction callbacks and followups, with rate-limit headers and scriptable 429s), a CDN for attachments,
//! and the Gateway websocket (`gateway.rs`: hello, identify, ready, heartbeat ACKs, resume with
//! replay, invalid session, reconnect, close codes). The test makes guilds, channels, threads
//! and DMs, has users write, press buttons and run commands (`push.rs`), throws the Gateway's
//! switches, inspects what the bot did and waits on it (`view.rs`).
//!
//! Where it knowingly differs: one bot; no permissions (the bot may write anywhere); embeds,
//! reactions, member lists and presences are absent; events while the bot has no session are
//! lost (as on Discord) but nothing else is dropped; every bucket allows 50 requests a second.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod gateway;
mod push;
mod rest;
mod routes;
mod state;
mod types;
mod view;

#[cfg(test)]
mod tests;

pub use push::Post;
pub use routes::MAX_CONTENT;
pub use types::{Call, Fault, GatewayStats, InteractionAnswer, OpenedThread, SentMessage, User};
pub use view::View;

use std::{net::SocketAddr, sync::Arc};

use state::{Shared, World};

/// The token [`FakeDiscord::start`] accepts.
pub const DEFAULT_TOKEN: &str = "MTIzNDU2Nzg5MDEyMzQ1Njc4.FakeDc.discord-fake-token-0123456789";

/// A running fake. Clones share it; the servers stop when the last clone is dropped.
#[derive(Clone)]
pub struct FakeDiscord {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _running: Arc<Running>,
}

struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.stop.cancel();
    }
}

impl FakeDiscord {
    /// Starts the REST server and the Gateway on free loopback ports.
    pub async fn start() -> Self {
        let bind = || tokio::net::TcpListener::bind(("127.0.0.1", 0));
        let (Ok(http), Ok(ws)) = (bind().await, bind().await) else {
            panic!("fake-discord: cannot bind 127.0.0.1");
        };
        let (Ok(addr), Ok(ws_addr)) = (http.local_addr(), ws.local_addr()) else {
            panic!("fake-discord: no local address");
        };
        let mut world = World::new(DEFAULT_TOKEN);
        world.ws_url = format!("ws://{ws_addr}");
        let shared = Arc::new(Shared::new(world));
        let router = rest::router(Arc::clone(&shared));
        let stop = shared.stop.clone();
        tokio::spawn(async move {
            let serve = axum::serve(http, router).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(error) = serve.await {
                eprintln!("fake-discord: server error: {error}");
            }
        });
        tokio::spawn(gateway::serve(ws, Arc::clone(&shared)));
        Self {
            addr,
            _running: Arc::new(Running(Arc::clone(&shared))),
            shared,
        }
    }

    fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/api/v10`: the bot's `platforms.discord.extra.api_base`.
    pub fn api_base(&self) -> String {
        format!("{}{}", self.base(), rest::API)
    }

    /// The Gateway's URL.
    pub fn gateway_url(&self) -> String {
        self.shared.read(|w| w.ws_url.clone())
    }

    /// Accepts `token` too (for the same bot).
    pub fn add_token(&self, token: &str) {
        self.shared.write(|world| {
            if !world.tokens.iter().any(|t| t == token) {
                world.tokens.push(token.to_owned());
            }
        });
    }

    /// The bot's user.
    pub fn bot(&self) -> User {
        self.shared.read(|w| w.bot.clone())
    }

    /// The interval HELLO names, in milliseconds (Discord's is about 41 s).
    pub fn set_heartbeat_interval(&self, ms: u64) {
        self.shared.write(|w| w.gateway.heartbeat_ms = ms);
    }

    /// Makes the next request of `method` whose path contains `path` fail with `fault`.
    pub fn fail_next(&self, method: &str, path: &str, fault: Fault) {
        self.shared.write(|w| {
            w.faults.push((method.to_string(), path.to_string(), fault));
        });
    }

    /// Every connection now live goes deaf: its heartbeats are not ACKed and no events reach
    /// it (they wait in the session, for a resume). Later connections are healthy.
    pub fn zombie(&self) {
        self.shared.write(|w| {
            let live: Vec<u64> = w.gateway.live.iter().copied().collect();
            w.gateway.zombies.extend(live);
        });
    }

    /// Closes the live connections with `code`.
    pub fn close_with(&self, code: u16) {
        self.shared.write(|w| w.gateway.close_with = Some(code));
    }

    /// Sends the live connection RECONNECT (op 7).
    pub fn reconnect(&self) {
        self.shared.write(|w| w.gateway.reconnect = true);
    }

    /// Sends the live connection INVALID_SESSION (op 9) with `d = resumable`; a session that
    /// cannot be resumed is gone.
    pub fn invalidate(&self, resumable: bool) {
        self.shared
            .write(|w| w.gateway.invalidate = Some(resumable));
    }

    /// Stops accepting `token` (REST answers 401, the Gateway closes with 4004).
    pub fn remove_token(&self, token: &str) {
        self.shared.write(|w| w.tokens.retain(|t| t != token));
    }
}
