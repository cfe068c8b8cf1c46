//! Tests that no file action can reach outside the skill directory.

use std::fs;
use std::os::unix::fs::symlink;

use serde_json::json;

use super::{Env, err, ok};

#[test]
fn traversal_and_absolute_paths_are_refused_for_every_file_action() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "safe");
    let victim = env.outside().join("victim.txt");
    fs::write(&victim, "original").unwrap();
    let victim_str = victim.to_str().unwrap().to_owned();
    let cases = [
        ("../x", "traversal"),
        ("references/../../x", "traversal"),
        ("references/../SKILL.md", "traversal"),
        ("./references/../../../outside/victim.txt", "traversal"),
        (victim_str.as_str(), "Absolute paths are not allowed"),
        ("/etc/passwd", "Absolute paths are not allowed"),
        ("~/x", "Absolute paths are not allowed"),
    ];
    for (path, expected) in cases {
        let write = env.call(json!({"action": "write_file", "name": "safe",
            "file_path": path, "file_content": "pwned"}));
        let remove = env.call(json!({"action": "remove_file", "name": "safe", "file_path": path}));
        let patch = env.call(json!({"action": "patch", "name": "safe", "file_path": path,
            "old_string": "original", "new_string": "pwned"}));
        for outcome in [write, remove, patch] {
            let e = err(&outcome);
            assert!(e.contains(expected), "{path}: {e}");
        }
    }
    assert_eq!(fs::read_to_string(&victim).unwrap(), "original");
    assert!(dir.join("SKILL.md").is_file());
    assert!(!env.home.join("x").exists() && !dir.parent().unwrap().join("x").exists());
}

#[test]
fn symlinked_support_dir_leaving_the_skill_is_refused() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "linked");
    let outside = env.outside();
    fs::write(outside.join("secret.md"), "original").unwrap();
    symlink(&outside, dir.join("references")).unwrap();

    let e = err(&env.call(json!({"action": "write_file", "name": "linked",
        "file_path": "references/new.md", "file_content": "x"})));
    assert!(e.contains("escapes"), "{e}");
    let e = err(&env.call(json!({"action": "write_file", "name": "linked",
        "file_path": "references/secret.md", "file_content": "x"})));
    assert!(e.contains("escapes"), "{e}");
    let e = err(&env.call(json!({"action": "patch", "name": "linked",
        "file_path": "references/secret.md", "old_string": "original", "new_string": "x"})));
    assert!(e.contains("escapes"), "{e}");
    let e = err(&env.call(json!({"action": "remove_file", "name": "linked",
        "file_path": "references/secret.md"})));
    assert!(e.contains("escapes"), "{e}");

    assert!(!outside.join("new.md").exists());
    assert_eq!(
        fs::read_to_string(outside.join("secret.md")).unwrap(),
        "original"
    );
}

#[test]
fn symlinked_file_leaving_the_skill_is_not_written_through() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "filelink");
    let victim = env.outside().join("victim.txt");
    fs::write(&victim, "original").unwrap();
    fs::create_dir_all(dir.join("assets")).unwrap();
    symlink(&victim, dir.join("assets/link.txt")).unwrap();

    let e = err(&env.call(json!({"action": "write_file", "name": "filelink",
        "file_path": "assets/link.txt", "file_content": "pwned"})));
    assert!(e.contains("escapes"), "{e}");
    let e = err(&env.call(json!({"action": "patch", "name": "filelink",
        "file_path": "assets/link.txt", "old_string": "original", "new_string": "pwned"})));
    assert!(e.contains("escapes"), "{e}");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "original");

    // remove_file removes the link itself, never its target.
    ok(
        &env.call(json!({"action": "remove_file", "name": "filelink",
        "file_path": "assets/link.txt"})),
    );
    assert!(fs::symlink_metadata(dir.join("assets/link.txt")).is_err());
    assert_eq!(fs::read_to_string(&victim).unwrap(), "original");
}

#[test]
fn dangling_symlink_is_refused() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "dangle");
    fs::create_dir_all(dir.join("assets")).unwrap();
    symlink(env.outside().join("nope"), dir.join("assets/ghost")).unwrap();
    let e = err(&env.call(json!({"action": "write_file", "name": "dangle",
        "file_path": "assets/ghost", "file_content": "x"})));
    assert!(e.contains("cannot be resolved"), "{e}");
    assert!(!env.outside().join("nope").exists());
}

#[test]
fn symlink_inside_the_skill_is_written_through() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "inner");
    fs::create_dir_all(dir.join("references")).unwrap();
    fs::write(dir.join("references/real.md"), "v1").unwrap();
    symlink(
        dir.join("references/real.md"),
        dir.join("references/alias.md"),
    )
    .unwrap();
    ok(&env.call(json!({"action": "write_file", "name": "inner",
        "file_path": "references/alias.md", "file_content": "v2"})));
    assert_eq!(
        fs::read_to_string(dir.join("references/real.md")).unwrap(),
        "v2"
    );
    assert!(
        fs::symlink_metadata(dir.join("references/alias.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
