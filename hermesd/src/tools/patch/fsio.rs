//! File plumbing for patches: text decoding that keeps
//! a file's line endings and BOM, and atomic writes (temp file beside the target + rename,
//! keeping permissions and writing through symlinks).

use std::borrow::Cow;
use std::fs::{self, OpenOptions, Permissions};
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

const BOM: char = '\u{feff}';

/// A file's text as the matcher sees it, plus what is needed to write it back the same way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileText {
    /// Text without BOM; with `\n` line endings when the file uses CRLF.
    pub(super) text: String,
    had_bom: bool,
    ending: Option<&'static str>,
}

impl FileText {
    /// Decodes file bytes; `None` if they are not UTF-8.
    pub(super) fn decode(bytes: Vec<u8>) -> Option<Self> {
        let raw = String::from_utf8(bytes).ok()?;
        let had_bom = raw.starts_with(BOM);
        let body = if had_bom {
            &raw[BOM.len_utf8()..]
        } else {
            &raw[..]
        };
        let head = &body.as_bytes()[..body.len().min(4096)];
        let ending = if head.windows(2).any(|pair| pair == b"\r\n") {
            Some("\r\n")
        } else if head.contains(&b'\n') {
            Some("\n")
        } else {
            None
        };
        let text = match ending {
            Some("\r\n") => to_lf(body).into_owned(),
            _ if had_bom => body.to_owned(),
            _ => raw,
        };
        Some(Self {
            text,
            had_bom,
            ending,
        })
    }

    /// Whether the file uses CRLF line endings.
    pub(super) fn is_crlf(&self) -> bool {
        self.ending == Some("\r\n")
    }

    /// `new_text` with line endings made uniform as they will be written; compare it with
    /// [`FileText::text`] for the diff. `lf_files_too` also strips stray `\r` in LF files.
    pub(super) fn normalize<'a>(&self, new_text: &'a str, lf_files_too: bool) -> Cow<'a, str> {
        if self.is_crlf() || (lf_files_too && self.ending.is_some()) {
            to_lf(new_text)
        } else {
            Cow::Borrowed(new_text)
        }
    }

    /// Bytes to write for normalised text: CRLF restored and BOM put back if the file had them.
    pub(super) fn encode(&self, normalized: &str) -> Vec<u8> {
        let mut out = String::with_capacity(normalized.len() + normalized.len() / 32 + 3);
        if self.had_bom && !normalized.starts_with(BOM) {
            out.push(BOM);
        }
        if self.is_crlf() {
            for (index, line) in normalized.split('\n').enumerate() {
                if index > 0 {
                    out.push_str("\r\n");
                }
                out.push_str(line);
            }
        } else {
            out.push_str(normalized);
        }
        out.into_bytes()
    }
}

/// `text` with CRLF and lone CR turned into LF.
pub(super) fn to_lf(text: &str) -> Cow<'_, str> {
    if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Reads a file; `Ok(None)` if it does not exist.
pub(super) fn read_optional(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) => Err(format!("cannot read {}: {err}", path.display())),
    }
}

/// New contents written to a temp file beside the target, waiting to be renamed over it.
/// Dropping it uncommitted removes the temp file.
#[derive(Debug)]
pub(super) struct StagedWrite {
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

static TEMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Writes `bytes` to a temp file in the target's directory (creating directories as needed),
/// with `permissions` or else the existing target's. A symlink target is written through.
pub(super) fn stage_write(
    target: &Path,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> Result<StagedWrite, String> {
    let target = match fs::symlink_metadata(target) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf())
        }
        _ => target.to_path_buf(),
    };
    let parent = match target.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent)
        .map_err(|err| format!("cannot create directory {}: {err}", parent.display()))?;
    let name = target
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or_else(|| format!("not a file path: {}", target.display()))?;
    let permissions = match permissions {
        Some(permissions) => Some(permissions),
        None => fs::metadata(&target).ok().map(|meta| meta.permissions()),
    };
    let (temp, mut file) = create_temp(&parent, &name)?;
    let staged = StagedWrite {
        temp,
        target,
        committed: false,
    };
    file.write_all(bytes)
        .map_err(|err| format!("cannot write {}: {err}", staged.temp.display()))?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)
            .map_err(|err| format!("cannot set permissions on {}: {err}", staged.temp.display()))?;
    }
    drop(file);
    Ok(staged)
}

/// Creates a fresh hidden temp file `.<name>.hermes-tmp.<pid>.<n>` in `dir`.
fn create_temp(dir: &Path, name: &str) -> Result<(PathBuf, fs::File), String> {
    let pid = std::process::id();
    let mut last_error = None;
    for _ in 0..16 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.hermes-tmp.{pid}.{n}"));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((temp, file)),
            Err(err) if err.kind() == ErrorKind::AlreadyExists => last_error = Some(err),
            Err(err) => {
                return Err(format!(
                    "cannot create temp file in {}: {err}",
                    dir.display()
                ));
            }
        }
    }
    Err(format!(
        "cannot create temp file in {}: {}",
        dir.display(),
        last_error.map_or_else(|| "name collision".to_owned(), |err| err.to_string())
    ))
}

impl StagedWrite {
    /// Renames the temp file over the target.
    pub(super) fn commit(mut self) -> Result<(), String> {
        fs::rename(&self.temp, &self.target)
            .map_err(|err| format!("cannot replace {}: {err}", self.target.display()))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for StagedWrite {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temp);
        }
    }
}

/// Writes `bytes` to `target` atomically (see [`stage_write`]).
pub(super) fn write_atomic(target: &Path, bytes: &[u8]) -> Result<(), String> {
    stage_write(target, bytes, None)?.commit()
}
