//! `rosetta env`.

use crate::args::EnvArgs;
use crate::exit::Outcome;

/// Runs `rosetta env`.
pub fn run(_args: EnvArgs) -> Outcome {
    anyhow::bail!("`rosetta env` is not built yet")
}
