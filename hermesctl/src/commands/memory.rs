//! `hermesctl memory show|add|rm|edit`: the built-in memory through the daemon, so every write
//! goes through the same checks (limits, the injection scan, the lock) as the agent's.

use std::io::Read;

use hermes_proto::pb;
use serde_json::{Value, json};

use crate::{
    cli::{MemoryCommand, MemoryTargetArg},
    connection,
    context::Context,
    error::CliError,
    output,
};

/// The line that separates entries in the editor.
const EDITOR_SEPARATOR: &str = "§";

fn target(arg: MemoryTargetArg) -> i32 {
    match arg {
        MemoryTargetArg::Memory => pb::MemoryTarget::Memory as i32,
        MemoryTargetArg::User => pb::MemoryTarget::User as i32,
    }
}

fn words_or_stdin(words: Vec<String>) -> Result<String, CliError> {
    if words.len() == 1 && words[0] == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| CliError::new(format!("cannot read the entry from stdin: {e}")))?;
        Ok(text)
    } else {
        Ok(words.join(" "))
    }
}

pub async fn run(ctx: &Context, command: MemoryCommand) -> Result<(), CliError> {
    let daemon = connection::connect(ctx).await?;
    let mut memory = daemon.memory();
    let changed = match command {
        MemoryCommand::Show { target: wanted } => {
            let stores = memory
                .get(pb::GetMemoryRequest {
                    target: wanted.map_or(0, target),
                })
                .await?
                .into_inner()
                .stores;
            if ctx.json {
                output::json(&Value::Array(stores.iter().map(store_json).collect()));
            } else {
                stores.iter().for_each(print_store);
            }
            return Ok(());
        }
        MemoryCommand::Add { target: t, text } => {
            memory
                .add(pb::AddMemoryRequest {
                    target: target(t),
                    content: words_or_stdin(text)?,
                })
                .await?
                .into_inner()
                .store
        }
        MemoryCommand::Rm { target: t, text } => {
            memory
                .remove(pb::RemoveMemoryRequest {
                    target: target(t),
                    old_text: text.join(" "),
                })
                .await?
                .into_inner()
                .store
        }
        MemoryCommand::Edit { target: t } => {
            let current = memory
                .get(pb::GetMemoryRequest { target: target(t) })
                .await?
                .into_inner()
                .stores
                .into_iter()
                .next()
                .ok_or_else(|| CliError::new("hermesd returned no memory store"))?;
            let Some(entries) = edit_entries(&current.entries)? else {
                output::line("no change");
                return Ok(());
            };
            memory
                .set(pb::SetMemoryRequest {
                    target: target(t),
                    entries,
                })
                .await?
                .into_inner()
                .store
        }
    };
    let store = changed.ok_or_else(|| CliError::new("hermesd returned no memory store"))?;
    if ctx.json {
        output::json(&store_json(&store));
    } else {
        let count = store.entries.len();
        output::line(format!(
            "{}: {count} {}, {}",
            file_name(&store),
            if count == 1 { "entry" } else { "entries" },
            usage(&store)
        ));
    }
    Ok(())
}

fn file_name(store: &pb::MemoryStore) -> &'static str {
    if store.target == pb::MemoryTarget::User as i32 {
        "USER.md"
    } else {
        "MEMORY.md"
    }
}

fn usage(store: &pb::MemoryStore) -> String {
    let percent = (store.chars * 100).checked_div(store.limit).unwrap_or(0);
    format!("{percent}% — {}/{} chars", store.chars, store.limit)
}

fn store_json(store: &pb::MemoryStore) -> Value {
    json!({
        "target": if store.target == pb::MemoryTarget::User as i32 { "user" } else { "memory" },
        "path": store.path,
        "entries": store.entries,
        "chars": store.chars,
        "limit": store.limit,
    })
}

fn print_store(store: &pb::MemoryStore) {
    output::line(format!(
        "{} [{}] {}",
        file_name(store),
        usage(store),
        store.path
    ));
    if store.entries.is_empty() {
        output::line("  (empty)");
    }
    for (i, entry) in store.entries.iter().enumerate() {
        let mut lines = entry.lines();
        output::line(format!(
            "{:>3}. {}",
            i + 1,
            lines.next().unwrap_or_default()
        ));
        for line in lines {
            output::line(format!("     {line}"));
        }
    }
}

/// Open the entries in `$VISUAL`/`$EDITOR` (vi when neither is set); `None` when unchanged.
fn edit_entries(entries: &[String]) -> Result<Option<Vec<String>>, CliError> {
    let original = entries.join(&format!("\n{EDITOR_SEPARATOR}\n"));
    let file = tempfile::Builder::new()
        .prefix("hermes-memory-")
        .suffix(".md")
        .tempfile()
        .map_err(|e| CliError::new(format!("cannot create a file to edit: {e}")))?;
    std::fs::write(file.path(), format!("{original}\n"))
        .map_err(|e| CliError::new(format!("cannot write {}: {e}", file.path().display())))?;
    let editor = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    // The editor value may carry arguments (`code --wait`): let the shell split it.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(file.path())
        .status()
        .map_err(|e| CliError::new(format!("cannot run the editor `{editor}`: {e}")))?;
    if !status.success() {
        return Err(CliError::new(format!(
            "the editor `{editor}` failed ({status}); memory is unchanged"
        )));
    }
    let edited = std::fs::read_to_string(file.path())
        .map_err(|e| CliError::new(format!("cannot read {}: {e}", file.path().display())))?;
    let entries: Vec<String> = edited
        .split(&format!("\n{EDITOR_SEPARATOR}\n"))
        .map(|e| e.trim().to_string())
        .filter(|e| !e.is_empty())
        .collect();
    if entries.join(&format!("\n{EDITOR_SEPARATOR}\n")) == original {
        return Ok(None);
    }
    Ok(Some(entries))
}
