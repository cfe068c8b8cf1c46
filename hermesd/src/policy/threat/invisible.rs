//! Invisible and direction-changing characters, the ones that hide instructions from a human
//! reader: zero-width characters, invisible operators, bidi embeddings, overrides and isolates
//! (Hermes' `INVISIBLE_CHARS`), and for skills also U+2061, U+180E and the Unicode tag block
//! (U+E0000–U+E007F, "ASCII smuggling"). Looked for in the raw text, before normalisation.

/// Hermes' invisible characters (`tools/threat_patterns.py`), in code-point order.
pub const INVISIBLE_CHARS: [char; 17] = [
    '\u{200b}', '\u{200c}', '\u{200d}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}', '\u{202e}',
    '\u{2060}', '\u{2062}', '\u{2063}', '\u{2064}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    '\u{feff}',
];

/// Hermes' invisible characters present in `text`, each once, in code-point order.
pub(crate) fn hermes_invisible_in(text: &str) -> Vec<char> {
    if text.is_ascii() {
        return Vec::new();
    }
    let mut seen = [false; INVISIBLE_CHARS.len()];
    // Each of them is encoded with the lead byte E2 (U+2000–U+2FFF) or EF (U+FEFF); lead bytes
    // never occur inside another character, so each hit starts a character.
    for at in memchr::memchr2_iter(0xe2, 0xef, text.as_bytes()) {
        let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
            continue;
        };
        if let Some(slot) = INVISIBLE_CHARS.iter().position(|&i| i == c) {
            seen[slot] = true;
        }
    }
    INVISIBLE_CHARS
        .iter()
        .zip(seen)
        .filter_map(|(&c, present)| present.then_some(c))
        .collect()
}

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// Readable name of an invisible character (the skills guard's wider set), `None` for visible.
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

/// A character that hides something.
pub(crate) struct Hidden {
    /// The character (the first of a tag run).
    pub c: char,
    /// Its readable name.
    pub name: &'static str,
    /// For a tag run: the ASCII it spells.
    pub spells: Option<String>,
}

/// The first character of `line` that hides something. Skipped as legitimate: a BOM at the
/// start of a file (`at_file_start`), joiners inside emoji or non-Latin words, emoji flag tag
/// sequences.
pub(crate) fn first_hidden(line: &str, at_file_start: bool) -> Option<Hidden> {
    if line.is_ascii() {
        return None;
    }
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let Some(name) = invisible_name(c) else {
            i += 1;
            continue;
        };
        if is_tag(c) {
            let (end, flag) = tag_run(&chars, i);
            if !flag {
                let spells = Some(decode_tags(&chars[i..end]));
                return Some(Hidden { c, name, spells });
            }
            i = end;
            continue;
        }
        let bom = c == '\u{FEFF}' && i == 0 && at_file_start;
        if !bom && !legitimate_joiner(&chars, i) {
            return Some(Hidden {
                c,
                name,
                spells: None,
            });
        }
        i += 1;
    }
    None
}
