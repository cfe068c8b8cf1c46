//! The first message of a cron run: what the run is and where its answer goes, the job's skills
//! in full (trusted ones only; missing or quarantined ones named so the answer can say so), then
//! the job's instruction.

use serde_json::Value;

/// The reply that means "nothing to report": a successful run answering exactly this is not
/// delivered.
pub const SILENT: &str = "[SILENT]";

/// A skill the job names, as found.
#[derive(Debug, Clone, PartialEq)]
pub enum JobSkill {
    /// Its SKILL.md, ready to include.
    Loaded { name: String, content: String },
    /// Not found, inactive here, quarantined or unreadable: why.
    Unavailable { name: String, why: String },
}

/// A skill's text from a `skill_view` result, or why it is unavailable.
pub fn from_view(name: &str, view: &Value) -> JobSkill {
    match view.get("content").and_then(Value::as_str) {
        Some(content) if view.get("success") == Some(&Value::Bool(true)) => JobSkill::Loaded {
            name: name.to_string(),
            content: content.to_string(),
        },
        _ => JobSkill::Unavailable {
            name: name.to_string(),
            why: view
                .get("error")
                .and_then(Value::as_str)
                .unwrap_or("not found")
                .to_string(),
        },
    }
}

/// The run's input message.
pub fn build(job_name: &str, delivery: &str, skills: &[JobSkill], instruction: &str) -> String {
    let mut out = format!(
        "[SYSTEM: This is a scheduled run of the cron job \"{job_name}\". Nobody is watching and \
         no one can answer questions: decide for yourself. Your final response is the job's \
         result and is delivered automatically ({delivery}); do not try to send it yourself. If \
         there is genuinely nothing new to report, reply with exactly {SILENT} and nothing else, \
         and nothing will be delivered. Never add {SILENT} to a real report.]\n\n"
    );
    for skill in skills {
        if let JobSkill::Loaded { name, content } = skill {
            out.push_str(&format!(
                "[SYSTEM: The job loads the skill \"{name}\": follow its instructions. Its full \
                 text follows.]\n\n{}\n\n",
                content.trim_end()
            ));
        }
    }
    let missing: Vec<String> = skills
        .iter()
        .filter_map(|s| match s {
            JobSkill::Unavailable { name, why } => Some(format!("{name} ({why})")),
            JobSkill::Loaded { .. } => None,
        })
        .collect();
    if !missing.is_empty() {
        out.push_str(&format!(
            "[SYSTEM: These skills of the job could not be loaded and were skipped: {}. Mention \
             this at the start of your response.]\n\n",
            missing.join("; ")
        ));
    }
    let loaded_any = skills.iter().any(|s| matches!(s, JobSkill::Loaded { .. }));
    if loaded_any {
        out.push_str("The job's instruction, to carry out with the skills above:\n\n");
    }
    out.push_str(instruction.trim());
    out
}

/// Whether a reply asks for no delivery, by Hermes 0.19's rule: the reply, or its first or
/// last non-empty line, is a silence token (`[SILENT]`, `SILENT`, `NO_REPLY`, `NO REPLY`, any
/// case, spaces collapsed), or the reply begins with `[SILENT]`. A token inside a sentence is
/// not silence.
pub fn is_silent(answer: &str) -> bool {
    fn token(text: &str) -> bool {
        let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
        let upper = collapsed.to_uppercase();
        matches!(
            upper.as_str(),
            "[SILENT]" | "SILENT" | "NO_REPLY" | "NO REPLY"
        )
    }
    let trimmed = answer.trim();
    if trimmed.is_empty() {
        return false;
    }
    let mut lines = trimmed.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or_default();
    let last = lines.next_back().unwrap_or(first);
    token(trimmed) || token(first) || token(last) || trimmed.to_uppercase().starts_with(SILENT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn skills_come_before_the_instruction_and_missing_ones_are_named() {
        let skills = vec![
            from_view(
                "digest",
                &json!({"success": true, "content": "# Digest\nDo X."}),
            ),
            from_view(
                "ghost",
                &json!({"success": false, "error": "Skill 'ghost' not found."}),
            ),
        ];
        let text = build("news", "local", &skills, "Summarise the news.");
        let skill_at = text.find("# Digest").unwrap_or(usize::MAX);
        let instruction_at = text.find("Summarise the news.").unwrap_or(0);
        assert!(skill_at < instruction_at, "{text}");
        assert!(text.contains("ghost (Skill 'ghost' not found.)"), "{text}");
        assert!(
            text.starts_with("[SYSTEM: This is a scheduled run"),
            "{text}"
        );
    }

    #[test]
    fn silence_follows_hermes_rules() {
        assert!(is_silent(" [SILENT]\n"));
        assert!(is_silent("[silent]"));
        assert!(is_silent("NO_REPLY"));
        assert!(is_silent("[SILENT] nothing new"));
        assert!(is_silent("2 deals\n\n[SILENT]"));
        assert!(!is_silent("I stayed [SILENT] ok"));
        assert!(!is_silent("Silent retry ok"));
        assert!(!is_silent(""));
    }
}
