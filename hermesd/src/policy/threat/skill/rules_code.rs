//! Code-shaped rules: obfuscation (decode-and-execute, eval of strings), process execution
//! and embedded credentials.

use std::ops::Range;

use super::Severity::{Critical, High, Low, Medium};
use super::rules::{CREDENTIALS as C, EXECUTION as E, OBFUSCATION as O, Rule, checked, rule};
use super::shell;
use super::text::{after, before};

/// Commands that decode or decompress data (the shell forms of "decode").
macro_rules! shell_decoder {
    () => {
        r"(?:\bbase64\s+(?:[^|;&)]*\s)?(?:-\w*d\w*|--decode)\b|\bbase32\s+(?:-d|--decode)\b|\bxxd\s+[^|;&)]*-\w*r|\bopenssl\s+[^|;&)]*\s-d\b|\b(?:gunzip|zcat|rev)\b)"
    };
}
/// Interpreters that run code given on the command line or from a process substitution.
macro_rules! runner {
    () => {
        r"\b(?:(?:ba|z|k|da)?sh|python[\d.]*|perl|ruby|node|php)\s+(?:-[\w-]+\s+)*"
    };
}

pub(super) static OBFUSCATION_RULES: &[Rule] = &[
    checked(
        "decode_pipe_exec",
        Critical,
        O,
        r"\b(?:base64|base32|xxd|openssl|gunzip|zcat|uudecode|bunzip2|unxz|xzcat|gzip|rev)\b[^\n]*\|",
        "pipes decoded data into a shell or interpreter (base64 -d | sh)",
        shell::decoded_to_executor,
    ),
    rule(
        "decode_eval",
        Critical,
        O,
        concat!(
            r#"(?:\b(?:eval|source|exec)\s+["']?(?:\$\(|`|<\()|(?:^|[;&|]\s*)\.\s+<\(|"#,
            runner!(),
            r#"(?:-[a-z]*[ce]\s+["']?(?:\$\(|`)|<\())[^\n]*"#,
            shell_decoder!(),
            r"|\b(?:exec|eval)\s*\([^\n]{0,120}?\b(?:b64decode|b32decode|b16decode|a85decode|b85decode|decodebytes|decodestring|unhexlify|fromhex|decompress|marshal\.loads|rot13|rot_13|atob|from_base64)\b",
            r#"|\b(?:eval|Function)\s*\([^\n]{0,120}?Buffer\.from\([^)]*["']base64"#
        ),
        "executes decoded data (eval \"$(… | base64 -d)\", exec(b64decode(…)))",
    ),
    rule(
        "base64_decode_pipe",
        Medium,
        O,
        r"\bbase64\s+(?:-\w*d\w*|--decode)\s*\|",
        "base64-decodes into a pipe",
    ),
    checked(
        "echo_pipe_exec",
        Critical,
        O,
        r"\b(?:echo|printf)\b[^\n]*\|",
        "pipes echoed text into a shell or interpreter",
        shell::echo_to_executor,
    ),
    rule(
        "hex_encoded_string",
        Medium,
        O,
        r"\\x[0-9a-f]{2}[^\n]*\\x[0-9a-f]{2}[^\n]*\\x[0-9a-f]{2}",
        "hex-escaped string (possible obfuscation)",
    ),
    rule(
        "eval_string",
        High,
        O,
        r#"\beval\s*\(\s*["']"#,
        "eval() of a string",
    ),
    rule(
        "exec_string",
        High,
        O,
        r#"\bexec\s*\(\s*["']"#,
        "exec() of a string",
    ),
    rule(
        "python_compile_exec",
        High,
        O,
        r#"\bcompile\s*\(\s*[^)]+,\s*["'][^\n]*["']\s*,\s*["']exec["']\s*\)"#,
        "Python compile() in exec mode",
    ),
    rule(
        "python_getattr_builtins",
        High,
        O,
        r"\bgetattr\s*\(\s*__builtins__",
        "dynamic access to Python builtins",
    ),
    rule(
        "python_import_os",
        High,
        O,
        r#"__import__\s*\(\s*["']os["']\s*\)"#,
        "dynamic import of the os module",
    ),
    rule(
        "python_codecs_decode",
        Medium,
        O,
        r#"\bcodecs\.decode\s*\(\s*["']"#,
        "codecs.decode (possible ROT13 or other encoding)",
    ),
    rule(
        "js_char_code",
        Medium,
        O,
        r"String\.fromCharCode|\bcharCodeAt\b",
        "JavaScript character-code string building",
    ),
    rule(
        "js_base64",
        Medium,
        O,
        r"\batob\s*\(|\bbtoa\s*\(",
        "JavaScript base64 encode/decode",
    ),
    rule(
        "string_reversal",
        Low,
        O,
        r"\[::-1\]",
        "string reversal (possible hidden payload)",
    ),
    rule(
        "chr_building",
        High,
        O,
        r"\bchr\s*\(\s*\d+\s*\)\s*\+\s*chr\s*\(\s*\d+",
        "string built from chr() calls",
    ),
    rule(
        "unicode_escape_chain",
        Medium,
        O,
        r"\\u[0-9a-f]{4}[^\n]*\\u[0-9a-f]{4}[^\n]*\\u[0-9a-f]{4}",
        "chain of Unicode escapes (possible obfuscation)",
    ),
];

pub(super) static OTHER_RULES: &[Rule] = &[
    rule(
        "python_subprocess",
        Medium,
        E,
        r"\bsubprocess\.(?:run|call|Popen|check_output|check_call)\s*\(",
        "Python subprocess execution",
    ),
    rule(
        "python_os_system",
        High,
        E,
        r"\bos\.system\s*\(",
        "os.system() shell execution",
    ),
    rule(
        "python_os_popen",
        High,
        E,
        r"\bos\.popen\s*\(",
        "os.popen() shell execution",
    ),
    rule(
        "node_child_process",
        High,
        E,
        r"\bchild_process\.(?:exec|execSync|spawn|spawnSync|fork)\s*\(",
        "Node.js child_process execution",
    ),
    rule(
        "java_runtime_exec",
        High,
        E,
        r"Runtime\.getRuntime\(\)\.exec\(",
        "Java Runtime.exec() shell execution",
    ),
    rule(
        "backtick_subshell",
        Medium,
        E,
        r"`[^`]*\$\([^)]+\)[^`]*`",
        "backtick string with command substitution",
    ),
    checked(
        "hardcoded_secret",
        Critical,
        C,
        r#"(?:api[_-]?key|token|secret|password)\s*[=:]\s*["'][A-Za-z0-9+/=_-]{20,}"#,
        "hard-coded API key, token or password",
        not_placeholder,
    ),
    rule(
        "embedded_private_key",
        Critical,
        C,
        r"-----BEGIN\s+(?:RSA\s+|EC\s+|DSA\s+|OPENSSH\s+|ENCRYPTED\s+|PGP\s+)?PRIVATE\s+KEY(?:\s+BLOCK)?-----",
        "embedded private key",
    ),
    rule(
        "github_token_leaked",
        Critical,
        C,
        r"(?-i:\bgh[pousr]_[A-Za-z0-9]{36}\b|\bgithub_pat_\w{80,})",
        "GitHub access token in the skill",
    ),
    checked(
        "openai_key_leaked",
        Critical,
        C,
        r"(?-i:\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,})",
        "OpenAI-style API key in the skill",
        key_shaped,
    ),
    rule(
        "anthropic_key_leaked",
        Critical,
        C,
        r"(?-i:\bsk-ant-[A-Za-z0-9_-]{90,})",
        "Anthropic API key in the skill",
    ),
    checked(
        "aws_access_key_leaked",
        Critical,
        C,
        r"(?-i:\b(?:AKIA|ASIA)[0-9A-Z]{16}\b)",
        "AWS access key id in the skill",
        not_aws_example,
    ),
    rule(
        "slack_token_leaked",
        Critical,
        C,
        r"(?-i:\bxox[baprs]-[A-Za-z0-9-]{10,})",
        "Slack token in the skill",
    ),
    rule(
        "google_api_key_leaked",
        Critical,
        C,
        r"(?-i:\bAIza[0-9A-Za-z_-]{35})",
        "Google API key in the skill",
    ),
];

fn matched<'a>(line: &'a str, m: &Range<usize>) -> &'a str {
    after(before(line, m.end), m.start)
}

const PLACEHOLDER_WORDS: &[&str] = &[
    "your",
    "xxxx",
    "example",
    "placeholder",
    "changeme",
    "dummy",
    "sample",
    "here",
    "replace",
    "redacted",
    "fake",
    "insert",
    "<",
];

/// `api_key = "YOUR_API_KEY_GOES_HERE_…"` is documentation, not a leak.
fn not_placeholder(line: &str, m: Range<usize>) -> bool {
    let value = matched(line, &m)
        .rsplit(['"', '\''])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let first = value.chars().next();
    !(PLACEHOLDER_WORDS.iter().any(|w| value.contains(w))
        || value.chars().all(|c| Some(c) == first))
}

/// Real keys mix digits and letters; `sk-some-long-kebab-case-name` is a name.
fn key_shaped(line: &str, m: Range<usize>) -> bool {
    let key = matched(line, &m);
    !key.starts_with("sk-ant-")
        && key.bytes().any(|b| b.is_ascii_digit())
        && key.bytes().any(|b| b.is_ascii_uppercase())
}

/// AWS' documentation key `AKIAIOSFODNN7EXAMPLE`.
fn not_aws_example(line: &str, m: Range<usize>) -> bool {
    !matched(line, &m).ends_with("EXAMPLE")
}
