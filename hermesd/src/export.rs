//! A conversation as a document: Markdown for people, and JSONL in the shape Python Hermes'
//! `hermes sessions export` writes (one line per conversation: the session's fields and its
//! messages, every compression segment joined in order).

use serde_json::{Value, json};

use crate::store::{MessageRow, SessionRow};

/// A conversation to export: its newest segment and the messages of every segment, in order.
#[derive(Debug)]
pub struct Transcript {
    pub head: SessionRow,
    pub segment_ids: Vec<String>,
    pub messages: Vec<MessageRow>,
}

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_default()
}

fn seconds(ms: i64) -> f64 {
    ms as f64 / 1000.0
}

/// The transcript as Markdown: a heading with the session's facts, then each message.
pub fn markdown(t: &Transcript) -> String {
    let head = &t.head;
    let mut out = format!(
        "# {}\n\n- session: `{}`\n- source: {}\n- model: {}\n- started: {}\n- messages: {}\n",
        head.title.as_deref().unwrap_or("Untitled session"),
        head.id,
        head.source,
        if head.model.is_empty() {
            "unknown"
        } else {
            &head.model
        },
        rfc3339(t.messages.first().map_or(head.created_at, |m| m.created_at)),
        t.messages.len(),
    );
    if t.segment_ids.len() > 1 {
        out.push_str(&format!(
            "- segments (compression): {}\n",
            t.segment_ids.join(" → ")
        ));
    }
    for message in &t.messages {
        out.push('\n');
        match message.role.as_str() {
            "user" => out.push_str("## User\n\n"),
            "assistant" => out.push_str("## Assistant\n\n"),
            "tool" => out.push_str(&format!(
                "### Tool result: {}\n\n",
                message.tool_name.as_deref().unwrap_or("tool")
            )),
            other => out.push_str(&format!("## {other}\n\n")),
        }
        if message.role == "tool" {
            out.push_str(&fenced(&message.content));
        } else if !message.content.is_empty() {
            out.push_str(message.content.trim_end());
            out.push('\n');
        }
        for call in message
            .tool_calls
            .as_deref()
            .map(crate::agent::parse_tool_calls)
            .unwrap_or_default()
        {
            out.push_str(&format!("\n**Tool call** `{}`\n\n", call.name));
            let pretty = serde_json::from_str::<Value>(&call.arguments)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or(call.arguments);
            out.push_str(&fenced_as(&pretty, "json"));
        }
    }
    out
}

/// A fence longer than any run of backticks inside `text`.
fn fenced_as(text: &str, language: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{language}\n{}\n{fence}\n", text.trim_end())
}

fn fenced(text: &str) -> String {
    fenced_as(text, "")
}

/// The transcript as one JSON line in Python Hermes' export shape.
pub fn jsonl(t: &Transcript) -> String {
    let head = &t.head;
    let messages: Vec<Value> = t
        .messages
        .iter()
        .map(|m| {
            json!({
                "id": m.id,
                "session_id": m.session_id,
                "role": m.role,
                "content": m.content,
                "tool_call_id": m.tool_call_id,
                "tool_calls": m.tool_calls.as_deref().and_then(|c| serde_json::from_str::<Value>(c).ok()),
                "tool_name": m.tool_name,
                "timestamp": seconds(m.created_at),
                "finish_reason": m.finish_reason,
                "reasoning": m.reasoning,
            })
        })
        .collect();
    let line = json!({
        "id": head.id,
        "source": head.source,
        "title": head.title,
        "model": head.model,
        "cwd": head.cwd,
        "parent_session_id": head.parent_session_id,
        "started_at": seconds(t.messages.first().map_or(head.created_at, |m| m.created_at)),
        "message_count": messages.len(),
        "input_tokens": head.input_tokens,
        "output_tokens": head.output_tokens,
        "estimated_cost_usd": head.cost_usd,
        "lineage_session_ids": t.segment_ids,
        "messages": messages,
    });
    format!("{line}\n")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn row(id: i64, role: &str, content: &str) -> MessageRow {
        MessageRow {
            id,
            session_id: "s1".into(),
            role: role.into(),
            content: content.into(),
            tool_calls: None,
            tool_call_id: None,
            tool_name: None,
            reasoning: None,
            finish_reason: None,
            input_tokens: None,
            output_tokens: None,
            created_at: 1_700_000_000_000 + id,
            provider_items: None,
        }
    }

    fn transcript() -> Transcript {
        let mut call = row(2, "assistant", "");
        call.tool_calls = Some(
            r#"[{"id":"c1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls\"}"}}]"#
                .into(),
        );
        let mut result = row(3, "tool", "a.txt\n```b```");
        result.tool_name = Some("terminal".into());
        result.tool_call_id = Some("c1".into());
        Transcript {
            head: SessionRow {
                id: "s2".into(),
                parent_session_id: Some("s1".into()),
                source: "cli".into(),
                title: Some("Files".into()),
                model: "openai:gpt".into(),
                cwd: "/tmp".into(),
                busy_policy: "queue".into(),
                created_at: 1_700_000_000_000,
                updated_at: 1_700_000_000_000,
                message_count: 4,
                input_tokens: 10,
                output_tokens: 5,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                reasoning_tokens: 0,
                cost_usd: None,
                last_seq: 9,
                conversation_id: "s1".into(),
                seq_reserved: 0,
            },
            segment_ids: vec!["s1".into(), "s2".into()],
            messages: vec![
                row(1, "user", "list files"),
                call,
                result,
                row(4, "assistant", "one file"),
            ],
        }
    }

    #[test]
    fn markdown_shows_every_message_and_fences_tool_output() {
        let md = markdown(&transcript());
        assert!(md.starts_with("# Files\n"));
        assert!(md.contains("s1 → s2"));
        assert!(md.contains("## User\n\nlist files"));
        assert!(md.contains("**Tool call** `terminal`"));
        assert!(md.contains("\"command\": \"ls\""));
        // The tool output holds ``` so the fence is longer.
        assert!(md.contains("````\na.txt\n```b```\n````"));
        assert!(md.contains("## Assistant\n\none file"));
    }

    #[test]
    fn jsonl_is_one_line_in_the_hermes_shape() {
        let text = jsonl(&transcript());
        assert_eq!(text.matches('\n').count(), 1);
        let v: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(v["id"], "s2");
        assert_eq!(v["lineage_session_ids"], json!(["s1", "s2"]));
        assert_eq!(v["messages"].as_array().unwrap().len(), 4);
        assert_eq!(
            v["messages"][1]["tool_calls"][0]["function"]["name"],
            "terminal"
        );
        assert_eq!(v["messages"][2]["tool_name"], "terminal");
        assert_eq!(v["messages"][0]["timestamp"], json!(1_700_000_000.001));
    }
}
