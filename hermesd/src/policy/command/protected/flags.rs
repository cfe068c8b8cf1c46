//! The flags that change how a command reads the paths it names: whether it reads whole trees
//! (`grep -r`, `cp -a`, `tar c`, `rsync -a`), enters hidden entries (`rg --hidden`, `rg -uu`),
//! follows the symlinks inside them (`grep -R`, `cp -L`, `tar -h`, `rsync -L`; `zip` and `scp`
//! always do), and the file-name globs a search is limited to (`--include`, `-g`).

/// Whether a long option in `long` or a short flag `short` (alone or in a cluster) is given.
pub(super) fn has_flag(words: &[String], long: &[&str], short: char) -> bool {
    words.iter().skip(1).any(|w| {
        if w.starts_with("--") {
            return long
                .iter()
                .any(|l| w == l || w.strip_prefix(l).is_some_and(|r| r.starts_with('=')));
        }
        long.contains(&w.as_str())
            || w.strip_prefix('-')
                .is_some_and(|f| f.chars().all(|c| c.is_ascii_alphanumeric() || c == '.'))
                && w[1..].contains(short)
    })
}

/// Whether `verb` reads whole directory trees with these flags.
pub(super) fn recursive(verb: &str, words: &[String]) -> bool {
    match verb {
        "rg" | "ag" => true,
        "grep" | "egrep" | "fgrep" | "zgrep" => {
            has_flag(words, &["--recursive", "--dereference-recursive"], 'r')
                || has_flag(words, &[], 'R')
                || words.iter().any(|w| w == "--directories=recurse")
        }
        "cp" => {
            has_flag(words, &["--recursive", "--archive"], 'r')
                || has_flag(words, &[], 'R')
                || has_flag(words, &[], 'a')
        }
        "rsync" => has_flag(words, &["--recursive", "--archive"], 'r') || has_flag(words, &[], 'a'),
        "scp" => has_flag(words, &[], 'r'),
        "zip" => has_flag(words, &["--recurse-paths"], 'r'),
        "tar" => tar_creates(words),
        "7z" | "7za" => words.get(1).is_some_and(|w| w == "a"),
        _ => false,
    }
}

/// Whether a recursive `verb` enters hidden files and directories: every command but `rg` and
/// `ag`, which need `--hidden` (or `rg -uu`, `ag -u`: `--unrestricted`, for rg twice).
pub(super) fn enters_hidden(verb: &str, words: &[String]) -> bool {
    if !["rg", "ag"].contains(&verb) {
        return true;
    }
    let unrestricted: usize = words
        .iter()
        .skip(1)
        .map(|w| match w.strip_prefix('-') {
            Some("-unrestricted") => 1,
            Some(flags) if !flags.starts_with('-') => flags.matches('u').count(),
            _ => 0,
        })
        .sum();
    let needed = if verb == "rg" { 2 } else { 1 };
    has_flag(words, &["--hidden", "-."], '.') || unrestricted >= needed
}

/// Whether a recursive `verb` skips what ignore files (`.gitignore` in a git repository,
/// `.ignore`, `.rgignore`) exclude, as `rg` and `ag` do unless told not to (`--no-ignore`, `-u`;
/// an ignore file's `!.env` whitelists a file back in, and the walk reads it the same way).
pub(super) fn respects_ignores(verb: &str, words: &[String]) -> bool {
    if !["rg", "ag"].contains(&verb) {
        return false;
    }
    let unrestricted = words.iter().skip(1).any(|w| match w.strip_prefix('-') {
        Some("-unrestricted") => true,
        Some(flags) if !flags.starts_with('-') => flags.contains('u'),
        _ => false,
    });
    !unrestricted
        && !words
            .iter()
            .skip(1)
            .any(|w| w.starts_with("--no-ignore") || w == "--skip-vcs-ignores" || w == "-U")
}

/// Whether a recursive `verb` reads what the symlinks inside a tree point to (not only the
/// ones it is given): `grep -R`, `rg -L`, `ag -f`, `cp -L`, `tar -h`, `rsync -L` and
/// `--copy-unsafe-links` (a link out of the tree, to a `.env` elsewhere, is copied as its
/// file); `zip` (without `-y`), `7z` and `scp -r` always do.
pub(super) fn follows_links(verb: &str, words: &[String]) -> bool {
    match verb {
        "grep" | "egrep" | "fgrep" | "zgrep" => has_flag(words, &["--dereference-recursive"], 'R'),
        "rg" => has_flag(words, &["--follow"], 'L'),
        "ag" => has_flag(words, &["--follow"], 'f'),
        "cp" => has_flag(words, &["--dereference"], 'L'),
        "tar" => {
            has_flag(words, &["--dereference"], 'h')
                || words
                    .get(1)
                    .is_some_and(|w| !w.starts_with('-') && w.contains('h'))
        }
        "rsync" => {
            has_flag(
                words,
                &["--copy-links", "--copy-unsafe-links", "--copy-dirlinks"],
                'L',
            ) || has_flag(words, &[], 'k')
        }
        "zip" => !has_flag(words, &["--symlinks"], 'y'),
        "7z" | "7za" | "scp" => true,
        _ => false,
    }
}

/// Whether a `tar` command creates or appends to an archive (`tar czf`, `tar -cf`, `--create`).
pub(super) fn tar_creates(words: &[String]) -> bool {
    let bundled = words
        .get(1)
        .is_some_and(|w| !w.starts_with('-') && w.contains(['c', 'r', 'u']));
    bundled
        || words.iter().skip(1).any(|w| {
            ["--create", "--append", "--update"].contains(&w.as_str())
                || (w.starts_with('-') && !w.starts_with("--") && w.contains(['c', 'r', 'u']))
        })
}

/// The file-name globs a search's options limit it to, if they do (`--include=*.py`,
/// `-g '*.rs'`, `--type rust`); exclusions (`-g '!x'`) are ignored.
pub(super) fn search_limits(words: &[String]) -> Option<Vec<&str>> {
    let mut only: Option<Vec<&str>> = None;
    let mut rest = words.iter().skip(1).map(String::as_str);
    while let Some(word) = rest.next() {
        let (option, value) = match word.split_once('=') {
            Some((option, value)) if option.starts_with("--") => (option, Some(value)),
            _ => (word, None),
        };
        let glob = match option {
            "--include" | "--glob" | "--iglob" | "-g" => value.or_else(|| rest.next()),
            "-t" | "--type" => {
                only.get_or_insert_with(Vec::new);
                continue;
            }
            _ if option.starts_with("-g") && !option.starts_with("--") => Some(&option[2..]),
            _ if option.starts_with("-t") && !option.starts_with("--") => {
                only.get_or_insert_with(Vec::new);
                continue;
            }
            _ => continue,
        };
        if let Some(glob) = glob.filter(|g| !g.starts_with('!')) {
            only.get_or_insert_with(Vec::new).push(glob);
        }
    }
    only
}
