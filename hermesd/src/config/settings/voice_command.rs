//! Command providers of `stt.providers.<name>` and `tts.providers.<name>` (Hermes' `type:
//! command`): a command line from the user's configuration with `{placeholder}`s, its timeout,
//! its output format and, for speech, its text cap and whether its audio may be a voice bubble.

use std::time::Duration;

use serde_yaml::Value;

use super::read::{Reader, number, show};

/// One configured command provider.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandProvider {
    pub name: String,
    /// The command template as written (`{input_path}`, `{output_path}`, …).
    pub command: String,
    /// `timeout` (or `timeout_seconds`); Hermes' default when absent or not positive.
    pub timeout: Duration,
    /// `format` (or `output_format`), one of the kind's formats.
    pub format: String,
    pub language: String,
    pub voice: String,
    pub model: String,
    pub speed: String,
    /// `max_text_length` when a positive whole number.
    pub max_text_length: Option<usize>,
    /// `voice_compatible: true`: the audio may go out as a voice message.
    pub voice_compatible: bool,
}

/// Reads `{section}.providers` (and, for names that are not built-in, `{section}.<name>`):
/// every entry whose `type` is `command` (or absent) and that has a `command`.
pub fn read_commands(
    r: &mut Reader<'_>,
    section: &str,
    builtin: &[&str],
    default_timeout: f64,
    formats: &[&str],
    default_format: &str,
) -> Vec<CommandProvider> {
    let mut found = Vec::new();
    let mut entries: Vec<(String, &Value)> = Vec::new();
    if let Some(Value::Mapping(map)) = r.get(&format!("{section}.providers")) {
        for (name, body) in map {
            if let Some(name) = name.as_str() {
                entries.push((name.trim().to_lowercase(), body));
            }
        }
    }
    if let Some(Value::Mapping(map)) = r.get(section) {
        for (name, body) in map {
            let Some(name) = name.as_str().map(|n| n.trim().to_lowercase()) else {
                continue;
            };
            if name != "providers"
                && !builtin.contains(&name.as_str())
                && body.get("command").is_some()
                && !entries.iter().any(|(n, _)| *n == name)
            {
                entries.push((name, body));
            }
        }
    }
    for (name, body) in entries {
        if builtin.contains(&name.as_str()) {
            continue;
        }
        let key = format!("{section}.providers.{name}");
        let kind = body.get("type").and_then(Value::as_str).unwrap_or("");
        if !kind.is_empty() && !kind.eq_ignore_ascii_case("command") {
            continue;
        }
        let command = match body.get("command") {
            Some(Value::String(c)) if !c.trim().is_empty() => c.trim().to_string(),
            Some(other) => {
                r.notice_raw(format!(
                    "{key}.command: {} is not a command line; the provider is left out",
                    show(other)
                ));
                continue;
            }
            None => continue,
        };
        let text = |k: &str| -> String {
            match body.get(k) {
                Some(Value::String(s)) => s.trim().to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => String::new(),
            }
        };
        let seconds = body
            .get("timeout")
            .or_else(|| body.get("timeout_seconds"))
            .and_then(number)
            .filter(|s| *s > 0.0 && s.is_finite() && *s < 86_400.0)
            .unwrap_or(default_timeout);
        let wanted = {
            let f = text("format");
            let f = if f.is_empty() {
                text("output_format")
            } else {
                f
            };
            f.trim_start_matches('.').to_lowercase()
        };
        let format = if formats.contains(&wanted.as_str()) {
            wanted
        } else {
            default_format.to_string()
        };
        let max_text_length = match body.get("max_text_length") {
            Some(Value::Number(n)) => n.as_u64().filter(|n| *n > 0).map(|n| n as usize),
            _ => None,
        };
        let voice_compatible = match body.get("voice_compatible") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => {
                matches!(
                    s.trim().to_lowercase().as_str(),
                    "1" | "true" | "yes" | "on"
                )
            }
            _ => false,
        };
        found.push(CommandProvider {
            name,
            command,
            timeout: Duration::from_secs_f64(seconds),
            format,
            language: text("language"),
            voice: text("voice"),
            model: text("model"),
            speed: text("speed"),
            max_text_length,
            voice_compatible,
        });
    }
    found
}
