//! Errors of the journal. Messages are lowercase fragments that read after
//! "failed to ..." and name the journal (file or URL without its password).

/// What can go wrong with a journal.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal cannot be opened or created.
    #[error("open the journal {location}: {message}")]
    Open {
        /// The file or URL (password removed).
        location: String,
        /// Why.
        message: String,
    },
    /// A query failed.
    #[error("use the journal {location}: {message}")]
    Query {
        /// The file or URL (password removed).
        location: String,
        /// Why.
        message: String,
    },
    /// The journal was written by a newer rosetta.
    #[error("read the journal {location}: its schema version {found} is newer than this rosetta knows ({known}); upgrade rosetta")]
    TooNew {
        /// The file or URL.
        location: String,
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// No attempt has this id.
    #[error(
        "find attempt #{id} in the journal {location}: there is none (ids run from 1 to {last})"
    )]
    NoAttempt {
        /// The id asked for.
        id: i64,
        /// The last id.
        last: i64,
        /// The journal.
        location: String,
    },
    /// A stored value does not read back (a journal edited by hand, or a bug).
    #[error("read the journal {location}: {message}")]
    Corrupt {
        /// The journal.
        location: String,
        /// What is wrong.
        message: String,
    },
}
