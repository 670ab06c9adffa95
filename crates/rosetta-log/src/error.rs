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
    /// The bytes are not text: a binary file given by mistake.
    #[error(
        "{path} does not look like a log: {percent}% of its first {sampled} bytes are not text"
    )]
    NotText {
        /// The file.
        path: PathBuf,
        /// Share of the sample that is not text.
        percent: u32,
        /// Bytes sampled.
        sampled: usize,
    },
}
