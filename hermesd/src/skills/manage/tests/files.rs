//! Tests for `write_file` and `remove_file` (happy paths, limits, missing files).

use std::fs;

use serde_json::json;

use super::{Env, SkillAction, err, hidden_entries, ok};

fn write(env: &Env, name: &str, file_path: &str, data: &str) -> super::ManageOutcome {
    env.call(
        json!({"action": "write_file", "name": name, "file_path": file_path,
        "file_content": data}),
    )
}

fn remove(env: &Env, name: &str, file_path: &str) -> super::ManageOutcome {
    env.call(json!({"action": "remove_file", "name": name, "file_path": file_path}))
}

#[test]
fn write_file_creates_nested_file_and_overwrites() {
    let env = Env::new();
    let dir = env.add_skill(&env.ext, "ops");
    let out = write(&env, "ops", "scripts/tools/run.sh", "#!/bin/sh\necho hi\n");
    let result = ok(&out);
    let target = dir.join("scripts/tools/run.sh");
    assert_eq!(
        result["message"],
        "File 'scripts/tools/run.sh' written to skill 'ops'."
    );
    assert_eq!(result["path"], target.to_str().unwrap());
    let changed = out.changed.unwrap();
    assert_eq!(
        (changed.action, changed.dir),
        (SkillAction::WriteFile, dir.clone())
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "#!/bin/sh\necho hi\n");

    ok(&write(&env, "ops", "scripts/tools/run.sh", ""));
    assert_eq!(fs::read_to_string(&target).unwrap(), "");
    assert!(hidden_entries(target.parent().unwrap()).is_empty());
}

#[test]
fn write_file_keeps_existing_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let dir = env.add_skill(&env.home, "perm");
    let script = dir.join("scripts/go.sh");
    ok(&write(&env, "perm", "scripts/go.sh", "v1"));
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
    ok(&write(&env, "perm", "scripts/go.sh", "v2"));
    let mode = fs::metadata(&script).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o755);
}

#[test]
fn write_file_argument_errors() {
    let env = Env::new();
    env.add_skill(&env.home, "args");
    let e = err(&env.call(json!({"action": "write_file", "name": "args", "file_content": "x"})));
    assert!(
        e.starts_with("file_path is required for 'write_file'"),
        "{e}"
    );
    let e = err(&env.call(json!({"action": "write_file", "name": "args",
        "file_path": "references/a.md"})));
    assert_eq!(e, "file_content is required for 'write_file'.");
    let cases = [
        ("notes.md", "File must be under one of"),
        ("docs/a.md", "File must be under one of"),
        ("references", "not just a directory"),
        ("references/", "not just a directory"),
        ("SKILL.md", "SKILL.md"),
        ("args/SKILL.md", "SKILL.md"),
    ];
    for (path, expected) in cases {
        let e = err(&write(&env, "args", path, "x"));
        assert!(e.contains(expected), "{path}: {e}");
    }
}

#[test]
fn write_file_into_existing_directory_is_refused() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "dirs");
    fs::create_dir_all(dir.join("assets/img")).unwrap();
    let e = err(&write(&env, "dirs", "assets/img", "x"));
    assert!(e.contains("is a directory"), "{e}");
}

#[test]
fn supporting_file_size_limit_is_one_mebibyte() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "sized");
    ok(&write(
        &env,
        "sized",
        "assets/max.txt",
        &"a".repeat(1_048_576),
    ));
    let e = err(&write(
        &env,
        "sized",
        "assets/over.txt",
        &"a".repeat(1_048_577),
    ));
    assert!(
        e.contains("1,048,577 bytes (limit: 1,048,576 bytes / 1 MiB)"),
        "{e}"
    );
    assert!(!dir.join("assets/over.txt").exists());
}

#[test]
fn write_file_to_unknown_skill_suggests_create() {
    let env = Env::new();
    let e = err(&write(&env, "ghost", "references/a.md", "x"));
    assert!(
        e.contains("Skill 'ghost' not found") && e.contains("Create it first"),
        "{e}"
    );
}

#[test]
fn remove_file_deletes_and_prunes_empty_dir() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "rm");
    ok(&write(&env, "rm", "templates/t.md", "x"));
    let out = remove(&env, "rm", "templates/t.md");
    assert_eq!(
        ok(&out)["message"],
        "File 'templates/t.md' removed from skill 'rm'."
    );
    assert_eq!(out.changed.unwrap().action, SkillAction::RemoveFile);
    assert!(!dir.join("templates").exists());
    assert!(dir.join("SKILL.md").is_file());
}

#[test]
fn remove_missing_file_names_it_and_lists_files() {
    let env = Env::new();
    env.add_skill(&env.home, "miss");
    let out = remove(&env, "miss", "references/gone.md");
    assert_eq!(
        err(&out),
        "File 'references/gone.md' not found in skill 'miss'."
    );
    assert!(out.result["available_files"].is_null());

    ok(&write(&env, "miss", "references/here.md", "x"));
    let out = remove(&env, "miss", "references/gone.md");
    err(&out);
    assert_eq!(out.result["available_files"], json!(["references/here.md"]));
}

#[test]
fn remove_file_refuses_directories_and_skill_md() {
    let env = Env::new();
    let dir = env.add_skill(&env.home, "keepdir");
    fs::create_dir_all(dir.join("assets/sub")).unwrap();
    fs::write(dir.join("assets/sub/a"), "x").unwrap();
    assert!(err(&remove(&env, "keepdir", "assets/sub")).contains("is a directory"));
    assert!(err(&remove(&env, "keepdir", "SKILL.md")).contains("SKILL.md"));
    assert!(dir.join("SKILL.md").is_file() && dir.join("assets/sub/a").is_file());
    let e = err(&env.call(json!({"action": "remove_file", "name": "keepdir"})));
    assert_eq!(e, "file_path is required for 'remove_file'.");
}
