//! Tests of replace mode and V4A mode on real files in a temp directory.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::json;

use super::super::{patch_replace, patch_v4a};

/// Paths of a patch resolved against `base`, as the tool does (without the symlinks).
fn under(base: &Path) -> impl Fn(&str) -> PathBuf + '_ {
    move |p| crate::policy::paths::absolute(Path::new(p), base)
}

fn write(dir: &Path, name: &str, content: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, content).unwrap();
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap()
}

fn mode(path: &Path) -> u32 {
    fs::metadata(path).unwrap().permissions().mode() & 0o777
}

fn no_temp_files_left(dir: &Path) {
    for entry in fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name();
        assert!(
            !name.to_string_lossy().contains("hermes-tmp"),
            "left {name:?}"
        );
    }
}

#[test]
fn replace_mode_writes_and_reports_a_diff() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.py", "def f():\n    return 1\n");
    let path = dir.path().join("a.py");
    let result = patch_replace(&path, "return 1", "return 2", false);
    assert_eq!(result["success"], json!(true), "{result}");
    assert_eq!(read(dir.path(), "a.py"), "def f():\n    return 2\n");
    let shown = path.display().to_string();
    assert_eq!(result["files_modified"], json!([shown]));
    let diff = result["diff"].as_str().unwrap();
    assert!(diff.starts_with(&format!("--- a/{shown}\n+++ b/{shown}\n@@ -1,2 +1,2 @@\n")));
    assert!(diff.contains("\n-    return 1\n+    return 2\n"));
    no_temp_files_left(dir.path());
}

#[test]
fn replace_mode_failures_leave_the_file_alone() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "one\ntwo\none\n");
    let path = dir.path().join("a.txt");
    let ambiguous = patch_replace(&path, "one", "1", false);
    assert_eq!(ambiguous["success"], json!(false));
    assert!(
        ambiguous["error"]
            .as_str()
            .unwrap()
            .starts_with("Found 2 matches")
    );
    let missing = patch_replace(&path, "zzzz qqqq", "1", false);
    assert!(
        missing["error"]
            .as_str()
            .unwrap()
            .starts_with("Could not find a match")
    );
    assert!(missing["_hint"].as_str().unwrap().contains("read_file"));
    assert_eq!(read(dir.path(), "a.txt"), "one\ntwo\none\n");
    let all = patch_replace(&path, "one", "1", true);
    assert_eq!(all["success"], json!(true));
    assert_eq!(read(dir.path(), "a.txt"), "1\ntwo\n1\n");
    let absent = patch_replace(&dir.path().join("nope.txt"), "a", "b", false);
    assert!(
        absent["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to read file: ")
    );
}

#[test]
fn replace_mode_keeps_crlf_bom_and_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("win.txt");
    fs::write(&path, "\u{feff}alpha\r\nbeta\r\ngamma\r\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
    let result = patch_replace(&path, "beta\ngamma", "BETA\nGAMMA\ndelta", false);
    assert_eq!(result["success"], json!(true), "{result}");
    assert_eq!(
        read(dir.path(), "win.txt"),
        "\u{feff}alpha\r\nBETA\r\nGAMMA\r\ndelta\r\n"
    );
    assert_eq!(mode(&path), 0o751);
    assert!(!result["diff"].as_str().unwrap().contains('\r'));
}

#[test]
fn v4a_add_update_delete_and_move() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    write(base, "src/lib.rs", "fn a() {}\nfn b() {\n    1\n}\n");
    write(base, "old.txt", "bye\n");
    write(base, "mv.txt", "moving\n");
    let patch = "*** Begin Patch\n*** Update File: src/lib.rs\n@@ fn b() {\n fn b() {\n-    1\n+    2\n }\n*** Add File: docs/new.md\n+# Title\n+body\n*** Delete File: old.txt\n*** Move File: mv.txt -> moved/mv.txt\n*** End Patch";
    let result = patch_v4a(&under(base), patch);
    assert_eq!(result["success"], json!(true), "{result}");
    assert_eq!(read(base, "src/lib.rs"), "fn a() {}\nfn b() {\n    2\n}\n");
    assert_eq!(read(base, "docs/new.md"), "# Title\nbody\n");
    assert!(!base.join("old.txt").exists());
    assert!(!base.join("mv.txt").exists());
    assert_eq!(read(base, "moved/mv.txt"), "moving\n");
    assert_eq!(
        result["files_modified"],
        json!(["src/lib.rs", "mv.txt -> moved/mv.txt"])
    );
    assert_eq!(result["files_created"], json!(["docs/new.md"]));
    assert_eq!(result["files_deleted"], json!(["old.txt"]));
    let diff = result["diff"].as_str().unwrap();
    assert!(diff.contains("--- a/src/lib.rs\n+++ b/src/lib.rs\n"));
    assert!(diff.contains("-    1\n+    2\n"));
    assert!(diff.contains("--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1,2 @@\n+# Title\n+body\n"));
    assert!(diff.contains("--- a/old.txt\n+++ /dev/null\n"));
    assert!(diff.contains("# Moved: mv.txt -> moved/mv.txt"));
    no_temp_files_left(base);
}

#[test]
fn v4a_update_with_move_to_keeps_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    write(base, "run.sh", "#!/bin/sh\necho one\n");
    fs::set_permissions(base.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    let patch = "*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n-echo one\n+echo two\n*** End Patch";
    let result = patch_v4a(&under(base), patch);
    assert_eq!(result["success"], json!(true), "{result}");
    assert!(!base.join("run.sh").exists());
    assert_eq!(read(base, "bin/run.sh"), "#!/bin/sh\necho two\n");
    assert_eq!(mode(&base.join("bin/run.sh")), 0o755);
    assert_eq!(result["files_modified"], json!(["run.sh -> bin/run.sh"]));
}

#[test]
fn v4a_failing_hunk_changes_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    write(base, "a.txt", "alpha\n");
    write(base, "b.txt", "beta\n");
    write(base, "c.txt", "gamma\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-alpha\n+ALPHA\n*** Add File: d.txt\n+delta\n*** Delete File: c.txt\n*** Update File: b.txt\n@@ nowhere\n-no such line at all\n+x\n*** End Patch";
    let result = patch_v4a(&under(base), patch);
    assert_eq!(result["success"], json!(false));
    let error = result["error"].as_str().unwrap();
    assert!(error.starts_with("Patch validation failed (no files were modified):\n  • b.txt: hunk 1 'nowhere' (patch line 9) not found — Could not find"), "{error}");
    assert_eq!(read(base, "a.txt"), "alpha\n");
    assert_eq!(read(base, "b.txt"), "beta\n");
    assert_eq!(read(base, "c.txt"), "gamma\n");
    assert!(!base.join("d.txt").exists());
    no_temp_files_left(base);
}

#[test]
fn v4a_reports_missing_files_and_parse_errors() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    write(base, "exists.txt", "x\n");
    let patch = "*** Begin Patch\n*** Delete File: ghost.txt\n*** Move File: ghost2.txt -> exists.txt\n*** End Patch";
    let error = patch_v4a(&under(base), patch)["error"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        error.contains("  • ghost.txt: file not found for deletion"),
        "{error}"
    );
    assert!(error.contains("  • exists.txt: destination already exists — move would overwrite"));
    assert!(error.contains("  • ghost2.txt: source file not found for move"));
    let parse = patch_v4a(&under(base), "*** Begin Patch\nbogus\n");
    assert_eq!(parse["success"], json!(false));
    assert!(
        parse["error"]
            .as_str()
            .unwrap()
            .starts_with("Failed to parse patch: line 2: ")
    );
    let inert = patch_v4a(
        &under(base),
        "*** Begin Patch\n*** Update File: exists.txt\n x\n*** End Patch",
    );
    assert!(
        inert["error"]
            .as_str()
            .unwrap()
            .contains("Patch contains no changes")
    );
}

#[test]
fn v4a_keeps_crlf_and_applies_hunks_in_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    fs::write(base.join("w.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: w.txt\n-one\n+ONE\n two\n*** Update File: w.txt\n@@ two\n+inserted\n*** End Patch";
    let result = patch_v4a(&under(base), patch);
    assert_eq!(result["success"], json!(true), "{result}");
    assert_eq!(
        fs::read_to_string(base.join("w.txt")).unwrap(),
        "ONE\r\ntwo\r\ninserted\r\nthree\r\n"
    );
}

#[test]
fn v4a_resolves_absolute_paths_and_writes_through_symlinks() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    write(base, "real.txt", "old\n");
    std::os::unix::fs::symlink(base.join("real.txt"), base.join("link.txt")).unwrap();
    let other = tempfile::tempdir().unwrap();
    let patch = format!(
        "*** Begin Patch\n*** Update File: {}\n-old\n+new\n*** End Patch",
        base.join("link.txt").display()
    );
    let result = patch_v4a(&under(other.path()), &patch);
    assert_eq!(result["success"], json!(true), "{result}");
    assert!(
        fs::symlink_metadata(base.join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(read(base, "real.txt"), "new\n");
}

#[test]
fn v4a_hint_disambiguates_and_addition_only_hunks_insert() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path();
    let filler = "# padding line\n".repeat(50);
    write(
        base,
        "m.py",
        &format!("def a():\n    return None\n{filler}def b():\n    return None\n"),
    );
    let patch = "*** Begin Patch\n*** Update File: m.py\n@@ def b():\n-    return None\n+    return 1\n@@ def a():\n+    # first\n*** End Patch";
    let result = patch_v4a(&under(base), patch);
    assert_eq!(result["success"], json!(true), "{result}");
    assert_eq!(
        read(base, "m.py"),
        format!("def a():\n    # first\n    return None\n{filler}def b():\n    return 1\n")
    );
    let appended = patch_v4a(
        &under(base),
        "*** Begin Patch\n*** Update File: m.py\n@@\n+# tail\n*** End Patch",
    );
    assert_eq!(appended["success"], json!(true), "{appended}");
    assert!(read(base, "m.py").ends_with("    return 1\n# tail\n"));
    let ambiguous = patch_v4a(
        &under(base),
        "*** Begin Patch\n*** Update File: m.py\n@@ padding\n+x\n*** End Patch",
    );
    let error = ambiguous["error"].as_str().unwrap();
    assert!(
        error.contains(
            "m.py: addition-only hunk context hint 'padding' is ambiguous (50 occurrences)"
        ),
        "{error}"
    );
}
