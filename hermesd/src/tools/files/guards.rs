//! Path-only guards for `read_file`: device files that would hang a read and
//! file extensions that are known to be binary.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

/// Device and stdio alias paths that block or never reach EOF.
const BLOCKED_DEVICE_PATHS: &[&str] = &[
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
    "/dev/full",
    "/dev/stdin",
    "/dev/tty",
    "/dev/console",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/0",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// `/proc` entries that are stdio aliases or leak secrets / memory layout.
const BLOCKED_PROC_SUFFIXES: &[&str] = &[
    "/fd/0",
    "/fd/1",
    "/fd/2",
    "/environ",
    "/cmdline",
    "/maps",
    "/smaps",
    "/smaps_rollup",
    "/numa_maps",
    "/mem",
    "/auxv",
    "/pagemap",
];

/// Image extensions (lower case, with dot): never read as text, and named as images.
const IMAGE_EXTENSIONS: &[&str] = &[
    ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".webp", ".tiff", ".tif",
];

/// Other extensions (lower case, with dot) that are never read as text.
const BINARY_EXTENSIONS: &[&str] = &[
    ".mp4", ".mov", ".avi", ".mkv", ".webm", ".wmv", ".flv", ".m4v", ".mpeg", ".mpg", // video
    ".mp3", ".wav", ".ogg", ".flac", ".aac", ".m4a", ".wma", ".aiff", ".opus", // audio
    ".zip", ".tar", ".gz", ".bz2", ".7z", ".rar", ".xz", ".z", ".tgz", ".iso", // archives
    ".exe", ".dll", ".so", ".dylib", ".bin", ".o", ".a", ".obj", ".lib", ".app", ".msi", ".deb",
    ".rpm", // executables
    ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp", // documents
    ".ttf", ".otf", ".woff", ".woff2", ".eot", // fonts
    ".pyc", ".pyo", ".class", ".jar", ".war", ".ear", ".node", ".wasm", ".rlib", // bytecode
    ".sqlite", ".sqlite3", ".db", ".mdb", ".idx", // databases
    ".psd", ".ai", ".eps", ".sketch", ".fig", ".xd", ".blend", ".3ds", ".max", // design
    ".swf", ".fla", ".lockb", ".dat", ".data", // misc
];

/// Returns the lower-cased binary extension of `path` (e.g. `".png"`), if any.
///
/// Like Hermes, this looks at the text after the last `.` of the whole path.
pub(crate) fn binary_extension(path: &Path) -> Option<String> {
    let text = path.to_string_lossy();
    let dot = text.rfind('.')?;
    let ext = text[dot..].to_ascii_lowercase();
    (IMAGE_EXTENSIONS.contains(&ext.as_str()) || BINARY_EXTENSIONS.contains(&ext.as_str()))
        .then_some(ext)
}

/// Whether `ext` (as [`binary_extension`] returns it) is an image's.
pub(crate) fn is_image_extension(ext: &str) -> bool {
    IMAGE_EXTENSIONS.contains(&ext)
}

/// Lexically normalises a path (`.`/`..`/duplicate separators) without I/O.
pub(crate) fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let can_pop = matches!(out.components().next_back(), Some(Component::Normal(_)));
                if can_pop {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

fn is_blocked_device_path(path: &Path) -> bool {
    let text = path.to_string_lossy();
    if BLOCKED_DEVICE_PATHS.contains(&text.as_ref()) {
        return true;
    }
    text.starts_with("/proc/") && BLOCKED_PROC_SUFFIXES.iter().any(|s| text.ends_with(s))
}

/// True when reading `path` would hang or leak process internals: the literal
/// path, every symlink hop, and the fully resolved path are checked.
pub(crate) fn is_blocked_device(path: &Path) -> bool {
    let mut current = normalize_lexically(path);
    if is_blocked_device_path(&current) {
        return true;
    }
    let mut seen = HashSet::new();
    for _ in 0..20 {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        let joined = match current.parent() {
            Some(parent) if target.is_relative() => parent.join(&target),
            _ => target,
        };
        let next = normalize_lexically(&joined);
        if is_blocked_device_path(&next) {
            return true;
        }
        if !seen.insert(next.clone()) {
            break;
        }
        current = next;
    }
    std::fs::canonicalize(path).is_ok_and(|resolved| is_blocked_device_path(&resolved))
}
