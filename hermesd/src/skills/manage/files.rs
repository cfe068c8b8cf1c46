//! The `write_file` and `remove_file` actions for supporting files.

use std::fs;

use serde_json::{Value, json};

use super::content::not_found;
use super::fsio::{atomic_write, remove_file_and_prune};
use super::locate::{find_skill, list_support_files, resolve_inside};
use super::validate::{SkillFile, parse_file_path, validate_support_size};
use super::vet::vet;
use super::{Ctx, Failure, ManageOutcome, SkillAction, Step, success};

/// Adds or overwrites `file_path` (under references/, templates/, scripts/ or assets/).
pub(super) fn write_file(
    ctx: &Ctx,
    name: &str,
    file_path: &str,
    data: &str,
) -> Step<ManageOutcome> {
    let rel = support_path(file_path, name, SkillAction::WriteFile)?;
    validate_support_size(data, "File")?;
    let skill = find_skill(ctx.roots, name)
        .ok_or_else(|| not_found(name, " Create it first with action='create'."))?;
    ctx.guard_existing(name, &skill.dir, SkillAction::WriteFile)?;
    vet(name, &rel, data)?;
    let target = resolve_inside(&skill.dir, &rel)?;
    if target.is_dir() {
        return Err(Failure::new(format!(
            "Cannot write '{file_path}' in skill '{name}': it is a directory."
        )));
    }
    atomic_write(&target, data.as_bytes())?;
    let result = json!({
        "success": true,
        "message": format!("File '{file_path}' written to skill '{name}'."),
        "path": skill.dir.join(&rel).to_string_lossy(),
    });
    Ok(success(result, name, skill.dir, SkillAction::WriteFile))
}

/// Removes a supporting file; a missing file is an error that lists what exists.
pub(super) fn remove_file(ctx: &Ctx, name: &str, file_path: &str) -> Step<ManageOutcome> {
    let rel = support_path(file_path, name, SkillAction::RemoveFile)?;
    let skill = find_skill(ctx.roots, name).ok_or_else(|| not_found(name, ""))?;
    ctx.guard_existing(name, &skill.dir, SkillAction::RemoveFile)?;
    // Resolve the parent only: a symlink as the last component is removed, not followed.
    let (parent, file_name) = rel.rsplit_once('/').unwrap_or(("", rel.as_str()));
    let target = resolve_inside(&skill.dir, parent)?.join(file_name);
    let meta = fs::symlink_metadata(&target);
    if meta.is_err() {
        let available = list_support_files(&skill.dir);
        let available = if available.is_empty() {
            Value::Null
        } else {
            json!(available)
        };
        return Err(
            Failure::new(format!("File '{file_path}' not found in skill '{name}'."))
                .with("available_files", available),
        );
    }
    if meta.is_ok_and(|m| m.is_dir()) {
        return Err(Failure::new(format!(
            "Cannot remove '{file_path}' from skill '{name}': it is a directory; remove the \
             files inside it instead."
        )));
    }
    let skill_real = fs::canonicalize(&skill.dir).map_err(|e| {
        format!(
            "Cannot resolve skill directory '{}': {e}",
            skill.dir.display()
        )
    })?;
    remove_file_and_prune(&target, &skill_real)?;
    let result = json!({
        "success": true,
        "message": format!("File '{file_path}' removed from skill '{name}'."),
    });
    Ok(success(result, name, skill.dir, SkillAction::RemoveFile))
}

/// Parses `file_path` as a supporting-file path (SKILL.md is refused here).
fn support_path(file_path: &str, name: &str, action: SkillAction) -> Step<String> {
    match parse_file_path(file_path, name, action.as_str(), false)? {
        SkillFile::Support(rel) => Ok(rel),
        SkillFile::SkillMd => Err(Failure::new(format!(
            "'{}' cannot target SKILL.md.",
            action.as_str()
        ))),
    }
}
