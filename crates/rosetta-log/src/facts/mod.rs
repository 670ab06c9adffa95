//! From retained lines to log facts: incidents (a traceback or a block of
//! error lines, with its class from the strongest signal in it), the failure
//! (the first root incident of the last run; cascades and echoes lose), its
//! phase (from the signal, then the frames, then the last milestone, then the
//! class), the timeline, and the distinct warnings. This is where "what broke,
//! when and where" is decided; "why" belongs to the knowledge base.

use crate::extract::{self, Extracted};
use crate::prefix::Level;
use crate::scan::{Record, ScanOutput, ServingStats, TemplateStat};
use crate::traceback::{self, Exception, Frame, Traceback};
use crate::vocab::{Role, ShapeId, Vocabulary};
use rosetta_schema::{FailureClass, Phase};
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;

mod failure;
mod incidents;
mod milestones;
mod outcome;
mod phase;
mod quote;
mod warnings;

use failure::*;
use incidents::*;
use milestones::*;
use outcome::*;
use phase::*;
pub(crate) use quote::quote;
use warnings::*;

/// One input file as read.
#[derive(Debug, Clone, Serialize)]
pub struct InputInfo {
    /// Path as given (`-` for stdin).
    pub name: PathBuf,
    /// Lines.
    pub lines: u64,
    /// Decoded bytes.
    pub bytes: u64,
    /// Why reading stopped early, if it did.
    pub read_error: Option<String>,
}

/// A group of error lines: one traceback, or adjacent error lines.
#[derive(Debug, Clone, Serialize)]
pub struct Incident {
    /// Input file index.
    pub source: usize,
    /// First line.
    pub line: u64,
    /// Last line.
    pub end_line: u64,
    /// Estimated time (from the nearest timestamped line before it).
    pub time: Option<f64>,
    /// Timestamp text, when known.
    pub time_text: Option<String>,
    /// Rank, when known.
    pub rank: Option<u32>,
    /// Class from its strongest signal.
    pub class: FailureClass,
    /// Strength of that signal.
    pub strength: u8,
    /// Root, weak or cascade.
    #[serde(skip)]
    pub role: Role,
    /// The line that decided the class.
    pub key_line: u64,
    /// The message to show.
    pub message: String,
    /// Signal ids that matched.
    pub signals: Vec<&'static str>,
    /// Phase implied by a signal.
    pub phase_hint: Option<Phase>,
    /// Reported asynchronously.
    pub asynchronous: bool,
    /// The exception, when a traceback ended in one.
    pub exception: Option<Exception>,
    /// Frames, outermost first.
    pub frames: Vec<Frame>,
    /// The exception this one was raised while handling (its type and message).
    pub cause_of: Option<String>,
}

/// A milestone seen in the log.
#[derive(Debug, Clone, Serialize)]
pub struct Milestone {
    /// Phase it belongs to.
    pub phase: Phase,
    /// The phase finished here.
    pub done: bool,
    /// The server accepts requests from here on.
    pub ready: bool,
    /// Label for the timeline.
    pub label: &'static str,
    /// Input file index.
    pub source: usize,
    /// Line.
    pub line: u64,
    /// Timestamp text.
    pub time: Option<String>,
    /// Rank.
    pub rank: Option<u32>,
}

/// A distinct warning.
#[derive(Debug, Clone, Serialize)]
pub struct WarningLine {
    /// The first occurrence's message.
    pub text: String,
    /// Occurrences.
    pub count: u64,
    /// Ranks.
    pub ranks: Vec<u32>,
    /// Input file index of the first occurrence.
    pub source: usize,
    /// First line.
    pub line: u64,
    /// Its template (`scan::template_key` of the message): what notes about it match on.
    pub template: u64,
}

/// What broke, when and where.
#[derive(Debug, Clone, Serialize)]
pub struct Failure {
    /// Class.
    pub class: FailureClass,
    /// Phase.
    pub phase: Phase,
    /// Why this phase (for people).
    pub phase_reason: String,
    /// First failing rank.
    pub rank: Option<u32>,
    /// All ranks with an incident of the same class.
    pub ranks: Vec<u32>,
    /// Input file index.
    pub source: usize,
    /// The line.
    pub line: u64,
    /// Timestamp text.
    pub time: Option<String>,
    /// The message.
    pub message: String,
    /// The exception type, when a traceback ended in one.
    pub exception: Option<String>,
    /// Innermost frames (up to 6, innermost last).
    pub frames: Vec<Frame>,
    /// The error is reported asynchronously: the traceback names a sync point.
    pub asynchronous: bool,
    /// The sync point the traceback names, when asynchronous.
    pub sync_point: Option<String>,
    /// Signals that matched.
    pub signals: Vec<&'static str>,
    /// The incident's index in `LogFacts::incidents`.
    pub incident: usize,
    /// Index of the run (restart) it belongs to, and how many runs the log holds.
    pub run: (usize, usize),
    /// First line of that run.
    pub run_start: u64,
    /// The failures of earlier runs: (class, line).
    pub earlier_runs: Vec<(FailureClass, u64)>,
    /// Runs the scanner counted but did not keep: (index in `earlier_runs` they come
    /// before, how many). A long loop keeps its first and last launches; the rest lie
    /// in the widest gap between the runs it kept.
    pub unseen_runs: Option<(usize, usize)>,
    /// When the failure line is a kernel's own message, the Python error that
    /// followed it: (line, message).
    pub surfaced: Option<(u64, String)>,
}

impl Failure {
    /// A failure read from the log's content rather than from an error incident
    /// (wrong output, a log that stops mid-way, a launch that `rosetta run` saw stall).
    pub fn without_incident(
        class: FailureClass,
        phase: Phase,
        reason: &str,
        source: usize,
        line: u64,
        message: String,
        signal: &'static str,
    ) -> Failure {
        Failure {
            class,
            phase,
            phase_reason: reason.into(),
            rank: None,
            ranks: Vec::new(),
            source,
            line,
            time: None,
            message,
            exception: None,
            frames: Vec::new(),
            asynchronous: false,
            sync_point: None,
            signals: vec![signal],
            incident: usize::MAX,
            run: (0, 1),
            run_start: 1,
            earlier_runs: Vec::new(),
            unseen_runs: None,
            surfaced: None,
        }
    }
}

/// Everything the knowledge base may ask about the log.
#[derive(Debug, Default, Serialize)]
pub struct LogFacts {
    /// The inputs.
    pub inputs: Vec<InputInfo>,
    /// Retained lines, all inputs, in input order.
    #[serde(skip)]
    pub records: Vec<Record>,
    /// Error incidents, in order.
    pub incidents: Vec<Incident>,
    /// The failure; `None` when the log shows none.
    pub failure: Option<Failure>,
    /// Milestones.
    pub milestones: Vec<Milestone>,
    /// Distinct warnings, by first line.
    pub warnings: Vec<WarningLine>,
    /// Warning lines in all.
    pub warning_total: u64,
    /// Facts named in the text.
    pub extracted: Extracted,
    /// Serving-loop counts per input.
    #[serde(skip)]
    pub serving: Vec<ServingStats>,
    /// Lines not retained (budget).
    pub dropped: u64,
    /// The last lines of each input: (source, line, text), oldest first.
    pub last_lines: Vec<(usize, u64, String)>,
    /// The first non-empty lines of each input (source, line, text): what a pasted
    /// report says in words before its log.
    pub first_lines: Vec<(usize, u64, String)>,
    /// Line ranges (source, first, last) of failures in other runs than the chosen one:
    /// evidence for this failure must not come from there.
    pub other_runs: Vec<(usize, u64, u64)>,
    /// When no failure was named: the last error-looking lines (source, line, text),
    /// oldest first, at most five.
    pub unnamed_errors: Vec<(usize, u64, String)>,
    /// With several inputs: the failure of each other input that holds a root error of
    /// its own (another process or node), one per input, in input order.
    pub other_inputs: Vec<OtherFailure>,
}

/// The failure another input holds.
#[derive(Debug, Clone, Serialize)]
pub struct OtherFailure {
    /// Input file index.
    pub source: usize,
    /// Class.
    pub class: FailureClass,
    /// Phase.
    pub phase: Phase,
    /// The line.
    pub line: u64,
    /// Timestamp text.
    pub time: Option<String>,
    /// First failing rank.
    pub rank: Option<u32>,
    /// The message.
    pub message: String,
}

impl LogFacts {
    /// Builds facts from scanned inputs; `gpu_names` lets the extractor find GPU names.
    pub fn build(
        scans: Vec<(PathBuf, ScanOutput)>,
        voc: &Vocabulary,
        gpu_names: &[&str],
    ) -> LogFacts {
        let mut f = LogFacts::default();
        let mut templates: Vec<(usize, HashMap<u64, TemplateStat>)> = Vec::new();
        for (i, (name, out)) in scans.into_iter().enumerate() {
            f.inputs.push(InputInfo {
                name,
                lines: out.lines,
                bytes: out.bytes,
                read_error: out.read_error,
            });
            f.records.extend(out.records);
            f.serving.push(out.serving);
            f.dropped += out.dropped;
            for (line, text) in &out.tail {
                f.last_lines.push((i, *line, text.clone()));
            }
            for (line, text) in out.head {
                f.first_lines.push((i, line, text));
            }
            templates.push((i, out.templates));
        }
        // What the lines state (arguments, versions, hardware) is read on a second core
        // while this one follows the tracebacks, milestones and incidents: the two are
        // independent, and each is about a third of a small log's facts.
        f.extracted = std::thread::scope(|s| {
            let records = &f.records;
            let stated = s.spawn(move || extract::extract(records, gpu_names));
            let tbs = traceback::collect(&f.records);
            f.milestones = milestones(voc, &f.records, &f.serving, &tbs);
            f.incidents = incidents(voc, &f.records, &tbs);
            f.warnings = warnings(voc, &templates, &mut f.warning_total);
            match stated.join() {
                Ok(x) => x,
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        let (mut failure, other_runs) = choose_failure(voc, &f, &templates);
        // An error given only by its number (CUDA, cuBLAS): the report, and the rules that
        // read the failure's message, see what the number means.
        if let Some(fl) = failure.as_mut() {
            if let Some(meaning) = voc.error_code_meaning(&fl.message) {
                fl.message = format!("{} ({meaning})", fl.message);
                if let Some(inc) = f.incidents.get_mut(fl.incident) {
                    inc.message = format!("{} ({meaning})", inc.message);
                }
            }
        }
        f.failure = failure;
        f.other_runs = other_runs;
        if f.failure.is_none() {
            f.unnamed_errors = unnamed_errors(voc, &f.records);
        }
        if f.inputs.len() > 1 {
            f.other_inputs = other_inputs(voc, &f);
        }
        f
    }

    /// The failure's incident.
    pub fn failure_incident(&self) -> Option<&Incident> {
        self.failure
            .as_ref()
            .and_then(|fl| self.incidents.get(fl.incident))
    }
}

/// The retained record of a line: `records` are in input order and, within an input, in
/// line order, so a binary search finds it.
pub(super) fn record_at(f: &LogFacts, source: usize, line: u64) -> Option<&Record> {
    f.records
        .binary_search_by(|r| (r.source, r.line).cmp(&(source, line)))
        .ok()
        .map(|i| &f.records[i])
}

/// The facts of one log given as text, as `diagnose` builds them (unit tests of the parts).
#[cfg(test)]
pub(crate) fn facts_of(text: &str) -> LogFacts {
    let voc = Vocabulary::embedded();
    let out = crate::scan::Scanner::new(voc, &[]).scan_reader(0, &mut text.as_bytes());
    LogFacts::build(vec![(PathBuf::from("t.log"), out)], voc, &[])
}
