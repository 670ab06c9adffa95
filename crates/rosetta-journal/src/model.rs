//! What the journal records: an attempt (one launch, or one imported log)
//! with its command, args, environment, machine fingerprint, model, outcome,
//! failure, hypotheses, probe result and notes; and the rulings that attempts
//! make on hypotheses. Plain data with serde; storing it is `store`'s
//! business, judging it `rulings`'.

use rosetta_kb::change::Change;
use rosetta_report::Report;
use rosetta_schema::{Cause, FailureClass, Phase};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Still running (or its `rosetta run` was killed before it could record the end).
    Running,
    /// The server listens, and the probe, if asked for, succeeded.
    Ready,
    /// The child exited with an error.
    Crashed,
    /// No output and no progress for the stall time in a phase that should progress.
    Stalled,
    /// The server answered the probe with an error, or died during it.
    ProbeFailed,
    /// The user stopped it before it was ready.
    Interrupted,
}

impl Outcome {
    /// Every outcome.
    pub const ALL: &'static [Outcome] = &[
        Outcome::Running,
        Outcome::Ready,
        Outcome::Crashed,
        Outcome::Stalled,
        Outcome::ProbeFailed,
        Outcome::Interrupted,
    ];

    /// The id, e.g. `probe-failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Running => "running",
            Outcome::Ready => "ready",
            Outcome::Crashed => "crashed",
            Outcome::Stalled => "stalled",
            Outcome::ProbeFailed => "probe-failed",
            Outcome::Interrupted => "interrupted",
        }
    }

    /// The attempt failed (and so can be the baseline a later attempt tests against).
    pub fn failed(self) -> bool {
        matches!(
            self,
            Outcome::Crashed | Outcome::Stalled | Outcome::ProbeFailed
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Outcome {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Outcome::ALL
            .iter()
            .copied()
            .find(|o| o.as_str() == s)
            .ok_or_else(|| format!("unknown outcome `{s}`"))
    }
}

/// Where an attempt came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// Launched by `rosetta run`.
    Run,
    /// An old log recorded by `rosetta findings import`.
    Import,
}

impl Source {
    /// The id.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Run => "run",
            Source::Import => "import",
        }
    }
}

/// One GPU as the machine reported it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuPrint {
    /// Product name.
    pub name: String,
    /// Compute capability (`9.0`), when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub compute_capability: String,
    /// Total memory in MiB, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<u64>,
}

/// The machine and software stack an attempt ran on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// Host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// GPUs.
    #[serde(default)]
    pub gpus: Vec<GpuPrint>,
    /// NVIDIA driver version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The highest CUDA version the driver supports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    /// Python version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The CUDA version torch was built for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch_cuda: Option<String>,
    /// Versions of the packages that matter (torch, transformers, the engine, kernel libraries),
    /// from the Python environment or, failing that, from the log.
    #[serde(default)]
    pub packages: BTreeMap<String, String>,
    /// What could not be read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The model an attempt served.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelRef {
    /// The path or hub name, as given.
    pub path: String,
    /// SHA-256 of its `config.json` (first 16 hex digits), when it is a local folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_hash: Option<String>,
}

/// What broke, in the words of the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureRef {
    /// Failure class.
    pub class: FailureClass,
    /// Phase.
    pub phase: Phase,
    /// First failing rank.
    pub rank: Option<u32>,
}

impl FailureRef {
    /// Two failures are the same when class and phase agree (the rank may move).
    pub fn same_as(&self, other: &FailureRef) -> bool {
        self.class == other.class && self.phase == other.phase
    }
}

impl fmt::Display for FailureRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.phase == Phase::Unknown {
            write!(f, "{}", self.class)
        } else {
            write!(f, "{} in {}", self.class, self.phase)
        }
    }
}

/// An experiment of a hypothesis that is a relaunch with one thing changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Test {
    /// The experiment's `do` text as the rule writes it.
    pub action: String,
    /// The changes that carry it out, any one of them.
    pub changes: Vec<Change>,
}

/// A hypothesis of an attempt's diagnosis, with the tests its experiments allow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HypothesisRec {
    /// The cause.
    pub cause: Cause,
    /// Share of belief, 0..1.
    pub confidence: f64,
    /// The rule that carries it.
    pub rule: String,
    /// One line.
    pub summary: String,
    /// Relaunch experiments, from the rules behind it.
    #[serde(default)]
    pub tests: Vec<Test>,
}

/// The result of the probe request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// The request got tokens back without error.
    pub ok: bool,
    /// The URL asked.
    pub url: String,
    /// HTTP status, when one came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Milliseconds from sending the request to the first token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
    /// Milliseconds until the answer ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms: Option<u64>,
    /// Tokens (stream chunks with text) that came back.
    pub tokens: u32,
    /// The text that came back (cut).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The step the server was in when the request failed: prefill before the
    /// first token, decode after.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub died_in: Option<Phase>,
    /// What went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A note on an attempt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    /// When (RFC 3339, UTC).
    pub at: String,
    /// The text.
    pub text: String,
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// Id, from 1, in order of start.
    pub id: i64,
    /// Where it came from.
    pub source: Source,
    /// Start time (RFC 3339, UTC).
    pub started: String,
    /// End time.
    pub ended: Option<String>,
    /// The working directory of the launch.
    pub cwd: Option<String>,
    /// The launch command, argument by argument (empty for an import without one).
    pub command: Vec<String>,
    /// Launch args parsed from the command (rosetta-launch): canonical key -> value;
    /// `None` when there is no command to parse (an imported log).
    pub args: Option<BTreeMap<String, String>>,
    /// Launch args the server printed in its log: canonical key -> value.
    pub log_args: BTreeMap<String, String>,
    /// The environment variables that can change how a server runs (CUDA_*, NCCL_*, ...; never secrets).
    pub env: BTreeMap<String, String>,
    /// The machine.
    pub fingerprint: Fingerprint,
    /// The model.
    pub model: Option<ModelRef>,
    /// How it ended.
    pub outcome: Outcome,
    /// The child's exit code (128 + signal when a signal ended it).
    pub exit_code: Option<i32>,
    /// What broke.
    pub failure: Option<FailureRef>,
    /// The diagnosis' hypotheses, most likely first.
    pub hypotheses: Vec<HypothesisRec>,
    /// The probe's result.
    pub probe: Option<ProbeResult>,
    /// The log file kept with the attempt.
    pub log_path: Option<String>,
    /// The full diagnosis.
    pub report: Option<Report>,
    /// Notes, oldest first.
    pub notes: Vec<Note>,
}

impl Attempt {
    /// The args to compare: from the commands when both were parsed, else from the logs.
    pub fn comparable_args<'a>(
        &'a self,
        other: &'a Attempt,
    ) -> (
        &'a BTreeMap<String, String>,
        &'a BTreeMap<String, String>,
        bool,
    ) {
        match (&self.args, &other.args) {
            (Some(a), Some(b)) => (a, b, false),
            _ => (&self.log_args, &other.log_args, true),
        }
    }

    /// The top hypothesis' cause.
    pub fn top_cause(&self) -> Option<Cause> {
        self.hypotheses.first().map(|h| h.cause)
    }
}

/// What an attempt says about a hypothesis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The change that would avoid the cause was made and the failure stayed.
    RuledOut,
    /// The change was made and the failure went away or changed.
    Supported,
}

impl Verdict {
    /// The id.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::RuledOut => "ruled-out",
            Verdict::Supported => "supported",
        }
    }
}

impl FromStr for Verdict {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "ruled-out" => Ok(Verdict::RuledOut),
            "supported" => Ok(Verdict::Supported),
            _ => Err(format!("unknown verdict `{s}`")),
        }
    }
}

/// A hypothesis ruled out or supported by an attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ruling {
    /// The cause.
    pub cause: Cause,
    /// Ruled out or supported.
    pub verdict: Verdict,
    /// The attempt that made the change.
    pub by_attempt: i64,
    /// The earlier attempt it changed.
    pub against_attempt: i64,
    /// The failure of that earlier attempt: the ruling is about it.
    pub failure: FailureRef,
    /// The experiment carried out (its `do` text).
    pub experiment: String,
    /// For people: what changed and what happened.
    pub why: String,
}
