//! Answering a group message in a thread of its own, where the platform's adapter opens one
//! (Discord's `auto_thread`, as Hermes does): asked only for a message the agent takes — judged,
//! stored, a group's and outside any thread — just before its answer, so a stranger's or an
//! unaddressed message never makes one. The message then belongs to the thread: its stored row
//! and conversation key move there, and later messages in the thread continue that
//! conversation. When the thread cannot be opened the answer goes to the chat itself.

use std::sync::Arc;

use super::{
    Gateway, Link,
    adapter::ChatKind,
    chats::chat_of,
    routing::{self, Isolation},
};
use crate::store::{self, InboundRow};

/// `row`, moved into a thread opened for its answer when the adapter opens one.
pub async fn open_if_wanted(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: InboundRow,
) -> InboundRow {
    let in_group = row.session_key.split(':').nth(3) == Some(ChatKind::Group.as_str());
    if !in_group || !row.thread_id.is_empty() || row.message_id.is_empty() {
        return row;
    }
    if super::commands::is_command(&row.text) {
        return row;
    }
    let chat = chat_of(&row);
    let thread = match link
        .adapter
        .open_thread(&chat, &row.message_id, &row.text)
        .await
    {
        Ok(Some(thread)) if !thread.is_empty() => thread,
        Ok(_) => return row,
        Err(e) => {
            tracing::warn!(platform = link.platform(), error = %e, "gateway: no thread for the answer; answering in the chat");
            return row;
        }
    };
    let config = gateway.runner.config();
    let settings = &config.settings.gateway;
    let isolation = Isolation {
        group_per_user: settings.group_sessions_per_user,
        thread_per_user: settings.thread_sessions_per_user,
    };
    let Some(key) = routing::session_key(
        link.platform(),
        ChatKind::Group,
        &row.chat_id,
        &thread,
        &row.user_id,
        isolation,
    ) else {
        return row;
    };
    let (id, moved_thread, moved_key) = (row.id, thread.clone(), key.clone());
    let moved = gateway
        .runner
        .store
        .write(move |tx| store::set_inbound_thread(tx, id, &moved_thread, &moved_key))
        .await;
    if let Err(e) = moved {
        tracing::warn!(error = %e, "gateway: the message could not be moved into its thread");
        return row;
    }
    InboundRow {
        thread_id: thread,
        session_key: key,
        ..row
    }
}
