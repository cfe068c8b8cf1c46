//! Where the file tools may write and read: system locations and the daemon's own configuration
//! and secrets are refused outright (as Hermes does); shell start-up files and `~/.ssh` need the
//! user's approval, like the same writes made through `terminal`. Reads of credential stores and
//! project `.env` files are refused too — defence in depth, not a boundary (the shell can still
//! read them, and the approval guard asks first).

use std::path::{Path, PathBuf};

use super::{ApprovalDecision, ApprovalRequest, ToolContext, parallel::normalize};

const SYSTEM_PREFIXES: [&str; 5] = [
    "/etc/",
    "/boot/",
    "/usr/lib/systemd/",
    "/private/etc/",
    "/private/var/",
];
const SYSTEM_EXACT: [&str; 2] = ["/var/run/docker.sock", "/run/docker.sock"];
const SHELL_STARTUP: [&str; 8] = [
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".config/fish/config.fish",
];

/// What may happen to a write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteVerdict {
    Allowed,
    Refused(String),
    NeedsApproval {
        key: &'static str,
        reason: &'static str,
    },
}

/// Judge a write to `path` (absolute, already resolved against the cwd).
pub fn check_write(path: &Path, hermes_home: &Path, user_home: Option<&Path>) -> WriteVerdict {
    let path = normalize(path);
    let text = path.to_string_lossy();
    if SYSTEM_PREFIXES.iter().any(|p| text.starts_with(p)) || SYSTEM_EXACT.contains(&&*text) {
        return WriteVerdict::Refused(format!(
            "Refusing to write to sensitive system path: {text}\nUse the terminal tool with sudo \
             if you need to modify system files."
        ));
    }
    let home = normalize(hermes_home);
    if [home.join("config.yaml"), home.join(".env")].contains(&path) {
        return WriteVerdict::Refused(format!(
            "Refusing to write to the Hermes configuration: {text}\nThe agent cannot change \
             security settings or keys; the user edits them with `hermesctl config set`."
        ));
    }
    if let Some(user) = user_home.map(normalize) {
        if path.starts_with(user.join(".ssh")) {
            return WriteVerdict::NeedsApproval {
                key: "write to ~/.ssh",
                reason: "writes SSH keys or configuration",
            };
        }
        if SHELL_STARTUP.iter().any(|f| path == user.join(f)) {
            return WriteVerdict::NeedsApproval {
                key: "write to a shell start-up file",
                reason: "changes what every new shell runs",
            };
        }
    }
    WriteVerdict::Allowed
}

const SECRET_FILES_IN_HOME: [&str; 6] = [
    "auth.json",
    "auth.lock",
    ".anthropic_oauth.json",
    ".env",
    "webhook_subscriptions.json",
    "auth/google_oauth.json",
];
const ENV_FILE_NAMES: [&str; 7] = [
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.test",
    ".env.staging",
    ".envrc",
];

/// Why `read_file` may not read `path` (absolute), if it may not.
pub fn check_read(path: &Path, hermes_home: &Path) -> Option<String> {
    let path = normalize(path);
    let home = normalize(hermes_home);
    let secret_store = SECRET_FILES_IN_HOME.iter().any(|f| path == home.join(f))
        || path.starts_with(home.join("mcp-tokens"));
    let env_file = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| ENV_FILE_NAMES.contains(&n));
    (secret_store || env_file).then(|| {
        format!(
            "Access denied: {} holds credentials and is not readable by the agent. Use a \
             documented example file (such as .env.example) or ask the user.",
            path.display()
        )
    })
}

/// Check every path of a write; `Err` carries the refusal or denial the model is told.
pub async fn guard_writes(ctx: &ToolContext, paths: &[PathBuf]) -> Result<(), String> {
    let user_home = std::env::var_os("HOME").map(PathBuf::from);
    for path in paths {
        match check_write(path, &ctx.services.hermes_home, user_home.as_deref()) {
            WriteVerdict::Allowed => {}
            WriteVerdict::Refused(message) => return Err(message),
            WriteVerdict::NeedsApproval { key, reason } => {
                let request = ApprovalRequest {
                    command: format!("write {}", path.display()),
                    pattern_key: key.to_string(),
                    reason: reason.to_string(),
                };
                if let ApprovalDecision::Denied(message) = ctx.turn.approve(request).await {
                    return Err(message);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_stores_and_env_files_are_not_readable() {
        let hermes = Path::new("/home/u/.hermes");
        let denied = |p: &str| check_read(Path::new(p), hermes).is_some();
        assert!(denied("/home/u/.hermes/.env"));
        assert!(denied("/home/u/.hermes/auth.json"));
        assert!(denied("/home/u/.hermes/mcp-tokens/github.json"));
        assert!(denied("/home/u/project/.env.local"));
        assert!(denied("/home/u/project/sub/../.envrc"));
        assert!(!denied("/home/u/project/.env.example"));
        assert!(!denied("/home/u/.hermes/config.yaml"));
        assert!(!denied("/home/u/project/src/env.rs"));
    }

    #[test]
    fn system_paths_and_hermes_config_are_refused_and_ssh_needs_approval() {
        let hermes = Path::new("/home/u/.hermes");
        let user = Some(Path::new("/home/u"));
        let verdict = |p: &str| check_write(Path::new(p), hermes, user);
        assert!(matches!(verdict("/etc/passwd"), WriteVerdict::Refused(_)));
        assert!(matches!(
            verdict("/tmp/../etc/hosts"),
            WriteVerdict::Refused(_)
        ));
        assert!(matches!(
            verdict("/home/u/.hermes/config.yaml"),
            WriteVerdict::Refused(_)
        ));
        assert!(matches!(
            verdict("/home/u/.hermes/.env"),
            WriteVerdict::Refused(_)
        ));
        assert!(matches!(
            verdict("/home/u/.ssh/authorized_keys"),
            WriteVerdict::NeedsApproval { .. }
        ));
        assert!(matches!(
            verdict("/home/u/.bashrc"),
            WriteVerdict::NeedsApproval { .. }
        ));
        assert_eq!(verdict("/home/u/project/.bashrc"), WriteVerdict::Allowed);
        assert_eq!(
            verdict("/home/u/.hermes/skills/x/SKILL.md"),
            WriteVerdict::Allowed
        );
        assert_eq!(verdict("/etcetera/file"), WriteVerdict::Allowed);
    }
}
