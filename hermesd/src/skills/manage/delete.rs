//! The `delete` action: removing a whole skill directory, with consolidation checks.

use serde_json::json;

use super::content::not_found;
use super::fsio::delete_tree;
use super::locate::{check_delete_target, find_skill};
use super::{Caller, Ctx, Failure, ManageOutcome, SkillAction, Step, success};

/// Deletes skill `name`. A non-empty `absorbed_into` must name another existing skill; the
/// Review caller must always give one (it may only consolidate, never prune).
pub(super) fn delete(ctx: &Ctx, name: &str, absorbed_into: Option<&str>) -> Step<ManageOutcome> {
    let skill = find_skill(ctx.roots, name).ok_or_else(|| not_found(name, ""))?;
    ctx.guard_existing(name, &skill.dir, SkillAction::Delete)?;

    let absorbed_into = absorbed_into.map(str::trim).filter(|t| !t.is_empty());
    if ctx.caller == Caller::Review && absorbed_into.is_none() {
        return Err(Failure::new(format!(
            "Refusing background review delete of skill '{name}': autonomous review may only \
             delete a skill it has merged into another. Pass absorbed_into=<existing skill> \
             after moving the content there. Keeping '{name}'."
        )));
    }
    if let Some(target) = absorbed_into {
        if target == name {
            return Err(Failure::new(format!(
                "absorbed_into='{target}' cannot equal the skill being deleted."
            )));
        }
        if find_skill(ctx.roots, target).is_none() {
            return Err(Failure::new(format!(
                "absorbed_into='{target}' does not exist. Create or patch the umbrella skill \
                 first, then retry the delete."
            )));
        }
    }

    check_delete_target(&skill.dir, ctx.roots)?;
    delete_tree(&skill.dir, &skill.root)?;

    let mut message = format!("Skill '{name}' deleted.");
    if let Some(target) = absorbed_into {
        message.push_str(&format!(" Content absorbed into '{target}'."));
    }
    let result = json!({"success": true, "message": message});
    Ok(success(result, name, skill.dir, SkillAction::Delete))
}
