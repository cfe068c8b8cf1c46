//! Regex tables of the terminal guard: the hardline blocklist and the dangerous-command list.
//!
//! Each entry mirrors one `(regex, description)` pair of Hermes' `tools/approval.py`, in the same
//! order (first match wins). Python's `re` syntax was translated to the `regex` crate: `$` (which
//! in Python also matches before a final newline) becomes [`EOL`], and trailing look-aheads
//! become consuming groups, which is equivalent for a yes/no search. The one rule that needs a
//! negative look-ahead (`DELETE FROM` without `WHERE`) is marked [`RuleCheck::DeleteWithoutWhere`]
//! and finished in code.

/// Python's end-of-string `$`: the very end, or just before a final newline.
const EOL: &str = r"(?:\n?\z)";

const SSH_PATH: &str = r"(?:~|\$home|\$\{home\})/\.ssh(?:/|\n?\z)";
const HERMES_ENV_PATH: &str =
    r"(?:~/\.hermes/|(?:\$home|\$\{home\})/\.hermes/|(?:\$hermes_home|\$\{hermes_home\})/)\.env\b";
const HERMES_CONFIG_PATH: &str = r"(?:~/\.hermes/|(?:\$home|\$\{home\})/\.hermes/|(?:\$hermes_home|\$\{hermes_home\})/)config\.yaml\b";
const PROJECT_ENV_PATH: &str = r#"(?:(?:/|\.{1,2}/)?(?:[^\s/"'`]+/)*\.env(?:\.[^/\s"'`]+)*)"#;
const PROJECT_CONFIG_PATH: &str = r#"(?:(?:/|\.{1,2}/)?(?:[^\s/"'`]+/)*config\.yaml)"#;
const SHELL_RC_FILES: &str =
    r"(?:~|\$home|\$\{home\})/\.(?:bashrc|zshrc|profile|bash_profile|zprofile)\b";
const CREDENTIAL_FILES: &str = r"(?:~|\$home|\$\{home\})/\.(?:netrc|pgpass|npmrc|pypirc)\b";
/// `/etc/` and its macOS `/private/...` mirrors.
const SYSTEM_CONFIG_PATH: &str = r"(?:/etc/|/private/(?:etc|var|tmp|home)/)";
/// Command tail after a cp/mv destination: nothing, or another command after a separator.
const COMMAND_TAIL: &str = r"(?:\s*(?:&&|\|\||;).*)?(?:\n?\z)";
/// End of a stream-write target word (consuming form of Python's look-ahead).
const WRITE_TARGET_BOUNDARY: &str = r#"(?:[\s;&|<>"']|\z)"#;

/// Start of a command (start of text, newline, backtick or `$(`) plus optional wrappers.
const CMDPOS: &str = r"(?:^|[\n`]|\$\()\s*(?:sudo\s+(?:-[^\s]+\s+)*)?(?:env\s+(?:\w+=\S*\s+)*)?(?:(?:exec|nohup|setsid|time)\s+)*\s*";
const HARDLINE_SYSTEM_DIRS: &str = r"/home|/home/\*|/root|/root/\*|/etc|/etc/\*|/usr|/usr/\*|/var|/var/\*|/bin|/bin/\*|/sbin|/sbin/\*|/boot|/boot/\*|/lib|/lib/\*";

/// Extra verification a rule needs after its regex matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RuleCheck {
    /// The regex alone decides.
    Plain,
    /// The regex found `DELETE FROM`; fire only if no `WHERE` follows on that line.
    DeleteWithoutWhere,
}

/// One detection rule: regex source, Python description (also the approval key), extra check.
pub(super) struct Rule {
    pub(super) pattern: String,
    pub(super) description: &'static str,
    pub(super) check: RuleCheck,
}

fn rule(pattern: impl Into<String>, description: &'static str) -> Rule {
    Rule {
        pattern: pattern.into(),
        description,
        check: RuleCheck::Plain,
    }
}

fn sensitive_write_target() -> String {
    format!(
        "(?:{SYSTEM_CONFIG_PATH}|/dev/sd|{SSH_PATH}|{HERMES_ENV_PATH}|{HERMES_CONFIG_PATH}|{SHELL_RC_FILES}|{CREDENTIAL_FILES})"
    )
}

fn user_sensitive_write_target() -> String {
    format!("(?:{SSH_PATH}|{SHELL_RC_FILES}|{CREDENTIAL_FILES})")
}

fn project_sensitive_write_target() -> String {
    format!("(?:{PROJECT_ENV_PATH}|{PROJECT_CONFIG_PATH})")
}

/// `rm` with its flag group, anchored at a command position.
fn rm_prefix() -> String {
    format!(r"{CMDPOS}rm\s+(-[^\s]*\s+)*")
}

/// A destructive rm path: wrapped in matching quotes, or bare and ended by a terminator.
fn rm_path(alternatives: &str) -> String {
    format!(r#"(?:["'](?:{alternatives})["']|(?:{alternatives})(?:\s|\z|[)`;|&]))"#)
}

/// Commands that are never allowed, whatever the approval mode (Python's HARDLINE_PATTERNS).
pub(super) fn hardline_rules() -> Vec<Rule> {
    let rm = rm_prefix();
    vec![
        rule(
            format!("{rm}{}", rm_path(r"/(?:(?:\.\.?)?/)*(?:\.\.?)?\**|/ \*")),
            "recursive delete of root filesystem",
        ),
        rule(
            format!("{rm}{}", rm_path(HARDLINE_SYSTEM_DIRS)),
            "recursive delete of system directory",
        ),
        rule(
            format!("{rm}{}", rm_path(r"(?:~|\$\{?HOME\}?)(?:/?|/\*)?")),
            "recursive delete of home directory",
        ),
        rule(r"\bmkfs(\.[a-z0-9]+)?\b", "format filesystem (mkfs)"),
        rule(
            r"\bdd\b[^\n]*\bof=/dev/(sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*",
            "dd to raw block device",
        ),
        rule(
            r">\s*/dev/(sd|nvme|hd|mmcblk|vd|xvd)[a-z0-9]*\b",
            "redirect to raw block device",
        ),
        rule(FORK_BOMB, "fork bomb"),
        rule(r"\bkill\s+(-[^\s]+\s+)*-1\b", "kill all processes"),
        rule(
            format!(r"{CMDPOS}(shutdown|reboot|halt|poweroff)\b"),
            "system shutdown/reboot",
        ),
        rule(
            format!(r"{CMDPOS}init\s+[06]\b"),
            "init 0/6 (shutdown/reboot)",
        ),
        rule(
            format!(r"{CMDPOS}systemctl\s+(poweroff|reboot|halt|kexec)\b"),
            "systemctl poweroff/reboot",
        ),
        rule(
            format!(r"{CMDPOS}telinit\s+[06]\b"),
            "telinit 0/6 (shutdown/reboot)",
        ),
    ]
}

const FORK_BOMB: &str = r":\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:";
const SHELLS: &str = r"\b(bash|sh|zsh|ksh|dash)\b";
const GATEWAY_OUTSIDE_SYSTEMD: &str =
    "start gateway outside systemd (use 'systemctl --user restart hermes-gateway')";

/// Commands that need approval (Python's DANGEROUS_PATTERNS, same order).
pub(super) fn dangerous_rules() -> Vec<Rule> {
    let sensitive = sensitive_write_target();
    let user = user_sensitive_write_target();
    let project = project_sensitive_write_target();
    let hermes = format!("(?:{HERMES_CONFIG_PATH}|{HERMES_ENV_PATH})");
    let sys = SYSTEM_CONFIG_PATH;
    vec![
        rule(r"\brm\s+(-[^\s]*\s+)*/", "delete in root path"),
        rule(r"\brm\s+-[^\s]*r", "recursive delete"),
        rule(r"\brm\s+--recursive\b", "recursive delete (long flag)"),
        rule(
            r"\bcmd(?:\.exe)?\s+/(?:c|k)\s+.*\b(?:del|erase|rd|rmdir)\b",
            "Windows cmd destructive delete",
        ),
        rule(
            r#"\b(?:powershell|pwsh)(?:\.exe)?\b(?:\s+-\S+)*\s+(?:-(?:command|c)\s+)?["']?(?:remove-item|rmdir|erase|del|rd|ri|rm)\b"#,
            "Windows PowerShell destructive delete",
        ),
        rule(
            r"\b(?:powershell|pwsh)(?:\.exe)?\b.*\s-(?:encodedcommand|enc|e)\b",
            "PowerShell encoded command execution",
        ),
        rule(
            r"\bchmod\s+(-[^\s]*\s+)*(777|666|o\+[rwx]*w|a\+[rwx]*w)\b",
            "world/other-writable permissions",
        ),
        rule(
            r"\bchmod\s+--recursive\b.*(777|666|o\+[rwx]*w|a\+[rwx]*w)",
            "recursive world/other-writable (long flag)",
        ),
        rule(r"\bchown\s+(-[^\s]*)?R\s+root", "recursive chown to root"),
        rule(
            r"\bchown\s+--recur[a-z]*\b.*root",
            "recursive chown to root (long flag)",
        ),
        rule(r"\bmkfs\b", "format filesystem"),
        rule(r"\bdd\s+.*if=", "disk copy"),
        rule(r">\s*/dev/sd", "write to block device"),
        rule(r"\bDROP\s+(TABLE|DATABASE)\b", "SQL DROP"),
        Rule {
            pattern: r"\bDELETE\s+FROM\b".to_owned(),
            description: "SQL DELETE without WHERE",
            check: RuleCheck::DeleteWithoutWhere,
        },
        rule(r"\bTRUNCATE\s+(TABLE)?\s*\w", "SQL TRUNCATE"),
        rule(format!(r">\s*{sys}"), "overwrite system config"),
        rule(
            r"\bsystemctl\s+(-[^\s]+\s+)*(stop|restart|disable|mask)\b",
            "stop/restart system service",
        ),
        rule(r"\bkill\s+-9\s+-1\b", "kill all processes"),
        rule(r"\bpkill\s+-9\b", "force kill processes"),
        rule(
            r"\bkillall\s+(-[^\s]*\s+)*-(9|KILL|SIGKILL)\b",
            "force kill processes (killall -KILL)",
        ),
        rule(
            r"\bkillall\s+(-[^\s]*\s+)*-s\s+(KILL|SIGKILL|9)\b",
            "force kill processes (killall -s KILL)",
        ),
        rule(
            r"\bkillall\s+(-[^\s]*\s+)*-r\b",
            "kill processes by regex (killall -r)",
        ),
        rule(FORK_BOMB, "fork bomb"),
        // hermesd: also through `sudo`/`env`/`command`/`exec` after the pipe (Hermes: none).
        rule(
            r"\b(curl|wget)\b.*\|\s*(?:(?:sudo|env|command|exec)\s+(?:-\S+\s+)*)*(?:[/\w]*/)?(?:ba)?sh(?:\s|\z|-c)",
            "pipe remote content to shell",
        ),
        rule(
            r"\b(bash|sh|zsh|ksh)\s+<\s*<?\s*\(\s*(curl|wget)\b",
            "execute remote script via process substitution",
        ),
        // hermesd: also quoted (`eval "$(curl …)"`) and process substitution (`source <(curl …)`).
        rule(
            r#"(?:\beval\b|\bsource\b|\.)\s*["']?(?:\$\(\s*|`\s*|<\(\s*)(?:curl|wget)\b"#,
            "execute remote content via command substitution",
        ),
        rule(
            format!(r"\b(base64|base32|base16)\s+(?:-[dD]|--decode)\b.*\|\s*{SHELLS}"),
            "pipe decoded content to shell (possible command obfuscation)",
        ),
        rule(
            format!(r"\bxxd\s+-r\b.*\|\s*{SHELLS}"),
            "pipe xxd-decoded content to shell (possible command obfuscation)",
        ),
        rule(
            format!(r"\becho\b[^|]*\|\s*\btr\b[^|]*\|\s*{SHELLS}"),
            "pipe tr-transformed output to shell (possible command obfuscation)",
        ),
        rule(
            format!(r"\bopenssl\b.*\b(?:base64|enc)\b[^|]*\s+-[dD]\b[^|]*\|\s*{SHELLS}"),
            "pipe openssl-decoded content to shell (possible command obfuscation)",
        ),
        rule(
            format!(r#"\btee\b.*["']?{sensitive}"#),
            "overwrite system file via tee",
        ),
        rule(
            format!(r#">>?\s*["']?{sensitive}"#),
            "overwrite system file via redirection",
        ),
        rule(
            format!(r#"\btee\b.*["']?{project}["']?{WRITE_TARGET_BOUNDARY}"#),
            "overwrite project env/config via tee",
        ),
        rule(
            format!(r#">>?\s*["']?{project}["']?{WRITE_TARGET_BOUNDARY}"#),
            "overwrite project env/config via redirection",
        ),
        rule(r"\bxargs\s+.*\brm\b", "xargs with rm"),
        rule(
            r"\bfind\b.*-exec(?:dir)?\s+(/\S*/)?rm\b",
            "find -exec/-execdir rm",
        ),
        rule(r"\bfind\b.*-delete\b", "find -delete"),
        rule(
            r"\bhermes\s+(?:-{1,2}\S+(?:\s+\S+)?\s+)*gateway\s+(stop|restart)\b",
            "stop/restart hermes gateway (kills running agents)",
        ),
        rule(
            r"\bhermes\s+update\b",
            "hermes update (restarts gateway, kills running agents)",
        ),
        rule(
            r"\bdocker\s+compose\s+(restart|stop|kill|down)\b",
            "docker compose restart/stop/kill/down (container lifecycle)",
        ),
        rule(
            r"\bdocker\s+(restart|stop|kill)\b",
            "docker restart/stop/kill (container lifecycle)",
        ),
        rule(
            format!(r"gateway\s+run\b.*(&\s*{EOL}|&\s*;|\bdisown\b|\bsetsid\b)"),
            GATEWAY_OUTSIDE_SYSTEMD,
        ),
        rule(r"\bnohup\b.*gateway\s+run\b", GATEWAY_OUTSIDE_SYSTEMD),
        rule(
            r"\b(pkill|killall)\b.*\b(hermes|gateway|cli\.py)\b",
            "kill hermes/gateway process (self-termination)",
        ),
        rule(
            r"\bkill\b.*\$\(\s*(pgrep|pidof)\b",
            "kill process via pgrep/pidof expansion (self-termination)",
        ),
        rule(
            r"\bkill\b.*`\s*(pgrep|pidof)\b",
            "kill process via backtick pgrep/pidof expansion (self-termination)",
        ),
        rule(
            r"\blaunchctl\s+(stop|kickstart|bootout|unload|kill|disable|remove)\b.*\b(hermes|ai\.hermes)\b",
            "stop/restart hermes launchd service (kills running agents)",
        ),
        rule(
            format!(r"\b(cp|mv|install)\b.*\s{sys}"),
            "copy/move file into system config path",
        ),
        rule(
            format!(r#"\b(cp|mv|install)\b.*\s["']?{project}["']?{COMMAND_TAIL}"#),
            "overwrite project env/config file",
        ),
        rule(
            format!(r#"\b(cp|mv|install)\b.*\s["']?{sensitive}[^\s"']*["']?{COMMAND_TAIL}"#),
            "copy/move file into sensitive credential/SSH/shell-rc path",
        ),
        rule(
            format!(r#"\bsed\s+-[^\s]*i.*(?:{user})[^\s"']*"#),
            "in-place edit of sensitive credential/SSH/shell-rc path",
        ),
        rule(
            format!(r#"\bsed\s+--in-place\b.*(?:{user})[^\s"']*"#),
            "in-place edit of sensitive credential/SSH/shell-rc path (long flag)",
        ),
        rule(
            format!(r#"\b(?:perl|ruby)\b.*(?:^|\s)-[^\s]*i\b.*(?:{user})[^\s"']*"#),
            "in-place edit of sensitive credential/SSH/shell-rc path (perl/ruby)",
        ),
        rule(
            format!(r"\bsed\s+-[^\s]*i.*\s{sys}"),
            "in-place edit of system config",
        ),
        rule(
            format!(r"\bsed\s+--in-place\b.*\s{sys}"),
            "in-place edit of system config (long flag)",
        ),
        rule(
            format!(r"\bsed\s+-[^\s]*i.*{hermes}"),
            "in-place edit of Hermes config/env",
        ),
        rule(
            format!(r"\bsed\s+--in-place\b.*{hermes}"),
            "in-place edit of Hermes config/env (long flag)",
        ),
        rule(
            format!(r"\b(?:perl|ruby)\b.*(?:^|\s)-[^\s]*i\b.*{hermes}"),
            "in-place edit of Hermes config/env (perl/ruby)",
        ),
        rule(r"\b(bash|sh|zsh|ksh)\s+<<", "shell execution via heredoc"),
        rule(
            r"\bgit\s+reset\s+--h(?:a(?:r(?:d)?)?)?\b",
            "git reset --hard (destroys uncommitted changes)",
        ),
        rule(
            r"\bgit\s+push\b.*--forc[a-z]*\b",
            "git force push (rewrites remote history)",
        ),
        rule(
            r"\bgit\s+push\b.*-f\b",
            "git force push short flag (rewrites remote history)",
        ),
        rule(
            r"\bgit\s+clean\s+-[^\s]*f",
            "git clean with force (deletes untracked files)",
        ),
        rule(r"\bgit\s+branch\s+-D\b", "git branch force delete"),
        rule(
            r"\bgit\s+branch\b[^;|&\n]*?(?:-d\b|--delete\b)[^;|&\n]*?(?:-f\b|--force\b)",
            "git branch force delete (long flags)",
        ),
        rule(
            r"\bgit\s+branch\b[^;|&\n]*?(?:-f\b|--force\b)[^;|&\n]*?(?:-d\b|--delete\b)",
            "git branch force delete (long flags, force-first)",
        ),
        rule(
            r"\bchmod\s+\+x\b.*[;&|]+\s*\./",
            "chmod +x followed by immediate execution",
        ),
        rule(
            r"\bsudo\b[^;|&\n]*?\s+(?:-s\b|--st[a-z]*\b|-a\b|--a[a-z]*\b)",
            "sudo with privilege flag (stdin/askpass/shell/list)",
        ),
        rule(
            r"\bsudo\b[^;|&\n]*?\s+-[a-z]*[sa][a-z]*\b",
            "sudo with combined-flag privilege escalation",
        ),
    ]
}

/// `sudo -S` at a command start (Python's `_SUDO_STDIN_RE`).
pub(super) const SUDO_STDIN: &str = r"(?:^|[;&|`\n]|&&|\|\||\$\()\s*sudo\s+-S\b";
