//! Unit tests of the sections.
