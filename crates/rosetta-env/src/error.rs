//! The errors of this crate. Messages are lowercase fragments that read after
//! "failed to …" and name the file involved.
//!
//! Only explicit bad input is an error ([`EnvError`]): a path the user named
//! that cannot be read, a report file that is not JSON. A malformed library
//! met while scanning is an [`ElfError`] that the scanner turns into a note on
//! that file; a probe that cannot run (no GPU, no Python) is a note too.

use std::io;
use std::path::PathBuf;

/// An error the caller must show: the run cannot produce what was asked.
#[derive(Debug, thiserror::Error)]
pub enum EnvError {
    /// A path the user named cannot be read.
    #[error("read {}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A report file is not a `rosetta env --format json` report.
    #[error("parse env report {}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// Why.
        source: serde_json::Error,
    },
    /// The Python interpreter the user named did not answer.
    #[error("ask python interpreter {} for its environment: {reason}", path.display())]
    Python {
        /// The interpreter.
        path: PathBuf,
        /// Why, in a few words.
        reason: String,
    },
}

/// Why a shared library could not be read as ELF; becomes a note on that file.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    /// An I/O error while reading headers.
    #[error("read ELF headers: {0}")]
    Io(io::Error),
    /// The file ends inside a header.
    #[error("read {what}: the file has only {size} bytes")]
    Truncated {
        /// Which header.
        what: &'static str,
        /// File size.
        size: u64,
    },
    /// A header field is impossible.
    #[error("read ELF header: {0}")]
    BadHeader(&'static str),
    /// The header, the section table or its names are not what or where
    /// the header says (a truncated or damaged file), as `object` found.
    #[error("read {what}: {source}, truncated or damaged?")]
    Malformed {
        /// What was being read: `ELF header`, `section table`.
        what: &'static str,
        /// `object`'s reason.
        source: object::read::Error,
    },
}
