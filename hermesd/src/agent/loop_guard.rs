//! The loop guard: the same tool call with the same arguments N times in a row earns a warning
//! in its result, and at 2N the turn stops. Polling calls are exempt; distinct calls reset it.

use crate::llm::ToolCall;

/// What the guard says about one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Fine,
    /// Run it, but tell the model it is repeating itself.
    Warn(String),
    /// Do not run it; the turn stops with this reason.
    Stop(String),
}

#[derive(Debug)]
pub struct LoopGuard {
    threshold: u32,
    last: Option<String>,
    repeats: u32,
}

impl LoopGuard {
    /// `threshold` is N; 0 disables the guard.
    pub fn new(threshold: u32) -> Self {
        Self {
            threshold,
            last: None,
            repeats: 0,
        }
    }

    /// Check the next call in order; `polling` calls never count.
    pub fn check(&mut self, call: &ToolCall, polling: bool) -> Verdict {
        if self.threshold == 0 || polling {
            self.last = None;
            self.repeats = 0;
            return Verdict::Fine;
        }
        let key = format!("{}\u{0}{}", call.name, canonical(&call.arguments));
        if self.last.as_deref() == Some(key.as_str()) {
            self.repeats += 1;
        } else {
            self.last = Some(key);
            self.repeats = 1;
        }
        if self.repeats >= self.threshold * 2 {
            Verdict::Stop(format!(
                "stopped: `{}` was called {} times in a row with the same arguments",
                call.name, self.repeats
            ))
        } else if self.repeats >= self.threshold {
            Verdict::Warn(format!(
                "You have called `{}` with the same arguments {} times in a row. The result will \
                 not change; try a different approach or give your answer.",
                call.name, self.repeats
            ))
        } else {
            Verdict::Fine
        }
    }
}

/// Arguments with key order and spacing normalised (serde_json maps are sorted).
fn canonical(arguments: &str) -> String {
    serde_json::from_str::<serde_json::Value>(arguments)
        .map(|v| v.to_string())
        .unwrap_or_else(|_| arguments.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(args: &str) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: "read_file".into(),
            arguments: args.into(),
        }
    }

    #[test]
    fn repeats_warn_at_n_and_stop_at_2n() {
        let mut guard = LoopGuard::new(3);
        assert_eq!(guard.check(&call(r#"{"a":1,"b":2}"#), false), Verdict::Fine);
        assert_eq!(
            guard.check(&call(r#"{"b":2, "a":1}"#), false),
            Verdict::Fine
        );
        assert!(matches!(
            guard.check(&call(r#"{"a":1,"b":2}"#), false),
            Verdict::Warn(_)
        ));
        assert!(matches!(
            guard.check(&call(r#"{"a":1,"b":2}"#), false),
            Verdict::Warn(_)
        ));
        assert!(matches!(
            guard.check(&call(r#"{"a":1,"b":2}"#), false),
            Verdict::Warn(_)
        ));
        assert!(matches!(
            guard.check(&call(r#"{"a":1,"b":2}"#), false),
            Verdict::Stop(_)
        ));
    }

    #[test]
    fn distinct_and_polling_calls_never_trip_it() {
        let mut guard = LoopGuard::new(3);
        for i in 0..100 {
            assert_eq!(
                guard.check(&call(&format!(r#"{{"n":{i}}}"#)), false),
                Verdict::Fine
            );
        }
        for _ in 0..100 {
            assert_eq!(guard.check(&call("{}"), true), Verdict::Fine);
        }
    }
}
