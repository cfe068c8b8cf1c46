//! The `patch` action: exact find-and-replace in SKILL.md or a supporting file.

use std::fs;

use serde_json::json;

use super::content::not_found;
use super::fsio::atomic_write;
use super::locate::{find_skill, resolve_inside};
use super::validate::{
    SkillFile, parse_file_path, validate_frontmatter, validate_skill_md_size, validate_support_size,
};
use super::vet::vet;
use super::{Ctx, Failure, ManageOutcome, SkillAction, Step, success};

/// Characters of the file shown back to the model when `old_string` is not found.
const PREVIEW_CHARS: usize = 500;

/// Arguments of one patch.
pub(super) struct PatchRequest<'a> {
    pub name: &'a str,
    pub old: &'a str,
    pub new: &'a str,
    /// `None` means SKILL.md.
    pub file_path: Option<&'a str>,
    pub replace_all: bool,
}

/// Applies the patch; `old` must match exactly once unless `replace_all`.
pub(super) fn patch(ctx: &Ctx, req: &PatchRequest) -> Step<ManageOutcome> {
    let name = req.name;
    if req.old == req.new {
        return Err(Failure::new(
            "old_string and new_string are identical; nothing to patch.",
        ));
    }
    let file = match req.file_path {
        Some(path) => parse_file_path(path, name, "patch", true)?,
        None => SkillFile::SkillMd,
    };
    let skill = find_skill(ctx.roots, name).ok_or_else(|| not_found(name, ""))?;
    ctx.guard_existing(name, &skill.dir, SkillAction::Patch)?;

    let label = match &file {
        SkillFile::SkillMd => "SKILL.md",
        SkillFile::Support(rel) => rel.as_str(),
    };
    let target = resolve_inside(&skill.dir, label)?;
    if !target.is_file() {
        return Err(Failure::new(format!(
            "File not found: {label} in skill '{name}'."
        )));
    }
    let original = fs::read_to_string(&target)
        .map_err(|e| format!("Cannot patch {label} in skill '{name}': reading it failed ({e})."))?;

    let count = original.matches(req.old).count();
    if count == 0 {
        return Err(Failure::new(format!(
            "Could not find old_string in {label} of skill '{name}'. Re-read the file with \
             skill_view() and copy the exact text."
        ))
        .with("file_preview", json!(preview(&original))));
    }
    if count > 1 && !req.replace_all {
        return Err(Failure::new(format!(
            "Found {count} matches for old_string in {label}. Provide more context to make it \
             unique, or use replace_all=true."
        )));
    }
    let updated = if req.replace_all {
        original.replace(req.old, req.new)
    } else {
        original.replacen(req.old, req.new, 1)
    };

    match file {
        SkillFile::SkillMd => {
            validate_skill_md_size(&updated, label)?;
            validate_frontmatter(&updated)
                .map_err(|e| format!("Patch would break SKILL.md structure: {e}"))?;
        }
        SkillFile::Support(_) => validate_support_size(&updated, label)?,
    }
    vet(name, label, &updated)?;
    atomic_write(&target, updated.as_bytes())?;

    let plural = if count > 1 { "s" } else { "" };
    let result = json!({
        "success": true,
        "message": format!("Patched {label} in skill '{name}' ({count} replacement{plural})."),
    });
    Ok(success(result, name, skill.dir, SkillAction::Patch))
}

/// The first `PREVIEW_CHARS` characters of `text`, with "..." appended when cut.
fn preview(text: &str) -> String {
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}
