//! hermes-tui: the full-screen client of hermesd (ratatui). Not built yet; it says so.

use std::{io::Write, process::ExitCode};

fn main() -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "hermes-tui is coming: it will attach to hermesd sessions full-screen.\n\
         Until then use `hermesctl` (for example `hermesctl status`)."
    );
    ExitCode::from(2)
}
