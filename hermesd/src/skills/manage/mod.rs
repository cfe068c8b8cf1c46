//! The `skill_manage` tool: create, edit, patch, delete and maintain skills on disk.
//!
//! Sync code (call it through `spawn_blocking`). Every failure becomes a Hermes-shaped
//! `{"success": false, "error": ...}` result; nothing panics or escapes as an `Err`.

mod content;
mod delete;
mod files;
mod fsio;
mod locate;
mod patch;
mod schema;
mod validate;
mod vet;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

pub use self::schema::skill_manage_schema;

/// Where skills live: new skills go to `home_skills`; lookups search `roots` (home first).
#[derive(Debug, Clone, Copy)]
pub struct ManageRoots<'a> {
    /// Directory that receives newly created skills (`HERMES_HOME/skills`).
    pub home_skills: &'a Path,
    /// Every skill root, searched in order; `home_skills` is searched first even if absent here.
    pub roots: &'a [PathBuf],
}

impl ManageRoots<'_> {
    /// All roots in search order: home first, then the others (home not repeated).
    fn all(&self) -> impl Iterator<Item = &Path> {
        let home = self.home_skills;
        std::iter::once(home).chain(
            self.roots
                .iter()
                .map(PathBuf::as_path)
                .filter(move |root| *root != home),
        )
    }
}

/// Who is calling the tool; decides which write guards apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// The foreground agent acting for the user: may change any skill under the roots.
    Agent,
    /// The background learning-loop reviewer: may change only agent-created skills and may
    /// delete only when `absorbed_into` names an existing skill.
    Review,
}

/// The six `skill_manage` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillAction {
    /// A new skill directory with its SKILL.md.
    Create,
    /// A full SKILL.md rewrite.
    Edit,
    /// A find-and-replace in SKILL.md or a supporting file.
    Patch,
    /// The skill directory was removed.
    Delete,
    /// A supporting file was added or overwritten.
    WriteFile,
    /// A supporting file was removed.
    RemoveFile,
}

impl SkillAction {
    /// Hermes' name for the action (`"write_file"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Create => "create",
            Self::Edit => "edit",
            Self::Patch => "patch",
            Self::Delete => "delete",
            Self::WriteFile => "write_file",
            Self::RemoveFile => "remove_file",
        }
    }

    fn parse(action: &str) -> Option<Self> {
        Some(match action {
            "create" => Self::Create,
            "edit" => Self::Edit,
            "patch" => Self::Patch,
            "delete" => Self::Delete,
            "write_file" => Self::WriteFile,
            "remove_file" => Self::RemoveFile,
            _ => return None,
        })
    }
}

/// A skill the tool changed, so the daemon can record (and trust, and announce) it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedSkill {
    /// The skill's name (its directory name).
    pub name: String,
    /// The skill directory as found under its root (not canonicalised).
    pub dir: PathBuf,
    /// What was done.
    pub action: SkillAction,
}

/// The tool result plus, on success, what changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ManageOutcome {
    /// Hermes' JSON result: `{success, message | error, path?, ...}`.
    pub result: Value,
    /// Set only when a write succeeded.
    pub changed: Option<ChangedSkill>,
}

/// Runs one `skill_manage` call. `may_modify(skill_dir)` is consulted only for
/// [`Caller::Review`] and must say whether that skill is agent-created.
pub fn skill_manage(
    args: &Value,
    roots: &ManageRoots,
    caller: Caller,
    may_modify: &dyn Fn(&Path) -> bool,
) -> ManageOutcome {
    let ctx = Ctx {
        roots,
        caller,
        may_modify,
    };
    match run(args, &ctx) {
        Ok(outcome) => outcome,
        Err(failure) => failure.into_outcome(),
    }
}

fn run(args: &Value, ctx: &Ctx) -> Step<ManageOutcome> {
    let args = Args::parse(args)?;
    let Some(action) = SkillAction::parse(args.action) else {
        return Err(Failure::new(format!(
            "Unknown action '{}'. Use: create, edit, patch, delete, write_file, remove_file",
            args.action
        )));
    };
    if args.name.is_empty() {
        return Err(Failure::new("Skill name is required."));
    }
    match action {
        SkillAction::Create => {
            let content = required_text(
                args.content,
                "content is required for 'create'. Provide the full SKILL.md text (frontmatter + body).",
            )?;
            content::create(ctx, args.name, content, args.category)
        }
        SkillAction::Edit => {
            let content = required_text(
                args.content,
                "content is required for 'edit'. Provide the full updated SKILL.md text.",
            )?;
            content::edit(ctx, args.name, content)
        }
        SkillAction::Patch => {
            let old = required_text(
                args.old_string,
                "old_string is required for 'patch'. Provide the text to find.",
            )?;
            let new = args.new_string.ok_or_else(|| {
                Failure::new(
                    "new_string is required for 'patch'. Use an empty string to delete the matched text.",
                )
            })?;
            let request = patch::PatchRequest {
                name: args.name,
                old,
                new,
                file_path: args.file_path.filter(|p| !p.is_empty()),
                replace_all: args.replace_all,
            };
            patch::patch(ctx, &request)
        }
        SkillAction::Delete => delete::delete(ctx, args.name, args.absorbed_into),
        SkillAction::WriteFile => {
            let file_path = required_text(
                args.file_path,
                "file_path is required for 'write_file'. Example: 'references/api-guide.md'",
            )?;
            let data = args
                .file_content
                .ok_or_else(|| Failure::new("file_content is required for 'write_file'."))?;
            files::write_file(ctx, args.name, file_path, data)
        }
        SkillAction::RemoveFile => {
            let file_path =
                required_text(args.file_path, "file_path is required for 'remove_file'.")?;
            files::remove_file(ctx, args.name, file_path)
        }
    }
}

fn required_text<'v>(value: Option<&'v str>, message: &str) -> Step<&'v str> {
    match value {
        Some(text) if !text.is_empty() => Ok(text),
        _ => Err(Failure::new(message)),
    }
}

/// Per-call context shared by the action handlers.
struct Ctx<'a> {
    roots: &'a ManageRoots<'a>,
    caller: Caller,
    may_modify: &'a dyn Fn(&Path) -> bool,
}

impl Ctx<'_> {
    /// Refuses a Review-caller write to a skill that is not agent-created.
    fn guard_existing(&self, name: &str, dir: &Path, action: SkillAction) -> Step<()> {
        if self.caller == Caller::Review && !(self.may_modify)(dir) {
            return Err(Failure::new(format!(
                "Refusing background review {} of skill '{name}': it is not recorded as \
                 agent-created, and autonomous review may only change skills it created.",
                action.as_str()
            )));
        }
        Ok(())
    }
}

/// Hermes' tool arguments, borrowed from the JSON value.
struct Args<'v> {
    action: &'v str,
    name: &'v str,
    content: Option<&'v str>,
    category: Option<&'v str>,
    file_path: Option<&'v str>,
    file_content: Option<&'v str>,
    old_string: Option<&'v str>,
    new_string: Option<&'v str>,
    replace_all: bool,
    absorbed_into: Option<&'v str>,
}

impl<'v> Args<'v> {
    fn parse(value: &'v Value) -> Step<Self> {
        let Some(map) = value.as_object() else {
            return Err(Failure::new(
                "skill_manage arguments must be a JSON object.",
            ));
        };
        Ok(Self {
            action: text_arg(map, "action")?.unwrap_or(""),
            name: text_arg(map, "name")?.unwrap_or(""),
            content: text_arg(map, "content")?,
            category: text_arg(map, "category")?,
            file_path: text_arg(map, "file_path")?,
            file_content: text_arg(map, "file_content")?,
            old_string: text_arg(map, "old_string")?,
            new_string: text_arg(map, "new_string")?,
            replace_all: bool_arg(map, "replace_all")?,
            absorbed_into: text_arg(map, "absorbed_into")?,
        })
    }
}

fn text_arg<'v>(map: &'v Map<String, Value>, key: &str) -> Step<Option<&'v str>> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(Failure::new(format!("'{key}' must be a string."))),
    }
}

fn bool_arg(map: &Map<String, Value>, key: &str) -> Step<bool> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(Value::String(text)) if text.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(text)) if text.eq_ignore_ascii_case("false") => Ok(false),
        Some(_) => Err(Failure::new(format!("'{key}' must be a boolean."))),
    }
}

/// Internal result of a step: `Err` carries the error sentence plus optional extra fields.
type Step<T> = Result<T, Failure>;

/// A refused or failed call, rendered as `{success: false, error, ...extra}`.
#[derive(Debug)]
struct Failure {
    error: String,
    extra: Option<(&'static str, Value)>,
}

impl Failure {
    fn new(error: impl Into<String>) -> Self {
        Self {
            error: error.into(),
            extra: None,
        }
    }

    fn with(mut self, key: &'static str, value: Value) -> Self {
        self.extra = Some((key, value));
        self
    }

    fn into_outcome(self) -> ManageOutcome {
        let mut result = json!({"success": false, "error": self.error});
        if let (Some((key, value)), Some(map)) = (self.extra, result.as_object_mut()) {
            map.insert(key.to_owned(), value);
        }
        ManageOutcome {
            result,
            changed: None,
        }
    }
}

impl From<String> for Failure {
    fn from(error: String) -> Self {
        Self::new(error)
    }
}

/// A successful outcome recording the change.
fn success(result: Value, name: &str, dir: PathBuf, action: SkillAction) -> ManageOutcome {
    ManageOutcome {
        result,
        changed: Some(ChangedSkill {
            name: name.to_owned(),
            dir,
            action,
        }),
    }
}
