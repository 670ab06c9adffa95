//! Errors of the log layer. Messages are lowercase fragments that read after
//! "failed to ..." and name the file involved.

use std::path::PathBuf;

/// What can go wrong reading a log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// The path does not exist or cannot be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The path is a directory.
    #[error("{path} is a directory, not a log file")]
    Directory {
        /// The path.
        path: PathBuf,
    },
    /// Reading failed midway.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}
