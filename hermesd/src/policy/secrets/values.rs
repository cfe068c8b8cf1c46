//! Values of the daemon's environment that are secrets by their content, whatever their name:
//! a secret may sit under any name (`AWS_SECRET_ACCESS_KEY` ends in `_KEY`, but `FOO_ID`,
//! `STRIPE_SK` and `DATABASE_URL` say nothing). A value, or a part of it, is taken for a key
//! when it looks random: 16 characters or more, all of them letters, digits or `+/=_.~-` (the
//! alphabets of base64, hex and API keys), letters and digits both, and the kind of character
//! (lower case, upper case, digit) changing often — at least 5 times and once every 6
//! characters, where words and version numbers change rarely (`my-project-123456` once,
//! `x86_64-unknown-linux-gnu` twice, a random key of 32 about 20 times). Paths, host and
//! package names (`ip-10-0-1-2.ec2.internal`, `org.gradle.jvmargs`) are not keys. Of a URL,
//! the password (8 characters or more) is one, and a path segment or query value that looks
//! random (a webhook's token). Of anything else that is not one key as a whole (`user:key`,
//! `-Dapi.key=…`), each part between spaces and `:,;@=&` is judged alone.

/// Parts shorter than this are not judged by their content (names decide them).
pub const MIN_CONTENT_CHARS: usize = 16;
/// Longer parts are not keys (certificates, long lists), and values longer than
/// [`MAX_VALUE_CHARS`] are not looked into at all.
const MAX_PART_CHARS: usize = 1024;
const MAX_VALUE_CHARS: usize = 8192;
/// A URL's password needs only this many characters, as a value under a secret name.
const MIN_PASSWORD_CHARS: usize = super::names::MIN_SECRET_CHARS;
/// Variables whose random-looking values are identifiers, not keys (systemd's and the
/// desktop's; a host name may be a Kubernetes pod's, `app-7d4b9c8f6-x2k9p`).
const NOT_SECRET_NAMES: &[&str] = &[
    "HOSTNAME",
    "HOST",
    "INVOCATION_ID",
    "JOURNAL_STREAM",
    "MEMORY_PRESSURE_WRITE",
    "DBUS_SESSION_BUS_ADDRESS",
    "TERM_SESSION_ID",
    "WINDOWID",
];
/// Characters besides letters and digits a key is made of.
const KEY_PUNCTUATION: &[u8] = b"+/=_.~-";
/// What parts of a value that is not one key are split at.
const PART_SEPARATORS: &[char] = &[':', ',', ';', '@', '=', '&', '"', '\'', '(', ')'];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
}

/// Whether `part` looks like a random key (see the module's rule).
pub fn looks_random(part: &str) -> bool {
    let n = part.chars().count();
    if !(MIN_CONTENT_CHARS..=MAX_PART_CHARS).contains(&n)
        || !part
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || KEY_PUNCTUATION.contains(&b))
        || part.starts_with(['/', '~', '.'])
        || is_dotted_name(part)
    {
        return false;
    }
    let classes: Vec<Class> = part
        .bytes()
        .filter_map(|b| match b {
            b'a'..=b'z' => Some(Class::Lower),
            b'A'..=b'Z' => Some(Class::Upper),
            b'0'..=b'9' => Some(Class::Digit),
            _ => None,
        })
        .collect();
    let digits = classes.iter().filter(|c| **c == Class::Digit).count();
    if digits == 0 || digits == classes.len() {
        return false;
    }
    let changes = classes.windows(2).filter(|w| w[0] != w[1]).count();
    changes >= 5 && changes * 6 >= classes.len()
}

/// A host, domain or dotted package name: labels of letters, digits, `-` and `_` between dots,
/// the last of letters only (`build-7.eu-west-1.compute.internal`, `org.gradle.jvmargs`).
fn is_dotted_name(part: &str) -> bool {
    let mut labels = part.split('.').peekable();
    let mut count = 0;
    while let Some(label) = labels.next() {
        count += 1;
        let ok = !label.is_empty()
            && if labels.peek().is_none() {
                label.len() >= 2 && label.bytes().all(|b| b.is_ascii_alphabetic())
            } else {
                label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            };
        if !ok {
            return false;
        }
    }
    count >= 2
}

/// A directory or file name, or a list of them (`PATH`).
fn is_path(value: &str) -> bool {
    value.starts_with(['/', '~']) || value.starts_with("./") || value.starts_with("../")
}

/// `scheme://…` split into the text before the host (`user:password`, if any) and what follows
/// the host (path, query, fragment).
fn url_parts(value: &str) -> Option<(Option<&str>, &str)> {
    let (scheme, rest) = value.split_once("://")?;
    let mut chars = scheme.chars();
    if !chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        || !chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
        || rest.contains(char::is_whitespace)
    {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let userinfo = authority.rsplit_once('@').map(|(info, _)| info);
    Some((userinfo, tail))
}

/// `%XX` decoded, when that gives text.
fn percent_decoded(text: &str) -> Option<String> {
    if !text.contains('%') {
        return None;
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The texts of variable `name`'s `value` to mask because of what they look like.
pub fn secret_parts(name: &str, value: &str) -> Vec<String> {
    if NOT_SECRET_NAMES.contains(&name) || value.chars().count() > MAX_VALUE_CHARS {
        return Vec::new();
    }
    if let Some((userinfo, tail)) = url_parts(value) {
        let mut out = Vec::new();
        match userinfo.map(|info| info.split_once(':')) {
            Some(Some((user, password))) => {
                let decoded = percent_decoded(password);
                for text in std::iter::once(password).chain(decoded.as_deref()) {
                    if text.chars().count() >= MIN_PASSWORD_CHARS {
                        out.push(text.to_string());
                    }
                }
                if looks_random(user) {
                    out.push(user.to_string());
                }
            }
            // `https://TOKEN@host`
            Some(None) => {
                if let Some(user) = userinfo.filter(|u| looks_random(u)) {
                    out.push(user.to_string());
                }
            }
            None => {}
        }
        out.extend(
            tail.split(['/', '?', '&', '=', '#', ';', ','])
                .filter(|p| looks_random(p))
                .map(str::to_string),
        );
        return out;
    }
    if looks_random(value) {
        return vec![value.to_string()];
    }
    if is_path(value) {
        return Vec::new();
    }
    value
        .split(|c: char| c.is_whitespace() || PART_SEPARATORS.contains(&c))
        .filter(|p| looks_random(p))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_keys_look_random_and_words_do_not() {
        for key in [
            "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "Xk39fJ2lQp8ZrT5vBn7WmC4yHd6gKs1a",
            "4f9a2b7c1e8d3f6a5b0c9d2e7f1a4b8c",
            "550e8400-e29b-41d4-a716-446655440000",
            "dGhpc2lzYXJhbmRvbWtleTEyMzQ1Njc4OTA=",
            "k3j5h6g7f8d9s0a1q2w3e4r5",
        ] {
            assert!(looks_random(key), "{key}");
        }
        for text in [
            "my-project-123456",
            "x86_64-unknown-linux-gnu",
            "rustc-1.75.0-x86_64-unknown-linux-gnu",
            "MyApplicationServiceName",
            "12345678901234567890",
            "ip-172-31-22-10.ec2.internal",
            "/usr/lib/jvm/java-17-openjdk-amd64",
            "20240115T103000Z",
            "short1a2b3c",
            "with space 1a2b3c4d5e6f7g8h",
        ] {
            assert!(!looks_random(text), "{text}");
        }
    }

    #[test]
    fn a_url_gives_its_password_and_random_segments() {
        assert_eq!(
            secret_parts("DB", "postgres://app:p%40ssw0rd!x@db:5432/app"),
            ["p%40ssw0rd!x", "p@ssw0rd!x"]
        );
        assert!(secret_parts("DB", "postgres://u:pw@h/db").is_empty());
        assert_eq!(
            secret_parts("GIT", "https://Zq8xK2mP9vL4tR7wN3bY6cH1@github.com/o/r.git"),
            ["Zq8xK2mP9vL4tR7wN3bY6cH1"]
        );
        assert_eq!(
            secret_parts(
                "HOOK",
                "https://x.test/hook?key=vK3q9ZpR2xT7mW4nB8cY1dF6&v=2"
            ),
            ["vK3q9ZpR2xT7mW4nB8cY1dF6"]
        );
        assert!(secret_parts("API", "https://api.example.com/v1/items").is_empty());
    }

    #[test]
    fn parts_of_a_compound_value_are_judged_alone() {
        assert_eq!(
            secret_parts("OPTS", "-Dapi.user=me -Dapi.secret=Xk39fJ2lQp8ZrT5vBn7W"),
            ["Xk39fJ2lQp8ZrT5vBn7W"]
        );
        assert!(secret_parts("PATHS", "/opt/Xk39fJ2lQp8ZrT5vBn7W:/usr/bin").is_empty());
        assert!(secret_parts("HOSTNAME", "app-7d4b9c8f6-x2k9p4m7q1z").is_empty());
    }
}
