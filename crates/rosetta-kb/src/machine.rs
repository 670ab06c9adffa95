//! Machine facts from a `rosetta env --format json` report, reduced to what
//! rules ask: GPUs present, installed packages, libraries with no code for a
//! GPU present, torch's CUDA versus the driver's. Reads the JSON contract of
//! `rosetta env` (gpus, packages, libraries, problems) without depending on
//! how the env probe works.

use crate::engine::Machine;
use pep440_rs::Version;
use std::str::FromStr;

impl Machine {
    /// Parses the JSON text of a `rosetta env --format json` report.
    pub fn from_env_json(text: &str) -> Result<Machine, serde_json::Error> {
        let v: serde_json::Value = serde_json::from_str(text)?;
        let mut m = Machine::default();
        let mut driver_cuda: Option<String> = None;
        for g in v
            .get("gpus")
            .and_then(|g| g.as_array())
            .into_iter()
            .flatten()
        {
            let name = g
                .get("name")
                .and_then(|x| x.as_str())
                .unwrap_or("GPU")
                .to_string();
            if let Some(cc) = g.get("compute_capability").and_then(|x| x.as_str()) {
                if let Some(arch) = crate::tables::cc_to_sm(cc) {
                    m.gpus.push((name, arch));
                }
            }
            if driver_cuda.is_none() {
                driver_cuda = g
                    .get("cuda_driver_version")
                    .and_then(|x| x.as_str())
                    .map(String::from);
            }
        }
        for p in v
            .get("packages")
            .and_then(|p| p.as_array())
            .into_iter()
            .flatten()
        {
            if let (Some(n), Some(ver)) = (
                p.get("name").and_then(|x| x.as_str()),
                p.get("version").and_then(|x| x.as_str()),
            ) {
                m.packages.insert(
                    n.to_ascii_lowercase().replace(['-', '.'], "_"),
                    ver.to_string(),
                );
            }
        }
        let present: Vec<String> = m.gpus.iter().map(|(_, a)| a.clone()).collect();
        for lib in v
            .get("libraries")
            .and_then(|l| l.as_array())
            .into_iter()
            .flatten()
        {
            let path = lib
                .get("path")
                .and_then(|x| x.as_str())
                .unwrap_or("")
                .to_string();
            let package = lib
                .get("package")
                .and_then(|x| x.as_str())
                .unwrap_or("?")
                .to_string();
            let have: Vec<String> = ["sass", "ptx"]
                .iter()
                .flat_map(|k| {
                    lib.get(*k)
                        .and_then(|x| x.as_array())
                        .into_iter()
                        .flatten()
                        .filter_map(|x| x.as_str().map(String::from))
                })
                .collect();
            if let Some(targets) = lib.get("targets").and_then(|t| t.as_object()) {
                for (arch, verdict) in targets {
                    if verdict.as_str() == Some("none")
                        && (present.is_empty() || present.contains(arch))
                    {
                        m.no_code
                            .push((path.clone(), package.clone(), arch.clone(), have.clone()));
                    }
                }
            }
        }
        // torch's CUDA (from the torch version's +cuNNN tag) against the driver's CUDA.
        if let (Some(torch), Some(drv)) = (m.packages.get("torch"), driver_cuda) {
            if let Some(cu) = torch.split("+cu").nth(1) {
                let digits: String = cu.chars().take_while(|c| c.is_ascii_digit()).collect();
                if digits.len() >= 3 {
                    let (maj, min) = digits.split_at(digits.len() - 1);
                    let tc = format!("{maj}.{min}");
                    if let (Ok(a), Ok(b)) = (Version::from_str(&tc), Version::from_str(&drv)) {
                        if a > b {
                            m.torch_cuda_newer_than_driver = Some((tc, drv));
                        }
                    }
                }
            }
        }
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_and_driver_mismatch_are_read() {
        let text = r#"{"gpus":[{"name":"NVIDIA RTX PRO 6000","compute_capability":"12.0","driver":"575.1","cuda_driver_version":"12.8","memory_mib":97887}],
        "packages":[{"name":"torch","version":"2.11.0+cu130"}],
        "libraries":[{"path":"/x/libflashmla.so","package":"sgl-kernel","sass":["sm_90a","sm_100a"],"ptx":[],"targets":{"sm_120":"none"}}],
        "problems":[]}"#;
        let m = Machine::from_env_json(text).unwrap();
        assert_eq!(m.gpus[0].1, "sm_120");
        assert_eq!(m.no_code.len(), 1);
        assert_eq!(m.no_code[0].1, "sgl-kernel");
        assert_eq!(
            m.torch_cuda_newer_than_driver,
            Some(("13.0".into(), "12.8".into()))
        );
    }
}
