//! The size of a model's weights without loading them: summed from the
//! safetensors headers (the 8-byte length and the JSON header of each file;
//! the tensor bytes are never read), else estimated from config.json's shape
//! (dense, MoE with routed and shared experts, MLA attention) and its
//! quantization. Says which, and what the estimate leaves out.

use crate::error::Error;
use rosetta_env::model_config::{ModelConfig, QuantScheme};
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The safetensors format caps a header at 100 MB.
const MAX_HEADER: u64 = 100 * 1000 * 1000;

/// One entry of a safetensors header (`__metadata__` reads as one with neither field).
#[derive(Deserialize)]
struct TensorEntry {
    #[serde(default)]
    data_offsets: Option<(u64, u64)>,
    #[serde(default)]
    shape: Option<Vec<u64>>,
}

/// Weights counted from the safetensors headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderTotals {
    /// Files read.
    pub files: u64,
    /// Tensor bytes, summed from `data_offsets`.
    pub bytes: u64,
    /// Elements, summed from `shape`.
    pub parameters: u64,
    /// Header bytes read in all (8 + header length, per file).
    pub header_bytes_read: u64,
}

/// Reads one safetensors header from `r` (of `len` bytes): (tensor bytes, elements, bytes read).
pub fn read_header<R: Read + Seek>(r: &mut R, len: u64) -> Result<(u64, u64, u64), String> {
    let mut n = [0u8; 8];
    r.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
    r.read_exact(&mut n)
        .map_err(|_| "shorter than the 8-byte header length".to_string())?;
    let hlen = u64::from_le_bytes(n);
    if hlen > MAX_HEADER {
        return Err(format!(
            "header length {hlen} is above the format's 100 MB limit (not a safetensors file?)"
        ));
    }
    if 8 + hlen > len {
        return Err(format!(
            "header length {hlen} runs past the end of the file ({len} bytes): truncated download?"
        ));
    }
    let mut buf = vec![0u8; hlen as usize];
    r.read_exact(&mut buf).map_err(|e| e.to_string())?;
    // Typed, so that the parser skips `dtype` and builds no tree: a 400 GB
    // checkpoint's headers hold tens of thousands of entries.
    let obj: HashMap<String, TensorEntry> = serde_json::from_slice(&buf).map_err(|e| {
        if e.is_data() {
            format!("the header is not a JSON object of tensors: {e}")
        } else {
            format!("the header is not JSON: {e}")
        }
    })?;
    let data_len = len - 8 - hlen;
    let (mut bytes, mut params) = (0u64, 0u64);
    for (name, t) in &obj {
        if name == "__metadata__" {
            continue;
        }
        let off = t
            .data_offsets
            .ok_or_else(|| format!("tensor `{name}` has no data_offsets [begin, end]"))?;
        if off.1 < off.0 || off.1 > data_len {
            return Err(format!(
                "tensor `{name}` spans {}..{}, outside the {data_len} data bytes",
                off.0, off.1
            ));
        }
        bytes += off.1 - off.0;
        let elems = t
            .shape
            .as_deref()
            .map(|s| s.iter().copied().fold(1u64, u64::saturating_mul))
            .unwrap_or(0);
        params = params.saturating_add(elems);
    }
    Ok((bytes, params, 8 + hlen))
}

/// The `*.safetensors` files directly in `dir`, sorted.
pub fn safetensors_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "safetensors") && p.is_file())
        .collect();
    v.sort();
    v
}

/// Sums the headers of every safetensors file in `dir`; `None` when there is none.
pub fn from_headers(dir: &Path) -> Result<Option<HeaderTotals>, Error> {
    let files = safetensors_files(dir);
    if files.is_empty() {
        return Ok(None);
    }
    let mut t = HeaderTotals {
        files: 0,
        bytes: 0,
        parameters: 0,
        header_bytes_read: 0,
    };
    for f in files {
        let err = |message: String| Error::Weights {
            path: f.clone(),
            message,
        };
        let mut file = std::fs::File::open(&f).map_err(|e| err(e.to_string()))?;
        let len = file.metadata().map_err(|e| err(e.to_string()))?.len();
        let (b, p, read) = read_header(&mut file, len).map_err(err)?;
        t.files += 1;
        t.bytes += b;
        t.parameters += p;
        t.header_bytes_read += read;
    }
    Ok(Some(t))
}

/// A size estimated from the config.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Parameters.
    pub parameters: u64,
    /// Bytes.
    pub bytes: u64,
    /// What was assumed.
    pub notes: Vec<String>,
}

fn num(v: &Value, keys: &[&str]) -> Option<u64> {
    keys.iter().find_map(|k| v.get(*k).and_then(Value::as_u64))
}

/// Estimates the weights from config.json: embeddings, attention (MHA/GQA or
/// MLA), dense MLPs and MoE layers, at the bytes per parameter of the
/// checkpoint's quantization for the MLP and expert weights (attention and
/// embeddings stay 16-bit, as quantized checkpoints usually keep them).
pub fn estimate(cfg: &ModelConfig) -> Option<Estimate> {
    // Multimodal configs keep the language model under text_config.
    let raw = cfg
        .raw
        .get("text_config")
        .filter(|t| t.is_object())
        .unwrap_or(&cfg.raw);
    let h = num(raw, &["hidden_size", "n_embd", "d_model"])?;
    let layers = num(raw, &["num_hidden_layers", "n_layer", "num_layers"])?;
    let vocab = num(raw, &["vocab_size"]).unwrap_or(32000);
    let heads = num(raw, &["num_attention_heads", "n_head"])
        .unwrap_or(h / 128)
        .max(1);
    let kv_heads = num(raw, &["num_key_value_heads"]).unwrap_or(heads);
    let head_dim = num(raw, &["head_dim"]).unwrap_or(h / heads);
    let inter = num(raw, &["intermediate_size", "ffn_hidden_size", "n_inner"]).unwrap_or(4 * h);
    let mut notes = Vec::new();

    let attn = attention_params(raw, h, heads, kv_heads, head_dim, &mut notes);
    let (dense_layers, moe_layers, per_moe_layer) = mlp_layers(raw, h, layers, inter, &mut notes);
    let dense_mlp = 3 * h * inter;
    let tied = raw
        .get("tie_word_embeddings")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let embed = vocab * h * if tied { 1 } else { 2 };
    let mlp_params = dense_layers * dense_mlp + moe_layers * per_moe_layer;
    let other = layers * attn + embed + layers * 2 * h;
    let params = mlp_params + other;
    let (bpp, what) = bytes_per_parameter(cfg);
    notes.push(format!(
        "MLP/expert weights at {what}; attention and embeddings at 16-bit"
    ));
    let bytes = (mlp_params as f64 * bpp) as u64 + other * 2;
    Some(Estimate {
        parameters: params,
        bytes,
        notes,
    })
}

/// Attention parameters of one layer: MLA (`kv_lora_rank`, noted) or MHA/GQA.
fn attention_params(
    raw: &Value,
    h: u64,
    heads: u64,
    kv_heads: u64,
    head_dim: u64,
    notes: &mut Vec<String>,
) -> u64 {
    match num(raw, &["kv_lora_rank"]) {
        Some(kv_lora) => {
            let rope = num(raw, &["qk_rope_head_dim"]).unwrap_or(64);
            let nope = num(raw, &["qk_nope_head_dim"]).unwrap_or(128);
            let v = num(raw, &["v_head_dim"]).unwrap_or(nope);
            let q = match num(raw, &["q_lora_rank"]) {
                Some(ql) => h * ql + ql * heads * (nope + rope),
                None => h * heads * (nope + rope),
            };
            notes.push("MLA attention (kv_lora_rank)".into());
            q + h * (kv_lora + rope) + kv_lora * heads * (nope + v) + heads * v * h
        }
        None => h * heads * head_dim + 2 * h * kv_heads * head_dim + heads * head_dim * h,
    }
}

/// The dense layers, the MoE layers and the parameters of one MoE layer (noted); no MoE is all dense.
fn mlp_layers(
    raw: &Value,
    h: u64,
    layers: u64,
    inter: u64,
    notes: &mut Vec<String>,
) -> (u64, u64, u64) {
    let experts = num(
        raw,
        &[
            "n_routed_experts",
            "num_local_experts",
            "num_experts",
            "moe_num_experts",
        ],
    );
    match experts.filter(|&e| e > 1) {
        Some(e) => {
            let moe_inter =
                num(raw, &["moe_intermediate_size", "expert_intermediate_size"]).unwrap_or(inter);
            let shared = num(raw, &["n_shared_experts", "num_shared_experts"]).unwrap_or(0);
            let shared_inter =
                num(raw, &["shared_expert_intermediate_size"]).unwrap_or(moe_inter * shared);
            let first_dense = num(raw, &["first_k_dense_replace"])
                .unwrap_or(0)
                .min(layers);
            let moe = layers - first_dense;
            let routed = e * 3 * h * moe_inter;
            let shared_p = 3 * h * shared_inter;
            notes.push(format!(
                "MoE: {e} routed experts of {moe_inter}, {shared} shared, {first_dense} dense layers first"
            ));
            (first_dense, moe, routed + shared_p + h * e)
        }
        None => (layers, 0, 0),
    }
}

/// Bytes per parameter of the MLP and expert weights, from the quantization or the dtype, and its name.
fn bytes_per_parameter(cfg: &ModelConfig) -> (f64, &'static str) {
    match cfg.quantization.as_ref().map(|q| &q.scheme) {
        Some(QuantScheme::Nvfp4) => (0.5625, "NVFP4 (4-bit + an FP8 scale per 16)"),
        Some(QuantScheme::Mxfp4) => (0.53125, "MXFP4 (4-bit + an E8M0 scale per 32)"),
        Some(QuantScheme::Fp8) => (1.0, "FP8"),
        Some(QuantScheme::Other(_)) => (2.0, "an unrecognised quantization, counted as 16-bit"),
        None => match cfg.dtype.as_deref() {
            Some("float32") => (4.0, "float32"),
            _ => (2.0, "16-bit"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn file(header: &str, data: usize) -> Vec<u8> {
        let mut v = (header.len() as u64).to_le_bytes().to_vec();
        v.extend_from_slice(header.as_bytes());
        v.extend(std::iter::repeat_n(0u8, data));
        v
    }

    #[test]
    fn header_sums_offsets_and_shapes() {
        let h = r#"{"__metadata__":{"format":"pt"},"a":{"dtype":"BF16","shape":[2,3],"data_offsets":[0,12]},"b":{"dtype":"F32","shape":[4],"data_offsets":[12,28]}}"#;
        let f = file(h, 28);
        let len = f.len() as u64;
        let (b, p, read) = read_header(&mut Cursor::new(f), len).unwrap();
        assert_eq!((b, p), (28, 10));
        assert_eq!(read, 8 + h.len() as u64);
    }

    #[test]
    fn malformed_headers_are_errors() {
        for (bytes, want) in [
            (vec![1u8, 2, 3], "shorter"),
            (u64::MAX.to_le_bytes().to_vec(), "100 MB"),
            (file("[1,2]", 0), "not a JSON object"),
            (
                file(r#"{"a":{"shape":[1],"data_offsets":"x"}}"#, 0),
                "not a JSON object",
            ),
            (file("{nope", 0), "not JSON"),
            (file(r#"{"a":{"shape":[1]}}"#, 0), "data_offsets"),
            (
                file(r#"{"a":{"shape":[1],"data_offsets":[0,99]}}"#, 4),
                "outside",
            ),
        ] {
            let len = bytes.len() as u64;
            let e = read_header(&mut Cursor::new(bytes), len).unwrap_err();
            assert!(e.contains(want), "{e} lacks {want}");
        }
        let mut short = 100u64.to_le_bytes().to_vec();
        short.extend_from_slice(b"{}");
        let len = short.len() as u64;
        assert!(read_header(&mut Cursor::new(short), len)
            .unwrap_err()
            .contains("truncated"));
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let len = bytes.len() as u64;
            let _ = read_header(&mut Cursor::new(bytes), len);
        }
    }
}
