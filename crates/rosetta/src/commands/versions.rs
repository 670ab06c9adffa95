//! `rosetta versions`.

use crate::args::VersionsArgs;
use crate::exit::Outcome;

/// Runs `rosetta versions`.
pub fn run(_args: VersionsArgs) -> Outcome {
    anyhow::bail!("`rosetta versions` is not built yet")
}
