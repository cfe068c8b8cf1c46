//! `parse_mode: "HTML"` as Telegram reads it (the rules of the reference server's parser, with its
//! error texts): the tags `b strong i em u ins s strike del tg-spoiler span a code pre
//! blockquote tg-emoji`, nested and closed (`</>` closes the innermost); `&lt; &gt; &amp; &quot;`
//! and numeric references decoded, any other `&` kept as it is; a `<` that does not start a
//! supported tag is an error. Yields the visible text and its entities.

use super::entities::{self, Entity, Kind};

/// The visible text of an HTML message and its entities.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) text: String,
    pub(super) entities: Vec<Entity>,
}

const TAGS: &[&str] = &[
    "a",
    "b",
    "strong",
    "i",
    "em",
    "s",
    "strike",
    "del",
    "u",
    "ins",
    "tg-spoiler",
    "tg-emoji",
    "span",
    "pre",
    "code",
    "blockquote",
];

const SURROGATES: &str = "Text contains invalid Unicode characters after decoding HTML entities, \
     check for unmatched surrogate code units";

/// A tag opened and not yet closed.
struct Open {
    tag: String,
    argument: String,
    expandable: bool,
    /// UTF-16 offset of the entity in the visible text.
    offset: usize,
    /// Byte offset of the entity in the visible text.
    begin: usize,
}

/// White space as the parser sees it; the end of the text counts as space.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0 | 0x0b | 0x0c)
}

fn lower(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).to_ascii_lowercase()
}

/// Parses `input`; the error is the text after `can't parse entities: `.
pub(super) fn parse(input: &str) -> Result<Parsed, String> {
    let text = input.as_bytes();
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut utf16 = 0;
    let mut found = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c == b'&'
            && let Some((code, next)) = decode_entity(text, i)
        {
            let decoded = char::from_u32(code).ok_or(SURROGATES)?;
            utf16 += decoded.len_utf16();
            out.extend_from_slice(decoded.encode_utf8(&mut [0; 4]).as_bytes());
            i = next;
            continue;
        }
        if c != b'<' {
            if c & 0xc0 != 0x80 {
                utf16 += 1 + usize::from(c >= 0xf0);
            }
            out.push(c);
            i += 1;
            continue;
        }
        let begin = i;
        i += 1;
        if at(i) != b'/' {
            let tag = start_tag(text, begin, &mut i)?;
            open.push(Open {
                offset: utf16,
                begin: out.len(),
                ..tag
            });
        } else {
            let Some(top) = open.pop() else {
                return Err(format!("Unexpected end tag at byte offset {begin}"));
            };
            while !is_space(at(i)) && at(i) != b'>' {
                i += 1;
            }
            let end_tag = lower(&text[begin + 2..i]);
            while at(i) != 0 && is_space(at(i)) {
                i += 1;
            }
            if at(i) != b'>' {
                return Err(format!("Unclosed end tag at byte offset {begin}"));
            }
            if !end_tag.is_empty() && end_tag != top.tag {
                let expected = &top.tag;
                return Err(format!(
                    "Unmatched end tag at byte offset {begin}, expected \"</{expected}>\", found \
                     \"</{end_tag}>\""
                ));
            }
            if utf16 > top.offset {
                close(&mut found, top, utf16, &out)?;
            }
        }
        i += 1;
    }
    if let Some(top) = open.last() {
        let tag = &top.tag;
        return Err(format!(
            "Can't find end tag corresponding to start tag {tag}"
        ));
    }
    for entity in &mut found {
        if entity.kind == Kind::Code {
            entity.argument.clear();
        }
    }
    entities::sort(&mut found);
    let text = String::from_utf8(out).map_err(|_| SURROGATES.to_owned())?;
    Ok(Parsed {
        text,
        entities: found,
    })
}

/// Reads the start tag at `begin` (`*i` just past the `<`), leaving `*i` on its `>`.
fn start_tag(text: &[u8], begin: usize, i: &mut usize) -> Result<Open, String> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    while !is_space(at(*i)) && at(*i) != b'>' {
        *i += 1;
    }
    if at(*i) == 0 {
        return Err(format!("Unclosed start tag at byte offset {begin}"));
    }
    let tag = lower(&text[begin + 1..*i]);
    if !TAGS.contains(&tag.as_str()) {
        return Err(format!(
            "Unsupported start tag \"{tag}\" at byte offset {begin}"
        ));
    }
    let mut argument = String::new();
    let mut expandable = false;
    while at(*i) != b'>' {
        while at(*i) != 0 && is_space(at(*i)) {
            *i += 1;
        }
        if at(*i) == b'>' {
            break;
        }
        let name_begin = *i;
        while !is_space(at(*i)) && at(*i) != b'=' && at(*i) != b'>' {
            *i += 1;
        }
        let name = &text[name_begin..*i];
        if name.is_empty() {
            return Err(format!(
                "Empty attribute name in the tag \"{tag}\" at byte offset {begin}"
            ));
        }
        while at(*i) != 0 && is_space(at(*i)) {
            *i += 1;
        }
        if at(*i) != b'=' {
            if tag == "blockquote" && name == b"expandable" {
                expandable = true;
                continue;
            }
            return Err(format!(
                "Expected equal sign in declaration of an attribute of the tag \"{tag}\" at byte \
                 offset {begin}"
            ));
        }
        *i += 1;
        while at(*i) != 0 && is_space(at(*i)) {
            *i += 1;
        }
        if at(*i) == 0 {
            return Err(format!(
                "Unclosed start tag \"{tag}\" at byte offset {begin}"
            ));
        }
        let value = attribute_value(text, i)?;
        if at(*i) == 0 {
            return Err(format!("Unclosed start tag at byte offset {begin}"));
        }
        match (tag.as_str(), name) {
            ("a", b"href") | ("tg-emoji", b"emoji-id") => argument = value,
            ("code", b"class") => {
                if let Some(language) = value.strip_prefix("language-") {
                    argument = language.to_owned();
                }
            }
            ("span", b"class") => {
                if let Some(class) = value.strip_prefix("tg-") {
                    argument = class.to_owned();
                }
            }
            _ => {}
        }
    }
    if tag == "span" && argument != "spoiler" {
        return Err(format!(
            "Tag \"span\" must have class \"tg-spoiler\" at byte offset {begin}"
        ));
    }
    Ok(Open {
        tag,
        argument,
        expandable,
        offset: 0,
        begin: 0,
    })
}

/// Reads an attribute value at `*i`: a quoted string (entities decoded) or a name token
/// (letters, digits, `.` and `-`, lower-cased).
fn attribute_value(text: &[u8], i: &mut usize) -> Result<String, String> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let quote = at(*i);
    if quote != b'\'' && quote != b'"' {
        let token_begin = *i;
        while at(*i).is_ascii_alphanumeric() || at(*i) == b'.' || at(*i) == b'-' {
            *i += 1;
        }
        if !is_space(at(*i)) && at(*i) != b'>' {
            return Err(format!(
                "Unexpected end of name token at byte offset {token_begin}"
            ));
        }
        return Ok(lower(&text[token_begin..*i]));
    }
    *i += 1;
    let mut value = Vec::new();
    while at(*i) != quote && at(*i) != 0 {
        if at(*i) == b'&'
            && let Some((code, next)) = decode_entity(text, *i)
        {
            let decoded = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
            value.extend_from_slice(decoded.encode_utf8(&mut [0; 4]).as_bytes());
            *i = next;
            continue;
        }
        value.push(at(*i));
        *i += 1;
    }
    if at(*i) == quote {
        *i += 1;
    }
    Ok(String::from_utf8_lossy(&value).into_owned())
}

/// Adds the entity of the tag `top` closed at UTF-16 offset `end` (`out` is the visible text so
/// far), merging `pre` and `code` of the same span into one `pre` with a language.
fn close(found: &mut Vec<Entity>, top: Open, end: usize, out: &[u8]) -> Result<(), String> {
    let (offset, length) = (top.offset, end - top.offset);
    let same_span = |e: &Entity| e.offset == offset && e.length == length;
    let (kind, argument) = match top.tag.as_str() {
        "i" | "em" => (Kind::Italic, String::new()),
        "b" | "strong" => (Kind::Bold, String::new()),
        "s" | "strike" | "del" => (Kind::Strikethrough, String::new()),
        "u" | "ins" => (Kind::Underline, String::new()),
        "tg-spoiler" | "span" => (Kind::Spoiler, String::new()),
        "tg-emoji" => match top.argument.parse::<i64>() {
            Ok(id) if id != 0 => (Kind::CustomEmoji, id.to_string()),
            _ => return Err("Invalid custom emoji identifier specified".to_owned()),
        },
        "a" => {
            let url = if top.argument.is_empty() {
                String::from_utf8_lossy(&out[top.begin..]).into_owned()
            } else {
                top.argument
            };
            match checked_link(&url) {
                Some(link) => link,
                None => return Ok(()),
            }
        }
        "pre" => {
            if let Some(last) = found.last_mut()
                && last.kind == Kind::Code
                && same_span(last)
                && !last.argument.is_empty()
            {
                last.kind = Kind::PreCode;
                return Ok(());
            }
            (Kind::Pre, String::new())
        }
        "code" => {
            if let Some(last) = found.last_mut()
                && last.kind == Kind::Pre
                && same_span(last)
                && !top.argument.is_empty()
            {
                last.kind = Kind::PreCode;
                last.argument = top.argument;
                return Ok(());
            }
            (Kind::Code, top.argument)
        }
        _ if top.expandable => (Kind::ExpandableBlockQuote, String::new()),
        _ => (Kind::BlockQuote, String::new()),
    };
    found.push(Entity::new(kind, offset, length, argument));
    Ok(())
}

/// The entity an `<a>` link makes: a `text_mention` for `tg://user?id=N`, else a `text_link` to
/// the URL made absolute (`http://` and a `/` path added); `None` drops an unusable link.
fn checked_link(url: &str) -> Option<(Kind, String)> {
    if let Some(id) = url.strip_prefix("tg://user?id=")
        && let Ok(id) = id.parse::<i64>()
    {
        return Some((Kind::TextMention, id.to_string()));
    }
    if url.is_empty() || url.chars().any(char::is_whitespace) {
        return None;
    }
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (scheme.to_ascii_lowercase(), rest),
        None => ("http".to_owned(), url),
    };
    match scheme.as_str() {
        "tg" | "ton" | "tonsite" => return Some((Kind::TextUrl, format!("{scheme}://{rest}"))),
        "http" | "https" => {}
        _ => return None,
    }
    let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (host, path) = rest.split_at(host_end);
    if host.is_empty() {
        return None;
    }
    let slash = if path.starts_with('/') { "" } else { "/" };
    Some((Kind::TextUrl, format!("{scheme}://{host}{slash}{path}")))
}

/// Decodes the character reference at `pos` (an `&`): `&lt;`, `&gt;`, `&amp;`, `&quot;` or a
/// numeric one, the `;` optional. Returns the code point and the position after it.
fn decode_entity(text: &[u8], pos: usize) -> Option<(u32, usize)> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut end = pos + 1;
    let code = if at(pos + 1) == b'#' {
        end += 1;
        let radix = if at(pos + 2) == b'x' {
            end += 1;
            16
        } else {
            10
        };
        let mut code: u32 = 0;
        while let Some(digit) = char::from(at(end)).to_digit(radix) {
            code = code.wrapping_mul(radix).wrapping_add(digit);
            end += 1;
        }
        if code == 0 || code >= 0x10ffff || end - pos >= 10 {
            return None;
        }
        code
    } else {
        while at(end).is_ascii_alphabetic() {
            end += 1;
        }
        let name = &text[pos + 1..end];
        u32::from(match name {
            b"lt" => b'<',
            b"gt" => b'>',
            b"amp" => b'&',
            b"quot" => b'"',
            _ => return None,
        })
    };
    if at(end) == b';' {
        end += 1;
    }
    Some((code, end))
}
