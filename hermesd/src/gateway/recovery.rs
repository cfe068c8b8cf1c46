//! Finishing what a crash or a stop left, once per start, when the platform first connects:
//! replies recorded but never sent go now; an answer's send that went out unacknowledged goes
//! again once, marked "(recovered)"; a final edit is repeated (idempotent); a turn that was cut is not run
//! again — its chat gets one notice offering `/retry`; messages stored but never started run.

use std::sync::Arc;

use super::{Gateway, Link, chats::chat_of, outbox};
use crate::store::{self, inbound_state, outbox_state};

/// Marks a message re-sent after a restart.
pub const RECOVERED: &str = "(recovered)";
/// The state of a row re-sent once already (never re-sent again).
const RESENT: &str = "resent";

pub async fn finish(gateway: &Arc<Gateway>, link: &Arc<Link>) {
    let platform = link.platform();
    let store = &gateway.runner.store;
    let left = store
        .read(move |conn| {
            Ok((
                store::outbox_unfinished(conn, platform)?,
                store::inbound_in_state(conn, platform, inbound_state::RUNNING)?,
                store::inbound_in_state(conn, platform, inbound_state::RECEIVED)?,
            ))
        })
        .await;
    let (outbox_rows, cut, waiting) = match left {
        Ok(left) => left,
        Err(e) => {
            tracing::error!(error = %e, "gateway: cannot read what the last run left");
            return;
        }
    };
    let cut_ids: Vec<i64> = cut.iter().map(|r| r.id).collect();
    for mut row in outbox_rows {
        match row.state.as_str() {
            outbox_state::PENDING => {
                outbox::deliver(gateway, link, row).await;
            }
            outbox_state::FINAL => {
                outbox::deliver(gateway, link, row).await;
            }
            // The streamed message of a turn that was cut: the notice below stands for it.
            outbox_state::ATTEMPTED if row.inbound_id.is_some_and(|id| cut_ids.contains(&id)) => {
                outbox::mark(gateway, row.id, outbox_state::DONE, None, None).await;
            }
            outbox_state::ATTEMPTED => {
                tracing::info!(
                    outbox = row.id,
                    "gateway: re-sending an unacknowledged message once"
                );
                row.text = format!("{RECOVERED} {}", row.text);
                outbox::mark(gateway, row.id, RESENT, Some(row.text.clone()), None).await;
                row.message_id = None;
                outbox::deliver(gateway, link, row).await;
            }
            // A streamed answer whose turn was cut (its chat is told below), or a row re-sent
            // once already: nothing more is sent for it.
            _ => outbox::mark(gateway, row.id, outbox_state::DONE, None, None).await,
        }
    }
    for row in cut {
        let id = row.id;
        let chat = chat_of(&row);
        let notice = "⚠️ The agent was restarted while answering your last message, so it was not finished. Send /retry to run it again.";
        let recorded = store
            .write(move |tx| {
                store::set_inbound_state(tx, id, inbound_state::INTERRUPTED, None)?;
                store::outbox_add(
                    tx,
                    platform,
                    Some(id),
                    &chat.chat_id,
                    &chat.thread_id,
                    notice,
                    outbox_state::PENDING,
                )
            })
            .await;
        match recorded {
            Ok(outbox_id) => {
                let pending = store::OutboxRow {
                    id: outbox_id,
                    inbound_id: Some(id),
                    platform: platform.to_string(),
                    chat_id: row.chat_id.clone(),
                    thread_id: row.thread_id.clone(),
                    text: notice.to_string(),
                    state: outbox_state::PENDING.to_string(),
                    message_id: None,
                };
                outbox::deliver(gateway, link, pending).await;
            }
            Err(e) => tracing::error!(error = %e, "gateway: cannot record an interrupted turn"),
        }
    }
    if !cut_ids.is_empty() {
        tracing::info!(
            turns = cut_ids.len(),
            "gateway: chats told that their turns were cut"
        );
    }
    for row in waiting {
        gateway.chats.queue(gateway, link, row).await;
    }
}
