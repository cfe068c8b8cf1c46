//! Argument coercion: models often send `"42"` where the schema says integer, or an array as a
//! JSON string. Values are converted to the schema's type when the conversion is exact.

use serde_json::{Map, Value};

/// Coerce the top-level properties of `args` to the types `parameters` declares.
pub fn coerce_arguments(args: &mut Value, parameters: &Value) {
    let (Some(object), Some(properties)) = (
        args.as_object_mut(),
        parameters.get("properties").and_then(Value::as_object),
    ) else {
        return;
    };
    coerce_object(object, properties);
}

fn coerce_object(object: &mut Map<String, Value>, properties: &Map<String, Value>) {
    for (key, value) in object.iter_mut() {
        let Some(schema) = properties.get(key) else {
            continue;
        };
        if let Some(coerced) = coerce_value(value, schema) {
            *value = coerced;
        }
    }
}

fn declared_type(schema: &Value) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => Some(t),
        // ["integer", "null"]: the first non-null type.
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

fn coerce_value(value: &Value, schema: &Value) -> Option<Value> {
    match (declared_type(schema)?, value) {
        ("integer", Value::String(s)) => s.trim().parse::<i64>().ok().map(Value::from),
        ("integer", Value::Number(n)) if n.is_f64() => n
            .as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
            .map(|f| Value::from(f as i64)),
        ("number", Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Value::from),
        ("boolean", Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "1" => Some(Value::Bool(true)),
            "false" | "no" | "0" => Some(Value::Bool(false)),
            _ => None,
        },
        ("array", Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Array(_)) => Some(parsed),
            _ => None,
        },
        ("object", Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(parsed @ Value::Object(_)) => Some(parsed),
            _ => None,
        },
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn strings_become_the_declared_type_when_exact() {
        let schema = json!({"properties": {
            "n": {"type": "integer"}, "f": {"type": "number"}, "b": {"type": "boolean"},
            "a": {"type": "array"}, "s": {"type": "string"}, "o": {"type": ["integer", "null"]}
        }});
        let mut args =
            json!({"n": "42", "f": "1.5", "b": "true", "a": "[1,2]", "s": 7, "o": "3", "x": "9"});
        coerce_arguments(&mut args, &schema);
        assert_eq!(
            args,
            json!({"n": 42, "f": 1.5, "b": true, "a": [1, 2], "s": "7", "o": 3, "x": "9"})
        );
    }

    #[test]
    fn inexact_values_are_left_for_the_tool_to_reject() {
        let schema = json!({"properties": {"n": {"type": "integer"}, "b": {"type": "boolean"}}});
        let mut args = json!({"n": "4.5x", "b": "maybe"});
        coerce_arguments(&mut args, &schema);
        assert_eq!(args, json!({"n": "4.5x", "b": "maybe"}));
        let mut float = json!({"n": 42.0});
        coerce_arguments(&mut float, &schema);
        assert_eq!(float, json!({"n": 42}));
    }
}
