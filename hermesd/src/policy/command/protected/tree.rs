//! The trees a recursive search, copy or archive reads (`grep -rn KEY services`, `cp -r .
//! /tmp/x`, `tar czf p.tgz .`, `rsync -a ./ host:app/`), walked to any depth for a file the read
//! tools deny: a `.env` three levels down is found as one at the top. The walk reads directory
//! entries only (names and types; one more `stat` for a symlink the command follows), skips
//! what the command skips itself (hidden entries for `rg`/`ag` without `--hidden`, what their
//! ignore files exclude — read by the `ignore` crate, ripgrep's own, so a whitelist reads as
//! `rg` reads it — files outside a search's `--include` globs, symlinks it does not follow), and
//! nothing else: no `--exclude`, and no ignore file for `grep -r`, `cp -r` or `tar`, which read
//! none. It is bounded: past [`TREE_ENTRIES`] entries for one command the command asks (fail
//! closed).

use std::path::{Path, PathBuf};

use super::Reach;
use super::candidates::candidates;
use super::verbs::{COPIERS, Verb};
use super::words::all_unknown;
use crate::policy::paths::{PathPolicy, real};

/// At most this many directory entries are looked at for one command, over all its trees.
pub(in crate::policy::command) const TREE_ENTRIES: usize = 10_000;

/// What one command may still look at, shared by its segments.
pub(super) struct Budget(usize);

impl Default for Budget {
    fn default() -> Self {
        Self(TREE_ENTRIES)
    }
}

impl Budget {
    /// A budget of `entries`, for the tests.
    #[cfg(test)]
    pub(super) fn of(entries: usize) -> Self {
        Self(entries)
    }
}

/// How a command reads the trees it is given.
struct Reading<'a> {
    /// It enters hidden files and directories.
    hidden: bool,
    /// It skips what ignore files exclude (`rg`, `ag`).
    ignores: bool,
    /// It reads what a symlink inside the tree points to.
    follows: bool,
    /// The only file names it reads, when its options limit it to some.
    only: Option<&'a [globset::GlobMatcher]>,
}

/// What walking one tree found.
enum Found {
    Denied(PathBuf),
    TooLarge,
}

/// The reach of a recursive search, copy or archive (`verb.recursive`) through the trees it
/// reads: a denied file at any depth, or a tree too large to check. Its operands are expanded
/// as the other rules expand them (globs, symlinks); operands that are not directories are
/// judged as files elsewhere.
pub(super) fn tree_reach(
    words: &[String],
    verb: &Verb<'_>,
    operands: &[usize],
    cwd: &Path,
    paths: &PathPolicy,
    budget: &mut Budget,
) -> Option<Reach> {
    if !verb.recursive || (!verb.searches && !verb.copies) {
        return None;
    }
    let globs: Option<Vec<globset::GlobMatcher>> = verb.only.as_ref().map(|globs| {
        globs
            .iter()
            .filter_map(|g| globset::Glob::new(g).ok())
            .map(|g| g.compile_matcher())
            .collect()
    });
    if globs.as_ref().is_some_and(Vec::is_empty) {
        // `rg -t rust`: file types, which name no denied file.
        return None;
    }
    let reading = Reading {
        hidden: verb.hidden,
        ignores: verb.ignores,
        follows: verb.follows,
        only: globs.as_deref(),
    };
    let copier = COPIERS.contains(&verb.name);
    let sources = operands
        .iter()
        .filter(|&&i| Some(i) != verb.pattern)
        .filter(|&&i| !(copier && Some(&i) == operands.last()))
        .filter_map(|&i| words.get(i))
        .filter(|w| !all_unknown(w));
    let mut roots: Vec<PathBuf> = sources
        .flat_map(|w| candidates(w, cwd, paths, false).paths)
        .collect();
    if roots.is_empty() && verb.searches {
        roots.push(cwd.to_path_buf());
    }
    for dir in roots {
        let search = verb.searches;
        match walk_tree(&dir, &reading, paths, budget) {
            Some(Found::Denied(file)) if search => return Some(Reach::Search { dir, file }),
            Some(Found::Denied(file)) => return Some(Reach::CopyTree { dir, file }),
            Some(Found::TooLarge) => return Some(Reach::TooLarge(dir)),
            None => {}
        }
    }
    None
}

/// The first file below `root` (real) the read tools deny, as `reading` reads the tree, or
/// [`Found::TooLarge`] once `budget` is spent. A root that is not a directory holds nothing.
/// One walker for every command (the `ignore` crate, ripgrep's own): its ignore-file filters
/// are on only for a command that reads ignore files, so `rg`'s tree is the one `rg` reads.
fn walk_tree(
    root: &Path,
    reading: &Reading<'_>,
    paths: &PathPolicy,
    budget: &mut Budget,
) -> Option<Found> {
    let walk = ignore::WalkBuilder::new(root)
        .standard_filters(reading.ignores)
        .hidden(!reading.hidden)
        .follow_links(reading.follows)
        .build();
    for entry in walk.flatten() {
        if budget.0 == 0 {
            return Some(Found::TooLarge);
        }
        budget.0 -= 1;
        if entry.file_type().is_none_or(|kind| kind.is_dir()) {
            continue;
        }
        let path = if entry.path_is_symlink() {
            if !reading.follows {
                // The command copies or skips the link itself, which reveals nothing.
                continue;
            }
            real(entry.path())
        } else {
            entry.path().to_path_buf()
        };
        let wanted = reading
            .only
            .is_none_or(|only| only.iter().any(|m| m.is_match(entry.file_name())));
        if wanted && paths.check_read(&path).is_err() {
            return Some(Found::Denied(path));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_stops_at_its_budget_and_finds_what_is_within_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("a/b/c/d")).unwrap();
        std::fs::write(root.join("a/b/c/d/.env"), "K=v\n").unwrap();
        let paths = PathPolicy::new(&root.join("home"), Some(&root.join("user")));
        let reading = Reading {
            hidden: true,
            ignores: false,
            follows: false,
            only: None,
        };
        let found = walk_tree(&root, &reading, &paths, &mut Budget::of(3));
        assert!(matches!(found, Some(Found::TooLarge)));
        let found = walk_tree(&root, &reading, &paths, &mut Budget::default());
        assert!(matches!(found, Some(Found::Denied(p)) if p.ends_with("a/b/c/d/.env")));
        let skipping = Reading {
            hidden: false,
            ..reading
        };
        assert!(walk_tree(&root, &skipping, &paths, &mut Budget::default()).is_none());
    }
}
