//! Invisible-character detection: zero-width characters, bidi controls (U+202A–U+202E,
//! U+2066–U+2069) and Unicode tag characters (U+E0000 block, "ASCII smuggling"). One finding
//! per line naming the code point; a leading BOM, joiners inside emoji or non-Latin words and
//! emoji flag tag sequences are legitimate and skipped.

use super::redact::redact;
use super::rules::INJECTION;
use super::text::shorten;
use super::{Finding, Severity};

const DESCRIPTION: &str = "invisible Unicode character (can hide text or instructions)";

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// Readable name of an invisible character, `None` for visible ones.
fn invisible_name(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{200B}' => "zero-width space",
        '\u{200C}' => "zero-width non-joiner",
        '\u{200D}' => "zero-width joiner",
        '\u{2060}' => "word joiner",
        '\u{2061}' => "function application",
        '\u{2062}' => "invisible times",
        '\u{2063}' => "invisible separator",
        '\u{2064}' => "invisible plus",
        '\u{180E}' => "Mongolian vowel separator",
        '\u{FEFF}' => "zero-width no-break space (BOM)",
        '\u{202A}' => "LTR embedding",
        '\u{202B}' => "RTL embedding",
        '\u{202C}' => "pop directional formatting",
        '\u{202D}' => "LTR override",
        '\u{202E}' => "RTL override",
        '\u{2066}' => "LTR isolate",
        '\u{2067}' => "RTL isolate",
        '\u{2068}' => "first strong isolate",
        '\u{2069}' => "pop directional isolate",
        c if is_tag(c) => "tag character",
        _ => return None,
    })
}

/// A visible non-ASCII neighbour (emoji, Devanagari, Arabic, …).
fn non_latin_visible(c: Option<&char>) -> bool {
    c.is_some_and(|&c| !c.is_ascii() && !c.is_whitespace() && invisible_name(c).is_none())
}

/// Joiners between emoji or inside Indic/Arabic words shape text; they hide nothing.
fn legitimate_joiner(chars: &[char], i: usize) -> bool {
    matches!(chars[i], '\u{200C}' | '\u{200D}')
        && i > 0
        && non_latin_visible(chars.get(i - 1))
        && non_latin_visible(chars.get(i + 1))
}

/// End of the tag run starting at `i`, and whether it is an emoji flag (🏴 + tags + cancel).
fn tag_run(chars: &[char], i: usize) -> (usize, bool) {
    let end = chars[i..]
        .iter()
        .position(|&c| !is_tag(c))
        .map_or(chars.len(), |p| i + p);
    let flag =
        i > 0 && chars[i - 1] == '\u{1F3F4}' && chars[end - 1] == '\u{E007F}' && end - i <= 8;
    (end, flag)
}

/// The ASCII a tag run spells.
fn decode_tags(run: &[char]) -> String {
    run.iter()
        .filter_map(|&c| char::from_u32(u32::from(c) - 0xE0000))
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .collect()
}

/// First hidden character of a line, described for `Finding::matched`.
fn first_hidden(chars: &[char], at_file_start: bool) -> Option<String> {
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let Some(name) = invisible_name(c) else {
            i += 1;
            continue;
        };
        if is_tag(c) {
            let (end, flag) = tag_run(chars, i);
            if !flag {
                let hidden = decode_tags(&chars[i..end]);
                return Some(format!(
                    "U+{:04X} ({name}) hides \"{}\"",
                    u32::from(c),
                    redact(&hidden)
                ));
            }
            i = end;
            continue;
        }
        let bom = c == '\u{FEFF}' && i == 0 && at_file_start;
        if !bom && !legitimate_joiner(chars, i) {
            return Some(format!("U+{:04X} ({name})", u32::from(c)));
        }
        i += 1;
    }
    None
}

/// Appends one `invisible_unicode` finding per line that hides characters.
pub(super) fn scan(file: &str, text: &str, out: &mut Vec<Finding>) {
    if text.is_ascii() {
        return;
    }
    for (index, line) in text.split('\n').enumerate() {
        if line.is_ascii() {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        if let Some(matched) = first_hidden(&chars, index == 0) {
            out.push(Finding {
                pattern_id: "invisible_unicode",
                severity: Severity::High,
                category: INJECTION,
                file: file.to_owned(),
                line: index + 1,
                matched: shorten(&matched),
                description: DESCRIPTION,
            });
        }
    }
}
