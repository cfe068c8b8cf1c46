//! Unit tests of the patch module, one file per concern.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod apply;
mod fuzzy;
mod schema;
mod v4a;
