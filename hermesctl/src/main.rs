//! hermesctl: the thin command-line client of hermesd. Every command that needs the daemon
//! starts it on demand; errors are one actionable line.

mod chat;
mod cli;
mod commands;
mod connection;
mod context;
mod daemon_process;
mod error;
mod output;

use std::{io::Write, process::ExitCode};

use clap::Parser;

use crate::{
    cli::{Cli, Command, SessionsCommand},
    context::Context,
    error::CliError,
};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            return report(CliError::new(format!(
                "cannot start the async runtime: {e}"
            )));
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => report(e),
    }
}

fn report(e: CliError) -> ExitCode {
    if !e.message.is_empty() {
        let _ = writeln!(std::io::stderr(), "hermesctl: {}", e.message);
    }
    ExitCode::from(e.code)
}

async fn run(cli: Cli) -> Result<(), CliError> {
    match cli.command {
        Command::Completions { shell } => {
            commands::docs::completions(shell);
            return Ok(());
        }
        Command::Man { ref dir } => return commands::docs::man(dir.as_deref()),
        _ => {}
    }
    let ctx = Context::resolve(&cli)?;
    match cli.command {
        Command::Status => commands::daemon::status(&ctx).await,
        Command::Send {
            message,
            session,
            cwd,
            yolo,
            stream,
            images,
        } => {
            let flags = commands::send::SendFlags {
                session,
                cwd,
                yolo,
                stream,
                images,
            };
            commands::send::run(&ctx, message, flags).await
        }
        Command::Chat { session, resume } => chat::run(&ctx, session, resume).await,
        Command::Tui {
            session,
            resume,
            new,
        } => commands::tui::run(&ctx, session, resume, new).await,
        Command::Attach { id, read_only } => commands::watch::run(&ctx, &id, read_only).await,
        Command::Daemon(command) => commands::daemon::run(&ctx, command).await,
        Command::Model(command) => commands::model::run(&ctx, command).await,
        Command::Auth(command) => commands::auth::run(&ctx, command).await,
        Command::Sessions(SessionsCommand::Resume { id }) => chat::run(&ctx, Some(id), false).await,
        Command::Sessions(command) => commands::sessions::run(&ctx, command).await,
        Command::Import(command) => commands::import::run(&ctx, command).await,
        Command::Config(command) => commands::config::run(&ctx, command).await,
        Command::Memory(command) => commands::memory::run(&ctx, command).await,
        Command::Gateway(command) => commands::gateway::run(&ctx, command).await,
        Command::Mcp(command) => commands::mcp::run(&ctx, command).await,
        Command::Pairing(command) => commands::gateway::pairing(&ctx, command).await,
        Command::Skills(command) => commands::skills::run(&ctx, command).await,
        Command::Cron(command) => commands::cron::run(&ctx, *command).await,
        Command::Completions { .. } | Command::Man { .. } => Ok(()),
    }
}
