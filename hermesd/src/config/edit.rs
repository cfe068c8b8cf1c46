//! Edits of `config.yaml` the daemon makes for its clients (`Models.SetDefault`,
//! `Models.SetFallbacks`): dotted keys set through the comment-preserving editor, the file replaced
//! atomically, and the previous text kept so a change the daemon then rejects can be undone.

use std::path::{Path, PathBuf};

use hermes_proto::yaml_edit::{self, EditError};

/// Why an edit was not made.
#[derive(Debug, thiserror::Error)]
pub enum EditFailure {
    #[error("cannot {verb} {path}: {source}")]
    Io {
        verb: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Edit { path: PathBuf, source: EditError },
}

/// A written edit: the text the file had before.
#[derive(Debug)]
pub struct Applied {
    pub path: PathBuf,
    pub previous: String,
}

/// Set each `(dotted key, value)` in the file at `path` (blocking: call off the runtime).
pub fn apply(path: &Path, edits: &[(&str, serde_yaml::Value)]) -> Result<Applied, EditFailure> {
    let previous = yaml_edit::read_config(path).map_err(|source| EditFailure::Io {
        verb: "read",
        path: path.to_path_buf(),
        source,
    })?;
    let mut text = previous.clone();
    for (key, value) in edits {
        text = yaml_edit::set(&text, key, value).map_err(|source| EditFailure::Edit {
            path: path.to_path_buf(),
            source,
        })?;
    }
    write(path, &text)?;
    Ok(Applied {
        path: path.to_path_buf(),
        previous,
    })
}

/// Put the previous text back.
pub fn undo(applied: &Applied) -> Result<(), EditFailure> {
    write(&applied.path, &applied.previous)
}

fn write(path: &Path, text: &str) -> Result<(), EditFailure> {
    yaml_edit::write_atomically(path, text).map_err(|source| EditFailure::Io {
        verb: "write",
        path: path.to_path_buf(),
        source,
    })
}
