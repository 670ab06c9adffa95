//! Machine facts from a `rosetta env` report, reduced to what rules ask: the
//! GPUs (present, else named with `--gpu`), installed packages, libraries
//! with no code for those GPUs, and torch's CUDA versus the driver's. The
//! report's meaning is `rosetta-env`'s; this module only selects from it.

use crate::engine::Machine;
use rosetta_env::{CudaVersion, EnvReport, ProblemKind};

impl Machine {
    /// Selects the facts rules use from an env report.
    pub fn from_env(env: &EnvReport) -> Machine {
        let mut m = Machine::default();
        let present = env.gpu_archs();
        let archs = if present.is_empty() {
            env.target_archs()
        } else {
            present
        };
        m.gpu_memory_mib = env.gpus.iter().filter_map(|g| g.memory_mib).min();
        for g in &env.gpus {
            if let Some(a) = g.arch() {
                m.gpus.push((g.name.clone(), a));
            }
        }
        if m.gpus.is_empty() {
            for a in &archs {
                m.gpus.push((format!("GPU named {a}"), a.clone()));
            }
        }
        for p in &env.packages {
            m.packages.insert(
                // PEP 503, spelt with `_` as the log's version keys are.
                rosetta_schema::normalize_name(&p.name).replace('-', "_"),
                p.version.clone(),
            );
        }
        for arch in &archs {
            for lib in env.libraries_without_code_for(arch) {
                let package = lib
                    .package
                    .clone()
                    .unwrap_or_else(|| lib.file_name().to_string());
                let mut have = lib.sass.clone();
                have.extend(lib.ptx.iter().cloned());
                m.no_code
                    .push((lib.path.clone(), package, arch.clone(), have));
            }
        }
        // torch's CUDA (from its build, else its version's +cuNNN tag) against the driver's.
        let torch_cuda = env.torch.as_ref().and_then(|t| t.cuda.clone()).or_else(|| {
            let v = m.packages.get("torch")?;
            let digits: String = v
                .split("+cu")
                .nth(1)?
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            (digits.len() >= 3).then(|| {
                format!(
                    "{}.{}",
                    &digits[..digits.len() - 1],
                    &digits[digits.len() - 1..]
                )
            })
        });
        if let (Some(t), Some(d)) = (
            torch_cuda.as_deref().and_then(CudaVersion::parse),
            env.driver_cuda(),
        ) {
            if t > d {
                m.torch_cuda_newer_than_driver = Some((t.to_string(), d.to_string()));
            }
        }
        let _ = ProblemKind::TorchCudaNewerThanDriver;
        m
    }

    /// Parses the JSON text of a `rosetta env --format json` report.
    pub fn from_env_json(text: &str) -> Result<Machine, serde_json::Error> {
        let env: EnvReport = serde_json::from_str(text)?;
        Ok(Machine::from_env(&env))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_read_from_a_report() {
        let text = r#"{"gpus":[{"name":"NVIDIA RTX PRO 6000","compute_capability":"12.0","driver":"575.1","cuda_driver_version":"12.8","memory_mib":97887}],
        "packages":[{"name":"torch","version":"2.11.0+cu130"}],
        "libraries":[{"path":"/x/libflashmla.so","package":"sgl-kernel","sass":["sm_90a","sm_100a"],"ptx":[],"targets":{"sm_120":"none"}}],
        "problems":[]}"#;
        let m = Machine::from_env_json(text).unwrap();
        assert_eq!(m.gpus[0].1, "sm_120");
        assert_eq!(m.no_code.len(), 1);
        assert_eq!(m.no_code[0].1, "sgl-kernel");
    }
}
