//! The `patch` tool's two modes on real files: replace mode (`old_string` -> `new_string` in one
//! file) and V4A mode (all-or-nothing multi-file patch), each returning Hermes' result JSON.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use similar::TextDiff;

use super::fsio::{self, FileText};
use super::fuzzy::{PatchError, fuzzy_replace};
use super::hunks::apply_hunks;
use super::v4a::{self, FileOp};
use super::workspace::Workspace;

/// Extra advice added when the text to replace was not found and no excerpt could be offered.
const NOT_FOUND_HINT: &str = "old_string not found. Use read_file to verify the current content, \
                              or search_files to locate the text.";

/// `{"success": false, "error": message}`.
fn failure(message: impl Into<String>) -> Value {
    json!({"success": false, "error": message.into()})
}

/// Unified diff (3 lines of context) between two texts.
fn unified_diff(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string()
}

/// Replaces `old` by `new` in the file at `path` (`~` expanded) using the fuzzy chain; the
/// match must be unique unless `replace_all`. Keeps the file's line endings, BOM and
/// permissions and writes atomically. Returns `{"success", "diff", "files_modified"}` or
/// `{"success": false, "error"[, "_hint"]}`.
pub fn patch_replace(path: &Path, old: &str, new: &str, replace_all: bool) -> Value {
    let shown = path.display().to_string();
    let file = match fsio::read_optional(path) {
        Ok(Some(bytes)) => match FileText::decode(bytes) {
            Some(file) => file,
            None => return failure(format!("Failed to read file: {shown} (not UTF-8 text)")),
        },
        Ok(None) => return failure(format!("Failed to read file: {shown} (no such file)")),
        Err(err) => return failure(format!("Failed to read file: {err}")),
    };
    let old = if file.is_crlf() {
        fsio::to_lf(old)
    } else {
        old.into()
    };
    let replaced = match fuzzy_replace(&file.text, &old, new, replace_all) {
        Ok(replaced) => replaced,
        Err(err) => return replace_failure(&err, &old, &file.text),
    };
    let new_text = file.normalize(&replaced.content, true);
    if let Err(err) = fsio::write_atomic(path, &file.encode(&new_text)) {
        return failure(format!("Failed to write changes: {err}"));
    }
    let mut result = json!({"success": true});
    let diff = unified_diff(
        &file.text,
        &new_text,
        &format!("a/{shown}"),
        &format!("b/{shown}"),
    );
    if !diff.is_empty() {
        result["diff"] = Value::String(diff);
    }
    result["files_modified"] = json!([shown]);
    result
}

fn replace_failure(err: &PatchError, old: &str, text: &str) -> Value {
    with_not_found_hint(failure(err.describe(old, text)))
}

/// Adds Hermes' `_hint` to a "Could not find" failure that carries no excerpt of the file.
fn with_not_found_hint(mut result: Value) -> Value {
    let needs_hint = result["error"].as_str().is_some_and(|error| {
        error.contains("Could not find") && !error.contains("Did you mean one of these sections?")
    });
    if needs_hint {
        result["_hint"] = Value::String(NOT_FOUND_HINT.to_owned());
    }
    result
}

/// What a planned V4A patch will report.
#[derive(Default)]
struct Outcome {
    diffs: Vec<String>,
    modified: Vec<String>,
    created: Vec<String>,
    deleted: Vec<String>,
    /// Operations or hunks that change something.
    changes: usize,
}

/// Applies a V4A patch to the files `resolve` maps its paths to (the tool resolves them as the
/// path policy does, so the rules judged the same files this writes).
/// Every operation is checked against the current files first; if any fails nothing is
/// written. Returns `{"success", "diff", "files_modified", "files_created", "files_deleted"}`
/// (empty fields omitted) or `{"success": false, "error"}`.
pub fn patch_v4a(resolve: &dyn Fn(&str) -> PathBuf, patch_text: &str) -> Value {
    let patch = match v4a::parse(patch_text) {
        Ok(patch) => patch,
        Err(err) => return failure(format!("Failed to parse patch: {err}")),
    };
    let mut workspace = Workspace::default();
    let mut outcome = Outcome::default();
    let mut errors = Vec::new();
    for op in &patch.ops {
        if let Err(mut op_errors) = plan(resolve, op, &mut workspace, &mut outcome) {
            errors.append(&mut op_errors);
        }
    }
    if errors.is_empty() && outcome.changes == 0 {
        errors.push("Patch contains no changes (only context lines were provided)".to_owned());
    }
    if !errors.is_empty() {
        return with_not_found_hint(failure(bulleted(
            "Patch validation failed (no files were modified):",
            &errors,
        )));
    }
    match workspace.commit() {
        Ok(()) => {}
        Err((err, true)) => {
            return failure(format!(
                "Failed to write changes (no files were modified): {err}"
            ));
        }
        Err((err, false)) => {
            return failure(bulleted(
                "Apply phase failed (state may be inconsistent — run `git diff` to assess):",
                &[err],
            ));
        }
    }
    let mut result = json!({"success": true});
    let diff = outcome.diffs.join("\n");
    if !diff.is_empty() {
        result["diff"] = Value::String(diff);
    }
    for (key, list) in [
        ("files_modified", outcome.modified),
        ("files_created", outcome.created),
        ("files_deleted", outcome.deleted),
    ] {
        if !list.is_empty() {
            result[key] = json!(list);
        }
    }
    result
}

fn bulleted(title: &str, items: &[String]) -> String {
    let mut out = title.to_owned();
    for item in items {
        out.push_str("\n  • ");
        out.push_str(item);
    }
    out
}

/// Reads `path` from the workspace as text.
fn read_text(workspace: &Workspace, path: &Path, shown: &str) -> Result<Option<FileText>, String> {
    match workspace
        .read(path)
        .map_err(|err| format!("{shown}: {err}"))?
    {
        None => Ok(None),
        Some(bytes) => FileText::decode(bytes)
            .map(Some)
            .ok_or_else(|| format!("{shown}: not UTF-8 text")),
    }
}

/// Plans one operation into `workspace`, recording its diff and file lists in `outcome`.
fn plan(
    resolve: &dyn Fn(&str) -> PathBuf,
    op: &FileOp,
    workspace: &mut Workspace,
    outcome: &mut Outcome,
) -> Result<(), Vec<String>> {
    match op {
        FileOp::Add { path, content, .. } => {
            let target = resolve(path);
            let existing = match workspace.read(&target) {
                Ok(bytes) => bytes.and_then(FileText::decode),
                Err(err) => return Err(vec![format!("{path}: {err}")]),
            };
            let (old_text, bytes) = match &existing {
                Some(file) => (
                    file.text.as_str(),
                    file.encode(&file.normalize(content, false)),
                ),
                None => ("", content.clone().into_bytes()),
            };
            let old_name = if existing.is_some() {
                format!("a/{path}")
            } else {
                "/dev/null".to_owned()
            };
            outcome.diffs.push(unified_diff(
                old_text,
                content,
                &old_name,
                &format!("b/{path}"),
            ));
            workspace.write(&target, bytes, None);
            outcome.created.push(path.clone());
            outcome.changes += 1;
        }
        FileOp::Delete { path, .. } => {
            let target = resolve(path);
            let bytes = match workspace.read(&target) {
                Ok(Some(bytes)) => bytes,
                Ok(None) => return Err(vec![format!("{path}: file not found for deletion")]),
                Err(err) => return Err(vec![format!("{path}: {err}")]),
            };
            let diff = FileText::decode(bytes)
                .map(|file| unified_diff(&file.text, "", &format!("a/{path}"), "/dev/null"))
                .unwrap_or_default();
            outcome.diffs.push(if diff.is_empty() {
                format!("# Deleted: {path}")
            } else {
                diff
            });
            workspace.remove(&target);
            outcome.deleted.push(path.clone());
            outcome.changes += 1;
        }
        FileOp::Update {
            path,
            move_to,
            hunks,
            ..
        } => {
            plan_update(resolve, path, move_to.as_deref(), hunks, workspace, outcome)?;
        }
    }
    Ok(())
}

fn plan_update(
    resolve: &dyn Fn(&str) -> PathBuf,
    path: &str,
    move_to: Option<&str>,
    hunks: &[v4a::Hunk],
    workspace: &mut Workspace,
    outcome: &mut Outcome,
) -> Result<(), Vec<String>> {
    let source = resolve(path);
    let destination = move_to.map(|dest| (dest, resolve(dest)));
    let mut errors = Vec::new();
    if let Some((dest, dest_path)) = &destination
        && dest_path != &source
        && workspace.exists(dest_path)
    {
        errors.push(format!(
            "{dest}: destination already exists — move would overwrite"
        ));
    }
    if hunks.is_empty() {
        // A pure move: copy the bytes as they are (binary files included).
        let Some((dest, dest_path)) = destination else {
            return Ok(());
        };
        match workspace.read(&source) {
            Ok(Some(_)) if !errors.is_empty() => return Err(errors),
            Ok(Some(bytes)) => {
                let permissions = workspace.permissions(&source);
                workspace.remove(&source);
                workspace.write(&dest_path, bytes, permissions);
                outcome.diffs.push(format!("# Moved: {path} -> {dest}"));
                outcome.modified.push(format!("{path} -> {dest}"));
                outcome.changes += 1;
                return Ok(());
            }
            Ok(None) => errors.push(format!("{path}: source file not found for move")),
            Err(err) => errors.push(format!("{path}: {err}")),
        }
        return Err(errors);
    }
    let file = match read_text(workspace, &source, path) {
        Ok(Some(file)) => file,
        Ok(None) => {
            errors.push(format!("{path}: file not found"));
            return Err(errors);
        }
        Err(err) => {
            errors.push(err);
            return Err(errors);
        }
    };
    let updated = match apply_hunks(path, &file.text, hunks) {
        Ok(updated) => updated,
        Err(mut hunk_errors) => {
            errors.append(&mut hunk_errors);
            return Err(errors);
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let new_text = file.normalize(&updated.text, false);
    let bytes = file.encode(&new_text);
    outcome.changes += updated.changes;
    match destination {
        Some((dest, dest_path)) if dest_path != source => {
            let permissions = workspace.permissions(&source);
            workspace.remove(&source);
            workspace.write(&dest_path, bytes, permissions);
            outcome.diffs.push(unified_diff(
                &file.text,
                &new_text,
                &format!("a/{path}"),
                &format!("b/{dest}"),
            ));
            outcome.modified.push(format!("{path} -> {dest}"));
            outcome.changes += 1;
        }
        _ => {
            let permissions = workspace.permissions(&source);
            workspace.write(&source, bytes, permissions);
            outcome.diffs.push(unified_diff(
                &file.text,
                &new_text,
                &format!("a/{path}"),
                &format!("b/{path}"),
            ));
            outcome.modified.push(path.to_owned());
        }
    }
    Ok(())
}
