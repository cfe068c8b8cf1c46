//! Logging: `$HERMES_HOME/logs/hermesd.log` (size-rotated, written off-thread) and stderr.
//! Write errors are ignored, so a closed stdout/stderr never takes the daemon down. Every line
//! passes through the [`LineFilter`] installed with [`set_filter`] (the secret masker, which
//! lives in `policy` above this floor) on its way to either.

use std::{
    borrow::Cow,
    fs::OpenOptions,
    io::{IsTerminal, Write},
    os::unix::fs::OpenOptionsExt,
    path::Path,
    sync::{Arc, RwLock},
};

use file_rotate::{ContentLimit, FileRotate, compression::Compression, suffix::AppendCount};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{
    EnvFilter, fmt, fmt::MakeWriter, layer::SubscriberExt, util::SubscriberInitExt,
};

const MAX_LOG_BYTES: usize = 10 * 1024 * 1024;
const BUFFERED_LINES: usize = 4096;

/// Keeps the log writer thread alive; flushes on drop.
#[derive(Debug)]
pub struct LogGuard {
    _file: WorkerGuard,
}

/// Install the global subscriber. `level` is a tracing filter such as `info` or `hermesd=debug`.
pub fn init(log_dir: &Path, level: &str, max_files: usize) -> Result<LogGuard, String> {
    let filter = EnvFilter::try_new(level)
        .map_err(|e| format!("logging.level `{level}` is not a valid filter: {e}"))?;
    let rotating = FileRotate::new(
        log_dir.join("hermesd.log"),
        AppendCount::new(max_files.max(1)),
        ContentLimit::BytesSurpassed(MAX_LOG_BYTES),
        Compression::None,
        Some(
            OpenOptions::new()
                .read(true)
                .create(true)
                .append(true)
                .mode(0o600)
                .to_owned(),
        ),
    );
    // The default buffer preallocates 128,000 lines (about 4 MiB); a few thousand lines absorb any
    // burst, and when full the writer waits rather than dropping lines.
    let (file_writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .buffered_lines_limit(BUFFERED_LINES)
        .lossy(false)
        .finish(rotating);
    tracing_subscriber::registry()
        .with(filter)
        .with(
            fmt::layer()
                .with_writer(Filtered(std::io::stderr))
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(
            fmt::layer()
                .with_writer(Filtered(file_writer))
                .with_ansi(false),
        )
        .try_init()
        .map_err(|e| format!("cannot install the logger: {e}"))?;
    Ok(LogGuard { _file: guard })
}

/// What every log line passes through before it is written.
pub trait LineFilter: Send + Sync {
    fn filter<'a>(&self, line: &'a str) -> Cow<'a, str>;
}

/// The filter in force; `None` writes lines as they are.
static FILTER: RwLock<Option<Arc<dyn LineFilter>>> = RwLock::new(None);

/// Put `filter` in force for every line written from now on (start-up and each reload).
pub fn set_filter(filter: Arc<dyn LineFilter>) {
    match FILTER.write() {
        Ok(mut slot) => *slot = Some(filter),
        Err(poisoned) => *poisoned.into_inner() = Some(filter),
    }
}

fn current_filter() -> Option<Arc<dyn LineFilter>> {
    match FILTER.read() {
        Ok(slot) => slot.clone(),
        Err(poisoned) => poisoned.into_inner().clone(),
    }
}

/// A writer factory whose writers pass what they write through the filter in force.
struct Filtered<M>(M);

impl<'a, M: MakeWriter<'a>> MakeWriter<'a> for Filtered<M> {
    type Writer = FilteredWriter<M::Writer>;

    fn make_writer(&'a self) -> Self::Writer {
        FilteredWriter(self.0.make_writer())
    }
}

/// Writes each buffer (the formatter writes one whole event at a time) filtered.
struct FilteredWriter<W>(W);

impl<W: Write> Write for FilteredWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let Some(filter) = current_filter() else {
            return self.0.write(buf);
        };
        let text = String::from_utf8_lossy(buf);
        self.0.write_all(filter.filter(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    struct Hide;
    impl LineFilter for Hide {
        fn filter<'a>(&self, line: &'a str) -> Cow<'a, str> {
            Cow::Owned(line.replace("hunter22", "***"))
        }
    }

    #[test]
    fn written_lines_pass_through_the_filter_in_force() {
        let mut out = Vec::new();
        FilteredWriter(&mut out)
            .write_all(b"plain hunter22\n")
            .unwrap();
        set_filter(Arc::new(Hide));
        FilteredWriter(&mut out)
            .write_all(b"password hunter22\n")
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "plain hunter22\npassword ***\n"
        );
    }
}
