//! What rosetta knows about each serving engine, read from `kb/engines/`:
//! how a command line names it (program, subcommand, `python -m` module,
//! container image), every flag it accepts (names, what each takes, type,
//! choices, literal default), which canonical keys play which role (model,
//! port, memory fraction, ...), and the defaults the engine applies. This
//! module loads and validates that data; it holds no engine facts itself.

use crate::error::Error;
use rosetta_schema::canonical_arg_key;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

include!(concat!(env!("OUT_DIR"), "/embedded_engines.rs"));

/// What a flag takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Takes {
    /// Exactly one value (`--tp 8`, `--tp=8`).
    Value,
    /// Nothing: its presence sets it (`--enforce-eager`).
    Switch,
    /// One or more values (`--cuda-graph-bs 1 2 4`).
    List,
    /// A value when one follows, else nothing (`-fa`, `-fa on`).
    Optional,
}

/// One flag of an engine.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlagSpec {
    /// Every spelling, long and short (`--tensor-parallel-size`, `--tp-size`, `-tp`).
    pub names: Vec<String>,
    /// What it takes.
    pub takes: Takes,
    /// `int`, `float` or `str`, when the engine declares one.
    #[serde(default, rename = "type")]
    pub value_type: Option<String>,
    /// The values the engine accepts, when it restricts them.
    #[serde(default)]
    pub choices: Vec<toml::Value>,
    /// The engine's literal default.
    #[serde(default)]
    pub default: Option<toml::Value>,
    /// The engine still accepts it but warns that it is going away.
    #[serde(default)]
    pub deprecated: bool,
}

impl FlagSpec {
    /// The choices as strings.
    pub fn choice_strings(&self) -> Vec<String> {
        self.choices.iter().map(value_string).collect()
    }
}

/// One way a command line starts an engine.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launcher {
    /// The program's file name (`vllm`, `trtllm-serve`), when it is a program.
    #[serde(default)]
    pub program: Option<String>,
    /// The subcommand that follows the program (`serve`).
    #[serde(default)]
    pub subcommand: Option<String>,
    /// The subcommand may be left out.
    #[serde(default)]
    pub subcommand_optional: bool,
    /// The Python module run with `python -m`.
    #[serde(default)]
    pub module: Option<String>,
    /// The first positional argument is the model.
    #[serde(default)]
    pub model_positional: bool,
}

/// Container images that carry an engine.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Images {
    /// Image names start with one of these (registry and repository, no tag).
    #[serde(default)]
    pub prefixes: Vec<String>,
    /// The image's entrypoint is the server: what follows the image is its flags.
    #[serde(default)]
    pub entrypoint_is_engine: bool,
}

/// Which canonical keys play which role for the helpers of `LaunchCommand`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// The model path or name.
    #[serde(default)]
    pub model: Option<String>,
    /// The address the server binds.
    #[serde(default)]
    pub host: Option<String>,
    /// The port it listens on.
    #[serde(default)]
    pub port: Option<String>,
    /// The context length.
    #[serde(default)]
    pub context_length: Option<String>,
    /// The GPU memory fraction the engine may take.
    #[serde(default)]
    pub memory_fraction: Option<String>,
    /// The KV cache's dtype.
    #[serde(default)]
    pub kv_cache_dtype: Option<String>,
    /// The quantization method forced on the command line.
    #[serde(default)]
    pub quantization: Option<String>,
}

/// What an engine's memory fraction covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FractionCovers {
    /// Weights and the KV pool; activations and CUDA graphs live in the rest (sglang).
    WeightsAndKv,
    /// Everything the engine allocates (vLLM, TGI).
    Everything,
    /// The share of the memory left after the weights that the KV cache takes (TensorRT-LLM).
    KvOfFree,
}

/// One row of a GPU-memory-dependent default.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuMemoryRow {
    /// The row holds when the GPU has less than this many MiB.
    pub below_mib: f64,
    /// The chunked prefill size chosen.
    pub chunked_prefill_size: u64,
    /// The largest CUDA-graph batch size chosen below TP 4.
    pub cuda_graph_max_bs: u64,
    /// The same at TP 4 and above.
    pub cuda_graph_max_bs_tp4: u64,
}

/// An engine's own default memory fraction as a function of the GPU's memory
/// and the parallel sizes (sglang's `mem_fraction_static`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultFraction {
    /// Fixed reserve.
    pub reserved_base_mib: f64,
    /// Reserve per token of a prefill chunk.
    pub per_prefill_token_mib: f64,
    /// The chunk counted is at least this many tokens.
    pub min_prefill_tokens: u64,
    /// Reserve per CUDA-graph batch size.
    pub per_graph_bs_mib: f64,
    /// Reserve per tp x pp.
    pub per_tp_pp_mib: f64,
    /// The reserve is at least this ...
    pub floor_mib: f64,
    /// ... on GPUs above this size.
    pub floor_above_gpu_mib: f64,
    /// The fraction when the GPU's memory is not known.
    pub without_gpu: f64,
    /// Chunk and graph sizes by GPU memory, smallest bound first.
    pub by_gpu_memory: Vec<GpuMemoryRow>,
    /// A fraction that leaves less than this share of the default's reserve is a risk.
    pub risk_below: f64,
}

/// The reserve an engine keeps outside its memory fraction, and the fraction that follows.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct DefaultFractionValue {
    /// The fraction the engine would choose.
    pub fraction: f64,
    /// The reserve, MiB, for activations and CUDA graphs.
    pub reserved_mib: f64,
    /// The chunked prefill size assumed.
    pub chunked_prefill_size: u64,
    /// The largest CUDA-graph batch size assumed.
    pub cuda_graph_max_bs: u64,
}

impl DefaultFraction {
    /// The default for a GPU of `gpu_mib` MiB at the given parallel sizes.
    /// `chunked` and `graph_bs` override the table when the command sets them.
    pub fn evaluate(
        &self,
        gpu_mib: f64,
        tp: u64,
        pp: u64,
        chunked: Option<u64>,
        graph_bs: Option<u64>,
    ) -> Option<DefaultFractionValue> {
        if !(gpu_mib.is_finite() && gpu_mib > 0.0) {
            return None;
        }
        let row = self
            .by_gpu_memory
            .iter()
            .find(|r| gpu_mib < r.below_mib)
            .or(self.by_gpu_memory.last())?;
        let chunk = chunked.unwrap_or(row.chunked_prefill_size);
        let bs = graph_bs.unwrap_or(if tp >= 4 {
            row.cuda_graph_max_bs_tp4
        } else {
            row.cuda_graph_max_bs
        });
        let mut reserved = self.reserved_base_mib
            + chunk.max(self.min_prefill_tokens) as f64 * self.per_prefill_token_mib
            + bs as f64 * self.per_graph_bs_mib
            + (tp.max(1) * pp.max(1)) as f64 * self.per_tp_pp_mib;
        if gpu_mib > self.floor_above_gpu_mib {
            reserved = reserved.max(self.floor_mib);
        }
        let fraction = ((gpu_mib - reserved) / gpu_mib * 1000.0).round() / 1000.0;
        Some(DefaultFractionValue {
            fraction,
            reserved_mib: reserved,
            chunked_prefill_size: chunk,
            cuda_graph_max_bs: bs,
        })
    }
}

/// How an engine spends GPU memory.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    /// What the memory fraction covers.
    pub fraction_covers: FractionCovers,
    /// The engine's own default fraction, when it computes one.
    #[serde(default)]
    pub default_fraction: Option<DefaultFraction>,
}

/// A kernel library behind some values of a backend flag (or environment
/// variable), and the archs it ships code for.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Backend {
    /// Canonical keys of the flags that select it.
    #[serde(default)]
    pub flags: Vec<String>,
    /// Environment variables that select it.
    #[serde(default)]
    pub env: Vec<String>,
    /// The values that select it.
    pub values: Vec<String>,
    /// The library's name for people.
    pub library: String,
    /// Substrings of the shared objects' paths that hold it, as `rosetta env` lists them.
    #[serde(default)]
    pub files: Vec<String>,
    /// SASS targets it ships (`sm_90a`).
    #[serde(default)]
    pub sass: Vec<String>,
    /// PTX targets it ships.
    #[serde(default)]
    pub ptx: Vec<String>,
    /// Compiled for the GPU at run time (Triton, TileLang, FlashInfer's JIT): runs on any arch at least this one.
    #[serde(default)]
    pub jit_from: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct EngineFile {
    engine: String,
    about: String,
    #[serde(default)]
    flags_file: Option<String>,
    #[serde(default)]
    complete: bool,
    #[serde(default)]
    allow_abbrev: bool,
    #[serde(default)]
    negatable_switches: bool,
    #[serde(default)]
    references: Vec<String>,
    #[serde(default)]
    launcher: Vec<Launcher>,
    #[serde(default)]
    images: Images,
    #[serde(default)]
    roles: Roles,
    #[serde(default)]
    memory: Option<Memory>,
    #[serde(default)]
    defaults: BTreeMap<String, toml::Value>,
    #[serde(default)]
    flags: BTreeMap<String, FlagSpec>,
    #[serde(default)]
    backend: Vec<Backend>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlagsFile {
    engine: String,
    version: String,
    flags: BTreeMap<String, FlagSpec>,
}

/// Everything rosetta knows about one engine.
#[derive(Debug, Clone)]
pub struct EngineSpec {
    /// The engine's id, the word rules use in `framework` (`sglang`, `vllm`, ...).
    pub id: String,
    /// One line saying what it is.
    pub about: String,
    /// The version the flag table was read from, when generated.
    pub flags_version: Option<String>,
    /// The flag table lists every flag the engine accepts.
    pub complete: bool,
    /// A unique prefix of a long flag is accepted (argparse).
    pub allow_abbrev: bool,
    /// Switches also come as `--no-NAME`.
    pub negatable_switches: bool,
    /// Where the facts come from.
    pub references: Vec<String>,
    /// How command lines start it.
    pub launchers: Vec<Launcher>,
    /// Container images that carry it.
    pub images: Images,
    /// Which keys play which role.
    pub roles: Roles,
    /// How it spends GPU memory.
    pub memory: Option<Memory>,
    /// Canonical key -> flag.
    pub flags: BTreeMap<String, FlagSpec>,
    /// Canonical key -> the engine's default when the flag is absent (flag
    /// table defaults and the engine file's own `[defaults]`).
    pub defaults: BTreeMap<String, String>,
    /// Kernel libraries behind backend choices.
    pub backends: Vec<Backend>,
    /// Spelling (`--tp-size`) -> canonical key.
    by_name: BTreeMap<String, String>,
}

/// A TOML value as launch arguments spell it (`true`, `0.9`, `a b`).
pub(crate) fn value_string(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Array(a) => a.iter().map(value_string).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

impl EngineSpec {
    /// The canonical key of a flag as spelled, exactly (`--tp-size` -> `tp_size`).
    pub fn key_of(&self, spelled: &str) -> Option<&str> {
        self.by_name.get(spelled).map(String::as_str)
    }

    /// The canonical key a unique prefix of a long flag names, when the engine allows abbreviations.
    pub fn key_of_prefix(&self, spelled: &str) -> Option<&str> {
        if !self.allow_abbrev || !spelled.starts_with("--") || spelled.len() < 3 {
            return None;
        }
        let mut found: Option<&str> = None;
        for (name, key) in self.by_name.range(spelled.to_string()..) {
            if !name.starts_with(spelled) {
                break;
            }
            match found {
                Some(k) if k != key => return None,
                _ => found = Some(key),
            }
        }
        found
    }

    /// The flag for a canonical key.
    pub fn flag(&self, key: &str) -> Option<&FlagSpec> {
        self.flags.get(key)
    }

    /// The launch spelling of a canonical key (its first long name), for fixes and messages.
    pub fn spelling(&self, key: &str) -> String {
        self.flags
            .get(key)
            .and_then(|f| {
                f.names
                    .iter()
                    .find(|n| n.starts_with("--"))
                    .or(f.names.first())
            })
            .cloned()
            .unwrap_or_else(|| format!("--{}", key.replace('_', "-")))
    }

    /// The engine from its file and its generated flag table (checked against each other):
    /// the flags joined, their spellings and defaults indexed, backends and roles checked.
    fn from_files(file: EngineFile, table: Option<FlagsFile>, name: &str) -> Result<Self, Error> {
        let err = |message: String| Error::EngineFile {
            file: name.to_string(),
            message,
        };
        check_launchers(&file.launcher).map_err(err)?;
        let flags_version = table.as_ref().map(|t| t.version.clone());
        let flags = join_flags(table, file.flags, &file.engine).map_err(err)?;
        let (by_name, defaults) = index_flags(&flags, &file.defaults).map_err(err)?;
        check_backends(&file.backend, &flags).map_err(err)?;
        check_roles(&file.roles, &flags).map_err(err)?;
        Ok(EngineSpec {
            id: file.engine,
            about: file.about,
            flags_version,
            complete: file.complete,
            allow_abbrev: file.allow_abbrev,
            negatable_switches: file.negatable_switches,
            references: file.references,
            launchers: file.launcher,
            images: file.images,
            roles: file.roles,
            memory: file.memory,
            flags,
            defaults,
            backends: file.backend,
            by_name,
        })
    }
}

/// Checks that there is a launcher and that each names exactly one of a program or a module.
fn check_launchers(launchers: &[Launcher]) -> Result<(), String> {
    if launchers.is_empty() {
        return Err("no [[launcher]]: nothing would start this engine".into());
    }
    for l in launchers {
        if l.program.is_none() == l.module.is_none() {
            return Err("a [[launcher]] names exactly one of `program` or `module`".into());
        }
    }
    Ok(())
}

/// The generated flag table (which must be the engine's) with the engine file's own flags
/// added or replacing, by canonical key.
fn join_flags(
    table: Option<FlagsFile>,
    own: BTreeMap<String, FlagSpec>,
    engine: &str,
) -> Result<BTreeMap<String, FlagSpec>, String> {
    let mut flags: BTreeMap<String, FlagSpec> = BTreeMap::new();
    if let Some(t) = table {
        if t.engine != engine {
            return Err(format!(
                "flags file is for `{}`, not `{}`",
                t.engine, engine
            ));
        }
        for (k, f) in t.flags {
            flags.insert(canonical_arg_key(&k), f);
        }
    }
    // The engine file's own flags add to (or replace) the generated table.
    for (k, f) in own {
        flags.insert(canonical_arg_key(&k), f);
    }
    Ok(flags)
}

/// A map of strings: spelling to key, or key to default.
type StringMap = BTreeMap<String, String>;

/// Each spelling's canonical key (every flag has names, each dashed), and each key's
/// default: the flag's own, then the engine file's `[defaults]`.
fn index_flags(
    flags: &BTreeMap<String, FlagSpec>,
    file_defaults: &BTreeMap<String, toml::Value>,
) -> Result<(StringMap, StringMap), String> {
    let mut by_name = BTreeMap::new();
    let mut defaults = BTreeMap::new();
    for (key, f) in flags {
        if f.names.is_empty() {
            return Err(format!("flag `{key}` has no names"));
        }
        for n in &f.names {
            if !n.starts_with('-') {
                return Err(format!("flag `{key}`: name `{n}` does not start with -"));
            }
            by_name.insert(n.clone(), key.clone());
        }
        if let Some(d) = &f.default {
            defaults.insert(key.clone(), value_string(d));
        }
    }
    for (k, v) in file_defaults {
        defaults.insert(canonical_arg_key(k), value_string(v));
    }
    Ok((by_name, defaults))
}

/// Checks that each backend names a flag or an env var, and only flags that exist.
fn check_backends(backends: &[Backend], flags: &BTreeMap<String, FlagSpec>) -> Result<(), String> {
    for b in backends {
        for k in &b.flags {
            if !flags.contains_key(k.as_str()) {
                return Err(format!(
                    "[[backend]] {} names `{k}`, which is not a flag",
                    b.library
                ));
            }
        }
        if b.flags.is_empty() && b.env.is_empty() {
            return Err(format!("[[backend]] {} names no flag or env", b.library));
        }
    }
    Ok(())
}

/// Checks that every key `[roles]` names is a flag.
fn check_roles(roles: &Roles, flags: &BTreeMap<String, FlagSpec>) -> Result<(), String> {
    for key in [
        &roles.model,
        &roles.host,
        &roles.port,
        &roles.context_length,
        &roles.memory_fraction,
        &roles.kv_cache_dtype,
        &roles.quantization,
    ]
    .into_iter()
    .flatten()
    {
        if !flags.contains_key(key.as_str()) {
            return Err(format!("[roles] names `{key}`, which is not a flag"));
        }
    }
    Ok(())
}

/// The engines rosetta knows.
#[derive(Debug, Clone)]
pub struct Engines {
    specs: Vec<EngineSpec>,
}

fn parse_toml<T: serde::de::DeserializeOwned>(name: &str, text: &str) -> Result<T, Error> {
    toml::from_str(text).map_err(|e| Error::EngineFile {
        file: name.to_string(),
        message: e.to_string().trim().replace('\n', " "),
    })
}

impl Engines {
    /// Loads engine files given as (file name, text). A file whose name ends
    /// in `-flags.toml` is a generated flag table, joined by its engine file's `flags_file`.
    pub fn from_files(files: &[(&str, &str)]) -> Result<Self, Error> {
        let mut specs = Vec::new();
        for (name, text) in files {
            if name.ends_with("-flags.toml") {
                continue;
            }
            let file: EngineFile = parse_toml(name, text)?;
            let table = match &file.flags_file {
                Some(f) => {
                    let Some((_, t)) = files.iter().find(|(n, _)| n == f) else {
                        return Err(Error::EngineFile {
                            file: name.to_string(),
                            message: format!("flags_file `{f}` is not beside it"),
                        });
                    };
                    Some(parse_toml::<FlagsFile>(f, t)?)
                }
                None => None,
            };
            specs.push(EngineSpec::from_files(file, table, name)?);
        }
        Ok(Engines { specs })
    }

    /// The engines embedded from `kb/engines/` at build time.
    pub fn embedded() -> &'static Engines {
        static E: OnceLock<Engines> = OnceLock::new();
        E.get_or_init(|| {
            // The embedded files are checked by a unit test, so this cannot fail in a
            // released binary; should it, the engines are simply unknown.
            Engines::from_files(EMBEDDED).unwrap_or(Engines { specs: Vec::new() })
        })
    }

    /// Every engine.
    pub fn all(&self) -> &[EngineSpec] {
        &self.specs
    }

    /// The engine with this id.
    pub fn get(&self, id: &str) -> Option<&EngineSpec> {
        self.specs.iter().find(|s| s.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_engine_files_load() {
        let e = Engines::from_files(EMBEDDED).unwrap();
        let ids: Vec<_> = e.all().iter().map(|s| s.id.as_str()).collect();
        for id in ["sglang", "vllm", "tensorrt-llm", "llama.cpp", "tgi"] {
            assert!(ids.contains(&id), "{id} missing from {ids:?}");
        }
    }

    #[test]
    fn aliases_meet_on_canonical_keys() {
        let e = Engines::embedded();
        let sg = e.get("sglang").unwrap();
        assert_eq!(sg.key_of("--tp-size"), Some("tp_size"));
        assert_eq!(sg.key_of("--tensor-parallel-size"), Some("tp_size"));
        assert_eq!(sg.key_of_prefix("--tp"), Some("tp_size"));
        assert_eq!(sg.key_of("--model"), Some("model_path"));
        let v = e.get("vllm").unwrap();
        assert_eq!(v.key_of("-tp"), Some("tp_size"));
        assert_eq!(v.key_of("--max-model-len"), Some("context_length"));
        assert_eq!(v.defaults.get("gpu_memory_utilization").unwrap(), "0.9");
    }

    #[test]
    fn sglang_default_fraction_follows_its_heuristic() {
        let sg = Engines::embedded().get("sglang").unwrap();
        let d = sg
            .memory
            .as_ref()
            .unwrap()
            .default_fraction
            .as_ref()
            .unwrap();
        // 96 GB card at TP 8: chunk 8192, graphs up to bs 512:
        // 512 + 8192*1.5 + 512*2 + 8*128 = 14848 MiB, above the 10 GiB floor.
        let v = d.evaluate(98304.0, 8, 1, None, None).unwrap();
        assert_eq!(v.reserved_mib, 14848.0);
        assert_eq!(v.fraction, 0.849);
        // An 80 GB card at TP 1: 512 + 12288 + 512 + 128 = 13440.
        let v = d.evaluate(81920.0, 1, 1, None, None).unwrap();
        assert_eq!(v.cuda_graph_max_bs, 256);
        assert_eq!(v.reserved_mib, 13440.0);
        // A 24 GB card: no floor, small chunks.
        let v = d.evaluate(24576.0, 1, 1, None, None).unwrap();
        assert_eq!(v.reserved_mib, 512.0 + 3072.0 + 48.0 + 128.0);
        assert!(d.evaluate(0.0, 1, 1, None, None).is_none());
    }

    #[test]
    fn a_broken_engine_file_names_itself() {
        let err = Engines::from_files(&[("x.toml", "engine = 3")]).unwrap_err();
        assert!(err.to_string().contains("x.toml"), "{err}");
        let err = Engines::from_files(&[(
            "y.toml",
            "engine = \"y\"\nabout = \"\"\n[roles]\nport = \"port\"\n[[launcher]]\nprogram = \"y\"\n",
        )])
        .unwrap_err();
        assert!(err.to_string().contains("not a flag"), "{err}");
    }
}
