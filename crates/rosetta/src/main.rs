//! The `rosetta` binary: parses flags, runs one subcommand, maps the outcome
//! to an exit code. Everything else lives in the library crates.

mod args;
mod commands;
mod exit;

use std::process::ExitCode;

fn main() -> ExitCode {
    exit::run(args::parse_and_run)
}
