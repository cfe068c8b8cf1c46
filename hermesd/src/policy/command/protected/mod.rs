//! Commands that reach the files the path policy protects: every word of every segment that
//! names a path (also after `=` as in `of=…`, after a curl-style `@`, before the `:` of a
//! `src:dst` mount, and as a redirection target) is resolved as the file tools resolve it —
//! homes, the working directory (followed through `cd`), symlinks — and judged by
//! [`PathPolicy`]. The daemon's database and records may not be touched at all (an "always"
//! approval the agent wrote itself would be a forged one); settings and credentials may be
//! written only with the user's consent, and so may a Hermes home as a whole (`tar -C`,
//! `cp x ~/.hermes/`); a command that prints or copies a file the read tools deny asks, and so
//! do a write to a file the file tools write only with consent, a recursive copy or search of a
//! directory above a Hermes home, and running a file an earlier part of the command wrote. The
//! commands a segment runs on its behalf (`$(…)`, `find -exec`, `xargs`) are walked as commands.
//!
//! This file walks the segments; `words` splits them, `verbs` says what each command does,
//! `candidates` expands a word to paths and `judgement` judges each path.

mod candidates;
mod judgement;
mod verbs;
mod words;

use std::path::{Path, PathBuf};

use self::candidates::candidates;
use self::judgement::{Role, denied_at_top, judge_path};
use self::verbs::{COPIERS, Verb};
use self::words::{all_unknown, is_redirect_operator, operands, redirect_target, split};
use super::nested::segment_payloads;
use super::shell::{basename, top_level_segments};
use crate::policy::paths::{PathPolicy, absolute, real};

pub(in crate::policy::command) use self::words::{UNKNOWN, split as split_words};

/// The pattern key (and reason) of a command that writes settings or credentials.
pub const SETTINGS_WRITE_KEY: &str = "write to Hermes settings or credentials";
/// The pattern key of a command that runs a file it wrote itself.
pub const RUNS_WRITTEN_KEY: &str = "run a file the same command writes";

/// How deep commands inside commands (`$(…)` in `find -exec`…) are walked.
const MAX_DEPTH: usize = 4;

/// Commands that run the script file they are given.
const SCRIPT_RUNNERS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "source", "."];

/// What a command does to a protected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// It names the daemon's own state: refused, with the path.
    DaemonState(PathBuf),
    /// It may write settings or credentials: needs approval, with the path.
    SettingsWrite(PathBuf),
    /// It names a Hermes home (or its `profiles`) as a whole with a command that may write,
    /// copy or archive it (`tar -C`, `cp -r … ~/.hermes/`, `mv`): needs approval.
    Home(PathBuf),
    /// It prints a file the read tools deny, or reads a Hermes home as a whole: needs approval.
    SecretRead(PathBuf),
    /// It copies or archives a file the read tools deny (`cp .env /tmp/x`): needs approval.
    SecretCopy(PathBuf),
    /// It copies, archives or searches a directory above a Hermes home whole (`tar czf x ~`).
    Above(PathBuf),
    /// A recursive search of `dir` prints `file`, which the read tools deny.
    Search { dir: PathBuf, file: PathBuf },
    /// It runs a file an earlier part of the same command writes.
    RunsWritten(PathBuf),
    /// It writes a file the file tools write only with consent: needs approval, under the file
    /// tools' key.
    ConsentWrite {
        path: PathBuf,
        key: &'static str,
        reason: &'static str,
    },
}

/// The strongest protected path `command` reaches from `cwd`, if any: the daemon's state first,
/// else the first other reach found.
pub fn reach(command: &str, cwd: &Path, paths: &PathPolicy) -> Option<Reach> {
    if command.to_ascii_lowercase().contains("hermesd.db") {
        return Some(Reach::DaemonState(paths.hermes_home().join("hermesd.db")));
    }
    let mut walk = Walk {
        paths,
        found: None,
        written: Vec::new(),
        unknown_cwd: false,
    };
    walk.command(command, paths.resolve(".", cwd), 0);
    walk.found
}

/// One walk over a command and the commands it runs.
struct Walk<'p> {
    paths: &'p PathPolicy,
    found: Option<Reach>,
    /// Files the segments walked so far may write.
    written: Vec<PathBuf>,
    /// A `cd` went to run-time text: the working directory is unknown.
    unknown_cwd: bool,
}

impl Walk<'_> {
    /// Records a reach; `true` once the daemon's state is reached (nothing is stronger).
    fn note(&mut self, reach: Option<Reach>) -> bool {
        if let Some(Reach::DaemonState(_)) = reach {
            self.found = reach;
            return true;
        }
        if let Some(reach) = reach
            && self
                .found
                .as_ref()
                .is_none_or(|found| rank(&reach) < rank(found))
        {
            self.found = Some(reach);
        }
        false
    }

    /// Walks `command` from `cwd` (real); `true` once the daemon's state is reached.
    fn command(&mut self, command: &str, mut cwd: PathBuf, depth: usize) -> bool {
        for (_, segment) in top_level_segments(command) {
            let Some(lexed) = split(segment) else {
                let words: Vec<String> = segment.split_whitespace().map(str::to_string).collect();
                if self.segment(&words, &mut cwd) {
                    return true;
                }
                continue;
            };
            if self.segment(&lexed.words, &mut cwd) {
                return true;
            }
            if depth < MAX_DEPTH {
                let payloads = segment_payloads(&lexed.words);
                for inner in lexed
                    .substitutions
                    .iter()
                    .copied()
                    .chain(payloads.iter().map(String::as_str))
                {
                    if self.command(inner, cwd.clone(), depth + 1) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// Walks one segment's words; follows a `cd` in `cwd`.
    fn segment(&mut self, words: &[String], cwd: &mut PathBuf) -> bool {
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
                matched: found.matched,
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
            if role.written {
                written_here.extend(found.paths);
            }
        }
        if verb.searches {
            self.search(words, &verb, &operands, cwd);
        }
        self.runs_written(words, &verb, &operands, cwd);
        self.written.extend(written_here);
        if let (true, Some(dir)) = (["cd", "pushd"].contains(&verb.name), words.get(1)) {
            self.unknown_cwd = dir.contains(words::UNKNOWN);
            *cwd = paths.resolve_in(dir, cwd);
        }
        false
    }

    /// A recursive search prints the files the read tools deny at the top of the directories
    /// it searches (the working directory when it is given none). A recursive copy or archive
    /// is not scanned: deploying a project (`rsync -a ./ host:app/`) copies its `.env` on purpose.
    fn search(&mut self, words: &[String], verb: &Verb<'_>, operands: &[usize], cwd: &Path) {
        let mut dirs: Vec<PathBuf> = operands
            .iter()
            .filter(|&&i| Some(i) != verb.pattern)
            .filter_map(|&i| words.get(i))
            .filter(|w| !all_unknown(w))
            .map(|w| self.paths.resolve_in(w, cwd))
            .collect();
        if dirs.is_empty() {
            dirs.push(cwd.to_path_buf());
        }
        for dir in dirs {
            if let Some(file) = denied_at_top(&dir, verb, self.paths) {
                self.note(Some(Reach::Search { dir, file }));
            }
        }
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
        Reach::SecretCopy(_) | Reach::Above(_) | Reach::Search { .. } | Reach::RunsWritten(_) => 2,
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
