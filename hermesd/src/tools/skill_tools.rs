//! `skills_list`, `skill_view` and `skill_manage`: progressive disclosure of the skills the model
//! may see (quarantined ones are invisible), and creating or improving skills. What hermesd's
//! agent writes is recorded as its own (trusted, and the only skills a background review may
//! change).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Tool, ToolContext, ToolError};
use crate::{
    config::settings::SkillsSection,
    skills::{
        self, SkillsView,
        manage::{Caller, ManageRoots, SkillAction},
    },
};

/// The current view of the skills for a call.
async fn current_view(ctx: &ToolContext) -> Result<Arc<SkillsView>, ToolError> {
    let roots = ctx
        .services
        .skills_settings()
        .roots(&ctx.services.hermes_home);
    ctx.services
        .skills
        .view(&ctx.services.store, roots)
        .await
        .map_err(ToolError::Failed)
}

pub struct SkillsListTool;

#[async_trait]
impl Tool for SkillsListTool {
    fn name(&self) -> &'static str {
        "skills_list"
    }

    fn toolset(&self) -> &'static str {
        "skills"
    }

    fn schema(&self) -> Value {
        skills::skills_list_schema()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let view = current_view(ctx).await?;
        let category = args.get("category").and_then(Value::as_str);
        let settings = ctx.services.skills_settings();
        let activation = ctx.settings.skills.activation(&settings);
        Ok(skills::skills_list(&view.visible, &activation, category))
    }
}

pub struct SkillViewTool;

#[async_trait]
impl Tool for SkillViewTool {
    fn name(&self) -> &'static str {
        "skill_view"
    }

    fn toolset(&self) -> &'static str {
        "skills"
    }

    fn schema(&self) -> Value {
        skills::skill_view_schema()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let name = super::required_str(&args, "name")?.to_string();
        let file = super::optional_str(&args, "file_path").map(str::to_string);
        let view = current_view(ctx).await?;
        if let Some(reason) = view.quarantined(&name) {
            return Ok(quarantined(&name, &reason));
        }
        let session = Arc::clone(&ctx.settings.skills);
        let settings = ctx.services.skills_settings();
        let paths = ctx.services.paths.clone();
        tokio::task::spawn_blocking(move || {
            let activation = session.activation(&settings);
            skills::skill_view(&view.visible, &activation, &name, file.as_deref(), &paths)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("skill_view stopped: {e}")))
    }
}

fn quarantined(name: &str, reason: &str) -> Value {
    json!({
        "success": false,
        "error": format!(
            "skill '{name}' is quarantined by the security scan ({reason}); the user can review it \
             and run `hermesctl skills trust {name}`"
        ),
    })
}

pub struct SkillManageTool;

#[async_trait]
impl Tool for SkillManageTool {
    fn name(&self) -> &'static str {
        "skill_manage"
    }

    fn toolset(&self) -> &'static str {
        "skills"
    }

    fn schema(&self) -> Value {
        skills::manage::skill_manage_schema()
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let view = current_view(ctx).await?;
        let action = args
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(name) = args.get("name").and_then(Value::as_str)
            && action != "create"
            && let Some(reason) = view.quarantined(name)
        {
            return Ok(quarantined(name, &reason));
        }
        let roots = view.roots.clone();
        let caller = if ctx.settings.background_review {
            Caller::Review
        } else {
            Caller::Agent
        };
        let home_skills = SkillsSection::home_root(&ctx.services.hermes_home);
        let outcome = tokio::task::spawn_blocking(move || {
            let may_modify = |dir: &std::path::Path| view.agent_created(dir);
            let manage_roots = ManageRoots {
                home_skills: &home_skills,
                roots: &roots,
            };
            skills::manage::skill_manage(&args, &manage_roots, caller, &may_modify)
        })
        .await
        .map_err(|e| ToolError::Failed(format!("skill_manage stopped: {e}")))?;
        if let Some(changed) = outcome.changed {
            let library = &ctx.services.skills;
            let store = &ctx.services.store;
            let recorded = match changed.action {
                SkillAction::Delete => library.forget(store, &changed.dir).await,
                _ => library
                    .record_write(store, changed.dir.clone(), changed.name.clone(), "agent")
                    .await
                    .map(|_| ()),
            };
            if let Err(e) = recorded {
                tracing::warn!(skill = %changed.name, error = %e, "skill write not recorded");
            }
        }
        Ok(outcome.result)
    }
}
