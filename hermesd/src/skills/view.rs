//! The `skills_list` and `skill_view` tools: results in Hermes' JSON shapes.

use crate::policy::paths::PathPolicy;
use std::fs::File;
use std::path::Path;

use serde_json::{Value, json};

use super::activation::{ActivationContext, InactiveReason, availability};
use super::catalog::{Catalog, SkillEntry};
use super::files::{FileContent, FileError, grouped_files, read_capped, read_skill_file};

const LIST_HINT: &str = "Use skill_view(name) to see full content, tags, and linked files";
const USAGE_HINT: &str = "To view linked files, call skill_view(name, file_path) where file_path is e.g. 'references/api.md' or 'assets/config.yaml'";
const NAME_HINT: &str = "Use a skill name or relative path within the skills directory.";
const FILE_HINT: &str = "Use a relative path within the skill directory";
/// Most names suggested when a skill is not found.
const MAX_SUGGESTIONS: usize = 10;

/// `skills_list`: the skills available for `ctx` (Hermes hides disabled and OS-incompatible
/// skills here, but not ones excluded only by tool conditions), optionally of one category.
pub fn skills_list(
    catalog: &Catalog,
    ctx: &ActivationContext<'_>,
    category: Option<&str>,
) -> Value {
    let category = category.map(str::trim).filter(|c| !c.is_empty());
    let mut available = catalog
        .entries
        .iter()
        .filter(|e| availability(e, ctx).is_ok())
        .peekable();
    if available.peek().is_none() {
        return json!({
            "success": true,
            "skills": [],
            "categories": [],
            "message": "No skills found in skills/ directory.",
        });
    }
    let selected: Vec<&SkillEntry> = available
        .filter(|e| category.is_none() || e.category.as_deref() == category)
        .collect();
    let mut categories: Vec<&str> = selected
        .iter()
        .filter_map(|e| e.category.as_deref())
        .collect();
    categories.dedup();
    let skills: Vec<Value> = selected
        .iter()
        .map(|e| json!({"name": e.name, "description": e.description, "category": e.category}))
        .collect();
    let count = skills.len();
    json!({
        "success": true,
        "skills": skills,
        "categories": categories,
        "count": count,
        "hint": LIST_HINT,
    })
}

/// `skill_view`: a skill's SKILL.md (with `${HERMES_SKILL_DIR}` replaced by its directory) and
/// its linked files, or with `file_path` one supporting file of it (which the path policy must
/// let the agent read: a skill directory is no way around the rules).
pub fn skill_view(
    catalog: &Catalog,
    ctx: &ActivationContext<'_>,
    name: &str,
    file_path: Option<&str>,
    paths: &PathPolicy,
) -> Value {
    let name = name.trim();
    if let Some(error) = name_error(name) {
        return json!({"success": false, "error": error, "hint": NAME_HINT});
    }
    let Some(entry) = catalog.find(name) else {
        return json!({
            "success": false,
            "error": format!("Skill '{name}' not found."),
            "available_skills": closest_names(catalog, ctx, name),
            "hint": "Use skills_list to see all available skills",
        });
    };
    match availability(entry, ctx) {
        Ok(()) => {}
        Err(InactiveReason::UnsupportedOs { .. }) => {
            return json!({
                "success": false,
                "error": format!("Skill '{}' is not supported on this platform.", entry.name),
                "readiness_status": "unsupported",
            });
        }
        Err(reason) => {
            return json!({
                "success": false,
                "error": format!("Skill '{}' is {reason}.", entry.name),
            });
        }
    }
    match file_path.map(str::trim).filter(|p| !p.is_empty()) {
        Some(rel) => view_file(entry, name, rel, paths),
        None => view_skill(catalog, entry),
    }
}

fn view_skill(catalog: &Catalog, entry: &SkillEntry) -> Value {
    let content = File::open(&entry.skill_md)
        .and_then(|file| {
            let size = file.metadata()?.len();
            read_capped(file, size)
        })
        .map_err(|err| err.to_string());
    let (text, truncated) = match content {
        Ok(FileContent::Text {
            text, truncated, ..
        }) => (text, truncated),
        Ok(FileContent::Binary { .. }) => {
            return failure(format!("Failed to read skill '{}': not text", entry.name));
        }
        Err(err) => return failure(format!("Failed to read skill '{}': {err}", entry.name)),
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let skill_dir = entry.dir.to_string_lossy();
    let content = text.replace("${HERMES_SKILL_DIR}", &skill_dir);
    let path = catalog
        .root_of(entry)
        .and_then(|root| entry.skill_md.strip_prefix(root).ok())
        .map_or_else(|| entry.skill_md.to_string_lossy().into_owned(), slash_path);
    let linked = grouped_files(&entry.dir, false);
    let has_linked = !linked.is_empty();
    let mut result = json!({
        "success": true,
        "name": entry.name,
        "description": entry.description,
        "tags": entry.tags,
        "related_skills": entry.related_skills,
        "content": content,
        "path": path,
        "skill_dir": skill_dir,
        "linked_files": if has_linked { Value::Object(linked) } else { Value::Null },
        "usage_hint": if has_linked { Value::from(USAGE_HINT) } else { Value::Null },
    });
    if truncated {
        result["truncated"] = Value::Bool(true);
    }
    result
}

fn view_file(entry: &SkillEntry, name: &str, rel: &str, paths: &PathPolicy) -> Value {
    match read_skill_file(&entry.dir, rel, paths) {
        Ok((
            path,
            FileContent::Text {
                text,
                truncated,
                size,
            },
        )) => {
            let file_type = path
                .extension()
                .map(|ext| format!(".{}", ext.to_string_lossy()))
                .unwrap_or_default();
            let mut result = json!({
                "success": true,
                "name": name,
                "file": rel,
                "content": text,
                "file_type": file_type,
            });
            if truncated {
                result["truncated"] = Value::Bool(true);
                result["size"] = Value::from(size);
            }
            result
        }
        Ok((path, FileContent::Binary { size })) => {
            let file_name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            json!({
                "success": true,
                "name": name,
                "file": rel,
                "content": format!("[Binary file: {file_name}, size: {size} bytes]"),
                "is_binary": true,
            })
        }
        Err(FileError::NotFound) => json!({
            "success": false,
            "error": format!("File '{rel}' not found in skill '{name}'."),
            "available_files": grouped_files(&entry.dir, true),
            "hint": "Use one of the available file paths listed above",
        }),
        Err(FileError::Traversal) => refused("Path traversal ('..') is not allowed."),
        Err(FileError::Absolute) => refused("File path must be relative to the skill directory."),
        Err(FileError::Escapes) => refused("Path escapes the skill directory."),
        Err(FileError::Denied(message)) => refused(&message),
        Err(FileError::NotAFile) => refused(&format!("'{rel}' is not a file.")),
        Err(FileError::Io(err)) => {
            failure(format!("Failed to read '{rel}' in skill '{name}': {err}"))
        }
    }
}

fn failure(error: String) -> Value {
    json!({"success": false, "error": error})
}

fn refused(error: &str) -> Value {
    json!({"success": false, "error": error, "hint": FILE_HINT})
}

/// Hermes' lookup-name rule: relative, no drive prefix, no `..` component.
fn name_error(name: &str) -> Option<&'static str> {
    let bytes = name.as_bytes();
    let has_drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
    if name.starts_with(['/', '\\']) || has_drive {
        return Some("Skill name must be a relative path within the skills directory.");
    }
    if name.split(['/', '\\']).any(|part| part == "..") {
        return Some("Skill name cannot contain '..' path traversal components.");
    }
    None
}

/// `path` with `/` separators.
fn slash_path(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Names of available skills closest to `query`: substring matches first, then by edit distance.
fn closest_names(catalog: &Catalog, ctx: &ActivationContext<'_>, query: &str) -> Vec<String> {
    let query = query.to_lowercase();
    let mut scored: Vec<(usize, &str)> = catalog
        .entries
        .iter()
        .filter(|e| availability(e, ctx).is_ok())
        .map(|e| {
            let candidate = e.name.to_lowercase();
            let score = if !query.is_empty()
                && (candidate.contains(&query) || query.contains(&candidate))
            {
                0
            } else {
                1 + edit_distance(&query, &candidate)
            };
            (score, e.name.as_str())
        })
        .collect();
    scored.sort_unstable();
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, name)| name.to_owned())
        .collect()
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}
