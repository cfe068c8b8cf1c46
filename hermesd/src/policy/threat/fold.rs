//! Normalisation before matching. NFKC first, as Hermes does, so full-width and compatibility
//! forms (`ｃａｔ`, `ﬁ`) meet the patterns as the ASCII they look like. Then look-alikes: a
//! character whose UTS #39 skeleton (Unicode's confusables table) is one ASCII character of its
//! own kind — a letter or digit for a letter or digit, punctuation for punctuation — becomes
//! that character, so Cyrillic `і`, `о`, `у` and Greek `ο` spell `ignore` and `you`, and `∕`
//! is a slash. A capital that looks like `l` (Cyrillic `І`, Greek `Ι`) is the capital `I` it
//! stands for. A look-alike of several characters (`ɱ` is not `rn`) or of another kind (an
//! Arabic zero that looks like a dot) is not folded: one character stays one character, a word
//! character a word character. Then, for Hermes' threat patterns, one ASCII byte per character,
//! so the engine's ASCII classes mean what Python's Unicode ones mean: another non-ASCII letter
//! or digit becomes `0` (a word character), non-ASCII white space a space, anything else a
//! byte no pattern names; the C0 separators U+001C–U+001F, white space to Python, a space too.
//! Counts stay characters (`[^\n]{0,2048}` is 2,048 characters, as in Python) and no match
//! Python finds is lost. The one difference: a pattern's explicit ASCII class (`[A-Za-z0-9…]`)
//! also accepts the `0` a folded letter became, so a 20-character quoted secret with accented
//! letters counts as one.

use std::borrow::Cow;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfkc_quick};

/// What a non-ASCII letter or digit becomes.
const WORD: u8 = b'0';
/// What any other non-ASCII, non-space character becomes: a control byte no pattern names.
const OTHER: u8 = 0x1a;

/// `text` in NFKC; borrowed when it already is (the quick check settles almost every text).
pub(crate) fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    // ASCII is NFKC and starts no reordering: looking at the other characters settles it (a
    // skipped ASCII character can only make the check more cautious, never wrongly `Yes`).
    match is_nfkc_quick(text.chars().filter(|c| !c.is_ascii())) {
        IsNormalized::Yes => Cow::Borrowed(text),
        _ => Cow::Owned(text.nfkc().collect()),
    }
}

/// Python's white space that the ASCII `\s` lacks: the file, group, record and unit separators.
fn is_c0_separator(byte: u8) -> bool {
    (0x1c..=0x1f).contains(&byte)
}

/// The byte a non-ASCII character becomes: a space, its ASCII look-alike, a word character, or
/// [`OTHER`].
fn fold_char(c: char) -> u8 {
    if c.is_whitespace() {
        b' '
    } else if let Some(ascii) = lookalike(c) {
        ascii
    } else if c.is_alphanumeric() {
        WORD
    } else {
        OTHER
    }
}

/// Whether ASCII `b` is a word character (`\w`).
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Blocks of ideographs and syllables (CJK, Hangul), thousands of characters of which the
/// confusables table maps only those of [`IDEOGRAPH_LOOKALIKES`] to one ASCII character (a
/// unit test holds this against the table): the others skip the skeleton, the costly part of
/// folding, which text in these scripts would otherwise pay for most of its characters.
const IDEOGRAPH_BLOCKS: &[std::ops::RangeInclusive<u32>] = &[
    0x3400..=0x4dbf,
    0x4e00..=0x9fff,
    0xac00..=0xd7a3,
    0xf900..=0xfaff,
    0x2_0000..=0x3_ffff,
];
const IDEOGRAPH_LOOKALIKES: &[char] = &['\u{4e05}', '\u{4e2b}', '\u{4e36}', '\u{4e3f}'];

/// The ASCII character non-ASCII `c` looks like: its UTS #39 skeleton when that is one printable
/// ASCII character of the same kind (word character or not); `I` for a capital whose skeleton is
/// `l` (the table's prototype for `I`, `l`, `1` and `|`).
fn lookalike(c: char) -> Option<u8> {
    let code = u32::from(c);
    if IDEOGRAPH_BLOCKS.iter().any(|block| block.contains(&code))
        && !IDEOGRAPH_LOOKALIKES.contains(&c)
    {
        return None;
    }
    skeleton_lookalike(c)
}

/// [`lookalike`] from the confusables table, for any character.
fn skeleton_lookalike(c: char) -> Option<u8> {
    let mut buf = [0; 4];
    let mut skeleton = unicode_security::skeleton(c.encode_utf8(&mut buf));
    let (Some(first), None) = (skeleton.next(), skeleton.next()) else {
        return None;
    };
    let b = u8::try_from(first).ok().filter(u8::is_ascii_graphic)?;
    if is_word(b) != c.is_alphanumeric() {
        return None;
    }
    Some(if b == b'l' && c.is_uppercase() {
        b'I'
    } else {
        b
    })
}

/// Marks a memoised character as a normalisation boundary (see [`Memo`]).
const STABLE: u8 = 0x80;

/// What each non-ASCII character met so far folds to, and whether it is a normalisation
/// boundary: combining class 0 and NFKC quick check `Yes`, so NFKC leaves it as it is and never
/// joins it with what comes before it (UAX #15, "stable code points"). NFKC then works segment
/// by segment, each from one boundary to the next, and a boundary followed by another boundary
/// (or ASCII, all boundaries) is copied without normalising anything. Direct-mapped: a clash
/// only recomputes, so the memo can never change a result, only its cost.
struct Memo {
    keys: [u32; 256],
    values: [u8; 256],
}

impl Memo {
    fn new() -> Self {
        // No non-ASCII character is U+0000, so 0 marks an empty slot.
        Self {
            keys: [0; 256],
            values: [0; 256],
        }
    }

    /// The folded byte of non-ASCII `c`, with [`STABLE`] set when it is a boundary.
    fn info(&mut self, c: char) -> u8 {
        let key = u32::from(c);
        let slot = ((key ^ (key >> 8)) & 0xff) as usize;
        if self.keys[slot] == key {
            return self.values[slot];
        }
        let value = char_info(c);
        self.keys[slot] = key;
        self.values[slot] = value;
        value
    }

    /// The folded byte of any character (ASCII as it is, the C0 separators a space).
    fn byte(&mut self, c: char) -> u8 {
        match u8::try_from(c) {
            Ok(b) if b.is_ascii() => ascii_byte(b),
            _ => self.info(c) & !STABLE,
        }
    }

    /// Whether `c` starts a normalisation segment (ASCII always does).
    fn is_boundary(&mut self, c: char) -> bool {
        c.is_ascii() || self.info(c) & STABLE != 0
    }
}

/// [`Memo::info`] computed: the folded byte, and [`STABLE`] for a boundary.
fn char_info(c: char) -> u8 {
    let stable =
        canonical_combining_class(c) == 0 && is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes;
    fold_char(c) | if stable { STABLE } else { 0 }
}

fn ascii_byte(b: u8) -> u8 {
    if is_c0_separator(b) { b' ' } else { b }
}

/// The bytes Hermes' threat patterns are matched against (see the module comment): the same
/// bytes as folding the text's whole NFKC form, but only the segments around characters that
/// are not boundaries are normalised; the rest is copied (ASCII) or folded a character at a
/// time (boundaries, which NFKC leaves unchanged).
pub(crate) fn for_patterns(text: &str) -> Cow<'_, [u8]> {
    let bytes = text.as_bytes();
    if bytes.is_ascii() && !bytes.iter().any(|&b| is_c0_separator(b)) {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut memo = Memo::new();
    let mut at = 0;
    while at < bytes.len() {
        let run = bytes[at..]
            .iter()
            .position(|b| !b.is_ascii())
            .map_or(bytes.len(), |p| at + p);
        let from = out.len();
        out.extend_from_slice(&bytes[at..run]);
        for b in &mut out[from..] {
            *b = ascii_byte(*b);
        }
        at = run;
        let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        let info = memo.info(c);
        if info & STABLE != 0 {
            out.push(info & !STABLE);
            at += c.len_utf8();
            continue;
        }
        // `c` may combine with the character before it (a boundary, folded as one byte) and
        // with those after it: normalise from that boundary to the next one.
        let start = text[..at].char_indices().next_back().map_or(0, |(i, _)| i);
        if start < at {
            out.pop();
        }
        let end = next_boundary(text, at + c.len_utf8(), &mut memo);
        out.extend(text[start..end].nfkc().map(|n| memo.byte(n)));
        at = end;
    }
    Cow::Owned(out)
}

/// `text` with every non-ASCII look-alike replaced by the ASCII character it looks like, and
/// non-ASCII white space by a space (see the module comment); other characters are kept. For
/// rules that read text rather than [`for_patterns`]' bytes (the skills guard's, which run on
/// NFKC text). Borrowed when nothing changes.
pub(crate) fn lookalikes(text: &str) -> Cow<'_, str> {
    Lookalikes::new().fold(text)
}

/// [`lookalikes`] for many texts in a row (the lines of one file), with one memo.
pub(crate) struct Lookalikes {
    memo: Memo,
}

impl Lookalikes {
    pub(crate) fn new() -> Self {
        Self { memo: Memo::new() }
    }

    /// `text` folded as [`lookalikes`] folds it.
    pub(crate) fn fold<'t>(&mut self, text: &'t str) -> Cow<'t, str> {
        if text.is_ascii() {
            return Cow::Borrowed(text);
        }
        let mut out: Option<String> = None;
        for (at, c) in text.char_indices() {
            let folded = match u8::try_from(c) {
                Ok(b) if b.is_ascii() => None,
                _ => Some(self.memo.info(c) & !STABLE).filter(|&b| b != WORD && b != OTHER),
            };
            match (folded, out.as_mut()) {
                (Some(b), Some(out)) => out.push(char::from(b)),
                (Some(b), None) => {
                    let mut started = String::with_capacity(text.len());
                    started.push_str(&text[..at]);
                    started.push(char::from(b));
                    out = Some(started);
                }
                (None, Some(out)) => out.push(c),
                (None, None) => {}
            }
        }
        out.map_or(Cow::Borrowed(text), Cow::Owned)
    }
}

/// Where the first boundary at or after `from` starts (the text's length if none does).
fn next_boundary(text: &str, from: usize, memo: &mut Memo) -> usize {
    text[from..]
        .char_indices()
        .find(|&(_, c)| memo.is_boundary(c))
        .map_or(text.len(), |(i, _)| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_is_borrowed_and_other_text_folds_one_byte_a_character() {
        assert!(matches!(for_patterns("plain text"), Cow::Borrowed(_)));
        assert_eq!(
            &*for_patterns("caf\u{e9}\u{a0}\u{2014}\u{ff43}at\u{1c}x"),
            b"caf0 \x1acat x"
        );
        assert_eq!(nfkc("\u{fb01}le"), "file");
        assert!(matches!(nfkc("na\u{ef}ve \u{1f600}"), Cow::Borrowed(_)));
    }

    #[test]
    fn lookalikes_fold_to_the_ascii_they_look_like_one_for_one() {
        // Cyrillic і, у, о, capital І; Greek ο; division slash; an Arabic zero (a digit that
        // looks like a dot stays a word character); ё (two characters' skeleton) stays a letter.
        assert_eq!(
            &*for_patterns(
                "\u{456}gn\u{3bf}re \u{443}\u{43e}u \u{406}T ~\u{2215}x \u{660} \u{451}"
            ),
            b"ignore you IT ~/x 0 0"
        );
        assert_eq!(
            lookalikes("\u{456}gn\u{3bf}re \u{406}T\u{2003}\u{660}\u{451} \u{6771}"),
            "ignore IT \u{660}\u{451} \u{6771}"
        );
        assert!(matches!(lookalikes("caf\u{e9} \u{6771}"), Cow::Borrowed(_)));
        assert_eq!(lookalike('\u{4cf}'), Some(b'l'));
        assert_eq!(lookalike('\u{431}'), Some(b'6'));
        assert_eq!(lookalike('\u{2502}'), None);
        assert_eq!(lookalike('\u{200b}'), None);
    }

    #[test]
    fn ideographs_skip_the_skeleton_only_where_the_table_has_no_ascii_lookalike() {
        for block in IDEOGRAPH_BLOCKS {
            for c in block.clone().filter_map(char::from_u32) {
                let table = skeleton_lookalike(c);
                assert_eq!(lookalike(c), table, "{c:?}");
                if !IDEOGRAPH_LOOKALIKES.contains(&c) {
                    let mut buf = [0; 4];
                    let mut skeleton = unicode_security::skeleton(c.encode_utf8(&mut buf));
                    let single_ascii = matches!(
                        (skeleton.next(), skeleton.next()),
                        (Some(first), None) if first.is_ascii()
                    );
                    assert!(!single_ascii, "{c:?} has an ASCII look-alike: list it");
                }
            }
        }
    }

    /// The slow path: the whole text in NFKC, then one byte a character.
    fn whole_text_fold(text: &str) -> Vec<u8> {
        let mut memo = Memo::new();
        text.nfkc().map(|c| memo.byte(c)).collect()
    }

    /// Pieces that exercise every path: plain ASCII and separators, boundaries (precomposed
    /// letters, CJK, emoji, dashes), and characters NFKC changes or joins: full-width forms,
    /// ligatures, compatibility spaces and squares, combining marks in and out of order, Hangul
    /// jamo, singletons, composition exclusions, kana voicing marks, a variation selector.
    const PIECES: &[&str] = &[
        "cat ",
        "ignore ",
        "x",
        " ",
        "\n",
        "\u{1c}",
        "~/.env",
        "caf\u{e9}",
        "\u{6771}\u{4eac}",
        "\u{1f389}",
        "\u{2014}",
        "\u{a0}",
        "\u{2003}",
        "\u{ff43}\u{ff41}\u{ff54}",
        "\u{fb01}",
        "\u{2460}",
        "\u{3300}",
        "e\u{301}",
        "\u{301}",
        "\u{316}\u{301}",
        "\u{301}\u{316}",
        "\u{1100}\u{1161}\u{11a8}",
        "\u{ac00}\u{11a8}",
        "\u{11a8}",
        "\u{f73}",
        "\u{344}",
        "\u{212b}",
        "\u{1e9b}\u{323}",
        "\u{958}",
        "\u{2126}",
        "\u{304b}\u{3099}",
        "\u{3099}",
        "\u{2600}\u{fe0f}",
        "\u{2024}",
        "\u{2026}",
        "\u{ff10}",
        "\u{b2}",
        "\u{1d400}",
        "\u{456}gnore",
        "\u{406}",
        "\u{3bf}",
        "\u{2215}",
        "\u{660}",
        "\u{456}\u{308}",
    ];

    #[test]
    fn segment_fold_equals_folding_the_whole_nfkc_text() {
        let mut rng = fastrand::Rng::with_seed(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.u64(..);
        for _ in 0..5_000 {
            let len = next() % 24 + 1;
            let text: String = (0..len)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            assert_eq!(
                &*for_patterns(&text),
                whole_text_fold(&text).as_slice(),
                "{text:?}"
            );
        }
        for piece in PIECES {
            let text = format!("a{piece}{piece}b");
            assert_eq!(&*for_patterns(&text), whole_text_fold(&text).as_slice());
        }
    }

    #[test]
    fn boundaries_are_folded_without_normalising() {
        let mut memo = Memo::new();
        for c in [
            '\u{e9}',
            '\u{6771}',
            '\u{1f389}',
            '\u{2014}',
            '\u{ac00}',
            '\u{fe0f}',
        ] {
            assert!(memo.is_boundary(c), "{c:?}");
        }
        for c in [
            '\u{301}', '\u{ff43}', '\u{fb01}', '\u{a0}', '\u{11a8}', '\u{3099}', '\u{f73}',
        ] {
            assert!(!memo.is_boundary(c), "{c:?}");
        }
        // U+00A0 and U+01A1 share a slot: a clash recomputes, it never mixes them up.
        for _ in 0..2 {
            assert_eq!(memo.info('\u{a0}'), b' ');
            assert_eq!(memo.info('\u{1a1}'), WORD | STABLE);
        }
        assert_eq!(memo.byte('\u{1f}'), b' ');
    }
}
