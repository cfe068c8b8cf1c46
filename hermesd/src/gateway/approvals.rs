//! Approval requests in a chat: the question becomes a message with buttons (once, session,
//! always, deny); a press — or `/approve [session|always]`, `/deny` — in the chat that asked
//! answers it in the live session, and the message is edited to say who decided what. Who may
//! answer is one rule ([`may_answer`]): the user who asked, or one of the owner's own
//! (`access::is_operator`) in the same conversation; "always" only the owner's own. At most
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
    /// The user whose message asked.
    asker: String,
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

    /// The newest question `pick` finds, taken when `allowed` says so; else the refusal, and
    /// it stays waiting.
    fn take_if(
        &self,
        pick: impl Fn(&Question) -> bool,
        allowed: impl FnOnce(&Question) -> Result<(), &'static str>,
    ) -> Result<Option<Question>, &'static str> {
        let mut questions = self.lock();
        let Some(at) = questions.iter().rposition(pick) else {
            return Ok(None);
        };
        if let Some(question) = questions.get(at) {
            allowed(question)?;
        }
        Ok(questions.remove(at))
    }
}

/// Who answers: the user `who`, in the conversation `conversation` (their session key there),
/// one of the owner's own or not.
struct Answerer<'a> {
    who: &'a str,
    conversation: Option<&'a str>,
    operator: bool,
}

/// Whether `by` may give `choice` to `question`: the asker may, and so may one of the owner's
/// own in the same conversation. What outlives the turn is for the owner's own: "always"
/// (every conversation's), and "session" where others share the conversation.
fn may_answer(question: &Question, by: &Answerer<'_>, choice: &str) -> Result<(), &'static str> {
    let own = !question.asker.is_empty() && question.asker == by.who;
    let same_conversation = by.conversation == Some(question.session_key.as_str());
    if !(own || by.operator && same_conversation) {
        return Err("Only the one who asked can answer this.");
    }
    if choice == "always" && !by.operator {
        return Err("Only the bot's owner can allow a command always; answer once.");
    }
    let shared = !routing::is_personal(
        &question.session_key,
        &question.chat.chat_id,
        &question.chat.thread_id,
    );
    if choice == "session" && shared && !by.operator {
        return Err(
            "Others share this conversation: only the bot's owner can allow a command for all of it; answer once.",
        );
    }
    Ok(())
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
            asker: row.user_id.clone(),
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
    let by = Answerer {
        who: &update.user_id,
        conversation: presser.as_deref(),
        operator: super::access::operator_now(gateway, link.platform(), &update.user_id).await,
    };
    let question = gateway
        .approvals
        .take_if(
            |q| q.id == id && q.chat == update.chat,
            |q| may_answer(q, &by, choice),
        )
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
        Err(why) => {
            tracing::info!(user = %update.user_id, why, "gateway: an approval press was refused");
            why.to_string()
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
    let chat = super::chats::chat_of(row);
    let by = Answerer {
        who: &row.user_id,
        conversation: Some(&row.session_key),
        operator: super::access::operator_now(gateway, link.platform(), &row.user_id).await,
    };
    let taken = gateway.approvals.take_if(
        |q| q.session_key == row.session_key && q.chat == chat,
        |q| may_answer(q, &by, choice),
    );
    match taken {
        Ok(Some(question)) => decide(gateway, link, question, choice, &row.user_id).await,
        Ok(None) => "Nothing is waiting for approval.".to_string(),
        Err(why) => why.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        Question {
            id: "appr_1".into(),
            conversation: "c1".into(),
            session_key: "agent:main:telegram:group:-5".into(),
            asker: "42".into(),
            chat: ChatRef {
                chat_id: "-5".into(),
                thread_id: String::new(),
            },
            message_id: None,
            command: "rm -rf x".into(),
        }
    }

    fn by<'a>(who: &'a str, conversation: &'a str, operator: bool) -> Answerer<'a> {
        Answerer {
            who,
            conversation: Some(conversation),
            operator,
        }
    }

    #[test]
    fn the_asker_or_the_owners_own_in_the_same_conversation() {
        let q = question();
        let shared = q.session_key.clone();
        assert!(may_answer(&q, &by("42", &shared, false), "once").is_ok());
        assert!(may_answer(&q, &by("43", &shared, false), "once").is_err());
        assert!(may_answer(&q, &by("7", &shared, true), "session").is_ok());
        assert!(
            may_answer(&q, &by("7", "agent:main:telegram:group:-5:7", true), "once").is_err(),
            "an owner's own elsewhere"
        );
        assert!(may_answer(&q, &by("42", &shared, false), "always").is_err());
        assert!(may_answer(&q, &by("42", &shared, true), "always").is_ok());
        // The question's conversation is the group's, shared: "session" would cover the others.
        assert!(may_answer(&q, &by("42", &shared, false), "session").is_err());
        let own_conversation = Question {
            session_key: "agent:main:telegram:group:-5:42".into(),
            ..question()
        };
        let mine = own_conversation.session_key.clone();
        assert!(may_answer(&own_conversation, &by("42", &mine, false), "session").is_ok());
        let nobody = Question {
            asker: String::new(),
            ..question()
        };
        assert!(may_answer(&nobody, &by("", &shared, false), "once").is_err());
    }

    #[test]
    fn a_refused_answer_leaves_the_question_waiting() {
        let pending = Pending::default();
        pending.lock().push_back(question());
        let refused = pending.take_if(|q| q.id == "appr_1", |_| Err("no"));
        assert_eq!(refused.map(|q| q.is_some()), Err("no"));
        let taken = pending.take_if(|q| q.id == "appr_1", |_| Ok(()));
        assert!(matches!(taken, Ok(Some(_))));
        assert!(matches!(pending.take_if(|_| true, |_| Ok(())), Ok(None)));
    }
}
