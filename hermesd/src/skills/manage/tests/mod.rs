//! Tests for `skill_manage`: shared fixtures plus dispatch and argument tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod create_edit;
mod delete;
mod files;
mod patch;
mod traversal;

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::{Caller, ManageOutcome, ManageRoots, SkillAction, skill_manage};

/// A temp HERMES_HOME-like layout: `home` (new skills) and `ext` (an external root).
struct Env {
    tmp: TempDir,
    home: PathBuf,
    ext: PathBuf,
    roots: Vec<PathBuf>,
}

impl Env {
    fn new() -> Self {
        let tmp = TempDir::new().unwrap();
        let home = tmp.path().join("home/skills");
        let ext = tmp.path().join("ext");
        fs::create_dir_all(&home).unwrap();
        fs::create_dir_all(&ext).unwrap();
        let roots = vec![home.clone(), ext.clone()];
        Self {
            tmp,
            home,
            ext,
            roots,
        }
    }

    /// A directory outside every root.
    fn outside(&self) -> PathBuf {
        let dir = self.tmp.path().join("outside");
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn manage_roots(&self) -> ManageRoots<'_> {
        ManageRoots {
            home_skills: &self.home,
            roots: &self.roots,
        }
    }

    fn call(&self, args: Value) -> ManageOutcome {
        skill_manage(&args, &self.manage_roots(), Caller::Agent, &|_| {
            panic!("Agent calls must not consult may_modify")
        })
    }

    fn review(&self, args: Value, may_modify: bool) -> ManageOutcome {
        skill_manage(&args, &self.manage_roots(), Caller::Review, &|_| may_modify)
    }

    /// Writes a valid skill at `root/rel` (last segment is the name) and returns its dir.
    fn add_skill(&self, root: &Path, rel: &str) -> PathBuf {
        let dir = root.join(rel);
        fs::create_dir_all(&dir).unwrap();
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        fs::write(dir.join("SKILL.md"), skill_md(&name, "Step 1: do it.\n")).unwrap();
        dir
    }
}

fn skill_md(name: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: Does {name} things.\n---\n{body}")
}

/// Asserts success and returns the result JSON.
fn ok(outcome: &ManageOutcome) -> &Value {
    assert_eq!(outcome.result["success"], true, "{}", outcome.result);
    assert!(outcome.changed.is_some());
    &outcome.result
}

/// Asserts a failure with no change recorded and returns the error text.
fn err(outcome: &ManageOutcome) -> String {
    assert_eq!(outcome.result["success"], false, "{}", outcome.result);
    assert!(outcome.changed.is_none());
    outcome.result["error"].as_str().unwrap().to_owned()
}

/// Names of entries in `dir` starting with '.' (left-over temp files).
fn hidden_entries(dir: &Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect()
}

#[test]
fn unknown_action_is_refused() {
    let env = Env::new();
    let e = err(&env.call(json!({"action": "rename", "name": "x"})));
    assert!(e.contains("Unknown action 'rename'"), "{e}");
}

#[test]
fn non_object_arguments_are_refused() {
    let env = Env::new();
    let e = err(&env.call(json!(["create"])));
    assert!(e.contains("JSON object"), "{e}");
}

#[test]
fn wrongly_typed_arguments_are_refused() {
    let env = Env::new();
    let e = err(&env.call(json!({"action": "create", "name": 5})));
    assert!(e.contains("'name' must be a string"), "{e}");
    let e = err(&env.call(json!({"action": "patch", "name": "x", "replace_all": 1})));
    assert!(e.contains("'replace_all' must be a boolean"), "{e}");
}

#[test]
fn missing_name_is_refused() {
    let env = Env::new();
    let e = err(&env.call(json!({"action": "delete"})));
    assert_eq!(e, "Skill name is required.");
}

#[test]
fn replace_all_accepts_string_true() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "rep");
    fs::write(dir.join("SKILL.md"), skill_md("rep", "foo one\nfoo two\n")).unwrap();
    let out = env.call(
        json!({"action": "patch", "name": "rep", "old_string": "foo",
        "new_string": "bar", "replace_all": "true"}),
    );
    ok(&out);
    let text = fs::read_to_string(dir.join("SKILL.md")).unwrap();
    assert!(text.contains("bar one\nbar two"));
}
