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
            say(format_args!("rosetta: error: {}", one_line(&err)));
            ExitCode::from(code)
        }
    }
}

/// One line to stderr. A closed stderr (`2>&1 | head -1`) is not an error of ours:
/// unlike `eprintln!`, this does not panic on it.
pub fn say(msg: std::fmt::Arguments) {
    use std::io::Write;
    let _ = writeln!(io::stderr(), "{msg}");
}

/// The error and its causes on one line, joined by `: `. A cause whose text the message
/// before it already quotes (`cannot open F: {source}` over that same `source`) is left
/// out, so no reason is printed twice.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for e in err.chain() {
        let text = e.to_string();
        if parts.last().is_some_and(|prev| prev.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newcomer's pass (issue 12, section 11): `rosetta diagnose missing.log` printed
    /// `cannot open missing.log: No such file or directory (os error 2): No such file or
    /// directory (os error 2)`: the library's message quotes its source, and the chain
    /// printed the source again.
    #[test]
    fn a_cause_the_message_already_quotes_is_printed_once() {
        let io = io::Error::new(io::ErrorKind::NotFound, "No such file or directory");
        let err = anyhow::Error::new(rosetta_log::LogError::Open {
            path: "missing.log".into(),
            source: io,
        });
        assert_eq!(
            one_line(&err),
            "cannot open missing.log: No such file or directory"
        );
        let err = err.context("cannot load --kb rules");
        assert_eq!(
            one_line(&err),
            "cannot load --kb rules: cannot open missing.log: No such file or directory"
        );
        // A cause the message does not quote stays.
        let err = anyhow::anyhow!("disk full").context("cannot write out.md");
        assert_eq!(one_line(&err), "cannot write out.md: disk full");
    }
}
