//! A fake Telegram Bot API server for end-to-end tests: `POST|GET /bot{token}/{method}` with
//! Telegram's envelope, status codes and error texts (taken from the reference server and its
//! entity parser) for `getMe`, the webhook and command methods, `getUpdates` long polling,
//! `sendMessage`/`editMessageText` (HTML checked and rendered), `editMessageReplyMarkup`,
//! `deleteMessage`, `sendChatAction`, `answerCallbackQuery` and `getFile` with file downloads.
//! The test pushes updates, inspects what the bot did, waits on it (event-driven), queues faults
//! and delivers webhook updates through a [`FakeTelegram`] handle.
//!
//! As on the real service, the bot can only write to a chat a user wrote in first (or one the
//! test adds), and of two concurrent long polls the older one gets the 409.
//!
//! Where it knowingly differs: one bot (every token added is the same bot); `Markdown` and
//! `MarkdownV2` are accepted unparsed; no auto-detected entities in the bot's own texts (only
//! `bot_command` in users' texts); webhooks may be plain `http://` and are delivered only when the
//! test calls [`FakeTelegram::deliver_webhook`]; no flood limits or 409 pacing except the faults
//! the test queues.
#![deny(clippy::unwrap_used, clippy::expect_used)]

mod entities;
mod files;
mod html;
mod markup;
mod messages;
mod methods;
mod params;
mod polling;
mod push;
mod reply;
mod server;
mod state;
mod text;
mod types;
mod view;
mod wait;
mod webhook;

#[cfg(test)]
mod tests;

pub use params::{FilePart, form_data};
pub use types::{
    Call, CallbackAnswer, Chat, ChatAction, ChatKind, Fault, Incoming, Pushed, SentMessage, Upload,
    User,
};
pub use view::StateView;

use std::{net::SocketAddr, sync::Arc};

use state::{Shared, World};

/// The token [`FakeTelegram::start`] accepts (the bot's id is the part before the colon).
pub const DEFAULT_TOKEN: &str = "123456789:AAFakeTelegramTokenForTests-0123456";

/// A running fake server. Clones share it; the server stops (requests held open answer 500)
/// when the last clone is dropped.
#[derive(Clone)]
pub struct FakeTelegram {
    addr: SocketAddr,
    shared: Arc<Shared>,
    _running: Arc<Running>,
}

/// Stops the server when dropped.
struct Running(Arc<Shared>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.stop.cancel();
    }
}

impl FakeTelegram {
    /// Starts a server on `127.0.0.1:<free port>`.
    pub async fn start() -> Self {
        Self::start_on_port(0)
            .await
            .unwrap_or_else(|error| panic!("fake-telegram: bind 127.0.0.1:0: {error}"))
    }

    /// Starts a server on `127.0.0.1:port` (0 picks a free port).
    pub async fn start_on_port(port: u16) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::new(World::new(DEFAULT_TOKEN)));
        let router = server::router(shared.clone());
        let stop = shared.stop.clone();
        tokio::spawn(async move {
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let serve =
                axum::serve(listener, router).with_graceful_shutdown(stop.cancelled_owned());
            if let Err(error) = serve.await {
                eprintln!("fake-telegram: server error: {error}");
            }
        });
        Ok(Self {
            addr,
            _running: Arc::new(Running(shared.clone())),
            shared,
        })
    }

    /// The socket address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/bot`: a client calls `{base_url}{token}/{method}`.
    pub fn base_url(&self) -> String {
        format!("http://{}/bot", self.addr)
    }

    /// `http://127.0.0.1:PORT/file/bot`: files are at `{file_base_url}{token}/{file_path}`.
    pub fn file_base_url(&self) -> String {
        format!("http://{}/file/bot", self.addr)
    }

    /// The bot's first token still accepted.
    pub fn token(&self) -> String {
        self.shared
            .read(|world| world.tokens.first().cloned())
            .unwrap_or_else(|| panic!("fake-telegram: every token was removed"))
    }

    /// Accepts `token` too (for the same bot).
    pub fn add_token(&self, token: &str) {
        self.shared.write(|world| {
            if !world.tokens.iter().any(|t| t == token) {
                world.tokens.push(token.to_owned());
            }
        });
    }

    /// Stops accepting `token` (a revoked token answers 401).
    pub fn remove_token(&self, token: &str) {
        self.shared
            .write(|world| world.tokens.retain(|t| t != token));
    }

    /// The bot's User object, as `getMe` answers.
    pub fn bot_user(&self) -> serde_json::Value {
        self.shared.read(|world| world.bot.clone())
    }

    /// Makes `chat` known, so the bot can write to it before anyone wrote there.
    pub fn add_chat(&self, chat: &Chat) {
        self.shared.write(|world| {
            world.chat_mut(chat, None);
        });
    }

    /// Makes the next call of `method` (any case) fail with `fault`; faults queue up in order.
    pub fn fail_next(&self, method: &str, fault: Fault) {
        let method = method.to_ascii_lowercase();
        self.shared.write(|world| {
            world.faults.entry(method).or_default().push_back(fault);
        });
    }

    /// Lets every answer held by [`Fault::DeliverThenHold`] go out.
    pub fn release_held(&self) {
        self.shared.write(|world| world.releases += 1);
    }

    /// While on, every `getUpdates` is read and never answered (it still counts as in flight
    /// until its client disconnects).
    pub fn hang_polls(&self, on: bool) {
        self.shared.write(|world| world.hang_polls = on);
    }

    /// While on, another instance seems to be polling: every `getUpdates` (and the one
    /// waiting) answers 409 `Conflict: terminated by other getUpdates request; …`.
    pub fn set_conflict(&self, on: bool) {
        self.shared.write(|world| world.conflict = on);
    }
}
