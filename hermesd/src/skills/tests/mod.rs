//! Tests for the skills read side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activation_tests;
mod catalog_tests;
mod fixture;
mod frontmatter_tests;
mod index_tests;
mod schema_tests;
mod view_tests;
