//! Where this client looks for its daemon: the home (profile), its environment and socket path.

use std::path::PathBuf;

use hermes_proto::{
    env::Env,
    place::{self, Home},
};

use crate::{cli::Cli, error::CliError};

/// Everything a command needs to find the daemon.
#[derive(Debug, Clone)]
pub struct Context {
    pub home: Home,
    pub socket: PathBuf,
    /// The `--socket` flag as given, passed on to a daemon we start.
    pub socket_flag: Option<PathBuf>,
    pub json: bool,
}

impl Context {
    pub fn resolve(cli: &Cli) -> Result<Self, CliError> {
        let process = Env::from_process();
        let home = Home::resolve(None, cli.profile.as_deref(), &process)?;
        // A broken .env is the daemon's to report; the client still finds the socket.
        let env = home
            .env(process.clone())
            .unwrap_or_else(|_| process.clone());
        let config_socket = place::config_socket(&home, &env);
        let socket =
            place::socket_path(cli.socket.as_deref(), &env, config_socket.as_deref(), &home)?;
        Ok(Self {
            home,
            socket,
            socket_flag: cli.socket.clone(),
            json: cli.json,
        })
    }
}
