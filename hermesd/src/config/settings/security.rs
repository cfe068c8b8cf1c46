//! The `security` section: whether the daemon's keys and Hermes' key shapes are masked in tool
//! output, client events and the log (`security.redact_secrets`, else the environment's
//! `HERMES_REDACT_SECRETS`, as Hermes bridges the two; on by default), and whether tools may
//! fetch private addresses (`security.allow_private_urls`, else the environment's
//! `HERMES_ALLOW_PRIVATE_URLS`, else the legacy `browser.allow_private_urls`; off by default).

use hermes_proto::env::Env;

use super::read::Reader;

#[derive(Debug, Clone, PartialEq)]
pub struct SecuritySection {
    pub redact_secrets: bool,
    /// Loopback, private and unique-local addresses may be fetched (never metadata ones).
    pub allow_private_urls: bool,
}

impl Default for SecuritySection {
    fn default() -> Self {
        Self {
            redact_secrets: true,
            allow_private_urls: false,
        }
    }
}

impl SecuritySection {
    pub fn read(r: &mut Reader<'_>, env: &Env) -> Self {
        let from_env = env.get("HERMES_REDACT_SECRETS").map(|v| {
            matches!(
                v.trim().to_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        let private_env = env.get("HERMES_ALLOW_PRIVATE_URLS").and_then(|v| {
            match v.trim().to_lowercase().as_str() {
                "1" | "true" | "yes" => Some(true),
                "0" | "false" | "no" => Some(false),
                _ => None,
            }
        });
        let legacy = r.flag("browser.allow_private_urls", false);
        let allow_private_urls = match r.flag_opt("security.allow_private_urls", "the default") {
            Some(set) => set,
            None => private_env.unwrap_or(legacy),
        };
        Self {
            redact_secrets: r.flag("security.redact_secrets", from_env.unwrap_or(true)),
            allow_private_urls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(yaml: &str, env: &Env) -> (SecuritySection, Vec<String>) {
        let tree: serde_yaml::Value = serde_yaml::from_str(yaml).unwrap();
        let mut r = Reader::new(&tree);
        let section = SecuritySection::read(&mut r, env);
        (section, r.into_notices())
    }

    #[test]
    fn redact_secrets_reads_as_hermes_reads_it() {
        let none = Env::default();
        assert!(read("{}", &none).0.redact_secrets);
        assert!(
            !read("security: {redact_secrets: false}", &none)
                .0
                .redact_secrets
        );
        assert!(
            !read("security: {redact_secrets: 'off'}", &none)
                .0
                .redact_secrets
        );
        assert!(
            read("security: {redact_secrets: 'Yes'}", &none)
                .0
                .redact_secrets
        );
        let off = Env::from_pairs([("HERMES_REDACT_SECRETS", "false")]);
        assert!(!read("{}", &off).0.redact_secrets);
        assert!(
            read("security: {redact_secrets: true}", &off)
                .0
                .redact_secrets
        );
        let (bad, notices) = read("security: {redact_secrets: sometimes}", &none);
        assert!(bad.redact_secrets, "a bad value keeps the masking on");
        assert_eq!(notices.len(), 1, "{notices:?}");
    }

    #[test]
    fn private_urls_are_refused_unless_allowed() {
        let none = Env::default();
        assert!(!read("{}", &none).0.allow_private_urls);
        assert!(
            read("security: {allow_private_urls: true}", &none)
                .0
                .allow_private_urls
        );
        assert!(
            read("browser: {allow_private_urls: true}", &none)
                .0
                .allow_private_urls
        );
        let on = Env::from_pairs([("HERMES_ALLOW_PRIVATE_URLS", "yes")]);
        assert!(read("{}", &on).0.allow_private_urls);
        assert!(
            !read("security: {allow_private_urls: false}", &on)
                .0
                .allow_private_urls
        );
    }
}
