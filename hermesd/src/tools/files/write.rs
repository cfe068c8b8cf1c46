//! `write_file`: atomic whole-file writes (temp file in the same directory,
//! then rename) that keep an existing file's mode, line endings and BOM.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// Status text `read_file` deduplication returns instead of content; it must
/// never be written back as a file's content.
pub const READ_DEDUP_STATUS_MESSAGE: &str = "File unchanged since last read. The content from \
the earlier read_file result in this conversation is still current — refer to that instead of re-reading.";

const UTF8_BOM: &str = "\u{feff}";
const HEAD_SAMPLE_BYTES: u64 = 4096;
const MAX_SYMLINK_HOPS: usize = 40;
const TEMP_ATTEMPTS: u32 = 16;

/// Writes `content` to `path`, replacing the whole file atomically, and
/// returns Hermes' `write_file` result JSON (`bytes_written`, `dirs_created`,
/// `resolved_path`, `files_modified`, or `error`).
///
/// Missing parent directories are created. A symlink is written through to
/// its target. An existing file keeps its permissions, CRLF line endings and
/// UTF-8 BOM.
pub fn write_file(path: &Path, content: &str) -> Value {
    if is_internal_tool_content(content) {
        return json!({"error": "Refusing to write internal read_file display text as file content. \
            Strip read_file line-number prefixes or reconstruct the intended file contents before writing."});
    }
    let target = follow_symlinks(path);
    let shown = target.to_string_lossy().into_owned();
    let mut dirs_created = false;
    let outcome = prepare_and_write(&target, content, &mut dirs_created);
    match outcome {
        Ok(bytes_written) => json!({
            "bytes_written": bytes_written,
            "dirs_created": dirs_created,
            "resolved_path": shown,
            "files_modified": [shown],
        }),
        Err(err) => json!({
            "bytes_written": 0,
            "dirs_created": dirs_created,
            "error": format!("Failed to write file: {shown}: {err}"),
            "resolved_path": shown,
        }),
    }
}

fn prepare_and_write(target: &Path, content: &str, dirs_created: &mut bool) -> io::Result<usize> {
    let existing = match fs::metadata(target) {
        Ok(metadata) if metadata.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory",
            ));
        }
        Ok(metadata) => Some(metadata.permissions()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let mut data = Cow::Borrowed(content);
    if existing.is_some() {
        // An unreadable head only loses the line-ending/BOM preservation.
        let head = read_head(target).unwrap_or_default();
        if head.windows(2).any(|pair| pair == b"\r\n") {
            data = Cow::Owned(to_crlf(&data));
        }
        if head.starts_with(UTF8_BOM.as_bytes()) && !data.starts_with(UTF8_BOM) {
            data = Cow::Owned(format!("{UTF8_BOM}{data}"));
        }
    }
    let dir = parent_dir(target);
    if !dir.exists() {
        fs::create_dir_all(dir).map_err(|err| {
            io::Error::new(
                err.kind(),
                format!("cannot create {}: {err}", dir.display()),
            )
        })?;
        *dirs_created = true;
    }
    replace_atomically(target, dir, data.as_bytes(), existing)?;
    Ok(data.len())
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Follows a chain of symlinks at the final path component (the target may
/// not exist yet), so the write replaces the file, not the link.
fn follow_symlinks(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_SYMLINK_HOPS {
        let Ok(target) = fs::read_link(&current) else {
            break;
        };
        current = if target.is_relative() {
            parent_dir(&current).join(target)
        } else {
            target
        };
    }
    current
}

fn read_head(path: &Path) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(HEAD_SAMPLE_BYTES as usize);
    File::open(path)?
        .take(HEAD_SAMPLE_BYTES)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// Converts every `\r\n`, lone `\r` and `\n` to `\r\n`.
fn to_crlf(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut rest = text;
    while let Some(i) = rest.find(['\r', '\n']) {
        out.push_str(&rest[..i]);
        out.push_str("\r\n");
        let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
        rest = &rest[i + skip..];
    }
    out.push_str(rest);
    out
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn create_temp(dir: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let mut last_err = io::Error::new(io::ErrorKind::AlreadyExists, "no free temp file name");
    for _ in 0..TEMP_ATTEMPTS {
        let serial = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let name = format!(".hermes-tmp.{}.{nanos:x}.{serial}", std::process::id());
        let path = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => last_err = err,
            Err(err) => return Err(err),
        }
    }
    Err(last_err)
}

/// Writes `data` to a temp file beside `target` and renames it over `target`;
/// on any failure the temp file is removed and `target` is left untouched.
fn replace_atomically(
    target: &Path,
    dir: &Path,
    data: &[u8],
    keep: Option<Permissions>,
) -> io::Result<()> {
    let mode = keep.as_ref().map_or(0o666, |perms| perms.mode() & 0o7777);
    let (temp_path, mut file) = create_temp(dir, mode)?;
    let result = (|| {
        if let Some(perms) = keep {
            file.set_permissions(perms)?;
        }
        file.write_all(data)?;
        drop(file);
        fs::rename(&temp_path, target)
    })();
    if result.is_err() {
        // Best effort: the temp file may already be gone.
        let _ = fs::remove_file(&temp_path);
    }
    result
}

/// True when `content` is `read_file` output echoed back (the dedup status
/// message, or text dominated by consecutive `N|` line-number prefixes).
pub fn is_internal_tool_content(content: &str) -> bool {
    is_dedup_status_text(content) || looks_line_numbered(content)
}

fn is_dedup_status_text(content: &str) -> bool {
    let stripped = content.trim();
    let message = READ_DEDUP_STATUS_MESSAGE;
    stripped == message
        || (stripped.contains(message) && stripped.chars().count() <= 2 * message.chars().count())
}

fn looks_line_numbered(content: &str) -> bool {
    let mut non_blank = 0usize;
    let mut numbers: Vec<u128> = Vec::new();
    for line in content.lines().filter(|line| !line.trim().is_empty()) {
        non_blank += 1;
        let numbered = line
            .trim_start()
            .split_once('|')
            .filter(|(prefix, _)| !prefix.is_empty() && prefix.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(prefix, _)| prefix.parse::<u128>().ok());
        numbers.extend(numbered);
    }
    if non_blank < 2 || numbers.len() < 2 || (numbers.len() as f64) < 0.6 * non_blank as f64 {
        return false;
    }
    numbers
        .windows(2)
        .all(|pair| pair[1] == pair[0].wrapping_add(1))
}
