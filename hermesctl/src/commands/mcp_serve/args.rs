//! Reading the arguments of an MCP tool call: strings required or optional, and integers coerced
//! and clamped the way Hermes' `mcp serve` does (a number or a numeric string; anything else is
//! the default), so a sloppy client still gets a bounded answer.

use serde_json::{Map, Value};

/// The arguments of one call (absent arguments read as an empty object).
pub struct Args<'a>(pub &'a Map<String, Value>);

impl Args<'_> {
    /// A non-blank string, or an error naming the argument.
    pub fn required(&self, name: &str) -> Result<String, String> {
        self.optional(name)
            .ok_or_else(|| format!("the argument {name:?} is required (a non-empty string)"))
    }

    /// A non-blank string, trimmed; `None` when absent, null, blank or not a string.
    pub fn optional(&self, name: &str) -> Option<String> {
        match self.0.get(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            _ => None,
        }
    }

    /// The text as given (not trimmed: a message is sent as written); an error when absent.
    pub fn text(&self, name: &str) -> Result<String, String> {
        match self.0.get(name) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            _ => Err(format!(
                "the argument {name:?} is required (a non-empty string)"
            )),
        }
    }

    /// An integer within `min..=max`: `default` when absent or not a number.
    pub fn int(&self, name: &str, default: u32, min: u32, max: u32) -> u32 {
        let value = match self.0.get(name) {
            Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f.trunc() as i64)),
            Some(Value::String(s)) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        match value {
            Some(v) => v.clamp(i64::from(min), i64::from(max)) as u32,
            None => default.clamp(min, max),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn args(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn integers_are_coerced_and_clamped() {
        let map = args(json!({"a": 500, "b": "7", "c": "lots", "d": -3, "e": 2.9}));
        let a = Args(&map);
        assert_eq!(a.int("a", 50, 1, 200), 200);
        assert_eq!(a.int("b", 50, 1, 200), 7);
        assert_eq!(a.int("c", 50, 1, 200), 50);
        assert_eq!(a.int("d", 50, 1, 200), 1);
        assert_eq!(a.int("e", 50, 1, 200), 2);
        assert_eq!(a.int("missing", 50, 1, 200), 50);
    }

    #[test]
    fn strings_are_required_or_optional() {
        let map = args(json!({"s": " key ", "blank": "  ", "n": 3, "msg": " hi "}));
        let a = Args(&map);
        assert_eq!(a.required("s").ok().as_deref(), Some("key"));
        assert!(
            a.required("blank")
                .unwrap_err()
                .contains("\"blank\" is required")
        );
        assert_eq!(a.optional("n"), None);
        assert_eq!(a.optional("missing"), None);
        assert_eq!(a.text("msg").ok().as_deref(), Some(" hi "));
        assert!(a.text("blank").is_err());
    }
}
