//! `rosetta config`.

use crate::args::ConfigArgs;
use crate::exit::Outcome;

/// Runs `rosetta config`.
pub fn run(_args: ConfigArgs) -> Outcome {
    anyhow::bail!("`rosetta config` is not built yet")
}
