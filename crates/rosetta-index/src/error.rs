//! The errors of the package index client. Messages are lowercase fragments
//! that read after "failed to …" and name the URL or file involved; the
//! binary adds context and picks the exit code ([`IndexError::is_service`]
//! separates "the index could not be reached" from "its answer is broken").

use crate::zip::ZipError;
use std::path::PathBuf;

/// Everything that can go wrong talking to a package index or its cache.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The server could not be reached, or kept failing after retries.
    #[error("reach {url}: {message}")]
    Unreachable {
        /// The URL asked.
        url: String,
        /// What the transport said.
        message: String,
    },
    /// The server answered with an HTTP error status.
    #[error("fetch {url}: the server answered {status}")]
    Status {
        /// The URL asked.
        url: String,
        /// The status code.
        status: u16,
    },
    /// The project page is not a simple repository page.
    #[error("read the project page {url}: {what}")]
    BadPage {
        /// The URL asked.
        url: String,
        /// What is wrong with it.
        what: String,
    },
    /// A range answer that does not match the question.
    #[error("read bytes of {url}: {what}")]
    BadRange {
        /// The URL asked.
        url: String,
        /// What is wrong.
        what: String,
    },
    /// The wheel's zip structures are broken.
    #[error("read the zip directory of {url}: {source}")]
    Zip {
        /// The wheel's URL.
        url: String,
        /// What is wrong with the zip.
        source: ZipError,
    },
    /// Offline and the cache does not have the answer.
    #[error("answer offline: {what} is not in the cache at {dir}")]
    NotCached {
        /// What was missing.
        what: String,
        /// The cache folder.
        dir: PathBuf,
    },
    /// The cache folder cannot be written or read.
    #[error("use the cache at {path}: {message}")]
    Cache {
        /// The file or folder.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// A CA bundle cannot be used.
    #[error("load the CA bundle {path}: {message}")]
    CaBundle {
        /// The bundle.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// No index URL could be found.
    #[error("find the package index: {0}")]
    NoIndex(String),
}

impl IndexError {
    /// Whether this is the index (or the network to it) failing rather than
    /// bad input: exit code 3 in the binary.
    pub fn is_service(&self) -> bool {
        match self {
            IndexError::Unreachable { .. } => true,
            IndexError::Status { status, .. } => *status >= 500 || *status == 429,
            _ => false,
        }
    }
}
