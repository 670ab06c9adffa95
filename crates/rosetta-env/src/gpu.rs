//! Finds the GPUs of this machine: name, compute capability, driver, the
//! driver's highest CUDA version and memory, from `nvidia-smi` (two queries
//! run side by side, with a deadline: a hung GPU must not hang rosetta).
//!
//! No GPU, no driver or no `nvidia-smi` is a note, never an error. AMD GPUs
//! are only noticed (`amd-smi` / `rocm-smi` on `PATH`), not read. Judging
//! libraries against the GPUs is `report.rs`'s job.

use crate::command::{self, RunError};
use crate::report::Gpu;
use std::path::PathBuf;
use std::time::Duration;

/// How long `nvidia-smi` may take.
const DEADLINE: Duration = Duration::from_secs(15);

/// What the GPU probe found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GpuProbe {
    /// The GPUs.
    pub gpus: Vec<Gpu>,
    /// Where the facts came from.
    pub source: Option<String>,
    /// Why something is missing.
    pub notes: Vec<String>,
}

/// The `nvidia-smi` to run: `$ROSETTA_NVIDIA_SMI` (tests point it at a fake)
/// or `nvidia-smi` on `PATH`.
fn nvidia_smi() -> Option<PathBuf> {
    match std::env::var_os("ROSETTA_NVIDIA_SMI") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => command::which("nvidia-smi"),
    }
}

/// Probes the NVIDIA GPUs.
pub fn probe() -> GpuProbe {
    let mut probe = GpuProbe::default();
    let Some(smi) = nvidia_smi() else {
        probe
            .notes
            .push("no NVIDIA GPU found: nvidia-smi is not on PATH".into());
        amd_note(&mut probe);
        return probe;
    };
    let query = command::start(
        &smi,
        &[
            "--query-gpu=index,name,compute_cap,driver_version,memory.total",
            "--format=csv,noheader,nounits",
        ],
    );
    // The CUDA version is only in the plain banner.
    let banner = command::start(&smi, &[]);
    let query = query.and_then(|r| r.finish(DEADLINE));
    let banner = banner.and_then(|r| r.finish(DEADLINE));
    match query {
        Ok(text) => {
            probe.gpus = parse_query(&text);
            probe.source = Some("nvidia-smi".into());
            if probe.gpus.is_empty() {
                probe.notes.push("nvidia-smi lists no GPU".into());
            }
        }
        Err(RunError::NotFound) => {
            probe
                .notes
                .push("no NVIDIA GPU found: nvidia-smi is not on PATH".into());
        }
        Err(e) => probe
            .notes
            .push(format!("no NVIDIA GPU read: {} {e}", smi.display())),
    }
    let cuda = banner.ok().as_deref().and_then(parse_banner_cuda);
    if !probe.gpus.is_empty() {
        if cuda.is_none() {
            probe
                .notes
                .push("the driver's CUDA version was not found in nvidia-smi's banner".into());
        }
        for g in &mut probe.gpus {
            g.cuda_driver_version = cuda.clone();
        }
    }
    if probe.gpus.is_empty() {
        amd_note(&mut probe);
    }
    probe
}

fn amd_note(probe: &mut GpuProbe) {
    for tool in ["amd-smi", "rocm-smi"] {
        if command::which(tool).is_some() {
            probe.notes.push(format!(
                "{tool} is on PATH: AMD GPUs are not read yet; name the target with --gpu"
            ));
            return;
        }
    }
}

/// Parses `index, name, compute_cap, driver_version, memory.total` CSV lines.
pub fn parse_query(text: &str) -> Vec<Gpu> {
    text.lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() < 5 {
                return None;
            }
            // A name with a comma: the last three fields are fixed.
            let n = f.len();
            let name = f[1..n - 3].join(",");
            let known = |s: &str| !s.is_empty() && !s.starts_with('[') && s != "N/A";
            Some(Gpu {
                index: f[0].parse().ok(),
                name,
                compute_capability: if known(f[n - 3]) {
                    f[n - 3].to_string()
                } else {
                    String::new()
                },
                driver: known(f[n - 2]).then(|| f[n - 2].to_string()),
                cuda_driver_version: None,
                memory_mib: f[n - 1].parse().ok(),
            })
        })
        .collect()
}

/// `CUDA Version: 13.0` from the banner of a plain `nvidia-smi`.
pub fn parse_banner_cuda(text: &str) -> Option<String> {
    let at = text.find("CUDA Version:")?;
    let rest = text[at + "CUDA Version:".len()..].trim_start();
    let v: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!v.is_empty()).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_query_lines() {
        let g = parse_query(
            "0, NVIDIA H200, 9.0, 580.159.04, 143771\n1, NVIDIA RTX PRO 6000 Blackwell Server Edition, 12.0, 580.159.04, 97887\n",
        );
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].name, "NVIDIA H200");
        assert_eq!(g[0].compute_capability, "9.0");
        assert_eq!(g[0].driver.as_deref(), Some("580.159.04"));
        assert_eq!(g[0].memory_mib, Some(143771));
        assert_eq!(g[1].arch().as_deref(), Some("sm_120"));
        // Old drivers: no compute_cap field value.
        let g = parse_query("0, Tesla V100, [N/A], 470.1, 16160\n");
        assert_eq!(g[0].compute_capability, "");
        assert!(parse_query("garbage").is_empty());
    }

    #[test]
    fn parses_the_h200s_output() {
        let q = include_str!("../tests/fixtures/h200/nvidia-smi-query.csv");
        let g = parse_query(q);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].name, "NVIDIA H200");
        assert_eq!(g[0].arch().as_deref(), Some("sm_90"));
        assert_eq!(g[0].memory_mib, Some(143771));
        let banner = include_str!("../tests/fixtures/h200/nvidia-smi.txt");
        assert_eq!(parse_banner_cuda(banner).as_deref(), Some("13.0"));
    }

    #[test]
    fn parses_banner() {
        let b = "| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: 13.0     |";
        assert_eq!(parse_banner_cuda(b).as_deref(), Some("13.0"));
        assert_eq!(parse_banner_cuda("nothing"), None);
    }
}
