//! Error signals: message shapes that name a failure class, how specific each
//! is, whether it is a root failure or the cascade of one elsewhere, and the
//! phase it implies when it implies one. Also the milestone shapes that mark
//! the phases of a server's life. These are the log layer's vocabulary of
//! shapes; why a failure happened is the knowledge base's business, not this
//! module's.

use regex::RegexSet;
use rosetta_schema::{FailureClass, Phase};
use std::sync::OnceLock;

/// What a signal says about the incident it is part of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A failure in its own right.
    Root,
    /// A failure, but one that usually follows another (`Killed`, a bare abort): wins only when nothing stronger is in the run.
    Weak,
    /// The consequence of a failure elsewhere (watchdog on a healthy rank, SIGTERM from the launcher).
    Cascade,
}

/// One error signal.
#[derive(Debug)]
pub struct Signal {
    /// A short name, for evidence and tests.
    pub id: &'static str,
    /// The class it names.
    pub class: FailureClass,
    /// Higher wins inside one incident.
    pub strength: u8,
    /// Root, weak or cascade.
    pub role: Role,
    /// The phase it implies, if any.
    pub phase: Option<Phase>,
    /// The error is reported asynchronously (the traceback names a sync point).
    pub asynchronous: bool,
}

macro_rules! signals {
    ($($id:literal, $re:literal, $class:ident, $strength:literal, $role:ident, $phase:expr, $async:literal;)+) => {
        const SIGNALS: &[(&str, &str, FailureClass, u8, Role, Option<Phase>, bool)] = &[
            $(($id, $re, FailureClass::$class, $strength, Role::$role, $phase, $async),)+
        ];
    };
}

const P_STARTUP: Option<Phase> = Some(Phase::Startup);
const P_COMM: Option<Phase> = Some(Phase::CommInit);
const P_WEIGHTS: Option<Phase> = Some(Phase::WeightLoad);
const P_MEM: Option<Phase> = Some(Phase::MemoryPlan);
const P_GRAPH: Option<Phase> = Some(Phase::GraphCapture);
const P_WARMUP: Option<Phase> = Some(Phase::Warmup);
const P_INSTALL: Option<Phase> = Some(Phase::Install);

const NONE: Option<Phase> = None;

signals! {
    // device-side asserts
    "cuda-assert", r"device-side assert(?:ion)? triggered|triggers? a (?:CUDA )?device-side assert|cudaErrorAssert|CUDA_ERROR_ASSERT|hipErrorAssert", DeviceSideAssert, 100, Root, NONE, true;
    "kernel-assertion", r"\bblock: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] Assertion|Kernel Name: \S*assert\S*|_assert_async_cuda_kernel|Assertion `[^`]*kernel index out of bounds[^`]*` failed|\.cuh?:\d+: \w+:\s*$|\.cuh?:\d+: .{0,200}Assertion `.{0,400}` failed|\[ASSERT\].{0,400}Assertion .{0,400}failed|srcIndex < srcSelectDimSize", DeviceSideAssert, 100, Root, NONE, true;
    "index-exceeds-bounds", r"(?i)index value \d+ exceeds bounds|Index out of range in dimension \d+: index value", DeviceSideAssert, 98, Root, NONE, true;
    // illegal memory access and friends
    "illegal-address", r"(?i)illegal memory access|cudaErrorIllegalAddress|CUDA_ERROR_ILLEGAL_ADDRESS|misaligned address|cudaErrorMisalignedAddress|illegal instruction was encountered|cudaErrorIllegalInstruction|unspecified launch failure|cudaErrorLaunchFailure|hardware stack error|invalid program counter|memory access fault by GPU|Memory access fault|hipErrorIllegalAddress|operation not supported on global/shared address space|HSA_STATUS_ERROR_MEMORY_APERTURE_VIOLATION|attempted to access memory beyond the largest legal address", IllegalMemoryAccess, 95, Root, NONE, true;
    // no code for the arch
    "dtype-not-on-gpu", r"(?i)(?:bfloat16|bf16|fp8|float8|dtype)\b.{0,80}only supported on GPUs with compute capability|(?i)(?:bfloat16|bf16) is not supported (?:on|by) (?:this|your)", ConfigError, 91, Root, P_STARTUP, false;
    "torch-arch-warning", r"is not compatible with the current PyTorch installation|The current PyTorch install supports CUDA capabilities", NoKernelForArch, 60, Weak, NONE, false;
    "arch-gate", r"(?i)(?:not supported|unsupported|cannot be enabled|only (?:be )?(?:supported|enabled|available)|requires?|needs?|no compiled \w+)[^\n]{0,80}?(?:compute capability|device capability|cuda arch|\bsm_?\d{2,3}\b|\b(?:Ampere|Ada|Hopper|Blackwell|Volta|Turing|Pascal)\b|\bgfx\d{3,4}\w*|\bMI\d{3}[AXL]?\b)|(?i)requires? a (?:CUDA |GPU )?device with (?:compute )?capability|(?i)No compatible CUDA device found", NoKernelForArch, 89, Root, NONE, false;
    "no-kernel-image", r"(?i)no kernel image is available|cudaErrorNoKernelImageForDevice|CUDA_ERROR_NO_BINARY_FOR_GPU|hipErrorNoBinaryForGpu|no binary for gpu|invalid device function|cudaErrorInvalidDeviceFunction|Unsupported (?:gpu )?architecture|(?:sm_\d+a?|compute capability \d+\.\d+)\)? (?:is )?not (?:yet )?supported|Unsupported SM|requires (?:a GPU with )?(?:compute capability|sm_?\d+)|device kernel image is invalid|PTX was compiled with an unsupported toolchain|Feature '.*' requires .*sm_|(?i)only supports? (?:\w+ ){0,3}GPUs? (?:or newer|and newer|or later)|(?i)(?:requires|needs) (?:an? )?(?:Ampere|Ada|Hopper|Blackwell|Turing|Volta)(?: or newer| GPU| architecture)|(?i)GPU (?:architecture|arch) \S+ is not supported|(?i)not supported on (?:this|your|the current) GPU|generated on an incompatible device|expecting compute \d+\.\d+ got compute|rocBLAS error: Cannot read .*TensileLibrary|for GPU arch\s*:\s*gfx\w+|hipErrorNoBinaryForGpu|No compatible code objects? found", NoKernelForArch, 90, Root, NONE, false;
    // host memory
    "shm-too-small", r"(?i)Error while creating shared memory segment|/dev/shm.*(?:No space left|too small|insufficient)|No space left on device.*shm|shm size|unable to write to file </torch_|Bus error", HostOom, 88, Root, NONE, false;
    "oom-killer", r"(?i)Out of memory: Kill(?:ed)? process|oom-kill|oom_kill event|task \d+: Out Of Memory|OOMKilled|invoked oom-killer|killed due to memory pressure \(OOM\)|Cannot allocate memory|std::bad_alloc|MemoryError", HostOom, 60, Root, NONE, false;
    "killed", r"^\s*(?:\S+: line \d+: \d+ )?Killed(?:\s|$)|task \d+: Killed|Exit Code: 137|exit code 137\b|(?i)^\s*(?:\[\d+\]\s*)?\d+\s+killed\s+\S|(?i)\bsignal: killed\b|exitcode\s*:\s*-9\b|exit code:? -9\b|SIGKILLed|signal 9 \(SIGKILL\)|Signal 9 \(SIGKILL\)|received signal SIGKILL", HostOom, 20, Weak, NONE, false;
    // GPU memory
    "cuda-oom", r"(?i)CUDA out of memory|OutOfMemoryError|CUDA error: out of memory|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|CUDNN_STATUS_ALLOC_FAILED|Failed to CUDA calloc|HIP out of memory|hipErrorOutOfMemory|out of memory occurred when|(?:run|runs|ran|running) out of (?:GPU |VRAM |video |device )?memory|Decode out of memory|Not enough memory|not enough memory|insufficient (?:GPU )?memory|failed to allocate .*(?:CUDA|GPU|device)|cudaMalloc failed|Cuda failure '?out of memory|cudaMalloc\w*\(.*\): out of memory|CUDA runtime error in .*out of memory|ggml_backend_cuda_buffer_type_alloc_buffer: allocating .* failed", GpuOom, 85, Root, NONE, false;
    "kv-cache-too-small", r"(?i)KV cache is needed, which is larger than the available KV cache memory|No available memory for the cache blocks|max_num_batched_tokens.*larger than.*KV cache|not enough memory for (?:the )?KV cache|insufficient memory for KV cache|Not enough memory\. Please try to increase --mem-fraction-static|Free memory on device \S+ \([\d.]+/[\d.]+ GiB\) on startup is less|is less than desired GPU memory utilization|The model's max seq len .* is larger than the maximum number of tokens that can be stored in KV cache", GpuOom, 86, Root, P_MEM, false;
    "warmup-oom", r"(?i)when warming up|during (?:the )?warm-?up|while warming up", GpuOom, 1, Root, P_WARMUP, false;
    // shapes and weights
    "shape-mismatch", r"(?i)size mismatch for|the number of sizes provided \(\d+\) must be greater or equal|doesn't match the broadcast shape|The size of tensor a \(\d+\) must match the size of tensor b|shape mismatch|shapes cannot be multiplied|copying a param with shape|Tried to load weights of size|to a parameter of size|param(?:_data)?\.size\(\) == loaded_weight|Attempted to load weight \(.*\) into parameter|param(?:_data)?\.shape|expected shape|does not match (?:the )?(?:expected )?shape|incompatible shape|cannot reshape|shape '\[.*\]' is invalid for input of size|size of tensor a|must be divisible by \d+ for|has wrong shape|check_tensor_dims|(?i)\btensor size mismatch\b|must have the same (?:size|shape)|(?i)shapes? .{0,40}(?:mismatch|do(?:es)? not match|are incompatible)", ShapeMismatch, 80, Root, NONE, false;
    "weight-keyerror", r"KeyError: '[\w.]*(?:weight|bias|_scale|scales|qweight|qzeros|layers\.\d+|experts|lm_head|embed_tokens)[\w.]*'", MissingWeights, 79, Root, P_WEIGHTS, false;
    "missing-weights", r"(?i)Missing key\(s\) in state_dict|Unexpected key\(s\) in state_dict|missing keys|unexpected keys|wrong number of tensors|done_getting_tensors|weights? (?:not found|missing)|No such file or directory: .*\.(?:safetensors|bin|pt|gguf)|Cannot find any model weights|no safetensors|tensor '.*' not found|missing tensor|is not in the checkpoint|could not find .* in checkpoint|Error no file named .*(?:safetensors|bin)", MissingWeights, 78, Root, P_WEIGHTS, false;
    // imports and builds
    "import-error", r"ModuleNotFoundError|ImportError|undefined symbol|cannot open shared object file|GLIBC_?[\d.]+'? not found|GLIBCXX_[\d.]+'? not found|CXXABI_[\d.]+'? not found|version `[^`']+' not found|No module named|DLL load failed|cannot import name|partially initialized module", ImportError, 75, Root, P_STARTUP, false;
    "nvcc-arch", r"nvcc fatal\s*: Unsupported gpu architecture|ptxas fatal\s*: Value '\w+' is not defined for option 'gpu-name'|error: unsupported GPU architecture|PTXASError", BuildError, 92, Root, NONE, false;
    "pip-build-output", r"\[end of output\]|did not run successfully|error: subprocess-exited-with-error|Failed to build installable wheels|ERROR: Failed building wheel", BuildError, 74, Root, P_INSTALL, false;
    "wheel-build", r"(?i)Building wheel|Failed building wheel|subprocess-exited-with-error|setup\.py (?:install|bdist_wheel|develop)|pip install|Could not build wheels|\[\s*\d+%\] (?:Building|Linking) (?:CUDA|CXX|C|HIP)\b|^g?make(?:\[\d+\])?: \*\*\*|cmake --build|CMakeFiles/", BuildError, 1, Root, P_INSTALL, false;
    "build-error", r"(?i)Failed building wheel|error: subprocess-exited-with-error|ninja: build stopped|Error building extension|Error compiling objects for extension|nvcc fatal|collect2: error|ld returned \d+ exit status|fatal error: [\w/.]+\.h: No such file|CalledProcessError: Command '\['ninja'|RuntimeError: Error building|error: command '.*(?:gcc|nvcc|g\+\+|c\+\+)' failed|CMake Error|Could not build wheels|failed to compile|compilation terminated|ptxas (?:fatal|error)|error: unknown type name|unknown type name '\w+'|error: .{1,200} has no member named|error: .{1,200} was not declared in this scope|error: use of undeclared identifier|error: no member named|error: identifier .\w+. is undefined|error: expected .{1,40} before|TritonError|triton\.compiler\.errors|CompilationError", BuildError, 74, Root, NONE, false;
    "triton-out-of-resources", r"OutOfResources: out of resource: shared memory|out of resource: shared memory, Required: \d+, Hardware limit: \d+", PythonError, 82, Root, NONE, false;
    // sglang's advice block after a failed CUDA graph capture (the error itself may be cut from a paste)
    "sglang-capture-advice", r"disable cuda graph by --disable-cuda-graph|disable torch compile by not using --enable-torch-compile|Capture cuda graph failed", PythonError, 30, Root, P_GRAPH, false;
    // config and flags
    "config-assert", r"Assertion failed: [\w.()\[\]]+ % [\w.()\[\]]+ == 0|must be (?:a )?multiples? of \d+|is not a multiple of|should be (?:a )?multiple of", ConfigError, 72, Root, NONE, false;
    "gguf-arch", r"(?i)unknown model architecture|error loading model architecture|unknown pre-tokenizer type|error loading model vocabulary|unknown tokenizer: '", ConfigError, 72, Root, P_WEIGHTS, false;
    "config-error", r"(?i)does not recognize this architecture|has model type `[^`]+` but Transformers does not|rope_scaling must|rope_scaling.* should be|`rope_scaling`|rope_parameters|Unrecognized configuration class|Unrecognized model in|model type .* is not supported|is not supported for model|Model architectures \[.*\] are not supported|are not supported for now|error: unrecognized arguments|error: argument .*: invalid choice|error: argument .*: expected|ValidationError|must be divisible by|is not divisible by|must be (?:less|greater) than|should be (?:less|greater) than|is greater than the derived max_model_len|exceeds the model's maximum|max_model_len .* larger than|User-specified max_model_len|Invalid (?:value|configuration)|invalid literal for|not a valid|Unknown quantization|quantization method .* is not supported|requires you to execute the configuration file|(?i)\bdoes not support\b.{0,80}\b(?:tp|dp|pp|ep)[ _-]?sizes?\b|(?i)not supported (?:with|when|together with) --?\w", ConfigError, 70, Root, P_STARTUP, false;
    // communication
    "nccl-error", r"NCCL (?:error|Error|WARN)|ncclSystemError|ncclInternalError|ncclInvalidUsage|ncclInvalidArgument|ncclUnhandledCudaError|ncclRemoteError|DistBackendError|unhandled system error|unhandled cuda error|NCCL failure|Test NCCL failure|Duplicate GPU detected|Gloo|gloo|connectFullMesh|Connection refused|Connection reset by peer|EADDRINUSE|Address already in use|RendezvousTimeoutError|RendezvousConnectionError|c10d|socketStartConnect|NET/IB|NET/Socket|ibv_|Broken pipe.*(?:rank|nccl)|Socket creation failed|Address family not supported by protocol|DistNetworkError|ProcessGroupNCCL.*(?:error|failed)|HCCL|RCCL", CommError, 60, Root, P_COMM, false;
    "nccl-init", r"(?i)Duplicate GPU detected|peer access is not supported|ncclCommInitRank|init_process_group|eager_connect_single_device|Error while creating shared memory segment|Bootstrap|bootstrap", CommError, 1, Root, P_COMM, false;
    "collective-timeout", r"terminate called after throwing an instance of 'c10::DistBackendError'|Watchdog caught collective operation timeout|collective operation timeout|Some NCCL operations have failed or timed out|NCCL communicator was aborted|Process group watchdog thread terminated|NCCL watchdog thread terminated|ncclCommAbort|Timed out waiting .* for (?:all ranks|the other ranks)|barrier timed out|monitoredBarrier", CommError, 30, Cascade, NONE, false;
    // hangs
    "hang", r"(?i)watchdog got stuck|Heartbeat monitor timed out|timed out waiting for (?:the )?server|server did not become ready|health check (?:timed out|failed)|stucks? (?:in|at|during|on|when|forever)|(?:gets?|got|is|are|was|were|becomes?) stuck\b|no progress|\bhang(?:s|ing)? (?:at|in|during|forever|when|while|after|on|for)\b|\b(?:then|will|would|always|sometimes|randomly) hangs?\b|\bhangs? (?:there|indefinitely)|deadlock|Timeout while waiting for|did not respond within|RPC timed out|timed out after \d+", Hang, 55, Weak, NONE, false;
    // other CUDA runtime errors
    "cuda-error", r"(?i:cuda error|cuda failure|cuda runtime error)|Triton Error \[(?:CUDA|HIP)\]|CUDA_ERROR_\w+|cudaError\w+|CUBLAS_STATUS_\w+|CUDNN_STATUS_\w+|cuDNN error|cuBLAS error|cublasLt|CUDA driver version is insufficient|driver version is insufficient|CUDA driver initialization failed|cudaGetDeviceCount|no CUDA-capable device|No CUDA GPUs are available|Found no NVIDIA driver|NVIDIA driver on your system is too old|nvidia-container-cli|requirement error: unsatisfied condition|HIP error|hipError\w+|hipModuleLaunchKernel|cuLaunchKernel|mha_graph\.execute|is_good\(\) to be true|CUTLASS (?:error|failure|kernel failed)|cutlass.*(?:failed|error)|NVML|nvmlInit|Xid|uncorrectable ECC|ECC error|GPU has fallen off the bus|RuntimeError: CUDA|torch\.cuda\.\w*Error|AcceleratorError|cudaErrorStreamCapture|stream is capturing|captur\w+ (?:was )?invalidated", CudaRuntimeError, 50, Root, NONE, false;
    "container-driver", r"nvidia-container-cli|OCI runtime create failed|failed to create shim task|could not select device driver", CudaRuntimeError, 1, Root, P_STARTUP, false;
    "version-check", r"(?i)is installed with version .{0,40}(?:less|older) than|minimum required version|requires .{1,60} but you have|version .{1,40} is not supported(?:,| by)|please (?:upgrade|update) (?:to|your)", PythonError, 1, Root, P_STARTUP, false;
    "sampling-hint", r"probability tensor contains|torch\.multinomial|\bsampler\b|sampling_batch_info|\bmin_tokens\b", PythonError, 1, Root, Some(Phase::Decode), false;
    "warmup-span", r"(?i)\bwarmup[{:]|warm_up_model|_warmup\(", PythonError, 1, Root, P_WARMUP, false;
    "engine-load-hint", r"(?i)deserializ\w*Engine|Loading engine|engine plan file", PythonError, 1, Root, P_WEIGHTS, false;
    "driver-init-hint", r"(?i)driver version is insufficient|NVIDIA driver (?:is )?too old|failed to initialize CUDA|cuInit failed|CUDA driver initialization failed|cudaGetDeviceCount|system not yet initialized", PythonError, 1, Root, P_STARTUP, false;
    "memory-plan-hint", r"(?i)(?:creating|create|allocat\w*) (?:the )?(?:model ?instance|runtime buffers?|kv ?cache|memory pool|cache engine)|failed to create context with model|llama_new_context_with_model: failed|llama_init_from_model: failed", PythonError, 1, Root, P_MEM, false;
    "capture-error", r"(?i)operation not permitted when stream is capturing|cudaErrorStreamCapture\w*|Capture cuda graph failed|CUDA graph capture failed|capture (?:was )?invalidated|during capture|CUDAGraph|graph capture", CudaRuntimeError, 1, Root, P_GRAPH, false;
    // native crashes
    "host-assert", r"Assertion `.{0,400}' failed\.|Assertion failed: |Assertion fail: |Assertion `.{0,400}` failed\.", NativeAbort, 41, Root, NONE, false;
    "trt-serialization", r"(?i)Serialization assertion .{0,200}failed|Version tag does not match|Serialization \(Serialization assertion", NativeAbort, 45, Weak, P_WEIGHTS, false;
    "native-abort", r"Segmentation fault|Segfault encountered|(?:^|/)ggml[\w-]*\.cu:\d+: \S|ggml-cuda/\w+\.cuh?:\d+: |\.cu:\d+: fatal error|SIGSEGV|SIGABRT|SIGBUS|SIGILL|SIGFPE|Aborted \(core dumped\)|core dumped|terminate called after throwing|terminate called recursively|GGML_ASSERT|ggml_abort|Fatal Python error|double free|free\(\): invalid|corrupted size vs|malloc\(\): |stack smashing detected|\*\*\* Error in|std::runtime_error|std::bad_\w+|c10::Error|panicked at|fatal runtime error|Illegal instruction \(core dumped\)|^Illegal instruction\s*$|signal 11|signal 6\b|exitcode\s*:\s*-(?:6|11)\b|Check failed:|FATAL ERROR|Floating point exception|exit status 0xc000040[59]|exit status 0xc0000005|llama runner process has terminated", NativeAbort, 40, Root, NONE, false;
    // cascades and echoes of a failure elsewhere
    "cascade", r"Received sigquit|SIGQUIT|Sending process \d+ closing signal|closing signal SIGTERM|ChildFailedError|Child process .* (?:died|exited)|EngineDeadError|EngineCore encountered a fatal error|Engine core initialization failed|EngineCore failed to start|died unexpectedly|WorkerProc (?:hit an exception|failed)|Worker failed with error|exited with code|Exception in thread|Signal 15 \(SIGTERM\)|exitcode\s*:\s*-15|To enable traceback see|Root Cause \(first observed failure\)|Scheduler hit an exception|hit an exception|KeyboardInterrupt|Killing the process|Error in the worker process|Shutting down|terminated by signal|API server .*exited", PythonError, 5, Cascade, NONE, false;
}

/// Every signal, compiled, with one `RegexSet` over all of them.
pub struct Signals {
    /// The signals, in table order.
    pub list: Vec<Signal>,
    set: RegexSet,
}

impl Signals {
    /// The compiled table (built once).
    pub fn get() -> &'static Signals {
        static S: OnceLock<Signals> = OnceLock::new();
        S.get_or_init(|| {
            let list = SIGNALS
                .iter()
                .map(
                    |&(id, _, class, strength, role, phase, asynchronous)| Signal {
                        id,
                        class,
                        strength,
                        role,
                        phase,
                        asynchronous,
                    },
                )
                .collect();
            let pats: Vec<&str> = SIGNALS.iter().map(|s| s.1).collect();
            Signals {
                list,
                set: big_set(&pats).expect("signal table compiles"),
            }
        })
    }

    /// Literals (3+ characters) that every match of some signal contains, for the scanner.
    pub fn literals(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (_, re, ..) in SIGNALS {
            let Ok(hir) = regex_syntax::parse(re) else {
                continue;
            };
            // The whole pattern's prefix set when it has a finite one, else each
            // branch's that has a small one.
            let words: Vec<String> = match prefix_literals(&hir) {
                Some(w) => w,
                // Only branches with a few long words: a short or case-folded prefix
                // (`are `, `For `) would stop the scanner on every line.
                None => branch_literals(&hir)
                    .into_iter()
                    .flatten()
                    .filter(|w| w.len() <= 8 && w.iter().all(|x| x.len() >= 6))
                    .flatten()
                    .collect(),
            };
            for w in words {
                if w.len() >= 4 && !out.contains(&w) {
                    out.push(w);
                }
            }
        }
        out
    }

    /// Each signal's top-level branches that yield no prefix literal of 4+ bytes: the
    /// scanner would never keep a line that only such a branch matches.
    pub fn branches_without_literals() -> Vec<(&'static str, usize)> {
        let mut out = Vec::new();
        for (id, re, ..) in SIGNALS {
            let Ok(hir) = regex_syntax::parse(re) else {
                out.push((*id, usize::MAX));
                continue;
            };
            for (i, lits) in branch_literals(&hir).iter().enumerate() {
                if lits.as_ref().is_none_or(|l| l.iter().any(|w| w.len() < 4)) {
                    out.push((*id, i));
                }
            }
        }
        out
    }

    /// Indices of the signals a message matches.
    pub fn matches(&self, msg: &str) -> Vec<usize> {
        self.set.matches(msg).into_iter().collect()
    }
}

/// A set of many patterns, with room for its lazy DFA: at the default cache size
/// the DFA for the whole table keeps running out of states and the search falls
/// back to the (many times slower) PikeVM on every line.
fn big_set<I, S>(pats: I) -> Result<RegexSet, regex::Error>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    regex::RegexSetBuilder::new(pats)
        .size_limit(64 << 20)
        .dfa_size_limit(64 << 20)
        .build()
}

/// Prefix literals of each top-level branch of a pattern, extracted branch by branch
/// so that one branch without a finite prefix does not cost the others theirs.
/// `None` for a branch with no finite prefix set.
fn branch_literals(hir: &regex_syntax::hir::Hir) -> Vec<Option<Vec<String>>> {
    use regex_syntax::hir::HirKind;
    let branches: Vec<&regex_syntax::hir::Hir> = match hir.kind() {
        HirKind::Alternation(alts) => alts.iter().collect(),
        _ => vec![hir],
    };
    branches.into_iter().map(prefix_literals).collect()
}

/// The finite prefix-literal set of a pattern, if it has one.
fn prefix_literals(hir: &regex_syntax::hir::Hir) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let mut ex = Extractor::new();
    ex.kind(ExtractKind::Prefix).limit_total(400);
    let mut seq = ex.extract(hir);
    seq.optimize_for_prefix_by_preference();
    let words: Vec<String> = seq
        .literals()?
        .iter()
        .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned())
        .collect();
    (!words.is_empty()).then_some(words)
}

/// A milestone shape: its phase, whether it marks the end of that phase, and a label.
#[derive(Debug)]
pub struct MilestoneShape {
    /// The phase the line belongs to.
    pub phase: Phase,
    /// The line says the phase finished.
    pub done: bool,
    /// A short label for the timeline.
    pub label: &'static str,
}

const MILESTONES: &[(&str, Phase, bool, &str)] = &[
    // order matters: the first match wins, so "end" shapes come before "begin" shapes
    (
        r"(?i)fired up and ready|Application startup complete|Uvicorn running on|server is ready|ready to (?:serve|roll|accept)|Started server process|HTTP server listening|server listening on|init engine .* took|Starting vLLM (?:API )?server on|Avg prompt throughput",
        Phase::Warmup,
        true,
        "ready",
    ),
    (
        r"(?i)Capture (?:cuda graph|.*CUDA graph) end|Graph capturing finished|graphs? captured|capture (?:done|finished)|cuda graphs? ready",
        Phase::GraphCapture,
        true,
        "CUDA graphs captured",
    ),
    (
        r"(?i)Capture (?:cuda graph|.*CUDA graph) begin|Capturing CUDA graph|capturing (?:cuda )?graphs?|Capturing batches|Capture cuda graph bs|torch\.compile|Compiling a graph|cudagraph capture|CUDA graph capture|capture_cuda_graph",
        Phase::GraphCapture,
        false,
        "CUDA graph capture",
    ),
    (
        r"(?i)Memory pool end|KV Cache is allocated|allocated KV cache|GPU KV cache size|# (?:GPU|cuda) blocks|KV self size|Maximum concurrency for|max_total_num_tokens=",
        Phase::MemoryPlan,
        true,
        "KV cache sized",
    ),
    (
        r"(?i)KV cache sizing|kv cache (?:size|sizing|budget|fraction)|Available KV cache memory|memory profil|profile_run|determine_num_available_blocks|init_memory_pool|llama_kv_cache_init|llama_new_context_with_model|Using KV cache dtype|KV cache dtype",
        Phase::MemoryPlan,
        false,
        "KV cache sizing",
    ),
    (
        r"(?i)Load weight end|Loading weights took|Model loading took|model loaded|weights loaded|Loaded model|loading .* done|model weights:",
        Phase::WeightLoad,
        true,
        "weights loaded",
    ),
    (
        r"(?i)Load weight begin|Loading weights|Loading safetensors|checkpoint shards|Starting to load model|loading model|llm_load_tensors|load_tensors:|Loading the model|Loading checkpoint|llama_model_load|pulling manifest|Multi-thread loading shards|Loading engine|deserializ\w* (?:the )?(?:cuda )?engine|offload(?:ing)? \d+ (?:repeating )?layers|layers\.offload|offload to (?:cuda|gpu|rocm)",
        Phase::WeightLoad,
        false,
        "weight load",
    ),
    (
        r"(?i)Init torch distributed ends|process group(?:s)? (?:initialized|ready)|NCCL INFO comm .* Init COMPLETE|ncclCommInitRank .* Init COMPLETE",
        Phase::CommInit,
        true,
        "process groups ready",
    ),
    (
        r"(?i)Init torch distributed begin|init_process_group|Initializing process group|initialize_model_parallel|NCCL INFO Bootstrap|NCCL INFO NET|ncclCommInitRank|Starting \d+ (?:ranks|processes)|Using devices",
        Phase::CommInit,
        false,
        "process groups",
    ),
    (
        r"(?i)warmup done|warm-?up (?:done|finished|complete)|finished warm",
        Phase::Warmup,
        true,
        "warm-up done",
    ),
    (
        r"(?i)warm-?up|warming up|warm up|dummy forward|_dummy_run|sending warmup request",
        Phase::Warmup,
        false,
        "warm-up",
    ),
    (
        r"(?i)prefill done|prefill finished|prompt eval time",
        Phase::Prefill,
        true,
        "prefill done",
    ),
    (
        r#"(?i)Prefill batch|\bprefill\b|prompt eval|computing over \d+ chunks|processing prompt|prompt_len=|"?POST\s+"?/(?:v1/)?(?:generate|completions?|chat/completions|api/generate|api/chat|completion)\b"#,
        Phase::Prefill,
        false,
        "prefill",
    ),
    (
        r#"(?i)"(?:messages|prompt)"\s*:.*"max_(?:new_)?tokens"|\brequest\b.*(?:max_tokens|max_new_tokens|stop_token)"#,
        Phase::Decode,
        false,
        "request",
    ),
    (
        r"(?i)Decode batch|decode step|\bdecoding\b|\bgenerating\b|\bgeneration (?:finished|done|step|started|time|speed)\b|\bgenerated \d+ tokens|gen throughput|Avg generation throughput|eval time|tokens per second",
        Phase::Decode,
        false,
        "decode",
    ),
    (
        r"(?i)server_args=|non-default args|args: Namespace\(|Initializing a V1 LLM engine|vLLM API server version|vLLM server version|Automatically detected platform|text_generation_launcher|trtllm-serve|^\$ |launch_server|llama-server|build: \d+|system_info:|loading model .* \(random init\)|torch \d+\.\d+.* on ",
        Phase::Startup,
        false,
        "start",
    ),
    (
        r"(?i)shutting down|Shutting down|Received sigquit|Stopping|exiting|Finished server process",
        Phase::Shutdown,
        false,
        "shutdown",
    ),
];

/// The compiled milestone shapes.
pub struct Milestones {
    /// Shapes in table order.
    pub shapes: Vec<MilestoneShape>,
    set: RegexSet,
}

impl Milestones {
    /// The compiled table.
    pub fn get() -> &'static Milestones {
        static M: OnceLock<Milestones> = OnceLock::new();
        M.get_or_init(|| Milestones {
            shapes: MILESTONES
                .iter()
                .map(|&(_, phase, done, label)| MilestoneShape { phase, done, label })
                .collect(),
            set: big_set(MILESTONES.iter().map(|m| m.0)).expect("milestones compile"),
        })
    }

    /// The first milestone shape a message matches.
    pub fn classify(&self, msg: &str) -> Option<&MilestoneShape> {
        let first = self.set.matches(msg).into_iter().next()?;
        self.shapes.get(first)
    }
}

/// Phase words in a function name (innermost frames first): how a traceback
/// says where it was.
pub fn phase_of_function(func: &str, file: &str) -> Option<Phase> {
    let f = func.to_ascii_lowercase();
    let file = file.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| f.contains(w));
    if file.ends_with("cuda/graphs.py") || has(&["capture", "cuda_graph", "cudagraph"]) {
        return Some(Phase::GraphCapture);
    }
    if has(&["warmup", "warm_up", "_dummy_sampler_run"]) {
        return Some(Phase::Warmup);
    }
    if has(&[
        "nccl_comm_init",
        "ncclcomminit",
        "init_process_group",
        "init_distributed",
        "initialize_model_parallel",
        "_new_process_group",
        "eager_connect",
        "init_torch_distributed",
        "rendezvous",
    ]) {
        return Some(Phase::CommInit);
    }
    if has(&[
        "profile_run",
        "create_model_instance",
        "profile_max_num_token",
        "init_memory_pool",
        "determine_num_available_blocks",
        "determine_available_memory",
        "initialize_kv_cache",
        "_initialize_kv_caches",
        "init_cache_engine",
        "allocate_kv",
        "kv_cache_configurator",
    ]) {
        return Some(Phase::MemoryPlan);
    }
    if has(&[
        "load_weights",
        "load_model",
        "weight_loader",
        "load_state_dict",
        "_load_w",
        "load_checkpoint",
        "safe_open",
    ]) {
        return Some(Phase::WeightLoad);
    }
    if (has(&["decode"]) && !has(&["decode_tokens", "detokeni", "tokenizer"]))
        || has(&[
            "sampler",
            "sample_",
            "_sample",
            "_to_list",
            "_bookkeeping_sync",
        ])
    {
        return Some(Phase::Decode);
    }
    if has(&["forward_extend", "prefill", "run_prefill"]) {
        return Some(Phase::Prefill);
    }
    if has(&[
        "register",
        "parse_args",
        "_verify_",
        "check_server_args",
        "get_config",
        "_get_and_verify",
        "create_engine_config",
        "_find_and_load",
        "import_module",
    ]) || (f == "<module>" && (file.contains("site-packages") || file.contains("dist-packages")))
    {
        return Some(Phase::Startup);
    }
    if has(&["shutdown", "__del__", "atexit"]) {
        return Some(Phase::Shutdown);
    }
    None
}

/// Functions of a serving loop: a failure inside one happened while serving requests.
pub fn serving_function(func: &str) -> bool {
    matches!(
        func,
        "execute_model"
            | "execute_model_ray"
            | "_model_forward"
            | "engine_step"
            | "step_async"
            | "run_engine_loop"
            | "step"
            | "step_with_batch_queue"
            | "run_busy_loop"
            | "_process_engine_step"
            | "event_loop_normal"
            | "event_loop_overlap"
            | "event_loop_pp"
            | "run_batch"
            | "forward_batch_generation"
            | "generate_token"
            | "decode_token"
            | "_run_workers"
            | "busy_loop"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_signal_branch_has_a_prefix_literal_for_the_scanner() {
        // These branches start with a class, a short word or `\s*`; the scanner keeps
        // their lines through its own word lists (`Assertion`, `Killed`, `CUDA`, ...),
        // which `scan` tests cover. Any other branch needs a prefix literal.
        let known = [
            ("kernel-assertion", 4),
            ("kernel-assertion", 5),
            ("dtype-not-on-gpu", 0),
            ("arch-gate", 0),
            ("no-kernel-image", 8),
            ("killed", 0),
            ("killed", 4),
            ("wheel-build", 6),
            ("config-error", 4),
            ("hang", 6),
            ("hang", 9),
            ("cuda-error", 29),
        ];
        let bad: Vec<_> = Signals::branches_without_literals()
            .into_iter()
            .filter(|b| !known.contains(b))
            .collect();
        assert!(
            bad.is_empty(),
            "signal branches the scanner cannot see: {bad:?}"
        );
    }

    fn classes(msg: &str) -> Vec<FailureClass> {
        let s = Signals::get();
        s.matches(msg)
            .into_iter()
            .map(|i| s.list[i].class)
            .collect()
    }

    #[test]
    fn table_compiles_and_names_classes() {
        assert!(
            classes("torch.AcceleratorError: CUDA error: device-side assert triggered")
                .contains(&FailureClass::DeviceSideAssert)
        );
        assert!(
            classes("RuntimeError: CUDA error: an illegal memory access was encountered")
                .contains(&FailureClass::IllegalMemoryAccess)
        );
        assert!(
            classes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1 GiB")
                .contains(&FailureClass::GpuOom)
        );
        assert!(classes(
            "Error while creating shared memory segment /dev/shm/nccl-x (size 9637888)"
        )
        .contains(&FailureClass::HostOom));
        assert!(classes(
            "RuntimeError: CUDA error: no kernel image is available for execution on the device"
        )
        .contains(&FailureClass::NoKernelForArch));
        assert!(classes("ImportError: x.so: undefined symbol: _ZN2at4_ops")
            .contains(&FailureClass::ImportError));
        assert!(!classes("INFO all good")
            .iter()
            .any(|c| *c != FailureClass::PythonError));
    }

    #[test]
    fn milestones_classify_in_order() {
        let m = Milestones::get();
        assert_eq!(
            m.classify("Load weight end. elapsed=3.2 s").unwrap().label,
            "weights loaded"
        );
        assert_eq!(
            m.classify("Load weight begin. avail mem=80 GB")
                .unwrap()
                .phase,
            Phase::WeightLoad
        );
        assert_eq!(
            m.classify("The server is fired up and ready to roll!")
                .unwrap()
                .label,
            "ready"
        );
        assert_eq!(
            m.classify("Capture cuda graph begin. This can take up to several minutes.")
                .unwrap()
                .phase,
            Phase::GraphCapture
        );
        assert!(m.classify("nothing here").is_none());
    }

    #[test]
    fn frames_name_phases() {
        assert_eq!(
            phase_of_function("process_batch_result_decode", "x.py"),
            Some(Phase::Decode)
        );
        assert_eq!(
            phase_of_function("capture_end", "torch/cuda/graphs.py"),
            Some(Phase::GraphCapture)
        );
        assert_eq!(phase_of_function("init_forward_metadata", "x.py"), None);
        assert_eq!(
            phase_of_function("register", "auto_factory.py"),
            Some(Phase::Startup)
        );
    }
}
#[cfg(test)]
mod more_tests {
    use super::*;
    #[test]
    fn llama_cpp_prompt_processing_is_prefill() {
        let m = Milestones::get();
        let s = m
            .classify("compute_imatrix: computing over 307 chunks with batch_size 512")
            .unwrap();
        assert_eq!(s.phase, Phase::Prefill, "{}", s.label);
    }
}
#[cfg(test)]
mod literal_tests {
    #[test]
    fn signal_literals_are_few_and_long() {
        let l = super::Signals::get().literals();
        assert!(l.len() < 2000, "{}", l.len());
        assert!(l.iter().all(|w| w.len() >= 3));
        eprintln!("signal literals: {}", l.len());
    }
}
