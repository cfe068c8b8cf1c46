//! The agent: sessions loaded live, the turn loop, the system prompt and its layers, the loop
//! guard, orphan repair, and the port through which tools reach the user.

mod batch;
mod context_files;
mod history;
mod identity;
mod live;
mod loop_guard;
mod port;
mod prompt;
mod repair;
mod session;
mod settings;
mod turn;

pub use live::{Answer, InteractiveGuard, LiveSession, LiveSessions};
pub use session::{MAX_INPUT_BYTES, Target, TurnError, TurnInput, prepare, send, spawn_turn};
pub use turn::{TurnEnd, TurnOutcome};
