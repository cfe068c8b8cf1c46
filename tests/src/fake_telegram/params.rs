//! A method's parameters as Telegram reads them: the query string, then an
//! `application/x-www-form-urlencoded` or JSON body, merged into one object. Telegram sees every
//! value as a string, so a number may come as `"42"` and an object (`reply_markup`) as its JSON
//! text; the getters accept either.

use serde_json::{Map, Value};

use super::reply::ApiError;

/// The merged parameters of one request.
#[derive(Clone, Debug, Default)]
pub(super) struct Params(Map<String, Value>, Vec<FilePart>);

/// A file part of a `multipart/form-data` body.
#[derive(Clone, Debug)]
pub struct FilePart {
    pub field: String,
    pub file_name: String,
    pub content_type: String,
    pub bytes: bytes::Bytes,
}

/// The text fields and file parts of a `multipart/form-data` body; `None` when it does not parse.
pub fn form_data(content_type: &str, body: &[u8]) -> Option<(Map<String, Value>, Vec<FilePart>)> {
    let mut fields = Map::new();
    let files = multipart(content_type, body, &mut fields).ok()?;
    Some((fields, files))
}

impl Params {
    /// Parses the query string and the body (by its content type; JSON or form when unnamed).
    pub(super) fn parse(
        query: Option<&str>,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<Self, ApiError> {
        let mut params = Map::new();
        if let Some(query) = query {
            params.extend(form_pairs(query.as_bytes()));
        }
        let content_type = content_type.unwrap_or_default().to_ascii_lowercase();
        let trimmed = body.trim_ascii();
        if trimmed.is_empty() {
            return Ok(Self(params, Vec::new()));
        }
        if content_type.starts_with("multipart/form-data") {
            let files = multipart(&content_type, body, &mut params)?;
            return Ok(Self(params, files));
        }
        let form = content_type.starts_with("application/x-www-form-urlencoded")
            || (!content_type.contains("json") && trimmed.first() != Some(&b'{'));
        if form {
            params.extend(form_pairs(body));
            return Ok(Self(params, Vec::new()));
        }
        match serde_json::from_slice::<Value>(trimmed) {
            Ok(Value::Object(object)) => params.extend(object),
            Ok(_) => {}
            Err(_) => return Err(ApiError::bad("can't parse JSON object")),
        }
        Ok(Self(params, Vec::new()))
    }

    /// The file parts of a multipart body.
    pub(super) fn files(&self) -> &[FilePart] {
        &self.1
    }

    /// All parameters as one JSON object, as recorded.
    pub(super) fn to_json(&self) -> Value {
        Value::Object(self.0.clone())
    }

    /// Whether `name` is present and not `null` or an empty string.
    pub(super) fn has(&self, name: &str) -> bool {
        match self.0.get(name) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(_) => true,
        }
    }

    /// `name` as a string: strings as they are, numbers and booleans as their text.
    pub(super) fn str(&self, name: &str) -> Option<String> {
        match self.0.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }

    /// `name` as an integer (a JSON number or a numeric string).
    pub(super) fn int(&self, name: &str) -> Option<i64> {
        match self.0.get(name)? {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// `name` as a flag: `true`, `"true"` or `"1"`.
    pub(super) fn flag(&self, name: &str) -> bool {
        match self.0.get(name) {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s == "true" || s == "1",
            Some(Value::Number(n)) => n.as_i64().is_some_and(|n| n != 0),
            _ => false,
        }
    }

    /// `name` as a JSON value: objects and arrays as they are, a string parsed as JSON text.
    /// `Ok(None)` when absent or empty; `Err(())` when the string is not JSON.
    pub(super) fn json(&self, name: &str) -> Result<Option<Value>, ()> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => serde_json::from_str(s).map(Some).map_err(|_| ()),
            Some(other) => Ok(Some(other.clone())),
        }
    }
}

/// The `name=value` pairs of a query string or form body, percent-decoded.
fn form_pairs(text: &[u8]) -> impl Iterator<Item = (String, Value)> + '_ {
    text.split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut halves = pair.splitn(2, |&b| b == b'=');
            let name = decode_component(halves.next().unwrap_or_default(), true);
            let value = decode_component(halves.next().unwrap_or_default(), true);
            (name, Value::String(value))
        })
}

/// Percent-decodes `text` (and `+` as a space when `plus_is_space`), lossily as UTF-8.
pub(super) fn decode_component(text: &[u8], plus_is_space: bool) -> String {
    let mut out = Vec::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' => {
                let hex = text
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(byte) => {
                        out.push(byte);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            byte => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The parts of a `multipart/form-data` body: text parts into `params` (a file part is recorded
/// there as `{"file_name", "size"}`), file parts returned.
fn multipart(
    content_type: &str,
    body: &[u8],
    params: &mut Map<String, Value>,
) -> Result<Vec<FilePart>, ApiError> {
    let bad = || ApiError::bad("can't parse the multipart/form-data body");
    let boundary = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"').to_owned())
        .ok_or_else(bad)?;
    let delimiter = format!("--{boundary}").into_bytes();
    let find = |hay: &[u8], needle: &[u8], from: usize| {
        hay.get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)
            .map(|p| p + from)
    };
    let mut files = Vec::new();
    let mut at = find(body, &delimiter, 0).ok_or_else(bad)? + delimiter.len();
    loop {
        if body.get(at..at + 2) == Some(b"--") {
            return Ok(files);
        }
        at += 2; // CRLF after the delimiter
        let head_end = find(body, b"\r\n\r\n", at).ok_or_else(bad)?;
        let head = String::from_utf8_lossy(&body[at..head_end]).into_owned();
        let next = find(body, &delimiter, head_end + 4).ok_or_else(bad)?;
        let content = &body[head_end + 4..next.saturating_sub(2)];
        let attribute = |name: &str| {
            let key = format!("{name}=\"");
            let start = head.find(&key)? + key.len();
            let len = head[start..].find('"')?;
            Some(head[start..start + len].to_owned())
        };
        let field = attribute("name").ok_or_else(bad)?;
        match attribute("filename") {
            Some(file_name) => {
                let content_type = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .starts_with("content-type:")
                            .then(|| l[13..].trim().to_owned())
                    })
                    .unwrap_or_default();
                params.insert(
                    field.clone(),
                    serde_json::json!({"file_name": file_name, "size": content.len()}),
                );
                files.push(FilePart {
                    field,
                    file_name,
                    content_type,
                    bytes: bytes::Bytes::copy_from_slice(content),
                });
            }
            None => {
                let text = String::from_utf8_lossy(content).into_owned();
                params.insert(field, Value::String(text));
            }
        }
        at = next + delimiter.len();
    }
}
