//! The report model: failure, hypotheses, notes, timeline, warnings, and the
//! facts a reader needs to check them. Field names follow the JSON contract of
//! `triage-schema.md`. Assembly and layout live in `rosetta-report`.

use crate::{Cause, FailureClass, Phase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    pub experiments: Vec<String>,
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
