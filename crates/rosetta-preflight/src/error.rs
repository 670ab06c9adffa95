//! Why preflight could not judge a launch: the command, the model or the
//! machine description could not be read. Each is bad input (exit 2).

use thiserror::Error;

/// What went wrong.
#[derive(Debug, Error)]
pub enum Error {
    /// The launch command cannot be read, or starts no known engine.
    #[error(transparent)]
    Command(#[from] rosetta_launch::Error),
    /// No engine rosetta knows is started by the command.
    #[error("recognise the launch command `{command}`: no known launcher (known: {known})")]
    UnknownEngine {
        /// The command's first words.
        command: String,
        /// The launchers rosetta knows.
        known: String,
    },
    /// The model's config is missing or malformed.
    #[error(transparent)]
    Model(#[from] rosetta_env::model_config::ModelConfigError),
    /// A weights file's header is malformed.
    #[error("read the safetensors header of {path}: {message}")]
    Weights {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A flag describing the target is not understood.
    #[error("read --{flag} `{value}`: {message}")]
    Target {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: String,
        /// What is wrong.
        message: String,
    },
}
