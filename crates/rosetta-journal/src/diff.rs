//! The difference between two attempts: launch args, environment variables,
//! package versions, the machine and the model, each as a list of keys with
//! their value before and after; and how the outcome and the failure moved.
//! `findings diff` renders it; `rulings` asks whether it is exactly an
//! experiment's change.

use crate::model::{Attempt, FailureRef, Outcome, Source};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// One key whose value differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Delta {
    /// The key (canonical arg, env var, package, machine field).
    pub key: String,
    /// The value in the first attempt; `None` when absent there.
    pub before: Option<String>,
    /// The value in the second attempt.
    pub after: Option<String>,
}

impl Delta {
    /// `--disable-cuda-graph added (True)`, `--mem-fraction-static 0.95 -> 0.8`.
    pub fn describe_arg(&self) -> String {
        let flag = format!("--{}", self.key.replace('_', "-"));
        match (&self.before, &self.after) {
            (None, Some(a)) => format!("{flag} added ({a})"),
            (Some(b), None) => format!("{flag} removed (was {b})"),
            (Some(b), Some(a)) => format!("{flag} {b} -> {a}"),
            (None, None) => flag,
        }
    }

    /// `CUDA_LAUNCH_BLOCKING=1 set`, `torch 2.8.0 -> 2.9.0`.
    pub fn describe(&self) -> String {
        match (&self.before, &self.after) {
            (None, Some(a)) => format!("{}={a} set", self.key),
            (Some(b), None) => format!("{} unset (was {b})", self.key),
            (Some(b), Some(a)) => format!("{} {b} -> {a}", self.key),
            (None, None) => self.key.clone(),
        }
    }
}

/// How two attempts differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// The first attempt.
    pub a: i64,
    /// The second attempt.
    pub b: i64,
    /// Launch args (from the commands when both have them, else from the logs).
    pub args: Vec<Delta>,
    /// Whether `args` came from the logs.
    pub args_from_log: bool,
    /// Environment variables.
    pub env: Vec<Delta>,
    /// Package versions known on both sides.
    pub versions: Vec<Delta>,
    /// GPUs, driver, CUDA, Python, host: known on both sides.
    pub machine: Vec<Delta>,
    /// Model path and config hash.
    pub model: Vec<Delta>,
    /// The launcher itself: engine, program words, positional words (from the commands).
    pub command: Vec<Delta>,
    /// Outcome before and after.
    pub outcome: (Outcome, Outcome),
    /// Failure before and after.
    pub failure: (Option<FailureRef>, Option<FailureRef>),
    /// The attempt whose launch is not known, when one side is an imported log (no
    /// command) and the other was launched: the two launches cannot be called the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unknown_launch: Option<i64>,
}

impl Diff {
    /// Nothing differs in how the two were launched.
    pub fn same_launch(&self) -> bool {
        self.unknown_launch.is_none()
            && self.args.is_empty()
            && self.env.is_empty()
            && self.versions.is_empty()
            && self.machine.is_empty()
            && self.model.is_empty()
            && self.command.is_empty()
    }
}

fn map_deltas(
    a: &BTreeMap<String, String>,
    b: &BTreeMap<String, String>,
    skip: &[String],
) -> Vec<Delta> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| !skip.iter().any(|s| s == *k))
        .filter_map(|k| {
            let (x, y) = (a.get(k), b.get(k));
            (x != y).then(|| Delta {
                key: k.clone(),
                before: x.cloned(),
                after: y.cloned(),
            })
        })
        .collect()
}

/// Deltas of keys known on both sides only (a fingerprint that could not read
/// a package is no evidence that it changed).
fn known_deltas(a: &BTreeMap<String, String>, b: &BTreeMap<String, String>) -> Vec<Delta> {
    a.iter()
        .filter_map(|(k, x)| {
            let y = b.get(k)?;
            (x != y).then(|| Delta {
                key: k.clone(),
                before: Some(x.clone()),
                after: Some(y.clone()),
            })
        })
        .collect()
}

fn machine_map(at: &Attempt) -> BTreeMap<String, String> {
    let f = &at.fingerprint;
    let mut m = BTreeMap::new();
    if !f.gpus.is_empty() {
        let mut names: BTreeMap<&str, usize> = BTreeMap::new();
        for g in &f.gpus {
            *names.entry(g.name.as_str()).or_default() += 1;
        }
        let gpus: Vec<String> = names.iter().map(|(n, c)| format!("{c}x {n}")).collect();
        m.insert("gpus".into(), gpus.join(", "));
    }
    for (k, v) in [
        ("driver", &f.driver),
        ("cuda", &f.cuda),
        ("python", &f.python),
        ("torch_cuda", &f.torch_cuda),
        ("host", &f.host),
    ] {
        if let Some(v) = v {
            m.insert(k.into(), v.clone());
        }
    }
    m
}

fn versions(at: &Attempt) -> BTreeMap<String, String> {
    let mut v = at.fingerprint.packages.clone();
    if let Some(r) = &at.report {
        for (k, x) in &r.facts.versions {
            v.entry(k.clone()).or_insert_with(|| x.clone());
        }
    }
    v
}

/// How `b` differs from `a`.
pub fn diff(a: &Attempt, b: &Attempt) -> Diff {
    let (aa, ba, args_from_log) = a.comparable_args(b);
    let mut model = Vec::new();
    match (&a.model, &b.model) {
        (Some(x), Some(y)) => {
            if x.path != y.path {
                model.push(Delta {
                    key: "path".into(),
                    before: Some(x.path.clone()),
                    after: Some(y.path.clone()),
                });
            }
            if let (Some(h1), Some(h2)) = (&x.config_hash, &y.config_hash) {
                if h1 != h2 {
                    model.push(Delta {
                        key: "config.json".into(),
                        before: Some(h1.clone()),
                        after: Some(h2.clone()),
                    });
                }
            }
        }
        (None, None) => {}
        (x, y) => model.push(Delta {
            key: "path".into(),
            before: x.as_ref().map(|m| m.path.clone()),
            after: y.as_ref().map(|m| m.path.clone()),
        }),
    }
    let command = command_deltas(a, b);
    // The model path is compared as the model, not as an arg.
    let skip = vec!["model_path".to_string()];
    Diff {
        a: a.id,
        b: b.id,
        args: map_deltas(aa, ba, &skip),
        args_from_log,
        env: map_deltas(&a.env, &b.env, &[]),
        versions: known_deltas(&versions(a), &versions(b)),
        machine: known_deltas(&machine_map(a), &machine_map(b)),
        model,
        command,
        outcome: (a.outcome, b.outcome),
        failure: (a.failure, b.failure),
        unknown_launch: unknown_launch(a, b),
    }
}

/// The side whose launch is unknown when only one side's is known: an imported log has
/// no command, so its launch cannot be matched with a recorded one.
fn unknown_launch(a: &Attempt, b: &Attempt) -> Option<i64> {
    let unknown = |x: &Attempt| x.source == Source::Import || x.command.is_empty();
    match (unknown(a), unknown(b)) {
        (true, false) => Some(a.id),
        (false, true) => Some(b.id),
        _ => None,
    }
}

/// The words for an unknown launch (after `launch`).
pub fn unknown_launch_text(id: i64) -> String {
    format!("not comparable (#{id} is an imported log with no command)")
}

/// The launcher's own changes (engine, program, positional words), from the
/// stored commands parsed again; args and env are compared from the records.
fn command_deltas(a: &Attempt, b: &Attempt) -> Vec<Delta> {
    use rosetta_launch::Change;
    if a.command.is_empty() || b.command.is_empty() {
        return Vec::new();
    }
    let engines = rosetta_launch::Engines::embedded();
    let (Ok(x), Ok(y)) = (
        rosetta_launch::parse_words(&a.command, engines),
        rosetta_launch::parse_words(&b.command, engines),
    ) else {
        return if a.command != b.command && a.args.is_none() {
            vec![Delta {
                key: "command".into(),
                before: Some(a.command.join(" ")),
                after: Some(b.command.join(" ")),
            }]
        } else {
            Vec::new()
        };
    };
    let d = rosetta_launch::diff(&x, &y);
    let mut out = Vec::new();
    for (key, c) in [
        ("engine", d.engine),
        ("program", d.program),
        ("positional", d.positional),
    ] {
        if let Some(c) = c {
            let (before, after) = match c {
                Change::Added { to } => (None, Some(to)),
                Change::Removed { from } => (Some(from), None),
                Change::Changed { from, to } => (Some(from), Some(to)),
            };
            out.push(Delta {
                key: key.into(),
                before,
                after,
            });
        }
    }
    out
}

/// A short line of what changed from `a` to `b`: `--disable-cuda-graph added (True)`.
pub fn summary(d: &Diff, limit: usize) -> String {
    let mut parts: Vec<String> = Vec::new();
    parts.extend(
        d.unknown_launch
            .map(|id| format!("launch {}", unknown_launch_text(id))),
    );
    let inert = rosetta_kb::change::inert_args();
    parts.extend(
        d.args
            .iter()
            .filter(|x| !inert.contains(&x.key))
            .map(Delta::describe_arg),
    );
    let inert_env = rosetta_kb::change::inert_env();
    parts.extend(
        d.env
            .iter()
            .filter(|x| !inert_env.contains(&x.key))
            .map(Delta::describe),
    );
    parts.extend(d.versions.iter().map(Delta::describe));
    parts.extend(d.machine.iter().map(Delta::describe));
    parts.extend(d.model.iter().map(|m| format!("model {}", m.describe())));
    parts.extend(d.command.iter().map(Delta::describe));
    if parts.is_empty() {
        return "same launch".into();
    }
    let more = parts.len().saturating_sub(limit);
    parts.truncate(limit);
    let mut s = parts.join(", ");
    if more > 0 {
        s.push_str(&format!(" (+{more} more)"));
    }
    s
}
