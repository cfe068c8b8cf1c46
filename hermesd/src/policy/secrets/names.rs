//! Which variables of the daemon's environment hold secrets, and the literal texts to mask for
//! them: every value of 8 characters or more whose name ends in a secret word, every value (or
//! part of one) that looks like a key whatever its name (`values.rs`), plus the form each takes
//! inside a JSON string when it has characters JSON escapes.

use hermes_proto::env::Env;

/// Values shorter than this many characters are left alone: too many false hits.
pub const MIN_SECRET_CHARS: usize = 8;

/// Name endings that mark a secret: the four, and the words Hermes' environment-dump
/// rule (`_SECRET_ENV_NAMES` in `agent/redact.py`) adds (`PASSWD`, `CREDENTIAL`, `APIKEY`).
const SECRET_WORDS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "CREDENTIALS",
    "APIKEY",
];

/// Whether variable `name` holds a secret: it is one of [`SECRET_WORDS`] or ends in `_` and
/// one of them, in any case (`OPENAI_API_KEY`, `github_token`, `PASSWORD`).
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_WORDS.iter().any(|word| {
        upper == *word
            || upper
                .strip_suffix(word)
                .is_some_and(|head| head.ends_with('_'))
    })
}

/// One text to find in output, and whether it is the JSON-escaped form of a value (masked
/// whole, so no half of an escape is left behind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub text: String,
    pub escaped: bool,
}

/// The literals of every secret in `env`, longest first, without repeats.
pub fn secret_literals(env: &Env) -> Vec<Literal> {
    let mut out: Vec<Literal> = Vec::new();
    let mut add = |value: &str| {
        out.push(Literal {
            text: value.to_string(),
            escaped: false,
        });
        let json = serde_json::Value::String(value.to_string()).to_string();
        let inner = &json[1..json.len() - 1];
        if inner != value {
            out.push(Literal {
                text: inner.to_string(),
                escaped: true,
            });
        }
    };
    for (name, value) in env.iter() {
        if is_secret_name(name) && value.chars().count() >= MIN_SECRET_CHARS {
            add(value);
        } else {
            for part in super::values::secret_parts(name, value) {
                add(&part);
            }
        }
    }
    out.sort_by(|a, b| b.text.len().cmp(&a.text.len()).then(a.text.cmp(&b.text)));
    out.dedup_by(|a, b| a.text == b.text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_end_in_a_secret_word() {
        for name in [
            "OPENAI_API_KEY",
            "MY_SERVICE_TOKEN",
            "AWS_SECRET",
            "DB_PASSWORD",
            "ftp_passwd",
            "GOOGLE_CREDENTIALS",
            "EXA_APIKEY",
            "TOKEN",
            "github_token",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "PATH",
            "MONKEY",
            "MAX_TOKENS",
            "TOKEN_FILE",
            "GIT_AUTHOR_NAME",
            "SSH_AUTH_SOCK",
            "KEYBOARD",
            "APIKEYS_DIR",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    #[test]
    fn short_values_and_other_names_are_not_secrets() {
        let env = Env::from_pairs([
            ("A_TOKEN", "1234567"),
            ("B_TOKEN", "12345678"),
            ("HOME", "/home/someone/long"),
            ("C_SECRET", "12345678"),
            ("D_KEY", "ab\"cd\\efgh"),
        ]);
        let texts: Vec<(String, bool)> = secret_literals(&env)
            .into_iter()
            .map(|l| (l.text, l.escaped))
            .collect();
        assert_eq!(
            texts,
            vec![
                ("ab\\\"cd\\\\efgh".to_string(), true),
                ("ab\"cd\\efgh".to_string(), false),
                ("12345678".to_string(), false),
            ]
        );
    }
}
