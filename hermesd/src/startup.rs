//! Start-up in order: resolve the home, load the environment and configuration, take the pidfile
//! lock, start logging, open the store, get the socket, serve. Every failure is one line on stderr
//! and a non-zero exit; nothing here panics.

use std::{
    io::Write,
    os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt},
    path::Path,
    process::ExitCode,
    sync::Arc,
};

use hermes_proto::{
    env::Env,
    place::{self, Home},
};

use crate::{
    cli::Args,
    config::{Config, FlagOverrides},
    logging,
    server::{listener, pidfile::PidLock},
    state::DaemonState,
    store::Store,
};

/// Exit code for a configuration or usage problem.
const EXIT_CONFIG: u8 = 2;
/// Exit code when another daemon already serves this home.
const EXIT_RUNNING: u8 = 3;

/// Say one line on stderr; a closed stderr is not an error.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "hermesd: {line}");
}

fn fail(code: u8, message: impl std::fmt::Display) -> ExitCode {
    let message = message.to_string();
    tracing::error!("{message}");
    say(&message);
    ExitCode::from(code)
}

/// Everything needed before the runtime starts.
struct Prepared {
    home: Home,
    process_env: Env,
    env: Env,
    flags: FlagOverrides,
    config: Config,
}

fn prepare(args: &Args) -> Result<Prepared, String> {
    let process_env = Env::from_process();
    let home = Home::resolve(args.home.as_deref(), args.profile.as_deref(), &process_env)
        .map_err(|e| e.to_string())?;
    ensure_private_dir(&home.dir)?;
    ensure_private_dir(&home.log_dir())?;
    let env = home.env(process_env.clone()).map_err(|e| e.to_string())?;
    let mut flags = FlagOverrides::default();
    for pair in &args.set {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("invalid --set `{pair}`: expected KEY=VALUE"))?;
        flags
            .pairs
            .push((key.trim().to_string(), value.to_string()));
    }
    if let Some(level) = &args.log_level {
        flags.pairs.push(("logging.level".into(), level.clone()));
    }
    if let Some(socket) = &args.socket {
        flags
            .pairs
            .push(("daemon.socket".into(), socket.display().to_string()));
    }
    let config = Config::load(&home, &env, &flags).map_err(|e| e.to_string())?;
    Ok(Prepared {
        home,
        process_env,
        env,
        flags,
        config,
    })
}

/// Create a directory with mode 0700, or tighten an existing one of ours that others can enter
/// (as Hermes does for its home).
fn ensure_private_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        return std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()));
    }
    let meta =
        std::fs::metadata(dir).map_err(|e| format!("cannot inspect {}: {e}", dir.display()))?;
    if meta.permissions().mode() & 0o077 != 0 && meta.uid() == nix::unistd::geteuid().as_raw() {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("cannot chmod 700 {}: {e}", dir.display()))?;
    }
    Ok(())
}

/// Run the daemon to completion.
/// Threads of the blocking pool (tokio's default is 512).
const BLOCKING_THREADS: usize = 8;

pub fn main(args: Args) -> ExitCode {
    // First, while there is one thread: the environment this process was started with leaves the
    // block `/proc/<pid>/environ` shows.
    let scrubbed = crate::confine::own_process::scrub_initial_environment();
    // The log's masker gates every line with the key shapes: they compile beside start-up.
    crate::policy::secrets::warm_up();
    let prepared = match prepare(&args) {
        Ok(prepared) => prepared,
        Err(message) => return fail(EXIT_CONFIG, message),
    };
    // Every path is absolute by now; do not keep the starting directory busy.
    let _ = std::env::set_current_dir("/");
    let lock = match PidLock::acquire(&prepared.home.pid_file()) {
        Ok(lock) => lock,
        Err(e @ crate::server::pidfile::PidError::AlreadyRunning { .. }) => {
            return fail(EXIT_RUNNING, e);
        }
        Err(e) => return fail(1, e),
    };
    let config = &prepared.config;
    let _log_guard = match logging::init(
        &prepared.home.log_dir(),
        &config.logging.level,
        config.logging.max_files,
    ) {
        Ok(guard) => guard,
        Err(message) => return fail(EXIT_CONFIG, message),
    };
    // Masked from the first line on (the daemon's state installs the same masker again).
    logging::set_filter(Arc::new(crate::policy::SecretMasker::from_config(config)));
    for notice in &config.notices {
        tracing::info!("{notice}");
    }
    if let Err(e) = scrubbed {
        tracing::warn!(error = %e, "cannot wipe the initial environment block; /proc/<pid>/environ of hermesd keeps it");
    }
    crate::residency::limit_heaps();
    crate::confine::own_process::make_undumpable();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("hermesd")
        // Blocking work (SQLite, files, the policy's walks) never waits on other blocking work,
        // so a small pool cannot deadlock; each thread's stack stays resident while it lives,
        // and a burst of chats spawned a hundred of them at the default bound (512).
        .max_blocking_threads(BLOCKING_THREADS)
        // An idle blocking thread ends after a second (tokio's default is 10 s): its stack is
        // resident memory, and starting one again costs microseconds.
        .thread_keep_alive(std::time::Duration::from_secs(1))
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(1, format!("cannot start the async runtime: {e}")),
    };
    let code = runtime.block_on(serve(prepared, args.socket.as_deref()));
    drop(lock);
    code
}

async fn serve(prepared: Prepared, socket_flag: Option<&Path>) -> ExitCode {
    let Prepared {
        home,
        process_env,
        env,
        flags,
        config,
    } = prepared;
    let socket = match place::socket_path(socket_flag, &env, config.socket(), &home) {
        Ok(path) => path,
        Err(e) => return fail(EXIT_CONFIG, e),
    };
    let db_path = home.db_file();
    let store = match tokio::task::spawn_blocking(move || Store::open(&db_path)).await {
        Ok(Ok(store)) => store,
        Ok(Err(e)) => return fail(1, e),
        Err(e) => return fail(1, format!("cannot open the database: {e}")),
    };
    let listener = match listener::from_systemd(&socket) {
        Ok(Some(activated)) => activated,
        Ok(None) => match listener::bind(&socket).await {
            Ok(bound) => bound,
            Err(e) => return fail(1, e),
        },
        Err(e) => return fail(1, e),
    };
    warn_if_open_to_others(&home.dir);
    start_confinement(&home, &process_env, &listener.path).await;
    let state = Arc::new(DaemonState::new(
        home,
        listener.path.clone(),
        store,
        config,
        process_env,
        flags,
    ));
    match crate::run(Arc::clone(&state), listener).await {
        Ok(()) => {
            tracing::info!("hermesd stopped");
            ExitCode::SUCCESS
        }
        Err(e) => fail(1, e),
    }
}

/// Probe what the kernel enforces on the agent's processes and make it the confinement every
/// spawn uses (`confine`).
async fn start_confinement(home: &Home, process_env: &Env, socket: &Path) {
    let user_home = process_env.get("HOME").map(std::path::PathBuf::from);
    let layout = crate::confine::Layout {
        policy: crate::policy::paths::PathPolicy::new(&home.dir, user_home.as_deref()),
        socket: socket.to_path_buf(),
        runtime_dir: process_env
            .get("XDG_RUNTIME_DIR")
            .filter(|d| !d.is_empty())
            .map(std::path::PathBuf::from),
        uid: nix::unistd::geteuid().as_raw(),
    };
    let state_dir = home.dir.join("confine");
    let probed = tokio::task::spawn_blocking(move || {
        crate::confine::Confinement::probe(layout, &state_dir, crate::exec::bash_path())
    })
    .await;
    match probed {
        Ok(confinement) => crate::confine::install(confinement),
        Err(e) => {
            tracing::error!(error = %e, "confinement: the probe failed; the command rules alone apply")
        }
    }
}

fn warn_if_open_to_others(dir: &Path) {
    if let Ok(meta) = std::fs::metadata(dir)
        && meta.permissions().mode() & 0o077 != 0
    {
        tracing::warn!(
            home = %dir.display(),
            mode = format!("{:o}", meta.permissions().mode() & 0o777),
            "HERMES_HOME is readable by other users; run chmod 700 on it"
        );
    }
}
