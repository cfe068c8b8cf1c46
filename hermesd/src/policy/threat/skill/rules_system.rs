//! System-level rules: destructive commands and persistence (cron, shell rc, SSH keys,
//! services, agent-config tampering).

use std::ops::Range;

use super::Severity::{Critical, High, Medium};
use super::rules::{DESTRUCTIVE as D, PERSISTENCE as P, Rule, checked, rule, writes_to};
use super::shell;
use super::text::after;

/// `rm` with a recursive flag (the checks read its arguments).
macro_rules! rm_recursive {
    () => {
        r"\brm\s+(?:-[\w-]+\s+)*?(?:-[a-z]*r[a-z]*|--recursive)\b"
    };
}
macro_rules! agent_files {
    () => {
        r"(?:AGENTS\.md|CLAUDE\.md|GEMINI\.md|\.cursorrules|\.clinerules|\.windsurfrules|\.hermes\.md|HERMES\.md)\b"
    };
}
macro_rules! hermes_files {
    () => {
        r"(?:\.hermes/|\$\{?HERMES_HOME\}?/)(?:config\.yaml|SOUL\.md|memories/(?:MEMORY|USER)\.md)"
    };
}
macro_rules! other_agent_files {
    () => {
        r"(?:\.claude/settings|\.codex/config|\.cursor/rules|\.gemini/settings)"
    };
}

pub(super) static RULES: &[Rule] = &[
    // Destructive.
    checked(
        "destructive_root_rm",
        Critical,
        D,
        rm_recursive!(),
        "recursive delete of / or a system directory",
        shell::rm_system,
    ),
    checked(
        "destructive_home_rm",
        Critical,
        D,
        concat!(rm_recursive!(), r"|\brmdir\b"),
        "recursive delete of the home directory",
        shell::rm_home,
    ),
    checked(
        "recursive_delete_path",
        Medium,
        D,
        rm_recursive!(),
        "recursive delete of an absolute path",
        shell::rm_deep,
    ),
    rule(
        "insecure_perms",
        Medium,
        D,
        r"\bchmod\s+(?:-\w+\s+)*(?:0?777\b|[ugoa]*\+rwx\b)",
        "sets world-writable permissions",
    ),
    checked(
        "system_overwrite",
        Critical,
        D,
        r#"[\s&\d]>>?\s*["']?/etc/"#,
        "overwrites a system configuration file",
        not_systemd_unit,
    ),
    rule(
        "format_filesystem",
        Critical,
        D,
        r"\bmkfs\b",
        "formats a filesystem",
    ),
    checked(
        "disk_overwrite",
        Critical,
        D,
        r#"\bdd\b[^\n]*\bof=["']?/dev/"#,
        "raw write to a disk device",
        not_null_device,
    ),
    checked(
        "python_rmtree",
        High,
        D,
        r#"\bshutil\.rmtree\s*\(\s*(?:[rfb]?["'](?:/|~)|os\.path\.expanduser|(?:pathlib\.)?Path\.home)"#,
        "Python rmtree on an absolute or home path",
        not_temp_argument,
    ),
    checked(
        "truncate_system",
        Critical,
        D,
        r"\btruncate\s+-s\s*0\s+/",
        "truncates a system file to zero bytes",
        not_temp_argument,
    ),
    // Persistence.
    rule(
        "persistence_cron",
        Medium,
        P,
        r"\bcrontab\b|/etc/cron\.|/var/spool/cron",
        "modifies cron jobs",
    ),
    rule(
        "shell_rc_mod",
        Medium,
        P,
        r"\.(?:bashrc|zshrc|profile|bash_profile|bash_login|zprofile|zlogin)\b",
        "references a shell startup file",
    ),
    rule(
        "ssh_backdoor",
        Critical,
        P,
        writes_to!(r"authorized_keys\b"),
        "adds to SSH authorized_keys (backdoor)",
    ),
    rule(
        "ssh_authorized_keys",
        Medium,
        P,
        r"authorized_keys",
        "references SSH authorized_keys",
    ),
    rule(
        "ssh_keygen",
        Medium,
        P,
        r"\bssh-keygen\b",
        "generates SSH keys",
    ),
    rule(
        "systemd_service",
        Medium,
        P,
        r"\bsystemd\b[^\n]*\.service\b|\bsystemctl\s+(?:--user\s+)?(?:enable|start)\b",
        "creates or enables a systemd service",
    ),
    rule(
        "init_script",
        Medium,
        P,
        r"/etc/init\.d/",
        "references an init.d startup script",
    ),
    rule(
        "macos_launchd",
        Medium,
        P,
        r"\blaunchctl\s+(?:load|bootstrap)\b|\bLaunchAgents\b|\bLaunchDaemons\b",
        "macOS launch agent/daemon persistence",
    ),
    rule(
        "sudoers_mod",
        Critical,
        P,
        r"/etc/sudoers|\bvisudo\b",
        "modifies sudoers (privilege escalation)",
    ),
    rule(
        "git_config_global",
        Medium,
        P,
        r"\bgit\s+config\s+--global\s+",
        "changes global git configuration",
    ),
    rule(
        "agent_config_mod",
        Critical,
        P,
        writes_to!(agent_files!()),
        "writes agent instruction files (AGENTS.md, CLAUDE.md, …) to persist instructions",
    ),
    rule(
        "agent_config_ref",
        Medium,
        P,
        agent_files!(),
        "references agent instruction files (AGENTS.md, CLAUDE.md, …)",
    ),
    rule(
        "hermes_config_mod",
        Critical,
        P,
        writes_to!(hermes_files!()),
        "writes Hermes configuration, SOUL.md or memories",
    ),
    rule(
        "hermes_config_ref",
        Medium,
        P,
        hermes_files!(),
        "references Hermes configuration files",
    ),
    rule(
        "other_agent_config",
        High,
        P,
        writes_to!(other_agent_files!()),
        "writes another agent's configuration",
    ),
    rule(
        "other_agent_config_ref",
        Medium,
        P,
        other_agent_files!(),
        "references another agent's configuration",
    ),
];

/// Writing a unit under /etc/systemd is what systemd skills do (flagged as persistence).
fn not_systemd_unit(line: &str, m: Range<usize>) -> bool {
    !after(line, m.end).starts_with("systemd/")
}

/// `of=/dev/null` is a benchmark, not a disk write.
fn not_null_device(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.end);
    !["null", "zero", "stdout", "stderr", "fd/"]
        .iter()
        .any(|d| rest.starts_with(d))
}

/// Arguments under /tmp, /var/tmp or /dev/shm are scratch space.
fn not_temp_argument(line: &str, m: Range<usize>) -> bool {
    let rest = after(line, m.end.saturating_sub(2));
    let start = rest.find(['/', '~']).unwrap_or(0);
    let arg: String = after(rest, start)
        .chars()
        .take_while(|c| !c.is_whitespace() && !"\"')".contains(*c))
        .collect();
    shell::classify_rm_target(&arg) != shell::RmTarget::Temp
}
