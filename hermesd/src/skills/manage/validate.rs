//! Validation of skill names, categories, SKILL.md frontmatter, sizes and file paths.

/// Longest allowed skill or category name.
pub(super) const MAX_NAME_CHARS: usize = 64;
/// Longest allowed frontmatter `description`.
pub(super) const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Largest allowed SKILL.md, in characters (~36k tokens).
pub(super) const MAX_SKILL_MD_CHARS: usize = 100_000;
/// Largest allowed supporting file, in bytes (1 MiB).
pub(super) const MAX_SUPPORT_FILE_BYTES: usize = 1_048_576;
/// Subdirectories that may hold supporting files.
pub(super) const SUPPORT_DIRS: [&str; 4] = ["references", "templates", "scripts", "assets"];
/// Directory names that skill discovery never descends into.
pub(super) const EXCLUDED_DIRS: [&str; 14] = [
    ".git",
    ".github",
    ".hub",
    ".archive",
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".tox",
    ".nox",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
];

/// True for `^[a-z0-9][a-z0-9._-]*$`.
fn is_valid_segment(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    first_ok
        && bytes.all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-')
        })
}

/// Checks a name for a new skill.
pub(super) fn validate_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("Skill name is required.".into());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!("Skill name exceeds {MAX_NAME_CHARS} characters."));
    }
    if !is_valid_segment(name) {
        return Err(format!(
            "Invalid skill name '{name}'. Use lowercase letters, numbers, hyphens, dots, and \
             underscores. Must start with a letter or digit."
        ));
    }
    if EXCLUDED_DIRS.contains(&name) {
        return Err(format!(
            "Skill name '{name}' is reserved: skill discovery skips directories with that name."
        ));
    }
    Ok(())
}

/// Checks an optional category; returns the trimmed category, `None` when absent or blank.
pub(super) fn validate_category(category: Option<&str>) -> Result<Option<&str>, String> {
    let Some(category) = category.map(str::trim).filter(|c| !c.is_empty()) else {
        return Ok(None);
    };
    if category.chars().count() > MAX_NAME_CHARS {
        return Err(format!("Category exceeds {MAX_NAME_CHARS} characters."));
    }
    if !is_valid_segment(category) {
        return Err(format!(
            "Invalid category '{category}'. Use lowercase letters, numbers, hyphens, dots, and \
             underscores. Categories must be a single directory name."
        ));
    }
    if EXCLUDED_DIRS.contains(&category) {
        return Err(format!(
            "Category '{category}' is reserved: skill discovery skips directories with that name."
        ));
    }
    Ok(Some(category))
}

/// Finds the closing fence `\n---\s*\n` in `text`; returns (start, end) of the match.
fn find_closing_fence(text: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(offset) = text[from..].find("\n---") {
        let start = from + offset;
        let after = start + 4;
        let run_end = text[after..]
            .find(|c: char| !c.is_whitespace())
            .map_or(text.len(), |k| after + k);
        if let Some(newline) = text[after..run_end].rfind('\n') {
            return Some((start, after + newline + 1));
        }
        from = start + 1;
    }
    None
}

/// Splits SKILL.md into (frontmatter YAML, body); errors name what is missing.
fn split_frontmatter(content: &str) -> Result<(&str, &str), String> {
    let content = content.strip_prefix('\u{feff}').unwrap_or(content);
    let Some(rest) = content.strip_prefix("---") else {
        return Err(
            "SKILL.md must start with YAML frontmatter (---). See existing skills for format."
                .into(),
        );
    };
    let Some((start, end)) = find_closing_fence(rest) else {
        return Err(
            "SKILL.md frontmatter is not closed. Ensure you have a closing '---' line.".into(),
        );
    };
    Ok((&rest[..start], &rest[end..]))
}

/// Checks SKILL.md structure: frontmatter mapping with `name` and `description`, and a body.
pub(super) fn validate_frontmatter(content: &str) -> Result<(), String> {
    if content.trim().is_empty() {
        return Err("Content cannot be empty.".into());
    }
    let (yaml, body) = split_frontmatter(content)?;
    let parsed: serde_yaml::Value =
        serde_yaml::from_str(yaml).map_err(|e| format!("YAML frontmatter parse error: {e}"))?;
    let Some(map) = parsed.as_mapping() else {
        return Err("Frontmatter must be a YAML mapping (key: value pairs).".into());
    };
    if !map.contains_key("name") {
        return Err("Frontmatter must include 'name' field.".into());
    }
    let Some(description) = map.get("description") else {
        return Err("Frontmatter must include 'description' field.".into());
    };
    if yaml_text_chars(description) > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "Description exceeds {MAX_DESCRIPTION_CHARS} characters."
        ));
    }
    if body.trim().is_empty() {
        return Err(
            "SKILL.md must have content after the frontmatter (instructions, procedures, etc.)."
                .into(),
        );
    }
    Ok(())
}

/// Character length of a YAML scalar as text (non-strings are measured as re-serialised YAML).
fn yaml_text_chars(value: &serde_yaml::Value) -> usize {
    match value {
        serde_yaml::Value::String(text) => text.chars().count(),
        other => serde_yaml::to_string(other).map_or(0, |text| text.trim().chars().count()),
    }
}

/// Checks the SKILL.md character limit.
pub(super) fn validate_skill_md_size(content: &str, label: &str) -> Result<(), String> {
    // Byte length bounds the character count, so count only when it could matter.
    if content.len() <= MAX_SKILL_MD_CHARS {
        return Ok(());
    }
    let chars = content.chars().count();
    if chars > MAX_SKILL_MD_CHARS {
        return Err(format!(
            "{label} content is {} characters (limit: {}). Consider splitting into a smaller \
             SKILL.md with supporting files in references/ or templates/.",
            thousands(chars),
            thousands(MAX_SKILL_MD_CHARS)
        ));
    }
    Ok(())
}

/// Checks the supporting-file byte limit.
pub(super) fn validate_support_size(data: &str, label: &str) -> Result<(), String> {
    if data.len() > MAX_SUPPORT_FILE_BYTES {
        return Err(format!(
            "{label} content is {} bytes (limit: {} bytes / 1 MiB). Consider splitting into \
             smaller files.",
            thousands(data.len()),
            thousands(MAX_SUPPORT_FILE_BYTES)
        ));
    }
    Ok(())
}

/// Formats `1234567` as `1,234,567`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// Which file of a skill a `file_path` argument designates.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SkillFile {
    /// The skill's SKILL.md (spelled `SKILL.md` or `<name>/SKILL.md`).
    SkillMd,
    /// A supporting file; the normalised relative path (`references/x.md`).
    Support(String),
}

/// Parses a `file_path` argument; `SKILL.md` is accepted only when `allow_skill_md`.
pub(super) fn parse_file_path(
    file_path: &str,
    skill_name: &str,
    action: &str,
    allow_skill_md: bool,
) -> Result<SkillFile, String> {
    if file_path.is_empty() {
        return Err("file_path is required.".into());
    }
    if file_path.starts_with('/') || file_path.starts_with('~') {
        return Err(format!(
            "Absolute paths are not allowed: '{file_path}'. Use a path relative to the skill \
             directory, e.g. 'references/notes.md'."
        ));
    }
    if file_path.contains('\0') {
        return Err(format!(
            "file_path '{}' contains a NUL byte.",
            file_path.escape_debug()
        ));
    }
    let parts: Vec<&str> = file_path
        .split('/')
        .filter(|part| !part.is_empty() && *part != ".")
        .collect();
    if parts.contains(&"..") {
        return Err(format!(
            "Path traversal ('..') is not allowed: '{file_path}'."
        ));
    }
    let names_skill_md = match parts.as_slice() {
        ["SKILL.md"] => true,
        [dir, "SKILL.md"] => *dir == skill_name,
        _ => false,
    };
    if names_skill_md {
        if allow_skill_md {
            return Ok(SkillFile::SkillMd);
        }
        return Err(format!(
            "'{action}' handles supporting files only; change SKILL.md with action='edit' or \
             action='patch'."
        ));
    }
    match parts.first() {
        Some(first) if SUPPORT_DIRS.contains(first) => {
            if parts.len() < 2 {
                return Err(format!(
                    "Provide a file path, not just a directory. Example: '{first}/myfile.md'"
                ));
            }
            Ok(SkillFile::Support(parts.join("/")))
        }
        _ => Err(format!(
            "File must be under one of: assets, references, scripts, templates. Got: \
             '{file_path}'"
        )),
    }
}
