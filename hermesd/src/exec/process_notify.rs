//! What a background process tells the conversation that started it without being asked
//! (Hermes' `notify_on_complete` and `watch_patterns`): one message when it ends, or one when an
//! output line holds a watched text — at most one per [`WATCH_MIN_INTERVAL`]. After
//! [`WATCH_STRIKE_LIMIT`] windows in a row that had to drop matches, watching stops and the
//! process says once when it ends instead. The texts are Hermes' `[IMPORTANT: …]` messages;
//! the daemon turns each into a turn of the conversation (`agent::unattended`).

use std::time::{Duration, Instant};

/// Least time between two watch-match messages of one process (Hermes: 15 s).
pub const WATCH_MIN_INTERVAL: Duration = Duration::from_secs(15);
/// Windows in a row with dropped matches before watching stops (Hermes: 3).
pub const WATCH_STRIKE_LIMIT: u32 = 3;
/// Matched lines one message quotes, and the characters it keeps of them (Hermes: 20, 2,000).
const QUOTED_LINES: usize = 20;
const QUOTED_CHARS: usize = 2_000;
/// An unfinished output line kept to join the next chunk; a longer one is scanned as it is.
const MAX_CARRY: usize = 4_096;

/// What a background process should report, as `terminal` was asked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notify {
    pub on_complete: bool,
    pub watch_patterns: Vec<String>,
}

/// Which kind of message a [`ProcessNotification`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotificationKind {
    /// The process ended (`notify_on_complete`).
    Completion,
    /// An output line held a watched text.
    WatchMatch,
    /// Watching stopped for too many matches; a completion message follows.
    WatchDisabled,
}

/// A message for the conversation that started a background process.
#[derive(Debug, Clone)]
pub struct ProcessNotification {
    /// The conversation that started the process.
    pub owner: String,
    pub process_id: String,
    pub kind: NotificationKind,
    /// The message, as the model reads it.
    pub text: String,
}

/// The watch state of one process.
#[derive(Debug, Default)]
pub(super) struct Watcher {
    on_complete: bool,
    patterns: Vec<String>,
    /// The unfinished last line of the output so far, and whether it already matched.
    carry: String,
    carry_matched: bool,
    cooldown_until: Option<Instant>,
    /// The current cooldown window dropped a match (it counts one strike).
    strike_candidate: bool,
    strikes: u32,
    suppressed: usize,
    disabled: bool,
}

impl Watcher {
    pub(super) fn new(notify: Notify) -> Self {
        // As in Hermes, asking for both means the completion alone.
        let patterns = if notify.on_complete {
            Vec::new()
        } else {
            notify
                .watch_patterns
                .into_iter()
                .filter(|p| !p.is_empty())
                .collect()
        };
        Self {
            on_complete: notify.on_complete,
            patterns,
            ..Self::default()
        }
    }

    /// Whether output is still scanned for watched texts.
    pub(super) fn is_watching(&self) -> bool {
        !self.patterns.is_empty() && !self.disabled
    }

    /// Whether the process's end is to be reported.
    pub(super) fn reports_completion(&self) -> bool {
        self.on_complete
    }

    /// Scan a new chunk of output; the message due now, if any.
    pub(super) fn scan(
        &mut self,
        process_id: &str,
        command: &str,
        chunk: &str,
        now: Instant,
    ) -> Option<(NotificationKind, String)> {
        if !self.is_watching() || chunk.is_empty() {
            return None;
        }
        let matched = self.matched_lines(chunk);
        let pattern = matched.first().map(|(pattern, _)| pattern.clone())?;
        if self.cooldown_until.is_some_and(|until| now < until) {
            self.suppressed += matched.len();
            if !self.strike_candidate {
                self.strike_candidate = true;
                self.strikes += 1;
                if self.strikes >= WATCH_STRIKE_LIMIT {
                    self.disabled = true;
                    self.on_complete = true;
                    return Some((
                        NotificationKind::WatchDisabled,
                        watch_disabled_text(process_id),
                    ));
                }
            }
            return None;
        }
        // A window that dropped nothing ends the run of strikes.
        if self.cooldown_until.is_some() && !self.strike_candidate {
            self.strikes = 0;
        }
        self.strike_candidate = false;
        self.cooldown_until = Some(now + WATCH_MIN_INTERVAL);
        let suppressed = std::mem::take(&mut self.suppressed);
        let lines: Vec<&str> = matched
            .iter()
            .take(QUOTED_LINES)
            .map(|(_, line)| line.as_str())
            .collect();
        let text = watch_match_text(process_id, command, &pattern, &lines.join("\n"), suppressed);
        Some((NotificationKind::WatchMatch, text))
    }

    /// The lines of the output (the carried partial line joined to `chunk`) that hold a pattern,
    /// with the first pattern each holds; a partial line that matched is not counted twice.
    fn matched_lines(&mut self, chunk: &str) -> Vec<(String, String)> {
        let mut text = std::mem::take(&mut self.carry);
        let continues_a_match = std::mem::take(&mut self.carry_matched);
        text.push_str(chunk);
        // The last piece is the unfinished line (empty when the chunk ended a line).
        let pieces: Vec<&str> = text.split('\n').collect();
        let last = pieces.len() - 1;
        let mut matched = Vec::new();
        for (index, line) in pieces.iter().enumerate() {
            let unfinished = index == last;
            if index == 0 && continues_a_match {
                self.carry_matched = unfinished;
                continue;
            }
            let line = line.trim_end_matches('\r');
            if let Some(pattern) = self.patterns.iter().find(|p| line.contains(p.as_str())) {
                matched.push((pattern.clone(), line.to_string()));
                self.carry_matched = unfinished;
            }
        }
        let partial = pieces[last];
        if partial.len() <= MAX_CARRY {
            self.carry = partial.to_string();
        } else {
            self.carry_matched = false;
        }
        matched
    }
}

/// Hermes' message for a watched text seen in the output.
fn watch_match_text(
    process_id: &str,
    command: &str,
    pattern: &str,
    output: &str,
    suppressed: usize,
) -> String {
    let mut output = output.to_string();
    if output.len() > QUOTED_CHARS {
        let mut cut = QUOTED_CHARS;
        while !output.is_char_boundary(cut) {
            cut -= 1;
        }
        output.truncate(cut);
        output.push_str("\n...(truncated)");
    }
    let mut text = format!(
        "[IMPORTANT: Background process {process_id} matched watch pattern \"{pattern}\".\n\
         Command: {command}\nMatched output:\n{output}"
    );
    if suppressed > 0 {
        text.push_str(&format!(
            "\n({suppressed} earlier matches were suppressed by rate limit)"
        ));
    }
    text.push(']');
    text
}

fn watch_disabled_text(process_id: &str) -> String {
    format!(
        "[IMPORTANT: Watch patterns disabled for process {process_id} — {WATCH_STRIKE_LIMIT} \
         consecutive rate-limit windows triggered (min spacing {}s). Falling back to \
         notify_on_complete semantics; you'll get exactly one notification when the process \
         exits.]",
        WATCH_MIN_INTERVAL.as_secs()
    )
}

/// Hermes' message for a process that ended.
pub(super) fn completion_text(
    process_id: &str,
    command: &str,
    exit_code: Option<i32>,
    reason: &str,
    killed_by: &str,
    output: &str,
) -> String {
    let code = exit_code.map_or_else(|| "?".to_string(), |c| c.to_string());
    let signal = if matches!(exit_code, Some(-15 | 143)) {
        ", SIGTERM"
    } else {
        ""
    };
    let status = match (reason, exit_code) {
        ("killed", _) if killed_by.is_empty() => "terminated by Hermes".to_string(),
        ("killed", _) => format!("terminated by {killed_by}"),
        (_, Some(0)) => "completed normally".to_string(),
        _ => "exited".to_string(),
    };
    format!(
        "[IMPORTANT: Background process {process_id} {status} (exit code {code}{signal}).\n\
         Command: {command}\nOutput:\n{output}]"
    )
}
