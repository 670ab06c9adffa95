//! `rosetta diagnose`.

use crate::args::DiagnoseArgs;
use crate::exit::Outcome;

/// Runs `rosetta diagnose`.
pub fn run(_args: DiagnoseArgs) -> Outcome {
    anyhow::bail!("`rosetta diagnose` is not built yet")
}
