//! Logging: `$HERMES_HOME/logs/hermesd.log` (size-rotated, written off-thread) and stderr.
//! Write errors are ignored, so a closed stdout/stderr never takes the daemon down.

use std::{fs::OpenOptions, io::IsTerminal, os::unix::fs::OpenOptionsExt, path::Path};

use file_rotate::{ContentLimit, FileRotate, compression::Compression, suffix::AppendCount};
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::{EnvFilter, fmt, layer::SubscriberExt, util::SubscriberInitExt};

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
                .with_writer(std::io::stderr)
                .with_ansi(std::io::stderr().is_terminal()),
        )
        .with(fmt::layer().with_writer(file_writer).with_ansi(false))
        .try_init()
        .map_err(|e| format!("cannot install the logger: {e}"))?;
    Ok(LogGuard { _file: guard })
}
