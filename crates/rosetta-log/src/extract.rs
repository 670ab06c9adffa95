//! Facts named in the log text itself: launch arguments (sglang's
//! `ServerArgs(...)` and dict forms, vLLM's `non-default args` and
//! `Namespace(...)`, command-line flags), versions of the stack, GPUs and
//! archs, model types and architectures, and position limits versus the
//! positions used. Each fact keeps the line it came from. This module reads
//! retained records; it does not judge what the facts mean.

use crate::lazy::LazyRegex;
use crate::scan::Record;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// A value with the line it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Input file index.
    pub source: usize,
    /// 1-based line.
    pub line: u64,
}

/// Launch arguments: canonical key -> value (Python repr unquoted).
pub type Args = BTreeMap<String, Located<String>>;

/// Position limits and positions used.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Positions {
    /// The model's position limit (`max_position_embeddings`, `n_positions`, ...).
    pub limit: Option<Located<u64>>,
    /// The largest position the log shows being used.
    pub max_seen: Option<Located<u64>>,
    /// prompt length + new tokens requested, when both are printed.
    pub planned: Option<Located<u64>>,
    /// The framework itself said the limit was exceeded.
    pub exceeded_warning: Option<Located<String>>,
    /// The context length configured (`max_model_len`, `context_length`), when printed.
    pub configured: Option<Located<u64>>,
}

impl Positions {
    /// Positions reach or pass the limit.
    pub fn overflow(&self) -> bool {
        if self.exceeded_warning.is_some() {
            return true;
        }
        let Some(limit) = &self.limit else {
            return false;
        };
        let seen = self.max_seen.as_ref().map_or(0, |s| s.value + 1);
        let planned = self.planned.as_ref().map_or(0, |p| p.value);
        seen.max(planned) > limit.value
    }
}

/// Vocabulary size against token ids that requests carry.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Vocab {
    /// `vocab_size=`, `n_vocab =`, `exceeds bounds N`.
    pub size: Option<Located<u64>>,
    /// The largest id in a request's `stop_token_ids`, `logit_bias`, `prompt_token_ids`, ...
    pub max_request_id: Option<Located<u64>>,
}

impl Vocab {
    /// A request named a token id the vocabulary does not have.
    pub fn overflow(&self) -> bool {
        matches!((&self.size, &self.max_request_id), (Some(s), Some(m)) if m.value >= s.value)
    }
}

/// Everything this module extracts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Extracted {
    /// Launch arguments.
    pub args: Args,
    /// Package / stack versions: `torch`, `transformers`, `vllm`, `sglang`, `cuda`, `nccl`, `driver`, ...
    pub versions: BTreeMap<String, Located<String>>,
    /// GPU names as printed.
    pub gpus: Vec<Located<String>>,
    /// Compute capabilities printed (`9.0`).
    pub compute_capabilities: Vec<Located<String>>,
    /// `sm_XX` / `gfxNNN` mentioned anywhere (kernel targets as well as devices).
    pub arch_mentions: Vec<Located<String>>,
    /// GPU generation names (`Blackwell`, `Hopper`, ...), for inferring the arch when no GPU is named.
    pub generations: Vec<Located<String>>,
    /// Memory of one GPU, GiB, as the log states it (an OOM's total capacity, nvidia-smi's table).
    pub gpu_memory_gib: Vec<Located<String>>,
    /// Model types named.
    pub model_types: Vec<Located<String>>,
    /// Architectures (`GlmMoeDsaForCausalLM`) named.
    pub architectures: Vec<Located<String>>,
    /// Model path or name.
    pub model: Option<Located<String>>,
    /// Position limits and use.
    pub positions: Positions,
    /// The vocabulary size printed, and the largest token id a request named.
    pub vocab: Vocab,
    /// The framework the log comes from.
    pub framework: Option<String>,
}

struct Patterns {
    server_args: LazyRegex,
    dict_args: LazyRegex,
    namespace: LazyRegex,
    v1_config: LazyRegex,
    command: LazyRegex,
    flag: LazyRegex,
    versions: Vec<(&'static str, LazyRegex)>,
    cuda_pair: LazyRegex,
    torch_cu: LazyRegex,
    cc: LazyRegex,
    /// A capability printed as one number (vLLM's `Current capability: 75`).
    cc_int: LazyRegex,
    arch: LazyRegex,
    generation: LazyRegex,
    gpu_memory: LazyRegex,
    model_type: LazyRegex,
    architecture: LazyRegex,
    limit: LazyRegex,
    pos: LazyRegex,
    prompt_len: LazyRegex,
    new_tokens: LazyRegex,
    exceeded: LazyRegex,
    configured: LazyRegex,
    final_pos: LazyRegex,
    vocab_size: LazyRegex,
    request_ids: LazyRegex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        server_args: LazyRegex::trusted(r"server_args=ServerArgs\((.*)\)\s*$"),
        dict_args: LazyRegex::trusted(r"(?:server_args=|non-default args:\s*|engine args:\s*)(\{.*\})\s*$"),
        namespace: LazyRegex::trusted(r"(?:args|Namespace):?\s*Namespace\((.*)\)\s*$"),
        v1_config: LazyRegex::trusted(r"with config:\s*(.*)$"),
        // A known launcher anywhere on the line; or any program after a shell prompt, at the
        // start of a quoted command (`` `RUST_LOG=x ./server --flag` ``) or run by path (`./x`).
        command: LazyRegex::trusted(r"(?:(?:^|\s)(?:\$ |>>> )?(?:python3?(?:\.\d+)? (?:-m )?\S*|vllm serve|trtllm-serve|llama-server|llama-cli|text-generation-launcher|torchrun|sglang\.launch_server|ollama run|docker run)\b|^\s*(?:\$|`)\s*(?:[A-Z_][A-Z0-9_]*=\S+\s+)*(?:\./|/)?[\w./-]+\s+-|(?:^|\s)\./[\w.-]+\s+-)"),
        flag: LazyRegex::trusted(r#"(?:^|\s)--([a-zA-Z][\w-]*)(?:[ =]((?:"[^"]*"|'[^']*'|[^\s-][^\s]*)))?"#),
        versions: vec![
            ("transformers", LazyRegex::trusted(r"(?i)\btransformers(?: version)?(?:==|[:= ]\s*|\s+v)v?(\d+\.\d+(?:\.\d+)?(?:\.?(?:dev|rc|post)\d+)?)\b")),
            ("torch", LazyRegex::trusted(r"(?i)\b(?:py)?torch(?: version)?(?:==|[:= ]\s*)v?(\d+\.\d+\.\d+(?:\+\w+)?(?:\.?(?:dev|rc|post)\d+)?)")),
            ("vllm", LazyRegex::trusted(r"(?i)\bvllm(?: API server)?(?: version)?(?:==|[:= ]\s*|\s*v)?v?(\d+\.\d+\.\d+(?:\.?(?:post|rc|dev)\d+)?(?:\+\w+)?)")),
            ("sglang", LazyRegex::trusted(r"(?i)\bsglang(?: version)?(?:==|[:= ]\s*|\s+v)v?(\d+\.\d+\.\d+(?:\.?(?:post|rc|dev)\d+)?)")),
            ("nccl", LazyRegex::trusted(r"(?i)\bNCCL(?: version)?(?:==|[:= ]\s*)v?(\d+\.\d+\.\d+)")),
            ("triton", LazyRegex::trusted(r"(?i)\btriton(?: version)?(?:==|[:= ]\s*)v?(\d+\.\d+\.\d+)")),
            ("flashinfer", LazyRegex::trusted(r"(?i)\bflashinfer(?:[_-]python)?(?: version)?(?:==|[:= ]\s*)v?(\d+\.\d+\.\d+(?:\.?post\d+)?)")),
            ("driver", LazyRegex::trusted(r"(?i)\bdriver(?: version)?[:= ]\s*(\d{3}\.\d+(?:\.\d+)?)")),
            ("cuda", LazyRegex::trusted(r"(?i)\bcuda(?: version| runtime)?[:= (]\s*(\d{2}\.\d)\b")),
            ("tensorrt_llm", LazyRegex::trusted(r"(?i)\btensorrt[_-]llm(?: version)?(?:==|[:= ]\s*)v?(\d+\.\d+\.\d+\w*)")),
            ("ollama", LazyRegex::trusted(r"(?i)\bollama(?: version)?(?: is)?(?:==|[:= ]\s*)v?(\d+\.\d+\.\d+)")),
            ("python", LazyRegex::trusted(r"\bpython(3\.\d+)\b")),
        ],
        cuda_pair: LazyRegex::trusted(r"\bruntime (\d{4,5}), driver (\d{4,5})"),
        torch_cu: LazyRegex::trusted(r"\+cu(\d{2,3})\b"),
        cc: LazyRegex::trusted(r"(?i)compute capability:?\s*\(?(\d{1,2})\.(\d)"),
        cc_int: LazyRegex::trusted(r"(?i)\bcurrent (?:compute )?capability:?\s*(\d{1,2})(\d)\b"),
        arch: LazyRegex::trusted(r"\b(sm_?\d{2,3}[af]?|gfx\d{3,4}[a-z]?)\b"),
        generation: LazyRegex::trusted(r"\b(Blackwell|Hopper|Ada Lovelace|Ampere|Turing|Volta)\b"),
        gpu_memory: LazyRegex::trusted(r"(?i)total capacity of ([\d.]+) GiB|\b\d+MiB\s*/\s*(\d{4,6})MiB\b|\btotal[_ ]memory\s*[=:]\s*([\d.]+)\s*GiB"),
        model_type: LazyRegex::trusted(r#"(?:\bmodel type |model_type['"]?\s*[=:]\s*['"]?|model type `)([a-z][a-z0-9_]+)"#),
        architecture: LazyRegex::trusted(r"\b([A-Z][A-Za-z0-9]+For(?:CausalLM|ConditionalGeneration|SequenceClassification|MaskedLM))\b"),
        limit: LazyRegex::trusted(r"(?i)\b(?:max_position_embeddings|n_positions|max_positions|max_position|n_ctx_train|max_seq_len(?:gth)?|seq_length|model_max_length)\s*[=:]\s*(\d+)"),
        pos: LazyRegex::trusted(r"(?i)\b(?:pos|position|positions|max_pos)\s*[=:]\s*(\d+)"),
        prompt_len: LazyRegex::trusted(r"(?i)\b(?:prompt_len|prompt_length|input_len|#new-token|prompt[ _]tokens)\s*[=:]\s*(\d+)"),
        new_tokens: LazyRegex::trusted(r#"(?i)\b(?:max_new_tokens|max_tokens)"?\s*[=:]\s*(\d+)"#),
        configured: LazyRegex::trusted(r"(?i)\b(?:max_model_len|context_length|context_len|max_seq_len|max-model-len|context-length)\b\)?\s*[=:(]?\s*\(?(\d{3,7})\b"),
        exceeded: LazyRegex::trusted(r"(?i)exceeded the model's predefined maximum length \((\d+)\)|longer than the specified maximum sequence length for this model \((\d+) > (\d+)\)|position(?:s)? (?:id )?(\d+) (?:is )?(?:out of range|exceeds)|(?:input|prompt|sequence)s? (?:length )?(?:could |would |will |may |can )?(?:exceeds?|be longer than|is longer than) (\d+) (?:tokens|positions)"),
        final_pos: LazyRegex::trusted(r"(?i)final position (\d+)"),
        vocab_size: LazyRegex::trusted(r#"(?i)\b(?:vocab_size|n_vocab|vocab size)\b['"]?\s*[=:]\s*(\d+)|exceeds bounds (\d+)|with size (\d+)"#),
        request_ids: LazyRegex::trusted(r#"(?i)\b(?:stop_token_ids|logit_bias|allowed_token_ids|prompt_token_ids|bad_words_ids|input_ids|eos_token_id)\b['"]?\s*[:=]\s*[\[{]([^\]}]*)"#),
    })
}

/// Canonical names for common aliases of the same flag across frameworks.
fn canonical_key(k: &str) -> String {
    let k = k
        .trim()
        .trim_matches(|c| c == '\'' || c == '"')
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

/// Splits a Python repr's top level on commas (brackets and quotes respected).
fn split_top(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    let mut start = 0;
    let mut prev = '\0';
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) => {
                if c == q && prev != '\\' {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            },
        }
        prev = c;
    }
    if start < s.len() {
        out.push(&s[start..]);
    }
    out
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    if v.len() >= 2
        && ((v.starts_with('\'') && v.ends_with('\'')) || (v.starts_with('"') && v.ends_with('"')))
    {
        return v[1..v.len() - 1].to_string();
    }
    v.to_string()
}

fn put_args(args: &mut Args, body: &str, sep: char, source: usize, line: u64) {
    for part in split_top(body) {
        let Some((k, v)) = part.split_once(sep) else {
            continue;
        };
        let key = canonical_key(k);
        if key.is_empty() || key.len() > 80 || key.contains(' ') {
            continue;
        }
        // A relaunch prints its arguments again: the last dump wins.
        args.insert(
            key,
            Located {
                value: unquote(v).chars().take(500).collect(),
                source,
                line,
            },
        );
    }
}

fn push_unique(list: &mut Vec<Located<String>>, value: String, source: usize, line: u64) {
    if list.len() < 256 && !list.iter().any(|l| l.value == value) {
        list.push(Located {
            value,
            source,
            line,
        });
    }
}

/// Extracts facts from records, first occurrence wins.
pub fn extract(records: &[Record], gpu_names: &[&str]) -> Extracted {
    let pat = patterns();
    let mut x = Extracted::default();
    let lower_names: Vec<String> = gpu_names.iter().map(|n| n.to_ascii_lowercase()).collect();
    let mut noted_gpus: Vec<(String, usize, u64)> = Vec::new();
    for rec in records {
        let msg = rec.message();
        let (src, line) = (rec.source, rec.line);
        launch_args(pat, &mut x, (msg, src, line));
        versions(pat, &mut x, (msg, src, line));
        hardware(
            pat,
            &mut x,
            (gpu_names, &lower_names),
            &mut noted_gpus,
            (msg, src, line),
        );
        positions(pat, &mut x, (msg, src, line));
        vocab_facts(pat, &mut x, (msg, src, line));
        if x.framework.is_none() {
            x.framework = framework_of(msg, rec);
        }
    }
    if let Some(m) = x.args.get("model_path") {
        x.model = Some(m.clone());
    }
    for (name, src, line) in noted_gpus {
        push_unique(&mut x.gpus, name, src, line);
    }
    x
}

/// llama.cpp's flag table (`kb/engines/llama.cpp.toml`, the one `preflight` reads): its
/// programs are mostly run with short aliases (`-ngl 99 -ctk q4_0 -fa on`), which name the
/// same settings as the long flags.
const LLAMA_FLAGS: &str = include_str!("../../../kb/engines/llama.cpp.toml");

/// Each llama.cpp flag name (short and long) with its setting's key and whether it takes a
/// value (`switch` flags take none).
fn llama_flags() -> &'static std::collections::HashMap<String, (String, bool)> {
    static FLAGS: OnceLock<std::collections::HashMap<String, (String, bool)>> = OnceLock::new();
    FLAGS.get_or_init(|| {
        let mut out = std::collections::HashMap::new();
        let table: toml::Table = toml::from_str(LLAMA_FLAGS).unwrap_or_default();
        let Some(flags) = table.get("flags").and_then(toml::Value::as_table) else {
            return out;
        };
        for (key, spec) in flags {
            let takes_value = spec.get("takes").and_then(toml::Value::as_str) != Some("switch");
            let names = spec.get("names").and_then(toml::Value::as_array);
            for name in names.into_iter().flatten().filter_map(toml::Value::as_str) {
                out.insert(name.to_string(), (key.clone(), takes_value));
            }
        }
        out
    })
}

/// A llama.cpp program's command line (`./build/bin/llama-server -m x.gguf -ngl 99`): its
/// flags, short or long, under the flag table's keys.
fn llama_command_args(x: &mut Extracted, (msg, src, line): (&str, usize, u64)) {
    let is_program = |t: &str| {
        let name = t.rsplit('/').next().unwrap_or(t);
        name.starts_with("llama-") && name.len() > 6 && !name.contains('.')
    };
    let mut tokens = msg.split_whitespace().skip_while(|t| !is_program(t));
    if tokens.next().is_none() {
        return;
    }
    x.framework.get_or_insert_with(|| "llama.cpp".into());
    let flags = llama_flags();
    let mut tokens = tokens.peekable();
    while let Some(t) = tokens.next() {
        let (name, inline) = match t.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (t, None),
        };
        let Some((key, takes_value)) = flags.get(name) else {
            continue;
        };
        // The next word is the flag's value unless it is another flag (a negative number is
        // a value: `-ngl -1`).
        let is_value =
            |v: &&str| !v.starts_with('-') || v[1..].starts_with(|c: char| c.is_ascii_digit());
        let value = match inline {
            Some(v) => unquote(v),
            None if *takes_value => tokens.next_if(is_value).map_or("true".into(), unquote),
            None => "true".into(),
        };
        x.args.entry(key.clone()).or_insert(Located {
            value,
            source: src,
            line,
        });
    }
}

/// The launch's arguments (a server's args dump, a command line, bare flags) and the framework a command names.
fn launch_args(pat: &Patterns, x: &mut Extracted, (msg, src, line): (&str, usize, u64)) {
    if msg.len() > 20 {
        if let Some(c) = pat.server_args.captures(msg) {
            put_args(&mut x.args, &c[1], '=', src, line);
            x.framework.get_or_insert_with(|| "sglang".into());
        } else if let Some(c) = pat.dict_args.captures(msg) {
            let body = c[1].trim_start_matches('{').trim_end_matches('}');
            put_args(&mut x.args, body, ':', src, line);
            if msg.contains("non-default args") {
                x.framework.get_or_insert_with(|| "vllm".into());
            } else {
                x.framework.get_or_insert_with(|| "sglang".into());
            }
        } else if let Some(c) = pat.namespace.captures(msg) {
            put_args(&mut x.args, &c[1], '=', src, line);
        } else if msg.contains("LLM engine") {
            if let Some(c) = pat.v1_config.captures(msg) {
                put_args(&mut x.args, &c[1], '=', src, line);
                x.framework.get_or_insert_with(|| "vllm".into());
            }
        }
    }
    if msg.contains("llama-") && msg.contains(" -") {
        llama_command_args(x, (msg, src, line));
    }
    // Command lines and bare flag lines.
    if msg.contains("--") && (pat.command.is_match(msg) || msg.trim_start().starts_with("--")) {
        for c in pat.flag.captures_iter(msg) {
            let key = canonical_key(&c[1]);
            // A bare flag before a shell line continuation (`--enforce-eager \`) is on.
            let value = c
                .get(2)
                .filter(|m| m.as_str() != "\\")
                .map_or("true".to_string(), |m| unquote(m.as_str()));
            x.args.entry(key).or_insert(Located {
                value,
                source: src,
                line,
            });
        }
        let m = msg.to_ascii_lowercase();
        for (needle, fw) in [
            ("sglang", "sglang"),
            ("vllm", "vllm"),
            ("trtllm", "tensorrt-llm"),
            ("llama-", "llama.cpp"),
            ("text-generation-launcher", "tgi"),
            ("torchrun", "pytorch"),
            ("mistralrs", "mistral.rs"),
        ] {
            if m.contains(needle) {
                x.framework.get_or_insert_with(|| fw.into());
            }
        }
    }
}

/// Versions of the stack (the CUDA runtime and driver pair, torch's CUDA build).
fn versions(pat: &Patterns, x: &mut Extracted, (msg, src, line): (&str, usize, u64)) {
    for (name, re) in &pat.versions {
        if x.versions.contains_key(*name) {
            continue;
        }
        if let Some(c) = re.captures(msg) {
            let v = c[1].trim_end_matches(['.', ',', ')']).to_string();
            x.versions.insert(
                (*name).to_string(),
                Located {
                    value: v,
                    source: src,
                    line,
                },
            );
        }
    }
    if !x.versions.contains_key("cuda") {
        if let Some(c) = pat.cuda_pair.captures(msg) {
            let rt: u32 = c[1].parse().unwrap_or(0);
            x.versions.insert(
                "cuda".into(),
                Located {
                    value: format!("{}.{}", rt / 1000, (rt % 1000) / 10),
                    source: src,
                    line,
                },
            );
            let drv: u32 = c[2].parse().unwrap_or(0);
            x.versions.entry("cuda_driver".into()).or_insert(Located {
                value: format!("{}.{}", drv / 1000, (drv % 1000) / 10),
                source: src,
                line,
            });
        } else if let Some(c) = pat.torch_cu.captures(msg) {
            let d = &c[1];
            let (maj, min) = d.split_at(d.len() - 1);
            x.versions.insert(
                "cuda".into(),
                Located {
                    value: format!("{maj}.{min}"),
                    source: src,
                    line,
                },
            );
        }
    }
}

/// The GPUs, compute capabilities, arch names, generations, memory per GPU, model types and architectures a line names.
fn hardware(
    pat: &Patterns,
    x: &mut Extracted,
    (gpu_names, lower_names): (&[&str], &[String]),
    noted_gpus: &mut Vec<(String, usize, u64)>,
    (msg, src, line): (&str, usize, u64),
) {
    let lower = msg.to_ascii_lowercase();
    if lower.contains("nvidia")
        || lower.contains("geforce")
        || lower.contains("rtx")
        || lower.contains("tesla")
        || lower.contains("instinct")
        || lower.contains("gpu")
        || lower.contains("device")
        || lower.contains(" on ")
    {
        for (i, n) in lower_names.iter().enumerate() {
            if let Some(p) = lower.find(n.as_str()) {
                let end = p + n.len();
                let ok_before = p == 0 || !lower.as_bytes()[p - 1].is_ascii_alphanumeric();
                let ok_after = end == lower.len() || !lower.as_bytes()[end].is_ascii_alphanumeric();
                if ok_before && ok_after {
                    // Keep the vendor words around the name as printed.
                    let name =
                        full_gpu_name(msg, p, end).unwrap_or_else(|| gpu_names[i].to_string());
                    // A `#` comment (a note pasted above the log) is evidence only
                    // when the program itself never names the GPU.
                    if msg.trim_start().starts_with('#') {
                        noted_gpus.push((name, src, line));
                    } else {
                        push_unique(&mut x.gpus, name, src, line);
                    }
                }
            }
        }
    }
    if let Some(c) = pat.cc.captures(msg).or_else(|| pat.cc_int.captures(msg)) {
        push_unique(
            &mut x.compute_capabilities,
            format!("{}.{}", &c[1], &c[2]),
            src,
            line,
        );
    }
    for c in pat.arch.captures_iter(msg) {
        push_unique(&mut x.arch_mentions, c[1].to_string(), src, line);
    }
    if let Some(c) = pat.generation.captures(msg) {
        let g = if &c[1] == "Ada Lovelace" {
            "Ada"
        } else {
            &c[1]
        };
        push_unique(&mut x.generations, g.to_string(), src, line);
    }
    if let Some(c) = pat.gpu_memory.captures(msg) {
        let gib = match (c.get(1), c.get(2), c.get(3)) {
            (Some(g), _, _) | (_, _, Some(g)) => g.as_str().parse::<f64>().ok(),
            (_, Some(mib), _) => mib.as_str().parse::<f64>().ok().map(|m| m / 1024.0),
            _ => None,
        };
        if let Some(g) = gib.filter(|g| *g >= 1.0) {
            push_unique(&mut x.gpu_memory_gib, format!("{g:.1}"), src, line);
        }
    }
    for c in pat.model_type.captures_iter(msg) {
        push_unique(&mut x.model_types, c[1].to_string(), src, line);
    }
    for c in pat.architecture.captures_iter(msg) {
        push_unique(&mut x.architectures, c[1].to_string(), src, line);
    }
}

/// Positions: the model's limit, the highest in use, a request's planned length, the configured context, an exceeded-length warning.
fn positions(pat: &Patterns, x: &mut Extracted, (msg, src, line): (&str, usize, u64)) {
    if let Some(c) = pat.limit.captures(msg) {
        if let Ok(v) = c[1].parse::<u64>() {
            if x.positions.limit.is_none() {
                x.positions.limit = Some(Located {
                    value: v,
                    source: src,
                    line,
                });
            }
        }
    }
    for c in pat
        .pos
        .captures_iter(msg)
        .chain(pat.final_pos.captures_iter(msg))
    {
        if let Ok(v) = c[1].parse::<u64>() {
            if x.positions.max_seen.as_ref().is_none_or(|s| v > s.value) {
                x.positions.max_seen = Some(Located {
                    value: v,
                    source: src,
                    line,
                });
            }
        }
    }
    if let (Some(p), Some(n)) = (pat.prompt_len.captures(msg), pat.new_tokens.captures(msg)) {
        if let (Ok(p), Ok(n)) = (p[1].parse::<u64>(), n[1].parse::<u64>()) {
            let total = p + n;
            if x.positions.planned.as_ref().is_none_or(|s| total > s.value) {
                x.positions.planned = Some(Located {
                    value: total,
                    source: src,
                    line,
                });
            }
        }
    }
    if x.positions.configured.is_none() {
        if let Some(v) = pat
            .configured
            .captures(msg)
            .and_then(|c| c[1].parse::<u64>().ok())
        {
            x.positions.configured = Some(Located {
                value: v,
                source: src,
                line,
            });
        }
    }
    if x.positions.exceeded_warning.is_none() && pat.exceeded.is_match(msg) {
        x.positions.exceeded_warning = Some(Located {
            value: msg.chars().take(300).collect(),
            source: src,
            line,
        });
        if x.positions.limit.is_none() {
            if let Some(c) = pat.exceeded.captures(msg) {
                let lim = c
                    .get(1)
                    .or(c.get(3))
                    .or(c.get(5))
                    .and_then(|m| m.as_str().parse().ok());
                if let Some(v) = lim {
                    x.positions.limit = Some(Located {
                        value: v,
                        source: src,
                        line,
                    });
                }
            }
        }
    }
}

/// The vocabulary size printed and the highest token id a request names.
fn vocab_facts(pat: &Patterns, x: &mut Extracted, (msg, src, line): (&str, usize, u64)) {
    if x.vocab.size.is_none() {
        if let Some(c) = pat.vocab_size.captures(msg) {
            if let Some(v) = c
                .iter()
                .skip(1)
                .flatten()
                .next()
                .and_then(|m| m.as_str().parse().ok())
            {
                x.vocab.size = Some(Located {
                    value: v,
                    source: src,
                    line,
                });
            }
        }
    }
    if let Some(c) = pat.request_ids.captures(msg) {
        let max = c[1]
            .split(|ch: char| !ch.is_ascii_digit())
            .filter_map(|n| n.parse::<u64>().ok())
            .max();
        if let Some(m) = max {
            if x.vocab.max_request_id.as_ref().is_none_or(|v| m > v.value) {
                x.vocab.max_request_id = Some(Located {
                    value: m,
                    source: src,
                    line,
                });
            }
        }
    }
}

/// A GPU name widened to the vendor words printed around the table's name
/// (`NVIDIA RTX PRO 6000 Blackwell Server Edition`).
fn full_gpu_name(msg: &str, start: usize, end: usize) -> Option<String> {
    let before = &msg[..start];
    let prefix_start = [
        "NVIDIA GeForce ",
        "NVIDIA ",
        "GeForce ",
        "Tesla ",
        "AMD Instinct ",
        "Instinct ",
        "Quadro ",
    ]
    .iter()
    .find_map(|p| before.ends_with(p).then(|| start - p.len()))
    .unwrap_or(start);
    let name = msg.get(prefix_start..end)?;
    Some(name.trim().to_string())
}

fn framework_of(msg: &str, rec: &Record) -> Option<String> {
    let m = msg;
    if m.contains("sglang")
        || m.contains("SGLang")
        || m.contains("Scheduler hit an exception")
        || m.contains("fired up and ready")
    {
        return Some("sglang".into());
    }
    if m.contains("vllm")
        || m.contains("vLLM")
        || rec
            .prefix
            .process
            .as_deref()
            .is_some_and(|p| p.starts_with("EngineCore") || p.starts_with("VllmWorker"))
    {
        return Some("vllm".into());
    }
    if m.contains("TensorRT-LLM") || m.contains("tensorrt_llm") || m.contains("[TRT-LLM]") {
        return Some("tensorrt-llm".into());
    }
    if m.contains("llama_") || m.contains("ggml_") || m.contains("GGML_") || m.contains("llm_load")
    {
        return Some("llama.cpp".into());
    }
    if m.contains("text_generation_launcher") || m.contains("text_generation_server") {
        return Some("tgi".into());
    }
    if m.contains("ollama") {
        return Some("ollama".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Scanner;

    #[test]
    fn a_llama_cpp_command_line_names_its_settings_by_short_or_long_flag() {
        let mut x = Extracted::default();
        llama_command_args(
            &mut x,
            (
                "$ ./build/bin/llama-server -m /models/m.gguf -c 16384 -ngl -1 -fa on -ctk q4_0 --cache-type-v=q8_0 --mlock --port 8123",
                0,
                1,
            ),
        );
        let arg = |k: &str| x.args.get(k).map(|a| a.value.as_str());
        assert_eq!(arg("model_path"), Some("/models/m.gguf"));
        assert_eq!(arg("context_length"), Some("16384"));
        assert_eq!(arg("n_gpu_layers"), Some("-1"));
        assert_eq!(arg("flash_attn"), Some("on"));
        assert_eq!(arg("cache_type_k"), Some("q4_0"));
        assert_eq!(arg("cache_type_v"), Some("q8_0"));
        assert_eq!(arg("mlock"), Some("true"));
        assert_eq!(arg("port"), Some("8123"));
        assert_eq!(x.framework.as_deref(), Some("llama.cpp"));
        // Not a llama.cpp program: its short flags are left alone.
        let mut y = Extracted::default();
        llama_command_args(&mut y, ("$ python3 -c 'print(1)' -m x", 0, 1));
        assert!(y.args.is_empty() && y.framework.is_none());
    }

    fn ex(log: &str) -> Extracted {
        let out =
            Scanner::new(crate::Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
        extract(&out.records, &["RTX PRO 6000", "H200", "RTX 2080"])
    }

    #[test]
    fn a_capability_printed_as_one_number_is_read() {
        for (line, want) in [
            ("ERROR 07-02 03:13:11 [engine.py:458] ('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')\n", "7.5"),
            ("ValueError: The quantization method fp8 is not supported for the current GPU. Minimum capability: 89. Current capability: 120.\n", "12.0"),
        ] {
            let x = ex(line);
            let cc: Vec<&str> = x.compute_capabilities.iter().map(|c| c.value.as_str()).collect();
            assert_eq!(cc, [want], "{line}");
        }
    }

    #[test]
    fn sglang_server_args_both_forms() {
        let x = ex("[2026-02-23 10:00:00] server_args=ServerArgs(model_path='zai-org/GLM-5', tp_size=8, mem_fraction_static=0.95, nsa_decode_backend='flashmla_kv', json_model_override_args='{\"a\": 1}')\n");
        assert_eq!(x.args["tp_size"].value, "8");
        assert_eq!(x.args["nsa_decode_backend"].value, "flashmla_kv");
        assert_eq!(x.args["mem_fraction_static"].value, "0.95");
        assert_eq!(x.framework.as_deref(), Some("sglang"));
        let x = ex("[2026-05-01 10:00:00] server_args={'model_path': 'x', 'tp_size': 4}\n");
        assert_eq!(x.args["tp_size"].value, "4");
    }

    #[test]
    fn flags_of_any_program_run_from_a_prompt_a_quote_or_a_path() {
        for line in [
            "$ ./mistralrs_server --num-device-layers 13 gguf -m /m\n",
            "`RUST_BACKTRACE=full ./mistralrs_server --num-device-layers 13 gguf -m /m`\n",
            "run it as ./mistralrs_server --num-device-layers 13\n",
        ] {
            let x = ex(line);
            assert_eq!(x.args["num_device_layers"].value, "13", "{line}");
        }
        // A bare flag at the end of a continued line is on.
        let x = ex("vllm serve m \\\n  --enforce-eager \\\n  --port 8000\n");
        assert_eq!(x.args["enforce_eager"].value, "true");
        // Flags in prose are not a command line.
        let x = ex("we tried with and without --num-device-layers 13 here\n");
        assert!(!x.args.contains_key("num_device_layers"));
    }

    #[test]
    fn vllm_non_default_args_and_command_flags() {
        let x = ex("(APIServer pid=1) INFO 06-12 08:49:30 [utils.py:1] non-default args: {'model': 'm', 'tensor_parallel_size': 8, 'gpu_memory_utilization': 0.95}\n");
        assert_eq!(x.args["tp_size"].value, "8");
        assert_eq!(x.args["model_path"].value, "m");
        let x = ex("$ python -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-piecewise-cuda-graph --tp 4\n");
        assert_eq!(x.args["tp_size"].value, "4");
        assert_eq!(x.args["enable_piecewise_cuda_graph"].value, "true");
        let x = ex("--gpu-memory-utilization 0.95 --port 18081 --max-model-len 116160\n");
        assert_eq!(x.args["context_length"].value, "116160");
    }

    #[test]
    fn the_programs_own_gpu_line_is_the_evidence_not_a_comment() {
        let x = ex("# run on 8x NVIDIA H200 and one RTX 2080 box\n[2026-02-24 09:12:00] GPU 0-7: NVIDIA H200, driver 580.95.05\n");
        assert_eq!(x.gpus[0].value, "NVIDIA H200");
        assert_eq!(x.gpus[0].line, 2);
        // A GPU only a comment names is still evidence, after the program's own.
        assert_eq!(x.gpus[1].value, "RTX 2080");
        assert_eq!(x.gpus[1].line, 1);
    }

    #[test]
    fn versions_gpus_and_positions() {
        let x = ex("2026-11-29 22:01:32,847 INFO engine: torch 2.11.0+cu130 (cuda 13.0) on NVIDIA H200\nTransformers version 5.2.0 is used for model type glm_moe_dsa. If you\nINFO engine: loading model gpt2-tiny (random init): n_positions=64 n_embd=128\nINFO engine: request req-0001: prompt_len=48 max_new_tokens=40\nINFO engine: decode step 16 pos=63 kv_len=64\n");
        assert_eq!(x.versions["torch"].value, "2.11.0+cu130");
        assert_eq!(x.versions["transformers"].value, "5.2.0");
        assert_eq!(x.versions["cuda"].value, "13.0");
        assert_eq!(x.gpus[0].value, "NVIDIA H200");
        assert_eq!(x.model_types[0].value, "glm_moe_dsa");
        assert_eq!(x.positions.limit.as_ref().unwrap().value, 64);
        assert_eq!(x.positions.planned.as_ref().unwrap().value, 88);
        assert!(x.positions.overflow());
        // A request line that names its prompt as `prompt_tokens=`.
        let x = ex("INFO engine: Loading model gpt2-small-ft: model_type=gpt2 n_positions=1024 n_layer=4\nINFO engine: request 0: prompt_tokens=1000 max_new_tokens=64\n");
        assert_eq!(x.positions.planned.as_ref().unwrap().value, 1064);
        assert!(x.positions.overflow());
    }
}
