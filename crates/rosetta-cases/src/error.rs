//! Errors of the case library. Messages are lowercase fragments that read
//! after "failed to ..." and name the file involved.

use std::path::PathBuf;

/// What can go wrong loading cases.
#[derive(Debug, thiserror::Error)]
pub enum CasesError {
    /// A case folder or log could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The folder or file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// An `expect.toml` is malformed or uses a word outside the vocabulary.
    #[error("bad case labels in {path}: {message}")]
    Labels {
        /// The file.
        path: PathBuf,
        /// Why, with the valid words when one is unknown.
        message: String,
    },
    /// `ROSETTA_CASES_TUNING` names a number that is not one or a value that does not parse.
    #[error("bad ROSETTA_CASES_TUNING: {0}")]
    Tuning(String),
    /// The library compiled into the binary cannot be read (a build problem).
    #[error("the built-in case library is broken: {0}")]
    Embedded(String),
}
