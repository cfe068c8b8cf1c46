//! "Did you mean" suggestions for a missing file (`read_file`) or a missing
//! search root (`search_files`), scored like Hermes does.

use std::collections::HashSet;
use std::path::Path;

/// Returns up to `max` non-hidden entry names of `dir`, sorted bytewise
/// (like `ls -1 | head`). Unreadable directories yield nothing.
fn list_dir_names(dir: &Path, max: usize) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort_unstable();
    names.truncate(max);
    names
}

/// Splits a file name into (stem, extension-with-dot), like `os.path.splitext`.
fn split_ext(name: &str) -> (&str, &str) {
    let leading_dots = name.len() - name.trim_start_matches('.').len();
    match name[leading_dots..].rfind('.') {
        Some(i) => name.split_at(leading_dots + i),
        None => (name, ""),
    }
}

fn similarity_score(query: &str, candidate: &str) -> u8 {
    let (query_stem, query_ext) = split_ext(query);
    let (cand_stem, cand_ext) = split_ext(candidate);
    if candidate == query {
        100
    } else if cand_stem == query_stem {
        90
    } else if candidate.starts_with(query) || query.starts_with(candidate) {
        70
    } else if candidate.contains(query) {
        60
    } else if query.contains(candidate) && candidate.chars().count() > 2 {
        40
    } else if !query_ext.is_empty() && cand_ext == query_ext {
        let query_chars: HashSet<char> = query.chars().collect();
        let common = candidate
            .chars()
            .collect::<HashSet<char>>()
            .intersection(&query_chars)
            .count();
        let longest = query.chars().count().max(candidate.chars().count());
        if common as f64 >= longest as f64 * 0.4 {
            30
        } else {
            0
        }
    } else {
        0
    }
}

fn parent_for_display(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Up to five paths next to the missing file `shown` whose names resemble it.
/// `actual` is where the file was looked for; `shown` is how it is displayed.
pub(crate) fn similar_files(shown: &Path, actual: &Path) -> Vec<String> {
    let Some(name) = shown.file_name() else {
        return Vec::new();
    };
    let query = name.to_string_lossy().to_lowercase();
    let display_dir = parent_for_display(shown);
    let mut scored: Vec<(u8, String)> = list_dir_names(parent_for_display(actual), 50)
        .into_iter()
        .filter_map(|entry| {
            let score = similarity_score(&query, &entry.to_lowercase());
            (score > 0).then(|| {
                (
                    score,
                    display_dir.join(&entry).to_string_lossy().into_owned(),
                )
            })
        })
        .collect();
    scored.sort_by_key(|(score, _)| std::cmp::Reverse(*score));
    scored.into_iter().take(5).map(|(_, path)| path).collect()
}

/// The "Path not found" error for a search root, with similar sibling paths.
pub(crate) fn path_not_found_message(shown: &Path, actual: &Path) -> String {
    let mut message = format!("Path not found: {}", shown.display());
    let Some(name) = shown.file_name() else {
        return message;
    };
    let query = name.to_string_lossy().to_lowercase();
    let prefix: String = query.chars().take(3).collect();
    let display_dir = parent_for_display(shown);
    let candidates: Vec<String> = list_dir_names(parent_for_display(actual), 20)
        .into_iter()
        .filter(|entry| {
            let entry = entry.to_lowercase();
            entry.contains(&query) || query.contains(&entry) || entry.starts_with(&prefix)
        })
        .take(5)
        .map(|entry| display_dir.join(entry).to_string_lossy().into_owned())
        .collect();
    if !candidates.is_empty() {
        message.push_str(". Similar paths: ");
        message.push_str(&candidates.join(", "));
    }
    message
}
