//! hermesd's own credential store, beside Hermes' files and never mixed into them:
//! `<home>/hermesd-auth/credentials.json` (directory 0700, file 0600, replaced atomically) holds
//! the keys added with `hermesctl auth add`, the parking of every credential, and the rows of
//! `auth.json` the user removed from hermesd's pools. The directory is one of the home's secret
//! directories: no tool reads it and confined commands see it empty.

use std::{
    collections::BTreeMap,
    fs::{self, File, Permissions},
    io::Write,
    os::unix::fs::{DirBuilderExt, PermissionsExt},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::credential::{AuthType, Parked};

/// The directory, relative to the Hermes home.
pub const DIR: &str = "hermesd-auth";
const FILE: &str = "credentials.json";

/// A key added to hermesd.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnRow {
    pub id: String,
    pub label: String,
    pub auth_type: AuthType,
    /// `manual` for a pasted key, `env:<VAR>` for `--key-env`.
    pub source: String,
    /// The key itself (absent for `--key-env`, read from the variable at each load).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

impl std::fmt::Debug for OwnRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnRow")
            .field("id", &self.id)
            .field("label", &self.label)
            .field("source", &self.source)
            .field("secret", &self.secret.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OwnStore {
    #[serde(default = "version")]
    pub version: u32,
    /// Pool key → keys added to hermesd, in order.
    #[serde(default)]
    pub credentials: BTreeMap<String, Vec<OwnRow>>,
    /// Pool key → credential id → its parking.
    #[serde(default)]
    pub parked: BTreeMap<String, BTreeMap<String, Parked>>,
    /// Pool key → ids and sources hermesd does not use (removed with `hermesctl auth rm`).
    #[serde(default)]
    pub removed: BTreeMap<String, Vec<String>>,
}

fn version() -> u32 {
    1
}

impl OwnStore {
    pub fn path(home: &Path) -> PathBuf {
        home.join(DIR).join(FILE)
    }

    /// Make the directory (0700) so that it exists before any confined command starts.
    pub fn prepare(home: &Path) -> Result<(), String> {
        let dir = home.join(DIR);
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        fs::set_permissions(&dir, Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot restrict {}: {e}", dir.display()))
    }

    /// Read the store; missing is empty, malformed is empty with the reason (the next write
    /// first moves it aside as `credentials.json.corrupt`, so nothing in it is lost).
    pub fn read(home: &Path) -> (Self, Option<String>) {
        let path = Self::path(home);
        match fs::read(&path) {
            Ok(bytes) => match serde_json::from_slice(&bytes) {
                Ok(store) => (store, None),
                Err(e) => (
                    Self::default(),
                    Some(format!(
                        "{} is not valid ({e}); it is ignored",
                        path.display()
                    )),
                ),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Self::default(), None),
            Err(e) => (
                Self::default(),
                Some(format!("cannot read {}: {e}", path.display())),
            ),
        }
    }

    /// Replace the file: a 0600 temporary file in the same directory, fsync, rename, fsync of
    /// the directory.
    pub fn write(&self, home: &Path) -> Result<(), String> {
        Self::prepare(home)?;
        let path = Self::path(home);
        let fail = |verb: &str, e: &dyn std::fmt::Display| {
            format!("cannot write {} ({verb}): {e}", path.display())
        };
        let dir = home.join(DIR);
        let unreadable =
            fs::read(&path).is_ok_and(|old| serde_json::from_slice::<OwnStore>(&old).is_err());
        if unreadable {
            fs::rename(&path, dir.join(format!("{FILE}.corrupt")))
                .map_err(|e| fail("moving the unreadable file aside", &e))?;
        }
        let bytes = serde_json::to_vec_pretty(self).map_err(|e| fail("encoding", &e))?;
        let mut temp = tempfile::Builder::new()
            .prefix(".credentials.json.")
            .permissions(Permissions::from_mode(0o600))
            .tempfile_in(&dir)
            .map_err(|e| fail("creating a temporary file", &e))?;
        temp.write_all(&bytes)
            .and_then(|()| temp.write_all(b"\n"))
            .map_err(|e| fail("writing", &e))?;
        temp.as_file().sync_all().map_err(|e| fail("syncing", &e))?;
        temp.persist(&path)
            .map_err(|e| fail("renaming", &e.error))?;
        if let Ok(dir) = File::open(&dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// Whether `id_or_source` was removed from pool `key`.
    pub fn is_removed(&self, key: &str, id: &str, source: &str) -> bool {
        self.removed
            .get(key)
            .is_some_and(|gone| gone.iter().any(|g| g == id || g == source))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use super::*;

    #[test]
    fn written_private_and_read_back() {
        let home = tempfile::tempdir().unwrap();
        let mut store = OwnStore::default();
        store
            .credentials
            .entry("openrouter".into())
            .or_default()
            .push(OwnRow {
                id: "a1b2c3".into(),
                label: "work".into(),
                auth_type: AuthType::ApiKey,
                source: "manual".into(),
                secret: Some("sk-or-x".into()),
            });
        store.write(home.path()).unwrap();
        let path = OwnStore::path(home.path());
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert_eq!(
            fs::metadata(path.parent().unwrap()).unwrap().mode() & 0o777,
            0o700
        );
        let (back, problem) = OwnStore::read(home.path());
        assert!(problem.is_none());
        assert_eq!(back, store);
        assert!(!format!("{back:?}").contains("sk-or-x"));
    }

    #[test]
    fn malformed_is_ignored_with_its_reason() {
        let home = tempfile::tempdir().unwrap();
        OwnStore::prepare(home.path()).unwrap();
        fs::write(OwnStore::path(home.path()), "[").unwrap();
        let (store, problem) = OwnStore::read(home.path());
        assert_eq!(store, OwnStore::default());
        assert!(problem.unwrap().contains("is not valid"));
        OwnStore::default().write(home.path()).unwrap();
        let aside = home.path().join(DIR).join("credentials.json.corrupt");
        assert_eq!(fs::read_to_string(aside).unwrap(), "[");
    }
}
