//! The hermesd binary: parse flags, then hand over to the library.

use clap::Parser;

fn main() -> std::process::ExitCode {
    hermesd::startup::main(hermesd::cli::Args::parse())
}
