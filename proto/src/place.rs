//! Where a hermesd lives: its `HERMES_HOME` (profiles included), socket, pidfile and log directory.
//! Daemon and clients resolve these with the same functions, so they always meet.

use std::path::{Path, PathBuf};

use crate::env::Env;

/// Longest socket path the kernel accepts in `sockaddr_un` (108 bytes with the NUL).
const MAX_SOCKET_PATH: usize = 107;

/// Why a home or socket could not be resolved.
#[derive(Debug, thiserror::Error)]
pub enum PlaceError {
    #[error(
        "invalid profile name `{0}`: use lower-case letters, digits, `_` and `-` (at most 64, starting with a letter or digit)"
    )]
    BadProfile(String),
    #[error("cannot find the home directory: set HOME or HERMES_HOME")]
    NoHome,
    #[error(
        "socket path {0} is longer than {MAX_SOCKET_PATH} bytes; set a shorter one with --socket or HERMES_SOCKET"
    )]
    SocketPathTooLong(String),
}

/// The resolved home of one daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    pub dir: PathBuf,
    /// The profile name when the home is a profile (`default` for `~/.hermes`).
    pub profile: Option<String>,
}

impl Home {
    /// Resolve the home: `--home`, else a profile (`-p` then `HERMES_PROFILE`), else `HERMES_HOME`,
    /// else the sticky `~/.hermes/active_profile`, else `~/.hermes`.
    pub fn resolve(
        home_flag: Option<&Path>,
        profile_flag: Option<&str>,
        env: &Env,
    ) -> Result<Self, PlaceError> {
        if let Some(dir) = home_flag {
            return Ok(Self::from_dir(absolute(dir), env));
        }
        if let Some(name) = profile_flag.or_else(|| env.get("HERMES_PROFILE")) {
            return Self::profile(name, env);
        }
        if let Some(dir) = env.get("HERMES_HOME") {
            return Ok(Self::from_dir(absolute(Path::new(dir)), env));
        }
        let base = default_base(env)?;
        if let Ok(sticky) = std::fs::read_to_string(base.join("active_profile")) {
            let name = sticky.trim();
            if !name.is_empty() {
                return Self::profile(name, env);
            }
        }
        Ok(Self {
            dir: base,
            profile: Some("default".into()),
        })
    }

    /// The home of a named profile: `~/.hermes` for `default`, else `~/.hermes/profiles/<name>`.
    pub fn profile(name: &str, env: &Env) -> Result<Self, PlaceError> {
        if !valid_profile_name(name) {
            return Err(PlaceError::BadProfile(name.into()));
        }
        let base = default_base(env)?;
        let dir = if name == "default" {
            base
        } else {
            base.join("profiles").join(name)
        };
        Ok(Self {
            dir,
            profile: Some(name.into()),
        })
    }

    fn from_dir(dir: PathBuf, env: &Env) -> Self {
        let profile = default_base(env)
            .ok()
            .and_then(|base| profile_of(&base, &dir));
        Self { dir, profile }
    }

    pub fn config_file(&self) -> PathBuf {
        self.dir.join("config.yaml")
    }

    pub fn dotenv_file(&self) -> PathBuf {
        self.dir.join(".env")
    }

    pub fn pid_file(&self) -> PathBuf {
        self.dir.join("hermesd.pid")
    }

    pub fn db_file(&self) -> PathBuf {
        self.dir.join("hermesd.db")
    }

    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// The name used for the socket under `$XDG_RUNTIME_DIR/hermes/`: the profile name for homes
    /// under `~/.hermes`, otherwise a short hash of the home's path, so two homes never share one.
    pub fn socket_name(&self) -> String {
        match &self.profile {
            Some(name) => name.clone(),
            None => format!(
                "h-{:012x}",
                fnv1a(self.dir.as_os_str().as_encoded_bytes()) >> 16
            ),
        }
    }

    /// The environment of this home: the process environment overlaid by `.env`.
    pub fn env(&self, process: Env) -> Result<Env, crate::env::DotenvError> {
        let mut env = process;
        env.overlay_dotenv(&self.dotenv_file())?;
        Ok(env)
    }
}

/// Resolve the socket path: `--socket`, else `HERMES_SOCKET`, else config `daemon.socket`, else
/// `$XDG_RUNTIME_DIR/hermes/<name>.sock`, else `$HERMES_HOME/hermesd.sock`.
pub fn socket_path(
    flag: Option<&Path>,
    env: &Env,
    config_socket: Option<&str>,
    home: &Home,
) -> Result<PathBuf, PlaceError> {
    let path = if let Some(path) = flag {
        absolute(path)
    } else if let Some(path) = env.get("HERMES_SOCKET") {
        absolute(Path::new(path))
    } else if let Some(path) = config_socket.filter(|s| !s.is_empty()) {
        absolute(Path::new(path))
    } else if let Some(runtime) = env.get("XDG_RUNTIME_DIR").filter(|d| Path::new(d).is_dir()) {
        Path::new(runtime)
            .join("hermes")
            .join(format!("{}.sock", home.socket_name()))
    } else {
        home.dir.join("hermesd.sock")
    };
    if path.as_os_str().len() > MAX_SOCKET_PATH {
        return Err(PlaceError::SocketPathTooLong(path.display().to_string()));
    }
    Ok(path)
}

/// `daemon.socket` from a home's config.yaml, for clients; a missing or unreadable file gives `None`
/// (the daemon reports config errors itself). `${VAR}` references are expanded from `env`.
pub fn config_socket(home: &Home, env: &Env) -> Option<String> {
    let text = std::fs::read_to_string(home.config_file()).ok()?;
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).ok()?;
    let raw = doc.get("daemon")?.get("socket")?.as_str()?;
    Some(expand_vars(raw, env))
}

/// Replace `${NAME}` with the variable's value; unknown names stay literal, as in Hermes.
pub fn expand_vars(text: &str, env: &Env) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) if end > 0 => {
                let name = &after[..end];
                match env.get(name) {
                    Some(value) => out.push_str(value),
                    None => out.push_str(&rest[start..start + 2 + end + 1]),
                }
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Profile names as Hermes allows them: `^[a-z0-9][a-z0-9_-]{0,63}$`.
pub fn valid_profile_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-')
}

fn default_base(env: &Env) -> Result<PathBuf, PlaceError> {
    let home = env.get("HOME").ok_or(PlaceError::NoHome)?;
    Ok(Path::new(home).join(".hermes"))
}

fn profile_of(base: &Path, dir: &Path) -> Option<String> {
    if dir == base {
        return Some("default".into());
    }
    let name = dir.strip_prefix(base.join("profiles")).ok()?.to_str()?;
    valid_profile_name(name).then(|| name.to_string())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// FNV-1a, 64 bit: a stable hash (std's hasher may change between Rust releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Env {
        Env::from_pairs(pairs.iter().copied())
    }

    #[test]
    fn profile_flag_beats_hermes_home() {
        let e = env(&[("HOME", "/u"), ("HERMES_HOME", "/elsewhere")]);
        let home = Home::resolve(None, Some("work"), &e).unwrap();
        assert_eq!(home.dir, Path::new("/u/.hermes/profiles/work"));
        assert_eq!(home.socket_name(), "work");
    }

    #[test]
    fn hermes_profile_env_and_default() {
        let e = env(&[("HOME", "/u"), ("HERMES_PROFILE", "default")]);
        let home = Home::resolve(None, None, &e).unwrap();
        assert_eq!(home.dir, Path::new("/u/.hermes"));
        assert_eq!(home.profile.as_deref(), Some("default"));
    }

    #[test]
    fn bad_profile_is_refused() {
        let e = env(&[("HOME", "/u")]);
        assert!(matches!(
            Home::resolve(None, Some("../x"), &e),
            Err(PlaceError::BadProfile(_))
        ));
        assert!(!valid_profile_name("Upper"));
        assert!(valid_profile_name("a_b-9"));
    }

    #[test]
    fn foreign_homes_get_distinct_hashed_socket_names() {
        let e = env(&[("HOME", "/u")]);
        let a = Home::resolve(Some(Path::new("/tmp/a")), None, &e).unwrap();
        let b = Home::resolve(Some(Path::new("/tmp/b")), None, &e).unwrap();
        assert!(a.profile.is_none());
        assert_ne!(a.socket_name(), b.socket_name());
        assert!(a.socket_name().starts_with("h-"));
    }

    #[test]
    fn socket_precedence() {
        let runtime = std::env::temp_dir();
        let runtime = runtime.to_str().unwrap();
        let e = env(&[("HOME", "/u"), ("XDG_RUNTIME_DIR", runtime)]);
        let home = Home::resolve(None, None, &e).unwrap();
        let xdg = socket_path(None, &e, None, &home).unwrap();
        assert_eq!(xdg, Path::new(runtime).join("hermes/default.sock"));
        let from_config = socket_path(None, &e, Some("/c.sock"), &home).unwrap();
        assert_eq!(from_config, Path::new("/c.sock"));
        let mut e2 = e.clone();
        e2.set("HERMES_SOCKET", "/e.sock");
        assert_eq!(
            socket_path(None, &e2, Some("/c.sock"), &home).unwrap(),
            Path::new("/e.sock")
        );
        assert_eq!(
            socket_path(Some(Path::new("/f.sock")), &e2, None, &home).unwrap(),
            Path::new("/f.sock")
        );
        let no_runtime = env(&[("HOME", "/u")]);
        assert_eq!(
            socket_path(None, &no_runtime, None, &home).unwrap(),
            Path::new("/u/.hermes/hermesd.sock")
        );
    }

    #[test]
    fn long_socket_path_is_an_error() {
        let e = env(&[("HOME", "/u")]);
        let home = Home::resolve(None, None, &e).unwrap();
        let long = format!("/{}", "x".repeat(120));
        assert!(socket_path(Some(Path::new(&long)), &e, None, &home).is_err());
    }

    #[test]
    fn expands_known_vars_and_keeps_unknown() {
        let e = env(&[("A", "1")]);
        assert_eq!(expand_vars("x${A}y${B}z", &e), "x1y${B}z");
        assert_eq!(expand_vars("${", &e), "${");
        assert_eq!(expand_vars("${}", &e), "${}");
    }
}
