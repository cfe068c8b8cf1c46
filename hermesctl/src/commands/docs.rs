//! `hermesctl completions SHELL` and `hermesctl man`, generated from the clap definitions.

use std::path::Path;

use clap::CommandFactory;

use crate::{cli::Cli, error::CliError, output};

pub fn completions(shell: clap_complete::Shell) {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "hermesctl", &mut buf);
    output::print(&String::from_utf8_lossy(&buf));
}

pub fn man(dir: Option<&Path>) -> Result<(), CliError> {
    let command = Cli::command();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| CliError::new(format!("cannot create {}: {e}", dir.display())))?;
            clap_mangen::generate_to(command, dir).map_err(|e| {
                CliError::new(format!("cannot write man pages to {}: {e}", dir.display()))
            })?;
            output::line(format!("man pages written to {}", dir.display()));
        }
        None => {
            let mut buf = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut buf)
                .map_err(|e| CliError::new(format!("cannot render the man page: {e}")))?;
            output::print(&String::from_utf8_lossy(&buf));
        }
    }
    Ok(())
}
