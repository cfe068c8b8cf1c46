//! The chat platforms as tools and cron reach them: the targets there are and one way to send,
//! through the gateway's outbox (recorded before it goes, never sent twice). The gateway
//! implements [`Messenger`]; `send_message` and cron delivery use it and never see the gateway.

use async_trait::async_trait;
use rusqlite::Transaction;

use crate::store::StoreError;

/// Where a message goes: `platform` (its home channel), `platform:chat`, or
/// `platform:chat:thread` (a Telegram topic). `chat` may also be a known chat's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    pub platform: String,
    /// Empty: the platform's home channel.
    pub chat: String,
    pub thread_id: String,
}

impl Destination {
    /// Parse a target as the user and the model write it.
    pub fn parse(target: &str) -> Result<Self, String> {
        let target = target.trim();
        let (platform, rest) = match target.split_once(':') {
            Some((platform, rest)) => (platform, rest.trim()),
            None => (target, ""),
        };
        let platform = platform.trim().to_ascii_lowercase();
        if platform.is_empty()
            || !platform
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(format!(
                "'{target}' is not a target: write 'platform', 'platform:chat_id' or \
                 'platform:chat_id:thread_id'"
            ));
        }
        // A chat id may carry a thread (`-100123:17`, Slack's `C0123ABCD:1700000000.123456`);
        // a name is taken whole.
        let (chat, thread_id) = match rest.rsplit_once(':') {
            Some((chat, thread)) if is_chat_id(chat) && is_thread_id(thread) => {
                (chat.to_string(), thread.to_string())
            }
            _ => (rest.to_string(), String::new()),
        };
        Ok(Self {
            platform,
            chat,
            thread_id,
        })
    }

    /// Whether `chat` is an id (as opposed to a name to look up).
    pub fn names_an_id(&self) -> bool {
        is_chat_id(&self.chat)
    }
}

/// A number (Telegram's chats, negative for groups; Discord's snowflakes), or Slack's
/// conversation and user ids (`C`, `G`, `D` or `U` and at least 8 capitals or digits), as Hermes
/// reads them.
fn is_chat_id(chat: &str) -> bool {
    let digits = chat.strip_prefix('-').unwrap_or(chat);
    let numeric = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
    let slack = chat.len() >= 9
        && chat.starts_with(['C', 'G', 'D', 'U'])
        && chat
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    numeric || slack
}

/// A topic's or thread's number, or a Slack thread's timestamp (`1700000000.123456`).
fn is_thread_id(thread: &str) -> bool {
    let (whole, fraction) = thread.split_once('.').unwrap_or((thread, "0"));
    [whole, fraction]
        .iter()
        .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_digit()))
}

impl std::fmt::Display for Destination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.platform)?;
        if !self.chat.is_empty() {
            write!(f, ":{}", self.chat)?;
        }
        if !self.thread_id.is_empty() {
            write!(f, ":{}", self.thread_id)?;
        }
        Ok(())
    }
}

/// A message that went out (or is recorded to go, when the platform is down).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub platform: String,
    pub chat_id: String,
    pub thread_id: String,
    /// The platform's id of the last piece; empty when it was not acknowledged.
    pub message_id: String,
    /// How many messages the text was split into.
    pub pieces: usize,
    /// The platform's home channel was used.
    pub home: bool,
}

/// A chat a message can go to, for `send_message`'s `list` and the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownChat {
    pub chat_id: String,
    pub thread_id: String,
    pub kind: String,
    pub name: String,
}

/// A platform as senders see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlatformTargets {
    pub platform: String,
    pub connected: bool,
    pub home: Option<KnownChat>,
    /// The chats that talked most recently.
    pub chats: Vec<KnownChat>,
}

/// Why a send did not go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SendError {
    /// The platform is not configured or not connected now: the same send can work once it
    /// connects (cron keeps such a delivery pending).
    Unavailable(String),
    /// Refused for good: an unknown chat or platform, no home channel, a send the platform
    /// refused, a record that could not be written.
    Refused(String),
}

impl std::fmt::Display for SendError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unavailable(why) | Self::Refused(why) => f.write_str(why),
        }
    }
}

impl From<SendError> for String {
    fn from(e: SendError) -> Self {
        e.to_string()
    }
}

/// Work done in the transaction that records a message, so a record of the sending (a cron
/// run's delivery) and the message itself are stored together or not at all.
pub type AlsoStore = Box<dyn FnOnce(&Transaction<'_>) -> Result<(), StoreError> + Send>;

/// The chat platforms, as senders reach them.
#[async_trait]
pub trait Messenger: Send + Sync {
    /// Whether any platform is configured (`send_message` is offered only then).
    fn has_platforms(&self) -> bool;

    /// Every configured platform, its home channel and recent chats.
    async fn targets(&self) -> Vec<PlatformTargets>;

    /// Send `text` to `to` now; `Err` says why it cannot go. `also` is stored with the
    /// message, in one transaction: when it fails, nothing is recorded or sent.
    async fn send(
        &self,
        to: &Destination,
        text: &str,
        also: Option<AlsoStore>,
    ) -> Result<Sent, SendError>;

    /// Changes each time a platform connects (cron delivers what waited for it).
    fn connections(&self) -> tokio::sync::watch::Receiver<u64>;
}

/// What senders get when no platform is configured.
pub struct NoPlatforms;

#[async_trait]
impl Messenger for NoPlatforms {
    fn has_platforms(&self) -> bool {
        false
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
        Err(SendError::Unavailable(not_configured(&to.platform)))
    }

    fn connections(&self) -> tokio::sync::watch::Receiver<u64> {
        tokio::sync::watch::channel(0).1
    }
}

/// The error for a platform the daemon has no connection for.
pub fn not_configured(platform: &str) -> String {
    let variable = format!("{}_BOT_TOKEN", platform.to_ascii_uppercase());
    format!(
        "Platform '{platform}' is not configured: hermesd has no {platform} connection (set \
         {variable} in ~/.hermes/.env and restart hermesd)."
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_as_hermes_writes_them() {
        let home = Destination::parse("telegram").unwrap();
        assert_eq!(
            (home.platform.as_str(), home.chat.as_str()),
            ("telegram", "")
        );
        let topic = Destination::parse("Telegram:-1001234567890:17585").unwrap();
        assert_eq!(topic.platform, "telegram");
        assert_eq!(topic.chat, "-1001234567890");
        assert_eq!(topic.thread_id, "17585");
        assert_eq!(topic.to_string(), "telegram:-1001234567890:17585");
        let named = Destination::parse("telegram:Ann Smith").unwrap();
        assert_eq!(named.chat, "Ann Smith");
        assert!(!named.names_an_id());
        assert!(Destination::parse("").is_err());
        assert!(Destination::parse("../x:1").is_err());
        let thread = Destination::parse("slack:C0123ABCD:1700000000.123456").unwrap();
        assert_eq!(thread.chat, "C0123ABCD");
        assert_eq!(thread.thread_id, "1700000000.123456");
        assert!(thread.names_an_id());
        let discord = Destination::parse("discord:1234567890123456789:987654321098765432").unwrap();
        assert_eq!(discord.chat, "1234567890123456789");
        assert_eq!(discord.thread_id, "987654321098765432");
        let channel = Destination::parse("slack:#general").unwrap();
        assert_eq!(channel.chat, "#general");
        assert!(!channel.names_an_id());
        assert!(!Destination::parse("slack:Cat:1.2").unwrap().names_an_id());
    }
}
