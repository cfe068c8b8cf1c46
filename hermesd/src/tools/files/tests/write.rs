//! `write_file` tests: directories, atomic replace, preserved mode, endings.

use std::fs;
use std::os::unix::fs::PermissionsExt;

use crate::tools::files::read::read_file;
use crate::tools::files::write::write_file;

fn leftover_temp_files(dir: &std::path::Path) -> Vec<String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".hermes-tmp"))
        .collect()
}

#[test]
fn creates_parent_directories_and_reports_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a/b/c.txt");
    let result = write_file(&path, "héllo\n");
    assert_eq!(result["bytes_written"], 7);
    assert_eq!(result["dirs_created"], true);
    assert_eq!(result["resolved_path"], path.to_str().unwrap());
    assert_eq!(result["files_modified"][0], path.to_str().unwrap());
    assert_eq!(fs::read_to_string(&path).unwrap(), "héllo\n");
    assert_eq!(write_file(&path, "again")["dirs_created"], false);
    assert_eq!(fs::read_to_string(&path).unwrap(), "again");
}

#[test]
fn overwrite_keeps_mode_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("secret.env");
    fs::write(&path, "OLD=1\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    let result = write_file(&path, "NEW=2\n");
    assert!(result.get("error").is_none(), "{result}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "NEW=2\n");
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o600
    );
    assert!(leftover_temp_files(dir.path()).is_empty());
}

#[test]
fn executable_bit_survives_rewrite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.sh");
    fs::write(&path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).unwrap();
    write_file(&path, "#!/bin/sh\necho hi\n");
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o7777,
        0o751
    );
}

#[test]
fn crlf_files_stay_crlf_and_bom_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("win.txt");
    fs::write(&path, "\u{feff}a\r\nb\r\n").unwrap();
    let result = write_file(&path, "x\ny\r\nz\n");
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "\u{feff}x\r\ny\r\nz\r\n"
    );
    assert_eq!(result["bytes_written"], 3 + 9);
    // A round trip through read_file hides the BOM and write_file restores it.
    assert_eq!(read_file(&path, 1, 10)["content"], "1|x\r\n2|y\r\n3|z\r");
}

#[test]
fn symlink_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("real.txt");
    let link = dir.path().join("link.txt");
    fs::write(&target, "old").unwrap();
    std::os::unix::fs::symlink("real.txt", &link).unwrap();
    let result = write_file(&link, "new");
    assert_eq!(result["resolved_path"], target.to_str().unwrap());
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(&target).unwrap(), "new");
}

#[test]
fn read_file_output_is_not_written_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("echo.txt");
    let result = write_file(&path, "1|first\n2|second\n3|third\n");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .starts_with("Refusing to write internal read_file display text")
    );
    assert!(!path.exists());
    // A single literal `1|x` line is ordinary content.
    assert!(write_file(&path, "1|value\n").get("error").is_none());
}

#[test]
fn failures_are_reported_with_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("file");
    fs::write(&blocker, "").unwrap();
    let result = write_file(&blocker.join("child.txt"), "x");
    let error = result["error"].as_str().unwrap();
    assert!(error.starts_with("Failed to write file: "), "{error}");
    assert!(error.contains("child.txt"), "{error}");
    assert_eq!(result["bytes_written"], 0);
    let on_dir = write_file(dir.path(), "x");
    assert!(on_dir["error"].as_str().unwrap().contains("is a directory"));
}
