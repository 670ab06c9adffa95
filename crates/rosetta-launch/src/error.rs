//! The errors of this crate: a command line that cannot be read, an engine
//! file that cannot be loaded. Messages read after "failed to ...".

use thiserror::Error;

/// What went wrong.
#[derive(Debug, Error)]
pub enum Error {
    /// The command line is empty, has an unclosed quote, or names no program.
    #[error("read the launch command: {0}")]
    Command(String),
    /// An engine file under `kb/engines/` is malformed.
    #[error("load engine file {file}: {message}")]
    EngineFile {
        /// The file's name.
        file: String,
        /// What is wrong, with the line where the TOML parser knows it.
        message: String,
    },
}
