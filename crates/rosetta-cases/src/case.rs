//! One labelled case: its id, batch, labels (`expect.toml`: source, class,
//! phase, cause, also, fix) and signature. Reading a case folder lives here so
//! that `build.rs` (the embedded library) and `--cases DIR` (a team's own
//! cases) read the same fields the same way. Scoring lives in `library.rs`.

use crate::signature::Signature;
use rosetta_schema::{Cause, FailureClass, Phase};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The labels of a case, as `expect.toml` writes them (unknown fields, such as
/// `why`, `framework` and `gpu`, are not kept).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Labels {
    /// The thread the log comes from (or the probe that produced it).
    pub source: String,
    /// Failure class.
    pub class: FailureClass,
    /// Phase.
    pub phase: Phase,
    /// The cause the thread establishes.
    pub cause: Cause,
    /// Other causes the thread supports.
    #[serde(default)]
    pub also: Vec<Cause>,
    /// Our one-line fix.
    #[serde(default)]
    pub fix: String,
}

/// A case of the library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Case {
    /// The folder name, e.g. `rx-012`.
    pub id: String,
    /// Labels.
    #[serde(flatten)]
    pub labels: Labels,
    /// The signature, in its text form.
    pub sig: String,
}

impl Case {
    /// The batch: the id up to its first `-` (`rx` for `rx-012`); the whole id without one.
    pub fn batch(&self) -> &str {
        batch_of(&self.id)
    }

    /// The parsed signature.
    pub fn signature(&self) -> Signature {
        Signature::from_text(&self.sig)
    }
}

/// The batch of a case id: the id up to its first `-`.
pub fn batch_of(id: &str) -> &str {
    id.split('-').next().unwrap_or(id)
}

/// Reads `expect.toml`; the error is one line naming what is wrong.
pub fn read_labels(path: &Path) -> Result<Labels, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    toml::from_str::<Labels>(&text).map_err(|e| e.message().to_string())
}

/// The case folders under `dir` (those holding both `log.txt` and
/// `expect.toml`), sorted by name.
pub fn case_dirs(dir: &Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    let mut out: Vec<_> = std::fs::read_dir(dir)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("log.txt").is_file() && p.join("expect.toml").is_file())
        .collect();
    out.sort();
    Ok(out)
}
