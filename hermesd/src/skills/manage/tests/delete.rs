//! Tests for `delete` and for the Review caller's write guards.

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::json;

use super::super::locate::check_delete_target;
use super::{Env, ManageRoots, SkillAction, err, ok, skill_md};

#[test]
fn delete_removes_tree_and_empty_category() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "cat/old");
    fs::create_dir_all(dir.join("references")).unwrap();
    fs::write(dir.join("references/a.md"), "x").unwrap();
    let out = env.call(json!({"action": "delete", "name": "old"}));
    assert_eq!(ok(&out)["message"], "Skill 'old' deleted.");
    let changed = out.changed.unwrap();
    assert_eq!(
        (changed.action, changed.dir),
        (SkillAction::Delete, dir.clone())
    );
    assert!(!dir.exists() && !env.home.join("cat").exists());
    assert!(env.home.is_dir());
}

#[test]
fn delete_keeps_non_empty_category_and_root() {
    let env = Env::new();
    env.add_skill(&env.ext, "a");
    let sibling = env.add_skill(&env.home, "cat/sibling");
    env.add_skill(&env.home, "cat/gone");
    ok(&env.call(json!({"action": "delete", "name": "gone"})));
    assert!(sibling.join("SKILL.md").is_file());
    ok(&env.call(json!({"action": "delete", "name": "a"})));
    assert!(env.ext.is_dir());
}

#[test]
fn delete_checks_absorbed_into() {
    let env = Env::new();
    env.add_skill(&env.home, "part");
    env.add_skill(&env.ext, "umbrella");
    let e = err(&env.call(json!({"action": "delete", "name": "part", "absorbed_into": "nowhere"})));
    assert!(
        e.starts_with("absorbed_into='nowhere' does not exist"),
        "{e}"
    );
    let e = err(&env.call(json!({"action": "delete", "name": "part", "absorbed_into": "part"})));
    assert!(e.contains("cannot equal"), "{e}");
    assert!(env.home.join("part/SKILL.md").is_file());
    let out = env.call(json!({"action": "delete", "name": "part", "absorbed_into": " umbrella "}));
    assert_eq!(
        ok(&out)["message"],
        "Skill 'part' deleted. Content absorbed into 'umbrella'."
    );
}

#[test]
fn delete_of_unknown_skill_is_not_found() {
    let env = Env::new();
    assert!(err(&env.call(json!({"action": "delete", "name": "ghost"}))).contains("not found"));
}

#[test]
fn delete_refuses_symlinked_skill_dir() {
    let env = Env::new();
    let real = env.add_skill(&env.outside(), "linked");
    symlink(&real, env.home.join("linked")).unwrap();
    let e = err(&env.call(json!({"action": "delete", "name": "linked"})));
    assert!(e.contains("is a symlink"), "{e}");
    assert!(real.join("SKILL.md").is_file());
    assert!(env.home.join("linked").exists());
}

#[test]
fn delete_refuses_a_skills_root() {
    let mut env = Env::new();
    let nested_root = env.add_skill(&env.ext, "rooty");
    env.roots = vec![env.home.clone(), nested_root.clone(), env.ext.clone()];
    let e = err(&env.call(json!({"action": "delete", "name": "rooty"})));
    assert!(e.contains("skills root itself"), "{e}");
    assert!(nested_root.join("SKILL.md").is_file());
}

#[test]
fn delete_target_outside_roots_is_refused() {
    let env = Env::new();
    let stray = env.add_skill(&env.outside(), "stray");
    let e = check_delete_target(&stray, &env.manage_roots()).unwrap_err();
    assert!(
        e.contains("does not resolve inside any known skills root"),
        "{e}"
    );
    let inside = env.add_skill(&env.home, "fine");
    let roots = ManageRoots {
        home_skills: &env.home,
        roots: &[],
    };
    assert!(check_delete_target(&inside, &roots).is_ok());
}

#[test]
fn review_may_not_touch_skills_it_did_not_create() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "users");
    fs::create_dir_all(dir.join("references")).unwrap();
    fs::write(dir.join("references/a.md"), "x").unwrap();
    let before = fs::read_to_string(dir.join("SKILL.md")).unwrap();
    let calls = [
        json!({"action": "edit", "name": "users", "content": skill_md("users", "New.\n")}),
        json!({"action": "patch", "name": "users", "old_string": "Step", "new_string": "S"}),
        json!({"action": "write_file", "name": "users", "file_path": "references/b.md",
            "file_content": "x"}),
        json!({"action": "remove_file", "name": "users", "file_path": "references/a.md"}),
        json!({"action": "delete", "name": "users", "absorbed_into": "users2"}),
    ];
    for args in calls {
        let e = err(&env.review(args.clone(), false));
        assert!(e.starts_with("Refusing background review"), "{args}: {e}");
        assert!(e.contains("'users'"), "{e}");
    }
    assert_eq!(fs::read_to_string(dir.join("SKILL.md")).unwrap(), before);
    assert!(dir.join("references/a.md").is_file() && !dir.join("references/b.md").exists());
}

#[test]
fn review_may_change_agent_created_skills() {
    let env = Env::new();
    let out = env.review(
        json!({"action": "create", "name": "learned", "content": skill_md("learned", "A.\n")}),
        false,
    );
    ok(&out);
    let out = env.review(
        json!({"action": "patch", "name": "learned", "old_string": "A.", "new_string": "B."}),
        true,
    );
    ok(&out);
    assert!(
        fs::read_to_string(env.home.join("learned/SKILL.md"))
            .unwrap()
            .contains("B.")
    );
}

#[test]
fn review_delete_requires_existing_absorbed_into() {
    let env = Env::new();
    env.add_skill(&env.home, "dup");
    env.add_skill(&env.home, "main");
    for args in [
        json!({"action": "delete", "name": "dup"}),
        json!({"action": "delete", "name": "dup", "absorbed_into": ""}),
        json!({"action": "delete", "name": "dup", "absorbed_into": "  "}),
    ] {
        let e = err(&env.review(args, true));
        assert!(e.contains("Pass absorbed_into=<existing skill>"), "{e}");
    }
    let e = err(&env.review(
        json!({"action": "delete", "name": "dup", "absorbed_into": "missing"}),
        true,
    ));
    assert!(e.contains("does not exist"), "{e}");
    assert!(env.home.join("dup/SKILL.md").is_file());
    ok(&env.review(
        json!({"action": "delete", "name": "dup", "absorbed_into": "main"}),
        true,
    ));
    assert!(!env.home.join("dup").exists());
}

#[test]
fn agent_may_delete_without_absorbed_into() {
    let env = Env::new();
    env.add_skill(&env.home, "prune");
    ok(&env.call(json!({"action": "delete", "name": "prune", "absorbed_into": ""})));
}
