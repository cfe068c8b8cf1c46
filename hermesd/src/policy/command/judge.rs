//! `CommandPolicy`: the one judge of what the agent runs. A command for `terminal` (foreground
//! or background) and every write to a background process's stdin is judged here; `exec` runs
//! nothing without the [`Clearance`] a verdict gives, and a clearance covers exactly the text it
//! was given for. Order: the size limit, Hermes' hardline list, the user's `approvals.deny`
//! globs, the daemon's own state (refused); then settings writes, Hermes' dangerous patterns and
//! writes to interpreters (asked).

use std::path::Path;

use super::lex::decode_quoting;
use super::normalize::{HomeFolds, normalize_with, parser_limit_exceeded};
use super::protected::{Reach, reach};
use super::stdin::{INTERPRETER_WRITE_KEY, complete_commands, runs_interpreter};
use super::{
    Danger, PARSER_LIMIT_KEY, Prepared, detect_normalized, detect_prepared, hardline_normalized,
    hardline_prepared, sudo_stdin_normalized,
};
use crate::policy::paths::PathPolicy;

/// What the user is asked before something runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ask {
    /// The rule's key: what "approve for this session" and "always" remember.
    pub key: String,
    /// Why it needs approval.
    pub reason: String,
    /// What the user is shown.
    pub command: String,
}

/// Proof that the policy judged a command or a stdin write and it may go ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clearance(Cleared);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Cleared {
    Command(String),
    Stdin { pending: String, data: String },
}

impl Clearance {
    /// The command this clears running, if it clears a command.
    pub fn command(&self) -> Option<&str> {
        match &self.0 {
            Cleared::Command(c) => Some(c),
            Cleared::Stdin { .. } => None,
        }
    }

    /// A clearance no rule judged, for the unit tests of `exec`.
    #[cfg(test)]
    pub fn unjudged(command: impl Into<String>) -> Self {
        Self(Cleared::Command(command.into()))
    }

    /// A stdin clearance no rule judged, for the unit tests of `exec`.
    #[cfg(test)]
    pub fn unjudged_stdin(pending: &str, data: &str) -> Self {
        Self(Cleared::Stdin {
            pending: pending.to_string(),
            data: data.to_string(),
        })
    }

    /// Whether this clears writing `data` after `pending` to a process's stdin.
    pub fn covers_stdin(&self, pending: &str, data: &str) -> bool {
        matches!(&self.0, Cleared::Stdin { pending: p, data: d } if p == pending && d == data)
    }
}

/// Something that may run once the user agrees to every ask.
#[derive(Debug)]
pub struct Pending {
    pub asks: Vec<Ask>,
    clearance: Clearance,
}

impl Pending {
    /// The user agreed to every ask.
    pub fn approved(self) -> Clearance {
        self.clearance
    }
}

/// The judgement on a command or a stdin write.
#[derive(Debug)]
pub enum Verdict {
    Run(Clearance),
    Ask(Pending),
    Refuse(String),
}

/// The command rules of one daemon: its homes, folded into Hermes' `~/.hermes` spelling for the
/// patterns, and the user's deny globs.
pub struct CommandPolicy {
    paths: PathPolicy,
    folds: HomeFolds,
    deny: Vec<(String, globset::GlobMatcher)>,
}

impl std::fmt::Debug for CommandPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandPolicy").finish_non_exhaustive()
    }
}

impl CommandPolicy {
    /// The rules for `paths`' homes with `deny` (`approvals.deny`: fnmatch globs, matched
    /// case-insensitively against the normalised command). Returns the globs that do not parse.
    pub fn new(paths: PathPolicy, deny: &[String]) -> (Self, Vec<String>) {
        let text = |p: &Path| p.to_string_lossy().into_owned();
        let mut hermes = vec![text(paths.hermes_home())];
        hermes.extend(paths.user_home().map(|h| text(&h.join(".hermes"))));
        let mut user: Vec<String> = paths.user_home().map(text).into_iter().collect();
        user.extend(
            paths
                .user_home()
                .map(|h| text(&crate::policy::paths::real(h))),
        );
        let folds = HomeFolds::new(&hermes, &user);
        let mut bad = Vec::new();
        let deny = deny
            .iter()
            .map(|g| g.trim())
            .filter(|g| !g.is_empty())
            .filter_map(|g| {
                let glob = globset::GlobBuilder::new(&g.to_lowercase())
                    .literal_separator(false)
                    .backslash_escape(true)
                    .build();
                match glob {
                    Ok(glob) => Some((g.to_string(), glob.compile_matcher())),
                    Err(e) => {
                        bad.push(format!("approvals.deny: `{g}` is not a glob: {e}"));
                        None
                    }
                }
            })
            .collect();
        (Self { paths, folds, deny }, bad)
    }

    pub fn paths(&self) -> &PathPolicy {
        &self.paths
    }

    /// Judge `command`, to be run in `cwd`. Touches the filesystem (`lstat`s of the words that
    /// name paths), so from async code call it on a blocking thread.
    pub fn judge(&self, command: &str, cwd: &Path) -> Verdict {
        let (refusal, asks) = self.findings(command, cwd);
        if let Some(refusal) = refusal {
            return Verdict::Refuse(refusal);
        }
        let clearance = Clearance(Cleared::Command(command.to_string()));
        asks_or_run(asks, clearance)
    }

    /// Judge writing `data` to the stdin of a background process started with
    /// `process_command` in `cwd`, whose buffer holds `pending` (text that does not complete a
    /// command yet: see [`complete_commands`]). Every command the write completes is judged as a
    /// command, a here-document with its body; any write to an interpreter (found through the
    /// wrappers it runs under) is asked.
    pub fn judge_stdin(
        &self,
        process_command: &str,
        cwd: &Path,
        pending: &str,
        data: &str,
    ) -> Verdict {
        let (complete, _rest) = complete_commands(process_command, pending, data);
        let mut asks = Vec::new();
        if runs_interpreter(process_command) && !data.is_empty() {
            asks.push(Ask {
                key: INTERPRETER_WRITE_KEY.into(),
                reason: format!("sends input that `{process_command}` runs"),
                command: format!("{pending}{data}"),
            });
        }
        // Each completed command, and all of them together: a hardline command cut at its own
        // `;` (`:(){ :|:& };:`) is only whole in the joined text.
        let joined = complete.concat();
        let whole = (complete.len() > 1).then_some(&joined);
        for line in complete.iter().chain(whole) {
            let line = line.trim_end_matches(['\n', ';']).trim();
            if line.is_empty() {
                continue;
            }
            let (refusal, line_asks) = self.findings(line, cwd);
            if let Some(refusal) = refusal {
                return Verdict::Refuse(refusal);
            }
            for line_ask in line_asks {
                if asks.iter().all(|a| a.key != line_ask.key) {
                    asks.push(line_ask);
                }
            }
        }
        let clearance = Clearance(Cleared::Stdin {
            pending: pending.to_string(),
            data: data.to_string(),
        });
        asks_or_run(asks, clearance)
    }

    /// The refusal of `command`, else what must be asked.
    fn findings(&self, command: &str, cwd: &Path) -> (Option<String>, Vec<Ask>) {
        let ask = |key: &str, reason: &str| Ask {
            key: key.to_string(),
            reason: reason.to_string(),
            command: command.to_string(),
        };
        if parser_limit_exceeded(command) {
            return (
                Some(hardline_message(Danger::named(PARSER_LIMIT_KEY))),
                Vec::new(),
            );
        }
        let normalized = normalize_with(command, &self.folds);
        let prepared = Prepared::new(&normalized);
        if let Some(danger) =
            hardline_prepared(&prepared).or_else(|| sudo_stdin_normalized(&normalized))
        {
            return (Some(hardline_message(danger)), Vec::new());
        }
        if let Some(glob) = self.denied_by_user(&normalized) {
            return (
                Some(format!(
                    "BLOCKED: this command matches the user-defined deny rule '{glob}' \
                     (approvals.deny in config.yaml). It cannot be executed via the agent — not \
                     even with --yolo or approvals.mode=off. Do NOT retry or rephrase this \
                     command; the user has explicitly forbidden it."
                )),
                Vec::new(),
            );
        }
        let mut asks = Vec::new();
        // The path rules split the command themselves: they get it with `$'…'` decoded.
        let reached = reach(&decode_quoting(command), cwd, &self.paths);
        match reached.reach {
            Some(Reach::DaemonState(path)) => {
                return (Some(daemon_state_message(&path)), Vec::new());
            }
            Some(other) => {
                let (key, reason) = other.question();
                asks.push(ask(key, &reason));
            }
            None => {}
        }
        let dangers = std::iter::once(detect_prepared(&prepared).or_else(|| {
            super::extra::overwritten_existing_file(&normalized, cwd, self.paths.user_home())
        }))
        .chain(reached.nested.iter().map(|inner| {
            let inner = normalize_with(inner, &self.folds);
            hardline_normalized(&inner).or_else(|| detect_normalized(&inner))
        }))
        .chain(std::iter::once(reached.hidden));
        for danger in dangers.flatten() {
            if asks.iter().all(|a| a.key != danger.key) {
                asks.push(ask(danger.key, danger.description));
            }
        }
        (None, asks)
    }

    fn denied_by_user(&self, normalized: &str) -> Option<&str> {
        if self.deny.is_empty() {
            return None;
        }
        let candidate = super::shell::lowercase(normalized.trim());
        self.deny
            .iter()
            .find(|(_, m)| m.is_match(&*candidate))
            .map(|(g, _)| g.as_str())
    }
}

fn asks_or_run(asks: Vec<Ask>, clearance: Clearance) -> Verdict {
    if asks.is_empty() {
        Verdict::Run(clearance)
    } else {
        Verdict::Ask(Pending { asks, clearance })
    }
}

fn hardline_message(danger: Danger) -> String {
    format!(
        "BLOCKED (hardline): {}. This command is on the unconditional blocklist and cannot be run \
         by the agent, not even with --yolo or approvals.mode=off. If you really need it, ask the \
         user to run it in their own terminal.",
        danger.description
    )
}

fn daemon_state_message(path: &Path) -> String {
    format!(
        "BLOCKED: this command reaches {} — the daemon's own database and records (approvals, \
         transcripts, background processes). The agent may not read or change them with a \
         command; use session_search for past conversations. Approvals are given by the user \
         when asked, or in config.yaml (command_allowlist).",
        path.display()
    )
}
