//! Errors of the knowledge base: a rule file that does not parse or does not
//! check. Messages name the file, the field and, for vocabulary words, the
//! valid values.

use std::path::PathBuf;

/// What can go wrong loading rules.
#[derive(Debug, thiserror::Error)]
pub enum KbError {
    /// A rule folder or file cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML does not parse or has an unknown field / bad value.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A field's value is wrong.
    #[error("{path}: field `{field}`: {message}")]
    Field {
        /// The file.
        path: PathBuf,
        /// The field.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A vocabulary file (`kb/vocab/` or a `--kb` folder) is wrong.
    #[error(transparent)]
    Vocab(#[from] rosetta_log::vocab::VocabError),
}
