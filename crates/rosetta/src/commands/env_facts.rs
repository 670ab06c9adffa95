//! Reading a `rosetta env --format json` file for `diagnose --env`.

use anyhow::Context as _;
use rosetta_kb::Machine;
use std::path::Path;

/// Loads the machine facts from an env report file.
pub fn load(path: &Path) -> anyhow::Result<Machine> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Machine::from_env_json(&text)
        .with_context(|| format!("{} is not a rosetta env JSON report", path.display()))
}
