//! The typed launch command: the engine it starts, the program words, the
//! environment it sets, its flags under canonical keys, the model, and the
//! positional words; plus the helpers that read parallel sizes, context
//! length, memory fraction and address through the engine's roles. Parsing
//! lives in `parse.rs`; this module only holds and reads the result.

use crate::spec::{EngineSpec, Engines};
use serde::Serialize;
use std::collections::BTreeMap;

/// A flag's value as typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum FlagValue {
    /// A switch: `--enforce-eager` (true) or `--no-enable-prefix-caching` (false).
    Switch(bool),
    /// One value.
    One(String),
    /// Several values (`--cuda-graph-bs 1 2 4`).
    Many(Vec<String>),
}

impl FlagValue {
    /// The value as rules match it: `true`/`false`, the value, or the values joined by spaces.
    pub fn as_arg(&self) -> String {
        match self {
            FlagValue::Switch(b) => b.to_string(),
            FlagValue::One(v) => v.clone(),
            FlagValue::Many(v) => v.join(" "),
        }
    }
}

/// One flag of a command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flag {
    /// How the user spelled it (`--tp`, `-tp`, `--tensor-parallel-size`).
    pub spelled: String,
    /// Its value.
    pub value: FlagValue,
    /// The engine's flag table knows it.
    pub known: bool,
    /// Index of the flag's word in the engine's argument words.
    pub position: usize,
}

/// Something about the command worth telling the user, found while parsing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum ParseNote {
    /// The engine's flag table, complete, has no such flag: the engine would reject it.
    UnknownFlag {
        /// As typed.
        spelled: String,
    },
    /// The flag is not in rosetta's partial table for this engine.
    UnlistedFlag {
        /// As typed.
        spelled: String,
    },
    /// A value outside the flag's choices.
    BadChoice {
        /// Canonical key.
        key: String,
        /// The value given.
        value: String,
        /// The values the engine accepts.
        choices: Vec<String>,
    },
    /// A value that is not of the flag's type.
    BadType {
        /// Canonical key.
        key: String,
        /// The value given.
        value: String,
        /// `int` or `float`.
        expected: String,
    },
    /// A flag that takes a value came last, with none.
    MissingValue {
        /// As typed.
        spelled: String,
    },
    /// The same setting given twice; the last one wins, as argparse does.
    Repeated {
        /// Canonical key.
        key: String,
    },
    /// The engine warns that the flag is going away.
    Deprecated {
        /// As typed.
        spelled: String,
    },
    /// Shell words after the launch that rosetta does not read (`| tee log`, `&`).
    IgnoredShell {
        /// The words.
        words: String,
    },
}

/// A container the command runs the engine in (`docker run ... IMAGE CMD`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Container {
    /// The runtime (`docker`, `podman`).
    pub runtime: String,
    /// The image.
    pub image: String,
    /// `--gpus` as given.
    pub gpus: Option<String>,
    /// `--shm-size` as given.
    pub shm_size: Option<String>,
    /// `--ipc` as given.
    pub ipc: Option<String>,
    /// Volume mounts, `host:container[:mode]`.
    pub volumes: Vec<String>,
}

/// A launch command as the user typed it, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LaunchCommand {
    /// The engine's id (`sglang`, `vllm`, `tensorrt-llm`, `llama.cpp`, `tgi`); `None`
    /// when no known launcher starts the command.
    pub engine: Option<String>,
    /// The words that start the engine (`python3 -m sglang.launch_server`, `vllm serve`).
    pub program: Vec<String>,
    /// Environment set for the launch: leading `VAR=value`, `env VAR=value`,
    /// `export VAR=value;`, a container's `-e VAR=value`. Later assignments win.
    pub env: BTreeMap<String, String>,
    /// Canonical key -> flag.
    pub flags: BTreeMap<String, Flag>,
    /// The model path or name (the model flag, or the positional model).
    pub model: Option<String>,
    /// Positional words the engine did not take as the model.
    pub positional: Vec<String>,
    /// The container, when the engine runs in one.
    pub container: Option<Container>,
    /// What parsing noticed.
    pub notes: Vec<ParseNote>,
}

impl LaunchCommand {
    /// The engine's knowledge, when the engine is known.
    pub fn spec<'e>(&self, engines: &'e Engines) -> Option<&'e EngineSpec> {
        self.engine.as_deref().and_then(|id| engines.get(id))
    }

    /// The canonical flag map as rules match it (`tp_size` -> `8`).
    /// The model path is included under `model_path`.
    pub fn args(&self) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = self
            .flags
            .iter()
            .map(|(k, f)| (k.clone(), f.value.as_arg()))
            .collect();
        if let Some(m) = &self.model {
            out.insert("model_path".into(), m.clone());
        }
        out
    }

    /// The canonical flag map with the engine's defaults filled in where a flag is absent.
    pub fn args_with_defaults(&self, engines: &Engines) -> BTreeMap<String, String> {
        let mut out = self.args();
        if let Some(spec) = self.spec(engines) {
            for (k, v) in &spec.defaults {
                out.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        out
    }

    /// The value of a canonical key as typed.
    pub fn get(&self, key: &str) -> Option<String> {
        if key == "model_path" {
            if let Some(m) = &self.model {
                return Some(m.clone());
            }
        }
        self.flags.get(key).map(|f| f.value.as_arg())
    }

    /// The value typed, else the engine's default.
    pub fn get_or_default(&self, key: &str, engines: &Engines) -> Option<String> {
        self.get(key).or_else(|| {
            self.spec(engines)
                .and_then(|s| s.defaults.get(key).cloned())
        })
    }

    fn number(&self, key: &str) -> Option<u64> {
        self.get(key)?.trim().parse().ok()
    }

    /// Tensor-parallel size given (`tp_size`).
    pub fn tp_size(&self) -> Option<u64> {
        self.number("tp_size")
    }

    /// Pipeline-parallel size given.
    pub fn pp_size(&self) -> Option<u64> {
        self.number("pp_size")
    }

    /// Data-parallel size given.
    pub fn dp_size(&self) -> Option<u64> {
        self.number("dp_size")
    }

    /// Expert-parallel size given.
    pub fn ep_size(&self) -> Option<u64> {
        self.number("ep_size")
    }

    /// GPUs one replica spans: tp x pp (1 each when absent).
    pub fn gpus_per_replica(&self) -> u64 {
        self.tp_size().unwrap_or(1).max(1) * self.pp_size().unwrap_or(1).max(1)
    }

    fn role(
        &self,
        engines: &Engines,
        pick: impl Fn(&crate::spec::Roles) -> &Option<String>,
    ) -> Option<String> {
        let spec = self.spec(engines)?;
        let key = pick(&spec.roles).as_ref()?;
        self.get(key)
    }

    /// The context length given, through the engine's role (`--context-length`, `--max-model-len`, `-c`).
    pub fn context_length(&self, engines: &Engines) -> Option<u64> {
        self.role(engines, |r| &r.context_length)
            .or_else(|| self.get("context_length"))?
            .trim()
            .parse()
            .ok()
    }

    /// The memory fraction given (`--mem-fraction-static`, `--gpu-memory-utilization`, ...).
    pub fn memory_fraction(&self, engines: &Engines) -> Option<f64> {
        self.role(engines, |r| &r.memory_fraction)?
            .trim()
            .parse()
            .ok()
    }

    /// The memory fraction given, else the engine's literal default.
    pub fn memory_fraction_or_default(&self, engines: &Engines) -> Option<f64> {
        let spec = self.spec(engines)?;
        let key = spec.roles.memory_fraction.as_ref()?;
        self.get_or_default(key, engines)?.trim().parse().ok()
    }

    /// The port given, else the engine's default.
    pub fn port(&self, engines: &Engines) -> Option<u16> {
        let spec = self.spec(engines)?;
        let key = spec.roles.port.as_ref()?;
        self.get_or_default(key, engines)?.trim().parse().ok()
    }

    /// The host given, else the engine's default.
    pub fn host(&self, engines: &Engines) -> Option<String> {
        let spec = self.spec(engines)?;
        let key = spec.roles.host.as_ref()?;
        self.get_or_default(key, engines)
    }

    /// The KV cache dtype given, else the engine's default.
    pub fn kv_cache_dtype(&self, engines: &Engines) -> Option<String> {
        let spec = self.spec(engines)?;
        let key = spec.roles.kv_cache_dtype.as_ref()?;
        self.get_or_default(key, engines)
    }

    /// The quantization method forced on the command line.
    pub fn quantization(&self, engines: &Engines) -> Option<String> {
        self.role(engines, |r| &r.quantization)
    }

    /// Flags the engine would reject, or that rosetta's partial table lacks.
    pub fn unknown_flags(&self) -> Vec<&str> {
        self.notes
            .iter()
            .filter_map(|n| match n {
                ParseNote::UnknownFlag { spelled } | ParseNote::UnlistedFlag { spelled } => {
                    Some(spelled.as_str())
                }
                _ => None,
            })
            .collect()
    }
}
