//! `PathPolicy`: what the agent may read and write. Every decision is taken on the real path —
//! `~` and `$HOME` expanded against the daemon's homes, `..` removed, symlinks followed — and
//! against every Hermes home at once: the daemon's (however it was given: `--home`,
//! `HERMES_HOME` or a profile), the root `~/.hermes`, and each profile under the root. The file
//! tools, `search_files` (its root and every file it visits), `skill_view`, the terminal's
//! working directory and the command rules all ask here.

pub mod lists;
mod resolve;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use resolve::{absolute, expand, real, real_below};

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

/// A write cron would run unattended.
const UNATTENDED: WriteVerdict = WriteVerdict::NeedsApproval {
    key: "write to the cron scripts",
    reason: "cron jobs run these scripts unattended, without asking",
};

/// What a protected path is, for the command rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    /// The daemon's database, its journals or its process record: no command may touch it.
    DaemonState,
    /// Configuration or credentials: a command that writes it needs approval.
    Settings,
}

/// The daemon's homes, resolved once; cheap to clone.
#[derive(Debug, Clone)]
pub struct PathPolicy {
    /// The daemon's `HERMES_HOME`, real.
    home: PathBuf,
    /// The Hermes root: the parent of `profiles/` when the daemon runs a profile, else
    /// `~/.hermes`, real.
    root: PathBuf,
    /// The user's home as given (`HOME`) and real; `None` when unknown.
    user_home: Option<PathBuf>,
    user_home_real: Option<PathBuf>,
}

impl PathPolicy {
    /// The policy of a daemon whose home is `hermes_home`, for a user whose home is `user_home`.
    pub fn new(hermes_home: &Path, user_home: Option<&Path>) -> Self {
        let home = real(&absolute(hermes_home, Path::new("/")));
        let user_home = user_home.filter(|h| h.is_absolute()).map(Path::to_path_buf);
        let user_home_real = user_home.as_deref().map(real);
        let profile_root = home
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "profiles"))
            .and_then(Path::parent)
            .map(Path::to_path_buf);
        let root = profile_root
            .or_else(|| user_home_real.as_ref().map(|h| h.join(".hermes")))
            .unwrap_or_else(|| home.clone());
        Self {
            home,
            root,
            user_home,
            user_home_real,
        }
    }

    /// The daemon's home, real.
    pub fn hermes_home(&self) -> &Path {
        &self.home
    }

    /// The Hermes root (`~/.hermes`, or the parent of `profiles/` when the daemon runs a
    /// profile), real when it exists.
    pub fn hermes_root(&self) -> &Path {
        &self.root
    }

    /// The user's home as the environment gives it.
    pub fn user_home(&self) -> Option<&Path> {
        self.user_home.as_deref()
    }

    /// `text` with `~`, `$HOME` and `$HERMES_HOME` expanded from the daemon's homes (never the
    /// process environment), not yet made absolute or real.
    pub fn expand(&self, text: &str) -> PathBuf {
        expand(text, self.user_home.as_deref(), &self.home)
    }

    /// The real path a tool reaches with `text` from `cwd`.
    pub fn resolve(&self, text: &str, cwd: &Path) -> PathBuf {
        self.resolve_below(text, cwd, None)
    }

    /// [`Self::resolve`] from a `cwd` that is real already (resolved in the same judgement):
    /// its components are not looked up again.
    pub fn resolve_in(&self, text: &str, cwd: &Path) -> PathBuf {
        self.resolve_below(text, cwd, Some(cwd))
    }

    fn resolve_below(&self, text: &str, cwd: &Path, real_cwd: Option<&Path>) -> PathBuf {
        let expanded = expand(text, self.user_home.as_deref(), &self.home);
        let path = absolute(&expanded, cwd);
        let known = [
            Some(self.home.as_path()),
            self.user_home_real.as_deref(),
            real_cwd,
        ];
        let known: Vec<&Path> = known.into_iter().flatten().collect();
        real_below(&path, &known)
    }

    /// `path` (real) relative to each Hermes home it is in: the daemon's, the root's, or a
    /// profile's (`…/profiles/<name>/…`, the part after the name). Homes may nest (a daemon home
    /// holding the user's home), so every one is tried.
    fn in_hermes_homes<'p>(&self, path: &'p Path) -> impl Iterator<Item = &'p Path> {
        [&self.home, &self.root]
            .into_iter()
            .filter_map(move |base| path.strip_prefix(base).ok())
            .map(|rest| match rest.strip_prefix("profiles") {
                Ok(inner) if !inner.as_os_str().is_empty() => {
                    let mut parts = inner.components();
                    parts.next();
                    parts.as_path()
                }
                _ => rest,
            })
    }

    /// `path` (real) relative to the user's home, if it is in it.
    fn in_user_home<'p>(&self, path: &'p Path) -> Option<&'p Path> {
        [&self.user_home_real, &self.user_home]
            .into_iter()
            .flatten()
            .find_map(|home| path.strip_prefix(home).ok())
    }

    /// What `path` (real) is to the command rules, if it is protected.
    pub fn protected(&self, path: &Path) -> Option<Protected> {
        for rest in self.in_hermes_homes(path) {
            if lists::HOME_STATE.iter().any(|f| rest == Path::new(f)) {
                return Some(Protected::DaemonState);
            }
            let settings = lists::HOME_SETTINGS
                .iter()
                .chain(lists::HOME_SECRETS)
                .any(|f| rest == Path::new(f));
            let secret_dir = lists::HOME_SECRET_DIRS.iter().any(|d| rest.starts_with(d));
            if settings || secret_dir {
                return Some(Protected::Settings);
            }
        }
        let user = self.in_user_home(path)?;
        let secret = lists::USER_SECRETS.iter().any(|f| user == Path::new(f))
            || lists::USER_PROTECTED_DIRS
                .iter()
                .any(|d| user.starts_with(d));
        secret.then_some(Protected::Settings)
    }

    /// Why the agent may not read `path` (real), if it may not.
    pub fn check_read(&self, path: &Path) -> Result<(), String> {
        let deny = |what: &str| {
            Err(format!(
                "Access denied: {} {what} and is not readable by the agent. Use a documented \
                 example file (such as .env.example) or ask the user.",
                path.display()
            ))
        };
        for rest in self.in_hermes_homes(path) {
            if lists::HOME_SECRETS.iter().any(|f| rest == Path::new(f))
                || lists::HOME_SECRET_DIRS.iter().any(|d| rest.starts_with(d))
            {
                return deny("holds credentials (a Hermes credential store)");
            }
            if lists::HOME_STATE.iter().any(|f| rest == Path::new(f)) {
                return deny("is the daemon's own state (read it through the session tools)");
            }
        }
        let env_file = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
            lists::ENV_FILE_NAMES
                .iter()
                .any(|e| e.eq_ignore_ascii_case(n))
        });
        if env_file {
            return deny("holds credentials (an environment file)");
        }
        if let Some(user) = self.in_user_home(path) {
            if lists::USER_SECRETS.iter().any(|f| user == Path::new(f))
                || user.starts_with(".gnupg")
            {
                return deny("holds credentials");
            }
            if user.starts_with(".ssh") && !ssh_public(user) {
                return deny("holds credentials (an SSH private key)");
            }
        }
        Ok(())
    }

    /// Whether the agent may write `path` (real), and on what terms.
    pub fn check_write(&self, path: &Path) -> WriteVerdict {
        let text = path.to_string_lossy();
        let system = lists::SYSTEM_PREFIXES.iter().any(|p| path.starts_with(p))
            || lists::SYSTEM_EXACT.contains(&&*text);
        if system {
            return WriteVerdict::Refused(format!(
                "Refusing to write to sensitive system path: {text}\nUse the terminal tool with \
                 sudo if you need to modify system files."
            ));
        }
        if self.in_hermes_homes(path).next().is_some() && self.protected(path).is_some() {
            return WriteVerdict::Refused(format!(
                "Refusing to write to the Hermes configuration, credentials or state: \
                 {text}\nThe agent cannot change security settings, keys or its own records; \
                 the user edits settings with `hermesctl config set`."
            ));
        }
        for rest in self.in_hermes_homes(path) {
            if lists::HOME_PROMPT_SOURCES
                .iter()
                .any(|s| rest.starts_with(s))
            {
                return WriteVerdict::NeedsApproval {
                    key: "write to the agent's prompt sources",
                    reason: "changes what every future prompt contains (SOUL.md, memories, skills)",
                };
            }
            if lists::HOME_UNATTENDED.iter().any(|s| rest.starts_with(s)) {
                return UNATTENDED;
            }
        }
        // The scripts directory may be a symlink elsewhere (a dotfiles checkout): what it
        // points at is as unattended.
        if self.in_unattended_target(path) {
            return UNATTENDED;
        }
        let Some(user) = self.in_user_home(path) else {
            return WriteVerdict::Allowed;
        };
        if self.protected(path).is_some() {
            return WriteVerdict::Refused(format!(
                "Write denied: '{text}' is a protected system/credential file."
            ));
        }
        if lists::SHELL_STARTUP.iter().any(|f| user == Path::new(f)) {
            return WriteVerdict::NeedsApproval {
                key: "write to a shell start-up file",
                reason: "changes what every new shell runs",
            };
        }
        WriteVerdict::Allowed
    }

    /// Whether `path` (real) is below where a home's unattended directory (`scripts/`) really is,
    /// when that directory is a symlink.
    fn in_unattended_target(&self, path: &Path) -> bool {
        [&self.home, &self.root].into_iter().any(|home| {
            lists::HOME_UNATTENDED.iter().any(|dir| {
                let given = home.join(dir);
                let target = real(&given);
                target != given && path.starts_with(&target)
            })
        })
    }

    /// Why the agent may not work in directory `dir` (real), if it may not: the places whose
    /// files it may not read.
    pub fn check_workdir(&self, dir: &Path) -> Result<(), String> {
        let secret_dir = self
            .in_hermes_homes(dir)
            .any(|rest| lists::HOME_SECRET_DIRS.iter().any(|d| rest.starts_with(d)));
        let user_secret = self
            .in_user_home(dir)
            .is_some_and(|u| u.starts_with(".ssh") || u.starts_with(".gnupg"));
        if secret_dir || user_secret {
            return Err(format!(
                "Access denied: {} holds credentials; the agent may not work in it.",
                dir.display()
            ));
        }
        Ok(())
    }

    /// Whether `dir` (real) is a Hermes home itself (the command rules match globs such as
    /// `~/.hermes/*.db` in it against [`Self::home_file_names`]).
    pub fn is_hermes_home(&self, dir: &Path) -> bool {
        self.in_hermes_homes(dir)
            .any(|rest| rest.as_os_str().is_empty())
    }

    /// Each Hermes home strictly below `dir` (real), relative to it: a command that copies,
    /// archives or searches `dir` whole reaches everything in them.
    pub fn homes_below<'p>(&'p self, dir: &'p Path) -> impl Iterator<Item = &'p Path> {
        [&self.home, &self.root]
            .into_iter()
            .filter_map(move |home| home.strip_prefix(dir).ok())
            .filter(|rest| !rest.as_os_str().is_empty())
    }

    /// Every protected file name of a Hermes home, for matching globs against.
    pub fn home_file_names() -> impl Iterator<Item = &'static str> {
        lists::HOME_STATE
            .iter()
            .chain(lists::HOME_SETTINGS)
            .chain(lists::HOME_SECRETS)
            .copied()
    }
}

/// Files in `~/.ssh` that hold nothing secret.
fn ssh_public(relative: &Path) -> bool {
    let name = relative
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    name.ends_with(".pub")
        || [
            "known_hosts",
            "known_hosts.old",
            "config",
            "authorized_keys",
        ]
        .contains(&name)
}
