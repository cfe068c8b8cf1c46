//! Loading one skill directory: reading SKILL.md, interpreting its frontmatter and hashing the
//! directory's files into the content digest.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_yaml::{Mapping, Value};
use sha2::{Digest, Sha256};

use super::catalog::{Conditions, SkillEntry, SkillProblem};
use super::discover::{Candidate, SKILL_FILE, is_skipped_name};
use super::fields::{
    hermes_metadata, hermes_or_top_level_list, scalar_text, string_list, truncate_chars,
};
use super::frontmatter;

/// Initial buffer for reading a SKILL.md (most are a few KB; larger ones grow the buffer).
const READ_CAPACITY: usize = 16 * 1024;

/// Longest skill name kept (Hermes' limit); longer names are cut.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest description kept (Hermes' limit); longer ones are cut and end in `...`.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Reads and interprets the skill in `candidate.dir`, or explains why it cannot be used.
/// `Ok(None)` when an unconfirmed candidate has no SKILL.md (a plain directory, not a skill).
pub(super) fn load_skill(candidate: &Candidate) -> Result<Option<SkillEntry>, SkillProblem> {
    let skill_md = candidate.dir.join(SKILL_FILE);
    let fail = |reason: String| SkillProblem {
        path: skill_md.clone(),
        reason,
    };
    let mut bytes = Vec::with_capacity(READ_CAPACITY);
    match File::open(&skill_md).and_then(|mut file| file.read_to_end(&mut bytes)) {
        Ok(_) => {}
        Err(err) if !candidate.confirmed && err.kind() == io::ErrorKind::NotFound => {
            return Ok(None);
        }
        Err(err) => return Err(fail(format!("cannot read SKILL.md: {err}"))),
    }
    let text = std::str::from_utf8(&bytes)
        .map_err(|err| fail(format!("SKILL.md is not valid UTF-8: {err}")))?;
    let (frontmatter, body) = frontmatter::parse(text).map_err(|err| fail(err.to_string()))?;

    let name = match frontmatter.get("name") {
        None | Some(Value::Null) => None,
        Some(value) => match scalar_text(value) {
            Some(name) => Some(name.trim().to_owned()).filter(|n| !n.is_empty()),
            None => {
                return Err(fail(format!(
                    "frontmatter 'name' must be text, found {}",
                    frontmatter::value_kind(value)
                )));
            }
        },
    };
    let name = truncate_plain(
        name.as_deref().unwrap_or(&candidate.dir_name),
        MAX_NAME_CHARS,
    );
    let description = describe(&frontmatter, body);
    let conditions = conditions(&frontmatter);
    let platforms = string_list(frontmatter.get("platforms"))
        .into_iter()
        .map(|p| p.to_lowercase())
        .collect();
    let version = frontmatter.get("version").and_then(scalar_text);

    Ok(Some(SkillEntry {
        name,
        description,
        category: candidate.category.clone(),
        dir_name: candidate.dir_name.clone(),
        skill_md,
        root_index: candidate.root_index,
        tags: hermes_or_top_level_list(&frontmatter, "tags"),
        related_skills: hermes_or_top_level_list(&frontmatter, "related_skills"),
        platforms,
        conditions,
        digest: OnceLock::new(),
        version,
        dir: candidate.dir.clone(),
        frontmatter,
    }))
}

/// `text` cut to `max` characters without an ellipsis (names must stay usable as identifiers).
fn truncate_plain(text: &str, max: usize) -> String {
    text.char_indices()
        .nth(max)
        .map_or(text, |(end, _)| &text[..end])
        .to_owned()
}

/// The frontmatter description, else the first body line that is not a heading; cut to
/// [`MAX_DESCRIPTION_CHARS`].
fn describe(frontmatter: &Mapping, body: &str) -> String {
    let from_frontmatter = frontmatter
        .get("description")
        .and_then(scalar_text)
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty());
    let description = from_frontmatter.unwrap_or_else(|| {
        body.lines()
            .map(str::trim)
            .find(|line| !line.is_empty() && !line.starts_with('#'))
            .unwrap_or_default()
            .to_owned()
    });
    truncate_chars(&description, MAX_DESCRIPTION_CHARS)
}

fn conditions(frontmatter: &Mapping) -> Conditions {
    let Some(hermes) = hermes_metadata(frontmatter) else {
        return Conditions::default();
    };
    Conditions {
        requires_toolsets: string_list(hermes.get("requires_toolsets")),
        requires_tools: string_list(hermes.get("requires_tools")),
        fallback_for_toolsets: string_list(hermes.get("fallback_for_toolsets")),
        fallback_for_tools: string_list(hermes.get("fallback_for_tools")),
    }
}

/// Hex SHA-256 over every regular, non-hidden file of a skill directory (SKILL.md included even
/// when it is a symlink), in order of relative path: for each file, the path's length and bytes,
/// then the SHA-256 of its content. Unreadable files contribute their path and a marker.
pub fn skill_digest(dir: &Path) -> String {
    let mut files = Vec::new();
    collect_files(dir, "", &mut files);
    if let Err(pos) = files.binary_search_by(|(rel, _)| rel.as_str().cmp(SKILL_FILE)) {
        files.insert(pos, (SKILL_FILE.to_owned(), dir.join(SKILL_FILE)));
    }
    let mut outer = Sha256::new();
    for (rel, path) in &files {
        outer.update((rel.len() as u64).to_le_bytes());
        outer.update(rel.as_bytes());
        let mut inner = Sha256::new();
        match File::open(path).and_then(|mut file| io::copy(&mut file, &mut inner)) {
            Ok(_) => outer.update(inner.finalize()),
            Err(err) => {
                tracing::debug!(path = %path.display(), error = %err, "skill file unreadable for digest");
                outer.update(b"\0unreadable");
            }
        }
    }
    to_hex(&outer.finalize())
}

/// The digest [`skill_digest`] would give a directory holding exactly `files` (relative path
/// with `/` separators, content) — for content that is not on disk yet (the bundled skills).
pub fn files_digest<'a>(files: impl IntoIterator<Item = (String, &'a [u8])>) -> String {
    let mut files: Vec<(String, &[u8])> = files
        .into_iter()
        .filter(|(rel, _)| !rel.split('/').any(is_skipped_name))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut outer = Sha256::new();
    for (rel, content) in &files {
        outer.update((rel.len() as u64).to_le_bytes());
        outer.update(rel.as_bytes());
        outer.update(Sha256::digest(content));
    }
    to_hex(&outer.finalize())
}

/// Adds (relative path with `/` separators, full path) of every regular file below `dir`, sorted
/// by relative path, skipping hidden and dependency entries and the top-level SKILL.md. Symlinks
/// are not followed.
pub(super) fn collect_files(dir: &Path, prefix: &str, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_skipped_name(&name) || (prefix.is_empty() && name == SKILL_FILE) {
            continue;
        }
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        if !file_type.is_file() && !file_type.is_dir() {
            continue;
        }
        let rel = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        if file_type.is_dir() {
            collect_files(&entry.path(), &rel, out);
        } else {
            out.push((rel, entry.path()));
        }
    }
    if prefix.is_empty() {
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    out
}
