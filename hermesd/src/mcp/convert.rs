//! What crosses between an MCP server and the model: tool names (`mcp__<server>__<tool>`, Hermes
//! 0.19's, every character outside `[A-Za-z0-9_]` made `_`), input schemas made acceptable to
//! providers, and call results turned into the JSON the model reads (`{"result": …}` or
//! `{"error": …}`, as Hermes returns them). Results are read as MCP's wire JSON, so this file is
//! independent of the SDK's types.

use std::path::Path;

use serde_json::{Map, Value, json};

/// Every tool of a server is named `mcp__<server>__<tool>`.
pub const PREFIX: &str = "mcp__";

/// Hermes' sanitising of one part of a name.
pub fn sanitize(part: &str) -> String {
    part.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model calls a server's tool by.
pub fn tool_name(server: &str, tool: &str) -> String {
    format!("{PREFIX}{}__{}", sanitize(server), sanitize(tool))
}

/// A server's input schema as providers accept it: an object with `properties`; `definitions`
/// as `$defs`; `[T, "null"]` types as `T` (nullable); a union with `null` as its other branch;
/// objects repaired (a type, `properties`, `required` naming only real properties); and the
/// top-level combinators providers refuse dropped.
pub fn schema_for_providers(schema: Option<&Value>) -> Value {
    let mut schema = match schema {
        Some(Value::Object(map)) if !map.is_empty() => Value::Object(map.clone()),
        _ => return json!({"type": "object", "properties": {}}),
    };
    repair(&mut schema);
    if let Value::Object(map) = &mut schema {
        map.insert("type".into(), json!("object"));
        if !map.get("properties").is_some_and(Value::is_object) {
            map.insert("properties".into(), json!({}));
        }
        for key in ["allOf", "anyOf", "oneOf", "enum", "not"] {
            map.remove(key);
        }
    }
    schema
}

fn repair(node: &mut Value) {
    let Value::Object(map) = node else { return };
    if let Some(defs) = map.remove("definitions") {
        map.entry("$defs").or_insert(defs);
    }
    if let Some(Value::String(r)) = map.get_mut("$ref")
        && let Some(rest) = r.strip_prefix("#/definitions/")
    {
        *r = format!("#/$defs/{rest}");
    }
    if let Some(Value::Array(types)) = map.get("type").cloned() {
        let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        let nullable = non_null.len() < types.len();
        match non_null.as_slice() {
            [] => {
                map.insert("type".into(), json!("null"));
            }
            [one] => {
                map.insert("type".into(), (*one).clone());
            }
            many => {
                map.remove("type");
                let branches: Vec<Value> = many.iter().map(|t| json!({"type": t})).collect();
                map.insert("anyOf".into(), Value::Array(branches));
            }
        }
        if nullable {
            map.insert("nullable".into(), json!(true));
        }
    }
    collapse_null_union(map);
    for key in ["properties", "$defs", "patternProperties"] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(repair);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = map.get_mut(key) {
            repair(child);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(branches)) = map.get_mut(key) {
            branches.iter_mut().for_each(repair);
        }
    }
    let is_object = map.get("type").is_some_and(|t| t == "object")
        || (!map.contains_key("type")
            && (map.contains_key("properties") || map.contains_key("required")));
    if is_object {
        map.insert("type".into(), json!("object"));
        if !map.get("properties").is_some_and(Value::is_object) {
            map.insert("properties".into(), json!({}));
        }
        let names: Vec<String> = map
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        if let Some(Value::Array(required)) = map.get_mut("required") {
            required.retain(|r| r.as_str().is_some_and(|r| names.iter().any(|n| n == r)));
            if required.is_empty() {
                map.remove("required");
            }
        }
    }
}

/// `anyOf: [X, {type: null}]` becomes X, nullable, keeping the outer title and description.
fn collapse_null_union(map: &mut Map<String, Value>) {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(branches)) = map.get(key) else {
            continue;
        };
        let rest: Vec<&Value> = branches
            .iter()
            .filter(|b| b.get("type") != Some(&json!("null")))
            .collect();
        if rest.len() != 1 || rest.len() == branches.len() {
            continue;
        }
        let Value::Object(branch) = rest[0].clone() else {
            continue;
        };
        map.remove(key);
        for (k, v) in branch {
            map.entry(k).or_insert(v);
        }
        map.entry("nullable").or_insert(json!(true));
    }
}

/// Where a result's images and files are written: `<cache>/<kind>_<12 hex><ext>`.
pub struct Attachments<'a> {
    pub dir: &'a Path,
}

impl Attachments<'_> {
    fn save(&self, kind: &str, name: &str, ext: &str, bytes: &[u8]) -> Result<String, String> {
        std::fs::create_dir_all(self.dir)
            .map_err(|e| format!("cannot create {}: {e}", self.dir.display()))?;
        let mut random = [0u8; 6];
        getrandom::fill(&mut random).map_err(|e| format!("no randomness: {e}"))?;
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        let name = sanitize(name);
        let file = if name.is_empty() {
            format!("{kind}_{hex}{ext}")
        } else {
            format!("{kind}_{hex}_{name}{ext}")
        };
        let path = self.dir.join(file);
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    }
}

/// The largest image or file a result may carry into the cache.
const MAX_ATTACHMENT: usize = 50 * 1024 * 1024;

fn extension(mime: &str) -> &'static str {
    match mime {
        "image/png" => ".png",
        "image/jpeg" | "image/jpg" => ".jpg",
        "image/gif" => ".gif",
        "image/webp" => ".webp",
        "audio/wav" | "audio/x-wav" => ".wav",
        "audio/mpeg" => ".mp3",
        "audio/ogg" => ".ogg",
        _ => "",
    }
}

fn decode(data: &str) -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    if data.len() > MAX_ATTACHMENT / 3 * 4 + 4 {
        return Err("too large to cache".into());
    }
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| format!("could not be decoded: {e}"))
}

/// One content block as text for the model, or nothing for a block it cannot use.
fn block_text(block: &Value, server: &str, files: &Attachments<'_>) -> Option<String> {
    let kind = block
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let text_of = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_string);
    match kind {
        "text" => text_of(block, "text"),
        "image" | "audio" => {
            let mime = text_of(block, "mimeType").unwrap_or_default();
            let data = text_of(block, "data")?;
            let saved =
                decode(&data).and_then(|bytes| files.save(kind, "", extension(&mime), &bytes));
            Some(match saved {
                Ok(path) => format!("MEDIA:{path}"),
                Err(e) => format!("[MCP {kind} ({mime}) {e}]"),
            })
        }
        "resource_link" => {
            let uri = text_of(block, "uri").unwrap_or_default();
            let mut line = format!("[MCP resource link: uri={uri}");
            if let Some(name) = text_of(block, "name") {
                line.push_str(&format!(", name={name}"));
            }
            if let Some(mime) = text_of(block, "mimeType") {
                line.push_str(&format!(", mimeType={mime}"));
            }
            line.push_str(&format!(
                " — fetch it with {}]",
                tool_name(server, "read_resource")
            ));
            Some(line)
        }
        "resource" => {
            let resource = block.get("resource")?;
            if let Some(text) = text_of(resource, "text") {
                return Some(text);
            }
            let blob = text_of(resource, "blob")?;
            let mime = text_of(resource, "mimeType").unwrap_or_else(|| "unknown type".into());
            let uri = text_of(resource, "uri").unwrap_or_default();
            let name = uri.rsplit('/').next().unwrap_or_default().to_string();
            Some(
                match decode(&blob).and_then(|bytes| {
                    let len = bytes.len();
                    files.save("doc", &name, "", &bytes).map(|p| (p, len))
                }) {
                    Ok((path, len)) => format!(
                        "[MCP resource saved to {path} ({mime}, {len} bytes) — read it with read_file or terminal tools]"
                    ),
                    Err(e) => format!("[MCP embedded resource {e}]"),
                },
            )
        }
        _ => None,
    }
}

/// Whether converting `result` writes files: an image or audio block, or an embedded resource
/// given as a blob. Text alone is converted in place, off no thread pool.
pub fn writes_files(result: &Value) -> bool {
    result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|block| match block.get("type").and_then(Value::as_str) {
            Some("image" | "audio") => true,
            Some("resource") => block
                .get("resource")
                .is_some_and(|r| r.get("text").is_none() && r.get("blob").is_some()),
            _ => false,
        })
}

/// A `tools/call` result (wire JSON) as the model reads it: `{"error": …}` when the server says
/// it failed; else `{"result": text}`, with `structuredContent` beside the text when both came
/// (or as the result when there is no text).
pub fn call_result(result: &Value, server: &str, files: &Attachments<'_>) -> Value {
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        let text: String = blocks
            .iter()
            .filter_map(|b| {
                b.get("text")
                    .or_else(|| b.get("resource").and_then(|r| r.get("text")))
                    .and_then(Value::as_str)
            })
            .collect();
        let text = if text.is_empty() {
            "MCP tool returned an error".to_string()
        } else {
            text
        };
        return json!({ "error": text });
    }
    let text = blocks
        .iter()
        .filter_map(|b| block_text(b, server, files))
        .collect::<Vec<_>>()
        .join("\n");
    match result.get("structuredContent") {
        Some(structured) if !text.is_empty() => {
            json!({"result": text, "structuredContent": structured})
        }
        Some(structured) => json!({ "result": structured }),
        None => json!({ "result": text }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_as_hermes_makes_them() {
        assert_eq!(tool_name("everything", "echo"), "mcp__everything__echo");
        assert_eq!(
            tool_name("my-server", "get.time"),
            "mcp__my_server__get_time"
        );
        assert_eq!(tool_name("café", "tool/ä b"), "mcp__caf___tool___b");
    }

    #[test]
    fn schemas_become_what_providers_accept() {
        assert_eq!(
            schema_for_providers(None),
            json!({"type": "object", "properties": {}})
        );
        let fixed = schema_for_providers(Some(&json!({
            "properties": {
                "when": {"type": ["string", "null"]},
                "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}], "description": "d"},
                "nested": {"properties": {"a": {"$ref": "#/definitions/A"}}, "required": ["a", "b"]}
            },
            "required": ["when", "ghost"],
            "definitions": {"A": {"type": "string"}},
            "anyOf": [{"required": ["when"]}]
        })));
        assert_eq!(fixed["type"], "object");
        assert_eq!(
            fixed["properties"]["when"],
            json!({"type": "string", "nullable": true})
        );
        assert_eq!(
            fixed["properties"]["opt"],
            json!({"type": "integer", "nullable": true, "description": "d"})
        );
        assert_eq!(fixed["properties"]["nested"]["type"], "object");
        assert_eq!(fixed["properties"]["nested"]["required"], json!(["a"]));
        assert_eq!(
            fixed["properties"]["nested"]["properties"]["a"]["$ref"],
            "#/$defs/A"
        );
        assert_eq!(fixed["required"], json!(["when"]));
        assert!(fixed.get("definitions").is_none() && fixed.get("$defs").is_some());
        assert!(fixed.get("anyOf").is_none());
    }

    #[test]
    fn results_as_hermes_returns_them() {
        let dir = tempfile::tempdir().unwrap();
        let files = Attachments { dir: dir.path() };
        let text = json!({"content": [{"type": "text", "text": "Echo: hi"}]});
        assert_eq!(
            call_result(&text, "s", &files),
            json!({"result": "Echo: hi"})
        );
        let failed = json!({"isError": true, "content": [{"type": "text", "text": "bad"}]});
        assert_eq!(call_result(&failed, "s", &files), json!({"error": "bad"}));
        let structured = json!({"content": [], "structuredContent": {"t": 1}});
        assert_eq!(
            call_result(&structured, "s", &files),
            json!({"result": {"t": 1}})
        );
        let image =
            json!({"content": [{"type": "image", "mimeType": "image/png", "data": "aGk="}]});
        let out = call_result(&image, "s", &files);
        let path = out["result"]
            .as_str()
            .unwrap()
            .strip_prefix("MEDIA:")
            .unwrap()
            .to_string();
        assert!(path.ends_with(".png"));
        assert_eq!(std::fs::read(path).unwrap(), b"hi");
        let link =
            json!({"content": [{"type": "resource_link", "uri": "demo://r/1", "name": "r1"}]});
        assert_eq!(
            call_result(&link, "every", &files)["result"],
            "[MCP resource link: uri=demo://r/1, name=r1 — fetch it with mcp__every__read_resource]"
        );
        let embedded = json!({"content": [{"type": "resource", "resource": {"uri": "x://a", "text": "inside"}}]});
        assert_eq!(call_result(&embedded, "s", &files)["result"], "inside");
        // Only images, audio and blobs are written to files.
        let blob = json!({"content": [{"type": "resource", "resource": {"uri": "x://b", "blob": "aGk="}}]});
        assert!(writes_files(&image) && writes_files(&blob));
        for text_only in [&text, &failed, &structured, &link, &embedded] {
            assert!(!writes_files(text_only), "{text_only}");
        }
    }
}
