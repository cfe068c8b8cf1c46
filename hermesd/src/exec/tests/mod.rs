//! Tests of the execution backend, grouped by concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod env;
mod local;
mod output;
mod process;
mod process_notify;
mod process_record;
mod terminal;
