//! A model's configuration as facts: finds `config.json` from a file, a model
//! folder, a Hugging Face cache folder (`models--org--name`, a snapshot) or a
//! repo id found in the local Hugging Face cache, reads it (and a ModelOpt
//! `hf_quant_config.json` beside it) into a typed [`ModelConfig`].
//!
//! It only reads and types what the file says (model type, architectures,
//! positions, RoPE parameters in either the v4 `rope_scaling` or the v5
//! `rope_parameters` form, dtype, quantization scheme). Judging the config
//! against a transformers version or a GPU is `rosetta_kb::config_lint`'s job.
//! It never touches the network and never loads weights.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// The largest config file read (real ones are a few KB).
const MAX_CONFIG_BYTES: u64 = 16 * 1024 * 1024;

/// What can go wrong finding or reading a config.
#[derive(Debug, thiserror::Error)]
pub enum ModelConfigError {
    /// Nothing at the path, and no such repo in the Hugging Face cache.
    #[error("find a model config at {path}: {what}")]
    NotFound {
        /// The path given.
        path: PathBuf,
        /// What was looked for.
        what: String,
    },
    /// The file cannot be read.
    #[error("read {path}: {message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        message: String,
    },
    /// The file is not a JSON object.
    #[error("parse {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// Where the config was found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum ConfigSource {
    /// A JSON file given directly.
    File,
    /// A model folder with `config.json`.
    Folder,
    /// A Hugging Face cache entry.
    HfCache {
        /// `org/name`, when known from the folder name.
        repo: Option<String>,
        /// The snapshot revision read.
        revision: Option<String>,
    },
}

/// The quantization schemes whose GPU support differs by architecture.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum QuantScheme {
    /// 8-bit floating point weights (and usually activations).
    Fp8,
    /// NVIDIA's FP4 with FP8 block scales.
    Nvfp4,
    /// OCP microscaling FP4.
    Mxfp4,
    /// Anything else (AWQ, GPTQ, bitsandbytes, ...), by its method name.
    Other(String),
}

impl QuantScheme {
    /// The id used in data tables: `fp8`, `nvfp4`, `mxfp4`, or the method name.
    pub fn id(&self) -> &str {
        match self {
            QuantScheme::Fp8 => "fp8",
            QuantScheme::Nvfp4 => "nvfp4",
            QuantScheme::Mxfp4 => "mxfp4",
            QuantScheme::Other(s) => s,
        }
    }
}

/// The quantization a checkpoint declares.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Quantization {
    /// The scheme.
    pub scheme: QuantScheme,
    /// `quant_method` as written (`fp8`, `modelopt`, `compressed-tensors`, ...).
    pub method: Option<String>,
    /// Which field said so, e.g. `quantization_config.quant_algo`.
    pub field: String,
}

/// The text-model parameters, from the top level or from `text_config`
/// (multimodal models keep them there).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TextParams {
    /// `config` or `text_config`.
    pub from: String,
    /// `max_position_embeddings` (or `n_positions`, `seq_length`, `max_sequence_length`).
    pub max_position_embeddings: Option<u64>,
    /// Which key held it.
    pub max_position_key: Option<String>,
    /// The v4 form: `rope_scaling`.
    pub rope_scaling: Option<Value>,
    /// The v5 form: `rope_parameters`.
    pub rope_parameters: Option<Value>,
    /// Top-level `rope_theta`.
    pub rope_theta: Option<f64>,
    /// `hidden_size` or an alias.
    pub hidden_size: Option<u64>,
    /// `num_hidden_layers` or an alias.
    pub num_hidden_layers: Option<u64>,
    /// `num_attention_heads` or an alias.
    pub num_attention_heads: Option<u64>,
    /// `vocab_size`.
    pub vocab_size: Option<u64>,
}

/// A model config, typed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelConfig {
    /// The `config.json` read.
    pub path: PathBuf,
    /// How it was found.
    pub source: ConfigSource,
    /// `model_type`.
    pub model_type: Option<String>,
    /// `architectures`.
    pub architectures: Vec<String>,
    /// Whether the config names remote code (`auto_map`).
    pub auto_map: bool,
    /// `torch_dtype` (v4) or `dtype` (v5).
    pub dtype: Option<String>,
    /// The declared quantization, if any.
    pub quantization: Option<Quantization>,
    /// Text-model parameters.
    pub text: TextParams,
    /// `transformers_version` the checkpoint was saved with.
    pub saved_with: Option<String>,
    /// The whole file.
    #[serde(skip)]
    pub raw: Value,
}

/// Finds the `config.json` for a path: a file, a model folder, a Hugging
/// Face cache folder or snapshot, or an `org/name` id in the local cache.
pub fn locate(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(PathBuf, ConfigSource), ModelConfigError> {
    if path.is_file() {
        let in_snapshot = path
            .parent()
            .and_then(Path::parent)
            .is_some_and(|p| p.file_name().is_some_and(|n| n == "snapshots"));
        let source = if in_snapshot {
            hf_source(path.parent().unwrap_or(path))
        } else {
            ConfigSource::File
        };
        return Ok((path.to_path_buf(), source));
    }
    if path.is_dir() {
        let direct = path.join("config.json");
        if direct.is_file() {
            let in_snapshot = path
                .parent()
                .is_some_and(|p| p.file_name().is_some_and(|n| n == "snapshots"));
            let source = if in_snapshot {
                hf_source(path)
            } else {
                ConfigSource::Folder
            };
            return Ok((direct, source));
        }
        if path.join("snapshots").is_dir() {
            return snapshot_config(path);
        }
        return Err(ModelConfigError::NotFound {
            path: path.to_path_buf(),
            what: "no config.json in this folder, and it is not a Hugging Face cache entry (no snapshots/)".into(),
        });
    }
    // `org/name`: look in the local Hugging Face cache.
    let id = path.to_string_lossy();
    let parts: Vec<&str> = id.split('/').collect();
    if parts.len() == 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && *p != "." && *p != "..")
    {
        for hub in hub_dirs(env) {
            let entry = hub.join(format!("models--{}--{}", parts[0], parts[1]));
            if entry.join("snapshots").is_dir() {
                return snapshot_config(&entry);
            }
        }
        return Err(ModelConfigError::NotFound {
            path: path.to_path_buf(),
            what: "no such file or folder, and no such repo in the Hugging Face cache (HF_HUB_CACHE, HF_HOME/hub, ~/.cache/huggingface/hub)".into(),
        });
    }
    Err(ModelConfigError::NotFound {
        path: path.to_path_buf(),
        what: "no such file or folder".into(),
    })
}

/// The Hugging Face hub cache folders to look in, in `huggingface_hub`'s order.
pub fn hub_dirs(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(c) = env("HF_HUB_CACHE").filter(|s| !s.is_empty()) {
        dirs.push(PathBuf::from(c));
    }
    if let Some(h) = env("HF_HOME").filter(|s| !s.is_empty()) {
        dirs.push(Path::new(&h).join("hub"));
    }
    if let Some(x) = env("XDG_CACHE_HOME").filter(|s| !s.is_empty()) {
        dirs.push(Path::new(&x).join("huggingface").join("hub"));
    }
    if let Some(home) = env("HOME").filter(|s| !s.is_empty()) {
        dirs.push(
            Path::new(&home)
                .join(".cache")
                .join("huggingface")
                .join("hub"),
        );
    }
    dirs
}

/// `models--org--name/snapshots/<rev>` -> the source.
fn hf_source(snapshot: &Path) -> ConfigSource {
    let revision = snapshot
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    let repo = snapshot
        .parent()
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .and_then(|n| n.strip_prefix("models--").map(|r| r.replacen("--", "/", 1)));
    ConfigSource::HfCache { repo, revision }
}

/// The config of a cache entry: the snapshot `refs/main` names, else the newest snapshot.
fn snapshot_config(entry: &Path) -> Result<(PathBuf, ConfigSource), ModelConfigError> {
    let snaps = entry.join("snapshots");
    if let Ok(rev) = std::fs::read_to_string(entry.join("refs").join("main")) {
        let dir = snaps.join(rev.trim());
        if dir.join("config.json").is_file() {
            return Ok((dir.join("config.json"), hf_source(&dir)));
        }
    }
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    if let Ok(rd) = std::fs::read_dir(&snaps) {
        for e in rd.flatten() {
            let dir = e.path();
            let cfg = dir.join("config.json");
            if !cfg.is_file() {
                continue;
            }
            let t = e
                .metadata()
                .and_then(|m| m.modified())
                .unwrap_or(std::time::UNIX_EPOCH);
            if best.as_ref().is_none_or(|(bt, _)| t > *bt) {
                best = Some((t, dir));
            }
        }
    }
    match best {
        Some((_, dir)) => Ok((dir.join("config.json"), hf_source(&dir))),
        None => Err(ModelConfigError::NotFound {
            path: entry.to_path_buf(),
            what: "no snapshot with a config.json (was the download interrupted?)".into(),
        }),
    }
}

/// Finds and reads a model config.
pub fn read(
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ModelConfig, ModelConfigError> {
    let (file, source) = locate(path, env)?;
    let text = read_limited(&file)?;
    let mut cfg = from_json_text(&text, &file, source)?;
    // ModelOpt checkpoints state their quantization beside config.json.
    if cfg.quantization.is_none() {
        if let Some(dir) = file.parent() {
            let hq = dir.join("hf_quant_config.json");
            if hq.is_file() {
                if let Ok(t) = read_limited(&hq) {
                    if let Ok(v) = serde_json::from_str::<Value>(&t) {
                        cfg.quantization = modelopt_file_quant(&v);
                    }
                }
            }
        }
    }
    Ok(cfg)
}

fn read_limited(path: &Path) -> Result<String, ModelConfigError> {
    let err = |e: std::io::Error| ModelConfigError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let len = std::fs::metadata(path).map_err(err)?.len();
    if len > MAX_CONFIG_BYTES {
        return Err(ModelConfigError::Read {
            path: path.to_path_buf(),
            message: format!("{len} bytes: too large for a model config (is it a weights file?)"),
        });
    }
    let bytes = std::fs::read(path).map_err(err)?;
    String::from_utf8(bytes).map_err(|_| ModelConfigError::Parse {
        path: path.to_path_buf(),
        message: "not UTF-8 text (is it a weights file?)".into(),
    })
}

/// Types a config from its JSON text.
pub fn from_json_text(
    text: &str,
    path: &Path,
    source: ConfigSource,
) -> Result<ModelConfig, ModelConfigError> {
    let raw: Value = serde_json::from_str(text).map_err(|e| ModelConfigError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if !raw.is_object() {
        return Err(ModelConfigError::Parse {
            path: path.to_path_buf(),
            message: "not a JSON object".into(),
        });
    }
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let architectures = raw
        .get("architectures")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let text_cfg = ["text_config", "llm_config", "language_config"]
        .iter()
        .find_map(|k| raw.get(*k).filter(|v| v.is_object()).map(|v| (*k, v)));
    Ok(ModelConfig {
        path: path.to_path_buf(),
        source,
        model_type: s(&raw, "model_type"),
        architectures,
        auto_map: raw.get("auto_map").is_some_and(|v| !v.is_null()),
        dtype: s(&raw, "torch_dtype").or_else(|| s(&raw, "dtype")),
        quantization: config_quant(&raw),
        text: text_params(&raw, text_cfg),
        saved_with: s(&raw, "transformers_version"),
        raw,
    })
}

/// Reads a key from the text config first, then the top level.
fn text_params(raw: &Value, text: Option<(&str, &Value)>) -> TextParams {
    let pick = |keys: &[&str]| -> Option<(String, Value)> {
        let mut sources: Vec<&Value> = Vec::new();
        if let Some((_, t)) = text {
            sources.push(t);
        }
        sources.push(raw);
        for src in sources {
            for k in keys {
                if let Some(v) = src.get(*k).filter(|v| !v.is_null()) {
                    return Some((k.to_string(), v.clone()));
                }
            }
        }
        None
    };
    let num = |keys: &[&str]| pick(keys).and_then(|(_, v)| as_u64(&v));
    let (mpe_key, mpe) = match pick(&[
        "max_position_embeddings",
        "n_positions",
        "max_sequence_length",
        "seq_length",
    ]) {
        Some((k, v)) => (Some(k), as_u64(&v)),
        None => (None, None),
    };
    let from = match text {
        Some((k, t))
            if t.get("max_position_embeddings").is_some()
                || t.get("rope_scaling").is_some()
                || t.get("rope_parameters").is_some() =>
        {
            k.to_string()
        }
        _ => "config".to_string(),
    };
    TextParams {
        from,
        max_position_embeddings: mpe,
        max_position_key: mpe_key,
        rope_scaling: pick(&["rope_scaling"]).map(|(_, v)| v),
        rope_parameters: pick(&["rope_parameters"]).map(|(_, v)| v),
        rope_theta: pick(&["rope_theta"]).and_then(|(_, v)| v.as_f64()),
        hidden_size: num(&["hidden_size", "n_embd", "d_model"]),
        num_hidden_layers: num(&["num_hidden_layers", "n_layer", "num_layers"]),
        num_attention_heads: num(&["num_attention_heads", "n_head", "num_heads"]),
        vocab_size: num(&["vocab_size", "padded_vocab_size"]),
    }
}

fn as_u64(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0)
            .map(|f| f as u64)
    })
}

/// The quantization a `config.json` declares.
fn config_quant(raw: &Value) -> Option<Quantization> {
    if let Some(q) = raw.get("quantization_config").filter(|v| v.is_object()) {
        let method = q
            .get("quant_method")
            .and_then(Value::as_str)
            .map(str::to_ascii_lowercase);
        let upper = |k: &str| {
            q.get(k)
                .and_then(Value::as_str)
                .map(str::to_ascii_uppercase)
        };
        // ModelOpt: quant_algo at the top or under `quantization`.
        let algo = upper("quant_algo").or_else(|| {
            q.get("quantization")
                .and_then(|x| x.get("quant_algo"))
                .and_then(Value::as_str)
                .map(str::to_ascii_uppercase)
        });
        let scheme = match (method.as_deref(), algo.as_deref()) {
            (_, Some(a)) if a.contains("NVFP4") => Some(QuantScheme::Nvfp4),
            (_, Some(a)) if a.contains("MXFP4") => Some(QuantScheme::Mxfp4),
            (_, Some(a)) if a.starts_with("FP8") => Some(QuantScheme::Fp8),
            (Some("fp8" | "fbgemm_fp8" | "fp8_e4m3" | "ptpc_fp8"), _) => Some(QuantScheme::Fp8),
            (Some("mxfp4"), _) => Some(QuantScheme::Mxfp4),
            (Some("compressed-tensors"), _) => compressed_tensors_scheme(q),
            _ => None,
        };
        let field = if algo.is_some() {
            "quantization_config.quant_algo"
        } else {
            "quantization_config.quant_method"
        };
        return Some(Quantization {
            scheme: scheme.unwrap_or_else(|| {
                QuantScheme::Other(method.clone().unwrap_or_else(|| "unknown".into()))
            }),
            method,
            field: field.into(),
        });
    }
    let dtype = raw
        .get("torch_dtype")
        .or_else(|| raw.get("dtype"))
        .and_then(Value::as_str)?;
    dtype.starts_with("float8").then(|| Quantization {
        scheme: QuantScheme::Fp8,
        method: None,
        field: "torch_dtype".into(),
    })
}

/// compressed-tensors: the `format`, else the weight scheme of the first config group.
fn compressed_tensors_scheme(q: &Value) -> Option<QuantScheme> {
    let fmt = q.get("format").and_then(Value::as_str).unwrap_or("");
    if fmt.contains("nvfp4") {
        return Some(QuantScheme::Nvfp4);
    }
    if fmt.contains("mxfp4") {
        return Some(QuantScheme::Mxfp4);
    }
    if fmt.contains("float-quantized") {
        return Some(QuantScheme::Fp8);
    }
    let groups = q.get("config_groups")?.as_object()?;
    for g in groups.values() {
        let w = g.get("weights")?;
        let bits = w.get("num_bits").and_then(Value::as_u64);
        let ty = w.get("type").and_then(Value::as_str);
        let group = w.get("group_size").and_then(Value::as_u64);
        match (bits, ty) {
            (Some(8), Some("float")) => return Some(QuantScheme::Fp8),
            (Some(4), Some("float")) if group == Some(16) => return Some(QuantScheme::Nvfp4),
            (Some(4), Some("float")) => return Some(QuantScheme::Mxfp4),
            _ => {}
        }
    }
    None
}

/// ModelOpt's `hf_quant_config.json`: `{"quantization": {"quant_algo": "NVFP4"}}`.
fn modelopt_file_quant(v: &Value) -> Option<Quantization> {
    let algo = v
        .get("quantization")
        .and_then(|q| q.get("quant_algo"))
        .and_then(Value::as_str)?
        .to_ascii_uppercase();
    let scheme = if algo.contains("NVFP4") {
        QuantScheme::Nvfp4
    } else if algo.contains("MXFP4") {
        QuantScheme::Mxfp4
    } else if algo.starts_with("FP8") {
        QuantScheme::Fp8
    } else {
        QuantScheme::Other(algo.to_ascii_lowercase())
    };
    Some(Quantization {
        scheme,
        method: Some("modelopt".into()),
        field: "hf_quant_config.json quantization.quant_algo".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse(t: &str) -> ModelConfig {
        from_json_text(t, Path::new("config.json"), ConfigSource::File).unwrap()
    }

    #[test]
    fn llama31_types() {
        let c = parse(
            r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","max_position_embeddings":131072,
            "rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},
            "rope_theta":500000.0,"torch_dtype":"bfloat16","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":128256}"#,
        );
        assert_eq!(c.model_type.as_deref(), Some("llama"));
        assert_eq!(c.text.max_position_embeddings, Some(131072));
        assert_eq!(c.text.rope_theta, Some(500000.0));
        assert!(c.text.rope_scaling.is_some() && c.text.rope_parameters.is_none());
        assert_eq!(c.dtype.as_deref(), Some("bfloat16"));
        assert!(c.quantization.is_none());
    }

    #[test]
    fn text_config_wins_for_multimodal_models() {
        let c = parse(
            r#"{"model_type":"qwen3_vl","architectures":["Qwen3VLForConditionalGeneration"],
            "text_config":{"max_position_embeddings":262144,"rope_scaling":{"rope_type":"default","mrope_section":[24,20,20]},"hidden_size":4096}}"#,
        );
        assert_eq!(c.text.from, "text_config");
        assert_eq!(c.text.max_position_embeddings, Some(262144));
        assert_eq!(c.text.hidden_size, Some(4096));
    }

    #[test]
    fn quantization_schemes() {
        let q = |t: &str| parse(t).quantization.map(|q| q.scheme);
        assert_eq!(
            q(r#"{"quantization_config":{"quant_method":"fp8","weight_block_size":[128,128]}}"#),
            Some(QuantScheme::Fp8)
        );
        assert_eq!(
            q(r#"{"quantization_config":{"quant_method":"modelopt","quant_algo":"NVFP4"}}"#),
            Some(QuantScheme::Nvfp4)
        );
        assert_eq!(
            q(r#"{"quantization_config":{"quant_method":"mxfp4"}}"#),
            Some(QuantScheme::Mxfp4)
        );
        assert_eq!(
            q(
                r#"{"quantization_config":{"quant_method":"compressed-tensors","config_groups":{"group_0":{"weights":{"num_bits":4,"type":"float","group_size":16}}}}}"#
            ),
            Some(QuantScheme::Nvfp4)
        );
        assert_eq!(
            q(r#"{"quantization_config":{"quant_method":"awq","bits":4}}"#),
            Some(QuantScheme::Other("awq".into()))
        );
        assert_eq!(
            q(r#"{"torch_dtype":"float8_e4m3fn"}"#),
            Some(QuantScheme::Fp8)
        );
        assert_eq!(q(r#"{"torch_dtype":"bfloat16"}"#), None);
    }

    #[test]
    fn finds_configs_in_folders_and_the_hf_cache() {
        let dir = tempfile::tempdir().unwrap();
        let model = dir.path().join("GLM-5-NVFP4");
        std::fs::create_dir_all(&model).unwrap();
        std::fs::write(model.join("config.json"), r#"{"model_type":"glm_moe_dsa"}"#).unwrap();
        std::fs::write(
            model.join("hf_quant_config.json"),
            r#"{"producer":{"name":"modelopt"},"quantization":{"quant_algo":"NVFP4","kv_cache_quant_algo":"FP8"}}"#,
        )
        .unwrap();
        let c = read(&model, &no_env).unwrap();
        assert_eq!(c.source, ConfigSource::Folder);
        assert_eq!(c.quantization.unwrap().scheme, QuantScheme::Nvfp4);

        let hub = dir.path().join("hub");
        let entry = hub.join("models--zai-org--GLM-5");
        let snap = entry.join("snapshots").join("abc123");
        std::fs::create_dir_all(&snap).unwrap();
        std::fs::create_dir_all(entry.join("refs")).unwrap();
        std::fs::write(entry.join("refs").join("main"), "abc123\n").unwrap();
        std::fs::write(snap.join("config.json"), r#"{"model_type":"glm_moe_dsa"}"#).unwrap();
        let want = ConfigSource::HfCache {
            repo: Some("zai-org/GLM-5".into()),
            revision: Some("abc123".into()),
        };
        assert_eq!(read(&entry, &no_env).unwrap().source, want);
        assert_eq!(read(&snap, &no_env).unwrap().source, want);
        assert_eq!(
            read(&snap.join("config.json"), &no_env).unwrap().source,
            want
        );
        let hub_s = hub.to_string_lossy().into_owned();
        let env = move |k: &str| (k == "HF_HUB_CACHE").then(|| hub_s.clone());
        assert_eq!(read(Path::new("zai-org/GLM-5"), &env).unwrap().source, want);

        let err = read(Path::new("zai-org/nope"), &env).unwrap_err();
        assert!(err.to_string().contains("Hugging Face cache"), "{err}");
        let err = read(dir.path(), &no_env).unwrap_err();
        assert!(err.to_string().contains("no config.json"), "{err}");
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.json");
        std::fs::write(&p, "[1,2]").unwrap();
        let e = read(&p, &no_env).unwrap_err();
        assert!(e.to_string().contains("not a JSON object"), "{e}");
        std::fs::write(&p, "{\"model_type\": ").unwrap();
        let e = read(&p, &no_env).unwrap_err();
        assert!(e.to_string().starts_with("parse "), "{e}");
        std::fs::write(&p, [0xff, 0xfe, 0x00]).unwrap();
        let e = read(&p, &no_env).unwrap_err();
        assert!(e.to_string().contains("not UTF-8"), "{e}");
    }
}
