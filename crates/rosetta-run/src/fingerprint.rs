//! What a launch ran on, read the way `rosetta env` reads it (rosetta-env's
//! probes): the GPUs, driver and CUDA from `nvidia-smi`, the Python version
//! and the versions of the packages that decide how a server fails (torch,
//! transformers, the engine, kernel libraries) from the environment's
//! `*.dist-info`, torch's CUDA from `torch/version.py`; the host; the model
//! with a hash of its `config.json`; and the environment variables worth
//! recording. No library is scanned: this must take a second, not a minute.

use rosetta_journal::{Fingerprint, GpuPrint, ModelRef};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Packages whose versions the fingerprint keeps (PEP 503 names).
pub const PACKAGES: &[&str] = &[
    "torch",
    "transformers",
    "tokenizers",
    "accelerate",
    "safetensors",
    "sglang",
    "sgl-kernel",
    "vllm",
    "flashinfer-python",
    "flashinfer-cubin",
    "flash-attn",
    "flash-mla",
    "deep-gemm",
    "xformers",
    "triton",
    "tensorrt-llm",
    "tensorrt",
    "text-generation-server",
    "llama-cpp-python",
    "nvidia-nccl-cu12",
    "nvidia-nccl-cu13",
    "nvidia-cublas-cu12",
    "nvidia-cublas",
    "nvidia-cudnn-cu12",
    "nvidia-cudnn-cu13",
    "cuda-python",
];

/// Prefixes of environment variables that change how a server runs.
pub const ENV_PREFIXES: &[&str] = &[
    "CUDA_",
    "NCCL_",
    "TORCH_",
    "PYTORCH_",
    "TORCHINDUCTOR_",
    "TORCHDYNAMO_",
    "VLLM_",
    "SGLANG_",
    "SGL_",
    "TRITON_",
    "FLASHINFER_",
    "NVIDIA_",
    "CUBLAS_",
    "CUDNN_",
    "TRANSFORMERS_",
    "HF_HUB_OFFLINE",
    "OMP_NUM_THREADS",
    "TOKENIZERS_PARALLELISM",
    "LD_LIBRARY_PATH",
    "PYTHONUNBUFFERED",
];

/// Name parts that mark a secret: such variables are never recorded.
const SECRET_WORDS: &[&str] = &[
    "TOKEN",
    "KEY",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// The environment variables to record, from `vars` (name, value).
pub fn recorded_env(vars: impl Iterator<Item = (String, String)>) -> BTreeMap<String, String> {
    vars.filter(|(k, _)| {
        ENV_PREFIXES.iter().any(|p| k.starts_with(p))
            && !SECRET_WORDS
                .iter()
                .any(|s| k.to_ascii_uppercase().contains(s))
    })
    .map(|(k, v)| (k, v.chars().take(500).collect()))
    .collect()
}

/// The interpreter a launch command runs, when it names one (`python3 -m sglang...`,
/// `/opt/venv/bin/python`), resolved on `PATH`.
pub fn interpreter_of(command: &[String]) -> Option<PathBuf> {
    let first = command.first()?;
    let name = Path::new(first).file_name()?.to_str()?;
    if !name.starts_with("python") {
        return None;
    }
    let p = Path::new(first);
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join(first))
            .find(|c| c.is_file())
    })
}

fn host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Probes the machine; what cannot be read becomes a note.
pub fn probe(python: Option<&Path>) -> Fingerprint {
    let mut fp = Fingerprint {
        host: host(),
        ..Fingerprint::default()
    };
    let gpus = rosetta_env::gpu::probe();
    fp.notes.extend(gpus.notes);
    fp.gpus = gpus
        .gpus
        .iter()
        .map(|g| GpuPrint {
            name: g.name.clone(),
            compute_capability: g.compute_capability.clone(),
            memory_mib: g.memory_mib,
        })
        .collect();
    fp.driver = gpus.gpus.iter().find_map(|g| g.driver.clone());
    fp.cuda = gpus.gpus.iter().find_map(|g| g.cuda_driver_version.clone());
    let py = python
        .map(Path::to_path_buf)
        .or_else(rosetta_env::python::default_interpreter);
    let Some(py) = py else {
        fp.notes.push("no Python interpreter found".into());
        return fp;
    };
    match rosetta_env::python::ask_interpreter(&py) {
        Ok(info) => {
            fp.python = info.version.clone();
            let mut all = Vec::new();
            for site in &info.site_packages {
                let (dists, _) = rosetta_env::python::read_site(Path::new(site), 4);
                all.extend(dists.into_iter().map(|d| d.package));
            }
            for p in &all {
                let n = rosetta_env::normalize_name(&p.name);
                if PACKAGES.contains(&n.as_str()) {
                    fp.packages.entry(n).or_insert_with(|| p.version.clone());
                }
            }
            fp.torch_cuda =
                rosetta_env::python::torch_build(&info.site_packages, &all).and_then(|t| t.cuda);
        }
        Err(e) => fp.notes.push(format!("failed to {e}")),
    }
    fp
}

/// The model a launch serves: its path as given, with the SHA-256 of its
/// `config.json` (first 16 hex digits) when it is a local folder or file.
pub fn model_ref(path: &str) -> ModelRef {
    let p = Path::new(path);
    let config = if p.is_dir() {
        Some(p.join("config.json"))
    } else if p.file_name().is_some_and(|n| n == "config.json") {
        Some(p.to_path_buf())
    } else {
        None
    };
    let config_hash = config.and_then(|c| std::fs::read(c).ok()).map(|bytes| {
        let d = Sha256::digest(&bytes);
        d.iter().take(8).map(|b| format!("{b:02x}")).collect()
    });
    ModelRef {
        path: path.to_string(),
        config_hash,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_never_recorded() {
        let env = recorded_env(
            [
                ("CUDA_VISIBLE_DEVICES", "0,1"),
                ("HF_TOKEN", "hf_x"),
                ("VLLM_API_KEY", "k"),
                ("NCCL_DEBUG", "INFO"),
                ("HOME", "/root"),
            ]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        let keys: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(keys, ["CUDA_VISIBLE_DEVICES", "NCCL_DEBUG"]);
    }

    #[test]
    fn model_config_is_hashed() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("config.json"), b"{\"model_type\": \"llama\"}").unwrap();
        let m = model_ref(d.path().to_str().unwrap());
        assert_eq!(m.config_hash.as_deref().map(str::len), Some(16));
        assert_eq!(model_ref("org/model").config_hash, None);
    }

    #[test]
    fn interpreters_are_named_by_the_command() {
        let cmd = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            interpreter_of(&cmd(&["/opt/venv/bin/python", "-m", "vllm"])),
            Some(PathBuf::from("/opt/venv/bin/python"))
        );
        assert_eq!(interpreter_of(&cmd(&["vllm", "serve", "m"])), None);
    }
}
