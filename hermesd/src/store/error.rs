//! Store errors, each naming the database file or the operation, with what to do about it.

use rusqlite::ErrorCode;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "{path} is not a readable SQLite database ({detail}); stop hermesd, move the file aside \
         (mv {path} {path}.broken) and start again to create a fresh one, or restore a backup"
    )]
    Corrupt { path: String, detail: String },
    #[error(
        "cannot open {path}: {source}; check that it belongs to you and that its directory is writable"
    )]
    Unreadable {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "{path} was written by a newer hermesd (schema {found}, this build knows {known}); upgrade hermesd"
    )]
    TooNew {
        path: String,
        found: i64,
        known: i64,
    },
    #[error("cannot open {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
    #[error("database {context}: {source}")]
    Sql {
        context: &'static str,
        source: rusqlite::Error,
    },
    #[error("no session `{0}`")]
    SessionNotFound(String),
    /// A Python Hermes `state.db` to import is missing or is not one.
    #[error(
        "cannot import {path}: {detail}; point --home at the Python Hermes home directory \
         (the one holding state.db)"
    )]
    ImportSource { path: String, detail: String },
    /// A search query that cannot be run, with what is wrong in the user's words.
    #[error("{0}")]
    BadQuery(String),
    #[error("database pool for {path}: {message}")]
    Pool { path: String, message: String },
    #[error("database task failed: {0}")]
    Task(String),
    /// The operation does not apply to this session as it stands (nothing to undo, …).
    #[error("{0}")]
    Refused(String),
}

impl StoreError {
    /// Classify an error met while opening or migrating `path`.
    pub fn open(path: &std::path::Path, e: rusqlite::Error) -> Self {
        let path = path.display().to_string();
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Self::Corrupt {
                path,
                detail: e.to_string(),
            },
            Some(ErrorCode::CannotOpen | ErrorCode::PermissionDenied | ErrorCode::ReadOnly) => {
                Self::Unreadable {
                    path,
                    source: std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        e.to_string(),
                    ),
                }
            }
            _ => Self::Open { path, source: e },
        }
    }

    /// Wrap a rusqlite error with the operation that failed.
    pub fn sql(context: &'static str) -> impl FnOnce(rusqlite::Error) -> Self {
        move |source| Self::Sql { context, source }
    }
}
