//! `hermesctl skills list|view|install|rm|trust`.

use hermes_proto::pb;
use serde_json::{Value, json};

use crate::{cli::SkillsCommand, connection, context::Context, error::CliError, output};

pub async fn run(ctx: &Context, command: SkillsCommand) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let mut skills = daemon.skills();
    match command {
        SkillsCommand::List => {
            let reply = skills
                .list(pb::ListSkillsRequest {
                    include_quarantined: true,
                })
                .await?
                .into_inner();
            if ctx.json {
                // One document: the skills, and the SKILL.md files that did not load.
                output::json(&list_json(&reply));
            } else {
                print_table(&reply.skills);
                // Skills that did not load are diagnostics: stderr, so stdout stays the table.
                for problem in &reply.problems {
                    eprintln!("skipped {}: {}", problem.path, problem.reason);
                }
            }
        }
        SkillsCommand::View { name, file } => {
            let reply = skills
                .view(pb::ViewSkillRequest {
                    name,
                    file: file.unwrap_or_default(),
                })
                .await?
                .into_inner();
            if ctx.json {
                let mut doc = reply.skill.as_ref().map(skill_json).unwrap_or(Value::Null);
                doc["content"] = json!(reply.content);
                doc["files"] = json!(reply.files);
                output::json(&doc);
            } else {
                output::print(&reply.content);
                if !reply.content.ends_with('\n') {
                    output::line("");
                }
                if !reply.files.is_empty() {
                    output::line(format!("\nfiles: {}", reply.files.join(", ")));
                }
            }
        }
        SkillsCommand::Install { path, category } => {
            let source = std::path::absolute(&path)
                .map_err(|e| CliError::new(format!("{}: {e}", path.display())))?;
            let skill = skills
                .install(pb::InstallSkillRequest {
                    source: source.display().to_string(),
                    category: category.unwrap_or_default(),
                })
                .await?
                .into_inner()
                .skill
                .ok_or_else(|| CliError::new("hermesd returned no skill"))?;
            report(ctx, &skill, "installed");
        }
        SkillsCommand::Rm { name } => {
            let path = skills
                .remove(pb::RemoveSkillRequest { name: name.clone() })
                .await?
                .into_inner()
                .path;
            if ctx.json {
                output::json(&json!({"name": name, "path": path, "removed": true}));
            } else {
                output::line(format!("removed skill {name} ({path})"));
            }
        }
        SkillsCommand::Trust { name } => {
            let skill = skills
                .trust(pb::TrustSkillRequest { name })
                .await?
                .into_inner()
                .skill
                .ok_or_else(|| CliError::new("hermesd returned no skill"))?;
            report(ctx, &skill, "trusted");
        }
    }
    Ok(())
}

fn report(ctx: &Context, skill: &pb::Skill, verb: &str) {
    if ctx.json {
        output::json(&skill_json(skill));
    } else if skill.trust == pb::SkillTrust::Quarantined as i32 {
        output::line(format!(
            "{verb} skill {} at {}, but it is quarantined: {}\n(the model will not see it; \
             `hermesctl skills trust {}` after reading it)",
            skill.name, skill.path, skill.quarantine_reason, skill.name
        ));
    } else {
        output::line(format!("{verb} skill {} ({})", skill.name, skill.path));
    }
}

fn trust_word(trust: i32) -> &'static str {
    if trust == pb::SkillTrust::Quarantined as i32 {
        "quarantined"
    } else {
        "trusted"
    }
}

/// `skills list --json`: `{"skills": [...], "problems": [{"path", "reason"}]}`.
fn list_json(reply: &pb::ListSkillsResponse) -> Value {
    json!({
        "skills": reply.skills.iter().map(skill_json).collect::<Vec<_>>(),
        "problems": reply
            .problems
            .iter()
            .map(|p| json!({"path": p.path, "reason": p.reason}))
            .collect::<Vec<_>>(),
    })
}

fn skill_json(s: &pb::Skill) -> Value {
    json!({
        "name": s.name,
        "category": s.category,
        "description": s.description,
        "version": s.version,
        "path": s.path,
        "origin": s.origin,
        "tags": s.tags,
        "trust": trust_word(s.trust),
        "quarantine_reason": if s.quarantine_reason.is_empty() { Value::Null } else { json!(s.quarantine_reason) },
        "active": s.inactive_reason.is_empty() && s.trust != pb::SkillTrust::Quarantined as i32,
        "inactive_reason": if s.inactive_reason.is_empty() { Value::Null } else { json!(s.inactive_reason) },
    })
}

fn print_table(list: &[pb::Skill]) {
    if list.is_empty() {
        output::line(
            "no skills (add some under $HERMES_HOME/skills or `hermesctl skills install`)",
        );
        return;
    }
    output::line(format!(
        "{:<32}  {:<22}  {:<9}  {:<11}  DESCRIPTION",
        "NAME", "CATEGORY", "ORIGIN", "TRUST"
    ));
    for s in list {
        let status = if s.trust == pb::SkillTrust::Quarantined as i32 {
            format!("quarantined: {}", s.quarantine_reason)
        } else if !s.inactive_reason.is_empty() {
            format!("(inactive: {}) {}", s.inactive_reason, s.description)
        } else {
            s.description.clone()
        };
        output::line(format!(
            "{:<32}  {:<22}  {:<9}  {:<11}  {}",
            s.name,
            if s.category.is_empty() {
                "-"
            } else {
                &s.category
            },
            s.origin,
            trust_word(s.trust),
            status
        ));
    }
}
