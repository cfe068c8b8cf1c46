//! The tables the bench binaries print: one row per measurement with median, p90 and target.

use std::time::Duration;

/// One line of a benchmark table.
pub struct Row {
    pub what: String,
    pub median: String,
    /// The tail percentile (p90 unless the row says otherwise).
    pub p90: String,
    pub target: &'static str,
}

impl Row {
    /// A row from timing samples (sorted in place).
    pub fn from_samples(what: String, samples: &mut [Duration], target: &'static str) -> Self {
        Self {
            what,
            median: ms(percentile(samples, 0.5)),
            p90: ms(percentile(samples, 0.9)),
            target,
        }
    }
}

impl Row {
    /// A row whose tail column is the nearest-rank p95 (the 19th of 20 values, as the Python
    /// bench reports it), marked so.
    pub fn with_p95(what: String, samples: &mut [Duration], target: &'static str) -> Self {
        samples.sort();
        let rank = ((samples.len() as f64) * 0.95).ceil() as usize;
        Self {
            what,
            median: ms(percentile(samples, 0.5)),
            p90: format!("{} (p95)", ms(samples[rank.clamp(1, samples.len()) - 1])),
            target,
        }
    }
}

/// A row with one value (not a distribution).
pub fn value_row(what: String, value: String, target: &'static str) -> Row {
    Row {
        what,
        median: value,
        p90: String::new(),
        target,
    }
}

/// The `p` quantile (0..=1) of `samples`, which get sorted.
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let index = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[index]
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// Print a title line and the rows as a Markdown table, noting the build profile and cores.
pub fn print(title: &str, rows: &[Row]) {
    let profile = if cfg!(debug_assertions) {
        "debug binaries (use --release!)"
    } else {
        "release binaries"
    };
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("{title} — {profile}, {cores} cores");
    println!();
    println!("| measurement | median | p90 | target |");
    println!("|---|---|---|---|");
    for row in rows {
        println!(
            "| {} | {} | {} | {} |",
            row.what, row.median, row.p90, row.target
        );
    }
}
