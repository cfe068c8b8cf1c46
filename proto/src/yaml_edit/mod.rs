//! Comment-preserving edits of config.yaml: set one dotted key by rewriting only its line, verified by re-parsing.
//!
//! The editor understands only the plain subset of YAML that hand-written config files use: block mappings
//! with `key: value` lines. Whenever the file leaves that subset near the key being set, `set` refuses and
//! hands back a snippet to add by hand. Every edit is re-parsed and compared with the intended result before
//! it is returned, so a wrong line edit never reaches disk.

mod file;

use std::fmt;
use std::ops::Range;

pub use file::{read_config, write_atomically};

use serde_yaml::{Mapping, Value};

/// Why an edit could not be made automatically. `manual` is the YAML the user should add by hand.
#[derive(Debug)]
pub enum EditError {
    /// The existing text does not parse; `line`/`column` are 1-based when known.
    Malformed {
        message: String,
        line: Option<usize>,
        column: Option<usize>,
    },
    /// The key is invalid (empty segment, etc.).
    BadKey(String),
    /// The edit cannot be done safely line-wise (flow-style parent, key currently holds a mapping or list,
    /// multi-line scalar, anchors, etc.). `manual` holds the snippet to add by hand, e.g. "model:\n  default: gpt-4o\n".
    Refused { reason: String, manual: String },
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed {
                message,
                line,
                column,
            } => {
                f.write_str("does not parse")?;
                match (line, column) {
                    (Some(line), Some(column)) => write!(f, " at line {line}, column {column}")?,
                    (Some(line), None) => write!(f, " at line {line}")?,
                    _ => {}
                }
                write!(f, ": {message}")
            }
            Self::BadKey(why) => write!(f, "invalid key: {why}"),
            Self::Refused { reason, manual } => write!(
                f,
                "cannot set it safely ({reason}); add this by hand:\n{}",
                manual.trim_end_matches('\n')
            ),
        }
    }
}

impl std::error::Error for EditError {}

/// Parse VALUE typed on the command line as a YAML scalar ("42" -> int, "true" -> bool, "null", "a b" -> string, "'x'" -> string).
/// Anything that parses to a mapping or sequence is allowed too (e.g. "[a, b]") but `set` will then write it in flow style on one line.
///
/// Only flow collections (`[..]`, `{..}`) become collections; text such as `a: b` or `- a` stays a string, and so does
/// anything YAML would silently alter (a ` #` comment, an anchor, a tag, a block scalar indicator).
pub fn parse_cli_value(raw: &str) -> Value {
    let trimmed = raw.trim();
    let literal = || Value::String(raw.to_string());
    let quoted = trimmed.starts_with(['"', '\'']);
    if trimmed.is_empty()
        || trimmed.starts_with(['&', '*', '!', '#', '|', '>', '%', '@', '`'])
        || (!quoted && (trimmed.contains(" #") || trimmed.contains('\n')))
    {
        return literal();
    }
    let flow_collection = trimmed.starts_with(['[', '{']);
    match serde_yaml::from_str::<Value>(raw) {
        Ok(Value::Null) if matches!(trimmed, "null" | "Null" | "NULL" | "~") => Value::Null,
        Ok(value @ (Value::Sequence(_) | Value::Mapping(_))) if flow_collection => value,
        Ok(value @ (Value::Bool(_) | Value::Number(_) | Value::String(_))) => value,
        _ => literal(),
    }
}

/// Look up a dotted key (e.g. "model.default") in YAML text. Ok(None) when absent. Errors when text is malformed.
pub fn get(text: &str, key: &str) -> Result<Option<Value>, EditError> {
    let path = split_key(key)?;
    let tree = parse(text)?;
    Ok(lookup(&tree, &path).cloned())
}

/// Return new text where KEY is set to VALUE, everything else byte-identical where possible.
pub fn set(text: &str, key: &str, value: &Value) -> Result<String, EditError> {
    let path = split_key(key)?;
    let manual = manual_snippet(&path, value);
    let refuse = |reason: String| EditError::Refused {
        reason,
        manual: manual.clone(),
    };
    let lines = split_lines(text);
    let body_start = document_body_start(&lines).map_err(refuse)?;
    let old_tree = parse(text)?;
    if lookup(&old_tree, &path) == Some(value) {
        return Ok(text.to_string());
    }
    let editor = LineEditor {
        text,
        lines: &lines,
        path: &path,
        old_tree: &old_tree,
    };
    let new_text = editor.edit(body_start, value).map_err(refuse)?;
    verify(&old_tree, &new_text, &path, value).map_err(refuse)?;
    Ok(new_text)
}

/// Remove a dotted key and its whole value block (e.g. `mcp_servers.github`). Ok(None) when the
/// key is absent. The result is verified as `set`'s is: the tree with only that key gone.
pub fn remove(text: &str, key: &str) -> Result<Option<String>, EditError> {
    let path = split_key(key)?;
    let old_tree = parse(text)?;
    if lookup(&old_tree, &path).is_none() {
        return Ok(None);
    }
    let refuse = |reason: String| EditError::Refused {
        reason,
        manual: format!("(delete `{key}` and the lines under it)"),
    };
    let lines = split_lines(text);
    let mut range = document_body_start(&lines).map_err(refuse)?..lines.len();
    let mut found = None;
    for (depth, segment) in path.iter().enumerate() {
        let owner = if depth == 0 {
            "the file".to_string()
        } else {
            path[..depth].join(".")
        };
        let block = scan_block(&lines, range.clone(), &owner).map_err(refuse)?;
        let Some((idx, key_line)) = block
            .children
            .into_iter()
            .find(|(_, k)| key_matches(&k.key, segment))
        else {
            return Err(refuse(format!(
                "`{}` is not written as a block",
                path[..=depth].join(".")
            )));
        };
        range = idx + 1..block_end(&lines, idx, key_line.indent);
        found = Some((idx, range.end));
    }
    let Some((first, end)) = found else {
        return Err(EditError::BadKey("empty key".into()));
    };
    let cut_start = lines[first].start;
    let cut_end = lines.get(end).map_or(text.len(), |l| l.start);
    let new_text = format!("{}{}", &text[..cut_start], &text[cut_end..]);
    let mut expected = old_tree.clone();
    if let Some((last, parents)) = path.split_last() {
        let parent = if parents.is_empty() {
            Some(&mut expected)
        } else {
            lookup_mut(&mut expected, parents)
        };
        if let Some(Value::Mapping(map)) = parent {
            let k = map.keys().find(|k| key_matches(k, last)).cloned();
            if let Some(k) = k {
                map.remove(&k);
            }
        }
    }
    let new_tree: Value = if new_text.trim().is_empty() {
        Value::Null
    } else {
        serde_yaml::from_str(&new_text)
            .map_err(|e| refuse(format!("the edited file would not parse: {e}")))?
    };
    // A mapping left empty reads back as null (`mcp_servers:` with nothing under it).
    if empty_as_null(new_tree) != empty_as_null(expected) {
        return Err(refuse(
            "the line edit did not give the expected result".into(),
        ));
    }
    Ok(Some(new_text))
}

fn empty_as_null(value: Value) -> Value {
    match value {
        Value::Mapping(map) if map.is_empty() => Value::Null,
        Value::Mapping(map) => Value::Mapping(
            map.into_iter()
                .map(|(k, v)| (k, empty_as_null(v)))
                .collect(),
        ),
        other => other,
    }
}

fn lookup_mut<'v>(tree: &'v mut Value, path: &[&str]) -> Option<&'v mut Value> {
    path.iter().try_fold(tree, |node, segment| match node {
        Value::Mapping(map) => map
            .iter_mut()
            .find(|(k, _)| key_matches(k, segment))
            .map(|(_, v)| v),
        _ => None,
    })
}

fn split_key(key: &str) -> Result<Vec<&str>, EditError> {
    if key.is_empty() {
        return Err(EditError::BadKey("the key is empty".into()));
    }
    let path: Vec<&str> = key.split('.').collect();
    let problem = if path.iter().any(|segment| segment.is_empty()) {
        Some("has an empty segment")
    } else if path.iter().any(|segment| segment.trim() != *segment) {
        Some("has a segment with leading or trailing spaces")
    } else if key.chars().any(char::is_control) {
        Some("contains control characters")
    } else {
        None
    };
    match problem {
        Some(problem) => Err(EditError::BadKey(format!("`{key}` {problem}"))),
        None => Ok(path),
    }
}

fn parse(text: &str) -> Result<Value, EditError> {
    serde_yaml::from_str(text).map_err(|err| {
        let location = err.location();
        let mut message = err.to_string();
        if let Some(location) = &location {
            let position = format!(" at line {} column {}", location.line(), location.column());
            message = message.replacen(&position, "", 1);
        }
        EditError::Malformed {
            message,
            line: location.as_ref().map(|l| l.line()),
            column: location.as_ref().map(|l| l.column()),
        }
    })
}

/// How mapping keys in the file compare with a segment of the dotted path (`8080` matches "8080").
fn key_matches(key: &Value, segment: &str) -> bool {
    match key {
        Value::String(s) => s == segment,
        Value::Number(n) => n.to_string() == segment,
        Value::Bool(b) => b.to_string() == segment,
        _ => false,
    }
}

fn lookup<'v>(tree: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(tree, |node, segment| match node {
        Value::Mapping(map) => map
            .iter()
            .find(|(k, _)| key_matches(k, segment))
            .map(|(_, v)| v),
        _ => None,
    })
}

/// The tree `set` must produce: `tree` with `path` set to `value`, creating mappings on the way.
fn set_path(tree: &mut Value, path: &[&str], value: Value) -> Option<()> {
    let Some((first, rest)) = path.split_first() else {
        *tree = value;
        return Some(());
    };
    if tree.is_null() {
        *tree = Value::Mapping(Mapping::new());
    }
    let Value::Mapping(map) = tree else {
        return None;
    };
    let key = map.keys().find(|k| key_matches(k, first)).cloned();
    let key = key.unwrap_or_else(|| Value::String((*first).to_string()));
    set_path(map.entry(key).or_insert(Value::Null), rest, value)
}

fn verify(old_tree: &Value, new_text: &str, path: &[&str], value: &Value) -> Result<(), String> {
    let new_tree: Value = serde_yaml::from_str(new_text)
        .map_err(|err| format!("the edited file would not parse: {err}"))?;
    let mut expected = old_tree.clone();
    set_path(&mut expected, path, value.clone())
        .ok_or_else(|| "a parent of the key is not a mapping".to_string())?;
    if new_tree == expected {
        Ok(())
    } else {
        Err("the line edit did not give the expected result".into())
    }
}

fn manual_snippet(path: &[&str], value: &Value) -> String {
    let nested = path.iter().rev().fold(value.clone(), |inner, segment| {
        let mut map = Mapping::new();
        map.insert(Value::String((*segment).to_string()), inner);
        Value::Mapping(map)
    });
    serde_yaml::to_string(&nested).unwrap_or_default()
}

fn describe(value: Option<&Value>) -> &'static str {
    match value {
        Some(Value::String(_)) => "a string",
        Some(Value::Number(_)) => "a number",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Null) => "null",
        Some(Value::Sequence(_)) => "a list",
        Some(Value::Mapping(_)) => "a flow-style mapping",
        Some(Value::Tagged(_)) => "a tagged value",
        None => "not a plain mapping",
    }
}

// ---------------------------------------------------------------------------------------------
// Rendering values on one line.

fn render_value(value: &Value, in_flow: bool) -> Result<String, String> {
    let flow = |item: &Value| render_value(item, true);
    Ok(match value {
        Value::Sequence(items) => {
            let items: Vec<String> = items.iter().map(flow).collect::<Result<_, _>>()?;
            format!("[{}]", items.join(", "))
        }
        Value::Mapping(map) => {
            let entries = map
                .iter()
                .map(|(k, v)| Ok(format!("{}: {}", flow(k)?, flow(v)?)));
            format!(
                "{{{}}}",
                entries.collect::<Result<Vec<_>, String>>()?.join(", ")
            )
        }
        Value::Tagged(_) => return Err("tagged values cannot be written automatically".into()),
        // Inside `[..]`/`{..}` these characters end a plain scalar.
        Value::String(s) if in_flow => match render_scalar(value)? {
            plain
                if !plain.starts_with(['\'', '"'])
                    && plain.contains([',', '[', ']', '{', '}', '#', ':', '?']) =>
            {
                double_quoted(s)
            }
            plain => plain,
        },
        scalar => render_scalar(scalar)?,
    })
}

fn render_scalar(value: &Value) -> Result<String, String> {
    let rendered = serde_yaml::to_string(value).map_err(|err| err.to_string())?;
    let rendered = rendered.strip_suffix('\n').unwrap_or(&rendered);
    match value {
        // serde_yaml follows YAML 1.2; quote the YAML 1.1 booleans too so no reader takes them for one.
        Value::String(s) if is_yaml11_bool(s) => Ok(format!("'{s}'")),
        _ if !rendered.contains('\n') => Ok(rendered.to_string()),
        Value::String(s) => Ok(double_quoted(s)),
        _ => Err("the value cannot be written on one line".into()),
    }
}

fn is_yaml11_bool(s: &str) -> bool {
    let words = ["y", "yes", "n", "no", "on", "off", "true", "false"];
    words
        .iter()
        .any(|w| s == *w || s == w.to_uppercase() || s == w[..1].to_uppercase() + &w[1..])
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------------------------
// Reading the file line by line.

struct Line<'a> {
    /// Byte offset of the line in the file.
    start: usize,
    /// Byte offset just past the line ending.
    end: usize,
    /// The line without its line ending.
    text: &'a str,
    indent: usize,
}

impl Line<'_> {
    fn is_content(&self) -> bool {
        let trimmed = self.text.trim_start();
        !trimmed.is_empty() && !trimmed.starts_with('#')
    }

    fn is_sequence_entry(&self) -> bool {
        let rest = &self.text[self.indent..];
        rest == "-" || rest.starts_with("- ") || rest.starts_with("-\t")
    }
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut start = 0;
    text.split_inclusive('\n')
        .map(|raw| {
            let body = raw.strip_suffix('\n').unwrap_or(raw);
            let body = body.strip_suffix('\r').unwrap_or(body);
            let line = Line {
                start,
                end: start + raw.len(),
                text: body,
                indent: body.len() - body.trim_start_matches(' ').len(),
            };
            start = line.end;
            line
        })
        .collect()
}

/// Index of the first line after an optional leading `---`; refuses any other document marker.
fn document_body_start(lines: &[Line]) -> Result<usize, String> {
    let mut body_start = 0;
    let mut seen_content = false;
    for (idx, line) in lines.iter().enumerate() {
        let marker = ["---", "..."]
            .iter()
            .find_map(|m| line.text.strip_prefix(m));
        match marker {
            Some(rest) if rest.is_empty() || rest.starts_with([' ', '\t']) => {
                let rest = rest.trim_start();
                if seen_content
                    || line.text.starts_with("...")
                    || !(rest.is_empty() || rest.starts_with('#'))
                {
                    return Err(format!(
                        "line {} is a YAML document marker; only a single document is supported",
                        idx + 1
                    ));
                }
                body_start = idx + 1;
                seen_content = true;
            }
            _ => seen_content |= line.is_content(),
        }
    }
    Ok(body_start)
}

/// A `key: value` line. Offsets are byte offsets within the line.
struct KeyLine {
    key: Value,
    indent: usize,
    value: Inline,
}

enum Inline {
    /// Nothing (or only a comment) after the colon: the value, if any, is on the following lines.
    Empty { colon_end: usize },
    /// A one-line scalar or flow collection.
    Value { start: usize, end: usize },
    /// Something this editor does not rewrite; the text says why.
    Unsupported(&'static str),
}

fn parse_key_line(line: &Line) -> Option<KeyLine> {
    let rest = &line.text[line.indent..];
    let key_len = match rest.chars().next()? {
        '"' | '\'' => quoted_len(rest)?,
        '[' | ']' | '{' | '}' | ',' | '#' | '&' | '*' | '!' | '|' | '>' | '%' | '@' | '`' => {
            return None;
        }
        '-' | '?' | ':' if rest.len() == 1 || rest[1..].starts_with([' ', '\t']) => return None,
        _ => plain_key_len(rest)?,
    };
    let after_key = &rest[key_len..];
    let colon = key_len + after_key.len() - after_key.trim_start_matches(' ').len();
    let after_colon = rest[colon..].strip_prefix(':')?;
    if !(after_colon.is_empty() || after_colon.starts_with([' ', '\t'])) {
        return None;
    }
    let key = serde_yaml::from_str::<Value>(rest[..key_len].trim_end()).ok()?;
    if !matches!(key, Value::String(_) | Value::Number(_) | Value::Bool(_)) {
        return None;
    }
    let colon_end = line.indent + colon + 1;
    Some(KeyLine {
        key,
        indent: line.indent,
        value: parse_inline(line.text, colon_end),
    })
}

/// Length of a plain key: up to the first `:` followed by a space or the end of the line.
fn plain_key_len(rest: &str) -> Option<usize> {
    let bytes = rest.as_bytes();
    for (i, byte) in bytes.iter().enumerate() {
        let next = bytes.get(i + 1);
        match byte {
            b':' if matches!(next, None | Some(b' ' | b'\t')) => return Some(i),
            b'#' if i > 0 && matches!(bytes[i - 1], b' ' | b'\t') => return None,
            _ => {}
        }
    }
    None
}

/// Length of a quoted scalar at the start of `s`, including both quotes; None when it does not close on this line.
fn quoted_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let quote = *bytes.first()?;
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 2,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            byte if byte == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Length of a flow collection at the start of `s`; None when it does not close on this line.
fn flow_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        let after_separator =
            i > 0 && matches!(bytes[i - 1], b'[' | b'{' | b',' | b':' | b' ' | b'\t');
        match bytes[i] {
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            b'"' | b'\'' if after_separator => {
                i += quoted_len(&s[i..])?;
                continue;
            }
            b'#' if i > 0 && matches!(bytes[i - 1], b' ' | b'\t') => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

fn parse_inline(text: &str, colon_end: usize) -> Inline {
    let after_colon = &text[colon_end..];
    let start = colon_end + after_colon.len() - after_colon.trim_start_matches([' ', '\t']).len();
    let rest = &text[start..];
    let len = match rest.chars().next() {
        None | Some('#') => return Inline::Empty { colon_end },
        Some('&') => return Inline::Unsupported("it has a YAML anchor (&)"),
        Some('*') => return Inline::Unsupported("it is a YAML alias (*)"),
        Some('!') => return Inline::Unsupported("it has a YAML tag (!)"),
        Some('|' | '>') => return Inline::Unsupported("it is a multi-line block scalar"),
        Some('"' | '\'') => quoted_len(rest),
        Some('[' | '{') => flow_len(rest),
        Some(_) => {
            let comment = [" #", "\t#"].iter().filter_map(|c| rest.find(c)).min();
            Some(rest[..comment.unwrap_or(rest.len())].trim_end().len())
        }
    };
    let Some(len) = len else {
        return Inline::Unsupported("its value continues on the next line");
    };
    let tail = rest[len..].trim_start_matches([' ', '\t']);
    if !(tail.is_empty() || tail.starts_with('#')) {
        return Inline::Unsupported("there is unexpected text after its value");
    }
    Inline::Value {
        start,
        end: start + len,
    }
}

/// The direct children of one block mapping.
#[derive(Default)]
struct Block {
    child_indent: Option<usize>,
    children: Vec<(usize, KeyLine)>,
    last_content: Option<usize>,
}

fn scan_block(lines: &[Line], range: Range<usize>, owner: &str) -> Result<Block, String> {
    let mut block = Block::default();
    for idx in range {
        let line = &lines[idx];
        if !line.is_content() {
            continue;
        }
        block.last_content = Some(idx);
        let child_indent = *block.child_indent.get_or_insert(line.indent);
        if line.indent > child_indent {
            continue;
        }
        if line.indent == child_indent {
            if let Some(key_line) = parse_key_line(line) {
                block.children.push((idx, key_line));
                continue;
            }
            if line.is_sequence_entry() {
                // A list may sit at the same indent as the key that holds it.
                match block.children.last() {
                    None => return Err(format!("{owner} is a list, not a mapping")),
                    Some((_, previous)) if matches!(previous.value, Inline::Empty { .. }) => {
                        continue;
                    }
                    Some(_) => {}
                }
            }
        }
        return Err(format!(
            "line {} is not a simple `key: value` line",
            idx + 1
        ));
    }
    Ok(block)
}

/// Index of the first line after the value block of the key on `key_idx`.
fn block_end(lines: &[Line], key_idx: usize, indent: usize) -> usize {
    lines
        .iter()
        .enumerate()
        .skip(key_idx + 1)
        .find(|(_, l)| {
            l.is_content() && (l.indent < indent || (l.indent == indent && !l.is_sequence_entry()))
        })
        .map_or(lines.len(), |(idx, _)| idx)
}

struct LineEditor<'a> {
    text: &'a str,
    lines: &'a [Line<'a>],
    path: &'a [&'a str],
    old_tree: &'a Value,
}

impl LineEditor<'_> {
    fn name(&self, depth: usize) -> String {
        format!("`{}`", self.path[..=depth].join("."))
    }

    /// Walk the path through the block mappings and rewrite or insert the one line that holds the key.
    fn edit(&self, body_start: usize, value: &Value) -> Result<String, String> {
        if !matches!(self.old_tree, Value::Null | Value::Mapping(_)) {
            return Err("the top level of the file is not a mapping".into());
        }
        let rendered = render_value(value, false)?;
        let mut range = body_start..self.lines.len();
        let mut parent: Option<(usize, usize)> = None; // (line index, indent) of the enclosing key
        for (depth, segment) in self.path.iter().enumerate() {
            let owner = if depth == 0 {
                "the top level".to_string()
            } else {
                self.name(depth - 1)
            };
            let block = scan_block(self.lines, range.clone(), &owner)?;
            let found = block
                .children
                .iter()
                .find(|(_, kl)| key_matches(&kl.key, segment));
            let Some((idx, key_line)) = found else {
                return self.insert_missing(depth, &block, parent, &rendered);
            };
            let line = &self.lines[*idx];
            let end = block_end(self.lines, *idx, key_line.indent);
            let first_below = self.lines[*idx + 1..end].iter().find(|l| l.is_content());
            let is_last = depth + 1 == self.path.len();
            match (&key_line.value, is_last) {
                (Inline::Unsupported(why), _) => {
                    return Err(format!("{}: {why}", self.name(depth)));
                }
                (Inline::Value { start, end }, true) => {
                    if first_below.is_some() {
                        return Err(format!(
                            "{}: its value continues on the next line",
                            self.name(depth)
                        ));
                    }
                    return Ok(self.replace(line, *start..*end, &rendered));
                }
                (Inline::Empty { colon_end }, true) => {
                    let Some(below) = first_below else {
                        return Ok(self.replace(
                            line,
                            *colon_end..*colon_end,
                            &format!(" {rendered}"),
                        ));
                    };
                    let holds = if below.is_sequence_entry() {
                        "holds a list"
                    } else if parse_key_line(below).is_some() {
                        "holds a mapping"
                    } else {
                        "has a value spanning several lines"
                    };
                    return Err(format!("{} {holds}", self.name(depth)));
                }
                (Inline::Value { .. }, false) => {
                    let current = lookup(self.old_tree, &self.path[..=depth]);
                    return Err(format!(
                        "{} is {}, not a block mapping",
                        self.name(depth),
                        describe(current)
                    ));
                }
                (Inline::Empty { .. }, false) => {
                    parent = Some((*idx, key_line.indent));
                    range = *idx + 1..end;
                }
            }
        }
        Err("the key was not found".into())
    }

    fn replace(&self, line: &Line, span: Range<usize>, new: &str) -> String {
        let text = self.text;
        format!(
            "{}{new}{}",
            &text[..line.start + span.start],
            &text[line.start + span.end..]
        )
    }

    /// Add `path[depth..]` as new lines at the end of `block` (or beneath its parent when it is empty).
    fn insert_missing(
        &self,
        depth: usize,
        block: &Block,
        parent: Option<(usize, usize)>,
        rendered: &str,
    ) -> Result<String, String> {
        let unit = self
            .lines
            .iter()
            .filter(|l| l.is_content() && l.indent > 0)
            .map(|l| l.indent)
            .min();
        let unit = unit.unwrap_or(2);
        let indent = block
            .child_indent
            .or(parent.map(|(_, indent)| indent + unit))
            .unwrap_or(0);
        let after_line = block.last_content.or(parent.map(|(idx, _)| idx));
        let position = match after_line {
            Some(idx) if depth > 0 => self.lines[idx].end,
            _ => self.text.len(),
        };
        let mut new_lines = Vec::new();
        for (offset, segment) in self.path[depth..].iter().enumerate() {
            let pad = " ".repeat(indent + offset * unit);
            let key = render_scalar(&Value::String((*segment).to_string()))?;
            if depth + offset + 1 == self.path.len() {
                new_lines.push(format!("{pad}{key}: {rendered}"));
            } else {
                new_lines.push(format!("{pad}{key}:"));
            }
        }
        let eol = if self.text.contains("\r\n") {
            "\r\n"
        } else {
            "\n"
        };
        let (before, after) = self.text.split_at(position);
        let block_text = new_lines.join(eol);
        Ok(if before.is_empty() || before.ends_with('\n') {
            format!("{before}{block_text}{eol}{after}")
        } else {
            // End of a file without a final newline: keep it that way.
            format!("{before}{eol}{block_text}{after}")
        })
    }
}

#[cfg(test)]
mod tests;
