//! Opening a Python Hermes `state.db` read-only, safely beside a running Python Hermes.

use std::{path::Path, time::Duration};

use rusqlite::{Connection, OpenFlags};

use super::{StoreError, source};

/// How long a read waits for Python's writer before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Open the `state.db` at `path` (or inside `path` when it is a directory, i.e. a Hermes home)
/// read-only. Works while Python Hermes has it open in WAL mode (readers never block its writer)
/// and fails with [`StoreError::ImportSource`] naming the file when it is missing, not SQLite, or
/// has no Hermes `sessions`/`messages` tables.
pub fn open_source(path: &Path) -> Result<Connection, StoreError> {
    let file = if path.is_dir() {
        path.join("state.db")
    } else {
        path.to_path_buf()
    };
    let fail = |detail: String| StoreError::ImportSource {
        path: file.display().to_string(),
        detail,
    };
    match std::fs::metadata(&file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(fail("no such file".into()));
        }
        Err(e) => return Err(fail(e.to_string())),
        Ok(meta) if !meta.is_file() => return Err(fail("not a regular file".into())),
        Ok(_) => {}
    }
    // The READ_ONLY flag is what a `file:…?mode=ro` URI asks for, without escaping the path.
    let conn = Connection::open_with_flags(
        &file,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| fail(source::unreadable(&e)))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .and_then(|()| conn.execute_batch("PRAGMA query_only = ON"))
        .map_err(|e| fail(source::unreadable(&e)))?;
    source::inspect(&conn)?;
    Ok(conn)
}
