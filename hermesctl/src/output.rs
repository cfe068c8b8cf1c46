//! Writing results: human text or one JSON document, and a quiet exit when the reader goes away
//! (`hermesctl sessions list | head -1`).

use std::io::{ErrorKind, Write};

use serde_json::Value;

/// Write text to stdout; a closed pipe ends the process quietly with success.
pub fn print(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let result = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush());
    if let Err(e) = result {
        if e.kind() == ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "hermesctl: cannot write output: {e}");
        std::process::exit(1);
    }
}

/// Write one line.
pub fn line(text: impl AsRef<str>) {
    print(&format!("{}\n", text.as_ref()));
}

/// Write one line on stderr (a warning beside the result, never part of it).
pub fn warn(text: impl AsRef<str>) {
    let _ = writeln!(std::io::stderr(), "{}", text.as_ref());
}

/// Write a JSON document, pretty-printed.
pub fn json(value: &Value) {
    let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| "null".into());
    line(text);
}

/// An RFC 3339 UTC string for a protobuf timestamp, or null.
pub fn timestamp(ts: Option<&prost_types::Timestamp>) -> Value {
    ts.and_then(|t| chrono::DateTime::from_timestamp(t.seconds, t.nanos.max(0) as u32))
        .map(|t| Value::String(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
        .unwrap_or(Value::Null)
}

/// A short local-time rendering for tables.
pub fn when(ts: Option<&prost_types::Timestamp>) -> String {
    ts.and_then(|t| chrono::DateTime::from_timestamp(t.seconds, t.nanos.max(0) as u32))
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|| "-".into())
}

/// Bytes as a short human size.
pub fn size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
