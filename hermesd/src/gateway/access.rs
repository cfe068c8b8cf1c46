//! Who may talk to the agent, deny by default, in Hermes' order: the platform's allow-all
//! switch, a paired user, the platform's and the gateway's allowlists (`*` is everyone), the
//! gateway's allow-all switch only when no allowlist is set, else no one.

use crate::config::settings::AccessSettings;

/// What to do with a message from a user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    /// Unknown: a direct message gets a pairing code, a group message is ignored.
    Stranger,
}

/// The verdict for `user_id`, given whether the user is paired.
pub fn judge(access: &AccessSettings, user_id: &str, paired: bool) -> Verdict {
    if user_id.is_empty() {
        return Verdict::Stranger;
    }
    if access.allow_all || paired {
        return Verdict::Allowed;
    }
    let lists = [&access.allowed, &access.gateway_allowed];
    if lists.iter().any(|list| !list.is_empty()) {
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

    fn access(allowed: &[&str], gateway: &[&str]) -> AccessSettings {
        AccessSettings {
            allowed: allowed.iter().map(|s| s.to_string()).collect(),
            gateway_allowed: gateway.iter().map(|s| s.to_string()).collect(),
            ..AccessSettings::default()
        }
    }

    #[test]
    fn nobody_is_allowed_by_default() {
        assert_eq!(judge(&access(&[], &[]), "42", false), Verdict::Stranger);
    }

    #[test]
    fn lists_pairing_and_switches() {
        let a = access(&["42"], &["7"]);
        assert_eq!(judge(&a, "42", false), Verdict::Allowed);
        assert_eq!(judge(&a, "7", false), Verdict::Allowed);
        assert_eq!(judge(&a, "8", false), Verdict::Stranger);
        assert_eq!(judge(&a, "8", true), Verdict::Allowed);
        assert_eq!(judge(&access(&["*"], &[]), "9", false), Verdict::Allowed);
        // The gateway-wide switch does not override a list that is set.
        let listed = AccessSettings {
            gateway_allow_all: true,
            ..access(&["42"], &[])
        };
        assert_eq!(judge(&listed, "9", false), Verdict::Stranger);
        let open = AccessSettings {
            gateway_allow_all: true,
            ..access(&[], &[])
        };
        assert_eq!(judge(&open, "9", false), Verdict::Allowed);
        let platform_open = AccessSettings {
            allow_all: true,
            ..access(&["42"], &[])
        };
        assert_eq!(judge(&platform_open, "9", false), Verdict::Allowed);
        // No user id: nobody to authorise.
        assert_eq!(judge(&platform_open, "", false), Verdict::Stranger);
    }
}
