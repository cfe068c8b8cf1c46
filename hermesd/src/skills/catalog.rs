//! The skills catalog: every usable skill found under the skills roots, plus the problems that
//! kept other skills out of it.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_yaml::Mapping;

use super::discover::{self, Candidate, Signature};
use super::fields::scalar_text;
use super::frontmatter;
use super::loader::{self, skill_digest};

/// Tool and toolset conditions from `metadata.hermes` that gate whether a skill is offered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Conditions {
    /// Offered only when all of these toolsets are available.
    pub requires_toolsets: Vec<String>,
    /// Offered only when all of these tools are available.
    pub requires_tools: Vec<String>,
    /// Offered only when none of these toolsets is available (a substitute procedure).
    pub fallback_for_toolsets: Vec<String>,
    /// Offered only when none of these tools is available.
    pub fallback_for_tools: Vec<String>,
}

/// One loaded skill.
#[derive(Debug, Clone)]
pub struct SkillEntry {
    /// Frontmatter `name`, else the directory name; at most 64 characters.
    pub name: String,
    /// Frontmatter `description`, else the first non-heading body line; at most 1,024 characters.
    pub description: String,
    /// Category directory, for skills at `<root>/<category>/<name>/`.
    pub category: Option<String>,
    /// The skill directory.
    pub dir: PathBuf,
    /// Name of the skill directory (may differ from `name`).
    pub dir_name: String,
    /// The skill's SKILL.md.
    pub skill_md: PathBuf,
    /// Index of the root (in the roots given to [`Catalog::load`]) the skill lives under.
    pub root_index: usize,
    /// The whole frontmatter, unknown keys included.
    pub frontmatter: Mapping,
    /// `metadata.hermes.tags`, else top-level `tags`.
    pub tags: Vec<String>,
    /// `metadata.hermes.related_skills`, else top-level `related_skills`.
    pub related_skills: Vec<String>,
    /// Lower-cased `platforms` entries; empty means every OS.
    pub platforms: Vec<String>,
    /// Activation conditions from `metadata.hermes`.
    pub conditions: Conditions,
    /// Lazily computed content digest, see [`SkillEntry::digest`].
    pub(super) digest: OnceLock<String>,
    /// Frontmatter `version`, as text.
    pub version: Option<String>,
}

impl SkillEntry {
    /// Hex SHA-256 over the skill directory's regular, non-hidden files (relative paths and
    /// contents; see [`skill_digest`]). Computed on first call (reading every file of the skill)
    /// and then kept for the life of this entry, so loading the catalog never pays for it.
    pub fn digest(&self) -> &str {
        self.digest.get_or_init(|| skill_digest(&self.dir))
    }
}

/// A skill (or category description) that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    /// The file or directory at fault.
    pub path: PathBuf,
    /// Human-readable reason.
    pub reason: String,
}

/// All skills under a list of roots.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    /// The roots the catalog was loaded from, in priority order.
    pub roots: Vec<PathBuf>,
    /// Usable skills sorted by (category, name); uncategorized skills first. Names are unique.
    pub entries: Vec<SkillEntry>,
    /// Skills (and category descriptions) that were skipped, with the reason.
    pub problems: Vec<SkillProblem>,
    /// Category name → description from `<root>/<category>/DESCRIPTION.md` (first root wins).
    pub category_descriptions: BTreeMap<String, String>,
}

impl Catalog {
    /// Loads every skill under `roots` (first root = `HERMES_HOME/skills`, then external dirs).
    ///
    /// A missing root is fine. A skill that cannot be read or parsed, or whose name an earlier
    /// skill already took (earlier root first, then path order), is left out and reported in
    /// [`Catalog::problems`] (and logged); it never hides other skills.
    pub fn load(roots: &[PathBuf]) -> Catalog {
        let found = discover::discover(roots);
        let mut problems = found.problems;
        let mut entries = Vec::with_capacity(found.candidates.len());
        let mut taken: HashMap<String, PathBuf> = HashMap::new();
        for result in load_all(&found.candidates) {
            match result {
                Ok(None) => {}
                Ok(Some(entry)) => {
                    if let Some(first) = taken.get(&entry.name) {
                        problems.push(SkillProblem {
                            path: entry.skill_md,
                            reason: format!(
                                "skill name '{}' is already used by {}; this copy is ignored",
                                entry.name,
                                first.display()
                            ),
                        });
                        continue;
                    }
                    taken.insert(entry.name.clone(), entry.skill_md.clone());
                    entries.push(entry);
                }
                Err(problem) => problems.push(problem),
            }
        }
        entries.sort_by(|a, b| {
            (a.category.as_deref().unwrap_or(""), &a.name)
                .cmp(&(b.category.as_deref().unwrap_or(""), &b.name))
        });
        let category_descriptions =
            read_category_descriptions(&found.category_files, &mut problems);
        for problem in &problems {
            tracing::warn!(path = %problem.path.display(), reason = %problem.reason, "skills catalog problem");
        }
        Catalog {
            roots: roots.to_vec(),
            entries,
            problems,
            category_descriptions,
        }
    }

    /// A cheap change fingerprint of the trees under `roots` (no content reads): reload only when
    /// it differs from the one taken before the last load. See [`Signature`].
    pub fn signature(roots: &[PathBuf]) -> Signature {
        Signature::compute(roots)
    }

    /// Looks a skill up by name; also accepts `category/dir` or `category:dir`, or a directory
    /// name when exactly one skill lives in a directory of that name.
    pub fn find(&self, name: &str) -> Option<&SkillEntry> {
        let name = name.trim();
        if let Some(entry) = self.entries.iter().find(|e| e.name == name) {
            return Some(entry);
        }
        if let Some((category, dir_name)) = name.split_once(['/', ':']) {
            return self
                .entries
                .iter()
                .find(|e| e.category.as_deref() == Some(category) && e.dir_name == dir_name);
        }
        let mut by_dir = self.entries.iter().filter(|e| e.dir_name == name);
        match (by_dir.next(), by_dir.next()) {
            (Some(entry), None) => Some(entry),
            _ => None,
        }
    }

    /// The root directory `entry` was loaded from.
    pub fn root_of(&self, entry: &SkillEntry) -> Option<&Path> {
        self.roots.get(entry.root_index).map(PathBuf::as_path)
    }
}

/// One candidate's outcome: a skill, not a skill after all (`None`), or a problem.
type LoadResult = Result<Option<SkillEntry>, SkillProblem>;

/// Most threads used to load skills (the daemon runs this on one blocking-pool thread).
const MAX_LOAD_THREADS: usize = 4;
/// Below this many skills, loading stays on the calling thread.
const PARALLEL_MIN_SKILLS: usize = 32;

/// Loads the candidates on up to [`MAX_LOAD_THREADS`] threads, keeping discovery order in the
/// results.
fn load_all(candidates: &[Candidate]) -> Vec<LoadResult> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(MAX_LOAD_THREADS);
    if threads <= 1 || candidates.len() < PARALLEL_MIN_SKILLS {
        return candidates.iter().map(loader::load_skill).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(candidate) = candidates.get(index) else {
                return done;
            };
            done.push((index, loader::load_skill(candidate)));
        }
    };
    let mut slots: Vec<Option<LoadResult>> = Vec::new();
    slots.resize_with(candidates.len(), || None);
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut finished = vec![work()];
        finished.extend(helpers.into_iter().filter_map(|helper| helper.join().ok()));
        for (index, result) in finished.into_iter().flatten() {
            slots[index] = Some(result);
        }
    });
    slots
        .into_iter()
        .zip(candidates)
        .map(|(slot, candidate)| {
            slot.unwrap_or_else(|| {
                Err(SkillProblem {
                    path: candidate.dir.clone(),
                    reason: "loading this skill failed unexpectedly".to_owned(),
                })
            })
        })
        .collect()
}

/// Reads the `description` of every category DESCRIPTION.md that exists (first root wins).
fn read_category_descriptions(
    files: &[(usize, String, PathBuf)],
    problems: &mut Vec<SkillProblem>,
) -> BTreeMap<String, String> {
    let mut descriptions = BTreeMap::new();
    for (_, category, path) in files {
        if descriptions.contains_key(category) {
            continue;
        }
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => continue,
            Err(err) => {
                problems.push(SkillProblem {
                    path: path.clone(),
                    reason: format!("cannot read category description: {err}"),
                });
                continue;
            }
        };
        match frontmatter::parse(&text) {
            Ok((fm, _)) => {
                let description = fm.get("description").and_then(scalar_text);
                let description = description
                    .as_deref()
                    .map(|d| d.trim().trim_matches(|c| c == '"' || c == '\''))
                    .unwrap_or_default();
                if !description.is_empty() {
                    descriptions.insert(category.clone(), description.to_owned());
                }
            }
            Err(err) => problems.push(SkillProblem {
                path: path.clone(),
                reason: err.to_string(),
            }),
        }
    }
    descriptions
}
