//! Local files and directories named in a raw DevTools command (`browser_cdp`), confined to the
//! workspace: a file handed to a page (`DOM.setFileInputFiles`'s `files`,
//! `Input.dispatchDragEvent`'s `data.files`) is read by Chromium and given to the page's
//! scripts, a download directory (`Page.setDownloadBehavior`'s `downloadPath`) is written by
//! Chromium. Each path is resolved as the file tools resolve it (from the session's working
//! directory, `~` expanded, symlinks followed) and allowed only inside that directory and where
//! the path policy lets the agent read (files) or write (directories); a file must be a regular
//! file (a directory would hand the page every file below it). The command is sent with the
//! resolved paths, so what was judged is what Chromium opens.

use std::path::Path;

use serde_json::Value;

use crate::policy::paths::{PathPolicy, WriteVerdict};

/// Where a method names local paths: (JSON pointer of a list of files, of a directory).
fn places(method: &str) -> (Option<&'static str>, Option<&'static str>) {
    match method {
        "DOM.setFileInputFiles" => (Some("/files"), None),
        "Input.dispatchDragEvent" => (Some("/data/files"), None),
        "Page.setDownloadBehavior" => (None, Some("/downloadPath")),
        _ => (None, None),
    }
}

/// Whether `method` names local paths at all (such a method is allowed only through
/// [`confine_paths`]).
pub fn names_paths(method: &str) -> bool {
    places(method) != (None, None)
}

fn inside(path: &Path, workspace: &Path) -> bool {
    path.starts_with(workspace)
}

/// `params` of `method` with every local path resolved and judged; the error names the first
/// path refused and why.
pub fn confine_paths(
    method: &str,
    mut params: Value,
    cwd: &Path,
    policy: &PathPolicy,
) -> Result<Value, String> {
    let (files, dir) = places(method);
    let workspace = policy.resolve(".", cwd);
    let outside = |shown: &str, real: &Path| {
        format!(
            "{method}: {shown} ({}) is outside the workspace {}; browser_cdp hands the page only \
             files in the session's working directory",
            real.display(),
            workspace.display()
        )
    };
    if let Some(pointer) = files
        && let Some(list) = params.pointer_mut(pointer)
    {
        let Some(list) = list.as_array_mut() else {
            return Err(format!("{method}: {pointer} must be a list of paths"));
        };
        for entry in list.iter_mut() {
            let Some(text) = entry.as_str() else {
                return Err(format!("{method}: {pointer} must be a list of paths"));
            };
            let real = policy.resolve(text, cwd);
            if !inside(&real, &workspace) {
                return Err(outside(text, &real));
            }
            policy
                .check_read(&real)
                .map_err(|why| format!("{method}: {why}"))?;
            // A directory would hand the page every file below it, unjudged.
            if !real.is_file() {
                return Err(format!(
                    "{method}: {text} ({}) is not a file; browser_cdp hands the page single files",
                    real.display()
                ));
            }
            *entry = Value::String(real.display().to_string());
        }
    }
    if let Some(pointer) = dir
        && let Some(entry) = params.pointer_mut(pointer)
    {
        let Some(text) = entry.as_str() else {
            return Err(format!("{method}: {pointer} must be a path"));
        };
        let real = policy.resolve(text, cwd);
        if !inside(&real, &workspace) {
            return Err(outside(text, &real));
        }
        if policy.check_write(&real.join("download")) != WriteVerdict::Allowed {
            return Err(format!(
                "{method}: {} is a protected place; downloads go to the workspace",
                real.display()
            ));
        }
        *entry = Value::String(real.display().to_string());
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Fixture {
        _root: tempfile::TempDir,
        policy: PathPolicy,
        workspace: std::path::PathBuf,
        user: std::path::PathBuf,
    }

    fn fixture() -> Fixture {
        let root = tempfile::tempdir().unwrap();
        let user = root.path().join("home");
        let hermes = user.join(".hermes");
        let workspace = user.join("project");
        std::fs::create_dir_all(&hermes).unwrap();
        std::fs::create_dir_all(workspace.join("out")).unwrap();
        std::fs::write(hermes.join(".env"), "KEY=x").unwrap();
        std::fs::write(workspace.join("photo.png"), "png").unwrap();
        std::fs::write(workspace.join(".env"), "KEY=y").unwrap();
        std::fs::write(user.join("notes.txt"), "n").unwrap();
        std::os::unix::fs::symlink(hermes.join(".env"), workspace.join("innocent.png")).unwrap();
        std::os::unix::fs::symlink(user.join("notes.txt"), workspace.join("notes.png")).unwrap();
        Fixture {
            policy: PathPolicy::new(&hermes, Some(&user)),
            workspace: std::fs::canonicalize(&workspace).unwrap(),
            user,
            _root: root,
        }
    }

    fn run(f: &Fixture, method: &str, params: Value) -> Result<Value, String> {
        confine_paths(method, params, &f.workspace, &f.policy)
    }

    #[test]
    fn files_in_the_workspace_are_handed_over_resolved() {
        let f = fixture();
        let sent = run(
            &f,
            "DOM.setFileInputFiles",
            json!({"files": ["photo.png"], "nodeId": 3}),
        )
        .unwrap();
        assert_eq!(
            sent["files"][0],
            f.workspace.join("photo.png").display().to_string()
        );
        assert_eq!(sent["nodeId"], 3);
        let dragged =
            json!({"type": "drop", "x": 1, "y": 1, "data": {"items": [], "files": ["photo.png"]}});
        assert!(run(&f, "Input.dispatchDragEvent", dragged).is_ok());
        let no_files = json!({"type": "dragEnter", "x": 1, "y": 1, "data": {"items": []}});
        assert!(run(&f, "Input.dispatchDragEvent", no_files).is_ok());
        let inside = json!({"behavior": "allow", "downloadPath": "out"});
        assert!(run(&f, "Page.setDownloadBehavior", inside).is_ok());
    }

    #[test]
    fn a_directory_is_not_handed_over_as_a_file() {
        // A directory input would hand the page every file below it, `.env` included.
        let f = fixture();
        for files in [
            json!(["."]),
            json!(["out"]),
            json!([f.workspace.display().to_string()]),
        ] {
            let params = json!({"files": files, "nodeId": 3});
            let refused = run(&f, "DOM.setFileInputFiles", params).unwrap_err();
            assert!(refused.contains("not a file"), "{refused}");
            let dragged =
                json!({"type": "drop", "x": 1, "y": 1, "data": {"items": [], "files": files}});
            assert!(run(&f, "Input.dispatchDragEvent", dragged).is_err());
        }
    }

    #[test]
    fn anything_outside_the_workspace_or_denied_is_refused() {
        let f = fixture();
        let secret = f.user.join(".hermes/.env").display().to_string();
        for (method, params) in [
            ("DOM.setFileInputFiles", json!({"files": [secret]})),
            (
                "DOM.setFileInputFiles",
                json!({"files": ["~/.hermes/.env"]}),
            ),
            ("DOM.setFileInputFiles", json!({"files": ["../notes.txt"]})),
            ("DOM.setFileInputFiles", json!({"files": ["innocent.png"]})),
            ("DOM.setFileInputFiles", json!({"files": ["notes.png"]})),
            ("DOM.setFileInputFiles", json!({"files": [".env"]})),
            ("DOM.setFileInputFiles", json!({"files": "photo.png"})),
            (
                "Input.dispatchDragEvent",
                json!({"type": "drop", "data": {"files": ["/etc/shadow"]}}),
            ),
            (
                "Page.setDownloadBehavior",
                json!({"behavior": "allow", "downloadPath": "/tmp"}),
            ),
            (
                "Page.setDownloadBehavior",
                json!({"behavior": "allow", "downloadPath": "~/.hermes"}),
            ),
        ] {
            assert!(
                run(&f, method, params.clone()).is_err(),
                "{method} {params}"
            );
        }
    }
}
