//! `read_file`: paginated, line-numbered text reads that stream the file, so
//! a huge file costs only the requested page plus a newline count.

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

use serde_json::{Map, Value, json};

use super::guards;
use super::lines::LineScanner;
use super::suggest;

/// Lines returned when the caller gives no limit.
pub const DEFAULT_READ_LIMIT: usize = 500;
/// Upper bound on `limit`.
pub const MAX_READ_LINES: usize = 2000;
/// Characters kept per line before it is cut with a marker.
pub const MAX_LINE_CHARS: usize = 2000;
/// Character budget for the whole numbered page.
pub const MAX_READ_CHARS: usize = 100_000;

const LARGE_FILE_HINT_BYTES: u64 = 512_000;
const BINARY_SAMPLE_BYTES: usize = 1000;
const READ_BUFFER_BYTES: usize = 64 * 1024;
/// Enough bytes to hold `MAX_LINE_CHARS` characters of any UTF-8 text.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;
const LINE_CUT_MARKER: &str = "... [truncated]";
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The other tools of the session that a refusal may point the model to: a message names only
/// tools the model can call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadHints {
    /// `vision_analyze` (looks at images) is in the session's toolbox.
    pub vision_analyze: bool,
    /// `terminal` (can inspect any file) is in the session's toolbox.
    pub terminal: bool,
}

/// [`read_file_with`] for a session that has no other tool to suggest.
pub fn read_file(path: &Path, offset: usize, limit: usize) -> Value {
    read_file_with(path, offset, limit, ReadHints::default())
}

/// Reads `limit` lines of `path` starting at 1-based line `offset`, rendered
/// as `N|text` lines, and returns Hermes' `read_file` result JSON. Refusals
/// suggest only the tools `hints` says the session has.
///
/// `offset` below 1 is treated as 1; `limit` is clamped to `1..=2000`.
pub fn read_file_with(path: &Path, offset: usize, limit: usize, hints: ReadHints) -> Value {
    read(path, offset, limit, hints, false)
}

/// [`read_file_with`] for a Hermes home's settings file: the page is of the file with its secret
/// values masked (`policy::secrets::mask_settings`), line for line.
pub fn read_settings_with(path: &Path, offset: usize, limit: usize, hints: ReadHints) -> Value {
    read(path, offset, limit, hints, true)
}

fn read(path: &Path, offset: usize, limit: usize, hints: ReadHints, settings: bool) -> Value {
    let offset = offset.max(1);
    let limit = limit.clamp(1, MAX_READ_LINES);
    let shown = path.display();
    if guards::is_blocked_device(path) {
        return device_error(path);
    }
    if let Some(ext) = guards::binary_extension(path) {
        return json!({"error": binary_refusal(path, &ext, hints)});
    }
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            let mut result = failure(format!("File not found: {shown}"));
            let similar = suggest::similar_files(path, path);
            if !similar.is_empty() {
                result.insert("similar_files".into(), json!(similar));
            }
            return Value::Object(result);
        }
        Err(err) => return Value::Object(failure(format!("Failed to read file: {shown}: {err}"))),
    };
    if metadata.is_dir() {
        return Value::Object(failure(format!(
            "Cannot read '{shown}': it is a directory. Use search_files with target='files' to list it."
        )));
    }
    if !metadata.is_file() {
        return device_error(path);
    }
    let page = if settings {
        read_settings_page(path, offset, limit, metadata.len())
    } else {
        read_page(path, offset, limit, metadata.len())
    };
    match page {
        Ok(result) => Value::Object(result),
        Err(err) => Value::Object(failure(format!("Failed to read file: {shown}: {err}"))),
    }
}

/// Why a file with a binary extension is not read, and what the session can use instead.
fn binary_refusal(path: &Path, ext: &str, hints: ReadHints) -> String {
    let shown = path.display();
    let image = guards::is_image_extension(ext);
    let what = if image { "an image" } else { "a binary file" };
    let mut message =
        format!("Cannot read '{shown}' ({ext}): it is {what}, and read_file returns text only.");
    if image && hints.vision_analyze {
        message.push_str(" Use vision_analyze to look at it.");
    } else if hints.terminal {
        message.push_str(" Use terminal to inspect it (e.g. `file`, `xxd | head`).");
    }
    message
}

fn device_error(path: &Path) -> Value {
    json!({"error": format!(
        "Cannot read '{}': this is a device file that would block or produce infinite output.",
        path.display()
    )})
}

/// The common result skeleton Hermes always emits for a read.
fn base_result(
    content: String,
    total_lines: usize,
    file_size: u64,
    truncated: bool,
) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("content".into(), Value::String(content));
    map.insert("total_lines".into(), json!(total_lines));
    map.insert("file_size".into(), json!(file_size));
    map.insert("truncated".into(), Value::Bool(truncated));
    map.insert("is_binary".into(), Value::Bool(false));
    map.insert("is_image".into(), Value::Bool(false));
    map
}

fn failure(message: String) -> Map<String, Value> {
    let mut map = base_result(String::new(), 0, 0, false);
    map.insert("error".into(), Value::String(message));
    map
}

/// Heuristic from Hermes: more than 30% control characters (or, here, bytes
/// that are not valid UTF-8) in the first 1000 bytes means binary.
fn looks_binary(sample: &[u8]) -> bool {
    let text = String::from_utf8_lossy(sample);
    let (mut total, mut odd) = (0usize, 0usize);
    for c in text.chars().take(BINARY_SAMPLE_BYTES) {
        total += 1;
        let control = (c as u32) < 32 && !matches!(c, '\n' | '\r' | '\t');
        odd += usize::from(control || c == char::REPLACEMENT_CHARACTER);
    }
    total > 0 && odd * 10 > total * 3
}

/// Renders one numbered line, cutting it at `MAX_LINE_CHARS` characters.
fn render_line(number: usize, bytes: &[u8], clipped: bool) -> String {
    let text = String::from_utf8_lossy(bytes);
    let cut_at = text.char_indices().nth(MAX_LINE_CHARS).map(|(i, _)| i);
    match cut_at {
        Some(i) => format!("{number}|{}{LINE_CUT_MARKER}", &text[..i]),
        None if clipped => format!("{number}|{text}{LINE_CUT_MARKER}"),
        None => format!("{number}|{text}"),
    }
}

/// Numbered page text plus how many lines were consumed and kept.
struct Page {
    content: String,
    lines_consumed: usize,
    lines_kept: usize,
    over_budget: bool,
}

fn collect_page<R: BufRead>(
    scanner: &mut LineScanner<R>,
    offset: usize,
    limit: usize,
) -> io::Result<Page> {
    let mut page = Page {
        content: String::new(),
        lines_consumed: 0,
        lines_kept: 0,
        over_budget: false,
    };
    let mut chars = 0usize;
    let mut line = Vec::with_capacity(256);
    while page.lines_consumed < limit {
        let Some(clipped) = scanner.next_line_capped(&mut line, MAX_LINE_BYTES)? else {
            break;
        };
        let number = offset + page.lines_consumed;
        page.lines_consumed += 1;
        let bytes = match number {
            1 => line.strip_prefix(UTF8_BOM).unwrap_or(&line),
            _ => &line,
        };
        let rendered = render_line(number, bytes, clipped);
        let addition = rendered.chars().count() + usize::from(page.lines_kept > 0);
        if chars + addition > MAX_READ_CHARS {
            if page.lines_kept == 0 {
                page.content = rendered.chars().take(MAX_READ_CHARS).collect();
                page.lines_kept = 1;
            }
            page.over_budget = true;
            break;
        }
        if page.lines_kept > 0 {
            page.content.push('\n');
        }
        page.content.push_str(&rendered);
        chars += addition;
        page.lines_kept += 1;
    }
    Ok(page)
}

fn read_page(
    path: &Path,
    offset: usize,
    limit: usize,
    file_size: u64,
) -> io::Result<Map<String, Value>> {
    let reader = BufReader::with_capacity(READ_BUFFER_BYTES, File::open(path)?);
    page_of(reader, offset, limit, file_size)
}

/// [`read_page`] of a settings file: read whole (it is small; a larger one is refused), masked,
/// then paged.
fn read_settings_page(
    path: &Path,
    offset: usize,
    limit: usize,
    file_size: u64,
) -> io::Result<Map<String, Value>> {
    let Some(masked) = super::settings::masked_text(path)? else {
        return Ok(failure(format!(
            "Cannot read '{}': a settings file over {} bytes is not shown (its secret values \
             could not be masked).",
            path.display(),
            with_thousands(super::settings::MAX_SETTINGS_BYTES)
        )));
    };
    page_of(
        io::Cursor::new(masked.into_bytes()),
        offset,
        limit,
        file_size,
    )
}

/// One page of what `reader` holds (see [`read_file_with`]).
fn page_of<R: BufRead>(
    mut reader: R,
    offset: usize,
    limit: usize,
    file_size: u64,
) -> io::Result<Map<String, Value>> {
    let sample = reader.fill_buf()?;
    if looks_binary(&sample[..sample.len().min(BINARY_SAMPLE_BYTES)]) {
        let mut result = base_result(String::new(), 0, file_size, false);
        result.insert("is_binary".into(), Value::Bool(true));
        result.insert(
            "error".into(),
            json!("Binary file - cannot display as text. Use appropriate tools to handle this file type."),
        );
        return Ok(result);
    }
    let mut scanner = LineScanner::new(reader);
    let skipped = scanner.skip_lines(offset - 1)?;
    let page = collect_page(&mut scanner, offset, limit)?;
    let total_lines = skipped + page.lines_consumed + scanner.count_remaining()?;

    let end_line = offset + limit - 1;
    let mut truncated = total_lines > end_line;
    let lines_kept = page.lines_kept;
    let mut result = base_result(page.content, total_lines, file_size, truncated);
    if page.over_budget {
        truncated = true;
        let next_offset = offset + lines_kept;
        result.insert("truncated".into(), Value::Bool(true));
        result.insert("truncated_by".into(), json!("bytes"));
        result.insert("next_offset".into(), json!(next_offset));
        result.insert(
            "hint".into(),
            json!(format!(
                "Output truncated at the {}-char read budget after {lines_kept} line(s) \
                 (showing lines {offset}-{} of {total_lines}). Use offset={next_offset} to continue.",
                with_thousands(MAX_READ_CHARS as u64),
                next_offset - 1
            )),
        );
    } else if truncated {
        result.insert(
            "hint".into(),
            json!(format!(
                "Use offset={} to continue reading (showing {offset}-{end_line} of {total_lines} lines)",
                end_line + 1
            )),
        );
    }
    if truncated && file_size > LARGE_FILE_HINT_BYTES && limit > 200 {
        result.insert(
            "_hint".into(),
            json!(format!(
                "This file is large ({} bytes). Consider reading only the section you need \
                 with offset and limit to keep context usage efficient.",
                with_thousands(file_size)
            )),
        );
    }
    Ok(result)
}

/// Formats `1234567` as `1,234,567`.
fn with_thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}
