//! The walk over a command's segments, and over the commands they run on their behalf
//! (`$(…)`, `find -exec`, `xargs`): each word judged as a path, a `cd` followed, the files each
//! segment writes remembered (running one later asks), the trees of recursive searches, copies
//! and archives walked (`tree`), and each segment checked for code it runs unseen (`hidden`: an
//! awk program, also one read from a file, a git program, also one a variable set anywhere in
//! the command names).

use std::path::{Path, PathBuf};

use super::candidates::candidates;
use super::judgement::{Role, judge_path};
use super::tree::{Budget, tree_reach};
use super::verbs::{COPIERS, Verb};
use super::words::{self, is_redirect_operator, operands, redirect_target, split};
use super::{Reach, Reached};
use crate::policy::command::Danger;
use crate::policy::command::awk_files::awk_file_code;
use crate::policy::command::hidden::{GIT_PROGRAM_KEY, git_env_program, segment_code};
use crate::policy::command::nested::segment_payloads;
use crate::policy::command::shell::{basename, top_level_segments};
use crate::policy::paths::{PathPolicy, absolute, real};

/// How deep commands inside commands (`$(…)` in `find -exec`…) are walked.
const MAX_DEPTH: usize = 4;

/// Commands that run the script file they are given.
const SCRIPT_RUNNERS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "source", "."];

/// Walks `command` from `cwd` (real).
pub(super) fn walk(command: &str, cwd: PathBuf, paths: &PathPolicy) -> Reached {
    let mut walk = Walk {
        paths,
        found: Reached::default(),
        written: Vec::new(),
        unknown_cwd: false,
        listing: !feeds_names(command),
        budget: Budget::default(),
        git_env: false,
    };
    walk.command(command, cwd, 0);
    if walk.git_env && walk.found.hidden.is_none() && names_git(command) {
        walk.found.hidden = Some(Danger {
            key: GIT_PROGRAM_KEY,
            description: "a variable the command sets names a program the git it runs runs",
        });
    }
    walk.found
}

/// Whether `command` may run git: the word `git` anywhere in it (also inside a `bash -c`
/// script or a function), so a program variable set anywhere in it reaches that git.
fn names_git(command: &str) -> bool {
    let word = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_');
    let bytes = command.as_bytes();
    command.match_indices("git").any(|(at, _)| {
        !word(at.checked_sub(1).and_then(|i| bytes.get(i).copied()))
            && !word(bytes.get(at + 3).copied())
    })
}

/// Whether `command` may feed the names a listing prints to another command (`| xargs`,
/// `| while read`, `parallel`): a glob listing of the daemon's records is then judged as any
/// other mention.
fn feeds_names(command: &str) -> bool {
    let plain = if command.contains(['\'', '"', '\\']) {
        std::borrow::Cow::Owned(command.replace(['\'', '"', '\\'], ""))
    } else {
        std::borrow::Cow::Borrowed(command)
    };
    ["xargs", "read", "parallel"]
        .iter()
        .any(|w| plain.contains(w))
}

/// One walk over a command and the commands it runs.
struct Walk<'p> {
    paths: &'p PathPolicy,
    found: Reached,
    /// Files the segments walked so far may write.
    written: Vec<PathBuf>,
    /// A `cd` went to run-time text: the working directory is unknown.
    unknown_cwd: bool,
    /// A listing of the daemon's records by glob may run: no name it prints is read back.
    listing: bool,
    /// What the trees of recursive commands may still cost.
    budget: Budget,
    /// Some segment sets (assigns, exports, declares) a variable whose value git runs.
    git_env: bool,
}

impl Walk<'_> {
    /// Records a reach; `true` once the daemon's state is reached (nothing is stronger).
    fn note(&mut self, reach: Option<Reach>) -> bool {
        if let Some(Reach::DaemonState(_)) = reach {
            self.found.reach = reach;
            return true;
        }
        if let Some(reach) = reach
            && self
                .found
                .reach
                .as_ref()
                .is_none_or(|found| rank(&reach) < rank(found))
        {
            self.found.reach = Some(reach);
        }
        false
    }

    /// Walks `command` from `cwd` (real); `true` once the daemon's state is reached.
    fn command(&mut self, command: &str, mut cwd: PathBuf, depth: usize) -> bool {
        for (offset, segment) in top_level_segments(command) {
            let Some(lexed) = split(segment) else {
                let words: Vec<String> = segment.split_whitespace().map(str::to_string).collect();
                if self.segment(&words, &mut cwd, depth) {
                    return true;
                }
                continue;
            };
            if self.segment(&lexed.words, &mut cwd, depth) {
                return true;
            }
            if self.found.hidden.is_none() {
                let before = command[..offset].trim_end();
                let piped = before.ends_with('|') && !before.ends_with("||");
                self.found.hidden = segment_code(&lexed.words, piped)
                    .or_else(|| awk_file_code(&lexed.words, &cwd, self.paths, &self.written));
            }
            // `export GIT_PAGER=…; git log`: git reads what an earlier segment set.
            self.git_env |= lexed.words.iter().any(|w| git_env_program(w));
            if depth < MAX_DEPTH {
                let payloads = segment_payloads(&lexed.words);
                for inner in lexed
                    .substitutions
                    .iter()
                    .copied()
                    .chain(payloads.iter().map(String::as_str))
                {
                    self.found.nested.push(inner.to_string());
                    if self.command(inner, cwd.clone(), depth + 1) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Walks one segment's words; follows a `cd` in `cwd`.
    fn segment(&mut self, words: &[String], cwd: &mut PathBuf, depth: usize) -> bool {
        let paths = self.paths;
        let operands = operands(words);
        let verb = Verb::of(words, &operands);
        let last = operands.last().copied();
        let into = copy_destination(&verb, words, last, cwd, paths);
        let mut after_redirect = false;
        let mut written_here = Vec::new();
        for (index, word) in words.iter().enumerate() {
            let (target, redirected) = redirect_target(word, after_redirect);
            after_redirect = is_redirect_operator(word);
            let Some(target) = target else { continue };
            // The pattern of a search names no file; nor does a command name without a `/`
            // (it is looked up in PATH), nor a wrapper before it.
            let command_word = index <= verb.at && !word.contains(['/', '=']);
            if (Some(index) == verb.pattern || command_word) && !redirected {
                continue;
            }
            let operand = operands.contains(&index);
            let role = Role {
                redirected,
                written: redirected
                    || verb.writes_all
                    || (COPIERS.contains(&verb.name) && Some(index) == last)
                    || (verb.name == "dd" && word.starts_with("of="))
                    || index
                        .checked_sub(1)
                        .and_then(|i| words.get(i))
                        .is_some_and(|option| verb.output_option(option)),
                copied: verb.copies
                    && operand
                    && (Some(index) != last || !COPIERS.contains(&verb.name)),
                matched: false,
            };
            let mut found = candidates(target, cwd, paths, verb.prints);
            if self.unknown_cwd && !target.starts_with(['/', '~', '$']) {
                // After `cd "$dir"` a relative name may be in any Hermes home.
                found
                    .paths
                    .push(absolute(Path::new(target), paths.hermes_home()));
            }
            let role = Role {
                // A listing's exception holds only where its names are not fed to a command.
                matched: found.matched && self.listing && depth == 0,
                ..role
            };
            if let Some((source, _)) = target.split_once(':')
                && source.starts_with(['/', '~', '$', '.'])
            {
                // A `src:dst` mount (`docker run -v ~/.hermes:/h`).
                found
                    .paths
                    .extend(candidates(source, cwd, paths, false).paths);
            }
            if let Some(dir) = into.as_ref().filter(|_| Some(index) != last) {
                found.paths.extend(
                    Path::new(target)
                        .file_name()
                        .map(|name| real(&dir.join(name))),
                );
            }
            for path in &found.paths {
                if self.note(judge_path(path, &verb, &role, paths)) {
                    return true;
                }
            }
            if role.written && self.note(home_write_decided_later(target, cwd, paths)) {
                return true;
            }
            if role.written {
                written_here.extend(found.paths);
            }
        }
        if verb.ignores
            && let Some(ignore) = self.written.iter().find(|p| {
                p.file_name().is_some_and(|n| {
                    [".ignore", ".rgignore", ".gitignore"].contains(&&*n.to_string_lossy())
                })
            })
        {
            let ignore = ignore.clone();
            self.note(Some(Reach::IgnoreWritten(ignore)));
        }
        if self.found.reach.is_none() {
            // A reach found already asks; the tree walk could add nothing stronger.
            let reach = tree_reach(words, &verb, &operands, cwd, paths, &mut self.budget);
            self.note(reach);
        }
        self.runs_written(words, &verb, &operands, cwd);
        self.written.extend(written_here);
        if let (true, Some(dir)) = (["cd", "pushd"].contains(&verb.name), words.get(1)) {
            self.unknown_cwd = dir.contains(words::UNKNOWN);
            *cwd = paths.resolve_in(dir, cwd);
        }
        false
    }

    /// A script runner (`bash x`, `source x`, `./x`) of a file an earlier segment wrote.
    fn runs_written(&mut self, words: &[String], verb: &Verb<'_>, operands: &[usize], cwd: &Path) {
        if self.written.is_empty() {
            return;
        }
        let script = if SCRIPT_RUNNERS.contains(&verb.name) {
            // `sh x`, or `sh < x`, `sh <x`.
            let first = operands.first().and_then(|&i| words.get(i));
            match first.map(String::as_str) {
                Some("<") => operands.get(1).and_then(|&i| words.get(i)),
                _ => first,
            }
            .map(|w| w.strip_prefix('<').unwrap_or(w))
        } else {
            words
                .iter()
                .find(|w| !w.contains('=') && basename(w) == verb.name)
                .filter(|w| w.contains('/'))
                .map(String::as_str)
        };
        let Some(script) = script else { return };
        let path = self.paths.resolve_in(script, cwd);
        if self.written.contains(&path) {
            self.note(Some(Reach::RunsWritten(path)));
        }
    }
}

/// Which reach is reported when a command has several: the daemon's state, then writes and
/// prints, then copies, searches and runs (`mv /tmp/.env ~/.hermes/` is a write first).
fn rank(reach: &Reach) -> u8 {
    match reach {
        Reach::DaemonState(_) => 0,
        Reach::SettingsWrite(_)
        | Reach::Home(_)
        | Reach::SecretRead(_)
        | Reach::ConsentWrite { .. } => 1,
        Reach::SecretCopy(_)
        | Reach::Above(_)
        | Reach::Search { .. }
        | Reach::CopyTree { .. }
        | Reach::TooLarge(_)
        | Reach::RunsWritten(_)
        | Reach::IgnoreWritten(_) => 2,
    }
}

/// The directory a `cp`/`mv`/`install`/`ln`/`rsync` writes its sources into, if its last
/// operand is one (an existing directory, or written with a trailing `/`).
fn copy_destination(
    verb: &Verb<'_>,
    words: &[String],
    last: Option<usize>,
    cwd: &Path,
    paths: &PathPolicy,
) -> Option<PathBuf> {
    if !COPIERS.contains(&verb.name) {
        return None;
    }
    let word = words.get(last?)?;
    if word.contains(['*', '?', '[', words::UNKNOWN]) {
        return None;
    }
    let dir = paths.resolve_in(word, cwd);
    (word.ends_with('/') || dir.is_dir()).then_some(dir)
}

/// A write into a Hermes home whose path holds run-time text after the home
/// (`> ~/.hermes/$d/run.sh`, `cp x ~/.hermes/$d/`, `mkdir -p ~/.hermes/$d`): which file it
/// reaches is decided when the command runs — perhaps a directory it creates first — so it
/// asks, as a write to the home's scripts, memories or skills would.
fn home_write_decided_later(target: &str, cwd: &Path, paths: &PathPolicy) -> Option<Reach> {
    let (known, _) = target.split_once(words::UNKNOWN)?;
    let prefix = known.rsplit_once('/').map_or("", |(dir, _)| dir);
    if prefix.is_empty() {
        return None;
    }
    let dir = paths.resolve_in(prefix, cwd);
    let in_a_home =
        paths.is_hermes_home(&dir) || dir.ancestors().skip(1).any(|a| paths.is_hermes_home(a));
    in_a_home.then_some(Reach::ConsentWrite {
        path: dir,
        key: "write to a Hermes home path decided when the command runs",
        reason: "the file it writes (perhaps a cron script, memory or skill) is only known when it runs",
    })
}
