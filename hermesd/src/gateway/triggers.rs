//! Whether a group message from an allowed user is for the agent, in Hermes' order: groups and
//! topics it does not listen in (`ignored_<chats>`, `allowed_topics`, `ignored_threads`), a
//! message naming only other bots (`exclusive_bot_mentions`), groups it does not answer in
//! (`allowed_<chats>`, a mention let through by `guest_mode`), then chats and topics where
//! every message is (`free_response_*`), and with `require_mention` only a reply to the bot, a
//! mention of it, a wake word (`mention_patterns`) or a thread the bot is in (unless
//! `thread_require_mention`). A chat list names a group or a thread of it (Discord's threads
//! are channels of their own), and `*` is every group. Direct messages and channel posts are
//! always for it.

use super::adapter::{ChatKind, Inbound};
use crate::config::settings::GroupRules;

/// The topic of a forum message without one: General.
const GENERAL_TOPIC: &str = "1";

/// Whether `update` is for the agent under `rules`.
pub fn for_agent(rules: &GroupRules, update: &Inbound) -> bool {
    if update.kind != ChatKind::Group {
        return true;
    }
    let chat = update.chat.chat_id.as_str();
    let thread = match update.chat.thread_id.as_str() {
        "" if update.in_forum => GENERAL_TOPIC,
        thread => thread,
    };
    // A group without topics counts as General for `allowed_topics`, as in Hermes.
    let topic = if thread.is_empty() {
        GENERAL_TOPIC
    } else {
        thread
    };
    let listed = |list: &[String], id: &str| list.iter().any(|entry| entry == id);
    let raw_thread = update.chat.thread_id.as_str();
    let chat_listed = |list: &[String]| {
        list.iter().any(|entry| {
            entry == "*" || entry == chat || (!raw_thread.is_empty() && entry == raw_thread)
        })
    };
    if chat_listed(&rules.ignored_chats) {
        return false;
    }
    if !rules.allowed_topics.is_empty() && !listed(&rules.allowed_topics, topic) {
        return false;
    }
    if !thread.is_empty() && listed(&rules.ignored_threads, thread) {
        return false;
    }
    let addressed = update.addressing;
    if rules.exclusive_bot_mentions && addressed.names_only_other_bots {
        return false;
    }
    let guest = rules.guest_mode && addressed.mentions_me;
    if !rules.allowed_chats.is_empty() && !chat_listed(&rules.allowed_chats) {
        return guest;
    }
    guest
        || chat_listed(&rules.free_response_chats)
        || listed(&rules.free_response_topics, &format!("{chat}:{topic}"))
        || !rules.require_mention
        || addressed.replies_to_me
        || addressed.mentions_me
        || (addressed.in_my_thread && !rules.thread_require_mention)
        || rules.mention_patterns.any_match(&update.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        config::settings::MentionPatterns,
        gateway::adapter::{Addressing, ChatRef},
    };

    fn group(chat: &str, thread: &str, text: &str, addressing: Addressing) -> Inbound {
        Inbound {
            update_id: 1,
            chat: ChatRef {
                chat_id: chat.into(),
                thread_id: thread.into(),
            },
            kind: ChatKind::Group,
            user_id: "42".into(),
            user_name: "ann".into(),
            chat_name: "friends".into(),
            message_id: "5".into(),
            text: text.into(),
            edited: false,
            reply_to: None,
            attachments: Vec::new(),
            press: None,
            addressing,
            in_forum: !thread.is_empty(),
        }
    }

    fn mention() -> Addressing {
        Addressing {
            mentions_me: true,
            ..Addressing::default()
        }
    }

    fn reply() -> Addressing {
        Addressing {
            replies_to_me: true,
            ..Addressing::default()
        }
    }

    fn strict() -> GroupRules {
        GroupRules {
            require_mention: true,
            mention_patterns: MentionPatterns(vec![
                regex::RegexBuilder::new("^hermes\\b")
                    .case_insensitive(true)
                    .build()
                    .unwrap(),
            ]),
            ..GroupRules::default()
        }
    }

    #[test]
    fn by_default_every_group_message_but_one_for_another_bot() {
        let rules = GroupRules::default();
        assert!(for_agent(
            &rules,
            &group("-5", "", "hi all", Addressing::default())
        ));
        let other = Addressing {
            names_only_other_bots: true,
            ..Addressing::default()
        };
        assert!(!for_agent(
            &rules,
            &group("-5", "", "/new@other_bot", other)
        ));
        let shared = GroupRules {
            exclusive_bot_mentions: false,
            ..GroupRules::default()
        };
        assert!(for_agent(
            &shared,
            &group("-5", "", "/new@other_bot", other)
        ));
        let mut dm = group("42", "", "hi", other);
        dm.kind = ChatKind::Dm;
        assert!(for_agent(&GroupRules::default(), &dm), "a DM is not gated");
    }

    #[test]
    fn require_mention_takes_mentions_replies_and_wake_words() {
        let rules = strict();
        assert!(!for_agent(
            &rules,
            &group("-5", "", "hi all", Addressing::default())
        ));
        assert!(for_agent(&rules, &group("-5", "", "what now?", mention())));
        assert!(for_agent(&rules, &group("-5", "", "and?", reply())));
        assert!(for_agent(
            &rules,
            &group("-5", "", "Hermes, go", Addressing::default())
        ));
        assert!(!for_agent(
            &rules,
            &group("-5", "", "no hermes", Addressing::default())
        ));
        let free = GroupRules {
            free_response_chats: vec!["-5".into()],
            free_response_topics: vec!["-9:7".into()],
            ..strict()
        };
        assert!(for_agent(
            &free,
            &group("-5", "", "hi all", Addressing::default())
        ));
        assert!(for_agent(
            &free,
            &group("-9", "7", "hi all", Addressing::default())
        ));
        assert!(!for_agent(
            &free,
            &group("-9", "8", "hi all", Addressing::default())
        ));
    }

    #[test]
    fn allowed_chats_and_topics_are_hard_gates_but_for_a_guest_mention() {
        let rules = GroupRules {
            allowed_chats: vec!["-5".into()],
            ..GroupRules::default()
        };
        assert!(for_agent(
            &rules,
            &group("-5", "", "hi", Addressing::default())
        ));
        assert!(!for_agent(
            &rules,
            &group("-6", "", "hi", Addressing::default())
        ));
        assert!(!for_agent(&rules, &group("-6", "", "hi", mention())));
        let guests = GroupRules {
            guest_mode: true,
            ..rules
        };
        assert!(for_agent(&guests, &group("-6", "", "hi", mention())));
        assert!(!for_agent(&guests, &group("-6", "", "hi", reply())));
        let topics = GroupRules {
            allowed_topics: vec!["1".into(), "3".into()],
            ignored_threads: vec!["3".into()],
            ..GroupRules::default()
        };
        assert!(for_agent(
            &topics,
            &group("-5", "", "general", Addressing::default())
        ));
        assert!(!for_agent(
            &topics,
            &group("-5", "2", "other", Addressing::default())
        ));
        assert!(!for_agent(&topics, &group("-5", "3", "ignored", mention())));
        // General, in a forum, is topic 1 for `ignored_threads` too; a group without topics is not.
        let quiet_general = GroupRules {
            ignored_threads: vec!["1".into()],
            ..GroupRules::default()
        };
        let mut general = group("-5", "", "in General", Addressing::default());
        assert!(for_agent(&quiet_general, &general));
        general.in_forum = true;
        assert!(!for_agent(&quiet_general, &general));
    }

    #[test]
    fn channel_lists_name_a_channel_or_its_thread_and_the_bots_threads_need_no_mention() {
        let rules = GroupRules {
            require_mention: true,
            free_response_chats: vec!["T9".into()],
            ignored_chats: vec!["C2".into()],
            ..GroupRules::default()
        };
        let in_thread =
            |chat: &str, thread: &str, addressing| group(chat, thread, "hi", addressing);
        assert!(for_agent(
            &rules,
            &in_thread("C1", "T9", Addressing::default())
        ));
        assert!(!for_agent(
            &rules,
            &in_thread("C1", "T8", Addressing::default())
        ));
        assert!(
            !for_agent(&rules, &in_thread("C2", "", mention())),
            "ignored"
        );
        let mine = Addressing {
            in_my_thread: true,
            ..Addressing::default()
        };
        assert!(for_agent(&rules, &in_thread("C1", "T8", mine)));
        let strict_threads = GroupRules {
            thread_require_mention: true,
            ..rules.clone()
        };
        assert!(!for_agent(&strict_threads, &in_thread("C1", "T8", mine)));
        let everywhere = GroupRules {
            free_response_chats: vec!["*".into()],
            ..rules
        };
        assert!(for_agent(
            &everywhere,
            &in_thread("C7", "", Addressing::default())
        ));
    }
}
