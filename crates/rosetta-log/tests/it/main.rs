//! Property tests for the parsers of user bytes: the scanner (lines,
//! normalisation), the prefix parser, the traceback parser and the whole fact
//! builder. Any input: no panic, line numbers in range, counts exact.

use proptest::prelude::*;
use rosetta_log::scan::{normalize, Scanner};
use rosetta_log::{prefix, traceback, LogFacts, Vocabulary};

/// Fragments that look like real log lines, to reach deep parser states.
const FRAGMENTS: &[&str] = &[
    "Traceback (most recent call last):",
    "  File \"/x/scheduler.py\", line 12, in process_batch_result_decode",
    "    result.copy_done.synchronize()",
    "    ^^^^^^^^^^^^^",
    "torch.AcceleratorError: CUDA error: device-side assert triggered",
    "During handling of the above exception, another exception occurred:",
    "KeyError: 'glm_moe_dsa'",
    "[2026-02-23 10:00:00 TP3] Scheduler hit an exception: Traceback (most recent call last):",
    "[rank1]:   File \"a.py\", line 1, in <module>",
    "(EngineCore_DP0 pid=274) ERROR 06-12 08:49:30 [core.py:700] EngineCore failed to start.",
    "/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1515: k: block: [0,0,0], thread: [1,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
    "[2026-02-23 10:00:00 TP0] Decode batch, #running-req: 1, cuda graph: True",
    "Loading: 10%\rLoading: 100%\r",
    "\x1b[1;36m(Worker_TP1 pid=9)\x1b[0;0m WARNING x",
    "Killed",
    "server_args=ServerArgs(tp_size=8, mem_fraction_static=0.95)",
    "W1129 22:27:29.110000 626 torch/distributed/run.py:851] *****",
    "",
    "   ",
];

fn soup() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            (0..FRAGMENTS.len()).prop_map(|i| FRAGMENTS[i].as_bytes().to_vec()),
            prop::collection::vec(any::<u8>(), 0..80),
        ],
        0..60,
    )
    .prop_map(|parts| {
        let mut out = Vec::new();
        for p in parts {
            out.extend_from_slice(&p);
            out.push(b'\n');
        }
        out
    })
}

fn expected_lines(bytes: &[u8]) -> u64 {
    let nl = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    if bytes.is_empty() || bytes.last() == Some(&b'\n') {
        nl
    } else {
        nl + 1
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn scanner_counts_every_line_of_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut bytes.as_slice());
        prop_assert_eq!(out.lines, expected_lines(&bytes));
        prop_assert_eq!(out.bytes, bytes.len() as u64);
        for r in &out.records {
            prop_assert!(r.line >= 1 && r.line <= out.lines);
        }
    }

    #[test]
    fn scanner_handles_log_like_soup(bytes in soup()) {
        let out = Scanner::new(Vocabulary::embedded(), &["glm".to_string()]).scan_reader(0, &mut bytes.as_slice());
        prop_assert_eq!(out.lines, expected_lines(&bytes));
        let mut last = 0;
        for r in &out.records {
            prop_assert!(r.line > last, "records in order, each line once");
            last = r.line;
        }
    }

    #[test]
    fn prefix_parser_returns_a_boundary(s in ".{0,200}") {
        let p = prefix::parse(&s);
        prop_assert!(p.msg_start <= s.len());
        prop_assert!(s.is_char_boundary(p.msg_start));
    }

    #[test]
    fn normalize_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let (text, _) = normalize(&bytes);
        prop_assert!(!text.contains('\x1b') || text.matches('\x1b').count() <= bytes.iter().filter(|&&b| b == 0x1b).count());
    }

    #[test]
    fn traceback_parser_and_facts_take_any_soup(bytes in soup()) {
        let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut bytes.as_slice());
        let lines = out.lines;
        let tbs = traceback::collect(&out.records);
        for t in &tbs {
            prop_assert!(t.start_line <= t.end_line && t.end_line <= lines);
        }
        let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &["H200"]);
        if let Some(f) = &facts.failure {
            prop_assert!(f.line >= 1 && f.line <= lines);
        }
    }
}

#[test]
fn a_traceback_split_across_read_blocks_stays_whole() {
    // Push the traceback across the scanner's 8 MiB block boundary.
    let mut log = Vec::new();
    let filler = b"[2026-01-01 10:00:00 TP0] Decode batch, #running-req: 1, cuda graph: True\n";
    while log.len() < (8 << 20) - 120 {
        log.extend_from_slice(filler);
    }
    log.extend_from_slice(b"Traceback (most recent call last):\n  File \"/x/a.py\", line 1, in forward_decode\n    y = f(x)\n  File \"/x/b.py\", line 2, in f\n    return g(x)\nRuntimeError: CUDA error: an illegal memory access was encountered\n");
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_slice());
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    let f = facts.failure.expect("a failure");
    assert_eq!(f.class.as_str(), "illegal-memory-access");
    assert_eq!(f.phase.as_str(), "decode");
    assert_eq!(f.frames.len(), 2);
}

#[test]
fn serving_under_memory_pressure_is_not_a_failure() {
    // sglang retracts requests when the KV pool fills: normal operation, not a crash.
    let log = "[2026-02-24 10:00:00 TP0] Decode batch, #running-req: 200, #token: 400000, token usage: 0.99, cuda graph: True, gen throughput (token/s): 9000.00, #queue-req: 40\n[2026-02-24 10:00:01 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 4, #new_token_ratio: 0.5 -> 0.7\n[2026-02-24 10:00:02 TP0] Decode batch, #running-req: 196, #token: 390000, token usage: 0.97, cuda graph: True, gen throughput (token/s): 9100.00, #queue-req: 44\n";
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    assert!(facts.failure.is_none(), "{:?}", facts.failure);
}

#[test]
fn clean_startup_logs_have_no_failure() {
    let logs = [
        // vLLM V1 start-up and one request, with its usual warnings.
        "(APIServer pid=1) INFO 06-12 08:49:12 [utils.py:253] non-default args: {'model': 'Qwen/Qwen3-8B'}\n(EngineCore_DP0 pid=274) WARNING 06-12 08:50:31 [fused_moe.py:100] Using default MoE config. Performance might be sub-optimal! Config file not found at /x/E=128.json\nCapturing CUDA graphs (mixed prefill-decode, PIECEWISE): 100%|##########| 67/67 [00:05<00:00, 12.1it/s]\n(APIServer pid=1) INFO:     Application startup complete.\n(APIServer pid=1) INFO:     127.0.0.1:49980 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n",
        // sglang skipping optional model modules, torchrun's IPv6 connect warnings.
        "[2026-02-24 10:00:00] Ignore import error when loading sglang.srt.models.mllama4: No module named 'timm'\n[W1129 22:27:29.110000 626 socket.cpp:755] [c10d] The client socket has failed to connect to [::ffff:127.0.0.1]:29500 (errno: 99 - Cannot assign requested address).\n[2026-02-24 10:01:00] The server is fired up and ready to roll!\n",
        // A finished run whose progress bars reached 100 %.
        "Downloading shards:  50%|#####     | 1/2 [00:10<00:10]\nDownloading shards: 100%|##########| 2/2 [00:20<00:00]\nall done\n",
    ];
    for log in logs {
        let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
        let facts = LogFacts::build(
            vec![("x.log".into(), out)],
            Vocabulary::embedded(),
            &["H200"],
        );
        assert!(facts.failure.is_none(), "{log}\n{:?}", facts.failure);
    }
}

#[test]
fn output_stuck_on_one_word_is_wrong_output_but_lists_of_numbers_are_not() {
    let stuck = "outputs=[CompletionOutput(index=0, text=' is is is is is is is is is is', token_ids=[563, 563, 563, 563, 563, 563, 563, 563, 563, 563], finish_reason=length)]\n";
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut stuck.as_bytes());
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    let f = facts.failure.expect("a failure");
    assert_eq!(f.class, rosetta_schema::FailureClass::WrongOutput);
    assert_eq!(f.line, 1);
    // Token ids, zero tensors and ordinary prose repeat too, but are not output stuck on a word.
    let fine = "prompt_token_ids=[0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]\ngenerated text: 'Paris is the capital of France, and Paris is a city'\ntensor output [0. 0. 0. 0. 0. 0. 0. 0. 0. 0. 0.]\n";
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut fine.as_bytes());
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    assert!(facts.failure.is_none(), "{:?}", facts.failure);
}

fn failure_of(text: &str) -> rosetta_log::facts::Failure {
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut text.as_bytes());
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    facts.failure.expect("a failure")
}

#[test]
fn a_native_tools_function_prefix_names_the_phase() {
    // llama.cpp prints `function: message`; the function says which step ran,
    // here the reservation of compute buffers (memory-plan), after the weights loaded.
    let f = failure_of(
        "load_tensors:        CUDA0 model buffer size = 7168.09 MiB\n\
         llama_init_from_model: n_ctx = 8192\n\
         ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2322.01 MiB on device 0: cudaMalloc failed: out of memory\n\
         ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 2434801664\n",
    );
    assert_eq!(f.class.as_str(), "gpu-oom");
    assert_eq!(f.phase.as_str(), "memory-plan");
    // A word before a colon is not a function: `Error: ...` names no phase.
    let f = failure_of("Error: Model failed\n");
    assert_eq!(f.phase.as_str(), "unknown");
}

#[test]
fn identifiers_in_the_message_name_the_phase_when_no_frame_does() {
    // Code names in the message are read as frames: a server-args class is start-up, a
    // loader function is weight-load. English words are not identifiers.
    let f = failure_of(
        "sglang.srt.server_args.ServerArgs() got multiple values for keyword argument 'log_level'\n",
    );
    assert_eq!(f.class.as_str(), "python-error");
    assert_eq!(f.phase.as_str(), "startup");
    let f = failure_of("TypeError: load_weights() got an unexpected keyword argument 'prefix'\n");
    assert_eq!(f.phase.as_str(), "weight-load");
    let f = failure_of("TypeError: register failed on this input\n");
    assert_eq!(f.phase.as_str(), "unknown");
}

#[test]
fn a_lazy_import_inside_a_loader_fails_in_the_loaders_phase() {
    // An import error hints at start-up, but a frame of the model loader raised it: the
    // import ran lazily, when the model was being loaded.
    let tb = "Traceback (most recent call last):\n  File \"/app/modules/ui_model_menu.py\", line 243, in load_model_wrapper\n    shared.model = load_model(name)\n  File \"/app/modules/models.py\", line 87, in load_model\n    output = load_func_map[loader](name)\n  File \"/app/modules/exllamav2_hf.py\", line 7, in <module>\n    from exllamav2 import ExLlamaV2Cache_Q4\nImportError: cannot import name 'ExLlamaV2Cache_Q4' from 'exllamav2'\n";
    let f = failure_of(tb);
    assert_eq!(f.class.as_str(), "import-error");
    assert_eq!(f.phase.as_str(), "weight-load");
    // With no loader frame, the import error stays at start-up.
    let f = failure_of("Traceback (most recent call last):\n  File \"/app/server.py\", line 3, in <module>\n    from exllamav2 import ExLlamaV2Cache_Q4\nImportError: cannot import name 'ExLlamaV2Cache_Q4' from 'exllamav2'\n");
    assert_eq!(f.phase.as_str(), "startup");
}

#[test]
fn a_request_announced_by_the_server_or_the_client_is_a_prompt_pass() {
    let f = failure_of(
        "INFO:     127.0.0.1:56002 - \"POST /api/extra/generate/stream HTTP/1.1\" 200\n\
         INFO:     Received Kobold generation request 503aa198fbca41258f7fefa6832dc7cc\n\
         TypeError: ExllamaV2Container.stream_generate() got an unexpected keyword argument 'max_tokens'\n",
    );
    assert_eq!(f.phase.as_str(), "prefill");
    // The GEMM tuning file is read while the model instance is built: weight-load.
    let f = failure_of(
        "[WARNING] gemm_config.in is not found; using default GEMM algo\n\
         terminate called after throwing an instance of 'std::runtime_error'\n\
         what():  [FT][ERROR] CUDA runtime error: invalid argument /src/turbomind/utils/allocator.h:252\n",
    );
    assert_eq!(f.phase.as_str(), "weight-load");
}

#[test]
fn a_process_still_waited_for_when_the_log_ends_is_a_hang() {
    let mut log = String::new();
    for s in 0..12 {
        log.push_str(&format!(
            "DEBUG 06-12 01:{:02}:07 [utils.py:485] Waiting for 1 local, 0 remote core engine proc(s) to start.\n",
            10 + s
        ));
    }
    let f = failure_of(&log);
    assert_eq!(f.class.as_str(), "hang");
}

#[test]
fn only_error_lines_are_listed_when_no_failure_is_named() {
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(
        0,
        &mut "# notes: the first launch failed, see below\n\
              [2026-02-24 09:12:03] server_args=ServerArgs(disable_fail_fast=False, tp_size=8)\n\
              INFO 06-12 08:49:30 [core.py:700] failover disabled\n"
            .as_bytes(),
    );
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    assert!(facts.failure.is_none());
    assert!(
        facts.unnamed_errors.is_empty(),
        "{:?}",
        facts.unnamed_errors
    );
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(
        0,
        &mut "INFO loading\nERROR frobnicator 7 lost its quux\n".as_bytes(),
    );
    let facts = LogFacts::build(vec![("x.log".into(), out)], Vocabulary::embedded(), &[]);
    if facts.failure.is_none() {
        assert_eq!(facts.unnamed_errors.len(), 1);
    }
}

#[test]
fn a_shape_error_inside_forward_is_the_model_running_not_the_loader() {
    let f = failure_of(
        "Traceback (most recent call last):\n\
         \x20 File \"/app/run.py\", line 9, in <module>\n\
         \x20   out = model.generate(ids)\n\
         \x20 File \"/site/transformers/models/mistral/modeling_mistral.py\", line 201, in forward\n\
         \x20   v = v.view(b, n, self.num_kv_heads, self.head_dim)\n\
         RuntimeError: shape '[1, 7, 8, 128]' is invalid for input of size 3584\n",
    );
    assert_eq!(f.class.as_str(), "shape-mismatch");
    assert_eq!(f.phase.as_str(), "prefill");
    // Raised by the loader, outside any forward: the weights.
    let f = failure_of(
        "Traceback (most recent call last):\n\
         \x20 File \"/site/loader.py\", line 40, in load_weights\n\
         \x20   param.copy_(w)\n\
         RuntimeError: The size of tensor a (4096) must match the size of tensor b (5120) at non-singleton dimension 1\n",
    );
    assert_eq!(f.phase.as_str(), "weight-load");
}

#[test]
fn a_strong_error_before_an_asynchronous_fault_in_one_block_is_its_root() {
    let f = failure_of(
        "ggml-cuda/mmq.cu:120: ERROR: CUDA kernel mul_mat_q has no device code compatible with CUDA arch 610. ggml-cuda.cu was compiled for: 610\n\
         CUDA error: unspecified launch failure\n\
         \x20 current device: 0, in function ggml_backend_cuda_synchronize at ggml-cuda.cu:2414\n",
    );
    assert_eq!(f.class.as_str(), "no-kernel-for-arch");
}

#[test]
fn an_exception_printed_as_its_repr_in_a_list_is_found() {
    let f = failure_of(
        "FP8 status: FAILED\n\
         - seqlen=512: TypeError('Unsupported MMA op kind: F8F6F4')\n\
         - seqlen=1024: TypeError('Unsupported MMA op kind: F8F6F4')\n",
    );
    assert_eq!(f.class.as_str(), "python-error");
}

#[test]
fn a_reports_prose_names_the_phase_even_on_lines_the_scanner_does_not_keep() {
    // The sentence holds no error or context word, so no record keeps it; the report's
    // first lines are read for prose all the same.
    let f = failure_of(
        "With LoRA on, the engine dies once the length passes 87k.\n\
         No request is needed: the profile run alone triggers it.\n\
         \n\
         RuntimeError: Triton Error [CUDA]: an illegal memory access was encountered\n",
    );
    assert_eq!(f.class.as_str(), "illegal-memory-access");
    assert_eq!(f.phase.as_str(), "memory-plan");
    // The first lines are kept apart for that, up to HEAD_LINES of them, cut and in order.
    let mut text = "ok\n".repeat(3 * rosetta_log::scan::HEAD_LINES);
    text.insert_str(0, &format!("{}\n\n", "x".repeat(2000)));
    let out = Scanner::new(Vocabulary::embedded(), &[]).scan_reader(0, &mut text.as_bytes());
    assert_eq!(out.head.len(), rosetta_log::scan::HEAD_LINES);
    assert_eq!(out.head[0].0, 1);
    assert!(out.head[0].1.len() <= 512);
    assert_eq!(out.head[1].0, 3, "empty lines are skipped, numbers kept");
}
