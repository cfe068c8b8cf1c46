//! Where the gateway's conversations live and where a platform's messages go by default: each
//! chat route also records its chat (platform, chat, thread, kind), so a conversation's chat is
//! known for as long as its route — `origin` delivery and the prompt's session context read it —
//! and each platform may have a home channel (`/sethome`, `hermesctl gateway home`).

use rusqlite::{Connection, OptionalExtension, Transaction, params};

use super::{StoreError, now_ms};

pub(super) const PLACES_MIGRATION: &str = r#"
ALTER TABLE gateway_routes ADD COLUMN platform TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_routes ADD COLUMN chat_id TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_routes ADD COLUMN thread_id TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_routes ADD COLUMN chat_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_routes ADD COLUMN chat_name TEXT NOT NULL DEFAULT '';
CREATE INDEX gateway_routes_session ON gateway_routes (session_id);
CREATE TABLE gateway_homes (
    platform TEXT PRIMARY KEY,
    chat_id TEXT NOT NULL,
    thread_id TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '',
    updated_at INTEGER NOT NULL
);
"#;

/// A chat on a platform: where a conversation's messages come from, or a home channel.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChatPlace {
    pub platform: String,
    pub chat_id: String,
    pub thread_id: String,
    /// `dm`, `group`, `channel` (empty for a home channel).
    pub kind: String,
    /// The chat's title or the user's name, as the platform gave it.
    pub name: String,
    /// Who the conversation is with when it is one person's (a DM, or a group chat kept per
    /// user); empty for a shared one and a home channel.
    pub user_id: String,
    pub user_name: String,
}

/// Migration 13: the sender's name and the chat's title of each inbound message, and the
/// person a route's conversation is with.
pub(super) const PEOPLE_MIGRATION: &str = r#"
ALTER TABLE gateway_inbound ADD COLUMN user_name TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_inbound ADD COLUMN chat_name TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_routes ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE gateway_routes ADD COLUMN user_name TEXT NOT NULL DEFAULT '';
"#;

/// Record the chat that the route `session_key` serves.
pub fn set_route_place(
    tx: &Transaction<'_>,
    session_key: &str,
    place: &ChatPlace,
) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE gateway_routes SET platform = ?2, chat_id = ?3, thread_id = ?4, chat_kind = ?5,
             chat_name = CASE WHEN ?6 = '' THEN chat_name ELSE ?6 END, user_id = ?7,
             user_name = CASE WHEN ?8 = '' THEN user_name ELSE ?8 END
         WHERE session_key = ?1",
        params![
            session_key,
            place.platform,
            place.chat_id,
            place.thread_id,
            place.kind,
            place.name,
            place.user_id,
            place.user_name
        ],
    )
    .map_err(StoreError::sql("record a route's chat"))?;
    Ok(())
}

/// The chat the conversation `conversation_id` is routed from, if it is a chat's.
pub fn conversation_place(
    conn: &Connection,
    conversation_id: &str,
) -> Result<Option<ChatPlace>, StoreError> {
    conn.query_row(
        "SELECT platform, chat_id, thread_id, chat_kind, chat_name, user_id, user_name
         FROM gateway_routes
         WHERE session_id = ?1 AND platform != '' ORDER BY updated_at DESC LIMIT 1",
        [conversation_id],
        |row| {
            Ok(ChatPlace {
                platform: row.get(0)?,
                chat_id: row.get(1)?,
                thread_id: row.get(2)?,
                kind: row.get(3)?,
                name: row.get(4)?,
                user_id: row.get(5)?,
                user_name: row.get(6)?,
            })
        },
    )
    .optional()
    .map_err(StoreError::sql("read a conversation's chat"))
}

/// The chats of `platform` that talked most recently, newest first, at most `limit`.
pub fn recent_places(
    conn: &Connection,
    platform: &str,
    limit: usize,
) -> Result<Vec<ChatPlace>, StoreError> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT platform, chat_id, thread_id, max(chat_kind), max(chat_name) FROM gateway_routes
             WHERE platform = ?1 AND chat_id != ''
             GROUP BY chat_id, thread_id ORDER BY max(updated_at) DESC LIMIT ?2",
        )
        .map_err(StoreError::sql("list recent chats"))?;
    let rows = stmt
        .query_map(params![platform, limit as i64], |row| {
            Ok(ChatPlace {
                platform: row.get(0)?,
                chat_id: row.get(1)?,
                thread_id: row.get(2)?,
                kind: row.get(3)?,
                name: row.get(4)?,
                ..ChatPlace::default()
            })
        })
        .and_then(Iterator::collect)
        .map_err(StoreError::sql("list recent chats"))?;
    Ok(rows)
}

/// Whether `chat_id` on `platform` has talked to the gateway (a route serves it).
pub fn chat_is_known(conn: &Connection, platform: &str, chat_id: &str) -> Result<bool, StoreError> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM gateway_routes WHERE platform = ?1 AND chat_id = ?2)",
        params![platform, chat_id],
        |row| row.get(0),
    )
    .map_err(StoreError::sql("look up a chat"))
}

/// Make `place` its platform's home channel.
pub fn set_home(tx: &Transaction<'_>, place: &ChatPlace) -> Result<(), StoreError> {
    tx.execute(
        "INSERT INTO gateway_homes (platform, chat_id, thread_id, name, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (platform) DO UPDATE SET chat_id = excluded.chat_id,
             thread_id = excluded.thread_id, name = excluded.name, updated_at = excluded.updated_at",
        params![
            place.platform,
            place.chat_id,
            place.thread_id,
            place.name,
            now_ms()
        ],
    )
    .map_err(StoreError::sql("set a home channel"))?;
    Ok(())
}

/// The home channel set for `platform` (by `/sethome` or `hermesctl gateway home`).
pub fn home(conn: &Connection, platform: &str) -> Result<Option<ChatPlace>, StoreError> {
    conn.query_row(
        "SELECT platform, chat_id, thread_id, name FROM gateway_homes WHERE platform = ?1",
        [platform],
        |row| {
            Ok(ChatPlace {
                platform: row.get(0)?,
                chat_id: row.get(1)?,
                thread_id: row.get(2)?,
                kind: String::new(),
                name: row.get(3)?,
                ..ChatPlace::default()
            })
        },
    )
    .optional()
    .map_err(StoreError::sql("read a home channel"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Store, set_gateway_route};

    #[tokio::test]
    async fn a_route_knows_its_chat_and_a_platform_its_home() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("t.db")).unwrap();
        let place = ChatPlace {
            platform: "telegram".into(),
            chat_id: "42".into(),
            thread_id: String::new(),
            kind: "dm".into(),
            name: "Ann".into(),
            ..ChatPlace::default()
        };
        let stored = place.clone();
        store
            .write(move |tx| {
                set_gateway_route(tx, "agent:main:telegram:dm:42", "s1")?;
                set_route_place(tx, "agent:main:telegram:dm:42", &stored)?;
                set_home(tx, &stored)
            })
            .await
            .unwrap();
        let (found, recent, home) = store
            .read(|conn| {
                Ok((
                    conversation_place(conn, "s1")?,
                    recent_places(conn, "telegram", 10)?,
                    home(conn, "telegram")?,
                ))
            })
            .await
            .unwrap();
        assert_eq!(found, Some(place.clone()));
        assert_eq!(recent, vec![place]);
        assert_eq!(home.unwrap().chat_id, "42");
        let none = store
            .read(|conn| conversation_place(conn, "s2"))
            .await
            .unwrap();
        assert_eq!(none, None);
    }
}
