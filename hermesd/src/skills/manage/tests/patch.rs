//! Tests for `patch`: uniqueness, replace_all, frontmatter protection, supporting files.

use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

use super::{Env, SkillAction, err, ok, skill_md};

/// A home skill `tips` whose body is `body`; returns its SKILL.md path.
fn setup(env: &Env, body: &str) -> PathBuf {
    let dir = env.add_skill(&env.home, "tips");
    let path = dir.join("SKILL.md");
    fs::write(&path, skill_md("tips", body)).unwrap();
    path
}

fn patch(env: &Env, extra: Value) -> super::ManageOutcome {
    let mut args = json!({"action": "patch", "name": "tips"});
    for (k, v) in extra.as_object().unwrap() {
        args[k] = v.clone();
    }
    env.call(args)
}

#[test]
fn unique_match_is_replaced() {
    let env = Env::new();
    let path = setup(&env, "Run make.\nThen test.\n");
    let out = patch(
        &env,
        json!({"old_string": "Run make.", "new_string": "Run make -j2."}),
    );
    let result = ok(&out);
    assert_eq!(
        result["message"],
        "Patched SKILL.md in skill 'tips' (1 replacement)."
    );
    assert_eq!(out.changed.unwrap().action, SkillAction::Patch);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        skill_md("tips", "Run make -j2.\nThen test.\n")
    );
}

#[test]
fn ambiguous_match_is_refused_and_file_kept() {
    let env = Env::new();
    let path = setup(&env, "step\nstep\n");
    let before = fs::read_to_string(&path).unwrap();
    let e = err(&patch(
        &env,
        json!({"old_string": "step", "new_string": "x"}),
    ));
    assert!(e.contains("Found 2 matches"), "{e}");
    assert_eq!(fs::read_to_string(&path).unwrap(), before);
}

#[test]
fn replace_all_replaces_every_match() {
    let env = Env::new();
    let path = setup(&env, "step\nstep\nstep\n");
    let out = patch(
        &env,
        json!({"old_string": "step", "new_string": "move", "replace_all": true}),
    );
    assert_eq!(
        ok(&out)["message"],
        "Patched SKILL.md in skill 'tips' (3 replacements)."
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        skill_md("tips", "move\nmove\nmove\n")
    );
}

#[test]
fn missing_text_returns_preview() {
    let env = Env::new();
    setup(&env, &"x".repeat(600));
    let out = patch(&env, json!({"old_string": "absent", "new_string": "y"}));
    let e = err(&out);
    assert!(e.contains("Could not find old_string in SKILL.md"), "{e}");
    let preview = out.result["file_preview"].as_str().unwrap();
    assert!(preview.starts_with("---\nname: tips") && preview.ends_with("..."));
    assert_eq!(preview.chars().count(), 503);
}

#[test]
fn patch_breaking_frontmatter_is_refused() {
    let env = Env::new();
    let path = setup(&env, "Body.\n");
    let before = fs::read_to_string(&path).unwrap();
    for (old, new) in [
        ("---\nname", "name"),
        ("description: Does tips things.\n", ""),
        ("Body.\n", ""),
    ] {
        let e = err(&patch(&env, json!({"old_string": old, "new_string": new})));
        assert!(
            e.starts_with("Patch would break SKILL.md structure:"),
            "{e}"
        );
        assert_eq!(fs::read_to_string(&path).unwrap(), before);
    }
    // The explicit SKILL.md spellings get the same protection.
    for file_path in ["SKILL.md", "tips/SKILL.md"] {
        let e = err(&patch(
            &env,
            json!({"old_string": "Body.\n", "new_string": "", "file_path": file_path}),
        ));
        assert!(e.starts_with("Patch would break"), "{file_path}: {e}");
    }
}

#[test]
fn empty_new_string_deletes_text() {
    let env = Env::new();
    let path = setup(&env, "Keep.\nDrop me.\n");
    ok(&patch(
        &env,
        json!({"old_string": "Drop me.\n", "new_string": ""}),
    ));
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        skill_md("tips", "Keep.\n")
    );
}

#[test]
fn required_arguments() {
    let env = Env::new();
    setup(&env, "Body.\n");
    let e = err(&patch(&env, json!({"new_string": "x"})));
    assert!(e.starts_with("old_string is required for 'patch'"), "{e}");
    let e = err(&patch(&env, json!({"old_string": "", "new_string": "x"})));
    assert!(e.starts_with("old_string is required for 'patch'"), "{e}");
    let e = err(&patch(&env, json!({"old_string": "Body"})));
    assert!(e.starts_with("new_string is required for 'patch'"), "{e}");
    let e = err(&patch(
        &env,
        json!({"old_string": "Body", "new_string": "Body"}),
    ));
    assert!(e.contains("identical"), "{e}");
}

#[test]
fn supporting_file_is_patched() {
    let env = Env::new();
    let skill = setup(&env, "Body.\n");
    let refs = skill.parent().unwrap().join("references");
    fs::create_dir_all(&refs).unwrap();
    fs::write(refs.join("api.md"), "GET /v1\n").unwrap();
    let out = patch(
        &env,
        json!({"old_string": "/v1", "new_string": "/v2", "file_path": "references/api.md"}),
    );
    assert_eq!(
        ok(&out)["message"],
        "Patched references/api.md in skill 'tips' (1 replacement)."
    );
    assert_eq!(
        fs::read_to_string(refs.join("api.md")).unwrap(),
        "GET /v2\n"
    );
}

#[test]
fn missing_supporting_file_is_named() {
    let env = Env::new();
    setup(&env, "Body.\n");
    let e = err(&patch(
        &env,
        json!({"old_string": "a", "new_string": "b", "file_path": "references/none.md"}),
    ));
    assert!(e.contains("File not found: references/none.md"), "{e}");
}

#[test]
fn patch_outside_allowed_dirs_is_refused() {
    let env = Env::new();
    let skill = setup(&env, "Body.\n");
    fs::write(skill.parent().unwrap().join("notes.txt"), "a").unwrap();
    let e = err(&patch(
        &env,
        json!({"old_string": "a", "new_string": "b", "file_path": "notes.txt"}),
    ));
    assert!(e.starts_with("File must be under one of"), "{e}");
}

#[test]
fn patch_of_unknown_skill_is_not_found() {
    let env = Env::new();
    let out =
        env.call(json!({"action": "patch", "name": "nope", "old_string": "a", "new_string": "b"}));
    assert!(err(&out).starts_with("Skill 'nope' not found."));
}
