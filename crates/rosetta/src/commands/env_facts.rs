//! Reading a `rosetta env --format json` file for `diagnose --env`, reduced
//! to the machine facts the rules ask about.

use anyhow::Context as _;
use rosetta_kb::Machine;
use std::path::Path;

/// Loads the machine facts from an env report file.
pub fn load(path: &Path) -> anyhow::Result<Machine> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{} is not a rosetta env JSON report", path.display()))?;
    let mut m = Machine::default();
    for g in v.get("gpus").and_then(|g| g.as_array()).into_iter().flatten() {
        let name = g.get("name").and_then(|x| x.as_str()).unwrap_or("GPU").to_string();
        if let Some(cc) = g.get("compute_capability").and_then(|x| x.as_str()) {
            if let Some(arch) = rosetta_kb::tables::cc_to_sm(cc) {
                m.gpus.push((name, arch));
            }
        }
    }
    for p in v.get("packages").and_then(|p| p.as_array()).into_iter().flatten() {
        if let (Some(n), Some(ver)) = (p.get("name").and_then(|x| x.as_str()), p.get("version").and_then(|x| x.as_str())) {
            m.packages.insert(n.to_ascii_lowercase().replace(['-', '.'], "_"), ver.to_string());
        }
    }
    let present: Vec<String> = m.gpus.iter().map(|(_, a)| a.clone()).collect();
    for lib in v.get("libraries").and_then(|l| l.as_array()).into_iter().flatten() {
        let path = lib.get("path").and_then(|x| x.as_str()).unwrap_or("").to_string();
        let package = lib.get("package").and_then(|x| x.as_str()).unwrap_or("?").to_string();
        let have: Vec<String> = ["sass", "ptx"]
            .iter()
            .flat_map(|k| lib.get(*k).and_then(|x| x.as_array()).into_iter().flatten().filter_map(|x| x.as_str().map(String::from)))
            .collect();
        if let Some(targets) = lib.get("targets").and_then(|t| t.as_object()) {
            for (arch, verdict) in targets {
                if verdict.as_str() == Some("none") && (present.is_empty() || present.contains(arch)) {
                    m.no_code.push((path.clone(), package.clone(), arch.clone(), have.clone()));
                }
            }
        }
    }
    Ok(m)
}
