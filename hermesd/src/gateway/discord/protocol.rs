//! The Discord Gateway's wire protocol (v10, JSON): the frame (`op`, `d`, `s`, `t`), the opcodes,
//! the intents hermesd asks for, the payloads it sends (identify, resume, heartbeat) and what
//! each close code means for the next connection (fatal, identify afresh, or resume).

use serde::Deserialize;
use serde_json::{Value, json};

/// Gateway opcodes.
pub mod op {
    pub const DISPATCH: u8 = 0;
    pub const HEARTBEAT: u8 = 1;
    pub const IDENTIFY: u8 = 2;
    pub const RESUME: u8 = 6;
    pub const RECONNECT: u8 = 7;
    pub const INVALID_SESSION: u8 = 9;
    pub const HELLO: u8 = 10;
    pub const HEARTBEAT_ACK: u8 = 11;
}

/// `GUILDS` (channels and threads: which channel is a thread of which), `GUILD_MESSAGES`
/// (messages in channels and threads), `DIRECT_MESSAGES` and `MESSAGE_CONTENT` (the text of
/// messages that do not mention the bot: free-response channels need it).
pub const INTENTS: u64 = (1 << 0) | (1 << 9) | (1 << 12) | (1 << 15);

/// The Gateway version and encoding hermesd speaks, as the URL's query.
pub const QUERY: &str = "v=10&encoding=json";

/// One Gateway frame.
#[derive(Debug, Clone, Deserialize)]
pub struct Frame {
    pub op: u8,
    #[serde(default)]
    pub d: Value,
    #[serde(default)]
    pub s: Option<i64>,
    #[serde(default)]
    pub t: Option<String>,
}

/// `url` with the version and encoding hermesd speaks (a URL from Discord has no query).
pub fn with_query(url: &str) -> String {
    let base = url.split('?').next().unwrap_or(url).trim_end_matches('/');
    format!("{base}/?{QUERY}")
}

/// The IDENTIFY payload.
pub fn identify(token: &str) -> String {
    json!({
        "op": op::IDENTIFY,
        "d": {
            "token": token,
            "intents": INTENTS,
            "properties": {"os": std::env::consts::OS, "browser": "hermesd", "device": "hermesd"},
        }
    })
    .to_string()
}

/// The RESUME payload: the events after `seq` are sent again.
pub fn resume(token: &str, session_id: &str, seq: i64) -> String {
    json!({"op": op::RESUME, "d": {"token": token, "session_id": session_id, "seq": seq}})
        .to_string()
}

/// A heartbeat carrying the last sequence number received.
pub fn heartbeat(seq: Option<i64>) -> String {
    json!({"op": op::HEARTBEAT, "d": seq}).to_string()
}

/// What a connection's end means for the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The credentials or the request can never work (4004, 4010–4014): not retried.
    Fatal(String),
    /// The session is gone: the next connection identifies afresh.
    Reidentify(String),
    /// The session may go on: the next connection resumes it.
    Resume(String),
}

impl Ending {
    pub fn reason(&self) -> &str {
        match self {
            Self::Fatal(why) | Self::Reidentify(why) | Self::Resume(why) => why,
        }
    }
}

/// What Discord's close `code` means (Discord's table of Gateway close event codes).
pub fn on_close(code: u16, reason: &str) -> Ending {
    let what = |meaning: &str| {
        let reason = reason.trim();
        if reason.is_empty() {
            format!("Discord closed the Gateway with {code} ({meaning})")
        } else {
            format!("Discord closed the Gateway with {code} ({meaning}: {reason})")
        }
    };
    match code {
        4004 => Ending::Fatal(what("authentication failed: the bot token was refused")),
        4010 => Ending::Fatal(what("invalid shard")),
        4011 => Ending::Fatal(what("sharding required")),
        4012 => Ending::Fatal(what("invalid API version")),
        4013 => Ending::Fatal(what("invalid intents")),
        4014 => Ending::Fatal(what(
            "disallowed intents: enable the Message Content intent for the bot in the \
             Developer Portal",
        )),
        4007 => Ending::Reidentify(what("invalid sequence")),
        4009 => Ending::Reidentify(what("session timed out")),
        // The client's own normal closes end the session too.
        1000 | 1001 => Ending::Reidentify(what("closed")),
        4000 => Ending::Resume(what("unknown error")),
        4001 => Ending::Resume(what("unknown opcode")),
        4002 => Ending::Resume(what("decode error")),
        4003 => Ending::Resume(what("not authenticated")),
        4005 => Ending::Resume(what("already authenticated")),
        4008 => Ending::Resume(what("rate limited")),
        _ => Ending::Resume(what("closed")),
    }
}

/// The code hermesd closes with when it means to resume (not 1000/1001, which end the
/// session).
pub const CLOSE_TO_RESUME: u16 = 4900;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_codes_are_classified_as_discord_documents_them() {
        assert!(matches!(on_close(4004, ""), Ending::Fatal(_)));
        for code in 4010..=4014 {
            assert!(matches!(on_close(code, "x"), Ending::Fatal(_)), "{code}");
        }
        assert!(matches!(on_close(4009, ""), Ending::Reidentify(_)));
        assert!(matches!(on_close(4007, ""), Ending::Reidentify(_)));
        for code in [4000, 4001, 4002, 4003, 4005, 4008, 1006, 4999] {
            assert!(matches!(on_close(code, ""), Ending::Resume(_)), "{code}");
        }
        assert!(on_close(4014, "").reason().contains("Message Content"));
        assert!(
            on_close(4004, "Authentication failed.")
                .reason()
                .contains("4004")
        );
    }

    #[test]
    fn payloads_and_urls() {
        assert_eq!(
            with_query("wss://gateway.discord.gg"),
            "wss://gateway.discord.gg/?v=10&encoding=json"
        );
        assert_eq!(
            with_query("ws://127.0.0.1:9/gw/?v=9"),
            "ws://127.0.0.1:9/gw/?v=10&encoding=json"
        );
        let identify: Value = serde_json::from_str(&identify("T")).unwrap();
        assert_eq!(identify["op"], 2);
        assert_eq!(identify["d"]["intents"], 37377);
        let resume: Value = serde_json::from_str(&resume("T", "s1", 42)).unwrap();
        assert_eq!(
            (resume["op"].as_u64(), resume["d"]["seq"].as_i64()),
            (Some(6), Some(42))
        );
        let beat: Value = serde_json::from_str(&heartbeat(None)).unwrap();
        assert_eq!(beat, json!({"op": 1, "d": null}));
        let frame: Frame = serde_json::from_str(r#"{"op":11}"#).unwrap();
        assert_eq!((frame.op, frame.s), (op::HEARTBEAT_ACK, None));
    }
}
