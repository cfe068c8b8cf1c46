//! The listening socket: passed by systemd (LISTEN_FDS), or bound at the resolved path with mode
//! 0600 in a 0700 directory, replacing a stale socket only after a connect to it is refused.

use std::{
    fs,
    io::ErrorKind,
    os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, PermissionsExt},
    path::{Path, PathBuf},
};

use tokio::net::UnixListener;

/// Why the socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    #[error(
        "another daemon answers on {0}; stop it with `hermesctl daemon stop` or choose another --socket"
    )]
    InUse(String),
    #[error("{0} exists and is not a socket; remove it or choose another --socket")]
    NotASocket(String),
    #[error("cannot {verb} {path}: {source}")]
    Io {
        verb: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("systemd passed a socket that cannot be used: {0}")]
    Activation(String),
}

/// A listening socket and how we got it.
#[derive(Debug)]
pub struct Listener {
    pub listener: UnixListener,
    /// The path we bound (removed at exit if it is still ours); `None` under socket activation.
    pub bound: Option<BoundPath>,
    /// The path clients use, for status output.
    pub path: PathBuf,
}

/// A socket file we created, identified by inode so we never remove a successor's socket.
#[derive(Debug)]
pub struct BoundPath {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl BoundPath {
    /// Remove the socket file if it is still the one we bound.
    pub fn remove(&self) {
        if let Ok(meta) = fs::symlink_metadata(&self.path)
            && meta.dev() == self.dev
            && meta.ino() == self.ino
        {
            let _ = fs::remove_file(&self.path);
        }
    }
}

fn io_err(verb: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ListenError {
    let path = path.display().to_string();
    move |source| ListenError::Io { verb, path, source }
}

/// A socket passed by systemd, if any (LISTEN_PID/LISTEN_FDS name us).
pub fn from_systemd(path: &Path) -> Result<Option<Listener>, ListenError> {
    let mut fds = listenfd::ListenFd::from_env();
    if fds.len() == 0 {
        return Ok(None);
    }
    let std_listener = fds
        .take_unix_listener(0)
        .map_err(|e| ListenError::Activation(e.to_string()))?
        .ok_or_else(|| ListenError::Activation("fd 3 is not a Unix stream socket".into()))?;
    std_listener
        .set_nonblocking(true)
        .map_err(|e| ListenError::Activation(e.to_string()))?;
    let listener =
        UnixListener::from_std(std_listener).map_err(|e| ListenError::Activation(e.to_string()))?;
    let path = listener
        .local_addr()
        .ok()
        .and_then(|a| a.as_pathname().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    Ok(Some(Listener {
        listener,
        bound: None,
        path,
    }))
}

/// Bind `path`, creating its directory (0700) and recovering a stale socket.
pub async fn bind(path: &Path) -> Result<Listener, ListenError> {
    if let Some(dir) = path.parent()
        && !dir.exists()
    {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(io_err("create directory", dir))?;
    }
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_socket() => {
            match tokio::net::UnixStream::connect(path).await {
                Ok(_) => return Err(ListenError::InUse(path.display().to_string())),
                Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                    tracing::info!(socket = %path.display(), "removing stale socket");
                    fs::remove_file(path).map_err(io_err("remove stale socket", path))?;
                }
                Err(e) => return Err(io_err("probe socket", path)(e)),
            }
        }
        Ok(_) => return Err(ListenError::NotASocket(path.display().to_string())),
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(io_err("inspect", path)(e)),
    }
    let listener = UnixListener::bind(path).map_err(io_err("bind", path))?;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
        .map_err(io_err("chmod 0600", path))?;
    let meta = fs::symlink_metadata(path).map_err(io_err("inspect", path))?;
    Ok(Listener {
        listener,
        bound: Some(BoundPath {
            path: path.to_path_buf(),
            dev: meta.dev(),
            ino: meta.ino(),
        }),
        path: path.to_path_buf(),
    })
}
