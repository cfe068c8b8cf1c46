//! The agent: turns of a session. For now one model call per turn through the provider chain
//! (no tools yet); the turn loop, tools and prompt layers grow here.

mod identity;
mod send;

pub use send::{SendInput, SendOutcome, TurnError, send};
