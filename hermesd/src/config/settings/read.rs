//! The one lenient reader the sections use: a dotted key of the merged tree becomes a typed value,
//! or — when the value is of the wrong type or out of range — a notice naming the key, the value
//! and what is used instead. An absent key (or `null`) is the default, without a notice.

use std::{fmt::Display, time::Duration};

use serde_yaml::Value;

/// What a parser made of a present value.
pub enum Verdict<T> {
    /// The value, as written.
    Use(T),
    /// Out of range: `T` (a bound) is used, and the notice says why (`is above 10000`).
    Clamp(T, String),
    /// Unusable: the default is used, and the notice says why (`is not a whole number`).
    Bad(String),
}

/// Reads keys under one node of the tree (the root, or an entry such as `fallback_providers[0]`),
/// collecting notices.
pub struct Reader<'t> {
    node: &'t Value,
    /// What the node's keys are shown under: empty at the root, else `fallback_providers[0].`.
    prefix: String,
    notices: Vec<String>,
}

impl<'t> Reader<'t> {
    pub fn new(root: &'t Value) -> Self {
        Self::under(root, String::new())
    }

    /// A reader of `node`, whose keys are shown as `{prefix}{key}`.
    pub fn under(node: &'t Value, prefix: String) -> Self {
        Self {
            node,
            prefix,
            notices: Vec::new(),
        }
    }

    /// The notices so far, the reader consumed.
    pub fn into_notices(self) -> Vec<String> {
        self.notices
    }

    /// A reader of the same node whose notices can be looked at apart before they are absorbed.
    pub fn fork(&self) -> Reader<'t> {
        Self::under(self.node, self.prefix.clone())
    }

    /// The notices so far.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// Add the notices of a reader of a part of this node.
    pub fn absorb(&mut self, part: Reader<'_>) {
        self.notices.extend(part.notices);
    }

    /// The full name of `key` as the user wrote it.
    pub fn name(&self, key: &str) -> String {
        format!("{}{key}", self.prefix)
    }

    /// The value at a dotted `key`; `null` counts as absent.
    pub fn get(&self, key: &str) -> Option<&'t Value> {
        key.split('.')
            .try_fold(self.node, |node, part| node.get(part))
            .filter(|value| !value.is_null())
    }

    /// Record a notice about `key` (for checks the typed helpers do not cover).
    pub fn notice(&mut self, key: &str, value: &Value, why: &str, using: &dyn Display) {
        self.notices.push(format!(
            "{}: {} {why}; using {using}",
            self.name(key),
            show(value)
        ));
    }

    /// Record a notice written in full (for values that do not come from the tree).
    pub fn notice_raw(&mut self, notice: String) {
        self.notices.push(notice);
    }

    /// `key` read by `parse`, else `default` (shown in a notice as `shown`).
    pub fn value<T>(
        &mut self,
        key: &str,
        default: T,
        shown: &dyn Display,
        parse: impl FnOnce(&Value) -> Verdict<T>,
    ) -> T {
        let Some(value) = self.get(key) else {
            return default;
        };
        match parse(value) {
            Verdict::Use(v) => v,
            Verdict::Clamp(bound, why) => {
                self.notices
                    .push(format!("{}: {} {why}", self.name(key), show(value)));
                bound
            }
            Verdict::Bad(why) => {
                self.notice(key, value, &why, shown);
                default
            }
        }
    }

    /// A whole number, clamped into `min..=max` (a notice names the bound used).
    pub fn whole(&mut self, key: &str, default: u64, min: u64, max: u64) -> u64 {
        self.value(key, default, &default, |value| match whole(value) {
            Ok(n) if n > max => Verdict::Clamp(max, format!("is above {max}; using {max}")),
            Ok(n) if n < min => Verdict::Clamp(min, format!("is below {min}; using {min}")),
            Ok(n) => Verdict::Use(n),
            Err(why) => Verdict::Bad(why.into()),
        })
    }

    /// A whole number with no bound, `None` when absent or bad (a notice says `using {shown}`).
    pub fn whole_opt(&mut self, key: &str, shown: &str) -> Option<u64> {
        self.value(key, None, &shown, |value| match whole(value) {
            Ok(n) => Verdict::Use(Some(n)),
            Err(why) => Verdict::Bad(why.into()),
        })
    }

    /// A number of seconds (0 or more, fractions allowed, small enough for a `Duration`).
    pub fn seconds(&mut self, key: &str, default: f64) -> f64 {
        self.value(key, default, &default, |value| match number(value) {
            Some(s) if s < 0.0 => Verdict::Bad("is negative".into()),
            Some(s) if Duration::try_from_secs_f64(s).is_ok() => Verdict::Use(s),
            Some(s) if s.is_finite() => Verdict::Bad("is too large".into()),
            _ => Verdict::Bad("is not a number of seconds".into()),
        })
    }

    /// A share strictly between 0 and 1.
    pub fn ratio(&mut self, key: &str, default: f64) -> f64 {
        self.value(key, default, &default, |value| match number(value) {
            Some(r) if r > 0.0 && r < 1.0 => Verdict::Use(r),
            Some(_) => Verdict::Bad("is not between 0 and 1".into()),
            None => Verdict::Bad("is not a number".into()),
        })
    }

    /// `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0` written as strings).
    pub fn flag(&mut self, key: &str, default: bool) -> bool {
        self.value(key, default, &default, |value| match flag(value) {
            Some(b) => Verdict::Use(b),
            None => Verdict::Bad("is not true or false".into()),
        })
    }

    /// `true`/`false`, `None` when absent or bad (a notice says `using {shown}`).
    pub fn flag_opt(&mut self, key: &str, shown: &str) -> Option<bool> {
        self.value(key, None, &shown, |value| match flag(value) {
            Some(b) => Verdict::Use(Some(b)),
            None => Verdict::Bad("is not true or false".into()),
        })
    }

    /// A string, trimmed; empty when absent or bad.
    pub fn text(&mut self, key: &str) -> String {
        self.value(key, String::new(), &"nothing", |value| match value {
            Value::String(s) => Verdict::Use(s.trim().to_string()),
            _ => Verdict::Bad("is not a string".into()),
        })
    }

    /// A string that may be a secret, trimmed; empty when absent or bad. A notice never shows it.
    pub fn secret(&mut self, key: &str) -> String {
        match self.get(key) {
            None => String::new(),
            Some(Value::String(s)) => s.trim().to_string(),
            Some(_) => {
                let notice = format!(
                    "{}: the value is not a string; using nothing",
                    self.name(key)
                );
                self.notices.push(notice);
                String::new()
            }
        }
    }

    /// A list of names: a sequence of strings or one comma-separated string, trimmed, blanks
    /// dropped; `default` when absent or bad. An item that is not a string is left out with a
    /// notice.
    pub fn list(&mut self, key: &str, default: &[&str]) -> Vec<String> {
        let default: Vec<String> = default.iter().map(|s| s.to_string()).collect();
        let Some(value) = self.get(key) else {
            return default;
        };
        match value {
            Value::Sequence(items) => {
                let mut names = Vec::new();
                for item in items {
                    match item.as_str().map(str::trim) {
                        Some("") => {}
                        Some(name) => names.push(name.to_string()),
                        None => self.notice(key, item, "is not a name", &"the other items"),
                    }
                }
                names
            }
            Value::String(s) => comma_list(s),
            _ => {
                let shown = format!("[{}]", default.join(", "));
                self.notice(key, value, "is not a list of names", &shown);
                default
            }
        }
    }

    /// One of `words` (case-insensitive, trimmed), else `default` with a notice listing them.
    pub fn word<T: Clone + Display>(&mut self, key: &str, default: T, words: &[(&str, T)]) -> T {
        let shown = default.to_string();
        self.value(key, default, &shown, |value| {
            let found = value.as_str().and_then(|s| {
                let s = s.trim();
                words.iter().find(|(w, _)| w.eq_ignore_ascii_case(s))
            });
            match found {
                Some((_, v)) => Verdict::Use(v.clone()),
                None => Verdict::Bad(format!("is not one of {}", names(words))),
            }
        })
    }

    /// Whether `key` holds something other than a mapping; a notice says its keys take their
    /// defaults. Absent keys and mappings are fine.
    pub fn expect_mapping(&mut self, key: &str) {
        if let Some(value) = self.get(key).filter(|v| !v.is_mapping()) {
            self.notice(
                key,
                value,
                "is not a mapping of keys",
                &"the defaults of its keys",
            );
        }
    }
}

/// The words of a `word` list, for a notice: `a, b or c`.
pub fn names<T>(words: &[(&str, T)]) -> String {
    let all: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// A value as a notice shows it: JSON-like and on one line, cut at 60 characters.
pub fn show(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "a mapping".into());
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// A number, or a string holding one.
pub fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A whole number of 0 or more (a whole float such as `2.0` counts), or why not.
pub fn whole(value: &Value) -> Result<u64, &'static str> {
    if let Value::Number(n) = value
        && let Some(n) = n.as_u64()
    {
        return Ok(n);
    }
    if let Value::String(s) = value
        && let Ok(n) = s.trim().parse::<u64>()
    {
        return Ok(n);
    }
    match number(value) {
        Some(n) if n < 0.0 => Err("is negative"),
        Some(n) if n.fract() == 0.0 && n < 1.8e19 => Ok(n as u64),
        _ => Err("is not a whole number"),
    }
}

fn flag(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "on" | "1" => Some(true),
            "false" | "no" | "off" | "0" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// The items of a comma-separated value, trimmed, blanks dropped.
pub fn comma_list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether an environment flag is set the way Hermes reads one: `1`, `true`, `yes` or `on`, in
/// any case, around any spaces.
pub fn truthy(value: Option<&str>) -> bool {
    value.is_some_and(|v| {
        matches!(
            v.trim().to_lowercase().as_str(),
            "1" | "true" | "yes" | "on"
        )
    })
}
