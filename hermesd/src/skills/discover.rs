//! Finding skill directories under the skills roots, and the cheap change signature of that tree.
//!
//! Layout: `<root>/<name>/SKILL.md` or `<root>/<category>/<name>/SKILL.md`. Hidden directories
//! (`.git`, `.hub`, `.archive`, ...) and dependency/cache directories are never entered. Symlinked
//! directories are followed, as Hermes' `os.walk(followlinks=True)` does.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::catalog::SkillProblem;

/// File name of a skill's main document.
pub(super) const SKILL_FILE: &str = "SKILL.md";
/// File name of a category's description document.
pub(super) const CATEGORY_FILE: &str = "DESCRIPTION.md";

/// Non-hidden directory names Hermes never scans for skills (hidden ones are skipped anyway).
const EXCLUDED_DIRS: [&str; 4] = ["venv", "node_modules", "site-packages", "__pycache__"];

/// True for names the scanners skip: hidden entries and dependency/cache directories.
pub(super) fn is_skipped_name(name: &str) -> bool {
    name.starts_with('.') || EXCLUDED_DIRS.contains(&name)
}

/// A directory holding a SKILL.md, found during discovery.
#[derive(Debug, Clone)]
pub(super) struct Candidate {
    pub root_index: usize,
    pub category: Option<String>,
    pub dir: PathBuf,
    pub dir_name: String,
    /// SKILL.md was seen during discovery; unconfirmed candidates (directories inside a
    /// category) are checked when they are loaded, which saves a `stat` per skill.
    pub confirmed: bool,
}

/// Everything discovery found, in root order and then name order.
#[derive(Debug, Default)]
pub(super) struct Discovery {
    pub candidates: Vec<Candidate>,
    /// (root index, category name, path of its DESCRIPTION.md) for every category directory.
    pub category_files: Vec<(usize, String, PathBuf)>,
    pub problems: Vec<SkillProblem>,
}

/// Walks every root (a missing root is skipped silently) and lists the skill directories.
pub(super) fn discover(roots: &[PathBuf]) -> Discovery {
    let mut found = Discovery::default();
    for (root_index, root) in roots.iter().enumerate() {
        let children = match subdirectories(root) {
            Ok(children) => children,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => {
                found
                    .problems
                    .push(problem(root, format!("cannot list skills root: {err}")));
                continue;
            }
        };
        for (name, dir) in children {
            if is_file(&dir.join(SKILL_FILE)) {
                found.candidates.push(Candidate {
                    root_index,
                    category: None,
                    dir,
                    dir_name: name,
                    confirmed: true,
                });
                continue;
            }
            let skills = match subdirectories(&dir) {
                Ok(skills) => skills,
                Err(err) => {
                    found
                        .problems
                        .push(problem(&dir, format!("cannot list category: {err}")));
                    continue;
                }
            };
            for (skill_name, skill_dir) in skills {
                found.candidates.push(Candidate {
                    root_index,
                    category: Some(name.clone()),
                    dir: skill_dir,
                    dir_name: skill_name,
                    confirmed: false,
                });
            }
            found
                .category_files
                .push((root_index, name, dir.join(CATEGORY_FILE)));
        }
    }
    found
}

/// The non-skipped subdirectories of `dir` (following symlinks), sorted by name.
fn subdirectories(dir: &Path) -> io::Result<Vec<(String, PathBuf)>> {
    let mut dirs = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_skipped_name(&name) {
            continue;
        }
        let file_type = entry.file_type()?;
        let path = entry.path();
        let is_dir = file_type.is_dir()
            || (file_type.is_symlink() && fs::metadata(&path).is_ok_and(|m| m.is_dir()));
        if is_dir {
            dirs.push((name, path));
        }
    }
    dirs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok(dirs)
}

fn is_file(path: &Path) -> bool {
    fs::metadata(path).is_ok_and(|m| m.is_file())
}

fn problem(path: &Path, reason: String) -> SkillProblem {
    SkillProblem {
        path: path.to_path_buf(),
        reason,
    }
}

/// Modification time and size of one path, or `None` when it does not exist.
type Stamp = Option<(Option<SystemTime>, u64)>;

/// A cheap fingerprint of the skills tree: mtimes and sizes of the roots, the category
/// directories and every SKILL.md / DESCRIPTION.md. No file content is read.
///
/// It changes when a skill or category is added, removed or renamed and when a SKILL.md or
/// DESCRIPTION.md is rewritten; that covers everything [`super::catalog::Catalog::load`] reads.
/// Supporting files (references, scripts, ...) are not part of it: `skill_view` reads them
/// fresh, and [`super::catalog::SkillEntry::digest`] is computed when first asked for. Take the
/// signature *before* loading, so a write that races the load shows up as a change next time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signature {
    stamps: Vec<(PathBuf, Stamp)>,
}

impl Signature {
    /// Computes the signature of the trees under `roots` (see [`Signature`]).
    pub fn compute(roots: &[PathBuf]) -> Signature {
        let mut stamps = Vec::new();
        for root in roots {
            stamps.push((root.clone(), stamp(root)));
            let Ok(children) = subdirectories(root) else {
                continue;
            };
            for (_, dir) in children {
                let skill_file = dir.join(SKILL_FILE);
                let skill_stamp = stamp(&skill_file);
                let is_skill = skill_stamp.is_some();
                stamps.push((skill_file, skill_stamp));
                if is_skill {
                    continue;
                }
                let description = dir.join(CATEGORY_FILE);
                let description_stamp = stamp(&description);
                stamps.push((description, description_stamp));
                stamps.push((dir.clone(), stamp(&dir)));
                let Ok(skills) = subdirectories(&dir) else {
                    continue;
                };
                for (_, skill_dir) in skills {
                    let skill_file = skill_dir.join(SKILL_FILE);
                    let skill_stamp = stamp(&skill_file);
                    stamps.push((skill_file, skill_stamp));
                }
            }
        }
        Signature { stamps }
    }
}

fn stamp(path: &Path) -> Stamp {
    fs::metadata(path)
        .ok()
        .map(|meta| (meta.modified().ok(), meta.len()))
}
