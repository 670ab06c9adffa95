//! Reading a `rosetta env --format json` file for `diagnose --env`.

use rosetta_kb::Machine;
use std::path::Path;

/// Loads the machine facts from an env report file.
pub fn load(path: &Path) -> anyhow::Result<Machine> {
    let env = rosetta_env::EnvReport::from_json_file(path)?;
    Ok(Machine::from_env(&env))
}
