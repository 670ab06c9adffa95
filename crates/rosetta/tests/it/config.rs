//! `rosetta config` on configs written here: the acceptance cases of the
//! issue (Llama 3.1 RoPE vs 4.42/4.43, GLM-5 vs 4.57.1/5.2.0, a 4096-position
//! model asked for 32768), the installed-transformers default, and bad input.

use super::{rosetta, stderr, stdout};
use std::path::Path;

const LLAMA31: &str = r#"{"architectures":["LlamaForCausalLM"],"hidden_size":4096,"intermediate_size":14336,
"max_position_embeddings":131072,"model_type":"llama","num_attention_heads":32,"num_hidden_layers":32,
"num_key_value_heads":8,"rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,
"original_max_position_embeddings":8192,"rope_type":"llama3"},"rope_theta":500000.0,"torch_dtype":"bfloat16",
"transformers_version":"4.43.0.dev0","vocab_size":128256}"#;

const GLM5: &str = r#"{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","hidden_size":6144,
"num_hidden_layers":78,"num_attention_heads":64,"vocab_size":154880,"max_position_embeddings":202752,
"rope_theta":1000000.0,"torch_dtype":"bfloat16","transformers_version":"5.2.0"}"#;

const SHORT: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":2048,
"num_hidden_layers":16,"num_attention_heads":16,"vocab_size":32000,"max_position_embeddings":4096,"rope_theta":10000.0}"#;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn llama31_rope_needs_4_43() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write(d.path(), "llama31.json", LLAMA31);
    let o = rosetta(&["config", &cfg, "--transformers", "4.42.0"], d.path(), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("rope-config"), "{}", stdout(&o));
    let o = rosetta(&["config", &cfg, "--transformers", "4.43.0"], d.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("no problems found"));
}

#[test]
fn glm5_folder_needs_5_2() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "GLM-5-NVFP4/config.json", GLM5);
    write(
        d.path(),
        "GLM-5-NVFP4/hf_quant_config.json",
        r#"{"quantization":{"quant_algo":"NVFP4","kv_cache_quant_algo":"FP8"}}"#,
    );
    let model = d.path().join("GLM-5-NVFP4");
    let m = model.to_str().unwrap();
    let args = |v: &'static str| {
        vec![
            "config",
            m,
            "--transformers",
            v,
            "--context-length",
            "202752",
            "--gpu",
            "sm_120",
            "--format",
            "json",
        ]
    };
    let o = rosetta(&args("4.57.1"), d.path(), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let f = j["findings"].as_array().unwrap();
    assert_eq!(f.len(), 1, "{j}");
    assert_eq!(f[0]["cause"], "version-mismatch");
    assert!(f[0]["reason"].as_str().unwrap().contains("5.2.0"));
    assert_eq!(j["quantization"]["scheme"], "nvfp4");

    let o = rosetta(&args("5.2.0"), d.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(j["findings"].as_array().unwrap().is_empty(), "{j}");

    // The same checkpoint on Hopper: NVFP4 is not native there.
    let o = rosetta(
        &["config", m, "--transformers", "5.2.0", "--gpu", "H200"],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("model-config") && stdout(&o).contains("NVFP4"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn context_beyond_positions() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write(d.path(), "config.json", SHORT);
    let o = rosetta(
        &[
            "config",
            &cfg,
            "--transformers",
            "4.57.1",
            "--context-length",
            "32768",
        ],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("rope-config"), "{}", stdout(&o));
    let o = rosetta(
        &[
            "config",
            &cfg,
            "--transformers",
            "4.57.1",
            "--context-length",
            "4096",
        ],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn default_version_is_the_installed_transformers() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write(d.path(), "m/config.json", GLM5);
    // A stand-in `python3` whose site-packages holds transformers 4.57.1.
    let site = d.path().join("lib/site-packages");
    write(
        &site,
        "transformers-4.57.1.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: transformers\nVersion: 4.57.1\n",
    );
    let bin = d.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let py = bin.join("python3");
    let answer = serde_json::json!({
        "executable": py.display().to_string(), "version": "3.11.7",
        "purelib": site.display().to_string(), "platlib": site.display().to_string(),
        "path": ["", site.display().to_string()],
    });
    std::fs::write(&py, format!("#!/bin/sh\necho '{answer}'\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&py, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let o = rosetta(&["config", &cfg], d.path(), &[("PATH", &path)]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{}", stderr(&o));
    assert!(out.contains("transformers 4.57.1 (installed in"), "{out}");
    assert!(out.contains("version-mismatch"), "{out}");

    // No python at all: a note, and no version checks.
    let o = rosetta(&["config", &cfg], d.path(), &[("PATH", "/nonexistent")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("no transformers in the active Python environment"));
}

#[test]
fn bad_input_exits_2() {
    let d = tempfile::tempdir().unwrap();
    let o = rosetta(&["config", "/nonexistent/config.json"], d.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no such file"), "{}", stderr(&o));
    let broken = write(d.path(), "broken.json", "{\"model_type\": ");
    let o = rosetta(
        &["config", &broken, "--transformers", "5.2.0"],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("broken.json"), "{}", stderr(&o));
    let cfg = write(d.path(), "ok.json", SHORT);
    let o = rosetta(
        &["config", &cfg, "--transformers", "not-a-version"],
        d.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    let o = rosetta(&["config", &cfg, "--gpu", "toaster"], d.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--gpu"), "{}", stderr(&o));
}

/// The newcomer's pass (issue 12, sections 10 and 11): a yarn x4 over 32768 config whose
/// max_position_embeddings is 202752 printed "beyond the 202752 positions that the `yarn`
/// RoPE scaling covers (factor 4 x 32768)", and config text did not wrap to COLUMNS.
#[test]
fn rope_coverage_prints_its_arithmetic_and_text_wraps_to_columns() {
    let d = tempfile::tempdir().unwrap();
    let cfg = write(
        d.path(),
        "model/config.json",
        r#"{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","max_position_embeddings":202752,
"rope_scaling":{"type":"yarn","factor":4.0,"original_max_position_embeddings":32768},"rope_theta":1000000,
"vocab_size":154880,"hidden_size":6144,"num_hidden_layers":78,"num_attention_heads":64,"torch_dtype":"bfloat16"}"#,
    );
    let args = [
        "config",
        &cfg,
        "--transformers",
        "5.2.0",
        "--context-length",
        "300000",
    ];
    let o = rosetta(&args, d.path(), &[("COLUMNS", "60")]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("32768 = 131072") && words.contains("202752"),
        "{text}"
    );
    assert!(!words.contains("factor 4 x 32768)"), "{text}");
    for l in text.lines() {
        let longest = l.split(' ').map(|w| w.chars().count()).max().unwrap_or(0);
        assert!(
            l.chars().count() <= 60 || longest > 30,
            "wider than 60: {l}"
        );
    }
}
