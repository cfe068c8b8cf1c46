//! The `sessions` table: one row per segment; segments of one conversation are linked by
//! compression (`continued_by` points at the newer segment), branches and subagents by parent.

use rusqlite::{Connection, OptionalExtension, Row, Transaction, params};

use super::{StoreError, now_ms};

/// How a segment relates to its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lineage {
    Root,
    Compression,
    Branch,
    Subagent,
}

impl Lineage {
    fn as_str(self) -> &'static str {
        match self {
            Self::Root => "root",
            Self::Compression => "compression",
            Self::Branch => "branch",
            Self::Subagent => "subagent",
        }
    }
}

/// A session row as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub id: String,
    pub parent_session_id: Option<String>,
    pub source: String,
    pub title: Option<String>,
    pub model: String,
    pub cwd: String,
    pub busy_policy: String,
    pub created_at: i64,
    pub updated_at: i64,
    pub message_count: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub cache_read_tokens: i64,
    pub cache_write_tokens: i64,
    pub reasoning_tokens: i64,
    pub cost_usd: Option<f64>,
    pub last_seq: i64,
    /// The conversation this segment belongs to: its first segment's id (the live session's
    /// key, unchanged by compression).
    pub conversation_id: String,
    /// A seq at least as high as any the daemon handed out for this segment's conversation.
    pub seq_reserved: i64,
}

impl SessionRow {
    /// The seq after which this conversation's next event is numbered.
    pub fn seq_floor(&self) -> u64 {
        self.last_seq.max(self.seq_reserved).max(0) as u64
    }
}

/// What a new session needs.
#[derive(Debug, Clone)]
pub struct NewSession {
    pub source: String,
    pub title: Option<String>,
    pub model: String,
    pub cwd: String,
    pub parent_session_id: Option<String>,
    pub lineage: Lineage,
}

impl NewSession {
    /// A new conversation from `source` (no title, model or directory yet).
    pub fn root(source: impl Into<String>) -> Self {
        NewSession {
            source: source.into(),
            title: None,
            model: String::new(),
            cwd: String::new(),
            parent_session_id: None,
            lineage: Lineage::Root,
        }
    }
}

/// Which sessions to list.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    pub limit: u32,
    pub source: Option<String>,
    /// Every segment rather than one row (the newest segment) per conversation.
    pub all_segments: bool,
}

const COLUMNS: &str = "id, parent_session_id, source, title, model, cwd, busy_policy, created_at, \
    updated_at, message_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
    reasoning_tokens, cost_usd, last_seq, coalesce(conversation_id, id), seq_reserved";

fn from_row(row: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        id: row.get(0)?,
        parent_session_id: row.get(1)?,
        source: row.get(2)?,
        title: row.get(3)?,
        model: row.get(4)?,
        cwd: row.get(5)?,
        busy_policy: row.get(6)?,
        created_at: row.get(7)?,
        updated_at: row.get(8)?,
        message_count: row.get(9)?,
        input_tokens: row.get(10)?,
        output_tokens: row.get(11)?,
        cache_read_tokens: row.get(12)?,
        cache_write_tokens: row.get(13)?,
        reasoning_tokens: row.get(14)?,
        cost_usd: row.get(15)?,
        last_seq: row.get(16)?,
        conversation_id: row.get(17)?,
        seq_reserved: row.get(18)?,
    })
}

/// Insert a session with a fresh id (Hermes' `YYYYMMDD_HHMMSS_xxxxxx` shape).
pub fn insert_session(tx: &Transaction<'_>, new: &NewSession) -> Result<SessionRow, StoreError> {
    insert_session_as(tx, None, new)
}

/// Insert a root session with the id a client chose (the API server's `api-…` ids), or a new id
/// when `chosen` is `None`. A chosen id that exists is an error, never a second row.
pub fn insert_session_as(
    tx: &Transaction<'_>,
    chosen: Option<&str>,
    new: &NewSession,
) -> Result<SessionRow, StoreError> {
    let now = now_ms();
    let mut attempt = 0;
    loop {
        let id = match chosen {
            Some(id) => id.to_string(),
            None => crate::ids::session_id(),
        };
        let inserted = tx
            .execute(
                "INSERT OR IGNORE INTO sessions
                   (id, parent_session_id, lineage, source, title, model, cwd, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
                params![
                    id,
                    new.parent_session_id,
                    new.lineage.as_str(),
                    new.source,
                    new.title,
                    new.model,
                    new.cwd,
                    now
                ],
            )
            .map_err(StoreError::sql("insert session"))?;
        if inserted == 1 {
            if new.lineage == Lineage::Compression
                && let Some(parent) = &new.parent_session_id
            {
                tx.execute(
                    "UPDATE sessions SET continued_by = ?1 WHERE id = ?2",
                    params![id, parent],
                )
                .map_err(StoreError::sql("link compressed segment"))?;
            }
            return get_session(tx, &id)?.ok_or(StoreError::SessionNotFound(id));
        }
        if chosen.is_some() {
            return Err(StoreError::Task(format!("session {id} exists already")));
        }
        attempt += 1;
        if attempt > 16 {
            return Err(StoreError::Task(
                "could not allocate a unique session id".into(),
            ));
        }
    }
}

/// The session with exactly this id.
pub fn get_session(conn: &Connection, id: &str) -> Result<Option<SessionRow>, StoreError> {
    conn.query_row(
        &format!("SELECT {COLUMNS} FROM sessions WHERE id = ?1"),
        [id],
        from_row,
    )
    .optional()
    .map_err(StoreError::sql("get session"))
}

/// Resolve any id of a conversation to its newest segment.
pub fn resolve_conversation(conn: &Connection, id: &str) -> Result<SessionRow, StoreError> {
    let newest: Option<String> = conn
        .query_row(
            "WITH RECURSIVE chain(id, next) AS (
                 SELECT id, continued_by FROM sessions WHERE id = ?1
                 UNION ALL
                 SELECT s.id, s.continued_by FROM sessions s JOIN chain c ON s.id = c.next
             )
             SELECT id FROM chain WHERE next IS NULL LIMIT 1",
            [id],
            |row| row.get(0),
        )
        .optional()
        .map_err(StoreError::sql("resolve session"))?;
    let newest = newest.ok_or_else(|| StoreError::SessionNotFound(id.to_string()))?;
    get_session(conn, &newest)?.ok_or(StoreError::SessionNotFound(newest))
}

/// Resolve what a user typed to a conversation's newest segment: any segment id, else a title
/// (case-insensitive; the most recently active conversation with that title).
pub fn resolve_reference(conn: &Connection, reference: &str) -> Result<SessionRow, StoreError> {
    match resolve_conversation(conn, reference) {
        Err(StoreError::SessionNotFound(_)) => {
            let by_title: Option<String> = conn
                .query_row(
                    "SELECT id FROM sessions WHERE title = ?1 COLLATE NOCASE
                       AND continued_by IS NULL ORDER BY updated_at DESC LIMIT 1",
                    [reference.trim()],
                    |row| row.get(0),
                )
                .optional()
                .map_err(StoreError::sql("find session by title"))?;
            match by_title {
                Some(id) => resolve_conversation(conn, &id),
                None => Err(StoreError::SessionNotFound(reference.to_string())),
            }
        }
        other => other,
    }
}

/// Sessions, most recently updated first.
pub fn list_sessions(
    conn: &Connection,
    filter: &ListFilter,
) -> Result<Vec<SessionRow>, StoreError> {
    // `--all`: every segment, and the reviews and subagents hidden otherwise.
    let heads_only = if filter.all_segments {
        ""
    } else {
        "AND continued_by IS NULL AND (?1 IS NOT NULL OR lineage != 'subagent')"
    };
    let sql = format!(
        "SELECT {COLUMNS} FROM sessions
         WHERE (?1 IS NULL OR source = ?1) {heads_only}
         ORDER BY updated_at DESC, id DESC LIMIT ?2"
    );
    let mut stmt = conn
        .prepare(&sql)
        .map_err(StoreError::sql("list sessions"))?;
    let rows = stmt
        .query_map(params![filter.source, i64::from(filter.limit)], from_row)
        .map_err(StoreError::sql("list sessions"))?;
    rows.collect::<Result<_, _>>()
        .map_err(StoreError::sql("list sessions"))
}

/// Delete the conversation `id` belongs to: every segment, and the reviews and subagents
/// started from it ([`owned_sessions`]); messages and events go with them. Returns the ids of
/// the sessions removed (their files go too: see `session_files`).
pub fn delete_conversation(tx: &Transaction<'_>, id: &str) -> Result<Vec<String>, StoreError> {
    let ids = owned_sessions(tx, id)?;
    for session in ids.iter().rev() {
        tx.execute("DELETE FROM sessions WHERE id = ?1", [session])
            .map_err(StoreError::sql("delete session"))?;
    }
    Ok(ids)
}

/// Every session that goes when the conversation `id` belongs to is deleted: its segments, and
/// the background reviews and subagents started from them (with their own segments), oldest
/// first. Branches are conversations of their own and stay. Not found when `id` is unknown.
pub fn owned_sessions(conn: &Connection, id: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "WITH RECURSIVE owned(id, depth) AS (
                 SELECT coalesce(conversation_id, id), 0 FROM sessions WHERE id = ?1
                 UNION
                 SELECT s.id, o.depth + 1 FROM sessions s JOIN owned o ON s.parent_session_id = o.id
                  WHERE s.lineage IN ('compression', 'subagent')
             )
             SELECT id FROM owned ORDER BY depth",
        )
        .map_err(StoreError::sql("find a conversation's sessions"))?;
    let ids: Vec<String> = stmt
        .query_map([id], |row| row.get(0))
        .map_err(StoreError::sql("find a conversation's sessions"))?
        .collect::<Result<_, _>>()
        .map_err(StoreError::sql("find a conversation's sessions"))?;
    if ids.is_empty() {
        return Err(StoreError::SessionNotFound(id.to_string()));
    }
    Ok(ids)
}

/// The stored system prompt of a session, if one was built.
pub fn system_prompt(conn: &Connection, id: &str) -> Result<Option<String>, StoreError> {
    conn.query_row(
        "SELECT system_prompt FROM sessions WHERE id = ?1",
        [id],
        |row| row.get(0),
    )
    .optional()
    .map(Option::flatten)
    .map_err(StoreError::sql("read system prompt"))
}

/// Store the system prompt built for a session (reused byte-for-byte afterwards).
pub fn set_system_prompt(tx: &Transaction<'_>, id: &str, prompt: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE sessions SET system_prompt = ?1 WHERE id = ?2",
        params![prompt, id],
    )
    .map_err(StoreError::sql("store system prompt"))?;
    Ok(())
}

/// Set one text column of a conversation's newest segment; returns the updated row.
fn set_text(
    tx: &Transaction<'_>,
    id: &str,
    sql: &str,
    value: Option<&str>,
    context: &'static str,
) -> Result<SessionRow, StoreError> {
    let row = resolve_conversation(tx, id)?;
    tx.execute(sql, params![value, row.id])
        .map_err(StoreError::sql(context))?;
    resolve_conversation(tx, &row.id)
}

/// Rename a conversation (`None` clears the title).
pub fn set_title(
    tx: &Transaction<'_>,
    id: &str,
    title: Option<&str>,
) -> Result<SessionRow, StoreError> {
    set_text(
        tx,
        id,
        "UPDATE sessions SET title = ?1 WHERE id = ?2",
        title,
        "rename session",
    )
}

/// What a conversation does with input that arrives during a turn.
pub fn set_busy_policy(
    tx: &Transaction<'_>,
    id: &str,
    policy: &str,
) -> Result<SessionRow, StoreError> {
    set_text(
        tx,
        id,
        "UPDATE sessions SET busy_policy = ?1 WHERE id = ?2",
        Some(policy),
        "set the busy policy",
    )
}

/// Mark a session ended with `reason` (a finished cron run: `cron_complete`, as Hermes writes).
pub fn end_session(tx: &Transaction<'_>, id: &str, reason: &str) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE sessions SET ended_at = ?2, end_reason = ?3 WHERE id = ?1 AND ended_at IS NULL",
        params![id, super::now_ms(), reason],
    )
    .map_err(StoreError::sql("end session"))?;
    Ok(())
}
