//! `clarify`: ask the attached user a question, open-ended or with up to 4 choices. Never runs
//! beside other calls; with nobody to ask, the model is told so.

use async_trait::async_trait;
use serde_json::{Value, json};

use super::{Concurrency, Tool, ToolContext, ToolError};

const MAX_CHOICES: usize = 4;

pub struct ClarifyTool;

#[async_trait]
impl Tool for ClarifyTool {
    fn name(&self) -> &'static str {
        "clarify"
    }

    fn toolset(&self) -> &'static str {
        "clarify"
    }

    fn schema(&self) -> Value {
        json!({
            "name": "clarify",
            "description": "Ask the user a question when you need a decision or feedback. Put options \
                only in `choices` (up to 4; the user may also answer freely), never in the question. \
                Omit choices for an open question. Not for approving commands; decide low-stakes \
                matters yourself.",
            "parameters": {
                "type": "object",
                "properties": {
                    "question": {"type": "string", "description": "The question alone."},
                    "choices": {"type": "array", "items": {"type": "string"}, "maxItems": MAX_CHOICES}
                },
                "required": ["question"]
            }
        })
    }

    fn concurrency(&self, _args: &Value) -> Concurrency {
        Concurrency::Never
    }

    async fn call(&self, args: Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let question = args
            .get("question")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|q| !q.is_empty())
            .ok_or_else(|| ToolError::Arguments("Question text is required.".into()))?;
        let choices: Vec<String> = match args.get("choices") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(flatten_choice)
                .filter(|c| !c.is_empty())
                .take(MAX_CHOICES)
                .collect(),
            Some(_) => {
                return Err(ToolError::Arguments(
                    "choices must be a list of strings.".into(),
                ));
            }
        };
        match ctx.turn.clarify(question, &choices).await {
            Ok(answer) => Ok(json!({
                "question": question,
                "choices_offered": if choices.is_empty() { Value::Null } else { json!(choices) },
                "user_response": answer.trim(),
            })),
            Err(why) => Ok(json!({ "error": why })),
        }
    }
}

/// A choice as display text; models sometimes send `{"label": …}` objects.
fn flatten_choice(choice: &Value) -> String {
    match choice {
        Value::String(s) => s.trim().to_string(),
        Value::Object(map) => ["label", "description", "text", "title"]
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::trim))
            .filter(|s| !s.is_empty())
            .unwrap_or_default()
            .to_string(),
        Value::Array(items) => items
            .iter()
            .map(flatten_choice)
            .collect::<Vec<_>>()
            .join(" ")
            .trim()
            .to_string(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_flatten_to_their_labels() {
        assert_eq!(flatten_choice(&json!({"label": " prod "})), "prod");
        assert_eq!(flatten_choice(&json!({"value": "x"})), "");
        assert_eq!(flatten_choice(&json!(["a", "b"])), "a b");
        assert_eq!(flatten_choice(&json!(3)), "3");
    }
}
