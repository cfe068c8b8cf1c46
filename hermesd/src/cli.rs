//! Command-line flags of hermesd (the top configuration layer).

use std::path::PathBuf;

use clap::Parser;

/// The Hermes agent daemon. Runs in the foreground; `hermesctl` starts it in the background.
#[derive(Debug, Parser)]
#[command(name = "hermesd", version, about)]
pub struct Args {
    /// HERMES_HOME to serve (default: the profile's home, else $HERMES_HOME, else ~/.hermes).
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// Profile name: serve ~/.hermes/profiles/NAME (also HERMES_PROFILE).
    #[arg(short, long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Socket path (also HERMES_SOCKET or config daemon.socket).
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,
    /// Log filter, e.g. `debug` or `hermesd=debug,info` (config logging.level).
    #[arg(long, value_name = "FILTER")]
    pub log_level: Option<String>,
    /// Override a config key: `--set daemon.drain_timeout=5` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}
