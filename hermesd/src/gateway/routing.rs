//! Which conversation a chat message belongs to: Hermes' `build_session_key`. A direct message
//! is one conversation per chat (and thread); a group or channel one per user by default
//! (`group_sessions_per_user`), except in a thread, which is shared unless
//! `thread_sessions_per_user`. A message without a chat id falls back to its sender, never to a
//! bucket shared by everyone.

use super::adapter::ChatKind;

/// How chats map to sessions.
#[derive(Debug, Clone, Copy)]
pub struct Isolation {
    pub group_per_user: bool,
    pub thread_per_user: bool,
}

/// Whether the conversation of `session_key` (made by [`session_key`] for a message of
/// `chat_id`, `thread_id`) is one person's: a DM, or a group chat kept per user (whose key then
/// ends with the user's id). A shared one has several people in it.
pub fn is_personal(session_key: &str, chat_id: &str, thread_id: &str) -> bool {
    let parts: Vec<&str> = session_key.split(':').collect();
    if parts.get(3) == Some(&ChatKind::Dm.as_str()) {
        return true;
    }
    let shared_len = 4 + usize::from(!chat_id.is_empty()) + usize::from(!thread_id.is_empty());
    parts.len() == shared_len + 1
}

/// The session key of a message; `None` when nothing identifies its conversation (no chat and
/// no sender: it is dropped rather than mixed with others).
pub fn session_key(
    platform: &str,
    kind: ChatKind,
    chat_id: &str,
    thread_id: &str,
    user_id: &str,
    isolation: Isolation,
) -> Option<String> {
    let mut parts = vec!["agent", "main", platform, kind.as_str()];
    if kind == ChatKind::Dm {
        let id = [chat_id, user_id].into_iter().find(|id| !id.is_empty())?;
        parts.push(id);
        if !thread_id.is_empty() {
            parts.push(thread_id);
        }
        return Some(parts.join(":"));
    }
    if chat_id.is_empty() && user_id.is_empty() {
        return None;
    }
    if !chat_id.is_empty() {
        parts.push(chat_id);
    }
    if !thread_id.is_empty() {
        parts.push(thread_id);
    }
    let isolate = isolation.group_per_user && (thread_id.is_empty() || isolation.thread_per_user);
    if (isolate || chat_id.is_empty()) && !user_id.is_empty() {
        parts.push(user_id);
    }
    Some(parts.join(":"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DEFAULT: Isolation = Isolation {
        group_per_user: true,
        thread_per_user: false,
    };

    #[test]
    fn a_key_says_whether_its_conversation_is_one_persons() {
        let shared = Isolation {
            group_per_user: false,
            thread_per_user: false,
        };
        let cases = [
            (ChatKind::Dm, "42", "", DEFAULT, true),
            (ChatKind::Group, "-100", "", DEFAULT, true),
            (ChatKind::Group, "-100", "7", DEFAULT, false),
            (ChatKind::Group, "-100", "", shared, false),
        ];
        for (kind, chat, thread, iso, personal) in cases {
            let k = key(kind, chat, thread, "42", iso);
            assert_eq!(is_personal(&k, chat, thread), personal, "{k}");
        }
    }

    fn key(kind: ChatKind, chat: &str, thread: &str, user: &str, iso: Isolation) -> String {
        session_key("telegram", kind, chat, thread, user, iso).unwrap_or_default()
    }

    #[test]
    fn keys_match_hermes() {
        use ChatKind::*;
        assert_eq!(key(Dm, "5", "", "5", DEFAULT), "agent:main:telegram:dm:5");
        assert_eq!(
            key(Dm, "5", "9", "5", DEFAULT),
            "agent:main:telegram:dm:5:9"
        );
        assert_eq!(
            key(Group, "-100", "", "7", DEFAULT),
            "agent:main:telegram:group:-100:7"
        );
        // Threads are shared by default, per user when asked.
        assert_eq!(
            key(Group, "-100", "3", "7", DEFAULT),
            "agent:main:telegram:group:-100:3"
        );
        let per_user = Isolation {
            thread_per_user: true,
            ..DEFAULT
        };
        assert_eq!(
            key(Group, "-100", "3", "7", per_user),
            "agent:main:telegram:group:-100:3:7"
        );
        let shared = Isolation {
            group_per_user: false,
            thread_per_user: false,
        };
        assert_eq!(
            key(Group, "-100", "", "7", shared),
            "agent:main:telegram:group:-100"
        );
    }

    #[test]
    fn no_chat_id_falls_back_to_the_sender_never_a_shared_bucket() {
        use ChatKind::*;
        assert_eq!(key(Dm, "", "", "7", DEFAULT), "agent:main:telegram:dm:7");
        assert_ne!(key(Dm, "", "", "7", DEFAULT), key(Dm, "", "", "8", DEFAULT));
        let shared = Isolation {
            group_per_user: false,
            thread_per_user: false,
        };
        assert_eq!(
            key(Group, "", "", "7", shared),
            "agent:main:telegram:group:7"
        );
        assert_eq!(session_key("telegram", Dm, "", "", "", DEFAULT), None);
        assert_eq!(session_key("telegram", Group, "", "", "", DEFAULT), None);
    }
}
