//! Who may talk to the agent, deny by default, in Hermes' order: the platform's allow-all
//! switch, a paired user, in a group a chat on the group chat list (`*` is every group), the
//! platform's and the gateway's allowlists and in a group the group user list (`*` is everyone),
//! the gateway's allow-all switch only when no list applies, else no one. Of those allowed, the
//! owner's own ([`is_operator`]: paired, or named by id) may also act beyond their conversation.

use crate::config::settings::AccessSettings;

use super::adapter::ChatKind;

/// What to do with a message from a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Unknown: a direct message gets a pairing code, a group message is ignored.
    Stranger,
}

/// Where a message was written: its chat's kind and id.
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub kind: ChatKind,
    pub chat_id: &'a str,
}

/// Whether `user_id` is one of the owner's own: paired, or named by id (not `*`) in the
/// platform's or the gateway's allowlist. Others let in — by a group chat list, the group user
/// list, `*` or an allow-all switch — may talk, but not act beyond their own conversation:
/// answer someone else's approval, approve a command for always, move the home channel or
/// reload the MCP servers.
pub fn is_operator(access: &AccessSettings, user_id: &str, paired: bool) -> bool {
    !user_id.is_empty()
        && (paired
            || access
                .allowed
                .iter()
                .chain(&access.gateway_allowed)
                .any(|id| id == user_id))
}

/// [`is_operator`] for `user_id` of `platform` now (the pairing is read from the store).
pub async fn operator_now(gateway: &super::Gateway, platform: &str, user_id: &str) -> bool {
    let paired = {
        let (platform, user) = (platform.to_string(), user_id.to_string());
        gateway
            .runner
            .store
            .read(move |conn| crate::store::pairing(conn, &platform, &user))
            .await
            .ok()
            .flatten()
            .is_some_and(|p| p.approved)
    };
    let config = gateway.runner.config();
    is_operator(
        &config.settings.gateway.rules(platform).access,
        user_id,
        paired,
    )
}

/// The verdict for `user_id` writing in `place`, given whether the user is paired.
pub fn judge(access: &AccessSettings, user_id: &str, paired: bool, place: Place<'_>) -> Verdict {
    if user_id.is_empty() {
        return Verdict::Stranger;
    }
    if access.allow_all || paired {
        return Verdict::Allowed;
    }
    let in_group = place.kind == ChatKind::Group;
    let chats: &[String] = if in_group { &access.group_chats } else { &[] };
    if chats.iter().any(|c| c == "*" || c == place.chat_id) {
        return Verdict::Allowed;
    }
    // The group lists count in groups only: they open neither direct messages nor channels.
    let group_users: &[String] = if in_group { &access.group_users } else { &[] };
    let lists = [
        access.allowed.as_slice(),
        access.gateway_allowed.as_slice(),
        group_users,
    ];
    if lists.iter().any(|list| !list.is_empty()) || !chats.is_empty() {
        let listed = lists
            .iter()
            .flat_map(|list| list.iter())
            .any(|entry| entry == "*" || entry == user_id);
        return if listed {
            Verdict::Allowed
        } else {
            Verdict::Stranger
        };
    }
    if access.gateway_allow_all {
        Verdict::Allowed
    } else {
        Verdict::Stranger
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DM: Place<'static> = Place {
        kind: ChatKind::Dm,
        chat_id: "42",
    };

    fn group(chat_id: &str) -> Place<'_> {
        Place {
            kind: ChatKind::Group,
            chat_id,
        }
    }

    fn access(allowed: &[&str], gateway: &[&str]) -> AccessSettings {
        AccessSettings {
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
            gateway_allowed: gateway.iter().map(|s| s.to_string()).collect(),
            ..AccessSettings::default()
        }
    }

    #[test]
    fn nobody_is_allowed_by_default() {
        assert_eq!(judge(&access(&[], &[]), "42", false, DM), Verdict::Stranger);
    }

    #[test]
    fn lists_pairing_and_switches() {
        let a = access(&["42"], &["7"]);
        assert_eq!(judge(&a, "42", false, DM), Verdict::Allowed);
        assert_eq!(judge(&a, "7", false, DM), Verdict::Allowed);
        assert_eq!(judge(&a, "8", false, DM), Verdict::Stranger);
        assert_eq!(judge(&a, "8", true, DM), Verdict::Allowed);
        assert_eq!(
            judge(&access(&["*"], &[]), "9", false, DM),
            Verdict::Allowed
        );
        // The gateway-wide switch does not override a list that is set.
        let listed = AccessSettings {
            gateway_allow_all: true,
            ..access(&["42"], &[])
        };
        assert_eq!(judge(&listed, "9", false, DM), Verdict::Stranger);
        let open = AccessSettings {
            gateway_allow_all: true,
            ..access(&[], &[])
        };
        assert_eq!(judge(&open, "9", false, DM), Verdict::Allowed);
        let platform_open = AccessSettings {
            allow_all: true,
            ..access(&["42"], &[])
        };
        assert_eq!(judge(&platform_open, "9", false, DM), Verdict::Allowed);
        // No user id: nobody to authorise.
        assert_eq!(judge(&platform_open, "", false, DM), Verdict::Stranger);
    }

    #[test]
    fn group_lists_open_groups_only() {
        let chats = AccessSettings {
            group_chats: vec!["-100".into()],
            ..access(&["42"], &[])
        };
        assert_eq!(judge(&chats, "9", false, group("-100")), Verdict::Allowed);
        assert_eq!(judge(&chats, "9", false, group("-200")), Verdict::Stranger);
        assert_eq!(judge(&chats, "9", false, DM), Verdict::Stranger);
        let every_group = AccessSettings {
            group_chats: vec!["*".into()],
            ..access(&[], &[])
        };
        assert_eq!(
            judge(&every_group, "9", false, group("-7")),
            Verdict::Allowed
        );
        assert_eq!(judge(&every_group, "9", false, DM), Verdict::Stranger);
        let users = AccessSettings {
            group_users: vec!["9".into()],
            gateway_allow_all: true,
            ..access(&[], &[])
        };
        assert_eq!(judge(&users, "9", false, group("-7")), Verdict::Allowed);
        assert_eq!(
            judge(&users, "8", false, group("-7")),
            Verdict::Stranger,
            "a list applies"
        );
        // In a direct message the group lists do not apply: the gateway's switch does.
        assert_eq!(judge(&users, "8", false, DM), Verdict::Allowed);
        let channel = Place {
            kind: ChatKind::Channel,
            chat_id: "-100",
        };
        assert_eq!(
            judge(&users, "9", false, channel),
            Verdict::Allowed,
            "no list applies"
        );
        assert_eq!(judge(&chats, "9", false, channel), Verdict::Stranger);
        let group_only = AccessSettings {
            group_users: vec!["9".into()],
            ..access(&[], &[])
        };
        assert_eq!(judge(&group_only, "9", false, DM), Verdict::Stranger);
        let anyone_in_groups = AccessSettings {
            group_users: vec!["*".into()],
            ..access(&["42"], &[])
        };
        assert_eq!(
            judge(&anyone_in_groups, "9", false, group("-1")),
            Verdict::Allowed
        );
        assert_eq!(judge(&anyone_in_groups, "9", false, DM), Verdict::Stranger);
    }

    #[test]
    fn operators_are_paired_or_named() {
        let a = AccessSettings {
            group_users: vec!["9".into()],
            group_chats: vec!["-1".into()],
            allow_all: true,
            ..access(&["42", "*"], &["7"])
        };
        assert!(is_operator(&a, "42", false));
        assert!(is_operator(&a, "7", false));
        assert!(is_operator(&a, "5", true), "paired");
        assert!(!is_operator(&a, "9", false), "a group-only user");
        assert!(!is_operator(&a, "5", false), "let in by `*` or a switch");
        assert!(!is_operator(&a, "", true));
    }
}
