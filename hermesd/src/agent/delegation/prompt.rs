//! The texts of delegation: a child's focused system prompt (Hermes 0.19's wording, in substance)
//! and the one message that brings a batch's results back to the parent, in task order.

use std::fmt::Write as _;

use crate::tools::DelegatedTask;

/// Characters of one child's summary the parent is given; the rest stays in the child's session.
pub const MAX_SUMMARY_CHARS: usize = 12_000;

/// The system prompt of a child at `depth` working on `task` in `cwd`.
pub fn child_system_prompt(
    task: &DelegatedTask,
    cwd: &str,
    depth: u32,
    may_delegate: bool,
    max_depth: u32,
) -> String {
    let mut text = format!(
        "You are a focused subagent working on a specific delegated task.\n\nYOUR TASK:\n{}\n",
        task.goal
    );
    if let Some(context) = &task.context {
        let _ = write!(text, "\nCONTEXT:\n{context}\n");
    }
    if cwd.starts_with('/') {
        let _ = write!(
            text,
            "\nWORKSPACE PATH:\n{cwd}\nUse this exact path for local work unless the task says \
             otherwise.\n"
        );
    }
    text.push_str(
        "\nComplete this task using the tools available to you. When finished, provide a clear, \
         concise summary of:\n- What you did\n- What you found or accomplished\n- Any files you \
         created or modified\n- Any issues encountered\n\nNever assume a repository lives at \
         /workspace/... or another container-style path unless the task gives that path; \
         discover it first. You cannot ask the user questions: decide and say what you decided. \
         Keep the summary tight (outcomes first, bullets over paragraphs): it is returned to the \
         agent that delegated to you.",
    );
    if may_delegate {
        let _ = write!(
            text,
            "\n\n## Subagent spawning (orchestrator role)\nYou may use `delegate_task` to run \
             independent parts of your task in parallel; it waits for your workers and returns \
             their summaries. Do not delegate trivial steps or your whole goal. You are at depth \
             {depth} of at most {max_depth}: your workers cannot delegate further. Synthesize \
             their results into your own summary."
        );
    }
    text
}

/// How one child ended, as the parent is told.
#[derive(Debug, Clone, PartialEq)]
pub struct ChildReport {
    pub goal: String,
    pub session_id: String,
    /// `completed`, `interrupted`, `failed`, `timed_out` or `not_started`.
    pub status: &'static str,
    pub summary: String,
    pub error: Option<String>,
    pub files: Vec<String>,
    pub tool_calls: u32,
    pub seconds: f64,
}

impl ChildReport {
    pub fn ok(&self) -> bool {
        self.status == "completed"
    }

    /// The report as the tool's JSON (an orchestrator's synchronous delegation).
    pub fn to_json(&self, index: usize) -> serde_json::Value {
        serde_json::json!({
            "task_index": index,
            "goal": self.goal,
            "session_id": self.session_id,
            "status": self.status,
            "summary": clipped(&self.summary, &self.session_id),
            "error": self.error,
            "files": self.files,
            "tool_calls": self.tool_calls,
            "duration_seconds": (self.seconds * 10.0).round() / 10.0,
        })
    }
}

/// `summary` cut to [`MAX_SUMMARY_CHARS`], saying where the rest is.
fn clipped(summary: &str, session_id: &str) -> String {
    let total = summary.chars().count();
    if total <= MAX_SUMMARY_CHARS {
        return summary.to_string();
    }
    let kept: String = summary.chars().take(MAX_SUMMARY_CHARS).collect();
    format!(
        "{kept}\n[… {} more characters in session {session_id}]",
        total - MAX_SUMMARY_CHARS
    )
}

/// The message that brings a finished background delegation back to the parent conversation:
/// self-contained (the parent may have moved on), every child in task order.
pub fn results_message(delegation_id: &str, reports: &[ChildReport]) -> String {
    let n = reports.len();
    let mut text = format!(
        "[DELEGATION COMPLETE — {delegation_id}]\nThe {n} subagent(s) you dispatched earlier have \
         finished; their results are below, in task order. You may have moved on since: act on \
         them, or dispatch again if things have changed. Their summaries are self-reports: \
         verify side effects before telling the user they happened.\n"
    );
    for (i, report) in reports.iter().enumerate() {
        let icon = if report.ok() { '✓' } else { '✗' };
        let _ = write!(
            text,
            "\n--- {icon} TASK {}/{n}: {}  (status={}, {} tool calls, {:.1}s, session {}) ---\n",
            i + 1,
            report.goal.lines().next().unwrap_or_default(),
            report.status,
            report.tool_calls,
            report.seconds,
            report.session_id
        );
        if let Some(error) = &report.error {
            let _ = writeln!(text, "({}: {error})", report.status);
        }
        if report.summary.trim().is_empty() {
            text.push_str("(no summary)\n");
        } else {
            text.push_str(&clipped(report.summary.trim(), &report.session_id));
            text.push('\n');
        }
        if !report.files.is_empty() {
            let _ = writeln!(text, "Files touched: {}", report.files.join(", "));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(goal: &str, status: &'static str, summary: &str) -> ChildReport {
        ChildReport {
            goal: goal.into(),
            session_id: format!("s-{goal}"),
            status,
            summary: summary.into(),
            error: None,
            files: Vec::new(),
            tool_calls: 1,
            seconds: 0.25,
        }
    }

    #[test]
    fn the_results_keep_task_order_and_say_how_each_ended() {
        let mut second = report("b", "failed", "");
        second.error = Some("the model is down".into());
        second.files = vec!["/tmp/x".into()];
        let text = results_message("deleg-1", &[report("a", "completed", "done A"), second]);
        let a = text.find("TASK 1/2: a").unwrap();
        let b = text.find("TASK 2/2: b").unwrap();
        assert!(a < b);
        assert!(text.contains("done A"));
        assert!(text.contains("(failed: the model is down)"));
        assert!(text.contains("Files touched: /tmp/x"));
    }

    #[test]
    fn a_long_summary_is_cut_and_points_to_its_session() {
        let long = "y".repeat(MAX_SUMMARY_CHARS + 10);
        let text = results_message("d", &[report("a", "completed", &long)]);
        assert!(text.contains("[… 10 more characters in session s-a]"));
    }

    #[test]
    fn only_an_orchestrator_is_told_it_may_delegate() {
        let task = DelegatedTask {
            goal: "count files".into(),
            context: Some("in /srv".into()),
            orchestrator: true,
        };
        let leaf = child_system_prompt(&task, "/srv", 1, false, 2);
        assert!(leaf.contains("YOUR TASK:\ncount files"));
        assert!(leaf.contains("CONTEXT:\nin /srv"));
        assert!(!leaf.contains("delegate_task"));
        assert!(child_system_prompt(&task, "/srv", 1, true, 2).contains("delegate_task"));
    }
}
