//! What a segment's command does with the paths it names: reads, prints, lists, writes, copies,
//! archives or searches them recursively — the lists of commands, and the flags (`sed -i`,
//! `grep -r`, `cp -a`, `tar c`, find's actions, git's read-only subcommands) that change it.

use super::flags::{
    enters_hidden, follows_links, has_flag, recursive, respects_ignores, search_limits, tar_creates,
};
use crate::policy::command::shell::basename;

/// Commands that only read the files they name.
const READERS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "rg",
    "egrep",
    "fgrep",
    "wc",
    "diff",
    "cmp",
    "stat",
    "ls",
    "file",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "bat",
    "batcat",
    "yq",
    "jq",
    "realpath",
    "readlink",
    "test",
    "[",
    "du",
    "cd",
    "pushd",
    "echo",
    "printf",
    "tree",
    "basename",
    "dirname",
];

/// Readers that neither print nor write the contents of what they name (names, sizes, counts):
/// a glob of theirs that matches the daemon's records only lists them.
const LISTERS: &[&str] = &[
    "ls", "du", "stat", "wc", "file", "test", "[", "realpath", "readlink", "tree", "find",
];

/// Commands that print (or encode) the contents of the files they name: naming a file the read
/// tools deny is a secret read.
const PRINTERS: &[&str] = &[
    "cat", "tac", "less", "more", "head", "tail", "grep", "rg", "egrep", "fgrep", "zgrep", "zcat",
    "diff", "bat", "batcat", "yq", "jq", "nl", "strings", "od", "xxd", "hexdump", "base64", "awk",
    "gawk", "mawk", "view", "sed", "sort", "cut", "uniq", "paste", "column", "fold", "rev", "tr",
    "ag",
];

/// Commands whose first operand is a pattern or a program, not a file (unless `-e`/`-f` give it).
const PATTERN_FIRST: &[&str] = &[
    "grep", "egrep", "fgrep", "zgrep", "rg", "ag", "awk", "gawk", "mawk", "nawk", "sed", "jq", "yq",
];

/// Commands that may write every path operand they are given.
const WRITERS: &[&str] = &["tee", "truncate", "touch", "rm", "unlink", "shred"];

/// Commands whose last operand is what they write: a file, or a directory they write into.
pub(super) const COPIERS: &[&str] = &["cp", "mv", "install", "ln", "rsync", "scp"];

/// find's actions that run, delete or write: a find with one is not a reader.
const FIND_ACTIONS: &[&str] = &[
    "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls",
];

/// git subcommands that change nothing and print no file's contents.
const GIT_READ_ONLY: &[&str] = &["status", "ls-files", "rev-parse", "describe", "log"];

/// Commands a segment runs through, before the one that acts.
const WRAPPERS: &[&str] = &["sudo", "env", "command", "exec", "nohup"];

/// How one segment's command treats the paths it names.
pub(super) struct Verb<'a> {
    pub(super) name: &'a str,
    /// The index of the word that names it.
    pub(super) at: usize,
    /// Only reads what it names (`cat`, `grep`, `ls`…): settings it names are not written.
    pub(super) reader: bool,
    /// Reads only names, sizes or counts ([`LISTERS`]).
    pub(super) lists: bool,
    /// Prints what it reads.
    pub(super) prints: bool,
    /// Writes every path operand (`tee`, `touch`, `sed -i`…).
    pub(super) writes_all: bool,
    /// Copies or archives its sources: every operand but a copier's last one.
    pub(super) copies: bool,
    /// Reads whole directory trees (`grep -r`, `rg`, `cp -r`, `tar c`, `zip -r`, `rsync -a`).
    pub(super) recursive: bool,
    /// Searches the trees it reads (`grep -r`, `rg`, `ag`).
    pub(super) searches: bool,
    /// Enters hidden files and directories when recursive (`rg` and `ag` only with `--hidden`).
    pub(super) hidden: bool,
    /// Skips what ignore files exclude when recursive (`rg`, `ag`).
    pub(super) ignores: bool,
    /// Reads what the symlinks inside a tree point to when recursive (`grep -R`, `cp -L`…).
    pub(super) follows: bool,
    /// The index of its pattern or program operand, which names no file.
    pub(super) pattern: Option<usize>,
    /// The file-name globs a recursive search is limited to (`grep --include`, `rg -g`); an
    /// empty list for `rg -t` (file types, which name no secret file).
    pub(super) only: Option<Vec<&'a str>>,
}

impl<'a> Verb<'a> {
    pub(super) fn of(words: &'a [String], operands: &[usize]) -> Self {
        let at = words
            .iter()
            .position(|w| !w.contains('=') && !WRAPPERS.contains(&w.as_str()))
            .unwrap_or(words.len());
        let name = words.get(at).map(|w| basename(w)).unwrap_or_default();
        let in_place = edits_in_place(name, words);
        let read_only = match name {
            "find" => !words.iter().any(|w| FIND_ACTIONS.contains(&w.as_str())),
            "git" => git_read_only(words),
            _ => READERS.contains(&name),
        };
        let recursive = recursive(name, words);
        let searches = recursive && ["grep", "egrep", "fgrep", "zgrep", "rg", "ag"].contains(&name);
        let hidden = enters_hidden(name, words);
        let given = has_flag(words, &["--regexp", "--file", "--expression"], 'e')
            || has_flag(words, &[], 'f');
        let pattern = (PATTERN_FIRST.contains(&name) && !given)
            .then(|| operands.first().copied())
            .flatten();
        let archives = match name {
            "tar" => tar_creates(words),
            "zip" | "7z" | "7za" => true,
            _ => false,
        };
        Self {
            name,
            at,
            reader: read_only && !in_place,
            lists: LISTERS.contains(&name) && read_only,
            prints: PRINTERS.contains(&name) && !in_place,
            writes_all: WRITERS.contains(&name) || in_place,
            copies: COPIERS.contains(&name) || archives,
            recursive,
            searches,
            hidden,
            ignores: recursive && respects_ignores(name, words),
            follows: recursive && follows_links(name, words),
            pattern,
            only: searches.then(|| search_limits(words)).flatten(),
        }
    }
}

impl Verb<'_> {
    /// Whether `option` takes the file the command writes as its value (`curl -o`, `wget -O`).
    pub(super) fn output_option(&self, option: &str) -> bool {
        match self.name {
            "curl" => option == "-o" || option == "--output",
            "wget" => option == "-O" || option == "--output-document",
            _ => false,
        }
    }
}

/// Whether a `git` command only reads: a subcommand of [`GIT_READ_ONLY`], `log` without patches.
fn git_read_only(words: &[String]) -> bool {
    let mut rest = words.iter().skip(1);
    let sub = loop {
        match rest.next().map(String::as_str) {
            Some("-C" | "-c" | "--git-dir" | "--work-tree") => {
                rest.next();
            }
            Some(w) if w.starts_with('-') => {}
            other => break other,
        }
    };
    let patches = words
        .iter()
        .any(|w| ["-p", "-u", "--patch", "-L"].contains(&w.as_str()) || w.starts_with("-L"));
    sub.is_some_and(|s| GIT_READ_ONLY.contains(&s)) && !(sub == Some("log") && patches)
}

/// Whether `verb` edits its files in place: `sed -i`, `perl -pi`, `ruby -i`, `yq -i`.
fn edits_in_place(verb: &str, words: &[String]) -> bool {
    let before_i = match verb {
        "sed" => "nEersuz",
        "perl" | "ruby" => "pnlaew",
        "yq" => "PCMenr",
        _ => return false,
    };
    words.iter().any(|w| {
        if let Some(long) = w.strip_prefix("--") {
            return long == "inplace" || long == "in-place" || long.starts_with("in-place=");
        }
        w.strip_prefix('-').is_some_and(|flags| {
            let lead = flags.trim_start_matches(|c| before_i.contains(c));
            lead.starts_with('i')
        })
    })
}
