//! The skills shipped in the binary (the repository's `skills/`) and their sync into
//! `HERMES_HOME/skills`. hermesd keeps its own manifest, `.hermesd_bundled` (`name:digest` per
//! line, the digest of what it wrote). A bundled skill is written when its directory is absent and
//! was never written before (a skill the user deleted stays deleted), and updated only when the
//! copy on disk is still exactly what hermesd wrote. A name that Python Hermes' `.bundled_manifest`
//! lists, or that any skill on disk already uses, is never touched.

use std::{
    collections::BTreeMap,
    io,
    path::{Path, PathBuf},
};

use include_dir::{Dir, include_dir};

/// The bundled skills, embedded at build time.
static BUNDLED: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/../skills");

/// hermesd's manifest, beside Python Hermes' `.bundled_manifest` in the skills root.
pub const MANIFEST: &str = ".hermesd_bundled";
const PYTHON_MANIFEST: &str = ".bundled_manifest";

/// One bundled skill: `<category>/<name>` and its files (relative path → bytes).
#[derive(Debug, Clone)]
pub struct BundledSkill {
    pub name: String,
    pub relative_dir: PathBuf,
    pub files: Vec<(PathBuf, &'static [u8])>,
}

/// What a sync did, skill by skill.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SyncReport {
    pub written: Vec<PathBuf>,
    pub updated: Vec<PathBuf>,
    /// Found on disk exactly as bundled but missing from the manifest.
    pub adopted: Vec<PathBuf>,
    /// Skipped with the reason (changed by the user, owned by Python Hermes, deleted, …).
    pub kept: Vec<(String, &'static str)>,
}

impl BundledSkill {
    /// The digest its directory has once written (as `skill_digest` computes it on disk).
    pub fn digest(&self) -> String {
        super::files_digest(self.files.iter().map(|(path, contents)| {
            let relative: Vec<String> = path
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            (relative.join("/"), *contents)
        }))
    }
}

/// Every bundled skill (a directory holding SKILL.md, at any depth under `skills/`).
pub fn bundled_skills() -> Vec<BundledSkill> {
    let mut skills = Vec::new();
    collect_skills(&BUNDLED, &mut skills);
    skills.sort_by(|a, b| a.relative_dir.cmp(&b.relative_dir));
    skills
}

fn collect_skills(dir: &'static Dir<'static>, out: &mut Vec<BundledSkill>) {
    for sub in dir.dirs() {
        if sub.get_file(sub.path().join("SKILL.md")).is_some() {
            let mut files = Vec::new();
            collect_files(sub, sub.path(), &mut files);
            let name = sub
                .path()
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            out.push(BundledSkill {
                name,
                relative_dir: sub.path().to_path_buf(),
                files,
            });
        } else {
            collect_skills(sub, out);
        }
    }
}

fn collect_files(dir: &'static Dir<'static>, base: &Path, out: &mut Vec<(PathBuf, &'static [u8])>) {
    for file in dir.files() {
        if let Ok(relative) = file.path().strip_prefix(base) {
            out.push((relative.to_path_buf(), file.contents()));
        }
    }
    for sub in dir.dirs() {
        collect_files(sub, base, out);
    }
}

/// Category descriptions shipped with the bundle (`<category>/DESCRIPTION.md`).
fn category_files() -> Vec<(PathBuf, &'static [u8])> {
    BUNDLED
        .dirs()
        .filter_map(|category| {
            let path = category.path().join("DESCRIPTION.md");
            category.get_file(&path).map(|f| (path, f.contents()))
        })
        .collect()
}

/// Sync the bundle into `root`; `digest` gives the digest of a skill directory on disk and
/// `name_taken` says whether a skill of that name is already anywhere under the skills roots
/// (asked only for a bundled skill about to be written for the first time).
pub fn sync(
    root: &Path,
    name_taken: &dyn Fn(&str) -> bool,
    digest: &dyn Fn(&Path) -> io::Result<String>,
) -> io::Result<SyncReport> {
    std::fs::create_dir_all(root)
        .map_err(|e| io::Error::new(e.kind(), format!("create {}: {e}", root.display())))?;
    let mut ours = read_manifest(&root.join(MANIFEST));
    let python = read_manifest(&root.join(PYTHON_MANIFEST));
    let mut report = SyncReport::default();
    for skill in bundled_skills() {
        let target = root.join(&skill.relative_dir);
        let written_before = ours.get(&skill.name).cloned();
        if python.contains_key(&skill.name) {
            report.kept.push((skill.name, "listed by Python Hermes"));
            continue;
        }
        let exists = target.join("SKILL.md").is_file();
        match (exists, written_before) {
            (false, Some(_)) => report.kept.push((skill.name, "deleted by the user")),
            (false, None) if name_taken(&skill.name) => {
                report
                    .kept
                    .push((skill.name, "the name is taken by another skill"));
            }
            (false, None) => {
                write_skill(&target, &skill)?;
                ours.insert(skill.name.clone(), digest(&target)?);
                report.written.push(target);
            }
            // Exactly what hermesd would write (a sync cut short before its manifest): adopt it.
            (true, None) if digest(&target)? == skill.digest() => {
                ours.insert(skill.name.clone(), skill.digest());
                report.adopted.push(target);
            }
            (true, None) => report.kept.push((skill.name, "not written by hermesd")),
            (true, Some(recorded)) => {
                if skill.digest() == recorded {
                    continue;
                }
                if digest(&target)? != recorded {
                    report.kept.push((skill.name, "changed on disk"));
                    continue;
                }
                let staging = staging_dir(root, &skill.name);
                write_skill(&staging, &skill)?;
                let fresh = digest(&staging)?;
                replace_dir(&staging, &target)?;
                ours.insert(skill.name.clone(), fresh);
                report.updated.push(target);
            }
        }
    }
    for (path, contents) in category_files() {
        let target = root.join(&path);
        if !target.exists() {
            write_file(&target, contents)?;
        }
    }
    if !report.written.is_empty() || !report.updated.is_empty() || !report.adopted.is_empty() {
        write_manifest(&root.join(MANIFEST), &ours)?;
    }
    Ok(report)
}

fn staging_dir(root: &Path, name: &str) -> PathBuf {
    root.join(format!(".hermesd-staging-{name}"))
}

fn write_skill(dir: &Path, skill: &BundledSkill) -> io::Result<()> {
    for (relative, contents) in &skill.files {
        write_file(&dir.join(relative), contents)?;
    }
    Ok(())
}

fn write_file(path: &Path, contents: &[u8]) -> io::Result<()> {
    let context = |verb: &str, e: io::Error| {
        io::Error::new(e.kind(), format!("{verb} {}: {e}", path.display()))
    };
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| context("create the directory of", e))?;
    let mut temp = tempfile::NamedTempFile::new_in(parent).map_err(|e| context("write", e))?;
    io::Write::write_all(&mut temp, contents).map_err(|e| context("write", e))?;
    temp.as_file().sync_all().map_err(|e| context("sync", e))?;
    if path.extension().is_some_and(|e| e == "sh" || e == "py") {
        use std::os::unix::fs::PermissionsExt;
        let _ = temp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o755));
    }
    temp.persist(path)
        .map_err(|e| context("rename into", e.error))?;
    Ok(())
}

/// Swap `staging` in for `target` (the old copy is removed after the rename).
fn replace_dir(staging: &Path, target: &Path) -> io::Result<()> {
    let old = target.with_extension("hermesd-old");
    std::fs::rename(target, &old)
        .map_err(|e| io::Error::new(e.kind(), format!("move {} aside: {e}", target.display())))?;
    std::fs::rename(staging, target)
        .map_err(|e| io::Error::new(e.kind(), format!("install {}: {e}", target.display())))?;
    remove_dir(&old)
}

fn remove_dir(dir: &Path) -> io::Result<()> {
    std::fs::remove_dir_all(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("remove {}: {e}", dir.display())))
}

/// `name:digest` lines (Python Hermes' v1 manifests have bare names: an empty digest).
fn read_manifest(path: &Path) -> BTreeMap<String, String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|line| match line.split_once(':') {
            Some((name, digest)) => (name.trim().to_string(), digest.trim().to_string()),
            None => (line.to_string(), String::new()),
        })
        .collect()
}

fn write_manifest(path: &Path, entries: &BTreeMap<String, String>) -> io::Result<()> {
    let text: String = entries
        .iter()
        .map(|(name, digest)| format!("{name}:{digest}\n"))
        .collect();
    write_file(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn digest(dir: &Path) -> io::Result<String> {
        Ok(crate::skills::skill_digest(dir))
    }

    #[test]
    fn every_bundled_skill_passes_the_security_scan() {
        for skill in bundled_skills() {
            for (path, contents) in &skill.files {
                let text = String::from_utf8_lossy(contents);
                let blocking: Vec<String> =
                    crate::skills::scan::scan_text(&path.display().to_string(), &text)
                        .into_iter()
                        .filter(|f| f.severity.is_blocking())
                        .map(|f| format!("{}:{} {}", f.file, f.line, f.pattern_id))
                        .collect();
                assert!(blocking.is_empty(), "{}: {blocking:?}", skill.name);
            }
        }
    }

    #[test]
    fn the_embedded_digest_is_the_digest_on_disk() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("skills");
        sync(&root, &|_| false, &digest).unwrap();
        for skill in bundled_skills() {
            let on_disk = crate::skills::skill_digest(&root.join(&skill.relative_dir));
            assert_eq!(skill.digest(), on_disk, "{}", skill.name);
        }
    }

    #[test]
    fn the_bundle_holds_the_repository_skills() {
        let skills = bundled_skills();
        assert!(skills.len() >= 5, "{} bundled skills", skills.len());
        assert!(skills.iter().any(|s| s.name == "git-pr-workflow"));
        for skill in &skills {
            assert!(
                skill.files.iter().any(|(p, _)| p == Path::new("SKILL.md")),
                "{} has a SKILL.md",
                skill.name
            );
        }
    }

    #[test]
    fn writes_once_keeps_user_changes_and_deletions_and_python_names() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("skills");
        let first = sync(&root, &|_| false, &digest).unwrap();
        let skill_md = root.join("software-development/git-pr-workflow/SKILL.md");
        assert!(skill_md.is_file());
        assert_eq!(first.written.len(), bundled_skills().len());

        // Unchanged: nothing to do.
        let again = sync(&root, &|_| false, &digest).unwrap();
        assert!(again.written.is_empty() && again.updated.is_empty());

        // A user edit is kept.
        std::fs::write(
            &skill_md,
            "---\nname: git-pr-workflow\ndescription: mine\n---\nmine\n",
        )
        .unwrap();
        let kept = sync(&root, &|_| false, &digest).unwrap();
        assert!(kept.updated.is_empty() && kept.written.is_empty());
        assert!(std::fs::read_to_string(&skill_md).unwrap().contains("mine"));

        // A deletion is respected.
        let log = root.join("devops/log-summarising");
        std::fs::remove_dir_all(&log).unwrap();
        sync(&root, &|_| false, &digest).unwrap();
        assert!(!log.exists());

        // A name Python Hermes lists is never written.
        let other = tempfile::tempdir().unwrap();
        let root = other.path().join("skills");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(PYTHON_MANIFEST), "ci-failure-triage:abc\n").unwrap();
        sync(&root, &|_| false, &digest).unwrap();
        assert!(!root.join("software-development/ci-failure-triage").exists());
        assert!(root.join("software-development/git-pr-workflow").exists());
    }

    #[test]
    fn a_sync_cut_short_before_its_manifest_is_adopted_not_disowned() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("skills");
        sync(&root, &|_| false, &digest).unwrap();
        std::fs::remove_file(root.join(MANIFEST)).unwrap();
        let report = sync(&root, &|_| false, &digest).unwrap();
        assert_eq!(report.adopted.len(), bundled_skills().len());
        assert!(report.written.is_empty());
        assert!(read_manifest(&root.join(MANIFEST)).contains_key("git-pr-workflow"));
    }

    #[test]
    fn an_unchanged_copy_with_an_older_recorded_digest_is_updated() {
        let home = tempfile::tempdir().unwrap();
        let root = home.path().join("skills");
        sync(&root, &|_| false, &digest).unwrap();
        // Simulate an older bundle: what is on disk (and recorded) differs from the embedded one.
        let skill_md = root.join("software-development/git-pr-workflow/SKILL.md");
        std::fs::write(&skill_md, "old version\n").unwrap();
        let mut manifest = read_manifest(&root.join(MANIFEST));
        manifest.insert(
            "git-pr-workflow".into(),
            digest(skill_md.parent().unwrap()).unwrap(),
        );
        write_manifest(&root.join(MANIFEST), &manifest).unwrap();
        let report = sync(&root, &|_| false, &digest).unwrap();
        assert_eq!(report.updated.len(), 1);
        assert!(
            std::fs::read_to_string(&skill_md)
                .unwrap()
                .contains("name: git-pr-workflow")
        );
    }
}
