//! Data tables beside the rules, embedded at build time: the first
//! transformers release of every model type, and GPU name -> compute
//! capability. Rules and probes ask these; nothing here reads the log.

use pep440_rs::Version;
use rosetta_schema::ComputeCapability;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::OnceLock;

const MODEL_TYPES_JSON: &str = include_str!("../../../kb/tables/transformers-model-types.json");
const GPUS_TOML: &str = include_str!("../../../kb/tables/gpus.toml");

/// One release of transformers in the table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Release {
    /// PEP 440 version string.
    pub version: String,
    /// Upload date (YYYY-MM-DD), when known.
    #[serde(default)]
    pub uploaded: Option<String>,
    /// Whether every file of the release is yanked.
    #[serde(default)]
    pub yanked: bool,
}

/// When a model type entered (and possibly left) transformers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ModelTypeEntry {
    /// First release registering it, pre-releases included.
    pub first_any: Option<String>,
    /// First final (non pre-release) registering it.
    pub first_final: Option<String>,
    /// First final, non-yanked release registering it: what a resolver would install.
    pub first_final_not_yanked: Option<String>,
    /// Last release registering it; `None` while it is still present.
    pub last_seen: Option<String>,
}

/// The table model type -> first transformers release, in the format that
/// `rosetta versions transformers --model-types --format json` writes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ModelTypeTable {
    /// How the table was made.
    #[serde(rename = "_about", default)]
    pub about: String,
    /// Releases scanned, in version order.
    pub releases: Vec<Release>,
    /// Yanked versions.
    #[serde(default)]
    pub yanked: Vec<String>,
    /// model_type -> entry.
    pub model_types: BTreeMap<String, ModelTypeEntry>,
}

/// Whether a transformers version knows a model type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Known {
    /// Registered in that version.
    Yes,
    /// Not yet registered: it first appears in the given release.
    NotYet {
        /// The first final non-yanked release that registers it.
        first: String,
    },
    /// Registered once, removed after `last_seen`.
    Removed {
        /// The last release that registered it.
        last_seen: String,
    },
    /// The table does not know this model type (or the version is outside the table's range).
    Unknown,
}

impl ModelTypeTable {
    /// The embedded table.
    pub fn embedded() -> &'static ModelTypeTable {
        static TABLE: OnceLock<ModelTypeTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            // The embedded copy is checked by a unit test; a parse failure here
            // is a build defect, so fall back to an empty table rather than panic.
            serde_json::from_str(MODEL_TYPES_JSON).unwrap_or_else(|_| ModelTypeTable {
                about: String::new(),
                releases: Vec::new(),
                yanked: Vec::new(),
                model_types: BTreeMap::new(),
            })
        })
    }

    /// Parses a table from JSON text.
    pub fn from_json(text: &str) -> Result<ModelTypeTable, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The entry for a model type.
    pub fn get(&self, model_type: &str) -> Option<&ModelTypeEntry> {
        self.model_types.get(model_type)
    }

    /// The first release a user can install that knows `model_type`.
    pub fn first_release(&self, model_type: &str) -> Option<&str> {
        let e = self.get(model_type)?;
        e.first_final_not_yanked
            .as_deref()
            .or(e.first_final.as_deref())
            .or(e.first_any.as_deref())
    }

    /// Whether transformers `version` registers `model_type`.
    pub fn knows(&self, model_type: &str, version: &str) -> Known {
        let Some(entry) = self.get(model_type) else {
            return Known::Unknown;
        };
        let Ok(v) = Version::from_str(version) else {
            return Known::Unknown;
        };
        let Some(first) = entry
            .first_any
            .as_deref()
            .and_then(|f| Version::from_str(f).ok())
        else {
            return Known::Unknown;
        };
        // The table starts at its oldest release; a type present there may be older still.
        let oldest = self
            .releases
            .iter()
            .filter_map(|r| Version::from_str(&r.version).ok())
            .min();
        if v < first {
            if oldest.as_ref() == Some(&first) {
                return Known::Unknown;
            }
            let first = self
                .first_release(model_type)
                .unwrap_or_default()
                .to_string();
            return Known::NotYet { first };
        }
        if let Some(last) = entry.last_seen.as_deref() {
            if let Ok(last_v) = Version::from_str(last) {
                if v > last_v {
                    return Known::Removed {
                        last_seen: last.to_string(),
                    };
                }
            }
        }
        Known::Yes
    }
}

/// What the GPU table says about one GPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    /// Compute capability, e.g. `12.0` (NVIDIA).
    pub cc: Option<String>,
    /// AMD gfx target, e.g. `gfx942`.
    pub gfx: Option<String>,
    /// Architecture family, for people.
    pub family: String,
}

impl GpuInfo {
    /// `sm_120` for cc 12.0, or the gfx target for AMD.
    pub fn arch(&self) -> Option<String> {
        if let Some(cc) = &self.cc {
            return cc_to_sm(cc);
        }
        self.gfx.clone()
    }
}

/// `12.0` -> `sm_120` (any spelling `rosetta_schema::ComputeCapability` reads).
pub fn cc_to_sm(cc: &str) -> Option<String> {
    ComputeCapability::parse(cc).map(ComputeCapability::arch)
}

#[derive(Debug, Deserialize)]
struct GpuFile {
    gpu: Vec<GpuRow>,
    #[serde(default)]
    generation: Vec<Generation>,
}

/// A GPU generation and the arch its memory per GPU implies.
#[derive(Debug, Clone, Deserialize)]
pub struct Generation {
    /// `Blackwell`, `Hopper`, ...
    pub name: String,
    /// Memory bands, first match wins.
    pub bands: Vec<Band>,
}

/// One memory band of a generation.
#[derive(Debug, Clone, Deserialize)]
pub struct Band {
    /// Lowest memory per GPU, GiB.
    #[serde(default)]
    pub min_gib: Option<f64>,
    /// Highest memory per GPU, GiB.
    #[serde(default)]
    pub max_gib: Option<f64>,
    /// The arch (`sm_120`).
    pub arch: String,
    /// Why, for people.
    pub why: String,
}

#[derive(Debug, Deserialize)]
struct GpuRow {
    #[serde(rename = "match")]
    names: Vec<String>,
    cc: Option<String>,
    gfx: Option<String>,
    family: String,
}

/// GPU name -> compute capability.
#[derive(Debug)]
pub struct GpuTable {
    rows: Vec<GpuRow>,
    generations: Vec<Generation>,
}

impl GpuTable {
    /// The embedded table.
    pub fn embedded() -> &'static GpuTable {
        static TABLE: OnceLock<GpuTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            let f = toml::from_str::<GpuFile>(GPUS_TOML).unwrap_or(GpuFile {
                gpu: Vec::new(),
                generation: Vec::new(),
            });
            GpuTable {
                rows: f.gpu,
                generations: f.generation,
            }
        })
    }

    /// The arch a generation name implies, given the memory of one GPU when known: the
    /// first band whose limits hold (a band with a limit needs the memory).
    pub fn arch_of_generation(&self, name: &str, gib: Option<f64>) -> Option<&Band> {
        let g = self
            .generations
            .iter()
            .find(|g| g.name.eq_ignore_ascii_case(name))?;
        g.bands.iter().find(|b| {
            let limited = b.min_gib.is_some() || b.max_gib.is_some();
            match gib {
                Some(m) => b.min_gib.is_none_or(|lo| m >= lo) && b.max_gib.is_none_or(|hi| m <= hi),
                None => !limited,
            }
        })
    }

    /// Looks up a GPU by the name a log or `nvidia-smi` prints
    /// (`NVIDIA RTX PRO 6000 Blackwell Server Edition`); names match on word boundaries.
    pub fn lookup(&self, name: &str) -> Option<GpuInfo> {
        let hay = name.to_ascii_lowercase();
        for row in &self.rows {
            for n in &row.names {
                if contains_word(&hay, &n.to_ascii_lowercase()) {
                    return Some(GpuInfo {
                        cc: row.cc.clone(),
                        gfx: row.gfx.clone(),
                        family: row.family.clone(),
                    });
                }
            }
        }
        None
    }

    /// Every name the table knows, for building matchers.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.rows
            .iter()
            .flat_map(|r| r.names.iter().map(String::as_str))
    }
}

/// `needle` occurs in `hay` with no letter or digit right before or after it.
fn contains_word(hay: &str, needle: &str) -> bool {
    let bytes = hay.as_bytes();
    let mut from = 0;
    while let Some(pos) = hay[from..].find(needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = start == 0 || !bytes[start - 1].is_ascii_alphanumeric();
        let after_ok = end == bytes.len() || !bytes[end].is_ascii_alphanumeric();
        if before_ok && after_ok {
            return true;
        }
        from = start + 1;
        if from >= hay.len() {
            break;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_model_type_table_parses_and_has_the_known_firsts() {
        let t = ModelTypeTable::embedded();
        assert!(t.model_types.len() > 800, "{}", t.model_types.len());
        assert_eq!(t.first_release("glm_moe_dsa"), Some("5.2.0"));
        assert_eq!(t.first_release("qwen3_next"), Some("4.57.1"));
        assert_eq!(t.first_release("deepseek_v32"), Some("5.11.0"));
        // Every version string in the table parses as PEP 440.
        for r in &t.releases {
            assert!(Version::from_str(&r.version).is_ok(), "{}", r.version);
        }
    }

    #[test]
    fn knows_answers_the_glm5_trap() {
        let t = ModelTypeTable::embedded();
        assert_eq!(
            t.knows("glm_moe_dsa", "4.57.1"),
            Known::NotYet {
                first: "5.2.0".into()
            }
        );
        assert_eq!(t.knows("glm_moe_dsa", "5.2.0"), Known::Yes);
        assert_eq!(t.knows("no_such_type", "5.2.0"), Known::Unknown);
        // llama predates the table's range: we cannot say it is missing.
        assert_eq!(t.knows("llama", "4.30.0"), Known::Unknown);
    }

    #[test]
    fn gpu_lookup_uses_word_boundaries() {
        let g = GpuTable::embedded();
        let rtx = g
            .lookup("NVIDIA RTX PRO 6000 Blackwell Server Edition")
            .unwrap();
        assert_eq!(rtx.arch().as_deref(), Some("sm_120"));
        assert_eq!(
            g.lookup("NVIDIA H200").unwrap().arch().as_deref(),
            Some("sm_90")
        );
        assert_eq!(
            g.lookup("NVIDIA H20").unwrap().arch().as_deref(),
            Some("sm_90")
        );
        assert_eq!(
            g.lookup("NVIDIA A100-SXM4-80GB").unwrap().arch().as_deref(),
            Some("sm_80")
        );
        assert_eq!(
            g.lookup("NVIDIA A10G").unwrap().arch().as_deref(),
            Some("sm_86")
        );
        assert_eq!(
            g.lookup("GeForce RTX 2080 Ti").unwrap().arch().as_deref(),
            Some("sm_75")
        );
        assert_eq!(
            g.lookup("AMD Instinct MI300A").unwrap().arch().as_deref(),
            Some("gfx942")
        );
        assert!(g.lookup("some laptop").is_none());
    }
}
