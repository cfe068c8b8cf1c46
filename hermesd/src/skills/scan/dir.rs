//! Scans a skill directory: walks every non-hidden entry (sorted, symlinks not followed),
//! applies Hermes' structural checks (binaries, escaping symlinks, executables, sizes, file
//! count) and runs the text scan on every text file.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::Severity::{Critical, High, Medium};
use super::{Finding, ScanReport, Severity, scan_text};
use crate::policy::threat::skill::{STRUCTURAL, TRAVERSAL};

/// Files larger than this are not read; they are reported instead.
const MAX_SCANNED_FILE: u64 = 1024 * 1024;
/// Hermes' per-file "suspiciously large" mark (still scanned).
const LARGE_FILE: u64 = 256 * 1024;
/// Hermes' total-size mark for a skill.
const MAX_TOTAL_SIZE: u64 = 1024 * 1024;
/// Hermes' file-count mark for a skill.
const MAX_FILE_COUNT: usize = 50;
/// Entries walked at most; beyond this the scan stops and says so.
const MAX_ENTRIES: usize = 10_000;
/// Directory nesting walked at most (also bounds symlink loops).
const MAX_DEPTH: usize = 16;
/// Bytes sniffed for NUL to tell binary from text.
const SNIFF: usize = 8192;

const BINARY_EXTENSIONS: &[&str] = &[
    "exe", "dll", "so", "dylib", "bin", "dat", "com", "msi", "dmg", "app", "deb", "rpm",
];
const SCRIPT_EXTENSIONS: &[&str] = &["sh", "bash", "py", "rb", "pl"];

struct Walk {
    root: PathBuf,
    findings: Vec<Finding>,
    files: usize,
    entries: usize,
    total_size: u64,
    truncated: bool,
}

fn structural(
    id: &'static str,
    severity: Severity,
    file: &str,
    matched: String,
    description: &'static str,
) -> Finding {
    Finding {
        pattern_id: id,
        severity,
        category: if id.contains("symlink") {
            TRAVERSAL
        } else {
            STRUCTURAL
        },
        file: file.to_owned(),
        line: 0,
        matched,
        description,
    }
}

fn with_context(err: io::Error, verb: &str, path: &Path) -> io::Error {
    io::Error::new(err.kind(), format!("{verb} {}: {err}", path.display()))
}

/// Scans every regular, non-hidden file under `dir` (hidden files and directories, i.e.
/// names starting with `.`, are skipped). A plain file is scanned on its own.
pub fn scan_skill_dir(dir: &Path) -> io::Result<ScanReport> {
    let meta = fs::metadata(dir).map_err(|e| with_context(e, "stat skill", dir))?;
    let root = dir
        .canonicalize()
        .map_err(|e| with_context(e, "resolve skill", dir))?;
    let mut walk = Walk {
        root,
        findings: Vec::new(),
        files: 0,
        entries: 0,
        total_size: 0,
        truncated: false,
    };
    if meta.is_file() {
        let name = dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        walk.file(dir, &name, &meta);
    } else {
        walk.directory(dir, "", 0)?;
    }
    walk.finish();
    Ok(ScanReport::from_findings(walk.findings))
}

impl Walk {
    fn directory(&mut self, dir: &Path, prefix: &str, depth: usize) -> io::Result<()> {
        if depth > MAX_DEPTH {
            self.truncated = true;
            return Ok(());
        }
        let mut entries = fs::read_dir(dir)
            .map_err(|e| with_context(e, "list skill directory", dir))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| with_context(e, "list skill directory", dir))?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                self.truncated = true;
                return Ok(());
            }
            let rel = format!("{prefix}{name}");
            let path = entry.path();
            let meta = fs::symlink_metadata(&path).map_err(|e| with_context(e, "stat", &path))?;
            if meta.file_type().is_symlink() {
                self.symlink(&path, &rel, depth)?;
            } else if meta.is_dir() {
                self.directory(&path, &format!("{rel}/"), depth + 1)?;
            } else if meta.is_file() {
                self.file(&path, &rel, &meta);
            }
        }
        Ok(())
    }

    /// Links must stay inside the skill. A link to an inner file is scanned under the link's
    /// name; a link to an inner hidden directory is walked (it is skipped otherwise).
    fn symlink(&mut self, path: &Path, rel: &str, depth: usize) -> io::Result<()> {
        let target = match path.canonicalize() {
            Ok(target) => target,
            Err(_) => {
                self.findings.push(structural(
                    "broken_symlink",
                    Medium,
                    rel,
                    "broken symlink".to_owned(),
                    "broken or circular symlink",
                ));
                return Ok(());
            }
        };
        let Ok(inner) = target.strip_prefix(&self.root) else {
            self.findings.push(structural(
                "symlink_escape",
                Critical,
                rel,
                format!("symlink -> {}", target.display()),
                "symlink points outside the skill directory",
            ));
            return Ok(());
        };
        let Ok(meta) = fs::metadata(&target) else {
            return Ok(());
        };
        let hidden = inner
            .components()
            .any(|c| c.as_os_str().to_string_lossy().starts_with('.'));
        if meta.is_file() {
            self.file(&target, rel, &meta);
        } else if meta.is_dir() && hidden {
            self.directory(&target, &format!("{rel}/"), depth + 1)?;
        }
        Ok(())
    }

    fn file(&mut self, path: &Path, rel: &str, meta: &fs::Metadata) {
        self.files += 1;
        let size = meta.len();
        self.total_size += size;
        let ext = Path::new(rel)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if BINARY_EXTENSIONS.contains(&ext.as_str()) {
            self.findings.push(structural(
                "binary_file",
                Critical,
                rel,
                format!("binary: .{ext}"),
                "binary or executable file in a skill",
            ));
        }
        if is_executable(meta) && !SCRIPT_EXTENSIONS.contains(&ext.as_str()) {
            self.findings.push(structural(
                "unexpected_executable",
                Medium,
                rel,
                "executable bit set".to_owned(),
                "executable file that is not a recognised script type",
            ));
        }
        if size > MAX_SCANNED_FILE {
            self.findings.push(structural(
                "oversized_file",
                Medium,
                rel,
                format!("{}KB, not scanned", size / 1024),
                "file too large to scan (over 1 MiB)",
            ));
            return;
        }
        if size > LARGE_FILE {
            self.findings.push(structural(
                "oversized_file",
                Medium,
                rel,
                format!("{}KB", size / 1024),
                "unusually large file for a skill (over 256 KiB)",
            ));
        }
        match fs::read(path) {
            Ok(bytes) => {
                let binary = bytes[..bytes.len().min(SNIFF)].contains(&0);
                if let (false, Ok(text)) = (binary, std::str::from_utf8(&bytes)) {
                    self.findings.extend(scan_text(rel, text));
                }
            }
            Err(err) => self.findings.push(structural(
                "unreadable_file",
                Medium,
                rel,
                err.kind().to_string(),
                "file could not be read, so it was not scanned",
            )),
        }
    }

    fn finish(&mut self) {
        if self.truncated {
            self.findings.push(structural(
                "scan_truncated",
                High,
                "(directory)",
                format!("over {MAX_ENTRIES} entries or {MAX_DEPTH} levels deep"),
                "skill too large or too deep to scan fully",
            ));
        }
        if self.files > MAX_FILE_COUNT {
            self.findings.push(structural(
                "too_many_files",
                Medium,
                "(directory)",
                format!("{} files", self.files),
                "unusually many files for a skill (over 50)",
            ));
        }
        if self.total_size > MAX_TOTAL_SIZE {
            self.findings.push(structural(
                "oversized_skill",
                High,
                "(directory)",
                format!("{}KB total", self.total_size / 1024),
                "skill is over 1 MiB in total",
            ));
        }
    }
}

#[cfg(unix)]
fn is_executable(meta: &fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_meta: &fs::Metadata) -> bool {
    false
}
