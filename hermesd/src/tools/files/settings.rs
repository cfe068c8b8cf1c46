//! A Hermes home's settings file (`config.yaml`) as the file tools show it: read whole and with
//! its secret values masked (`policy::secrets::mask_settings`, line for line), so `read_file`
//! pages it and `search_files` searches it as masked — a search for a secret value finds
//! nothing.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::policy::paths::{PathPolicy, real};
use crate::policy::secrets::{is_settings_file, mask_settings};

/// The largest settings file shown (a real one is a few KiB); a larger one is not shown.
pub const MAX_SETTINGS_BYTES: u64 = 4 * 1024 * 1024;

/// The text of settings file `path` with its secret values masked; `None` when it is larger
/// than [`MAX_SETTINGS_BYTES`].
pub(crate) fn masked_text(path: &Path) -> io::Result<Option<String>> {
    let mut bytes = Vec::new();
    File::open(path)?
        .take(MAX_SETTINGS_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_SETTINGS_BYTES {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(&bytes);
    Ok(Some(mask_settings(&text).into_owned()))
}

/// Whether a file `search_files` walks onto is a settings file: named like one of a Hermes
/// home's files (a cheap first test), and one when its real path is judged.
pub(crate) fn is_settings(path: &Path, paths: &PathPolicy) -> bool {
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| PathPolicy::home_file_names().any(|f| f == n));
    named && is_settings_file(paths, &real(path))
}
