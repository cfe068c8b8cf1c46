//! MessageEntity values: their kinds, Telegram's order (by offset, longer first, then by kind),
//! their JSON form, trimming a text with its entities, and the `bot_command` entities Telegram
//! finds in an incoming text. Offsets and lengths count UTF-16 code units, as the Bot API does.

use serde_json::{Value, json};

/// The entity kinds this server produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Bold,
    Italic,
    Underline,
    Strikethrough,
    Spoiler,
    Code,
    Pre,
    /// `pre` with a language (the argument).
    PreCode,
    /// `text_link` to the argument.
    TextUrl,
    /// `text_mention` of the user whose id is the argument.
    TextMention,
    BlockQuote,
    ExpandableBlockQuote,
    /// `custom_emoji` whose id is the argument.
    CustomEmoji,
    BotCommand,
    /// `mention` of an `@username`.
    Mention,
}

impl Kind {
    /// Telegram's tie-break between entities of the same span (lower first).
    fn priority(self) -> u8 {
        match self {
            Self::BlockQuote | Self::ExpandableBlockQuote => 0,
            Self::PreCode => 10,
            Self::Pre => 11,
            Self::Code => 20,
            Self::TextUrl | Self::TextMention => 49,
            Self::BotCommand | Self::Mention => 50,
            Self::Bold => 90,
            Self::Italic => 91,
            Self::Underline => 92,
            Self::Strikethrough => 93,
            Self::Spoiler => 94,
            Self::CustomEmoji => 99,
        }
    }
}

/// One entity of a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entity {
    pub(super) kind: Kind,
    pub(super) offset: usize,
    pub(super) length: usize,
    pub(super) argument: String,
}

impl Entity {
    pub(super) fn new(kind: Kind, offset: usize, length: usize, argument: String) -> Self {
        Self {
            kind,
            offset,
            length,
            argument,
        }
    }

    /// The MessageEntity object.
    pub(super) fn json(&self) -> Value {
        let (kind, extra) = match self.kind {
            Kind::Bold => ("bold", None),
            Kind::Italic => ("italic", None),
            Kind::Underline => ("underline", None),
            Kind::Strikethrough => ("strikethrough", None),
            Kind::Spoiler => ("spoiler", None),
            Kind::Code => ("code", None),
            Kind::Pre => ("pre", None),
            Kind::PreCode => ("pre", Some(("language", json!(self.argument)))),
            Kind::TextUrl => ("text_link", Some(("url", json!(self.argument)))),
            Kind::TextMention => {
                let id: i64 = self.argument.parse().unwrap_or_default();
                let user = json!({"id": id, "is_bot": false, "first_name": ""});
                ("text_mention", Some(("user", user)))
            }
            Kind::BlockQuote => ("blockquote", None),
            Kind::ExpandableBlockQuote => ("expandable_blockquote", None),
            Kind::CustomEmoji => (
                "custom_emoji",
                Some(("custom_emoji_id", json!(self.argument))),
            ),
            Kind::BotCommand => ("bot_command", None),
            Kind::Mention => ("mention", None),
        };
        let mut entity = json!({"offset": self.offset, "length": self.length, "type": kind});
        if let Some((name, value)) = extra {
            entity[name] = value;
        }
        entity
    }
}

/// Sorts entities as Telegram returns them.
pub(super) fn sort(entities: &mut [Entity]) {
    entities.sort_by_key(|e| (e.offset, std::cmp::Reverse(e.length), e.kind.priority()));
}

/// The length of `text` in UTF-16 code units.
pub(super) fn utf16_len(text: &str) -> usize {
    text.chars().map(char::len_utf16).sum()
}

/// `text` without leading and trailing white space, its entities cut to what is left (entities
/// left empty are dropped), as Telegram stores a message.
pub(super) fn trim(text: &str, entities: Vec<Entity>) -> (String, Vec<Entity>) {
    let blank = |c: char| c.is_whitespace() || c == '\0';
    let rest = text.trim_start_matches(blank);
    let kept = rest.trim_end_matches(blank);
    let lead = utf16_len(&text[..text.len() - rest.len()]);
    let len = utf16_len(kept);
    let entities = entities
        .into_iter()
        .filter_map(|mut e| {
            let start = e.offset.max(lead) - lead;
            let end = (e.offset + e.length).min(lead + len).saturating_sub(lead);
            (end > start).then(|| {
                e.offset = start;
                e.length = end - start;
                e
            })
        })
        .collect();
    (kept.to_owned(), entities)
}

/// The `bot_command` entities of `text`: `/name` or `/name@bot` (name 1–64 of `[A-Za-z0-9_]`,
/// bot 3–32) not preceded or followed by a word character, `/`, `<` or `>`.
pub(super) fn bot_commands(text: &str) -> Vec<Entity> {
    let chars: Vec<char> = text.chars().collect();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let fence = |c: Option<&char>| c.is_some_and(|&c| word(c) || matches!(c, '/' | '<' | '>'));
    let name = |c: &char| c.is_ascii_alphanumeric() || *c == '_';
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '/' || (i > 0 && fence(chars.get(i - 1))) {
            i += 1;
            continue;
        }
        let command = chars[i + 1..].iter().take_while(|c| name(c)).count();
        let mut end = i + 1 + command;
        if !(1..=64).contains(&command) {
            i += 1;
            continue;
        }
        if chars.get(end) == Some(&'@') {
            let bot = chars[end + 1..].iter().take_while(|c| name(c)).count();
            if !(3..=32).contains(&bot) {
                i = end;
                continue;
            }
            end += 1 + bot;
        }
        if !fence(chars.get(end)) {
            let offset = utf16_len(&chars[..i].iter().collect::<String>());
            let length = utf16_len(&chars[i..end].iter().collect::<String>());
            found.push(Entity::new(Kind::BotCommand, offset, length, String::new()));
        }
        i = end;
    }
    found
}

/// The `mention` entities of `text`: `@username` (5–32 of `[A-Za-z0-9_]`) not preceded by a word
/// character or `/`.
pub(super) fn mentions(text: &str) -> Vec<Entity> {
    let chars: Vec<char> = text.chars().collect();
    let name = |c: &char| c.is_ascii_alphanumeric() || *c == '_';
    let mut found = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let fenced = i > 0 && (chars[i - 1].is_alphanumeric() || matches!(chars[i - 1], '_' | '/'));
        if chars[i] != '@' || fenced {
            i += 1;
            continue;
        }
        let length = chars[i + 1..].iter().take_while(|c| name(c)).count();
        if (5..=32).contains(&length) {
            let offset = utf16_len(&chars[..i].iter().collect::<String>());
            found.push(Entity::new(
                Kind::Mention,
                offset,
                length + 1,
                String::new(),
            ));
        }
        i += 1 + length;
    }
    found
}
