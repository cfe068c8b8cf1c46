//! Embedded, append-only schema migrations tracked in `PRAGMA user_version`. Never edit a shipped
//! migration: add a new one at the end.

use rusqlite::Connection;

const MIGRATIONS: &[&str] = &[
    // 1: sessions with lineage, messages, the per-session event log, FTS5 over message text.
    r#"
    CREATE TABLE sessions (
        id                 TEXT PRIMARY KEY,
        parent_session_id  TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        lineage            TEXT NOT NULL DEFAULT 'root'
                           CHECK (lineage IN ('root', 'compression', 'branch', 'subagent')),
        continued_by       TEXT,
        source             TEXT NOT NULL,
        title              TEXT,
        model              TEXT NOT NULL DEFAULT '',
        cwd                TEXT NOT NULL DEFAULT '',
        system_prompt      TEXT,
        busy_policy        TEXT NOT NULL DEFAULT 'queue',
        created_at         INTEGER NOT NULL,
        updated_at         INTEGER NOT NULL,
        ended_at           INTEGER,
        end_reason         TEXT,
        message_count      INTEGER NOT NULL DEFAULT 0,
        input_tokens       INTEGER NOT NULL DEFAULT 0,
        output_tokens      INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
        cost_usd           REAL,
        last_seq           INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX sessions_by_update ON sessions (updated_at DESC);
    CREATE INDEX sessions_by_parent ON sessions (parent_session_id);
    CREATE INDEX sessions_heads ON sessions (updated_at DESC) WHERE continued_by IS NULL;

    CREATE TABLE messages (
        id            INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id    TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        role          TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
        content       TEXT NOT NULL DEFAULT '',
        tool_calls    TEXT,
        tool_call_id  TEXT,
        tool_name     TEXT,
        reasoning     TEXT,
        finish_reason TEXT,
        input_tokens  INTEGER,
        output_tokens INTEGER,
        created_at    INTEGER NOT NULL
    );
    CREATE INDEX messages_by_session ON messages (session_id, id);

    CREATE TABLE events (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        seq        INTEGER NOT NULL,
        turn_id    TEXT,
        kind       TEXT NOT NULL,
        payload    BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;

    CREATE VIRTUAL TABLE messages_fts USING fts5(
        content, content = 'messages', content_rowid = 'id', tokenize = 'unicode61'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
        INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
    END;
    "#,
    // 2: dangerous-command patterns the user approved "always".
    r#"
    CREATE TABLE command_allowlist (
        pattern_key TEXT PRIMARY KEY,
        created_at  INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 3: what hermesd knows about each skill directory: where it came from, the content it last
    // saw, and whether the model may see it.
    r#"
    CREATE TABLE skill_records (
        dir        TEXT PRIMARY KEY,
        name       TEXT NOT NULL,
        digest     TEXT NOT NULL,
        -- Paths, sizes and mtimes of its files when the digest was taken.
        fingerprint TEXT NOT NULL DEFAULT '',
        origin     TEXT NOT NULL CHECK (origin IN ('agent', 'bundled', 'installed', 'found', 'edited')),
        trust      TEXT NOT NULL CHECK (trust IN ('trusted', 'quarantined')),
        reason     TEXT,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 4: sessions imported from a Python Hermes state.db, for incremental re-imports.
    super::hermes_import::IMPORT_MIGRATION,
    // 5: CJK substring search: a bigram index of the messages that hold CJK text (its triggers
    // call functions the daemon registers on every connection, see `search::register_functions`).
    super::search::CJK_MIGRATION,
    // 6: full-text indexes merge their segments in the background (`fts_merge_step`), not in
    // whichever message write happens to trigger it (that cost a 30-40 ms tail per commit).
    r#"
    INSERT INTO messages_fts (messages_fts, rank) VALUES ('automerge', 0);
    INSERT INTO messages_cjk (messages_cjk, rank) VALUES ('automerge', 0);
    "#,
    // 7: cron jobs and their runs (a run is leased by its row before it starts).
    super::cron::CRON_MIGRATION,
    // 8: the hub's keys and numbering. `conversation_id` names the conversation a segment
    // belongs to (NULL: the segment is its own conversation's first), so a compression
    // hand-off never changes a live session's key; `seq_reserved` is a high-water mark ahead of
    // every seq handed out, stored or not, so numbering after a restart never reuses one.
    r#"
    ALTER TABLE sessions ADD COLUMN conversation_id TEXT;
    ALTER TABLE sessions ADD COLUMN seq_reserved INTEGER NOT NULL DEFAULT 0;
    WITH RECURSIVE chain(id, conversation) AS (
        SELECT id, id FROM sessions WHERE lineage != 'compression' OR parent_session_id IS NULL
        UNION ALL
        SELECT s.id, c.conversation FROM sessions s
          JOIN chain c ON s.parent_session_id = c.id AND s.lineage = 'compression'
    )
    UPDATE sessions SET conversation_id = (SELECT conversation FROM chain WHERE chain.id = sessions.id)
     WHERE lineage = 'compression';
    CREATE TRIGGER sessions_conversation AFTER INSERT ON sessions
      WHEN new.lineage = 'compression' AND new.conversation_id IS NULL
           AND new.parent_session_id IS NOT NULL
    BEGIN
        UPDATE sessions SET conversation_id =
            (SELECT coalesce(conversation_id, id) FROM sessions WHERE id = new.parent_session_id)
         WHERE id = new.id;
    END;
    "#,
    // 9: the gateway: polling offsets, chat routes, inbound messages, the outbox, pairing.
    super::gateway::GATEWAY_MIGRATION,
    // 10: each chat route's chat, and the platforms' home channels.
    super::gateway_places::PLACES_MIGRATION,
    // 11: cron deliveries waiting for their platform to connect.
    super::cron::PENDING_MIGRATION,
    // 12: a cron job's pre-run script, no-agent mode, and own provider and server.
    super::cron::SCRIPT_MIGRATION,
    // 13: who wrote each inbound message, and who a route's conversation is with.
    super::gateway_places::PEOPLE_MIGRATION,
    // 14: webhook delivery ids seen within the hour.
    super::webhook::WEBHOOK_MIGRATION,
    // 15: the API server's stored Responses.
    super::api_responses::RESPONSES_MIGRATION,
    // 16: digests of the signed webhook requests accepted within the hour.
    super::webhook::WEBHOOK_BODIES_MIGRATION,
    // 17: what a provider asks to be sent back with an assistant message (the Responses API's
    // encrypted reasoning items).
    "ALTER TABLE messages ADD COLUMN provider_items TEXT;",
];

/// The schema version this build writes.
pub const LATEST: i64 = MIGRATIONS.len() as i64;

/// The schema version of an open database.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |row| row.get(0))
}

/// Bring the database up to [`LATEST`], each step in its own transaction. The caller refuses
/// databases newer than [`LATEST`] first.
pub fn apply(conn: &Connection) -> rusqlite::Result<()> {
    apply_up_to(conn, LATEST)
}

/// Bring the database up to schema `target` (tests of a migration start from the one before).
pub fn apply_up_to(conn: &Connection, target: i64) -> rusqlite::Result<()> {
    // Migration 5's triggers and backfill call these.
    super::search::register_functions(conn)?;
    let current = version(conn)?;
    let steps = usize::try_from(target - current).unwrap_or(0);
    for (index, sql) in MIGRATIONS
        .iter()
        .enumerate()
        .skip(current.max(0) as usize)
        .take(steps)
    {
        let version = index as i64 + 1;
        conn.execute_batch(&format!(
            "BEGIN IMMEDIATE; {sql}\nPRAGMA user_version = {version}; COMMIT;"
        ))
        .inspect_err(|_| {
            let _ = conn.execute_batch("ROLLBACK");
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_fresh_and_is_idempotent() {
        let conn = Connection::open_in_memory().unwrap();
        apply(&conn).unwrap();
        apply(&conn).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(version, LATEST);
    }

    #[test]
    fn newer_schema_is_left_alone() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("PRAGMA user_version = 999").unwrap();
        apply(&conn).unwrap();
        assert_eq!(version(&conn).unwrap(), 999);
    }
}
