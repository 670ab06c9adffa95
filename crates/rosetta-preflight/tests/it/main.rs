//! Weights sized from safetensors headers without reading the tensors: a
//! 400 GB model folder of sparse files (the data regions are holes), whose
//! headers alone are read; and the library's run on a folder with shards.

use rosetta_launch::Engines;
use rosetta_preflight::weights;
use std::io::Write;
use std::path::Path;

/// Writes a sparse safetensors file: header, then a hole of `data` bytes.
fn sparse_shard(path: &Path, tensors: &[(&str, &[u64], u64)]) -> u64 {
    let mut header = String::from("{\"__metadata__\":{\"format\":\"pt\"}");
    let mut off = 0u64;
    for (name, shape, bytes) in tensors {
        let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
        header.push_str(&format!(
            ",\"{name}\":{{\"dtype\":\"BF16\",\"shape\":[{}],\"data_offsets\":[{off},{}]}}",
            dims.join(","),
            off + bytes
        ));
        off += bytes;
    }
    header.push('}');
    let mut f = std::fs::File::create(path).unwrap();
    f.write_all(&(header.len() as u64).to_le_bytes()).unwrap();
    f.write_all(header.as_bytes()).unwrap();
    f.set_len(8 + header.len() as u64 + off).unwrap();
    off
}

#[test]
fn a_400_gb_folder_reads_only_its_headers() {
    let d = tempfile::tempdir().unwrap();
    let shard = 50u64 << 30; // 8 shards of 50 GiB
    let mut expect = 0;
    for i in 0..8 {
        let half = shard / 2;
        expect += sparse_shard(
            &d.path().join(format!("model-{i:05}-of-00008.safetensors")),
            &[("a", &[half / 2], half), ("b", &[half / 2], half)],
        );
    }
    std::fs::write(d.path().join("config.json"), "{}").unwrap();
    let t = weights::from_headers(d.path()).unwrap().unwrap();
    assert_eq!(t.files, 8);
    assert_eq!(t.bytes, expect);
    assert_eq!(t.bytes, 400u64 << 30);
    assert_eq!(t.parameters, 200u64 << 30);
    // What was read: the 8-byte length and the JSON header of each file, nothing more.
    let on_disk: u64 = std::fs::read_dir(d.path())
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "safetensors"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    assert!(t.header_bytes_read < 8 * 400, "{}", t.header_bytes_read);
    assert!(on_disk > 400u64 << 30);
}

#[test]
fn a_truncated_shard_is_an_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("model.safetensors");
    std::fs::write(&p, 5000u64.to_le_bytes()).unwrap();
    let e = weights::from_headers(d.path()).unwrap_err().to_string();
    assert!(
        e.contains("model.safetensors") && e.contains("truncated"),
        "{e}"
    );
}

#[test]
fn run_uses_the_headers_when_the_folder_has_them() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(
        d.path().join("config.json"),
        r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,"num_hidden_layers":32,
        "num_attention_heads":32,"vocab_size":128256,"max_position_embeddings":8192}"#,
    )
    .unwrap();
    sparse_shard(
        &d.path().join("model.safetensors"),
        &[("w", &[8u64 << 30], 16u64 << 30)],
    );
    let kb = rosetta_kb::KnowledgeBase::embedded().unwrap();
    let model = d.path().to_string_lossy().into_owned();
    let inputs = rosetta_preflight::Inputs {
        command: vec![
            "vllm".into(),
            "serve".into(),
            model,
            "-tp".into(),
            "2".into(),
        ],
        model: None,
        target: rosetta_preflight::Target {
            gpu: Some("H100".into()),
            gpu_memory_gib: Some(80.0),
            transformers: Some("4.57.1".into()),
            ..Default::default()
        },
    };
    let r = rosetta_preflight::run(&inputs, &kb, Engines::embedded()).unwrap();
    let m = r.memory.clone().unwrap();
    assert_eq!(
        m.weights_source,
        rosetta_report::WeightsSource::SafetensorsHeaders
    );
    assert_eq!(m.weights_bytes, 16u64 << 30);
    assert_eq!(m.weights_per_gpu_bytes, 8u64 << 30);
    assert_eq!(m.fraction, Some(0.9));
    assert!(!r.has_blocker(), "{:?}", r.findings);
}
