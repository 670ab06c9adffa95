//! The words of `triage-schema.md` as types: failure classes, phases and causes;
//! and the small shared vocabulary every crate writes the same way: GPU
//! architectures (`arch`), package names (`package`), byte counts (`bytes`).
//!
//! Every crate that speaks about a failure uses these enums, so that no cause or
//! class is ever a free string. Serialisation is kebab-case, exactly the ids of
//! the schema. The report model (`report`: the JSON contract of `diagnose`) is
//! here too, so that the knowledge base can hand typed hypotheses to the report
//! stage without knowing how they are printed; assembly and renderers live in
//! `rosetta-report`, the rules that use the words in `rosetta-kb`.
#![warn(missing_docs)]

pub mod arch;
pub mod bytes;
pub mod package;
pub mod report;

pub use arch::{Arch, ComputeCapability, Gfx};
pub use bytes::human_bytes;
pub use package::normalize_name;
pub use report::Severity;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Defines a vocabulary enum with its kebab-case ids, a one-line meaning per
/// word, `ALL`, `Display` and `FromStr`.
macro_rules! vocabulary {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $id:literal, $about:literal;)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "kebab-case")]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every word of this part of the vocabulary, in schema order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The schema id, e.g. `device-side-assert`.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $id,)+ }
            }

            /// What the word means, in one line.
            pub fn about(self) -> &'static str {
                match self { $($name::$variant => $about,)+ }
            }

            /// The valid ids, comma-separated, for error messages.
            pub fn valid_ids() -> String {
                Self::ALL.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = UnknownWord;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($id => Ok($name::$variant),)+
                    _ => Err(UnknownWord { kind: stringify!($name), word: s.to_string(), valid: Self::valid_ids() }),
                }
            }
        }
    };
}

/// A word that is not part of the vocabulary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownWord {
    /// Which part of the vocabulary was asked for.
    pub kind: &'static str,
    /// The word given.
    pub word: String,
    /// The valid ids.
    pub valid: String,
}

impl fmt::Display for UnknownWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}` (valid: {})",
            self.kind, self.word, self.valid
        )
    }
}

impl std::error::Error for UnknownWord {}

vocabulary! {
    /// What broke, as the log shows it (`failure.class`).
    FailureClass {
        /// A kernel assertion fired.
        DeviceSideAssert => "device-side-assert", "a kernel assertion fired (CUDA error: device-side assert triggered)";
        /// A kernel touched memory it must not.
        IllegalMemoryAccess => "illegal-memory-access", "a kernel touched memory it must not (illegal address, misaligned address, illegal instruction)";
        /// GPU memory ran out.
        GpuOom => "gpu-oom", "GPU memory ran out";
        /// Host memory or shared memory ran out.
        HostOom => "host-oom", "host memory or /dev/shm ran out (OOM killer, Bus error)";
        /// No code for this GPU architecture.
        NoKernelForArch => "no-kernel-for-arch", "a library has no code for this GPU architecture";
        /// Tensor sizes disagree.
        ShapeMismatch => "shape-mismatch", "tensor sizes disagree while loading weights or running a layer";
        /// Checkpoint keys or files missing.
        MissingWeights => "missing-weights", "missing or unexpected keys, or a checkpoint file not found";
        /// A module or symbol cannot be imported.
        ImportError => "import-error", "a module or symbol cannot be imported (ModuleNotFoundError, undefined symbol)";
        /// A compile or link failure.
        BuildError => "build-error", "a compile or link failure while installing or JIT-building a kernel";
        /// Config or flags rejected.
        ConfigError => "config-error", "the framework rejects the model config or the launch flags";
        /// Communication failure.
        CommError => "comm-error", "NCCL / Gloo / RPC errors, collective timeouts, watchdog aborts";
        /// No progress.
        Hang => "hang", "no progress: a stuck capture, a health check never ready";
        /// Another CUDA runtime error.
        CudaRuntimeError => "cuda-runtime-error", "another CUDA / cuBLAS / cuDNN runtime error";
        /// A native crash.
        NativeAbort => "native-abort", "a native crash (segfault, abort, GGML_ASSERT, C++ exception)";
        /// Any other exception.
        PythonError => "python-error", "any other exception";
        /// No crash, wrong output.
        WrongOutput => "wrong-output", "no crash, but the output is garbage, NaN or repeats";
        /// No failure in the log.
        None => "none", "no failure in the log";
    }
}

vocabulary! {
    /// When it broke (`failure.phase`), in the order a server passes through them.
    Phase {
        /// Installing or building.
        Install => "install", "installing packages or building kernels";
        /// Arg parsing, config, env checks.
        Startup => "startup", "argument parsing, config, environment checks";
        /// Loading weights.
        WeightLoad => "weight-load", "loading the checkpoint";
        /// Sizing KV cache / memory pools.
        MemoryPlan => "memory-plan", "sizing the KV cache and memory pools";
        /// CUDA graphs or torch.compile warm-up.
        GraphCapture => "graph-capture", "capturing CUDA graphs, torch.compile warm-up";
        /// The first request the server sends itself.
        Warmup => "warmup", "the warm-up request the server sends itself";
        /// Prompt processing.
        Prefill => "prefill", "prompt processing (prefill / extend)";
        /// Token generation.
        Decode => "decode", "token generation (decode)";
        /// Process groups, NCCL init.
        CommInit => "comm-init", "process groups and NCCL communicators being set up";
        /// Shutting down.
        Shutdown => "shutdown", "shutting down";
        /// Not known.
        Unknown => "unknown", "the log does not say";
    }
}

vocabulary! {
    /// Why it broke (`hypotheses[].cause`).
    Cause {
        /// No code for the GPU arch.
        ArchUnsupported => "arch-unsupported", "a kernel or library has no code or tuned config for this GPU architecture";
        /// Incompatible component versions.
        VersionMismatch => "version-mismatch", "two components at incompatible versions";
        /// RoPE parameters misread or positions beyond the table.
        RopeConfig => "rope-config", "rotary-embedding parameters misread, or positions beyond max_position_embeddings";
        /// Other model config problem.
        ModelConfig => "model-config", "another model config problem (model_type, quantization config, dtype)";
        /// Checkpoint layout mismatch.
        WeightLayout => "weight-layout", "checkpoint layout does not match the model code";
        /// Memory plan does not fit.
        MemoryBudget => "memory-budget", "the memory plan does not fit";
        /// A GPU kernel defect.
        KernelBug => "kernel-bug", "a GPU kernel's own defect on valid input";
        /// A framework defect outside GPU kernels.
        FrameworkBug => "framework-bug", "a defect in framework code that is not a GPU kernel";
        /// A backend that cannot run here was chosen.
        BackendSelection => "backend-selection", "the framework picked a backend that cannot run here";
        /// CUDA graph capture/replay problem.
        CudaGraph => "cuda-graph", "CUDA graph capture or replay fails or diverges from eager";
        /// Communication set-up problem.
        CommSetup => "comm-setup", "multi-GPU / multi-node communication set-up";
        /// Driver, toolkit or hardware state.
        DriverEnv => "driver-env", "driver, CUDA toolkit or hardware state";
        /// Missing or broken install.
        InstallEnv => "install-env", "missing or broken install";
        /// Conflicting or invalid launch flags.
        BadLaunchArgs => "bad-launch-args", "the launch flags conflict or are invalid for this model";
        /// Invalid request input.
        BadRequest => "bad-request", "a request's input is invalid";
        /// Nothing supported by the evidence.
        Unknown => "unknown", "none of the above is supported by the evidence";
    }
}

/// The canonical name of a launch argument, shared by every reader of launch
/// arguments (log dumps, typed command lines): dashes become underscores, case
/// folds, and the aliases frameworks use for the same setting meet on one key
/// (`tp`, `tensor_parallel_size` -> `tp_size`; `max_model_len` -> `context_length`;
/// `model` -> `model_path`). Rules key their `args` conditions on these names.
pub fn canonical_arg_key(k: &str) -> String {
    // Leading dashes, quotes and blanks in any order and number (`- 'x'`,
    // `'--x'`) go in one pass, so that the key of a key is the key itself.
    let k = k
        .trim_start_matches(|c: char| c == '-' || c == '\'' || c == '"' || c.is_whitespace())
        .trim_end_matches(|c: char| c == '\'' || c == '"' || c.is_whitespace())
        .replace('-', "_")
        .to_ascii_lowercase();
    match k.as_str() {
        "tp" | "tensor_parallel_size" | "tp_size" => "tp_size".into(),
        "dp" | "data_parallel_size" | "dp_size" => "dp_size".into(),
        "ep" | "ep_size" | "expert_parallel_size" => "ep_size".into(),
        "pp" | "pipeline_parallel_size" | "pp_size" => "pp_size".into(),
        "model" | "model_path" | "model_name_or_path" => "model_path".into(),
        "context_length" | "max_model_len" | "context_len" | "max_seq_len" => {
            "context_length".into()
        }
        _ => k,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_serde_and_from_str() {
        for c in Cause::ALL {
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(c.as_str().parse::<Cause>().unwrap(), *c);
        }
        for c in FailureClass::ALL {
            assert_eq!(c.as_str().parse::<FailureClass>().unwrap(), *c);
        }
        for p in Phase::ALL {
            assert_eq!(p.as_str().parse::<Phase>().unwrap(), *p);
        }
    }

    #[test]
    fn vocabulary_sizes_match_the_schema() {
        assert_eq!(FailureClass::ALL.len(), 17);
        assert_eq!(Phase::ALL.len(), 11);
        assert_eq!(Cause::ALL.len(), 16);
    }

    #[test]
    fn arg_keys_meet_on_one_name() {
        assert_eq!(canonical_arg_key("--tensor-parallel-size"), "tp_size");
        assert_eq!(canonical_arg_key("tp"), "tp_size");
        assert_eq!(canonical_arg_key("'max_model_len'"), "context_length");
        assert_eq!(
            canonical_arg_key("--Mem-Fraction-Static"),
            "mem_fraction_static"
        );
        assert_eq!(canonical_arg_key("model"), "model_path");
        assert_eq!(canonical_arg_key("- A"), "a");
        assert_eq!(canonical_arg_key("' --tp'"), "tp_size");
    }

    proptest::proptest! {
        /// The key of a key is the key itself, whatever the user typed, so every
        /// reader that canonicalises twice (a log dump, then a rule) lands on one name.
        #[test]
        fn arg_key_is_idempotent(k in "[-'\" a-zA-Z_\\PC]{0,12}") {
            let once = canonical_arg_key(&k);
            proptest::prop_assert_eq!(canonical_arg_key(&once), once);
        }
    }

    #[test]
    fn unknown_word_lists_valid_ids() {
        let err = "gpu-melted".parse::<FailureClass>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("gpu-melted"), "{msg}");
        assert!(msg.contains("device-side-assert"), "{msg}");
    }
}
