//! Tests for the file tools, one submodule per tool.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod read;
mod schema;
mod search;
mod write;
