//! `hermes-tui [SESSION|--continue|--new]`: the full-screen client. Finds the daemon as
//! `hermesctl` does (profile, `--socket`, `HERMES_HOME`), logs to `logs/tui.log` in the home,
//! never to the screen, and gives the terminal back as it found it on every way out.

use std::{path::PathBuf, process::ExitCode};

use clap::{CommandFactory, FromArgMatches, Parser};
use hermes_proto::{env::Env, place};
use hermes_tui::{
    config::TuiConfig,
    history,
    run::{self, Opening},
    terminal,
};

/// The full-screen client of hermesd: every session on the side, one conversation in the
/// middle. Quitting leaves every session running.
#[derive(Debug, Parser)]
#[command(name = "hermes-tui", version)]
struct Args {
    /// The session to open (an id); without one, a session starts with the first message.
    #[arg(conflicts_with_all = ["resume", "new"])]
    session: Option<String>,
    /// Open the most recently active session.
    #[arg(short = 'c', long = "continue", conflicts_with = "new")]
    resume: bool,
    /// Start a new session right away.
    #[arg(long)]
    new: bool,
    /// Use the profile NAME (~/.hermes/profiles/NAME).
    #[arg(short, long)]
    profile: Option<String>,
    /// The daemon's socket (default: as hermesctl finds it).
    #[arg(long)]
    socket: Option<PathBuf>,
}

fn main() -> ExitCode {
    let command = Args::command().after_help(TuiConfig::help_text());
    let args = match Args::from_arg_matches(&command.get_matches()) {
        Ok(args) => args,
        Err(e) => e.exit(),
    };
    match main_with(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("hermes-tui: {message}");
            ExitCode::FAILURE
        }
    }
}

fn main_with(args: Args) -> Result<(), String> {
    let process = Env::from_process();
    let home =
        place::Home::resolve(None, args.profile.as_deref(), &process).map_err(|e| e.to_string())?;
    let env = home.env(process.clone()).unwrap_or(process);
    let config_socket = place::config_socket(&home, &env);
    let socket = place::socket_path(
        args.socket.as_deref(),
        &env,
        config_socket.as_deref(),
        &home,
    )
    .map_err(|e| e.to_string())?;
    init_logging(&home.log_dir());
    let no_color = env.get("NO_COLOR").is_some_and(|v| !v.is_empty());
    let config_text = std::fs::read_to_string(home.config_file()).unwrap_or_default();
    let (config, problems) = TuiConfig::from_yaml(&config_text, no_color);
    for problem in &problems {
        tracing::warn!("{problem}");
    }
    let opening = match (args.session, args.resume, args.new) {
        (Some(id), ..) => Opening::Session(id),
        (None, true, _) => Opening::Continue,
        (None, false, true) => Opening::New,
        (None, false, false) => Opening::Later,
    };
    let history_file = home.dir.join("tui_history");
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    let app = runtime.block_on(async {
        let channel = run::connect(&socket).await?;
        let first = run::opening_session(&channel, &opening, &cwd.display().to_string()).await?;
        if opening != Opening::Later && first.is_none() {
            return Err("no session to continue: start one with --new".to_string());
        }
        let mouse = config.mouse;
        let started = run::start(channel, config, history::load(&history_file), first, cwd).await;
        let (guard, mut screen) =
            terminal::Guard::enter(mouse).map_err(|e| format!("cannot use the terminal: {e}"))?;
        let result = run::run(&mut screen, started).await;
        drop(guard);
        result
    })?;
    if let Err(e) = history::save(&history_file, &app.input.history) {
        tracing::warn!(path = %history_file.display(), "cannot save the input history: {e}");
    }
    if let Some(id) = &app.current {
        println!("left the TUI; the session goes on. Back to it: hermes-tui {id}");
    }
    // Tasks still waiting on the socket are dropped with the runtime.
    runtime.shutdown_background();
    Ok(())
}

/// A log past this size is moved to `tui.log.1` (replacing the one before) when the TUI starts.
const LOG_ROTATE_BYTES: u64 = 1024 * 1024;

/// Log to `logs/tui.log` (never the screen); `HERMES_TUI_LOG` sets the filter (default info).
fn init_logging(dir: &std::path::Path) {
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let path = dir.join("tui.log");
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > LOG_ROTATE_BYTES) {
        let _ = std::fs::rename(&path, dir.join("tui.log.1"));
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
    else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("HERMES_TUI_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}
