//! What changed between two launch commands: engine, program, model, flags
//! (added, removed, changed, compared under canonical keys, so `--tp 8` and
//! `--tensor-parallel-size 8` are the same setting) and environment. The
//! journal uses it to say what one attempt tried that the one before did not.

use crate::command::LaunchCommand;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One setting's change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Change {
    /// Set in the second command only.
    Added {
        /// Its value there.
        to: String,
    },
    /// Set in the first command only.
    Removed {
        /// Its value there.
        from: String,
    },
    /// Set in both, to different values.
    Changed {
        /// The first value.
        from: String,
        /// The second value.
        to: String,
    },
}

/// A setting and its change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    /// Canonical key (flags) or variable name (environment).
    pub key: String,
    /// What happened to it.
    #[serde(flatten)]
    pub change: Change,
}

/// The differences between two launch commands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LaunchDiff {
    /// The engine changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<Change>,
    /// The words that start the engine changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program: Option<Change>,
    /// The model changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Change>,
    /// Flags, by canonical key.
    pub flags: Vec<Setting>,
    /// Environment variables.
    pub env: Vec<Setting>,
    /// Positional words changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub positional: Option<Change>,
}

fn change(a: Option<String>, b: Option<String>) -> Option<Change> {
    match (a, b) {
        (None, None) => None,
        (None, Some(to)) => Some(Change::Added { to }),
        (Some(from), None) => Some(Change::Removed { from }),
        (Some(from), Some(to)) if from != to => Some(Change::Changed { from, to }),
        _ => None,
    }
}

fn settings(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<Setting> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter_map(|k| {
            change(a.get(k).cloned(), b.get(k).cloned()).map(|change| Setting {
                key: k.clone(),
                change,
            })
        })
        .collect()
}

/// Compares two commands; `a` is the earlier.
pub fn diff(a: &LaunchCommand, b: &LaunchCommand) -> LaunchDiff {
    let mut fa = a.args();
    let mut fb = b.args();
    fa.remove("model_path");
    fb.remove("model_path");
    let join = |v: &[String]| (!v.is_empty()).then(|| v.join(" "));
    LaunchDiff {
        engine: change(a.engine.clone(), b.engine.clone()),
        program: change(join(&a.program), join(&b.program)),
        model: change(a.model.clone(), b.model.clone()),
        flags: settings(&fa, &fb),
        env: settings(&a.env, &b.env),
        positional: change(join(&a.positional), join(&b.positional)),
    }
}

impl LaunchDiff {
    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.engine.is_none()
            && self.program.is_none()
            && self.model.is_none()
            && self.flags.is_empty()
            && self.env.is_empty()
            && self.positional.is_none()
    }
}

fn write_change(f: &mut fmt::Formatter<'_>, what: &str, c: &Change) -> fmt::Result {
    match c {
        Change::Added { to } => write!(f, "+{what} {to}"),
        Change::Removed { from } => write!(f, "-{what} {from}"),
        Change::Changed { from, to } => write!(f, "{what} {from} -> {to}"),
    }
}

/// One line: `tp_size 4 -> 8; +disable_cuda_graph true; env +CUDA_LAUNCH_BLOCKING 1`.
impl fmt::Display for LaunchDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no change");
        }
        let mut first = true;
        let mut sep = |f: &mut fmt::Formatter<'_>| {
            let r = if first { Ok(()) } else { f.write_str("; ") };
            first = false;
            r
        };
        for (what, c) in [
            ("engine", &self.engine),
            ("program", &self.program),
            ("model", &self.model),
        ] {
            if let Some(c) = c {
                sep(f)?;
                write_change(f, what, c)?;
            }
        }
        for s in &self.flags {
            sep(f)?;
            write_change(f, &s.key, &s.change)?;
        }
        for s in &self.env {
            sep(f)?;
            write_change(f, &format!("env {}", s.key), &s.change)?;
        }
        if let Some(c) = &self.positional {
            sep(f)?;
            write_change(f, "positional", c)?;
        }
        Ok(())
    }
}
