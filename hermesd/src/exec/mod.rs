//! Local execution backend for the `terminal` and `process` tools: the
//! login environment and secret stripping (`env`), foreground commands
//! (`local`), background processes (`process`, `process_tool`), argument
//! policy (`terminal`), the tool schemas (`schema`), and one program run without a shell
//! (`program`, cron's pre-run scripts).

mod env;
mod env_blocklist;
mod local;
mod output;
mod process;
mod process_notify;
mod process_record;
mod process_session;
mod process_tool;
mod program;
mod schema;
mod shell;
mod terminal;

pub use env::{
    EnvOrigin, FORCE_PREFIX, LoginEnv, capture_login_env, child_env, child_env_with_passthrough,
};
pub use local::{RunOutcome, RunRequest, RunResult, run_foreground};
pub use process::{CompletionEvent, ProcessRegistry, RegistryConfig, Spawned};
pub use process_notify::{NotificationKind, Notify, ProcessNotification};
pub use process_record::FILE_NAME as PROCESS_RECORD_FILE;
pub use process_tool::{StdinGate, is_polling_action};
pub use program::{ProgramEnd, ProgramRequest, ProgramRun, bash_path, run_program};
pub use schema::{process_schema, terminal_schema};
pub use terminal::{
    DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TIMEOUT_SECS, FOREGROUND_MAX_TIMEOUT_SECS, TerminalArgs,
    background_started, foreground_guidance, interpret_exit_code,
};

#[cfg(test)]
mod tests;
