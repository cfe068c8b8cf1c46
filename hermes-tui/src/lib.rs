//! hermes-tui: the full-screen client of hermesd. Every live session on the side, one
//! conversation in the middle, the input and a status bar below; a thin client of the daemon's
//! socket like `hermesctl`, so switching sessions is switching attachments and quitting stops
//! nothing. [`app`] is the state and its update, [`view`] draws it, [`link`] talks to the daemon,
//! [`run`] joins them to a terminal.

pub mod app;
pub mod config;
pub mod history;
pub mod link;
pub mod run;
pub mod terminal;
pub mod view;
