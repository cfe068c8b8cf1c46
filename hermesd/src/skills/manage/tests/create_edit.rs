//! Tests for `create` and `edit`, including every SKILL.md validation error.

use std::fs;

use serde_json::json;

use super::{Env, ManageOutcome, SkillAction, err, hidden_entries, ok, skill_md};

fn create(env: &Env, name: &str, content: &str) -> ManageOutcome {
    env.call(json!({"action": "create", "name": name, "content": content}))
}

#[test]
fn create_writes_skill_md_in_home() {
    let env = Env::new();
    let content = skill_md("deploy-app", "1. Build.\n2. Ship.\n");
    let out = create(&env, "deploy-app", &content);
    let result = ok(&out);
    let dir = env.home.join("deploy-app");
    assert_eq!(fs::read_to_string(dir.join("SKILL.md")).unwrap(), content);
    assert_eq!(result["path"], "deploy-app");
    assert_eq!(result["message"], "Skill 'deploy-app' created.");
    assert_eq!(result["skill_md"], dir.join("SKILL.md").to_str().unwrap());
    let changed = out.changed.unwrap();
    assert_eq!(changed.name, "deploy-app");
    assert_eq!(changed.dir, dir);
    assert_eq!(changed.action, SkillAction::Create);
    assert!(hidden_entries(&dir).is_empty(), "temp file left behind");
}

#[test]
fn create_with_category_nests_the_skill() {
    let env = Env::new();
    let out = env.call(
        json!({"action": "create", "name": "k8s-debug", "category": " devops ",
        "content": skill_md("k8s-debug", "Check pods.\n")}),
    );
    let result = ok(&out);
    assert_eq!(result["path"], "devops/k8s-debug");
    assert_eq!(result["category"], "devops");
    assert!(env.home.join("devops/k8s-debug/SKILL.md").is_file());
}

#[test]
fn create_creates_missing_home_dir() {
    let env = Env::new();
    fs::remove_dir_all(&env.home).unwrap();
    ok(&create(&env, "first", &skill_md("first", "Body.\n")));
    assert!(env.home.join("first/SKILL.md").is_file());
}

#[test]
fn create_rejects_invalid_names() {
    let env = Env::new();
    let long = "a".repeat(65);
    let cases = [
        ("Upper", "Invalid skill name 'Upper'"),
        ("-dash", "Invalid skill name"),
        ("a/b", "Invalid skill name"),
        ("../x", "Invalid skill name"),
        ("sp ace", "Invalid skill name"),
        (long.as_str(), "exceeds 64 characters"),
        ("venv", "reserved"),
    ];
    for (name, expected) in cases {
        let e = err(&create(&env, name, &skill_md("x", "Body.\n")));
        assert!(e.contains(expected), "{name}: {e}");
    }
    assert_eq!(fs::read_dir(&env.home).unwrap().count(), 0);
    ok(&create(&env, &"b".repeat(64), &skill_md("b", "Body.\n")));
    ok(&create(&env, "v1.2_x-y", &skill_md("v", "Body.\n")));
}

#[test]
fn create_rejects_invalid_categories() {
    let env = Env::new();
    let long = "c".repeat(65);
    for category in ["a/b", "..", "Dev", "a\\b", long.as_str(), "node_modules"] {
        let out = env.call(
            json!({"action": "create", "name": "ok-name", "category": category,
            "content": skill_md("ok-name", "Body.\n")}),
        );
        let e = err(&out);
        assert!(e.contains("ategory"), "{category}: {e}");
    }
    assert_eq!(fs::read_dir(&env.home).unwrap().count(), 0);
}

#[test]
fn create_refuses_a_name_existing_in_any_root() {
    let env = Env::new();
    let existing = env.add_skill(&env.ext, "tools/shared");
    let e = err(&create(&env, "shared", &skill_md("shared", "Body.\n")));
    assert!(
        e.contains("already exists") && e.contains(existing.to_str().unwrap()),
        "{e}"
    );
    assert!(!env.home.join("shared").exists());
}

#[test]
fn create_requires_content() {
    let env = Env::new();
    let e = err(&env.call(json!({"action": "create", "name": "x"})));
    assert!(e.starts_with("content is required for 'create'"), "{e}");
    let e = err(&create(&env, "x", ""));
    assert!(e.starts_with("content is required for 'create'"), "{e}");
}

#[test]
fn every_frontmatter_error_is_reported() {
    let env = Env::new();
    let long_desc = "d".repeat(1025);
    let cases = [
        ("   \n", "Content cannot be empty."),
        ("name: x\n---\nbody", "must start with YAML frontmatter"),
        (
            "---\nname: x\ndescription: y\nbody without close",
            "not closed",
        ),
        ("---\nname: x\ndescription: y\n----\nbody", "not closed"),
        ("---\n- a\n- b\n---\nbody", "must be a YAML mapping"),
        ("---\n---\nbody", "must be a YAML mapping"),
        (
            "---\nname: [unclosed\n---\nbody",
            "YAML frontmatter parse error",
        ),
        ("---\ndescription: y\n---\nbody", "include 'name'"),
        ("---\nname: x\n---\nbody", "include 'description'"),
        (
            "---\nname: x\ndescription: y\n---\n  \n\n",
            "must have content after the frontmatter",
        ),
    ];
    for (content, expected) in cases {
        let e = err(&create(&env, "fm", content));
        assert!(e.contains(expected), "{content:?}: {e}");
    }
    let content = format!("---\nname: fm\ndescription: {long_desc}\n---\nbody");
    let e = err(&create(&env, "fm", &content));
    assert!(e.contains("Description exceeds 1024 characters"), "{e}");
    assert!(!env.home.join("fm").exists());

    let at_limit = format!(
        "---\nname: fm\ndescription: {}\n---\nbody",
        "d".repeat(1024)
    );
    ok(&create(&env, "fm", &at_limit));
}

#[test]
fn frontmatter_tolerates_bom_and_trailing_fence_spaces() {
    let env = Env::new();
    let content = "\u{feff}---\nname: bom\ndescription: y\n---  \n\nBody.\n";
    ok(&create(&env, "bom", content));
}

#[test]
fn frontmatter_name_need_not_match_argument() {
    // Hermes does not compare the frontmatter name with the `name` argument; neither do we.
    let env = Env::new();
    ok(&create(
        &env,
        "dir-name",
        &skill_md("Pretty Name", "Body.\n"),
    ));
    assert!(env.home.join("dir-name/SKILL.md").is_file());
}

#[test]
fn skill_md_character_limit() {
    let env = Env::new();
    let head = "---\nname: big\ndescription: y\n---\n";
    // Multi-byte characters: the limit counts characters, not bytes.
    let exact = format!("{head}{}", "é".repeat(100_000 - head.len()));
    ok(&create(&env, "big", &exact));
    let over = format!("{head}{}", "é".repeat(100_001 - head.len()));
    let e = err(&create(&env, "big2", &over));
    assert!(e.contains("100,001 characters (limit: 100,000)"), "{e}");
}

#[test]
fn create_refuses_category_symlink_leaving_home() {
    let env = Env::new();
    let outside = env.outside();
    std::os::unix::fs::symlink(&outside, env.home.join("evil")).unwrap();
    let out = env.call(
        json!({"action": "create", "name": "sneaky", "category": "evil",
        "content": skill_md("sneaky", "Body.\n")}),
    );
    let e = err(&out);
    assert!(e.contains("escapes"), "{e}");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
}

#[test]
fn create_refuses_path_occupied_by_a_file() {
    let env = Env::new();
    fs::write(env.home.join("taken"), "not a dir").unwrap();
    let e = err(&create(&env, "taken", &skill_md("taken", "Body.\n")));
    assert!(e.contains("already exists there"), "{e}");
    assert_eq!(
        fs::read_to_string(env.home.join("taken")).unwrap(),
        "not a dir"
    );
}

#[test]
fn edit_rewrites_skill_where_it_lives() {
    let env = Env::new();
    let dir = env.add_skill(&env.ext, "cat/remote");
    let content = skill_md("remote", "New steps.\n");
    let out = env.call(json!({"action": "edit", "name": "remote", "content": content}));
    let result = ok(&out);
    assert_eq!(result["message"], "Skill 'remote' updated (full rewrite).");
    assert_eq!(result["path"], dir.to_str().unwrap());
    assert_eq!(fs::read_to_string(dir.join("SKILL.md")).unwrap(), content);
    assert_eq!(out.changed.unwrap().action, SkillAction::Edit);
    assert!(hidden_entries(&dir).is_empty());
}

#[test]
fn invalid_edit_leaves_old_file_intact() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "keep");
    let before = fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let out = env.call(json!({"action": "edit", "name": "keep", "content": "no frontmatter"}));
    err(&out);
    assert_eq!(fs::read_to_string(dir.join("SKILL.md")).unwrap(), before);
    assert!(hidden_entries(&dir).is_empty());
}

#[test]
fn edit_of_unknown_skill_is_not_found() {
    let env = Env::new();
    let out = env.call(json!({"action": "edit", "name": "ghost",
        "content": skill_md("ghost", "Body.\n")}));
    let e = err(&out);
    assert!(e.starts_with("Skill 'ghost' not found."), "{e}");
}

#[test]
fn discovery_skips_excluded_and_support_dirs() {
    let env = Env::new();
    env.add_skill(&env.home, "node_modules/hidden");
    let owner = env.add_skill(&env.home, "owner");
    env.add_skill(&owner, "references/nested");
    ok(&create(&env, "hidden", &skill_md("hidden", "Body.\n")));
    ok(&create(&env, "nested", &skill_md("nested", "Body.\n")));
}
