//! Launch commands as users type them, parsed against the embedded engine
//! files: each launcher, the shell and container around it, canonical keys,
//! defaults, unknown flags, diffs, and property tests of the parser.

use proptest::prelude::*;
use rosetta_launch::{diff, parse, parse_words, Change, Engines, FlagValue, ParseNote};

fn p(line: &str) -> rosetta_launch::LaunchCommand {
    parse(line, Engines::embedded()).unwrap_or_else(|e| panic!("{line}: {e}"))
}

#[test]
fn sglang_origin_story_command() {
    let c = p("CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 SGLANG_ENABLE_JIT_DEEPGEMM=0 \\\n  python3 -m sglang.launch_server --model-path /models/GLM-5-NVFP4 --tp 8 \\\n  --mem-fraction-static 0.95 --nsa-decode-backend flashmla_kv --trust-remote-code 2>&1 | tee run.log");
    let e = Engines::embedded();
    assert_eq!(c.engine.as_deref(), Some("sglang"));
    assert_eq!(c.program, ["python3", "-m", "sglang.launch_server"]);
    assert_eq!(c.env["CUDA_VISIBLE_DEVICES"], "0,1,2,3,4,5,6,7");
    assert_eq!(c.env["SGLANG_ENABLE_JIT_DEEPGEMM"], "0");
    assert_eq!(c.model.as_deref(), Some("/models/GLM-5-NVFP4"));
    assert_eq!(c.tp_size(), Some(8));
    assert_eq!(c.flags["tp_size"].spelled, "--tp");
    assert_eq!(c.memory_fraction(e), Some(0.95));
    assert_eq!(c.get("nsa_decode_backend").as_deref(), Some("flashmla_kv"));
    assert_eq!(c.flags["trust_remote_code"].value, FlagValue::Switch(true));
    assert!(c.unknown_flags().is_empty(), "{:?}", c.notes);
    assert!(c
        .notes
        .iter()
        .any(|n| matches!(n, ParseNote::IgnoredShell { words } if words.contains("tee"))));
    let args = c.args();
    assert_eq!(args["tp_size"], "8");
    assert_eq!(args["model_path"], "/models/GLM-5-NVFP4");
    assert_eq!(c.port(e), Some(30000));
    assert_eq!(c.gpus_per_replica(), 8);
}

#[test]
fn sglang_cli_and_equals_forms() {
    let c = p("sglang serve --model-path=/m --tensor-parallel-size=2 --context-length 32768 --cuda-graph-bs 1 2 4 8 --port 31000");
    let e = Engines::embedded();
    assert_eq!(c.engine.as_deref(), Some("sglang"));
    assert_eq!(c.program, ["sglang", "serve"]);
    assert_eq!(c.tp_size(), Some(2));
    assert_eq!(c.context_length(e), Some(32768));
    assert_eq!(
        c.flags["cuda_graph_bs"].value,
        FlagValue::Many(vec!["1".into(), "2".into(), "4".into(), "8".into()])
    );
    assert_eq!(c.port(e), Some(31000));
    // Absent: the engine's own default.
    assert_eq!(
        c.get_or_default("kv_cache_dtype", e).as_deref(),
        Some("auto")
    );
}

#[test]
fn vllm_serve_positional_model_and_negated_switch() {
    let c = p("vllm serve meta-llama/Llama-3.1-8B-Instruct -tp 2 --max-model-len 200000 --gpu-memory-utilization 0.95 --kv-cache-dtype fp8 --no-enable-prefix-caching --enforce-eager");
    let e = Engines::embedded();
    assert_eq!(c.engine.as_deref(), Some("vllm"));
    assert_eq!(c.model.as_deref(), Some("meta-llama/Llama-3.1-8B-Instruct"));
    assert!(c.positional.is_empty());
    assert_eq!(c.tp_size(), Some(2));
    assert_eq!(c.context_length(e), Some(200000));
    assert_eq!(c.memory_fraction(e), Some(0.95));
    assert_eq!(c.kv_cache_dtype(e).as_deref(), Some("fp8"));
    assert_eq!(
        c.flags["enable_prefix_caching"].value,
        FlagValue::Switch(false)
    );
    assert_eq!(c.args()["enforce_eager"], "true");
    assert!(c.unknown_flags().is_empty(), "{:?}", c.notes);
}

#[test]
fn vllm_defaults_fill_absent_flags() {
    let c = p("python -m vllm.entrypoints.openai.api_server --model /m");
    let e = Engines::embedded();
    assert_eq!(c.engine.as_deref(), Some("vllm"));
    assert_eq!(c.model.as_deref(), Some("/m"));
    assert_eq!(c.memory_fraction(e), None);
    assert_eq!(c.memory_fraction_or_default(e), Some(0.9));
    assert_eq!(c.args_with_defaults(e)["gpu_memory_utilization"], "0.9");
    assert_eq!(c.port(e), Some(8000));
}

#[test]
fn unknown_flags_are_reported_not_dropped() {
    let c = p("vllm serve m --tensor-parallel 2 --made-up-flag 3");
    assert_eq!(c.unknown_flags(), ["--made-up-flag"]);
    // A unique prefix is what argparse accepts: `--tensor-parallel` is `--tensor-parallel-size`.
    assert_eq!(c.tp_size(), Some(2));
    assert_eq!(c.args()["made_up_flag"], "3");
    assert!(!c.flags["made_up_flag"].known);
}

#[test]
fn bad_choices_and_types_are_noted() {
    let c = p(
        "python -m sglang.launch_server --model-path m --nsa-decode-backend nope --tp-size eight",
    );
    assert!(c
        .notes
        .iter()
        .any(|n| matches!(n, ParseNote::BadChoice { key, .. } if key == "nsa_decode_backend")));
    assert!(c
        .notes
        .iter()
        .any(|n| matches!(n, ParseNote::BadType { key, .. } if key == "tp_size")));
}

#[test]
fn missing_value_and_repeats() {
    let c = p("python -m sglang.launch_server --model-path m --tp 2 --tp 4 --port");
    assert_eq!(c.tp_size(), Some(4));
    assert!(c
        .notes
        .iter()
        .any(|n| matches!(n, ParseNote::Repeated { key } if key == "tp_size")));
    assert!(c
        .notes
        .iter()
        .any(|n| matches!(n, ParseNote::MissingValue { spelled } if spelled == "--port")));
}

#[test]
fn trtllm_llama_and_tgi_give_model_parallel_and_context() {
    let e = Engines::embedded();
    let c = p("trtllm-serve /models/llama --tp_size 4 --max_seq_len 8192 --kv_cache_free_gpu_memory_fraction 0.8");
    assert_eq!(c.engine.as_deref(), Some("tensorrt-llm"));
    assert_eq!(c.model.as_deref(), Some("/models/llama"));
    assert_eq!(c.tp_size(), Some(4));
    assert_eq!(c.context_length(e), Some(8192));
    assert_eq!(c.memory_fraction(e), Some(0.8));
    let c = p("trtllm-serve serve /m --pp_size 2");
    assert_eq!(c.program, ["trtllm-serve", "serve"]);
    assert_eq!(c.model.as_deref(), Some("/m"));
    assert_eq!(c.pp_size(), Some(2));

    let c = p(
        "./build/bin/llama-server -m model.gguf -c 16384 -ngl 99 -fa --port 8081 --some-new-flag",
    );
    assert_eq!(c.engine.as_deref(), Some("llama.cpp"));
    assert_eq!(c.model.as_deref(), Some("model.gguf"));
    assert_eq!(c.context_length(e), Some(16384));
    assert_eq!(c.flags["flash_attn"].value, FlagValue::Switch(true));
    assert_eq!(c.port(e), Some(8081));
    assert!(c
        .notes
        .iter()
        .any(|n| matches!(n, ParseNote::UnlistedFlag { spelled } if spelled == "--some-new-flag")));

    let c = p("text-generation-launcher --model-id bigscience/bloom --num-shard 8 --max-total-tokens 4096");
    assert_eq!(c.engine.as_deref(), Some("tgi"));
    assert_eq!(c.model.as_deref(), Some("bigscience/bloom"));
    assert_eq!(c.tp_size(), Some(8));
    assert_eq!(c.context_length(e), Some(4096));
}

#[test]
fn env_export_nohup_and_wrappers() {
    let c = p("export HF_HOME=/cache; env -u FOO NCCL_DEBUG=INFO nohup numactl --interleave=all uv run python -u -m sglang.launch_server --model-path m > log 2>&1 &");
    assert_eq!(c.engine.as_deref(), Some("sglang"));
    assert_eq!(c.env["HF_HOME"], "/cache");
    assert_eq!(c.env["NCCL_DEBUG"], "INFO");
    assert_eq!(c.model.as_deref(), Some("m"));
    let c = p("cd /srv && CUDA_LAUNCH_BLOCKING=1 vllm serve m");
    assert_eq!(c.engine.as_deref(), Some("vllm"));
    assert_eq!(c.env["CUDA_LAUNCH_BLOCKING"], "1");
}

#[test]
fn docker_run_with_command_and_with_entrypoint_image() {
    let c = p("docker run --gpus all --shm-size 32g --ipc=host -p 30000:30000 -v /models:/models -e HF_TOKEN=x -it --rm lmsysorg/sglang:v0.5.9-cu129 python3 -m sglang.launch_server --model-path /models/m --tp 8");
    assert_eq!(c.engine.as_deref(), Some("sglang"));
    let k = c.container.as_ref().unwrap();
    assert_eq!(k.image, "lmsysorg/sglang:v0.5.9-cu129");
    assert_eq!(k.gpus.as_deref(), Some("all"));
    assert_eq!(k.shm_size.as_deref(), Some("32g"));
    assert_eq!(k.ipc.as_deref(), Some("host"));
    assert_eq!(k.volumes, ["/models:/models"]);
    assert_eq!(c.env["HF_TOKEN"], "x");
    assert_eq!(c.tp_size(), Some(8));

    let c = p("docker run --runtime nvidia --gpus all -e VLLM_USE_V1=1 vllm/vllm-openai:latest --model Qwen/Qwen3-8B --max-model-len 8192");
    assert_eq!(c.engine.as_deref(), Some("vllm"));
    assert_eq!(c.model.as_deref(), Some("Qwen/Qwen3-8B"));
    assert_eq!(c.env["VLLM_USE_V1"], "1");
    assert_eq!(c.context_length(Engines::embedded()), Some(8192));

    let c =
        p("docker run --gpus all img:tag bash -c 'CUDA_VISIBLE_DEVICES=0 vllm serve /m --tp 1'");
    assert_eq!(c.engine.as_deref(), Some("vllm"));
    assert_eq!(c.env["CUDA_VISIBLE_DEVICES"], "0");
    assert_eq!(c.container.as_ref().unwrap().image, "img:tag");
}

#[test]
fn words_from_the_shell_and_one_quoted_word_read_alike() {
    let words = ["vllm", "serve", "/m", "--max-model-len", "4096"];
    let a = parse_words(&words, Engines::embedded()).unwrap();
    let b = parse_words(&["vllm serve /m --max-model-len 4096"], Engines::embedded()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn bad_commands_are_errors_not_panics() {
    for bad in [
        "",
        "   ",
        "vllm serve 'unclosed",
        "A=1 B=2",
        "python -m",
        "docker run --gpus all",
        "export A=1;",
    ] {
        let e = parse(bad, Engines::embedded());
        assert!(e.is_err(), "{bad:?} parsed as {e:?}");
    }
    // An unknown program is parsed by shape, without an engine.
    let c = p("./my_server --port 9 --model x");
    assert_eq!(c.engine, None);
    assert_eq!(c.model.as_deref(), Some("x"));
    assert_eq!(c.args()["port"], "9");
}

#[test]
fn diff_compares_under_canonical_keys() {
    let a = p("python -m sglang.launch_server --model-path /m --tp 8 --mem-fraction-static 0.95 --nsa-decode-backend flashmla_kv");
    let b = p("CUDA_LAUNCH_BLOCKING=1 python -m sglang.launch_server --model-path /m --tensor-parallel-size 8 --mem-fraction-static 0.85 --nsa-decode-backend tilelang --disable-cuda-graph");
    let d = diff(&a, &b);
    assert!(d.engine.is_none() && d.model.is_none());
    let keys: Vec<_> = d.flags.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "disable_cuda_graph",
            "mem_fraction_static",
            "nsa_decode_backend"
        ]
    );
    assert_eq!(
        d.flags[1].change,
        Change::Changed {
            from: "0.95".into(),
            to: "0.85".into()
        }
    );
    assert_eq!(d.env[0].key, "CUDA_LAUNCH_BLOCKING");
    assert_eq!(
        d.to_string(),
        "+disable_cuda_graph true; mem_fraction_static 0.95 -> 0.85; nsa_decode_backend flashmla_kv -> tilelang; +env CUDA_LAUNCH_BLOCKING 1"
    );
    assert!(diff(&a, &a).is_empty());
    assert_eq!(diff(&a, &a).to_string(), "no change");
    let json = serde_json::to_value(&d).unwrap();
    assert_eq!(json["flags"][1]["change"], "changed");
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9/._:=-]{0,12}",
        Just("--tp".to_string()),
        Just("--model-path".to_string()),
        Just("--cuda-graph-bs".to_string()),
        Just("-m".to_string()),
        Just("--".to_string()),
        Just("|".to_string()),
        Just(";".to_string()),
        Just("bash".to_string()),
        Just("-c".to_string()),
        Just("docker".to_string()),
        Just("run".to_string()),
        Just("vllm".to_string()),
        Just("serve".to_string()),
        Just("A=1".to_string()),
        "\\PC{0,6}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Any bytes: an error or a command, never a panic.
    #[test]
    fn any_line_parses_or_errs(line in "\\PC{0,200}") {
        let _ = parse(&line, Engines::embedded());
    }

    /// Launcher-shaped word salad: never a panic, and every flag read lands under a canonical key.
    #[test]
    fn launcher_word_salad(prefix in prop_oneof![
            Just("python -m sglang.launch_server"),
            Just("vllm serve"),
            Just("trtllm-serve"),
            Just("llama-server"),
            Just("text-generation-launcher"),
            Just("docker run --gpus all lmsysorg/sglang:x python3 -m sglang.launch_server"),
            Just("docker run vllm/vllm-openai:latest"),
        ], words in proptest::collection::vec(word(), 0..24)) {
        let line = format!("{prefix} {}", shell_quote(&words));
        if let Ok(c) = parse(&line, Engines::embedded()) {
            for k in c.flags.keys() {
                prop_assert_eq!(k, &rosetta_schema::canonical_arg_key(k));
            }
        }
    }

    /// A generated flag list round-trips: what is written is what is read.
    #[test]
    fn sglang_flags_round_trip(tp in 1u32..64, frac in 0.0f64..1.0, ctx in 1u64..10_000_000, model in "[A-Za-z0-9/_.][A-Za-z0-9/_.-]{0,40}") {
        let line = format!("python -m sglang.launch_server --model-path {model} --tp-size {tp} --mem-fraction-static {frac} --context-length {ctx}");
        let c = parse(&line, Engines::embedded()).unwrap();
        let e = Engines::embedded();
        prop_assert_eq!(c.tp_size(), Some(tp as u64));
        prop_assert_eq!(c.memory_fraction(e), Some(frac));
        prop_assert_eq!(c.context_length(e), Some(ctx));
        prop_assert_eq!(c.model.as_deref(), Some(model.as_str()));
    }

    /// Diff is empty against itself and symmetric in what it names.
    #[test]
    fn diff_of_self_is_empty(words in proptest::collection::vec(word(), 0..16)) {
        let line = format!("vllm serve {}", shell_quote(&words));
        if let Ok(a) = parse(&line, Engines::embedded()) {
            prop_assert!(diff(&a, &a).is_empty());
        }
    }
}

fn shell_quote(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            let plain = !w.is_empty()
                && w.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_/.:=,".contains(c));
            if plain || matches!(w.as_str(), "|" | ";") {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
