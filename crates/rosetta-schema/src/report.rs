//! The report model: failure, hypotheses, notes, timeline, warnings, and the
//! facts a reader needs to check them. Field names follow the JSON contract of
//! `triage-schema.md`. Assembly and layout live in `rosetta-report`.

use crate::{Cause, FailureClass, Phase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// The tool and version that wrote it.
    pub rosetta: String,
    /// The inputs read.
    pub inputs: Vec<Input>,
    /// What broke; `null` when nothing did.
    pub failure: Option<Failure>,
    /// Causes, most likely first.
    pub hypotheses: Vec<Hypothesis>,
    /// What the knowledge base knows about messages in the log.
    pub notes: Vec<String>,
    /// Phases with their first line.
    pub timeline: Vec<TimelineEntry>,
    /// Distinct warnings.
    pub warnings: Vec<Warning>,
    /// Warning lines in all (before collapsing).
    pub warning_total: u64,
    /// Facts read from the log (and the machine, with `--env`).
    pub facts: Facts,
    /// Labelled real reports whose failure resembles this one, most similar first.
    #[serde(default)]
    pub similar: Vec<Similar>,
    /// When no failure was found: why, and the last error-looking lines if any.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub no_failure: Option<NoFailure>,
    /// With several inputs: the failure each other input holds (another process or
    /// node), so that no file's error is dropped. `failure` is the first root error.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub other_inputs: Vec<OtherFailure>,
    /// With several inputs: the input that holds the first root error (`failure`'s file).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first_root_error_in: Option<String>,
}

/// The failure of another input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OtherFailure {
    /// The input's path.
    pub file: String,
    /// Failure class.
    pub class: FailureClass,
    /// Phase.
    pub phase: Phase,
    /// Line in that input.
    pub line: u64,
    /// Timestamp as printed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub time: Option<String>,
    /// Failing rank.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rank: Option<u32>,
    /// The message.
    pub message: String,
}

/// Why no failure was named.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NoFailure {
    /// `empty` (no lines at all), `unknown-pattern` (error-looking lines that no
    /// signal of the vocabulary names), `unfinished` (no error-looking line, but the
    /// log stops inside a start-up step it began), `not-in-log` (`rosetta run`: the
    /// attempt failed, by its probe, a stall or its exit code, and the log shows no
    /// error) or `clean`.
    pub reason: String,
    /// The last error-looking lines, oldest first (at most 5).
    #[serde(default)]
    pub lines: Vec<Evidence>,
    /// The start-up step the log was inside when it stopped: begun, never
    /// finished, no server ready after it (serving counts are milestones too). The log was cut off, or the process
    /// hung or was killed there.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ends_during: Option<EndsDuring>,
}

/// A start-up step a log began and never finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EndsDuring {
    /// Its phase.
    pub phase: Phase,
    /// Its timeline label (`CUDA graph capture`).
    pub step: String,
    /// The step finished and the next one never began.
    #[serde(default)]
    pub finished: bool,
    /// Where it began.
    pub line: u64,
    /// File, where there is more than one input.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// Lines the log runs on after that step began.
    pub lines_after: u64,
}

/// One input.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Path as given.
    pub path: String,
    /// Lines.
    pub lines: u64,
    /// Decoded bytes.
    pub bytes: u64,
    /// Why reading stopped early, if it did.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

/// What broke, when and where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// Failure class.
    pub class: FailureClass,
    /// Phase.
    pub phase: Phase,
    /// First failing rank.
    pub rank: Option<u32>,
    /// Ranks with the same failure.
    #[serde(default)]
    pub ranks: Vec<u32>,
    /// Line in the input.
    pub line: u64,
    /// Input path, when several were read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// Timestamp as printed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub time: Option<String>,
    /// The message.
    pub message: String,
    /// Exception type, when a traceback ended in one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exception: Option<String>,
    /// When the failure line is a kernel's own message: the Python error that followed it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub surfaced: Option<Surfaced>,
    /// Reported asynchronously: the traceback names a sync point, not the culprit.
    pub asynchronous: bool,
    /// The sync point named, when asynchronous.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sync_point: Option<String>,
    /// Why this phase.
    pub phase_reason: String,
    /// Innermost frames, innermost last.
    #[serde(default)]
    pub frames: Vec<FrameRef>,
}

/// The Python error that followed a kernel's own failure message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Surfaced {
    /// Its line.
    pub line: u64,
    /// Its message.
    pub message: String,
}

/// A frame of the failing traceback.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameRef {
    /// File.
    pub file: String,
    /// Line in that file.
    pub line: u32,
    /// Function.
    pub function: String,
    /// Code line.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub code: Option<String>,
}

/// One cause with its confidence, evidence and experiments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hypothesis {
    /// The cause.
    pub cause: Cause,
    /// The rule that carries it.
    pub rule: String,
    /// Share of belief, 0..1; the list sums to 1.
    pub confidence: f64,
    /// One line.
    pub summary: String,
    /// Why the evidence points here.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub why: Option<String>,
    /// Lines that support it.
    #[serde(default)]
    pub evidence: Vec<Evidence>,
    /// What to try, cheapest first.
    #[serde(default)]
    pub experiments: Vec<Experiment>,
    /// Where the knowledge comes from.
    #[serde(default)]
    pub references: Vec<String>,
    /// Other rules that support the same cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also_rules: Vec<String>,
    /// Labelled reports with a failure like this one that name this cause.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cases: Vec<CaseRef>,
}

/// A labelled report behind a hypothesis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseRef {
    /// The case id (as in `similar[].case`).
    pub case: String,
    /// The upstream thread.
    pub source: String,
    /// Similarity of the failure blocks, 0..1.
    pub score: f64,
}

/// A labelled real report whose failure resembles this one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Similar {
    /// The case id (`rx-012`), or the folder name of a team's own case.
    pub case: String,
    /// The upstream thread.
    pub source: String,
    /// Its failure class.
    pub class: FailureClass,
    /// Its phase.
    pub phase: Phase,
    /// Its established cause.
    pub cause: Cause,
    /// What fixed it, in one line.
    pub fix: String,
    /// Similarity of the failure blocks, 0..1.
    pub score: f64,
}

/// A line that supports a hypothesis (or a fact of the machine, with no line).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Line in the input; `None` for machine facts.
    pub line: Option<u64>,
    /// Input path, when several were read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// The text.
    pub text: String,
}

/// One step of the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// Phase.
    pub phase: Phase,
    /// First line.
    pub line: u64,
    /// Input path, when several were read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// Last line of the step, when it spans several.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub end_line: Option<u64>,
    /// Label.
    pub label: String,
    /// Timestamp of the first line.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub time: Option<String>,
    /// This step is the failure.
    #[serde(default)]
    pub failed: bool,
    /// Earlier runs this step stands for when it is not one run: launches the scanner
    /// counted but did not keep (a long restart loop keeps its first and last runs).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub runs: Option<u64>,
}

/// A distinct warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Warning {
    /// The first occurrence.
    pub text: String,
    /// Occurrences.
    pub count: u64,
    /// Ranks.
    pub ranks: Vec<u32>,
    /// First line.
    pub line: u64,
    /// Input path of the first occurrence, when several were read.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub file: Option<String>,
    /// What the knowledge base says about it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

/// Facts a reader needs to check the hypotheses.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Facts {
    /// Framework.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub framework: Option<String>,
    /// Versions named.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// GPUs named, with their arch.
    #[serde(default)]
    pub gpus: Vec<String>,
    /// GPU archs (`sm_90`).
    #[serde(default)]
    pub gpu_archs: Vec<String>,
    /// How many GPUs the launch used, as the log shows it (tensor x pipeline parallel
    /// size, or the ranks seen), when it shows it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub gpu_count: Option<u64>,
    /// Model types named.
    #[serde(default)]
    pub model_types: Vec<String>,
    /// Launch arguments read (how many).
    #[serde(default)]
    pub args: usize,
}

/// How bad a finding is, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// The launch will fail.
    Blocker,
    /// The launch may fail; the finding names the crash.
    Risk,
    /// Worth knowing; nothing will fail because of it.
    Info,
}

impl Severity {
    /// The id (`blocker`, `risk`, `info`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Blocker => "blocker",
            Severity::Risk => "risk",
            Severity::Info => "info",
        }
    }
}

/// What an experiment costs, cheapest first (the `cost` of a rule's `[[try]]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cost {
    /// Read something already there (a log line, a file, `nvidia-smi`).
    Look,
    /// A quick command or script, no restart of the server.
    Check,
    /// Set an environment variable and restart.
    Env,
    /// Change a launch flag and restart.
    Restart,
    /// Install or pin a package.
    Reinstall,
    /// Rebuild a kernel or extension from source.
    Rebuild,
    /// Change the driver, container image or hardware.
    Infra,
}

impl Cost {
    /// Every cost, cheapest first.
    pub const ALL: [Cost; 7] = [
        Cost::Look,
        Cost::Check,
        Cost::Env,
        Cost::Restart,
        Cost::Reinstall,
        Cost::Rebuild,
        Cost::Infra,
    ];

    /// Words for people.
    pub fn words(self) -> &'static str {
        match self {
            Cost::Look => "look",
            Cost::Check => "quick check",
            Cost::Env => "env var + restart",
            Cost::Restart => "one restart",
            Cost::Reinstall => "reinstall",
            Cost::Rebuild => "rebuild",
            Cost::Infra => "infra change",
        }
    }
}

/// One thing to try. The kb fills the action, its cost and what its outcome tells apart;
/// the case library fills the labelled case whose fix it is; the journal marks it tried.
/// In the JSON contract (`triage-schema.md`) an experiment is one string,
/// `action  (cost): tells`, `fix  (as in owner/repo#N)`, with `  [tried in #N: verdict]`
/// after it once an attempt tried it; that string is this type's `Display`, and reading it
/// back (`From<&str>`) gives the same fields, so a stored report keeps them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Experiment {
    /// What to do: a flag, a command, an environment variable.
    pub action: String,
    /// What it costs, when a rule says.
    pub cost: Option<Cost>,
    /// The labelled case whose fix this is (`owner/repo#N`, or a case id).
    pub as_in: Option<String>,
    /// What the outcome tells apart.
    pub tells: Option<String>,
    /// The journal's attempt that already tried it, and its verdict.
    pub tried: Option<Tried>,
}

/// An experiment an earlier attempt of the journal already ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tried {
    /// The attempt's number.
    pub attempt: i64,
    /// Its verdict (`ruled out`, `supported`).
    pub verdict: String,
}

impl Experiment {
    /// An experiment of a rule: the action and its cost.
    pub fn new(action: impl Into<String>, cost: Cost) -> Experiment {
        Experiment {
            action: action.into(),
            cost: Some(cost),
            ..Experiment::default()
        }
    }
}

impl fmt::Display for Experiment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.action)?;
        if let Some(c) = self.cost {
            write!(f, "  ({})", c.words())?;
        }
        if let Some(case) = &self.as_in {
            write!(f, "  (as in {case})")?;
        }
        if let Some(t) = &self.tells {
            write!(f, ": {t}")?;
        }
        if let Some(t) = &self.tried {
            write!(f, "  [tried in #{}: {}]", t.attempt, t.verdict)?;
        }
        Ok(())
    }
}

impl From<&str> for Experiment {
    /// Reads the contract's string back. A string of no known shape is all action, so any
    /// string reads back to itself.
    fn from(text: &str) -> Experiment {
        let mut rest = text;
        let mut tried = None;
        if let Some(i) = rest.rfind("  [tried in #") {
            let tail = &rest[i + "  [tried in #".len()..];
            if let Some((n, verdict)) = tail.strip_suffix(']').and_then(|t| t.split_once(": ")) {
                let canonical = !n.is_empty()
                    && n.bytes().all(|b| b.is_ascii_digit())
                    && (n == "0" || !n.starts_with('0'));
                if let (true, Ok(attempt)) = (canonical && !verdict.contains(']'), n.parse()) {
                    tried = Some(Tried {
                        attempt,
                        verdict: verdict.to_string(),
                    });
                    rest = &rest[..i];
                }
            }
        }
        let mut e = Experiment {
            tried,
            ..Experiment::default()
        };
        // The earliest cost tag followed by the end or by `: tells`.
        let tagged = Cost::ALL
            .iter()
            .filter_map(|&c| {
                let tag = format!("  ({})", c.words());
                rest.match_indices(&tag)
                    .find(|(i, _)| {
                        let after = &rest[i + tag.len()..];
                        after.is_empty() || after.starts_with(": ")
                    })
                    .map(|(i, _)| (i, c, tag.len()))
            })
            .min_by_key(|(i, _, _)| *i);
        if let Some((i, c, len)) = tagged {
            e.action = rest[..i].to_string();
            e.cost = Some(c);
            let after = &rest[i + len..];
            e.tells = after.strip_prefix(": ").map(str::to_string);
            return e;
        }
        if let Some(i) = rest.rfind("  (as in ") {
            if let Some(case) = rest[i + "  (as in ".len()..].strip_suffix(')') {
                if !case.contains(')') {
                    e.action = rest[..i].to_string();
                    e.as_in = Some(case.to_string());
                    return e;
                }
            }
        }
        e.action = rest.to_string();
        e
    }
}

impl From<String> for Experiment {
    fn from(text: String) -> Experiment {
        Experiment::from(text.as_str())
    }
}

impl Serialize for Experiment {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Experiment {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Experiment, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Experiment::from(text.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_contract_string_of_each_source() {
        let mut e = Experiment::new("--attention-backend triton", Cost::Restart);
        assert_eq!(e.to_string(), "--attention-backend triton  (one restart)");
        e.tells = Some("the crash stops: the backend's kernel".into());
        assert_eq!(
            e.to_string(),
            "--attention-backend triton  (one restart): the crash stops: the backend's kernel"
        );
        e.tried = Some(Tried {
            attempt: 3,
            verdict: "ruled out".into(),
        });
        let s = e.to_string();
        assert!(s.ends_with("  [tried in #3: ruled out]"), "{s}");
        assert_eq!(Experiment::from(s.as_str()), e);

        let case = Experiment {
            action: "Run the container with a larger /dev/shm".into(),
            as_in: Some("pytorch/torchtitan#853".into()),
            ..Experiment::default()
        };
        let s = case.to_string();
        assert_eq!(
            s,
            "Run the container with a larger /dev/shm  (as in pytorch/torchtitan#853)"
        );
        assert_eq!(Experiment::from(s.as_str()), case);
    }

    #[test]
    fn json_is_one_string() {
        let e = Experiment::new("NCCL_DEBUG=INFO", Cost::Env);
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v, serde_json::json!("NCCL_DEBUG=INFO  (env var + restart)"));
        let back: Experiment = serde_json::from_value(v).unwrap();
        assert_eq!(back, e);
    }

    proptest! {
        /// Any string a stored report holds reads back to itself.
        #[test]
        fn any_string_reads_back_to_itself(s in "(.{0,20}(  \\((look|reinstall|as in [a-z/#0-9]{0,8})\\)|: |  \\[tried in #[0-9]{0,3}: [a-z ]{0,6}\\]|\\)|\\]){0,3}){0,4}") {
            prop_assert_eq!(Experiment::from(s.as_str()).to_string(), s);
        }

        #[test]
        fn typed_fields_survive_the_string(
            action in "[a-z=/ -]{1,20}",
            cost in proptest::option::of(0usize..7),
            tells in proptest::option::of("[a-z ]{1,12}"),
            attempt in proptest::option::of(0i64..1000),
        ) {
            let e = Experiment {
                action,
                cost: cost.map(|i| Cost::ALL[i]),
                as_in: None,
                tells: if cost.is_some() { tells } else { None },
                tried: attempt.map(|attempt| Tried { attempt, verdict: "ruled out".into() }),
            };
            prop_assert_eq!(Experiment::from(e.to_string().as_str()), e);
        }
    }
}
