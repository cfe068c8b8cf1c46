//! Plain full-text search over stored messages (FTS5), one best hit per conversation segment.

use rusqlite::{Connection, params};

use super::StoreError;

/// A message that matched a search.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageHit {
    pub session_id: String,
    pub title: Option<String>,
    pub source: String,
    pub message_id: i64,
    pub role: String,
    pub content: String,
    pub created_at: i64,
}

/// Turn what a user or model typed into an FTS5 query that cannot be a syntax error: every
/// word becomes a quoted term (so `-`, `:` and quotes are literal), and the words AND, OR and
/// NOT keep their meaning.
pub fn fts_query(text: &str) -> Option<String> {
    let terms: Vec<String> = text
        .split_whitespace()
        .map(|word| match word {
            "AND" | "OR" | "NOT" => word.to_string(),
            _ => format!("\"{}\"", word.replace('"', "\"\"")),
        })
        .collect();
    let meaningful = terms.iter().any(|t| t.starts_with('"'));
    meaningful.then(|| {
        let mut joined = terms.join(" ");
        // An operator at either end is a syntax error; drop it.
        for op in ["AND", "OR", "NOT"] {
            if let Some(rest) = joined.strip_prefix(op) {
                joined = rest.trim_start().to_string();
            }
            if let Some(rest) = joined.strip_suffix(op) {
                joined = rest.trim_end().to_string();
            }
        }
        joined
    })
}

/// The best-ranked matching message of each session, best sessions first, skipping `exclude`.
pub fn search_messages(
    conn: &Connection,
    query: &str,
    exclude_session: Option<&str>,
    role: Option<&str>,
    limit: u32,
) -> Result<Vec<MessageHit>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "WITH hits AS (
                 SELECT rowid AS id, bm25(messages_fts) AS rank FROM messages_fts
                 WHERE messages_fts MATCH ?1 ORDER BY rank LIMIT 2000
             )
             SELECT m.session_id, s.title, s.source, m.id, m.role, m.content, m.created_at,
                    min(h.rank) AS best
             FROM hits h
             JOIN messages m ON m.id = h.id
             JOIN sessions s ON s.id = m.session_id
             WHERE (?2 IS NULL OR m.session_id != ?2)
               AND (?3 IS NULL OR m.role = ?3)
               AND m.role IN ('user', 'assistant')
             GROUP BY m.session_id
             ORDER BY best
             LIMIT ?4",
        )
        .map_err(StoreError::sql("prepare search"))?;
    let rows = stmt
        .query_map(
            params![query, exclude_session, role, i64::from(limit)],
            |row| {
                Ok(MessageHit {
                    session_id: row.get(0)?,
                    title: row.get(1)?,
                    source: row.get(2)?,
                    message_id: row.get(3)?,
                    role: row.get(4)?,
                    content: row.get(5)?,
                    created_at: row.get(6)?,
                })
            },
        )
        .map_err(StoreError::sql("search messages"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("search messages"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_quote_words_and_keep_operators() {
        assert_eq!(
            fts_query("deploy nginx").as_deref(),
            Some("\"deploy\" \"nginx\"")
        );
        assert_eq!(
            fts_query("a OR b-c \"x").as_deref(),
            Some("\"a\" OR \"b-c\" \"\"\"x\"")
        );
        assert_eq!(fts_query("OR nginx AND").as_deref(), Some("\"nginx\""));
        assert_eq!(fts_query("  AND "), None);
    }
}
