//! The `Skills` service: every skill with its origin, trust and activation; reading one (the
//! user may read a quarantined skill, the model may not); installing a local directory (scanned);
//! removing; trusting a quarantined skill as it is now.

use std::{
    path::{Path, PathBuf},
    sync::Arc,
};

use hermes_proto::pb;
use serde_json::Value;
use tonic::{Request, Response, Status};

use crate::{
    config::settings::SkillsSection,
    skills::{self, ActivationContext, SkillEntry, SkillsView, frontmatter},
    state::DaemonState,
    store::SkillRecord,
    tools::SessionSkills,
};

#[derive(Debug)]
pub struct SkillsService {
    pub state: Arc<DaemonState>,
}

impl SkillsService {
    fn roots(&self) -> Vec<PathBuf> {
        self.state
            .runner
            .tool_services
            .skills_settings()
            .roots(&self.state.home.dir)
    }

    async fn view(&self) -> Result<Arc<SkillsView>, Status> {
        self.state
            .runner
            .tool_services
            .skills
            .view(&self.state.store, self.roots())
            .await
            .map_err(Status::internal)
    }

    /// What a CLI session of the current configuration has (for activation).
    fn cli_session(&self) -> SessionSkills {
        let config = self.state.config();
        self.state
            .runner
            .registry
            .toolbox(
                &config.settings.toolsets,
                &self.state.runner.tool_services,
                &[],
            )
            .session_skills("cli")
    }

    fn describe(&self, entry: &SkillEntry, record: Option<&SkillRecord>) -> pb::Skill {
        self.describe_all(std::iter::once((entry, record)))
            .pop()
            .unwrap_or_default()
    }

    /// Describe many skills against one activation context (the toolbox is built once).
    fn describe_all<'a>(
        &self,
        entries: impl Iterator<Item = (&'a SkillEntry, Option<&'a SkillRecord>)>,
    ) -> Vec<pb::Skill> {
        let session = self.cli_session();
        let settings = self.state.runner.tool_services.skills_settings();
        let activation = session.activation(&settings);
        entries
            .map(|(entry, record)| {
                skill(entry, record, skills::activation(entry, &activation).err())
            })
            .collect()
    }
}

fn skill(
    entry: &SkillEntry,
    record: Option<&SkillRecord>,
    inactive: Option<skills::InactiveReason>,
) -> pb::Skill {
    let quarantined = record.is_some_and(|r| !r.is_trusted());
    pb::Skill {
        name: entry.name.clone(),
        category: entry.category.clone().unwrap_or_default(),
        description: entry.description.clone(),
        trust: if quarantined {
            pb::SkillTrust::Quarantined
        } else {
            pb::SkillTrust::Trusted
        } as i32,
        quarantine_reason: record.and_then(|r| r.reason.clone()).unwrap_or_default(),
        version: entry.version.clone().unwrap_or_default(),
        path: entry.dir.display().to_string(),
        inactive_reason: inactive.map(|r| r.to_string()).unwrap_or_default(),
        origin: record.map(|r| r.origin.clone()).unwrap_or_default(),
        tags: entry.tags.clone(),
    }
}

fn not_found(name: &str) -> Status {
    Status::not_found(format!(
        "no skill named {name} (hermesctl skills list shows them all)"
    ))
}

#[tonic::async_trait]
impl pb::skills_server::Skills for SkillsService {
    async fn list(
        &self,
        request: Request<pb::ListSkillsRequest>,
    ) -> Result<Response<pb::ListSkillsResponse>, Status> {
        let include_quarantined = request.into_inner().include_quarantined;
        let view = self.view().await?;
        let catalog = if include_quarantined {
            &view.all
        } else {
            &view.visible
        };
        let skills = self.describe_all(catalog.entries.iter().map(|e| (e, view.record(e))));
        let problems = view
            .all
            .problems
            .iter()
            .map(|p| pb::SkillProblem {
                path: p.path.display().to_string(),
                reason: p.reason.clone(),
            })
            .collect();
        Ok(Response::new(pb::ListSkillsResponse { skills, problems }))
    }

    async fn view(
        &self,
        request: Request<pb::ViewSkillRequest>,
    ) -> Result<Response<pb::ViewSkillResponse>, Status> {
        let request = request.into_inner();
        let view = self.view().await?;
        let entry = view
            .all
            .find(&request.name)
            .ok_or_else(|| not_found(&request.name))?;
        let described = self.describe(entry, view.record(entry));
        let name = entry.name.clone();
        let file = (!request.file.is_empty()).then_some(request.file);
        let all_tools = SessionSkills::default();
        let paths = self.state.runner.tool_services.paths.clone();
        let shown = tokio::task::spawn_blocking(move || {
            // The user reads the skill whatever its conditions: an empty context with no limits.
            let nothing = std::collections::HashMap::new();
            let activation = ActivationContext {
                os: skills::current_os(),
                platform: None,
                available_tools: &all_tools.tools,
                available_toolsets: &all_tools.toolsets,
                disabled: &[],
                platform_disabled: &nothing,
            };
            skills::skill_view(&view.all, &activation, &name, file.as_deref(), &paths)
        })
        .await
        .map_err(|e| Status::internal(format!("reading the skill stopped: {e}")))?;
        if shown.get("success") == Some(&Value::Bool(false)) {
            let error = shown["error"].as_str().unwrap_or("cannot read the skill");
            return Err(Status::invalid_argument(error.to_string()));
        }
        let files = shown
            .get("linked_files")
            .and_then(Value::as_object)
            .map(|groups| {
                groups
                    .values()
                    .filter_map(Value::as_array)
                    .flatten()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Response::new(pb::ViewSkillResponse {
            skill: Some(described),
            content: shown["content"].as_str().unwrap_or_default().to_string(),
            files,
        }))
    }

    async fn install(
        &self,
        request: Request<pb::InstallSkillRequest>,
    ) -> Result<Response<pb::InstallSkillResponse>, Status> {
        let request = request.into_inner();
        let source = PathBuf::from(&request.source);
        let view = self.view().await?;
        let home_skills = SkillsSection::home_root(&self.state.home.dir);
        let category = request.category.trim().to_string();
        let (name, target) = tokio::task::spawn_blocking(move || {
            let name = skill_name(&source)?;
            if !category.is_empty() && !valid_segment(&category) {
                return Err(Status::invalid_argument(format!(
                    "category {category:?} must be lowercase letters, digits, '.', '_' or '-'"
                )));
            }
            let target = match category.as_str() {
                "" => home_skills.join(&name),
                c => home_skills.join(c).join(&name),
            };
            if view.all.find(&name).is_some() || target.exists() {
                return Err(Status::already_exists(format!(
                    "a skill named {name} exists; remove it first (hermesctl skills rm {name})"
                )));
            }
            copy_dir(&source, &target).map_err(|e| {
                let _ = std::fs::remove_dir_all(&target);
                Status::internal(e)
            })?;
            Ok((name, target))
        })
        .await
        .map_err(|e| Status::internal(format!("installing stopped: {e}")))??;
        let services = &self.state.runner.tool_services;
        services
            .skills
            .record_write(&self.state.store, target.clone(), name.clone(), "installed")
            .await
            .map_err(Status::internal)?;
        let view = self.view().await?;
        let entry = view.all.find(&name).ok_or_else(|| {
            Status::internal(format!(
                "installed into {} but the skill does not load; see hermesd.log",
                target.display()
            ))
        })?;
        Ok(Response::new(pb::InstallSkillResponse {
            skill: Some(self.describe(entry, view.record(entry))),
        }))
    }

    async fn remove(
        &self,
        request: Request<pb::RemoveSkillRequest>,
    ) -> Result<Response<pb::RemoveSkillResponse>, Status> {
        let name = request.into_inner().name;
        let view = self.view().await?;
        let entry = view.all.find(&name).ok_or_else(|| not_found(&name))?;
        let dir = entry.dir.clone();
        let inside_a_root = view
            .roots
            .iter()
            .any(|root| dir.starts_with(root) && dir != *root);
        let is_link = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.file_type().is_symlink());
        if !inside_a_root || is_link {
            return Err(Status::failed_precondition(format!(
                "{} is a link or outside the skills directories; remove it by hand",
                dir.display()
            )));
        }
        let removed = dir.clone();
        tokio::task::spawn_blocking(move || std::fs::remove_dir_all(&removed))
            .await
            .map_err(|e| Status::internal(format!("removing stopped: {e}")))?
            .map_err(|e| Status::internal(format!("remove {}: {e}", dir.display())))?;
        self.state
            .runner
            .tool_services
            .skills
            .forget(&self.state.store, &dir)
            .await
            .map_err(Status::internal)?;
        Ok(Response::new(pb::RemoveSkillResponse {
            path: dir.display().to_string(),
        }))
    }

    async fn trust(
        &self,
        request: Request<pb::TrustSkillRequest>,
    ) -> Result<Response<pb::TrustSkillResponse>, Status> {
        let name = request.into_inner().name;
        let record = self
            .state
            .runner
            .tool_services
            .skills
            .trust(&self.state.store, self.roots(), &name)
            .await
            .map_err(|e| {
                if e.starts_with("no skill named") {
                    not_found(&name)
                } else {
                    Status::internal(e)
                }
            })?;
        tracing::info!(skill = %name, dir = %record.dir, "skill trusted by the user");
        let view = self.view().await?;
        let entry = view.all.find(&name).ok_or_else(|| not_found(&name))?;
        Ok(Response::new(pb::TrustSkillResponse {
            skill: Some(self.describe(entry, view.record(entry))),
        }))
    }
}

fn valid_segment(s: &str) -> bool {
    s.len() <= 64
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
}

/// The name of the skill in `source` (its frontmatter `name`, else the directory name).
fn skill_name(source: &Path) -> Result<String, Status> {
    let skill_md = source.join("SKILL.md");
    let text = std::fs::read_to_string(&skill_md).map_err(|e| {
        Status::invalid_argument(format!(
            "{}: {e} (a skill is a directory holding SKILL.md)",
            skill_md.display()
        ))
    })?;
    let (front, _) = frontmatter::parse(&text)
        .map_err(|e| Status::invalid_argument(format!("{}: {e}", skill_md.display())))?;
    let name = front
        .get("name")
        .and_then(serde_yaml::Value::as_str)
        .map(str::to_string)
        .or_else(|| source.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if !valid_segment(&name) {
        return Err(Status::invalid_argument(format!(
            "skill name {name:?} must be lowercase letters, digits, '.', '_' or '-' (at most 64)"
        )));
    }
    Ok(name)
}

/// Copy a skill directory (regular files and directories; hidden entries and links skipped).
fn copy_dir(from: &Path, to: &Path) -> Result<(), String> {
    std::fs::create_dir_all(to).map_err(|e| format!("create {}: {e}", to.display()))?;
    let entries = std::fs::read_dir(from).map_err(|e| format!("read {}: {e}", from.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("read {}: {e}", from.display()))?;
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry
            .file_type()
            .map_err(|e| format!("stat {}: {e}", entry.path().display()))?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)
                .map_err(|e| format!("copy {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}
