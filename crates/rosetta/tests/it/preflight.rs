//! `rosetta preflight` end to end: the origin story before launch (GLM-5 on
//! 8x RTX PRO 6000 with transformers 4.57.1, `--mem-fraction-static 0.95`,
//! `--nsa-decode-backend flashmla_kv`) and its negative twin, vLLM's memory
//! and context flags, and bad input. The model folders are written here.

use super::{rosetta, stderr, stdout};
use std::path::Path;

/// Our own GLM-5-shaped config (model_type glm_moe_dsa, MLA + MoE, NVFP4), written for the test.
const GLM5: &str = r#"{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","hidden_size":6144,
"num_hidden_layers":78,"num_attention_heads":64,"num_key_value_heads":64,"vocab_size":154880,
"intermediate_size":12288,"moe_intermediate_size":2048,"n_routed_experts":256,"n_shared_experts":1,
"first_k_dense_replace":3,"kv_lora_rank":512,"q_lora_rank":2048,"qk_rope_head_dim":64,"qk_nope_head_dim":192,
"v_head_dim":256,"max_position_embeddings":202752,"rope_theta":1000000.0,"torch_dtype":"bfloat16",
"quantization_config":{"quant_method":"modelopt","quant_algo":"NVFP4"}}"#;

const LLAMA8B: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
"intermediate_size":14336,"max_position_embeddings":8192,"num_attention_heads":32,"num_hidden_layers":32,
"num_key_value_heads":8,"rope_theta":500000.0,"torch_dtype":"bfloat16","vocab_size":128256}"#;

fn model(dir: &Path, name: &str, config: &str) -> String {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("config.json"), config).unwrap();
    d.to_string_lossy().into_owned()
}

fn preflight(
    home: &Path,
    flags: &[&str],
    command: &[&str],
) -> (Option<i32>, serde_json::Value, String) {
    let mut args = vec!["preflight", "--format", "json"];
    args.extend_from_slice(flags);
    args.push("--");
    args.extend_from_slice(command);
    let o = rosetta(&args, home, &[]);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|_| panic!("no JSON: {} {}", stdout(&o), stderr(&o)));
    (o.status.code(), v, stdout(&o))
}

fn findings(v: &serde_json::Value) -> Vec<serde_json::Value> {
    v["findings"].as_array().cloned().unwrap_or_default()
}

fn has(v: &serde_json::Value, causes: &[&str], severities: &[&str], text: &str) -> bool {
    findings(v).iter().any(|f| {
        causes.contains(&f["cause"].as_str().unwrap_or(""))
            && severities.contains(&f["severity"].as_str().unwrap_or(""))
            && f.to_string().contains(text)
    })
}

const TARGET: [&str; 6] = ["--gpu", "RTX PRO 6000", "--gpus", "8", "--gpu-memory", "96"];

/// The origin story's launch: sglang, TP 8, a 0.95 static memory fraction and the FlashMLA
/// decode backend, for the model folder `model`.
fn origin_launch(model: &str) -> [&str; 11] {
    [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        model,
        "--tp",
        "8",
        "--mem-fraction-static",
        "0.95",
        "--nsa-decode-backend",
        "flashmla_kv",
    ]
}

#[test]
fn origin_story_before_launch() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "GLM-5-NVFP4", GLM5);
    let mut flags = vec!["--model", m.as_str()];
    flags.extend_from_slice(&TARGET);
    flags.extend_from_slice(&["--transformers", "4.57.1"]);
    let (code, v, text) = preflight(d.path(), &flags, &origin_launch(&m));
    assert_eq!(code, Some(1), "{text}");
    let bad = ["blocker", "risk"];
    // The backend with no sm_120 code.
    assert!(
        has(
            &v,
            &["backend-selection", "arch-unsupported"],
            &bad,
            "flashmla_kv"
        ),
        "{text}"
    );
    assert!(
        has(
            &v,
            &["backend-selection", "arch-unsupported"],
            &bad,
            "sm_120"
        ),
        "{text}"
    );
    // The model type 4.57.1 does not know, and the release that does.
    assert!(
        has(&v, &["version-mismatch", "model-config"], &bad, "5.2.0"),
        "{text}"
    );
    assert!(
        has(
            &v,
            &["version-mismatch", "model-config"],
            &bad,
            "glm_moe_dsa"
        ),
        "{text}"
    );
    // No finding advises the trap.
    for f in findings(&v) {
        let fix = f["fix"].as_str().unwrap_or("");
        assert!(!fix.contains("4.57.1"), "a fix advises 4.57.1: {f}");
    }
    // The 0.95 fraction.
    assert!(has(&v, &["memory-budget"], &bad, "0.95"), "{text}");
    assert_eq!(v["memory"]["fraction"], 0.95);
    assert_eq!(v["memory"]["weights_source"], "config-estimate");
    assert_eq!(v["facts"]["gpu_arch"], "sm_120");
}

#[test]
fn origin_story_negative_twin_has_no_blocker() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "GLM-5-NVFP4", GLM5);
    let mut flags = vec!["--model", m.as_str()];
    flags.extend_from_slice(&TARGET);
    flags.extend_from_slice(&["--transformers", "5.2.0"]);
    let (code, v, text) = preflight(
        d.path(),
        &flags,
        &[
            "python",
            "-m",
            "sglang.launch_server",
            "--model-path",
            &m,
            "--tp",
            "8",
            "--mem-fraction-static",
            "0.85",
            "--nsa-decode-backend",
            "tilelang",
        ],
    );
    assert_eq!(code, Some(0), "{text}");
    assert!(
        !findings(&v).iter().any(|f| f["severity"] == "blocker"),
        "{text}"
    );
    assert!(
        !has(&v, &["memory-budget"], &["risk"], "mem_fraction"),
        "{text}"
    );
}

#[test]
fn vllm_max_model_len_beyond_positions_is_a_blocker() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "llama", LLAMA8B);
    let (code, v, text) = preflight(
        d.path(),
        &[
            "--gpu",
            "H100",
            "--gpu-memory",
            "80",
            "--transformers",
            "4.57.1",
        ],
        &["vllm", "serve", &m, "--max-model-len", "32768"],
    );
    assert_eq!(code, Some(1), "{text}");
    let f = findings(&v)
        .into_iter()
        .find(|f| f["cause"] == "rope-config")
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(f["severity"], "blocker");
    assert_eq!(f["fix"], "--max-model-len 8192");
}

#[test]
fn vllm_gpu_memory_utilization_sizes_the_budget() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "llama", LLAMA8B);
    // Default utilisation 0.9: 16 GB of weights fit a 24 GB card.
    let (code, v, text) = preflight(
        d.path(),
        &[
            "--gpu",
            "sm_89",
            "--gpu-memory",
            "24",
            "--transformers",
            "4.57.1",
        ],
        &["vllm", "serve", &m],
    );
    assert_eq!(code, Some(0), "{text}");
    assert_eq!(v["memory"]["fraction"], 0.9);
    assert_eq!(v["memory"]["fraction_from"], "engine default");
    assert_eq!(v["memory"]["fraction_covers"], "everything");
    // At 0.5 they do not: a blocker naming the flag.
    let (code, v, text) = preflight(
        d.path(),
        &[
            "--gpu",
            "sm_89",
            "--gpu-memory",
            "24",
            "--transformers",
            "4.57.1",
        ],
        &["vllm", "serve", &m, "--gpu-memory-utilization", "0.5"],
    );
    assert_eq!(code, Some(1), "{text}");
    assert!(
        has(
            &v,
            &["memory-budget"],
            &["blocker"],
            "gpu_memory_utilization=0.5"
        ),
        "{text}"
    );
    assert!(
        findings(&v).iter().any(|f| f["fix"]
            .as_str()
            .unwrap_or("")
            .contains("--tensor-parallel-size 2")),
        "{text}"
    );
}

#[test]
fn vllm_fp8_kv_cache_on_a_gpu_without_fp8() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "llama", LLAMA8B);
    let (_, v, text) = preflight(
        d.path(),
        &[
            "--gpu",
            "A100",
            "--gpu-memory",
            "80",
            "--transformers",
            "4.57.1",
        ],
        &["vllm", "serve", &m, "--kv-cache-dtype", "fp8"],
    );
    assert!(
        has(&v, &["bad-launch-args"], &["risk", "blocker"], "fp8"),
        "{text}"
    );
    let f = findings(&v)
        .into_iter()
        .find(|f| f["rule"] == "fp8-kv-cache-without-fp8-hardware")
        .unwrap();
    assert_eq!(f["fix"], "--kv-cache-dtype auto");
    // The same flag on an H100 says nothing.
    let (_, v, text) = preflight(
        d.path(),
        &[
            "--gpu",
            "H100",
            "--gpu-memory",
            "80",
            "--transformers",
            "4.57.1",
        ],
        &["vllm", "serve", &m, "--kv-cache-dtype", "fp8"],
    );
    assert!(
        !findings(&v)
            .iter()
            .any(|f| f["rule"] == "fp8-kv-cache-without-fp8-hardware"),
        "{text}"
    );
}

#[test]
fn every_format_renders_and_the_exit_code_holds() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "llama", LLAMA8B);
    for format in ["text", "markdown", "html"] {
        let o = rosetta(
            &[
                "preflight",
                "--format",
                format,
                "--gpu",
                "H100",
                "--transformers",
                "4.57.1",
                "--",
                "vllm",
                "serve",
                &m,
                "--max-model-len",
                "32768",
            ],
            d.path(),
            &[],
        );
        assert_eq!(o.status.code(), Some(1), "{format}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("--max-model-len 8192"),
            "{format}: {}",
            stdout(&o)
        );
    }
}

/// Long because it is one table of bad inputs (each a file and the words its one-line
/// error must hold) and the loop that checks them.
#[test]
fn bad_input_is_exit_2_with_one_line() {
    let d = tempfile::tempdir().unwrap();
    let bad_cfg = model(d.path(), "broken", "{not json");
    for (args, want) in [
        (
            vec!["preflight", "--gpu", "H100", "--", "vllm serve 'unclosed"],
            "quote",
        ),
        (
            vec![
                "preflight",
                "--gpu",
                "H100",
                "--",
                "./my-server",
                "--port",
                "1",
            ],
            "no known launcher",
        ),
        (
            vec![
                "preflight",
                "--gpu",
                "H100",
                "--model",
                "/no/such/model",
                "--",
                "vllm",
                "serve",
                "m",
            ],
            "/no/such/model",
        ),
        (
            vec![
                "preflight",
                "--gpu",
                "H100",
                "--model",
                bad_cfg.as_str(),
                "--",
                "vllm",
                "serve",
                "m",
            ],
            "config.json",
        ),
        (
            vec![
                "preflight",
                "--gpu",
                "not-a-gpu",
                "--",
                "vllm",
                "serve",
                "m",
            ],
            "--gpu",
        ),
        (
            vec![
                "preflight",
                "--gpu",
                "H100",
                "--env",
                "/no/env.json",
                "--",
                "vllm",
                "serve",
                "m",
            ],
            "env.json",
        ),
    ] {
        let o = rosetta(&args, d.path(), &[]);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        let e = stderr(&o);
        assert_eq!(e.trim().lines().count(), 1, "{e}");
        assert!(e.contains(want), "{args:?}: {e}");
    }
}

fn env_json(dir: &Path, lib_sass: &str) -> String {
    let p = dir.join("env.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"gpus": [{{"name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0", "driver": "580.95.05", "cuda_driver_version": "13.0", "memory_mib": 97887}}],
 "packages": [{{"name": "transformers", "version": "5.2.0"}}, {{"name": "sglang", "version": "0.5.9"}}],
 "libraries": [{{"path": "site-packages/flash_mla/flash_mla_cuda.so", "package": "flash-mla", "sass": [{lib_sass}], "ptx": []}}],
 "problems": []}}"#
        ),
    )
    .unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn backends_are_judged_by_the_installed_libraries_from_an_env_report() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "llama", LLAMA8B);
    let cmd = [
        "python",
        "-m",
        "sglang.launch_server",
        "--model-path",
        m.as_str(),
        "--attention-backend",
        "flashmla",
    ];
    // The machine's FlashMLA has no sm_120 code: a blocker, read from the .so.
    let env = env_json(d.path(), r#""sm_90a", "sm_100a""#);
    let (code, v, text) = preflight(d.path(), &["--env", env.as_str()], &cmd);
    assert_eq!(code, Some(1), "{text}");
    let f = findings(&v)
        .into_iter()
        .find(|f| f["cause"] == "arch-unsupported")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        f.to_string().contains("installed: site-packages/flash_mla"),
        "{f}"
    );
    assert_eq!(f["fix"], "--attention-backend triton");
    assert_eq!(v["facts"]["transformers"], "5.2.0");
    assert_eq!(v["facts"]["gpu_arch"], "sm_120");
    // A build that carries sm_120 code: the table's gap does not apply to this machine.
    let env = env_json(d.path(), r#""sm_90a", "sm_100a", "sm_120""#);
    let (code, v, text) = preflight(d.path(), &["--env", env.as_str()], &cmd);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        !findings(&v)
            .iter()
            .any(|f| f["cause"] == "arch-unsupported"),
        "{text}"
    );
}

#[test]
fn nothing_known_but_the_flags_is_not_ok() {
    // No model on disk, no --gpu, no env report: only the flags can be read.
    let d = tempfile::tempdir().unwrap();
    let cmd = [
        "vllm",
        "serve",
        "no-such-org/no-such-model",
        "--tensor-parallel-size",
        "2",
    ];
    let (_, v, _) = preflight(d.path(), &[], &cmd);
    let f = &v["facts"];
    let knows_something = !f["gpu"].is_null()
        || !f["transformers"].is_null()
        || !f["engine_version"].is_null()
        || !v["memory"].is_null();
    let mut args = vec!["preflight", "--color", "never", "--"];
    args.extend_from_slice(&cmd);
    let text = stdout(&rosetta(&args, d.path(), &[]));
    if knows_something {
        // This machine has a GPU or the packages installed: then something was checked.
        assert!(!text.contains("NOTHING CHECKED"), "{text}");
    } else {
        assert!(text.starts_with("PREFLIGHT NOTHING CHECKED"), "{text}");
        assert!(!text.contains("PREFLIGHT OK"), "{text}");
        assert!(text.contains("NOT CHECKED"), "{text}");
    }
    // With a GPU named and a model config, the same launch is checked and can be OK.
    let m = model(d.path(), "llama", LLAMA8B);
    let mut args = vec![
        "preflight",
        "--color",
        "never",
        "--gpu",
        "H100",
        "--transformers",
        "4.57.1",
        "--",
    ];
    args.extend_from_slice(&["vllm", "serve", &m, "--tensor-parallel-size", "2"]);
    let text = stdout(&rosetta(&args, d.path(), &[]));
    assert!(!text.contains("NOTHING CHECKED"), "{text}");
}

/// The origin story's preflight report in every format, as a person or a program reads it.
/// The model folder is the test's own; its path reads `<model>`.
#[test]
fn origin_story_report_snapshots() {
    let d = tempfile::tempdir().unwrap();
    let m = model(d.path(), "GLM-5-NVFP4", GLM5);
    for format in ["text", "markdown", "json", "html"] {
        let mut args = vec!["preflight", "--format", format, "--model", m.as_str()];
        args.extend_from_slice(&TARGET);
        args.extend_from_slice(&["--transformers", "4.57.1", "--"]);
        args.extend_from_slice(&origin_launch(&m));
        let o = rosetta(&args, d.path(), &[("NO_COLOR", "1"), ("COLUMNS", "100")]);
        assert_eq!(o.status.code(), Some(1), "{format}: {}", stderr(&o));
        let text = stdout(&o).replace(&m, "<model>");
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert!(!findings(&v).is_empty(), "{text}");
        }
        insta::assert_snapshot!(format!("preflight_origin_story_{format}"), text);
    }
}
