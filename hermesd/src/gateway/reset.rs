//! Chats that live for months: Hermes' session-reset policy, applied when a message arrives. A
//! conversation idle longer than `idle_minutes`, or last active before the latest daily
//! `at_hour`, starts over in a new conversation (the old one is kept) — never while one of its
//! background processes runs. The model is told it is a fresh conversation; the chat is told
//! too, unless the policy or the platform says not to.

use std::sync::Arc;

use chrono::{DateTime, Local, TimeDelta, TimeZone};

use super::{Gateway, Link, chats::chat_of, outbox, reply};
use crate::config::settings::{ResetPolicy, SessionResetSection};
use crate::store::{InboundRow, SessionRow, StoreError};

/// Why a conversation starts over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Idle,
    Daily,
}

impl Reason {
    /// What the model reads with the first message of the new conversation (Hermes' notes).
    pub fn note(self) -> &'static str {
        match self {
            Self::Idle => {
                "[System note: The user's previous session expired due to inactivity. This is a \
                 fresh conversation with no prior context.]"
            }
            Self::Daily => {
                "[System note: The user's session was automatically reset by the daily \
                 schedule. This is a fresh conversation with no prior context.]"
            }
        }
    }
}

/// Whether a conversation last active at `last` (epoch ms) is due for a reset at `now` under
/// `policy`: idle first, then daily, as Hermes checks them.
pub fn due(policy: &ResetPolicy, last: i64, now: DateTime<Local>) -> Option<Reason> {
    let last = DateTime::from_timestamp_millis(last)?.with_timezone(&Local);
    if policy.mode.idle() {
        let minutes = i64::try_from(policy.idle_minutes).unwrap_or(i64::MAX);
        let until = TimeDelta::try_minutes(minutes).and_then(|idle| last.checked_add_signed(idle));
        if until.is_some_and(|until| now > until) {
            return Some(Reason::Idle);
        }
    }
    if policy.mode.daily() {
        let date = now.date_naive();
        let today = local_at(date, policy.at_hour)?;
        let boundary = if now < today {
            local_at(date.pred_opt()?, policy.at_hour)?
        } else {
            today
        };
        if last < boundary {
            return Some(Reason::Daily);
        }
    }
    None
}

/// `hour`:00 local time on `date`; in a DST gap, the first whole hour that exists after it.
fn local_at(date: chrono::NaiveDate, hour: u32) -> Option<DateTime<Local>> {
    (0..=2).find_map(|later| {
        let t = date.and_hms_opt((hour + later).min(23), 0, 0)?;
        Local.from_local_datetime(&t).earliest()
    })
}

/// The chat's notice (Hermes' words; `/resume` is not offered in chats here, so it says where
/// the old conversation is).
pub fn notice(reason: Reason, policy: &ResetPolicy) -> String {
    let why = match reason {
        Reason::Daily => format!("daily schedule at {}:00", policy.at_hour),
        Reason::Idle => {
            let (hours, minutes) = (policy.idle_minutes / 60, policy.idle_minutes % 60);
            let duration = match (hours, minutes) {
                (h, 0) => format!("{h}h"),
                (0, m) => format!("{m}m"),
                (h, m) => format!("{h}h {m}m"),
            };
            format!("inactive for {duration}")
        }
    };
    format!(
        "◐ Session automatically reset ({why}). Conversation history cleared.\nThe previous \
         session is kept (hermesctl sessions list).\nAdjust reset timing in config.yaml under \
         session_reset."
    )
}

/// The conversation `row` goes to: `session`, or a new one when the policy says `session` is
/// over (then with the note for the model, and the chat told).
pub async fn fresh_if_due(
    gateway: &Arc<Gateway>,
    link: &Arc<Link>,
    row: &InboundRow,
    session: SessionRow,
) -> Result<(SessionRow, Option<Reason>), StoreError> {
    let config = gateway.runner.config();
    let section: &SessionResetSection = &config.settings.gateway.session_reset;
    let kind = row.session_key.split(':').nth(3).unwrap_or_default();
    let policy = section.policy_for(link.platform(), kind, !row.thread_id.is_empty());
    // A conversation that never said anything has nothing to clear.
    let Some(reason) =
        due(policy, session.updated_at, Local::now()).filter(|_| session.message_count > 0)
    else {
        return Ok((session, None));
    };
    let max_age = (section.bg_process_max_age_hours > 0)
        .then(|| std::time::Duration::from_secs(section.bg_process_max_age_hours * 3600));
    let processes = gateway
        .runner
        .tool_services
        .processes
        .scoped(&session.conversation_id);
    // Never under a running turn (a terminal attached to the conversation may have started one).
    let turn_running = gateway
        .runner
        .hub
        .get(&session.conversation_id)
        .is_some_and(|live| live.is_running());
    if turn_running || processes.has_running_younger_than(max_age) {
        tracing::info!(session = %session.id, ?reason, "reset due, but a turn or a background process runs: kept");
        return Ok((session, None));
    }
    let fresh = reply::new_conversation(gateway, link, row).await?;
    tracing::info!(old = %session.id, new = %fresh.id, ?reason, "chat session reset");
    let excluded = policy
        .notify_exclude_platforms
        .iter()
        .any(|p| p.eq_ignore_ascii_case(link.platform()));
    if policy.notify && !excluded {
        let text = notice(reason, policy);
        outbox::send_now(gateway, link, &chat_of(row), None, &text).await;
    }
    Ok((fresh, Some(reason)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::ResetMode;

    fn at(text: &str) -> DateTime<Local> {
        let naive = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
        Local.from_local_datetime(&naive).earliest().unwrap()
    }

    fn policy(mode: ResetMode) -> ResetPolicy {
        ResetPolicy {
            mode,
            idle_minutes: 90,
            ..ResetPolicy::default()
        }
    }

    #[test]
    fn idle_and_daily_boundaries() {
        let last = at("2026-12-01 10:00").timestamp_millis();
        let idle = policy(ResetMode::Idle);
        assert_eq!(due(&idle, last, at("2026-12-01 11:29")), None);
        assert_eq!(due(&idle, last, at("2026-12-01 11:31")), Some(Reason::Idle));
        let daily = policy(ResetMode::Daily);
        // The 04:00 boundary after the last activity is the next day's.
        assert_eq!(due(&daily, last, at("2026-12-02 03:59")), None);
        assert_eq!(
            due(&daily, last, at("2026-12-02 04:00")),
            Some(Reason::Daily)
        );
        let both = policy(ResetMode::Both);
        assert_eq!(due(&both, last, at("2026-12-02 05:00")), Some(Reason::Idle));
        assert_eq!(
            due(&policy(ResetMode::None), last, at("2027-01-01 00:00")),
            None
        );
    }

    #[test]
    fn the_notice_says_why_in_hermes_words() {
        let p = policy(ResetMode::Idle);
        assert!(notice(Reason::Idle, &p).starts_with(
            "◐ Session automatically reset (inactive for 1h 30m). Conversation history cleared."
        ));
        let day = ResetPolicy {
            idle_minutes: 1440,
            ..p.clone()
        };
        assert!(notice(Reason::Idle, &day).contains("(inactive for 24h)"));
        assert!(notice(Reason::Daily, &p).contains("(daily schedule at 4:00)"));
    }
}
