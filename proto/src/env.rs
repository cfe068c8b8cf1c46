//! The environment a daemon or client sees: the process environment overlaid by `$HERMES_HOME/.env`
//! (which wins, as in Hermes). Passed around explicitly; the process environment is never mutated.

use std::{collections::HashMap, path::Path};

/// A snapshot of environment variables. Its Debug output shows names only: values may be secrets.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: HashMap<String, String>,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        f.debug_struct("Env").field("names", &names).finish()
    }
}

/// A `.env` file that could not be read or parsed.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {path}: {reason}")]
pub struct DotenvError {
    pub path: String,
    pub reason: String,
}

impl Env {
    /// The current process environment (variables that are not valid UTF-8 are skipped).
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    /// An environment made of the given pairs (tests, minimal child environments).
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Overlay the variables of a dotenv file; a missing file changes nothing.
    pub fn overlay_dotenv(&mut self, path: &Path) -> Result<(), DotenvError> {
        let iter = match dotenvy::from_path_iter(path) {
            Ok(iter) => iter,
            Err(dotenvy::Error::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(());
            }
            Err(e) => return Err(dotenv_error(path, e)),
        };
        for item in iter {
            let (key, value) = item.map_err(|e| dotenv_error(path, e))?;
            self.vars.insert(key, value);
        }
        Ok(())
    }

    /// The value of a variable; empty values count as unset.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// Set a variable in this snapshot.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.vars.insert(key.into(), value.into());
    }

    /// Iterate over all variables.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }
}

fn dotenv_error(path: &Path, e: dotenvy::Error) -> DotenvError {
    let reason = match e {
        // Never echo the line itself: it may hold a secret.
        dotenvy::Error::LineParse(line, _) => match line_number_of(path, &line) {
            Some(n) => format!("line {n} is not KEY=VALUE"),
            None => "a line is not KEY=VALUE".to_string(),
        },
        other => other.to_string(),
    };
    DotenvError {
        path: path.display().to_string(),
        reason,
    }
}

fn line_number_of(path: &Path, line: &str) -> Option<usize> {
    let text = std::fs::read_to_string(path).ok()?;
    let first = line.lines().next()?;
    text.lines().position(|l| l == first).map(|i| i + 1)
}
