//! CJK substring indexing: which characters count as CJK, the bigram transform stored in the
//! `messages_cjk` FTS5 table, the SQL functions the schema triggers call, and the migration.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;

/// Schema migration adding `messages_cjk`: a contentless FTS5 table holding, for each message
/// whose content contains CJK characters, the output of `hermes_cjk_terms(content)`. Triggers
/// keep it in step with `messages`, and the last statement indexes the rows already stored.
/// Run it only on a connection where [`register_functions`] was called; every connection that
/// later inserts, updates or deletes messages needs those functions too.
pub const CJK_MIGRATION: &str = r#"
    CREATE VIRTUAL TABLE messages_cjk USING fts5(
        content, content = '', contentless_delete = 1, tokenize = 'unicode61'
    );
    CREATE TRIGGER messages_cjk_insert AFTER INSERT ON messages
    WHEN hermes_has_cjk(new.content) BEGIN
        INSERT INTO messages_cjk (rowid, content) VALUES (new.id, hermes_cjk_terms(new.content));
    END;
    CREATE TRIGGER messages_cjk_delete AFTER DELETE ON messages
    WHEN hermes_has_cjk(old.content) BEGIN
        DELETE FROM messages_cjk WHERE rowid = old.id;
    END;
    CREATE TRIGGER messages_cjk_update AFTER UPDATE OF content ON messages BEGIN
        DELETE FROM messages_cjk WHERE rowid = old.id AND hermes_has_cjk(old.content);
        INSERT INTO messages_cjk (rowid, content)
            SELECT new.id, hermes_cjk_terms(new.content) WHERE hermes_has_cjk(new.content);
    END;
    INSERT INTO messages_cjk (rowid, content)
        SELECT id, hermes_cjk_terms(content) FROM messages WHERE hermes_has_cjk(content);
"#;

/// Register `hermes_has_cjk(text) -> 0/1` and `hermes_cjk_terms(text) -> text` on `conn`
/// (deterministic and innocuous, so schema triggers may call them).
pub fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8
        | FunctionFlags::SQLITE_DETERMINISTIC
        | FunctionFlags::SQLITE_INNOCUOUS;
    conn.create_scalar_function("hermes_has_cjk", 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(bytes) => i64::from(has_cjk(&String::from_utf8_lossy(bytes))),
            _ => 0,
        })
    })?;
    conn.create_scalar_function("hermes_cjk_terms", 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(bytes) => Some(cjk_terms(&String::from_utf8_lossy(bytes))),
            _ => None,
        })
    })
}

/// Whether `c` is a Han ideograph, kana or Hangul letter (CJK punctuation and symbols are not).
/// Every such character is a token character for SQLite's unicode61 tokenizer.
pub fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        // Han: unified ideographs, extension A, compatibility ideographs, extensions B–I.
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF
        | 0x20000..=0x2EBEF | 0x2F800..=0x2FA1F | 0x30000..=0x323AF
        // Letter-like marks of the CJK symbols block: 々 〆 〇, Hangzhou numerals, kana repeats.
        | 0x3005..=0x3007 | 0x3021..=0x3029 | 0x3031..=0x3035 | 0x303B
        // Hiragana (without the combining and spacing voicing marks), Katakana (without ゠ and ・).
        | 0x3041..=0x3096 | 0x309D..=0x309F | 0x30A1..=0x30FA | 0x30FC..=0x30FF
        | 0x31F0..=0x31FF | 0xFF66..=0xFF9F | 0x1B000..=0x1B16F
        // Hangul: syllables and jamo.
        | 0xAC00..=0xD7A3 | 0x1100..=0x11FF | 0x3131..=0x318E | 0xA960..=0xA97C | 0xD7B0..=0xD7FB
    )
}

/// Whether `text` contains at least one CJK character.
pub fn has_cjk(text: &str) -> bool {
    text.chars().any(is_cjk)
}

/// A piece of text: a run of CJK characters or the text between such runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece<'a> {
    Cjk(&'a str),
    Other(&'a str),
}

/// Split `text` into alternating CJK runs and other text, in order.
pub(super) fn pieces(text: &str) -> impl Iterator<Item = Piece<'_>> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let first = rest.chars().next()?;
        let cjk = is_cjk(first);
        let end = rest
            .char_indices()
            .find(|&(_, c)| is_cjk(c) != cjk)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(if cjk {
            Piece::Cjk(piece)
        } else {
            Piece::Other(piece)
        })
    })
}

/// Push the overlapping bigrams of a CJK run onto `out`, space-separated ("abcd" → "ab bc cd");
/// a one-character run is pushed as itself.
pub(super) fn push_bigrams(run: &str, out: &mut String) {
    let mut chars = run.chars();
    let Some(mut prev) = chars.next() else {
        return;
    };
    let mut single = true;
    for c in chars {
        if !single {
            out.push(' ');
        }
        out.push(prev);
        out.push(c);
        prev = c;
        single = false;
    }
    if single {
        out.push(prev);
    }
}

/// The text indexed in `messages_cjk`: other text kept as it is, each CJK run replaced by its
/// bigrams followed by its last character alone ("我喜欢编程" → "我喜 喜欢 欢编 编程 程"), so
/// that every character starts some token and a one-character prefix query finds it.
pub fn cjk_terms(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for piece in pieces(text) {
        match piece {
            Piece::Other(other) => out.push_str(other),
            Piece::Cjk(run) => {
                if !out.is_empty() && !out.ends_with(' ') {
                    out.push(' ');
                }
                push_bigrams(run, &mut out);
                let mut chars = run.chars();
                if let (Some(last), Some(_)) = (chars.next_back(), chars.next()) {
                    out.push(' ');
                    out.push(last);
                }
                out.push(' ');
            }
        }
    }
    out
}
