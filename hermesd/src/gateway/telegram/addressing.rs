//! How a Telegram message addresses bots, read from the entities Telegram marks in it (the raw
//! text is looked at only when it carries none): whether it names this bot (`@handle`, a text
//! mention of it, `/command@handle`), answers one of its messages, or names other bots only;
//! and its text with this bot's handle taken out where Telegram marked it, as Hermes does
//! before the agent reads it.

use frankenstein::types::{Message, MessageEntity, MessageEntityType};

use crate::gateway::adapter::Addressing;

/// This bot, as `getMe` answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Me {
    pub id: u64,
    /// Lower case, without the `@`; empty when unknown.
    pub username: String,
}

impl Me {
    pub fn new(id: u64, username: Option<&str>) -> Self {
        Self {
            id,
            username: username.unwrap_or_default().to_ascii_lowercase(),
        }
    }
}

/// How `message` addresses bots, for `me`.
pub fn addressing(message: &Message, me: &Me) -> Addressing {
    let sources = [
        (message.text.as_deref(), message.entities.as_deref()),
        (
            message.caption.as_deref(),
            message.caption_entities.as_deref(),
        ),
    ];
    let mut mentions_me = false;
    let mut bots = Vec::new();
    for (text, entities) in sources {
        let Some(text) = text else { continue };
        match entities.filter(|e| !e.is_empty()) {
            Some(entities) => {
                for entity in entities {
                    mentions_me |= names_me(text, entity, me);
                    bots.extend(bot_handle(text, entity));
                }
            }
            None => bots.extend(raw_bot_handles(text)),
        }
    }
    let mine = !me.username.is_empty();
    mentions_me |= mine && bots.contains(&me.username);
    // In a forum topic every message "replies" to the message that opened the topic: that is
    // not an answer to whoever opened it. (Outside topics Telegram may set a thread id on a
    // plain reply too, naming the message replied to: that one is an answer.)
    let in_topic = message.is_topic_message == Some(true);
    let replies_to_me = message
        .reply_to_message
        .as_deref()
        .filter(|replied| {
            replied.forum_topic_created.is_none()
                && !(in_topic && Some(replied.message_id) == message.message_thread_id)
        })
        .and_then(|replied| replied.from.as_deref())
        .is_some_and(|from| me.id != 0 && from.id == me.id);
    Addressing {
        mentions_me,
        replies_to_me,
        names_only_other_bots: mine && !bots.is_empty() && !bots.contains(&me.username),
        // A topic is not the bot's: Telegram's mention rules apply in every topic.
        in_my_thread: false,
    }
}

/// Whether `entity` names `me`: `@handle`, a text mention of its id, or `/command@handle`.
fn names_me(text: &str, entity: &MessageEntity, me: &Me) -> bool {
    let span = || {
        slice(text, entity)
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase()
    };
    match entity.type_field {
        MessageEntityType::Mention => {
            !me.username.is_empty() && span().strip_prefix('@') == Some(me.username.as_str())
        }
        MessageEntityType::TextMention => {
            me.id != 0 && entity.user.as_ref().is_some_and(|u| u.id == me.id)
        }
        MessageEntityType::BotCommand => {
            !me.username.is_empty()
                && span()
                    .split_once('@')
                    .is_some_and(|(_, to)| to.trim() == me.username)
        }
        _ => false,
    }
}

/// The bot handle (lower case) a `mention` or `/command@handle` entity names, if any.
fn bot_handle(text: &str, entity: &MessageEntity) -> Option<String> {
    let span = slice(text, entity)?.trim().to_ascii_lowercase();
    let handle = match entity.type_field {
        MessageEntityType::Mention => span.strip_prefix('@')?.to_string(),
        MessageEntityType::BotCommand => span.split_once('@')?.1.trim().to_string(),
        _ => return None,
    };
    is_bot_handle(&handle).then_some(handle)
}

/// `@…bot` handles in a text Telegram marked nothing in: not inside a word, a path or code.
fn raw_bot_handles(text: &str) -> Vec<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut found = Vec::new();
    for (at, _) in text.match_indices('@') {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| word(c) || c == '`' || c == '/') {
            continue;
        }
        let rest = &text[at + 1..];
        let end = rest.find(|c: char| !word(c)).unwrap_or(rest.len());
        let handle = rest[..end].to_ascii_lowercase();
        if is_bot_handle(&handle) {
            found.push(handle);
        }
    }
    found
}

/// Telegram's rule for a bot's username: 5 to 32 of `[A-Za-z0-9_]`, ending in `bot`.
fn is_bot_handle(handle: &str) -> bool {
    (5..=32).contains(&handle.len())
        && handle.to_ascii_lowercase().ends_with("bot")
        && handle
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The part of `text` an entity covers.
fn slice<'t>(text: &'t str, entity: &MessageEntity) -> Option<&'t str> {
    byte_range(text, entity).map(|(start, end)| &text[start..end])
}

/// The message's text (or caption) without this bot's `@handle` where Telegram marked it (in
/// a text it marked nothing in: where it stands alone), nor the `,`, `:` or `-` and spaces after
/// a mention; `/command@handle` keeps its command and arguments. The text as it was when
/// nothing else is left.
pub fn cleaned_text(message: &Message, me: &Me) -> String {
    let (text, entities) = match message.text.as_deref() {
        Some(text) => (text, message.entities.as_deref()),
        None => (
            message.caption.as_deref().unwrap_or_default(),
            message.caption_entities.as_deref(),
        ),
    };
    without_handle(text, entities.unwrap_or_default(), me)
}

/// A piece of the text to take out: a byte range, and whether it is a mention (which takes
/// the punctuation and spaces after it along).
struct Cut {
    start: usize,
    end: usize,
    mention: bool,
}

fn without_handle(text: &str, entities: &[MessageEntity], me: &Me) -> String {
    if me.username.is_empty() || !text.contains('@') {
        return text.to_string();
    }
    let handle = format!("@{}", me.username);
    let cuts = if entities.is_empty() {
        unmarked_handles(text, &handle)
    } else {
        marked_handles(text, entities, &handle)
    };
    if cuts.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut from = 0;
    for cut in cuts {
        if cut.start < from {
            continue;
        }
        out.push_str(&text[from..cut.start]);
        from = cut.end;
        if cut.mention {
            let rest = &text[from..];
            let punct = rest.len() - rest.trim_start_matches([',', ':', '-']).len();
            let after = &rest[punct..];
            from += punct + (after.len() - after.trim_start().len());
            // Words on both sides stay apart.
            if !out.is_empty() && !out.ends_with(char::is_whitespace) && from < text.len() {
                out.push(' ');
            }
        }
    }
    out.push_str(&text[from..]);
    let cleaned = out.trim();
    if cleaned.is_empty() {
        text.to_string()
    } else {
        cleaned.to_string()
    }
}

/// This bot's handle where Telegram marked it: a mention of it, the `@handle` of a command.
fn marked_handles(text: &str, entities: &[MessageEntity], handle: &str) -> Vec<Cut> {
    let mut cuts = Vec::new();
    for entity in entities {
        let Some((start, end)) = byte_range(text, entity) else {
            continue;
        };
        let span = &text[start..end];
        match entity.type_field {
            MessageEntityType::Mention if span.eq_ignore_ascii_case(handle) => cuts.push(Cut {
                start,
                end,
                mention: true,
            }),
            MessageEntityType::BotCommand => {
                if let Some(at) = span.find('@')
                    && span[at..].eq_ignore_ascii_case(handle)
                {
                    cuts.push(Cut {
                        start: start + at,
                        end,
                        mention: false,
                    });
                }
            }
            _ => {}
        }
    }
    cuts.sort_by_key(|cut| cut.start);
    cuts
}

/// This bot's handle standing alone in a text Telegram marked nothing in.
fn unmarked_handles(text: &str, handle: &str) -> Vec<Cut> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices(handle)
        .filter(|(at, _)| {
            let before = text[..*at].chars().next_back();
            let after = text[at + handle.len()..].chars().next();
            !before.is_some_and(|c| word(c) || c == '`' || c == '/') && !after.is_some_and(word)
        })
        .map(|(at, _)| Cut {
            start: at,
            end: at + handle.len(),
            mention: true,
        })
        .collect()
}

/// The byte range of `text` an entity covers (its offsets count UTF-16 code units); `None`
/// when it does not fall on characters of the text.
fn byte_range(text: &str, entity: &MessageEntity) -> Option<(usize, usize)> {
    let start = usize::from(entity.offset);
    let end = start + usize::from(entity.length);
    let mut units = 0;
    let mut found_start = None;
    for (at, c) in text.char_indices() {
        if units == start {
            found_start = Some(at);
        }
        if units == end {
            return found_start.map(|s| (s, at));
        }
        units += c.len_utf16();
    }
    (units == end).then_some(())?;
    found_start.map(|s| (s, text.len()))
}

#[cfg(test)]
#[path = "addressing_tests.rs"]
mod tests;
