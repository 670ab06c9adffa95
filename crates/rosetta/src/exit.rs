//! Exit codes, in one place. Documented in `--help` (see `args.rs`) and the README.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | success: the report or answer was written |
//! | 1 | the check found problems (`config` findings, a `preflight` blocker, `versions` with no release that answers) |
//! | 2 | bad input or usage: unreadable or malformed file, bad flag, bad rule file |
//! | 3 | an external service failed: the package index could not be reached |
//! | 4 | `run`: rosetta stopped the launch (a stall, or a failed probe with the server still up) |
//!
//! `run` otherwise exits with the launch's own exit code, or 128 + N when signal N interrupted it.

use std::io;
use std::process::ExitCode;

/// Success.
pub const OK: u8 = 0;
/// The check ran and found problems.
pub const FINDINGS: u8 = 1;
/// Bad input or usage.
pub const BAD_INPUT: u8 = 2;
/// An external service (the package index) failed.
pub const SERVICE: u8 = 3;

/// `run`: rosetta stopped the launch itself (a stall, a failed probe with the server up).
pub const STOPPED: u8 = 4;

/// What a subcommand returns: the exit code it wants on success.
pub type Outcome = anyhow::Result<u8>;

/// An error that knows its exit code. Anything else is bad input (2).
#[derive(Debug)]
pub struct Coded {
    /// The exit code to use.
    pub code: u8,
    /// The one-line message.
    pub message: String,
}

impl std::fmt::Display for Coded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Coded {}

/// Runs `f` and turns its outcome into an exit code; errors print one line
/// (the whole context chain, joined by `: `) to stderr. A broken pipe exits 0.
pub fn run(f: impl FnOnce() -> Outcome) -> ExitCode {
    match f() {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::from(OK);
            }
            let code = err
                .chain()
                .find_map(|e| e.downcast_ref::<Coded>().map(|c| c.code))
                .unwrap_or(BAD_INPUT);
            let msg = err
                .chain()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(": ");
            eprintln!("rosetta: error: {msg}");
            ExitCode::from(code)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}
