//! Errors of the supervisor: the launch could not start, or its log file
//! could not be written. Messages name the program or the file.

use std::path::PathBuf;

/// What can go wrong before or around the launch (the launch failing is an outcome, not an error).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// No command was given.
    #[error("run nothing: give the launch command after `--`")]
    NoCommand,
    /// The program could not be started.
    #[error("start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The log file could not be created or written.
    #[error("write the attempt's log {path}: {source}")]
    Log {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Signal handlers could not be installed.
    #[error("install signal handlers: {0}")]
    Signals(std::io::Error),
}
