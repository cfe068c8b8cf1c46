//! The `security` section: whether the daemon's keys and Hermes' key shapes are masked in tool
//! output, client events and the log (`security.redact_secrets`, else the environment's
//! `HERMES_REDACT_SECRETS`, as Hermes bridges the two; on by default).

use hermes_proto::env::Env;

use super::read::Reader;

#[derive(Debug, Clone, PartialEq)]
pub struct SecuritySection {
    pub redact_secrets: bool,
}

impl Default for SecuritySection {
    fn default() -> Self {
        Self {
            redact_secrets: true,
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
        Self {
            redact_secrets: r.flag("security.redact_secrets", from_env.unwrap_or(true)),
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
}
