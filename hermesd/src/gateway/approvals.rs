//! Approval requests in a chat: the question becomes a message with buttons (once, session,
//! always, deny); a press by someone of the conversation that asked (in a group where each user
//! has their own, the asker only) — or `/approve [session|always]`, `/deny` there — answers it
//! in the live session, and the message is edited to say who decided what. At most
//! [`MAX_PENDING`] questions are remembered; the oldest go first (the turn's own timeout
//! denies an unanswered one).

use std::{collections::VecDeque, sync::Arc};

use hermes_proto::pb;

use super::{
    Gateway, Link,
    adapter::{Button, ChatRef, Inbound, Outgoing},
    routing::{self, Isolation},
};
use crate::{hub::Answer, store::InboundRow};

const MAX_PENDING: usize = 256;
const PREFIX: &str = "approve:";

/// A question waiting in a chat.
#[derive(Debug, Clone)]
struct Question {
    id: String,
    conversation: String,
    session_key: String,
    chat: ChatRef,
    message_id: Option<String>,
    command: String,
}

/// The questions waiting, oldest first.
#[derive(Debug, Default)]
pub struct Pending(std::sync::Mutex<VecDeque<Question>>);

impl Pending {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Question>> {
        match self.0.lock() {
            Ok(q) => q,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The question `id` asked in `chat`, taken when it belongs to the conversation
    /// `session_key`; `Err(())` when it belongs to another (it stays waiting).
    fn take_own(
        &self,
        id: &str,
        chat: &ChatRef,
        session_key: Option<&str>,
    ) -> Result<Option<Question>, ()> {
        let mut questions = self.lock();
        let Some(at) = questions
            .iter()
            .rposition(|q| q.id == id && q.chat == *chat)
        else {
            return Ok(None);
        };
        if questions.get(at).map(|q| q.session_key.as_str()) != session_key {
            return Err(());
        }
        Ok(questions.remove(at))
    }

    fn take(&self, pick: impl Fn(&Question) -> bool) -> Option<Question> {
        let mut questions = self.lock();
        let at = questions.iter().rposition(pick)?;
        questions.remove(at)
    }
}

/// Show the question `asked` of the turn answering `row`.
pub async fn ask(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    chat: &ChatRef,
    asked: &pb::ApprovalRequested,
) {
    let command: String = asked.command.chars().take(200).collect();
    let more = if asked.command.chars().count() > 200 {
        "…"
    } else {
        ""
    };
    let text = format!(
        "⚠️ **Dangerous command requires approval:**\n```\n{command}{more}\n```\nReason: {}\n\n\
         Press a button, or reply `/approve`, `/approve session`, `/approve always` or `/deny`.",
        asked.reason
    );
    let choices = ["once", "session", "always", "deny"];
    let buttons = choices
        .iter()
        .filter(|c| asked.choices.is_empty() || asked.choices.iter().any(|a| a == *c))
        .map(|choice| Button {
            label: label(choice).to_string(),
            data: format!("{PREFIX}{}:{choice}", asked.id),
        })
        .collect();
    let message = Outgoing {
        markdown: text,
        buttons,
        reply_to: None,
    };
    let conversation = gateway
        .runner
        .store
        .read({
            let key = row.session_key.clone();
            move |conn| crate::store::gateway_route(conn, &key)
        })
        .await
        .ok()
        .flatten()
        .unwrap_or_default();
    // Waiting before the buttons show: a press that comes at once finds its question.
    {
        let mut questions = gateway.approvals.lock();
        if questions.len() >= MAX_PENDING {
            questions.pop_front();
        }
        questions.push_back(Question {
            id: asked.id.clone(),
            conversation,
            session_key: row.session_key.clone(),
            chat: chat.clone(),
            message_id: None,
            command,
        });
    }
    let sent =
        super::outbox::retrying(gateway, link, false, || link.adapter.send(chat, &message)).await;
    match sent {
        Ok(id) => {
            let mut questions = gateway.approvals.lock();
            if let Some(question) = questions.iter_mut().find(|q| q.id == asked.id) {
                question.message_id = Some(id);
            }
        }
        Err(e) => tracing::warn!(error = %e, "gateway: the approval question was not shown"),
    }
}

fn label(choice: &str) -> &'static str {
    match choice {
        "once" => "✅ Once",
        "session" => "✅ This session",
        "always" => "✅ Always",
        _ => "❌ Deny",
    }
}

/// A button press (from an allowed user).
pub async fn pressed(gateway: &Arc<Gateway>, link: &Arc<Link>, update: Inbound) {
    let Some(press) = update.press else { return };
    let parsed = press
        .data
        .strip_prefix(PREFIX)
        .and_then(|rest| rest.rsplit_once(':'));
    let Some((id, choice)) = parsed else {
        let _ = link.adapter.answer_press(&press.id, "").await;
        return;
    };
    // The presser's conversation in this chat, as their own message would be routed.
    let settings = &gateway.runner.config().settings.gateway;
    let isolation = Isolation {
        group_per_user: settings.group_sessions_per_user,
        thread_per_user: settings.thread_sessions_per_user,
    };
    let presser = routing::session_key(
        link.platform(),
        update.kind,
        &update.chat.chat_id,
        &update.chat.thread_id,
        &update.user_id,
        isolation,
    );
    let question = gateway
        .approvals
        .take_own(id, &update.chat, presser.as_deref())
        .map(|question| {
            question.map(|mut question| {
                // The press names the message it came from: known even when the press beat
                // Telegram's answer to the question's own sendMessage.
                question.message_id = Some(press.message_id.clone());
                question
            })
        });
    let note = match question {
        Ok(Some(question)) => decide(gateway, link, question, choice, &update.user_name).await,
        Ok(None) => "That approval is no longer waiting.".to_string(),
        Err(()) => {
            tracing::info!(user = %update.user_id, "gateway: a press on someone else's approval was refused");
            "Only the one who asked can answer this.".to_string()
        }
    };
    if let Err(e) = link.adapter.answer_press(&press.id, &note).await {
        tracing::debug!(error = %e, "gateway: a button press was not acknowledged");
    }
}

/// `/approve [session|always]` or `/deny` in the chat of `row`; the reply to send.
pub async fn by_command(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    choice: &str,
) -> String {
    match gateway.approvals.take(|q| q.session_key == row.session_key) {
        Some(question) => decide(gateway, link, question, choice, &row.user_id).await,
        None => "Nothing is waiting for approval.".to_string(),
    }
}

async fn decide(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    question: Question,
    choice: &str,
    by: &str,
) -> String {
    let choice = match choice {
        "once" | "session" | "always" => choice,
        _ => "deny",
    };
    let answered = gateway
        .runner
        .hub
        .get(&question.conversation)
        .is_some_and(|live| {
            live.answer(
                &question.id,
                Answer {
                    text: choice.to_string(),
                    by: format!("{}:{by}", link.platform()),
                },
            )
        });
    if !answered {
        return "That approval is no longer waiting.".to_string();
    }
    let verdict = if choice == "deny" {
        "❌ Denied".to_string()
    } else {
        format!("✅ Approved ({choice})")
    };
    if let Some(message_id) = &question.message_id {
        let text = format!("{verdict} by {by}:\n```\n{}\n```", question.command);
        let edit = Outgoing::text(text);
        if let Err(e) = link.adapter.edit(&question.chat, message_id, &edit).await {
            tracing::debug!(error = %e, "gateway: the approval message was not updated");
        }
    }
    verdict
}
