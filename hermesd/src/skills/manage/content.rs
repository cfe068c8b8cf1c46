//! The `create` and `edit` actions: writing a whole SKILL.md.

use std::fs;
use std::path::Path;

use serde_json::json;

use super::fsio::atomic_write;
use super::locate::{find_skill, resolve_inside};
use super::validate::{
    validate_category, validate_frontmatter, validate_name, validate_skill_md_size,
};
use super::vet::vet;
use super::{Ctx, Failure, ManageOutcome, SkillAction, Step, success};

/// Creates `home_skills/[category/]name/SKILL.md`.
pub(super) fn create(
    ctx: &Ctx,
    name: &str,
    content: &str,
    category: Option<&str>,
) -> Step<ManageOutcome> {
    validate_name(name)?;
    let category = validate_category(category)?;
    validate_frontmatter(content)?;
    validate_skill_md_size(content, "SKILL.md")?;
    vet(name, "SKILL.md", content)?;
    if let Some(existing) = find_skill(ctx.roots, name) {
        return Err(Failure::new(format!(
            "A skill named '{name}' already exists at {}.",
            existing.dir.display()
        )));
    }

    let home = ctx.roots.home_skills;
    fs::create_dir_all(home).map_err(|e| {
        format!(
            "Failed to create skills directory '{}': {e}",
            home.display()
        )
    })?;
    let rel = match category {
        Some(category) => format!("{category}/{name}"),
        None => name.to_owned(),
    };
    let skill_dir = home.join(&rel);
    ensure_fresh_dir(&skill_dir)?;
    let real_dir = resolve_inside(home, &rel)?;
    let created_dir = !real_dir.exists();
    let skill_md = real_dir.join("SKILL.md");
    if let Err(error) = atomic_write(&skill_md, content.as_bytes()) {
        if created_dir {
            // Roll back the empty directory we made; the write error is what matters.
            let _ = fs::remove_dir_all(&real_dir);
        }
        return Err(Failure::new(format!(
            "Failed to create skill '{name}': {error}"
        )));
    }

    let mut result = json!({
        "success": true,
        "message": format!("Skill '{name}' created."),
        "path": rel,
        "skill_md": skill_dir.join("SKILL.md").to_string_lossy(),
        "hint": format!(
            "To add reference files, templates, or scripts, use skill_manage(action='write_file', \
             name='{name}', file_path='references/example.md', file_content='...')"
        ),
    });
    if let (Some(category), Some(map)) = (category, result.as_object_mut()) {
        map.insert("category".into(), json!(category));
    }
    Ok(success(result, name, skill_dir, SkillAction::Create))
}

/// Refuses to create into a path that already holds something (a file, link or non-empty dir).
fn ensure_fresh_dir(skill_dir: &Path) -> Step<()> {
    match fs::symlink_metadata(skill_dir) {
        Err(_) => Ok(()),
        Ok(meta)
            if meta.is_dir()
                && fs::read_dir(skill_dir).is_ok_and(|mut entries| entries.next().is_none()) =>
        {
            Ok(())
        }
        Ok(_) => Err(Failure::new(format!(
            "Cannot create skill at '{}': something already exists there. Choose another name \
             or category.",
            skill_dir.display()
        ))),
    }
}

/// Replaces the SKILL.md of an existing skill wherever it lives.
pub(super) fn edit(ctx: &Ctx, name: &str, content: &str) -> Step<ManageOutcome> {
    validate_frontmatter(content)?;
    validate_skill_md_size(content, "SKILL.md")?;
    let skill = find_skill(ctx.roots, name).ok_or_else(|| not_found(name, ""))?;
    ctx.guard_existing(name, &skill.dir, SkillAction::Edit)?;
    vet(name, "SKILL.md", content)?;
    let target = resolve_inside(&skill.dir, "SKILL.md")?;
    atomic_write(&target, content.as_bytes())?;
    let result = json!({
        "success": true,
        "message": format!("Skill '{name}' updated (full rewrite)."),
        "path": skill.dir.to_string_lossy(),
    });
    Ok(success(result, name, skill.dir, SkillAction::Edit))
}

/// The "skill not found" failure, with an optional extra sentence.
pub(super) fn not_found(name: &str, suffix: &str) -> Failure {
    Failure::new(format!(
        "Skill '{name}' not found. Use skills_list() to see available skills.{suffix}"
    ))
}
