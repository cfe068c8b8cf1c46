//! Network, privilege-escalation, traversal and mining rules: reverse shells and tunnels,
//! sudo/SUID, /etc/shadow and /proc, miners.

use std::ops::Range;

use super::Severity::{Critical, High, Low, Medium};
use super::checks::is_loopback;
use super::rules::{MINING, NETWORK as N, PRIVILEGE, Rule, TRAVERSAL as T, checked, rule};
use super::text::after;

pub(super) static RULES: &[Rule] = &[
    // Network.
    rule(
        "reverse_shell",
        Critical,
        N,
        r"\bn(?:c|cat|etcat)\s+(?:-\w+\s+)*-[a-z]*[lpe]\w*\b|\bsocat\b[^\n]*\b(?:exec|system):",
        "reverse shell or listener (nc -l/-e, socat exec)",
    ),
    rule("socat_usage", Medium, N, r"\bsocat\b", "socat relay"),
    rule(
        "tunnel_service",
        High,
        N,
        r"\b(?:ngrok|localtunnel|serveo|cloudflared)\b|\bbore\.pub\b|\blocalhost\.run\b",
        "exposes the machine through a tunnelling service",
    ),
    checked(
        "hardcoded_ip_port",
        Medium,
        N,
        r"\b\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{2,5}\b",
        "hard-coded IP address and port",
        not_loopback_ip,
    ),
    rule(
        "bind_all_interfaces",
        High,
        N,
        r"\b0\.0\.0\.0:\d+|\bINADDR_ANY\b",
        "binds to all network interfaces",
    ),
    rule(
        "bash_reverse_shell",
        Critical,
        N,
        r"\b(?:ba)?sh\s+-i\b[^\n]*/dev/tcp/|/dev/tcp/\S+\s+0>&1|>&\s*/dev/tcp/|\bexec\s+\d+<>\s*/dev/tcp/",
        "interactive shell over /dev/tcp (reverse shell)",
    ),
    rule(
        "python_socket_oneliner",
        Critical,
        N,
        r#"\bpython[23]?\s+-c\s+["']import\s+socket"#,
        "Python socket one-liner (likely reverse shell)",
    ),
    rule(
        "python_socket_connect",
        High,
        N,
        r"\bsocket\.connect\s*\(\s*\(",
        "Python socket connect to an arbitrary host",
    ),
    rule(
        "exfil_service",
        High,
        N,
        r"webhook\.site|requestbin\.(?:com|net)|pipedream\.net|hookbin\.com|interact\.sh|burpcollaborator\.net|requestcatcher\.com|beeceptor\.com|\boast\.(?:pro|fun|me|site|live|online)\b",
        "known request-catcher / exfiltration service",
    ),
    rule(
        "paste_service",
        Medium,
        N,
        r"pastebin\.com|hastebin\.com|ghostbin\.|paste\.ee\b|termbin\.com",
        "paste service (possible data staging)",
    ),
    // Privilege escalation.
    rule(
        "allowed_tools_field",
        Low,
        PRIVILEGE,
        r"^allowed-tools\s*:",
        "declares allowed-tools (standard frontmatter; informational)",
    ),
    rule("sudo_usage", Medium, PRIVILEGE, r"\bsudo\b", "uses sudo"),
    rule(
        "setuid_setgid",
        Critical,
        PRIVILEGE,
        r"\bsetuid\b|\bsetgid\b|\bcap_setuid\b",
        "setuid/setgid (privilege escalation)",
    ),
    rule(
        "nopasswd_sudo",
        Critical,
        PRIVILEGE,
        r"\bNOPASSWD\b",
        "passwordless sudo entry",
    ),
    rule(
        "suid_bit",
        Critical,
        PRIVILEGE,
        r"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwxt]*s\w*|[2-7][0-7]{3})\b",
        "sets the SUID/SGID bit",
    ),
    // Traversal.
    rule(
        "path_traversal_deep",
        High,
        T,
        r"\.\./\.\./\.\.",
        "deep relative path traversal (3+ levels up)",
    ),
    rule(
        "path_traversal",
        Medium,
        T,
        r"\.\./\.\.",
        "relative path traversal (2+ levels up)",
    ),
    rule(
        "system_passwd_access",
        Critical,
        T,
        r"/etc/(?:shadow|gshadow|master\.passwd)\b",
        "references system password hashes (/etc/shadow)",
    ),
    rule(
        "etc_passwd_read",
        Medium,
        T,
        r"/etc/passwd\b",
        "references /etc/passwd",
    ),
    rule(
        "proc_environ",
        Critical,
        T,
        r"/proc/(?:self|\d+|\$\w+|\*)/environ\b",
        "reads a process environment from /proc",
    ),
    rule(
        "proc_access",
        High,
        T,
        r"/proc/self\b|/proc/\d+/",
        "process introspection through /proc",
    ),
    rule(
        "dev_shm",
        Medium,
        T,
        r"/dev/shm/",
        "uses shared memory (common staging area)",
    ),
    // Mining.
    rule(
        "crypto_mining",
        Critical,
        MINING,
        r"\b(?:xmrig|coinhive|cryptonight|monero)\b|stratum\+tcp",
        "cryptocurrency mining",
    ),
    rule(
        "mining_indicators",
        Medium,
        MINING,
        r"\bhashrate\b|\bnonce\b[^\n]*\bdifficulty\b",
        "possible cryptocurrency mining indicators",
    ),
];

/// `127.0.0.1:8080` and `0.0.0.0:80` (its own rule) are not remote endpoints.
fn not_loopback_ip(line: &str, m: Range<usize>) -> bool {
    let matched = after(line, m.start);
    let host = matched.split(':').next().unwrap_or("");
    !is_loopback(host)
        && host
            .split('.')
            .all(|o| o.parse::<u16>().is_ok_and(|v| v <= 255))
}
