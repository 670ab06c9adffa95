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
    /// (wrong output, a log that stops mid-way).
    fn without_incident(
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
        f.extracted = extract::extract(&f.records, gpu_names);
        f.milestones = milestones(voc, &f.records, &f.serving);
        let tbs = traceback::collect(&f.records);
        f.incidents = incidents(voc, &f.records, &tbs);
        f.warnings = warnings(voc, &templates, &mut f.warning_total);
        let (failure, other_runs) = choose_failure(voc, &f, &templates);
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

/// Each input other than the failure's that holds a root error of its own: the first
/// root of its last run (after its last start milestone).
fn other_inputs(voc: &Vocabulary, f: &LogFacts) -> Vec<OtherFailure> {
    let chosen = f.failure.as_ref().map(|x| x.source);
    let mut out = Vec::new();
    for source in 0..f.inputs.len() {
        if Some(source) == chosen {
            continue;
        }
        let last_start = f
            .milestones
            .iter()
            .filter(|m| m.source == source && m.phase == Phase::Startup)
            .map(|m| m.line)
            .max()
            .unwrap_or(0);
        let pick = |min: u8| {
            f.incidents.iter().find(|i| {
                i.source == source
                    && i.role == Role::Root
                    && i.strength >= min
                    && i.line >= last_start
            })
        };
        if let Some(inc) = pick(GENERIC_STRENGTH + 1).or_else(|| pick(GENERIC_STRENGTH)) {
            let (phase, _) = phase_of(voc, f, inc);
            out.push(OtherFailure {
                source,
                class: inc.class,
                phase,
                line: inc.key_line,
                time: inc.time_text.clone(),
                rank: inc.rank,
                message: inc.message.clone(),
            });
        }
    }
    out
}

/// The last error-looking lines that no signal named: an error level, an error banner
/// (`error-line` shape), or an exception line. A word like `fail` inside a
/// configuration dump, or a `#` comment, is not an error line.
fn unnamed_errors(voc: &Vocabulary, records: &[Record]) -> Vec<(usize, u64, String)> {
    let mut out: Vec<(usize, u64, String)> = records
        .iter()
        .rev()
        .filter(|r| {
            matches!(r.prefix.level, Some(Level::Error | Level::Critical))
                || (r.errorish
                    && !r.message().trim_start().starts_with('#')
                    && (is_error_line(voc, r)
                        || traceback::parse_exception_line(r.message().trim()).is_some()))
        })
        .take(5)
        .map(|r| (r.source, r.line, r.text.trim().chars().take(400).collect()))
        .collect();
    out.reverse();
    out
}

fn milestones(voc: &Vocabulary, records: &[Record], serving: &[ServingStats]) -> Vec<Milestone> {
    let mut out: Vec<Milestone> = Vec::new();
    for rec in records {
        let msg = rec.message();
        // A line that names a failure is not a milestone, whatever words it holds.
        if rec.errorish
            && rec.prefix.level.is_none_or(|l| l >= Level::Warning)
            && names_failure(voc, msg)
        {
            continue;
        }
        if msg.starts_with(' ') || msg.len() > 4000 {
            continue;
        }
        if let Some(shape) = voc.milestone(msg) {
            out.push(Milestone {
                phase: shape.phase,
                done: shape.done,
                label: shape.label,
                source: rec.source,
                line: rec.line,
                time: rec.prefix.time_text.clone(),
                rank: rec.prefix.effective_rank(),
            });
        }
    }
    for (source, s) in serving.iter().enumerate() {
        for (kind, phase, label) in [
            (s.prefill(), Phase::Prefill, "prefill"),
            (s.decode(), Phase::Decode, "decode"),
            (s.throughput(), Phase::Decode, "serving"),
        ] {
            if kind.0 > 0 {
                for line in [kind.1, kind.2] {
                    out.push(Milestone {
                        phase,
                        done: false,
                        label,
                        source,
                        line,
                        time: None,
                        rank: None,
                    });
                }
            }
        }
    }
    out.sort_by_key(|m| (m.source, m.line));
    out.dedup_by_key(|m| (m.source, m.line));
    out
}

/// The first phase a pasted report names in words, in its kept lines or its first lines.
fn prose_phase(voc: &Vocabulary, f: &LogFacts, source: usize) -> Option<(Phase, u64)> {
    prose_phase_within(voc, f, source, 0, u64::MAX)
}

/// The first phase named in words on lines `from..=to` of `source`.
fn prose_phase_within(
    voc: &Vocabulary,
    f: &LogFacts,
    source: usize,
    from: u64,
    to: u64,
) -> Option<(Phase, u64)> {
    let kept = f
        .records
        .iter()
        .filter(|r| r.source == source && r.line >= from && r.line <= to)
        .find_map(|r| voc.prose_phase(r.message()).map(|p| (p, r.line)));
    let first = f
        .first_lines
        .iter()
        .filter(|(s, l, _)| *s == source && *l >= from && *l <= to)
        .find_map(|(_, l, t)| voc.prose_phase(t).map(|p| (p, *l)));
    match (kept, first) {
        (Some(a), Some(b)) => Some(if b.1 < a.1 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// The line names a failure: a signal that can class an incident, or an exception line.
fn names_failure(voc: &Vocabulary, msg: &str) -> bool {
    voc.signal_matches(msg)
        .into_iter()
        .any(|s| voc.signals[s].strength >= 5)
        || traceback::parse_exception_line(msg.trim()).is_some()
}

/// Incidents from tracebacks and from error lines outside them.
fn incidents(voc: &Vocabulary, records: &[Record], tbs: &[Traceback]) -> Vec<Incident> {
    let sig = voc;
    let mut out = Vec::new();
    // Time estimate per record: the last timestamp seen in the same source.
    let mut last_time: HashMap<usize, (f64, String)> = HashMap::new();
    let mut times: Vec<Option<(f64, String)>> = Vec::with_capacity(records.len());
    for r in records {
        if let (Some(t), Some(tt)) = (r.prefix.time, &r.prefix.time_text) {
            last_time.insert(r.source, (t, tt.clone()));
        }
        times.push(last_time.get(&r.source).cloned());
    }
    let time_at = |source: usize, line: u64| -> Option<(f64, String)> {
        let idx = records.partition_point(|r| (r.source, r.line) <= (source, line));
        idx.checked_sub(1).and_then(|i| times[i].clone())
    };
    let in_tb = |source: usize, line: u64| {
        tbs.iter().any(|t| {
            t.source == source
                && t.start_line <= line
                && line <= t.end_line + t.exception.as_ref().map_or(0, |e| e.extra.len() as u64)
        })
    };

    for tb in tbs {
        let mut texts: Vec<String> = Vec::new();
        if let Some(ex) = &tb.exception {
            texts.push(format!("{}: {}", ex.type_name, ex.message));
            texts.extend(ex.extra.iter().cloned());
            // A bare exception (`AssertionError` alone) says what failed only through the
            // line that raised it: the assert's condition is its message.
            if ex.message.trim().is_empty() {
                if let Some(code) = tb.frames.last().and_then(|f| f.code.clone()) {
                    texts.push(code);
                }
            }
        }
        let mut inc = classify(
            sig,
            &texts,
            tb.source,
            tb.start_line,
            tb.exception.as_ref().map_or(tb.end_line, |e| e.line),
        );
        inc.end_line = tb.end_line;
        inc.rank = tb.rank;
        inc.frames = tb.frames.clone();
        inc.exception = tb.exception.clone();
        if let Some(ex) = &tb.exception {
            inc.message = quote(&format!("{}: {}", ex.type_name, ex.message));
            if inc.strength == 0 {
                inc.class = FailureClass::PythonError;
                inc.strength = 10;
                inc.role = Role::Root;
            }
            // An assert on tensor shapes is a shape mismatch, whatever the exception says.
            let asserts_shape = tb
                .frames
                .last()
                .and_then(|f| f.code.as_deref())
                .is_some_and(|c| {
                    // Both sides are shapes: a count checked against one dimension
                    // (`assert n == logits.shape[0]`) is bookkeeping, not layout.
                    let body = c.strip_prefix("assert").unwrap_or("");
                    let body = body.split(',').next().unwrap_or("");
                    let shapey = |s: &str| {
                        ["shape", "size(", ".dim", "numel"]
                            .iter()
                            .any(|w| s.contains(w))
                    };
                    c.starts_with("assert")
                        && body
                            .split_once("==")
                            .or_else(|| body.split_once("!="))
                            .is_some_and(|(a, b)| shapey(a) && shapey(b))
                });
            // Raised while a package builds (pip's build env, setup.py): a failed build,
            // whatever the exception type.
            let in_build = raised_in_build(voc, &tb.frames);
            if in_build && matches!(inc.class, FailureClass::PythonError) {
                inc.class = FailureClass::BuildError;
                inc.strength = 74;
                inc.signals.push("build-frames");
            }
            if asserts_shape && matches!(inc.class, FailureClass::PythonError) {
                inc.class = FailureClass::ShapeMismatch;
                inc.strength = 80;
                inc.signals.push("shape-assert");
            }
            // Config code raising a generic error is the config being rejected.
            let generic = matches!(
                ex.short_type(),
                "KeyError"
                    | "ValueError"
                    | "TypeError"
                    | "AttributeError"
                    | "AssertionError"
                    | "NotImplementedError"
                    | "IndexError"
            );
            if generic && inc.class == FailureClass::PythonError {
                let frame_text: String = tb
                    .frames
                    .iter()
                    .rev()
                    .take(3)
                    .map(|f| {
                        format!(
                            "{} {} {}\n",
                            f.file,
                            f.function,
                            f.code.as_deref().unwrap_or("")
                        )
                    })
                    .collect();
                let innermost_config = tb.frames.last().is_some_and(|f| {
                    f.file
                        .rsplit('/')
                        .next()
                        .is_some_and(|n| n.contains("config"))
                });
                if voc.shape(ShapeId::ConfigWords).is_match(&frame_text)
                    || voc.shape(ShapeId::ConfigWords).is_match(&inc.message)
                    || innermost_config
                {
                    inc.class = FailureClass::ConfigError;
                    inc.strength = 70;
                    inc.signals.push("config-code");
                }
            }
        } else if inc.strength == 0 {
            // Frames without an exception line: a truncated traceback; config code names the class.
            let frame_text: String = tb
                .frames
                .iter()
                .map(|f| {
                    format!(
                        "{} {} {}\n",
                        f.file,
                        f.function,
                        f.code.as_deref().unwrap_or("")
                    )
                })
                .collect();
            let in_build = raised_in_build(voc, &tb.frames);
            inc.class = if in_build {
                FailureClass::BuildError
            } else if voc.shape(ShapeId::ConfigWords).is_match(&frame_text) {
                FailureClass::ConfigError
            } else {
                FailureClass::PythonError
            };
            inc.strength = 8;
            inc.role = Role::Weak;
            inc.message = tb
                .frames
                .last()
                .map(|f| format!("traceback ends in {} ({}:{})", f.function, f.file, f.line))
                .unwrap_or_default();
        }
        if let Some(prev) = tb
            .chained_from
            .and_then(|i| tbs.get(i))
            .and_then(|t| t.exception.as_ref())
        {
            inc.cause_of = Some(format!("{}: {}", prev.type_name, prev.message));
        }
        if let Some((t, tt)) = time_at(tb.source, tb.start_line) {
            inc.time = Some(t);
            inc.time_text = Some(tt);
        }
        out.push(inc);
    }

    // Error lines outside tracebacks, grouped when adjacent on the same stream.
    let mut i = 0;
    while i < records.len() {
        let r = &records[i];
        // A group starts at a line that names a failure (a signal or an exception line),
        // not at any line that merely holds an error word (a file named assert.py).
        // An error the program says it ignores ("Ignore import error when loading ...",
        // "Exception ignored in ...") is not a failure.
        // A strong signal (an illegal address, an OOM) is a failure whatever level the
        // logger printed it at; weaker ones count from WARNING up. A line at error level
        // (or opening with an error banner) that no signal names is a generic failure,
        // used when nothing more specific failed.
        let candidate = r.errorish
            && !voc.shape(ShapeId::IgnoredImport).is_match(r.message())
            && !in_tb(r.source, r.line);
        let strengths: Vec<u8> = if candidate {
            sig.signal_matches(r.message())
                .into_iter()
                .map(|s| sig.signals[s].strength)
                .collect()
        } else {
            Vec::new()
        };
        let above_info = r.prefix.level.is_none_or(|l| l > Level::Info);
        let named = strengths.iter().any(|&st| st >= 80)
            || (above_info
                && (strengths.iter().any(|&st| st >= 5)
                    || traceback::parse_exception_line(r.message().trim()).is_some()
                    || traceback::find_exception_in_prose(r.message()).is_some()));
        let generic = candidate && !named && is_error_line(voc, r);
        let starts = candidate && (named || generic);
        if !starts {
            i += 1;
            continue;
        }
        let key = r.prefix.stream_key();
        let mut j = i + 1;
        let mut last_line = r.line;
        let mut group_time = r.prefix.time;
        while j < records.len() {
            let n = &records[j];
            // Error lines, indented detail, and short fillers of a paste (`[...]`, a code fence).
            // A table (Triton's model status) wraps a long cell onto rows of its own.
            let continues = n.errorish
                || n.message().starts_with([' ', '\t'])
                || n.message().trim().len() <= 5
                || (table_row(r.message()) && table_row(n.message()));
            // A pasted line without a prefix joins the prefixed lines next to it.
            let other_key = n.prefix.stream_key();
            let same_stream = other_key == key
                || ((other_key.is_empty() || key.is_empty()) && n.line <= last_line + 2);
            if n.source != r.source
                || n.line > last_line + 2
                || !same_stream
                || in_tb(n.source, n.line)
                || !continues
            {
                break;
            }
            // A line stamped seconds later, or a second exception line, starts another incident.
            let later =
                matches!((group_time, n.prefix.time), (Some(a), Some(b)) if (b - a).abs() > 5.0);
            group_time = group_time.or(n.prefix.time);
            if later {
                break;
            }
            last_line = n.line;
            j += 1;
        }
        // The prefix parser strips `NCCL WARN`; it is the class's best word, so keep it.
        let mut texts: Vec<String> = Vec::new();
        for x in &records[i..j] {
            let wrapped = wrapped_cell(x.message()).zip(texts.last_mut());
            if let Some((rest, prev)) = wrapped.filter(|(_, p)| p.len() < 1000) {
                // The wrapped part of a table cell continues the cell above it.
                let head = prev.trim_end().trim_end_matches('|').trim_end().to_string();
                *prev = format!("{head} {rest}");
                continue;
            }
            texts.push(match x.text.find(" NCCL WARN ") {
                Some(_) if !x.message().contains("NCCL") => format!("NCCL WARN {}", x.message()),
                _ => x.message().to_string(),
            });
        }
        let mut inc = classify(sig, &texts, r.source, r.line, r.line);
        // A warning line needs a strong signal to count as a root failure; a weaker one
        // (a failed import logged as a warning) is kept as a weak failure, used when
        // nothing else failed.
        // NCCL prints its real failures as `NCCL WARN` too (`Cuda failure`, `Connect
        // to ... failed`); only its known-harmless notices count as warnings.
        let nccl_warn = r.text.contains(" NCCL WARN ");
        let is_warning = (r.prefix.level == Some(Level::Warning)
            && (!nccl_warn || voc.shape(ShapeId::BenignNcclWarn).is_match(r.message())))
            || voc.shape(ShapeId::PythonWarning).is_match(r.message());
        let weak_warning = is_warning && inc.strength < 85;
        let kept_as_weak = weak_warning
            && inc.class == FailureClass::ImportError
            && !voc.shape(ShapeId::IgnoredImport).is_match(&inc.message);
        if kept_as_weak && inc.role == Role::Root {
            inc.role = Role::Weak;
        }
        if inc.strength >= 5 && (!weak_warning || kept_as_weak) {
            inc.end_line = last_line;
            inc.rank = records[i..j].iter().find_map(|x| x.prefix.effective_rank());
            if let Some(line) = records[i..j]
                .iter()
                .find(|x| traceback::parse_exception_line(x.message().trim()).is_some())
            {
                if inc.message.is_empty() {
                    inc.message = line.message().trim().to_string();
                }
            }
            let own = records[i..j]
                .iter()
                .find_map(|x| Some((x.prefix.time?, x.prefix.time_text.clone()?)));
            if let Some((t, tt)) = own.or_else(|| time_at(r.source, r.line)) {
                inc.time = Some(t);
                inc.time_text = Some(tt);
            }
            out.push(inc);
        } else if let Some((t, m)) = texts.iter().find_map(|x| {
            traceback::parse_exception_line(x.trim())
                .or_else(|| traceback::find_exception_in_prose(x))
        }) {
            // An exception line on its own, with no signal: a python error.
            let mut inc = classify(sig, &texts, r.source, r.line, r.line);
            inc.class = FailureClass::PythonError;
            inc.strength = 10;
            inc.role = if is_warning { Role::Weak } else { Role::Root };
            inc.message = format!("{t}: {m}");
            inc.end_line = last_line;
            inc.rank = r.prefix.effective_rank();
            out.push(inc);
        } else if generic && !is_warning {
            // An error line no signal names: a failure of last resort, so that a log
            // holding one never reads as clean.
            let mut inc = classify(sig, &texts, r.source, r.line, r.line);
            inc.class = FailureClass::PythonError;
            inc.strength = GENERIC_STRENGTH;
            inc.role = Role::Root;
            inc.signals.push("error-line");
            inc.message = quote(r.message());
            inc.end_line = last_line;
            inc.rank = r.prefix.effective_rank();
            if let Some((t, tt)) = time_at(r.source, r.line) {
                inc.time = Some(t);
                inc.time_text = Some(tt);
            }
            out.push(inc);
        }
        i = j;
    }
    out.sort_by_key(|x| (x.source, x.line));
    // A native backtrace printed just before an abort belongs to it.
    let mut absorbed = Vec::new();
    for i in 0..out.len() {
        if !out[i].frames.is_empty() || out[i].exception.is_some() {
            continue;
        }
        let (src, line) = (out[i].source, out[i].line);
        // Frames printed right before the abort, or right after it (a crash handler's dump).
        let end = out[i].end_line;
        let donor = (0..out.len()).rev().find(|&j| {
            let x = &out[j];
            j != i
                && x.source == src
                && x.exception.is_none()
                && !x.frames.is_empty()
                && x.role == Role::Weak
                && ((x.end_line < line && line <= x.end_line + 3)
                    || (x.line > line && x.line <= end + 2))
        });
        if let Some(j) = donor {
            out[i].frames = out[j].frames.clone();
            absorbed.push(j);
        }
    }
    let mut k = 0;
    out.retain(|_| {
        k += 1;
        !absorbed.contains(&(k - 1))
    });
    out
}

/// The strength of an error line that no signal names: below every signal and below a
/// bare exception line (10), so that anything more specific wins.
const GENERIC_STRENGTH: u8 = 6;

/// A line at error level, or one that opens with an error banner (`ERROR:`, `error:`,
/// `FATAL`, `fatal error`, `[E]`, ...; the `error-line` shape).
/// Frames run by a package build (pip's build env, setuptools): the phase vocabulary's
/// `install` paths say so.
fn raised_in_build(voc: &Vocabulary, frames: &[Frame]) -> bool {
    frames
        .iter()
        .any(|f| voc.phase_of_function(&f.function, &f.file) == Some(Phase::Install))
}

/// A row of a text table (`| name | 1 | UNAVAILABLE: ... |`).
fn table_row(msg: &str) -> bool {
    msg.trim_start().starts_with('|')
}

/// The text of a table row that only continues a wrapped cell: its leading cells are empty
/// (`|      |     | mpiSize == tp * pp (...) |`).
fn wrapped_cell(msg: &str) -> Option<String> {
    let cells: Vec<&str> = msg.trim().trim_matches('|').split('|').collect();
    let first = cells.iter().position(|c| !c.trim().is_empty())?;
    (table_row(msg) && first > 0).then(|| {
        cells[first..]
            .iter()
            .map(|c| c.trim())
            .collect::<Vec<_>>()
            .join(" ")
    })
}

fn is_error_line(voc: &Vocabulary, r: &Record) -> bool {
    matches!(r.prefix.level, Some(Level::Error | Level::Critical))
        || voc.shape(ShapeId::ErrorLine).is_match(r.message())
        || voc.is_banner(&r.text)
}

/// Classifies a group of texts by its strongest signal.
fn classify(
    sig: &Vocabulary,
    texts: &[String],
    source: usize,
    line: u64,
    key_line: u64,
) -> Incident {
    let mut inc = Incident {
        source,
        line,
        end_line: line,
        time: None,
        time_text: None,
        rank: None,
        class: FailureClass::PythonError,
        strength: 0,
        role: Role::Cascade,
        key_line,
        message: String::new(),
        signals: Vec::new(),
        phase_hint: None,
        asynchronous: false,
        exception: None,
        frames: Vec::new(),
        cause_of: None,
    };
    let mut best_root: Option<(u8, usize, usize)> = None; // strength, signal, text index
    let mut best_cascade: Option<(u8, usize, usize)> = None;
    // The first strong synchronous root, for an asynchronous fault reported after it.
    let mut first_sync_root: Option<(u8, usize, usize)> = None;
    let mut phase: Option<(u8, Phase)> = None;
    for (ti, t) in texts.iter().enumerate() {
        if t.contains("asynchronously reported") {
            inc.asynchronous = true;
        }
        for s in sig.signal_matches(t) {
            let sg = &sig.signals[s];
            if !inc.signals.contains(&sg.id) {
                inc.signals.push(sg.id);
            }
            inc.asynchronous |= sg.asynchronous;
            if let Some(p) = sg.phase {
                if phase.is_none_or(|(st, _)| sg.strength > st) {
                    phase = Some((sg.strength, p));
                }
            }
            // Strength-1 rows only hint at the phase; they never name the class.
            if sg.strength < 5 {
                continue;
            }
            let slot = if sg.role == Role::Cascade {
                &mut best_cascade
            } else {
                &mut best_root
            };
            if slot.is_none_or(|(st, _, _)| sg.strength > st) {
                *slot = Some((sg.strength, s, ti));
            }
            if sg.role == Role::Root
                && !sg.asynchronous
                && sg.strength >= 85
                && first_sync_root.is_none()
            {
                first_sync_root = Some((sg.strength, s, ti));
            }
        }
    }
    // An asynchronous fault (a launch failure, an illegal address) is reported at the
    // next call after whatever went wrong: a strong error of another class printed
    // before it in the same block (a kernel with no code for this GPU) is its root.
    if let (Some(best), Some(first)) = (best_root, first_sync_root) {
        let (b, f) = (&sig.signals[best.1], &sig.signals[first.1]);
        if b.asynchronous && first.2 < best.2 && f.class != b.class {
            best_root = Some(first);
        }
    }
    inc.phase_hint = phase.map(|(_, p)| p);
    let chosen = match (best_root, best_cascade) {
        (Some(r), _) if r.0 >= 5 => Some((r, sig.signals[r.1].role)),
        (_, Some(c)) => Some((c, Role::Cascade)),
        (Some(r), None) => Some((r, sig.signals[r.1].role)),
        (None, None) => None,
    };
    if let Some(((strength, s, ti), role)) = chosen {
        inc.class = sig.signals[s].class;
        inc.strength = strength;
        inc.role = role;
        inc.message = quote(&texts[ti]);
        inc.key_line = key_line
            + if texts.len() > 1 && key_line == line {
                ti as u64
            } else {
                0
            };
    }
    inc
}

fn warnings(
    voc: &Vocabulary,
    templates: &[(usize, HashMap<u64, TemplateStat>)],
    total: &mut u64,
) -> Vec<WarningLine> {
    let mut out = Vec::new();
    for (source, map) in templates {
        for t in map.values() {
            let ex = t.example.as_str();
            let is_warning = t.level == Some(Level::Warning)
                || ex.contains("Warning:")
                || ex.starts_with("WARNING")
                || ex.contains("UserWarning")
                || ex.contains("FutureWarning")
                || ex.contains("DeprecationWarning")
                || ex.contains("friendly reminder")
                || (t.level.is_none() && voc.shape(ShapeId::WarningWords).is_match(ex));
            if !is_warning || ex.trim().is_empty() || ex.trim().chars().all(|c| c == '*') {
                continue;
            }
            *total += t.count;
            let mut ranks = t.ranks.clone();
            ranks.sort_unstable();
            out.push(WarningLine {
                text: ex.trim().chars().take(400).collect(),
                count: t.count,
                ranks,
                source: *source,
                line: t.first_line,
            });
        }
    }
    out.sort_by_key(|w| (w.source, w.line));
    out
}

/// Splits root incidents into runs (restarts) and picks the failure; also
/// returns the line ranges of root incidents that belong to other runs.
fn choose_failure(
    voc: &Vocabulary,
    f: &LogFacts,
    templates: &[(usize, HashMap<u64, TemplateStat>)],
) -> (Option<Failure>, Vec<(usize, u64, u64)>) {
    let order = |i: &Incident| (i.time.unwrap_or(f64::NAN), i.source, i.line);
    // Roots that a signal or an exception names; generic error lines only when none does.
    let root =
        |i: &usize, min: u8| f.incidents[*i].role == Role::Root && f.incidents[*i].strength >= min;
    let mut roots: Vec<usize> = (0..f.incidents.len())
        .filter(|i| root(i, GENERIC_STRENGTH + 1))
        .collect();
    if roots.is_empty() {
        roots = (0..f.incidents.len())
            .filter(|i| root(i, GENERIC_STRENGTH))
            .collect();
    }
    let all_timed = roots.iter().all(|&i| f.incidents[i].time.is_some());
    let multi_source = f.inputs.len() > 1;
    let sort_key = |i: &usize| {
        let x = &f.incidents[*i];
        let (t, s, l) = order(x);
        if all_timed && multi_source {
            (t, 0usize, 0u64)
        } else {
            (0.0, s, l)
        }
    };
    roots.sort_by(|a, b| {
        sort_key(a)
            .partial_cmp(&sort_key(b))
            .unwrap_or(std::cmp::Ordering::Equal)
    });

    // Runs: a relaunch (a start milestone) or a long pause between two root incidents.
    // Each run remembers where it starts: the relaunch line, else its first incident.
    let split_runs = |roots: &[usize]| -> Vec<(Vec<usize>, u64, bool)> {
        let mut runs: Vec<(Vec<usize>, u64, bool)> = Vec::new();
        for &i in roots {
            let x = &f.incidents[i];
            let split = match runs.last().and_then(|r| r.0.last()) {
                None => Some((1, false)),
                Some(&p) => {
                    let prev = &f.incidents[p];
                    let relaunch = if prev.source == x.source {
                        f.milestones
                            .iter()
                            .find(|m| {
                                m.source == x.source
                                    && m.phase == Phase::Startup
                                    && m.line > prev.end_line
                                    && m.line < x.line
                            })
                            .map(|m| m.line)
                    } else {
                        None
                    };
                    // A long pause means a new attempt, unless the later error is the kind
                    // that comes from waiting on a failed peer (timeouts, aborts of a group).
                    let waiting = matches!(x.class, FailureClass::CommError | FailureClass::Hang);
                    // A pause between two inputs is two processes, not a restart.
                    let pause = !waiting
                        && prev.source == x.source
                        && matches!((prev.time, x.time), (Some(a), Some(b)) if b - a > 300.0);
                    match relaunch {
                        Some(l) => Some((l, true)),
                        None if pause => Some((prev.end_line + 1, false)),
                        None => None,
                    }
                }
            };
            match split {
                Some((start, relaunch)) => runs.push((vec![i], start, relaunch)),
                None => {
                    if let Some(r) = runs.last_mut() {
                        r.0.push(i);
                    }
                }
            }
        }
        runs
    };
    let mut runs = split_runs(&roots);
    // The members of the last run over every input: ranks that failed alike in other
    // files (one log per node) are ranks of this failure.
    let members_all: Option<Vec<usize>> = runs.last().map(|r| r.0.clone());
    // Several inputs: the runs that matter are those of the input holding the chosen
    // failure; another input's failures are its own (`other_inputs`), never an
    // earlier run of this one.
    if let Some(source) = runs.last().map(|r| f.incidents[r.0[0]].source) {
        if roots.iter().any(|&i| f.incidents[i].source != source) {
            let own: Vec<usize> = roots
                .iter()
                .copied()
                .filter(|&i| f.incidents[i].source == source)
                .collect();
            runs = split_runs(&own);
        }
    }
    // Line ranges of the earlier runs, which evidence for the last one must avoid.
    let mut other_runs: Vec<(usize, u64, u64)> = Vec::new();
    for k in 0..runs.len().saturating_sub(1) {
        let (ref incs, start, _) = runs[k];
        let source = f.incidents[incs[0]].source;
        let (_, next_start, next_relaunch) = runs[k + 1];
        let begin = if k == 0 && !next_relaunch {
            f.incidents[incs[0]].line
        } else {
            start
        };
        if f.incidents[runs[k + 1].0[0]].source == source && next_start > begin {
            other_runs.push((source, begin, next_start - 1));
        }
        for &i in incs {
            other_runs.push((
                f.incidents[i].source,
                f.incidents[i].line,
                f.incidents[i].end_line,
            ));
        }
    }
    let earlier: Vec<(FailureClass, u64)> = runs
        .iter()
        .take(runs.len().saturating_sub(1))
        .map(|r| (f.incidents[r.0[0]].class, f.incidents[r.0[0]].key_line))
        .collect();
    // A long restart loop repeats its launch lines more often than the scanner keeps
    // examples of one template: the launches it did not keep are runs too.
    let unseen = unseen_relaunches(f, templates, &runs);
    let unseen_runs = (unseen > 0 && !runs.is_empty()).then(|| {
        let at: Vec<u64> = runs.iter().map(|r| f.incidents[r.0[0]].key_line).collect();
        let widest = (1..at.len())
            .max_by_key(|&k| (at[k].saturating_sub(at[k - 1]), std::cmp::Reverse(k)))
            .unwrap_or(at.len() - 1);
        (widest, unseen)
    });
    let (run_idx, chosen, run_start) = if let Some(run) = runs.last() {
        (runs.len() - 1 + unseen, run.0[0], run.1)
    } else {
        // No root: a weak failure, else a cascade, else nothing.
        let pick = |role: Role| {
            (0..f.incidents.len())
                .filter(|&i| f.incidents[i].role == role && f.incidents[i].strength >= 5)
                .max_by_key(|&i| (f.incidents[i].strength, std::cmp::Reverse(i)))
        };
        match pick(Role::Weak).or_else(|| pick(Role::Cascade)) {
            Some(i) => (0, i, 1),
            None => return (wrong_output(voc, f), other_runs),
        }
    };
    let inc = &f.incidents[chosen];
    let run_members: Vec<usize> = members_all
        .filter(|m| m.contains(&chosen))
        .or_else(|| runs.last().map(|r| r.0.clone()))
        .unwrap_or_else(|| vec![chosen]);
    let (mut phase, mut phase_reason) = phase_of(voc, f, inc);
    // A failed import logged as a warning, then a Python error: frameworks catch the
    // ImportError, degrade, and fail later ("X requires Y"); the import is the root.
    let import_warning = if inc.class == FailureClass::PythonError {
        let sig = voc;
        f.records
            .iter()
            .filter(|r| {
                r.source == inc.source
                    && r.line <= inc.end_line
                    && r.line >= run_start
                    && r.prefix.level == Some(Level::Warning)
            })
            .find(|r| {
                sig.signal_matches(r.message())
                    .into_iter()
                    .any(|s| sig.signals[s].class == FailureClass::ImportError)
            })
    } else {
        None
    };
    if import_warning.is_some() {
        phase = Phase::Startup;
        phase_reason = "a failed import was logged before it".into();
    }
    let mut ranks: Vec<u32> = run_members
        .iter()
        .map(|&i| &f.incidents[i])
        .filter(|x| x.class == inc.class)
        .filter_map(|x| x.rank)
        .collect();
    ranks.sort_unstable();
    ranks.dedup();
    // A kernel assertion printed before the Python error: the error that
    // followed names the rank, the exception and the sync point.
    let surfaced = if inc.exception.is_none() {
        f.incidents
            .iter()
            .filter(|x| {
                x.source == inc.source
                    && x.line > inc.end_line
                    && x.line <= inc.end_line + 400
                    && x.exception.is_some()
            })
            .find(|x| x.class == inc.class || x.asynchronous)
    } else {
        None
    };
    let frames_of = surfaced.unwrap_or(inc);
    let sync_point = if inc.asynchronous || frames_of.asynchronous {
        frames_of
            .frames
            .iter()
            .rev()
            .find(|fr| !fr.file.contains("/torch/"))
            .map(|fr| match &fr.code {
                Some(c) => format!(
                    "{} ({}:{}): {}",
                    fr.function,
                    short_path(&fr.file),
                    fr.line,
                    c
                ),
                None => format!("{} ({}:{})", fr.function, short_path(&fr.file), fr.line),
            })
    } else {
        None
    };
    let failure = Failure {
        class: if import_warning.is_some() {
            FailureClass::ImportError
        } else {
            inc.class
        },
        phase,
        phase_reason,
        rank: inc.rank.or(surfaced.and_then(|x| x.rank)),
        ranks,
        source: inc.source,
        line: import_warning.map_or(inc.key_line, |r| r.line),
        time: surfaced
            .and_then(|x| x.time_text.clone())
            .or_else(|| inc.time_text.clone()),
        message: import_warning.map_or_else(|| inc.message.clone(), |r| quote(r.message())),
        exception: inc
            .exception
            .as_ref()
            .or(surfaced.and_then(|x| x.exception.as_ref()))
            .map(|e| e.type_name.clone()),
        surfaced: match import_warning {
            Some(_) => Some((inc.key_line, inc.message.clone())),
            // The line of the message it quotes, not the traceback header above it.
            None => surfaced.map(|x| (x.key_line, x.message.clone())),
        },
        frames: frames_of
            .frames
            .iter()
            .rev()
            .take(6)
            .rev()
            .cloned()
            .collect(),
        asynchronous: inc.asynchronous || surfaced.is_some_and(|x| x.asynchronous),
        sync_point,
        signals: inc.signals.clone(),
        incident: chosen,
        run: (run_idx, runs.len().max(1) + unseen),
        run_start,
        earlier_runs: earlier,
        unseen_runs,
    };
    (Some(failure), other_runs)
}

/// Launches of a restart loop that the scanner counted but did not keep. The lines of the
/// last run's relaunch template between its start and its first root error are what one
/// launch prints of it; the scanner's count of that template in the input (kept or not),
/// divided by that, is the number of launches, plus one when the first failure came
/// before the template's first line. What exceeds the runs seen is unseen (byte-identical
/// pasted copies, whose launches cannot be told apart by time, are counted this way too).
fn unseen_relaunches(
    f: &LogFacts,
    templates: &[(usize, HashMap<u64, TemplateStat>)],
    runs: &[(Vec<usize>, u64, bool)],
) -> usize {
    let Some((incs, start, true)) = runs.last() else {
        return 0;
    };
    let first = &f.incidents[incs[0]];
    let source = first.source;
    let Some(rec) = f
        .records
        .iter()
        .find(|r| r.source == source && r.line == *start)
    else {
        return 0;
    };
    let per_launch = f
        .records
        .iter()
        .filter(|r| {
            r.source == source
                && r.line >= *start
                && r.line < first.line
                && r.template == rec.template
        })
        .count();
    let Some(stat) = templates
        .iter()
        .find(|(s, _)| *s == source)
        .and_then(|(_, m)| m.get(&rec.template))
    else {
        return 0;
    };
    if per_launch == 0 {
        return 0;
    }
    let first_root = f.incidents[runs[0].0[0]].line;
    let launches = stat.count as usize / per_launch + usize::from(stat.first_line > first_root);
    launches.saturating_sub(runs.len())
}

/// A traceback whose frames run through one module's top level into another's
/// (`<module>` importing `<module>`), ending at most two calls below the last
/// import: the error is raised while the program imports, before it runs.
fn raised_while_importing(frames: &[crate::traceback::Frame]) -> Option<&str> {
    let last_module = frames.iter().rposition(|fr| fr.function == "<module>")?;
    let chained = last_module > 0 && frames[last_module - 1].function == "<module>";
    (chained && frames.len() - 1 - last_module <= 2).then(|| frames[last_module].file.as_str())
}

/// The build error comes from a compiler run at run time (Triton, Inductor, a JIT-built extension).
fn jit_build(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> bool {
    let re = voc.shape(ShapeId::JitBuild);
    re.is_match(&inc.message)
        || f.records.iter().any(|r| {
            r.source == inc.source
                && r.line + 5 >= inc.line
                && r.line <= inc.end_line
                && re.is_match(r.message())
        })
}

/// The phase named by the function that prints a line of the failing block (or
/// one of the two lines before it), in the `function_name: message` form of
/// native tools. Only identifiers with an underscore count: `Error:` or `Note:`
/// are words, not functions.
/// The first code identifier of a message (a name with `_`, a dotted path or a camelCase
/// hump; English words are none of these) that the phase words name.
fn message_identifier_phase(voc: &Vocabulary, msg: &str) -> Option<(Phase, String)> {
    msg.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .map(|t| t.trim_matches('.'))
        .filter(|t| {
            (4..=80).contains(&t.len())
                && t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        })
        .filter(|t| {
            let b = t.as_bytes();
            t.contains('_')
                || (t.contains('.') && !t.contains(".."))
                || b.windows(2)
                    .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        })
        .find_map(|t| {
            voc.phase_of_function(t, "")
                .filter(|p| *p != Phase::Unknown)
                .map(|p| (p, t.to_string()))
        })
}

fn block_function_phase(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    let named = |r: &Record| {
        let msg = r.message().trim_start();
        let (head, _) = msg.split_once(": ")?;
        let ident = head.trim();
        let is_ident = ident.contains('_')
            && ident.len() <= 80
            && ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && ident.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
        if !is_ident {
            return None;
        }
        voc.phase_of_function(ident, "")
            .filter(|p| *p != Phase::Unknown)
            .map(|p| (p, ident.to_string()))
    };
    let of_source = f.records.iter().filter(|r| r.source == inc.source);
    // The block itself first, then the lines just before it, nearest first.
    of_source
        .clone()
        .filter(|r| r.line >= inc.line && r.line <= inc.end_line.max(inc.line + 1))
        .find_map(named)
        .or_else(|| {
            of_source
                .filter(|r| r.line < inc.line && r.line + 2 >= inc.line)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .find_map(named)
        })
}

fn short_path(p: &str) -> String {
    let parts: Vec<&str> = p.rsplit('/').take(3).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// The phase of an incident, and why.
fn phase_of(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> (Phase, String) {
    if let Some(p) = inc.phase_hint {
        // A start-up hint (an import that fails, a version check) yields to a frame that
        // names a later step: the import ran lazily, inside the loader that asked for it.
        let later = (p == Phase::Startup)
            .then(|| {
                inc.frames.iter().rev().find_map(|fr| {
                    voc.phase_of_function(&fr.function, &fr.file)
                        .filter(|q| !matches!(q, Phase::Unknown | Phase::Startup | Phase::Install))
                        .map(|q| (q, fr.function.as_str()))
                })
            })
            .flatten();
        if let Some((q, func)) = later {
            return (q, format!("the error is raised inside {func}"));
        }
        return (p, "the error message names it".into());
    }
    let mut ambiguous: Option<&str> = None;
    for fr in inc.frames.iter().rev() {
        match voc.phase_of_function(&fr.function, &fr.file) {
            // A frame that names two phases at once (sampling: the first token is
            // prefill, later ones decode) leaves it to the outer frames.
            Some(Phase::Unknown) => {
                ambiguous.get_or_insert(fr.function.as_str());
            }
            Some(p) => return (p, format!("the traceback passes through {}", fr.function)),
            None => {}
        }
    }
    if let Some(func) = ambiguous {
        // Output already began (a decode milestone is the last before it): a later token.
        // A prompt pass is the last: its first token.
        let last = f
            .milestones
            .iter()
            .rfind(|m| m.source == inc.source && m.line < inc.line);
        match last.map(|m| m.phase) {
            Some(Phase::Decode) => {
                return (
                    Phase::Decode,
                    format!("the traceback is in {func}, and tokens were already being generated (line {})", last.map_or(0, |m| m.line)),
                )
            }
            Some(Phase::Prefill) if !last.is_some_and(|m| m.done) => {
                return (
                    Phase::Prefill,
                    format!("the traceback is in {func}, right after a prompt pass (line {}): the first token", last.map_or(0, |m| m.line)),
                )
            }
            _ => {}
        }
        return (
            Phase::Unknown,
            format!("the traceback is in {func}, which runs for the first token (prefill) and every later one (decode)"),
        );
    }
    // A traceback cut short (a paste, a `[...]`) ends on a frame whose code line calls the
    // step that was running (`self.init_cuda_graph()`): the call names it as a frame would.
    if let Some((p, call)) = inc
        .frames
        .last()
        .and_then(|fr| fr.code.as_deref())
        .and_then(called_function)
        .and_then(|call| voc.phase_of_function(call, "").map(|p| (p, call)))
        .filter(|(p, _)| *p != Phase::Unknown)
    {
        return (p, format!("the last frame calls {call}"));
    }
    // The message names the code that raised (`ServerArgs() got multiple values for ...`,
    // `load_weights() got an unexpected keyword argument`): its identifiers are read as
    // frames would be, when no frame said anything.
    if let Some((p, ident)) = message_identifier_phase(voc, &inc.message) {
        return (p, format!("the message names {ident}"));
    }
    // A native tool's own function names its lines (`llama_model_load: ...`,
    // `ggml_gallocr_reserve_n: failed to allocate ...`): the failing block's and the
    // lines just before it say which step ran, as a traceback's frames would.
    if let Some((p, func)) = block_function_phase(voc, f, inc) {
        return (p, format!("the failing lines are printed by {func}"));
    }
    // Raised by module-level code while one module imports another: the program
    // never got past its imports.
    if inc.class != FailureClass::BuildError {
        if let Some(file) = raised_while_importing(&inc.frames) {
            return (
                Phase::Startup,
                format!("it is raised while importing {}", short_path(file)),
            );
        }
    }
    // A build error right after an install command is an install.
    if inc.class == FailureClass::BuildError {
        let sig = voc;
        let install = f
            .records
            .iter()
            .filter(|r| r.source == inc.source && r.line <= inc.line && r.line + 30 >= inc.line)
            .any(|r| {
                sig.signal_matches(r.message())
                    .into_iter()
                    .any(|s| sig.signals[s].id == "wheel-build")
            });
        if install {
            return (Phase::Install, "an install command precedes it".into());
        }
    }
    // The same error printed again right after (another rank, or the
    // framework's own traceback of it) may name the phase.
    // A traceback printed right after an error line is usually that error surfacing,
    // whatever class its own exception has.
    // A traceback with no exception of its own (cut, or a parent process's report of a
    // worker's failure) cannot be another error: it is this one surfacing.
    let no_error_of_its_own =
        |x: &Incident| x.exception.is_none() && x.strength <= GENERIC_STRENGTH.max(8);
    for other in f.incidents.iter().filter(|x| {
        x.source == inc.source
            && x.line > inc.end_line
            && x.line <= inc.end_line + 80
            && (x.class == inc.class
                || (inc.frames.is_empty() && !x.frames.is_empty())
                || (!x.frames.is_empty() && no_error_of_its_own(x)))
    }) {
        if let Some(p) = other.phase_hint.filter(|_| other.class == inc.class) {
            return (p, format!("the same error at line {} names it", other.line));
        }
        if raised_while_importing(&other.frames).is_some() {
            return (
                Phase::Startup,
                format!(
                    "the traceback at line {} is raised while importing",
                    other.line
                ),
            );
        }
        for fr in other.frames.iter().rev() {
            if let Some(p) = voc
                .phase_of_function(&fr.function, &fr.file)
                .filter(|p| *p != Phase::Unknown)
            {
                return (
                    p,
                    format!(
                        "the traceback of the same error at line {} passes through {}",
                        other.line, fr.function
                    ),
                );
            }
        }
    }
    // An error line printed just before the traceback (the engine's own message,
    // then the Python exception it turned into) may name the phase.
    if let Some(prev) = f.incidents.iter().rfind(|x| {
        x.source == inc.source
            && x.end_line < inc.line
            && (x.end_line + 3 >= inc.line || (x.role == Role::Weak && x.end_line + 15 >= inc.line))
    }) {
        if let Some(p) = prev.phase_hint {
            return (
                p,
                format!("the error at line {} just before names it", prev.line),
            );
        }
    }
    // The failing block's own words ("crashes as soon as it receives the next batch").
    if let Some((p, line)) = prose_phase_within(voc, f, inc.source, inc.line, inc.end_line) {
        return (p, format!("the failing block says so at line {line}"));
    }
    // The last milestone before the failure, on the failing rank when it has any.
    let before: Vec<&Milestone> = f
        .milestones
        .iter()
        .filter(|m| m.source == inc.source && m.line < inc.line)
        .collect();
    let on_rank: Vec<&Milestone> = match inc.rank {
        Some(r) => before
            .iter()
            .copied()
            .filter(|m| m.rank == Some(r))
            .collect(),
        None => Vec::new(),
    };
    let pool = if on_rank.is_empty() {
        &before
    } else {
        &on_rank
    };
    if let Some(m) = pool.last() {
        let runtime_fault = matches!(
            inc.class,
            FailureClass::DeviceSideAssert
                | FailureClass::NoKernelForArch
                | FailureClass::IllegalMemoryAccess
                | FailureClass::GpuOom
                | FailureClass::ShapeMismatch
                | FailureClass::MissingWeights
                | FailureClass::CommError
                | FailureClass::Hang
        );
        let phase = if m.done { successor(m.phase) } else { m.phase };
        if !(phase == Phase::Startup && runtime_fault) && phase != Phase::Shutdown {
            return (phase, format!("after line {} ({})", m.line, m.label));
        }
    }
    // Serving-loop frames (`execute_model`, `event_loop_overlap`) say the server was
    // serving, which is weaker than a milestone (the warm-up request runs there too).
    for fr in inc.frames.iter().rev() {
        if voc.serving_function(&fr.function) {
            return (
                Phase::Decode,
                format!(
                    "the traceback passes through the serving loop ({})",
                    fr.function
                ),
            );
        }
    }
    // A pasted report often says in words when it broke ("on the first request").
    if let Some((p, line)) = prose_phase(voc, f, inc.source) {
        return (p, format!("the report says so at line {line}"));
    }
    // A shape that does not fit, raised inside a module's `forward`, is the model running on
    // its first input, not the loader (which raises outside any forward).
    if inc.class == FailureClass::ShapeMismatch
        && inc.frames.iter().any(|fr| fr.function == "forward")
    {
        return (
            Phase::Prefill,
            "the shape error is raised in a module's forward, running the model on its input"
                .into(),
        );
    }
    let by_class = match inc.class {
        FailureClass::ImportError | FailureClass::ConfigError => Some(Phase::Startup),
        // A collective that had already run many times was set up long before.
        FailureClass::CommError if !voc.shape(ShapeId::LateCollective).is_match(&inc.message) => {
            Some(Phase::CommInit)
        }
        FailureClass::MissingWeights | FailureClass::ShapeMismatch => Some(Phase::WeightLoad),
        // With no server milestone before it, a compiler error is a build from source,
        // unless a just-in-time compiler (Triton, Inductor, a JIT extension) ran it.
        FailureClass::BuildError if !jit_build(voc, f, inc) => Some(Phase::Install),
        _ => None,
    };
    match by_class {
        Some(p) => (p, format!("{} errors happen there", inc.class)),
        None => (Phase::Unknown, "the log does not say".into()),
    }
}

fn successor(p: Phase) -> Phase {
    match p {
        Phase::CommInit => Phase::WeightLoad,
        Phase::WeightLoad => Phase::MemoryPlan,
        Phase::MemoryPlan => Phase::GraphCapture,
        Phase::GraphCapture => Phase::Warmup,
        // A server that became ready and then failed with nothing served in between
        // failed on its first request's prompt pass.
        Phase::Warmup => Phase::Prefill,
        Phase::Prefill | Phase::Decode => Phase::Decode,
        other => other,
    }
}

/// No crash: look for signs the output was wrong, else a log that stops mid-way
/// (a progress bar short of 100 %, NCCL still setting up), which is what a hang
/// looks like in a log.
fn wrong_output(voc: &Vocabulary, f: &LogFacts) -> Option<Failure> {
    wrong_output_lines(voc, f).or_else(|| stopped_mid_way(voc, f))
}

fn stopped_mid_way(voc: &Vocabulary, f: &LogFacts) -> Option<Failure> {
    // The last in-progress line among the final lines, with nothing finished after it.
    let (source, line, text) = f.last_lines.iter().rev().find_map(|(s, l, t)| {
        let caps = voc.shape(ShapeId::Progress).captures(t)?;
        let pct = caps
            .get(1)
            .map(|m| m.as_str().parse::<u32>().unwrap_or(100));
        pct.is_none_or(|p| p < 100).then(|| (*s, *l, t.clone()))
    })?;
    let finished_later = f.last_lines.iter().any(|(s, l, t)| {
        *s == source && *l > line && (t.contains("100%") || voc.shape(ShapeId::Done).is_match(t))
    });
    if finished_later {
        return None;
    }
    let phase = if text.contains("NCCL") {
        Phase::CommInit
    } else {
        f.milestones
            .iter()
            .rfind(|m| m.source == source && m.line <= line)
            .map_or(Phase::Unknown, |m| {
                if m.done {
                    successor(m.phase)
                } else {
                    m.phase
                }
            })
    };
    let message = format!(
        "the log ends here, mid-way: {}",
        text.trim().chars().take(300).collect::<String>()
    );
    let fl = Failure::without_incident(
        FailureClass::Hang,
        phase,
        "the log stops while this was in progress",
        source,
        line,
        message,
        "stopped-mid-way",
    );
    Some(fl)
}

/// Generated text stuck on one word (`text=' is is is is is is is is'`): a
/// model that repeats a single token is broken, not verbose. Only words (a
/// letter in them) count, so tensors of zeros and token-id lists do not.
fn repeated_word_output(voc: &Vocabulary, msg: &str) -> bool {
    let ctx = voc.shape(ShapeId::OutputContext);
    if msg.len() < 24 || !ctx.is_match(msg) {
        return false;
    }
    let mut run = 0usize;
    let mut prev = "";
    for w in msg.split_whitespace() {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if !w.is_empty() && w == prev && w.chars().any(char::is_alphabetic) {
            run += 1;
            if run >= 8 {
                return true;
            }
        } else {
            run = 1;
        }
        prev = w;
    }
    false
}

/// The script a letter belongs to, for the mixed-script test (kana counts with CJK, so that
/// Japanese reads as one script).
fn script(c: char) -> Option<u8> {
    Some(match c as u32 {
        0x41..=0x5A | 0x61..=0x7A | 0xC0..=0x24F => 0,
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => 1,
        0xAC00..=0xD7AF | 0x1100..=0x11FF => 2,
        0x400..=0x4FF => 3,
        0x600..=0x6FF => 4,
        0xE00..=0xE7F => 5,
        0x900..=0x97F => 6,
        0x370..=0x3FF => 7,
        _ => return None,
    })
}

/// The stretches of a line that read as generated text: quoted strings (an unterminated
/// quote runs to the end of the line), and what follows an output word (`text=`,
/// `"content":`, `Output:`).
fn generated_segments<'a>(voc: &Vocabulary, msg: &'a str) -> Vec<&'a str> {
    let mut out = Vec::new();
    if let Some(m) = voc.shape(ShapeId::OutputContext).find(msg) {
        out.push(&msg[m.end()..]);
    }
    let bytes = msg.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        if q == b'"' || q == b'\'' {
            let start = i + 1;
            let end = msg[start..]
                .find(q as char)
                .map_or(msg.len(), |e| start + e);
            if end - start >= 24 {
                out.push(&msg[start..end]);
            }
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

/// Generated text that has degenerated: one word making up a third of a long stretch
/// (`prostitu prostitu 言えば prostitu ...`), a CJK character repeated four times in a row
/// (`爽爽爽爽`), or three scripts mixed in one stretch of text. Only stretches that read as
/// generated text count (see `generated_segments`), so tables and tensors do not.
fn degenerate_text(voc: &Vocabulary, msg: &str) -> bool {
    if msg.len() < 24 {
        return false;
    }
    // Garbled tokens anywhere in the line: output that decodes into fragments of scripts.
    let tokens = msg.split_whitespace().count();
    let garbled = msg.split_whitespace().filter(|t| garbled_token(t)).count();
    if garbled >= 3 && garbled * 5 >= tokens {
        return true;
    }
    for seg in generated_segments(voc, msg) {
        let mut words: Vec<String> = Vec::new();
        let mut cur = String::new();
        let mut scripts = [false; 8];
        let mut cjk_run = (None::<char>, 0usize);
        for c in seg.chars() {
            if let Some(sc) = script(c) {
                scripts[sc as usize] = true;
            }
            if script(c) == Some(1) {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).to_lowercase());
                }
                words.push(c.to_string());
                cjk_run = if cjk_run.0 == Some(c) {
                    (Some(c), cjk_run.1 + 1)
                } else {
                    (Some(c), 1)
                };
                if cjk_run.1 >= 4 {
                    return true;
                }
            } else if c.is_alphabetic() {
                cur.push(c);
                cjk_run = (None, 0);
            } else {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur).to_lowercase());
                }
                cjk_run = (None, 0);
            }
        }
        if !cur.is_empty() {
            words.push(cur.to_lowercase());
        }
        if scripts.iter().filter(|&&x| x).count() >= 3 && words.len() >= 8 {
            return true;
        }
        if punctuation_soup(seg, &words) || single_symbol_run(seg.trim(), 24) {
            return true;
        }
        let words: Vec<&String> = words
            .iter()
            .filter(|w| w.chars().count() >= 2 || w.chars().any(|c| script(c) == Some(1)))
            .filter(|w| !matches!(w.as_str(), "none" | "null" | "true" | "false" | "undefined"))
            .collect();
        if words.len() < 10 {
            continue;
        }
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for w in &words {
            *counts.entry(w.as_str()).or_default() += 1;
        }
        let top = counts.values().copied().max().unwrap_or(0);
        if top >= 6 && top * 10 >= words.len() * 3 {
            return true;
        }
    }
    false
}

/// Text that is one letter, digit or CJK character repeated (`4444…`, `!!!` is left
/// to the punctuation test): a model stuck on one token. Rules (`====`, `----`, `####`)
/// and zero fill are not letters or are excluded.
fn single_symbol_run(text: &str, min: usize) -> bool {
    let mut chars = text.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !first.is_alphanumeric() || first == '0' {
        return false;
    }
    let mut n = 1;
    for c in chars {
        if c != first {
            return false;
        }
        n += 1;
    }
    n >= min
}

/// A token no language writes: three scripts run together (`kirIICom2ARNбуIIiamondII队员们`),
/// two scripts neither of which is Latin (Cyrillic fused to CJK), or a replacement character
/// (U+FFFD, bytes that decode to nothing) fused to letters of two scripts. Latin fused to CJK
/// alone is ordinary Chinese or Japanese prose (`使用Python进行`).
fn garbled_token(tok: &str) -> bool {
    let mut scripts = [false; 8];
    let mut replacement = false;
    for c in tok.chars() {
        replacement |= c == '\u{FFFD}';
        if let Some(s) = script(c) {
            scripts[s as usize] = true;
        }
    }
    let n = scripts.iter().filter(|&&x| x).count();
    n >= 3 || (n == 2 && !scripts[0]) || (replacement && n >= 2)
}

/// Generated text that has fallen apart into punctuation and short function words
/// (`is,: to,,/ &.. by and.. a`): a third or more of its visible characters are punctuation
/// and its words average under three and a half letters. Prose averages over four, and
/// code or JSON has long identifiers.
fn punctuation_soup(seg: &str, words: &[String]) -> bool {
    let visible = seg.chars().filter(|c| !c.is_whitespace()).count();
    let punct = seg
        .chars()
        .filter(|c| !c.is_whitespace() && !c.is_alphanumeric())
        .count();
    if visible < 40 || punct < 12 || words.len() < 8 || punct * 3 < visible {
        return false;
    }
    let letters: usize = words.iter().map(|w| w.chars().count()).sum();
    letters * 2 < words.len() * 7
}

fn wrong_output_lines(voc: &Vocabulary, f: &LogFacts) -> Option<Failure> {
    let re = voc.shape(ShapeId::WrongOutput);
    // A run of Latin-1 letters is byte-level BPE leaking into text only with its
    // remapped control bytes (`Ċ` newline, `Ġ` space, U+0100-U+0143) among them.
    let bpe_leak = |m: &str| {
        m.chars()
            .filter(|c| ('\u{0100}'..='\u{0143}').contains(c))
            .count()
            >= 4
    };
    let rec = f.records.iter().find(|r| {
        let m = r.message();
        re.find_iter(m).any(|x| {
            !x.as_str()
                .chars()
                .all(|c| ('\u{00A1}'..='\u{0143}').contains(&c))
                || bpe_leak(x.as_str())
        }) || repeated_word_output(voc, m)
            || degenerate_text(voc, m)
    });
    let Some(rec) = rec else {
        // A transcript's last lines: an answer that is one symbol over and over
        // (`44444444…`) holds no word the scanner looks for.
        let (source, line, text) = f
            .last_lines
            .iter()
            .find(|(_, _, t)| single_symbol_run(t.trim(), 32))?;
        return Some(Failure::without_incident(
            FailureClass::WrongOutput,
            Phase::Decode,
            "output problems show while generating",
            *source,
            *line,
            quote(text),
            "wrong-output",
        ));
    };
    let mut fl = Failure::without_incident(
        FailureClass::WrongOutput,
        Phase::Decode,
        "output problems show while generating",
        rec.source,
        rec.line,
        quote(rec.message()),
        "wrong-output",
    );
    fl.rank = rec.prefix.effective_rank();
    fl.ranks = fl.rank.into_iter().collect();
    fl.time = rec.prefix.time_text.clone();
    Some(fl)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voc() -> &'static Vocabulary {
        Vocabulary::embedded()
    }

    #[test]
    fn degenerate_generated_text_is_wrong_output() {
        let v = voc();
        assert!(degenerate_text(
            v,
            r#""content": "周恩 prostitu prostitu言えば_readablemue prostitu prostitu prostitu prostitu prostituouflageuhe prostitu言えば""#
        ));
        assert!(degenerate_text(
            v,
            "sglang server: 'Expossible! description! description!爽 ipairs soc!!爽爽爽爽'"
        ));
        assert!(degenerate_text(
            v,
            "Output: 'hello мир 世界 again hello мир 世界 again and more words'"
        ));
    }

    #[test]
    fn one_symbol_repeated_is_degenerate_and_rules_are_not() {
        assert!(single_symbol_run(&"4".repeat(40), 32));
        assert!(single_symbol_run(&"的".repeat(40), 32));
        assert!(!single_symbol_run(&"4".repeat(20), 32));
        assert!(!single_symbol_run(&"=".repeat(80), 32));
        assert!(!single_symbol_run(&"0".repeat(80), 32));
        assert!(!single_symbol_run(
            &"4".repeat(39).to_string().replace("44", "45"),
            32
        ));
        let v = voc();
        assert!(degenerate_text(v, &format!("Output: '{}'", "a".repeat(30))));
    }

    #[test]
    fn garbled_tokens_are_degenerate_and_mixed_prose_is_not() {
        let v = voc();
        // Raw output pasted after the command that produced it (no quotes, no `Output:`).
        assert!(degenerate_text(
            v,
            "To学霸照IIHOCI脾\u{FFFD}\u{FFFD}作出了以\u{FFFD}.QuadIIXloeII山坡 scarce\u{FFFD}тратплH devstat用量 Pro\u{FFFD}始 kirIICom2ARNбуIIiamondII队员们ière"
        ));
        for fine in [
            "我们使用Python进行推理, 模型是Qwen3, 在RTX4090上运行, 没有问题",
            "Загрузка модели Llama-3 завершена за 12 s on GPU 0",
            "ERROR: the file name ab\u{FFFD}cd.txt cannot be decoded",
        ] {
            assert!(!degenerate_text(v, fine), "{fine}");
        }
    }

    #[test]
    fn punctuation_soup_is_degenerate_and_code_is_not() {
        let soup = "[{'generated_text': 'DeepSpeed is,: to,,/ &.. by and.. a\\n.. and- and.. the,,\\n of\\n [.,.\\n:, &-. and a- the,\\n\\n). the'}]";
        assert!(degenerate_text(voc(), soup));
        for fine in [
            "[{'generated_text': 'DeepSpeed is a leading deep learning framework designed for distributed training and inference.'}]",
            "Output: {\"role\": \"assistant\", \"content\": \"The capital of France is Paris.\", \"tool_calls\": []}",
            "text='x = torch.zeros((batch_size, hidden_size), dtype=torch.float16, device=device)'",
        ] {
            assert!(!degenerate_text(voc(), fine), "{fine}");
        }
    }

    #[test]
    fn wrapped_table_cells_continue_the_cell_above() {
        assert_eq!(
            wrapped_cell(
                "|                |         | mpiSize == tp * pp (worldConfig.cpp:80)   |"
            )
            .as_deref(),
            Some("mpiSize == tp * pp (worldConfig.cpp:80)")
        );
        assert_eq!(
            wrapped_cell("| tensorrt_llm   | 1       | UNAVAILABLE |"),
            None
        );
        assert_eq!(wrapped_cell("mpiSize == tp"), None);
        assert_eq!(wrapped_cell("|      |     |"), None);
    }

    #[test]
    fn ordinary_text_is_not_degenerate() {
        let v = voc();
        assert!(!degenerate_text(
            v,
            r#""content": "The capital of France is Paris. It is known for the Eiffel Tower and the Louvre.""#
        ));
        assert!(!degenerate_text(
            v,
            "[None, None, None, None, None, None, None, None, None, None, None, None]"
        ));
        assert!(!degenerate_text(
            v,
            r#"text="日本語のテキストです。これは普通の文章で、English words も少し入っています。""#
        ));
    }

    #[test]
    fn generic_error_lines_are_error_banners() {
        let v = voc();
        let rec = |text: &str| {
            let out = crate::scan::Scanner::new(v, &[]).scan_reader(0, &mut text.as_bytes());
            out.records.into_iter().next().expect("kept")
        };
        assert!(is_error_line(
            v,
            &rec("error: failed to run custom build command for `x`")
        ));
        assert!(is_error_line(
            v,
            &rec("[TM][ERROR] CUDA runtime error: out of memory")
        ));
        assert!(!is_error_line(
            v,
            &rec("INFO 12-01 10:00:00 llm_engine.py:1] error handling is on")
        ));
    }
}

/// Longest message quoted from a line.
const QUOTE_MAX: usize = 600;

/// A line's text as a failure quotes it: whole when short; when long (a request's
/// payload, a megabyte of tensor dump), its head and the error's own words, which may
/// sit at the line's end or in its middle.
pub(crate) fn quote(text: &str) -> String {
    let t = text.trim();
    let n = t.chars().count();
    if n <= QUOTE_MAX {
        return t.to_string();
    }
    const HEAD: usize = 150;
    let rest = QUOTE_MAX - HEAD - 3;
    // Where the error's words begin: the first error word after the head.
    let head_end = t.char_indices().nth(HEAD).map_or(t.len(), |(b, _)| b);
    let words = [
        "Error",
        "error",
        "Exception",
        "exception",
        "Assert",
        "assert",
        "FAILED",
        "failed",
        "fault",
    ];
    let at = words
        .iter()
        .filter_map(|w| t[head_end..].find(w).map(|b| b + head_end))
        .min();
    let from = match at {
        // A few words before it (`RuntimeError: CUDA error` starts at `RuntimeError`).
        Some(b) => {
            let back = t[..b]
                .char_indices()
                .rev()
                .nth(40)
                .map_or(head_end, |(i, _)| i.max(head_end));
            let from = t[back..b].find(' ').map_or(back, |sp| back + sp + 1);
            // The window must not run past the end: then the end is kept whole.
            let tail_start = t
                .char_indices()
                .rev()
                .nth(rest - 1)
                .map_or(head_end, |(i, _)| i);
            from.min(tail_start).max(head_end)
        }
        None => t
            .char_indices()
            .rev()
            .nth(rest - 1)
            .map_or(head_end, |(i, _)| i),
    };
    let window: String = t[from..].chars().take(rest).collect();
    format!("{} … {}", &t[..head_end], window)
}

#[cfg(test)]
mod quote_tests {
    use super::quote;

    #[test]
    fn a_short_line_is_quoted_whole() {
        assert_eq!(quote("  RuntimeError: boom "), "RuntimeError: boom");
    }

    #[test]
    fn a_long_line_keeps_its_head_and_the_error_at_its_end() {
        let line = format!(
            "request payload: {} RuntimeError: CUDA error: an illegal memory access was encountered",
            "x".repeat(5_000_000)
        );
        let q = quote(&line);
        assert!(q.chars().count() <= 600, "{}", q.len());
        assert!(q.starts_with("request payload: xxx"), "{q}");
        assert!(
            q.ends_with("RuntimeError: CUDA error: an illegal memory access was encountered"),
            "{q}"
        );
    }

    #[test]
    fn a_long_line_keeps_the_error_in_its_middle() {
        let line = format!(
            "{} ValueError: prompt too long for the context {}",
            "a".repeat(300),
            "y".repeat(100_000)
        );
        let q = quote(&line);
        assert!(q.chars().count() <= 600);
        assert!(
            q.contains("ValueError: prompt too long for the context"),
            "{q}"
        );
    }

    #[test]
    fn a_long_line_without_error_words_keeps_its_end() {
        let line = format!("{}END", "z ".repeat(10_000));
        let q = quote(&line);
        assert!(q.ends_with("END") && q.contains(" … "), "{q}");
        // Multi-byte text is cut on character boundaries.
        let wide = "é".repeat(5000) + " Error: é";
        assert!(quote(&wide).ends_with("Error: é"));
    }
}

/// The function a frame's code line calls last in its chain (`self.model_runner.init_cuda_graph(`
/// and a cut `self.init_cuda_graph` give `init_cuda_graph`), when the line is a call or a
/// bare attribute: an assignment's target is not a call.
fn called_function(code: &str) -> Option<&str> {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = R.get_or_init(|| {
        regex::Regex::new(r"^(?:[A-Za-z_][\w.\[\]]*\s*=\s*|return\s+|await\s+)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w{3,})\s*(?:\(|$)")
            .expect("call pattern compiles")
    });
    re.captures(code.trim())
        .and_then(|c| c.get(1))
        .map(|m| m.as_str())
}

#[cfg(test)]
mod call_tests {
    use super::called_function;

    #[test]
    fn the_call_of_a_code_line() {
        assert_eq!(
            called_function("self.init_cuda_graph"),
            Some("init_cuda_graph")
        );
        assert_eq!(
            called_function("self.model_runner = ModelRunner("),
            Some("ModelRunner")
        );
        assert_eq!(
            called_function("out = self.capture_one(bs)"),
            Some("capture_one")
        );
        assert_eq!(called_function("x = a + b"), None);
        assert_eq!(called_function("if x:"), None);
    }
}
