//! Assembles the report of `rosetta diagnose` from the log facts and the
//! scored hypotheses: the failure, the compacted timeline, the warnings with
//! the notes that concern them. Layout is the renderers' business.

use crate::{Facts, Failure, FrameRef, Input, NoFailure, Report, TimelineEntry, Warning};
use rosetta_kb::engine::{self, Context, Machine};
use rosetta_kb::KnowledgeBase;
use rosetta_log::LogFacts;
use rosetta_schema::Phase;

/// Runs the knowledge base over the facts and builds the report.
pub fn build(kb: &KnowledgeBase, log: &LogFacts, machine: Option<&Machine>) -> Report {
    let ctx = Context::new(log, machine).with_vocabulary(kb.vocabulary());
    let scored = engine::diagnose(kb, &ctx);
    let files = Files {
        log,
        multi: log.inputs.len() > 1,
    };
    let (warnings, notes) = warnings_and_notes(kb, &ctx, &scored.notes, files);
    Report {
        rosetta: format!("rosetta {}", env!("CARGO_PKG_VERSION")),
        inputs: log
            .inputs
            .iter()
            .map(|i| Input {
                path: i.name.display().to_string(),
                lines: i.lines,
                bytes: i.bytes,
                note: i
                    .read_error
                    .as_ref()
                    .map(|e| format!("reading stopped early: {e}")),
            })
            .collect(),
        failure: failure(files),
        hypotheses: scored.hypotheses,
        notes,
        timeline: timeline(files),
        warnings,
        warning_total: log.warning_total,
        facts: facts(log, &ctx),
        similar: Vec::new(),
        first_root_error_in: log.failure.as_ref().and_then(|f| files.of(f.source)),
        other_inputs: log
            .other_inputs
            .iter()
            .map(|o| crate::OtherFailure {
                file: files.of(o.source).unwrap_or_default(),
                class: o.class,
                phase: o.phase,
                line: o.line,
                time: o.time.clone(),
                rank: o.rank,
                message: o.message.clone(),
            })
            .collect(),
        no_failure: no_failure(files),
    }
}

/// The inputs, and whether a line reference names its file (with several inputs).
#[derive(Clone, Copy)]
struct Files<'a> {
    log: &'a LogFacts,
    multi: bool,
}

impl Files<'_> {
    /// The input's name, when several were read.
    fn of(&self, source: usize) -> Option<String> {
        self.multi.then(|| {
            self.log
                .inputs
                .get(source)
                .map(|i| i.name.display().to_string())
                .unwrap_or_default()
        })
    }
}

/// The failure as the report shows it.
fn failure(files: Files) -> Option<Failure> {
    let log = files.log;
    log.failure.as_ref().map(|f| Failure {
        class: f.class,
        phase: f.phase,
        rank: f.rank,
        ranks: f.ranks.clone(),
        line: f.line,
        file: files.of(f.source),
        time: f.time.clone(),
        message: f.message.clone(),
        exception: f.exception.clone(),
        surfaced: f.surfaced.as_ref().map(|(line, message)| crate::Surfaced {
            line: *line,
            message: message.clone(),
        }),
        asynchronous: f.asynchronous,
        sync_point: f.sync_point.clone(),
        phase_reason: with_file(&f.phase_reason, files.of(f.source).as_deref()),
        frames: f
            .frames
            .iter()
            .map(|x| FrameRef {
                file: x.file.clone(),
                line: x.line,
                function: x.function.clone(),
                code: x.code.clone(),
            })
            .collect(),
    })
}

/// The timeline: earlier runs, the diagnosed run's steps (consecutive milestones of the
/// same label collapse into one step), the failure, and each other input's failure.
fn timeline(files: Files) -> Vec<TimelineEntry> {
    let log = files.log;
    let mut timeline: Vec<TimelineEntry> = Vec::new();
    if let Some(f) = &log.failure {
        for (k, (class, line)) in f.earlier_runs.iter().enumerate() {
            if let Some((_, n)) = f.unseen_runs.filter(|(at, _)| *at == k) {
                timeline.push(unseen_runs(n, *line, files.of(f.source)));
            }
            timeline.push(TimelineEntry {
                phase: Phase::Unknown,
                line: *line,
                file: files.of(f.source),
                end_line: None,
                label: format!("earlier run: {class}"),
                time: None,
                failed: true,
                runs: None,
            });
        }
        if let Some((_, n)) = f.unseen_runs.filter(|(at, _)| *at >= f.earlier_runs.len()) {
            timeline.push(unseen_runs(n, f.run_start, files.of(f.source)));
        }
    }
    timeline.append(&mut steps(files));
    if let Some(f) = &log.failure {
        let label = match f.phase {
            Phase::Unknown => f.class.to_string(),
            p => format!("{p}: {}", f.class),
        };
        timeline.push(TimelineEntry {
            phase: f.phase,
            line: f.line,
            file: files.of(f.source),
            end_line: None,
            label,
            time: f.time.clone(),
            failed: true,
            runs: None,
        });
    }
    // Another input's own failure ends that input's steps.
    for o in &log.other_inputs {
        let label = match o.phase {
            Phase::Unknown => o.class.to_string(),
            p => format!("{p}: {}", o.class),
        };
        timeline.push(TimelineEntry {
            phase: o.phase,
            line: o.line,
            file: files.of(o.source),
            end_line: None,
            label,
            time: o.time.clone(),
            failed: true,
            runs: None,
        });
    }
    // With several inputs, each input's steps stay together, in the order of the inputs
    // and of their lines: one file's steps never read as if they followed another's.
    if files.multi {
        let rank = |e: &TimelineEntry| {
            log.inputs
                .iter()
                .position(|i| Some(i.name.display().to_string()) == e.file)
                .unwrap_or(usize::MAX)
        };
        timeline.sort_by_key(|e| (rank(e), e.line));
    }
    timeline
}

/// The diagnosed run's own steps, apart from the earlier runs before them: however
/// many runs a restart loop holds, the last one keeps its steps. Consecutive
/// milestones of the same label collapse into one step.
fn steps(files: Files) -> Vec<TimelineEntry> {
    let log = files.log;
    let fail_at = log
        .failure
        .as_ref()
        .map(|f| (f.source, f.line, f.run_start));
    let mut steps: Vec<TimelineEntry> = Vec::new();
    for m in &log.milestones {
        if fail_at.is_some_and(|(s, l, start)| m.source == s && (m.line > l || m.line < start)) {
            continue;
        }
        let file = files.of(m.source);
        match steps.last_mut() {
            Some(last) if last.label == m.label && last.file == file => {
                last.end_line = Some(m.line);
                // A step's first line may carry no time (a progress bar): take the first
                // time any of its lines gives.
                if last.time.is_none() {
                    last.time = m.time.clone();
                }
            }
            _ => steps.push(TimelineEntry {
                phase: m.phase,
                line: m.line,
                file,
                end_line: None,
                label: m.label.to_string(),
                time: m.time.clone(),
                failed: false,
                runs: None,
            }),
        }
    }
    // A run of many steps (a server that served for hours) keeps its first steps and
    // the ones that led to the failure.
    if steps.len() > MAX_STEPS {
        steps.drain(FIRST_STEPS..steps.len() - (MAX_STEPS - FIRST_STEPS));
    }
    steps
}

/// The distinct warnings, each with the kb's note about it, and the report's notes.
fn warnings_and_notes(
    kb: &KnowledgeBase,
    ctx: &Context,
    kb_notes: &[engine::Note],
    files: Files,
) -> (Vec<Warning>, Vec<String>) {
    let log = files.log;
    let mut notes: Vec<String> = Vec::new();
    let mut warnings: Vec<Warning> = log
        .warnings
        .iter()
        .map(|w| Warning {
            text: w.text.clone(),
            count: w.count,
            ranks: w.ranks.clone(),
            line: w.line,
            file: files.of(w.source),
            note: None,
        })
        .collect();
    for note in kb_notes {
        let (text, line) = (&note.text, &note.line);
        // The note concerns a warning when its evidence line is one (any occurrence of it:
        // the same template).
        let target = warnings
            .iter_mut()
            .zip(&log.warnings)
            .find(|(w, lw)| Some(w.line) == *line || Some(lw.template) == note.template)
            .map(|(w, _)| w);
        match target {
            Some(w) if w.note.is_none() => {
                w.note = Some(text.clone());
                notes.push(format!("{}: {}", line_ref(w.line, w.file.as_deref()), text));
            }
            _ => notes.push(match line {
                Some(l) => {
                    let file = if files.multi {
                        note_file(kb, ctx, text, *l)
                    } else {
                        None
                    };
                    format!("{}: {text}", line_ref(*l, file.as_deref()))
                }
                None => text.clone(),
            }),
        }
    }
    if let Some(f) = &log.failure {
        if f.run.1 > 1 {
            notes.push(format!("the log holds {} runs (restarts or pasted attempts); this report is about the last one", f.run.1));
        }
    }
    if log.dropped >= 100_000 {
        notes.push(format!(
            "{} repeated lines were counted but not kept (memory budget)",
            log.dropped
        ));
    }
    (warnings, notes)
}

/// The facts a reader needs to check the hypotheses; the GPUs' archs are the ones
/// the rules' context looked up.
fn facts(log: &LogFacts, ctx: &Context) -> Facts {
    let mut gpu_archs: Vec<String> = Vec::new();
    let gpus: Vec<String> = ctx
        .named_gpus()
        .iter()
        .map(|(name, arch)| match arch {
            Some(a) => {
                if !gpu_archs.contains(a) {
                    gpu_archs.push(a.clone());
                }
                format!("{name} ({a})")
            }
            None => name.clone(),
        })
        .collect();
    Facts {
        framework: log.extracted.framework.clone(),
        versions: log
            .extracted
            .versions
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect(),
        gpus,
        gpu_archs,
        gpu_count: gpu_count(log),
        model_types: log
            .extracted
            .model_types
            .iter()
            .map(|m| m.value.clone())
            .collect(),
        args: log.extracted.args.len(),
    }
}

/// Why no failure was named, when none was.
fn no_failure(files: Files) -> Option<NoFailure> {
    let log = files.log;
    log.failure.is_none().then(|| {
        let lines: u64 = log.inputs.iter().map(|i| i.lines).sum();
        let ends_during = ends_during(log).map(|m| crate::EndsDuring {
            phase: m.phase,
            step: m.label.to_string(),
            finished: m.done,
            line: m.line,
            file: files.of(m.source),
            lines_after: log
                .inputs
                .get(m.source)
                .map_or(0, |i| i.lines.saturating_sub(m.line)),
        });
        NoFailure {
            reason: if lines == 0 {
                "empty"
            } else if !log.unnamed_errors.is_empty() {
                "unknown-pattern"
            } else if ends_during.is_some() {
                "unfinished"
            } else {
                "clean"
            }
            .into(),
            ends_during,
            lines: log
                .unnamed_errors
                .iter()
                .map(|(source, line, text)| crate::Evidence {
                    line: Some(*line),
                    file: files.of(*source),
                    text: text.clone(),
                })
                .collect(),
        }
    })
}

/// The start-up step a log stops inside: its last milestone begins a step between
/// process-group set-up and warm-up, or finishes one a server always follows with
/// another, and no server became ready or served after it. Such a log was cut off, or the process hung or was
/// killed in that step; it is not a clean run. The bare `start` step is left out:
/// a pasted command followed by its output begins with one.
fn ends_during(log: &LogFacts) -> Option<&rosetta_log::Milestone> {
    let last = log.milestones.iter().max_by_key(|m| (m.source, m.line))?;
    // A finished step a server always follows with another (process groups, KV
    // cache, CUDA graphs) leaves the log inside start-up too; finished weight
    // loading does not (a script generates right after it, with no milestone), nor
    // does a finished warm-up (the server is ready).
    let open = match last.phase {
        Phase::CommInit | Phase::MemoryPlan | Phase::GraphCapture => true,
        Phase::WeightLoad | Phase::Warmup => !last.done,
        _ => false,
    };
    open.then_some(last)
}

/// Steps of the diagnosed run kept in the timeline, of which the first `FIRST_STEPS`
/// and the rest from its end.
const MAX_STEPS: usize = 64;
const FIRST_STEPS: usize = 16;

/// A step standing for the launches a long restart loop repeated beyond what the scanner
/// kept: counted, not read, so their outcome is not known one by one.
fn unseen_runs(n: usize, before_line: u64, file: Option<String>) -> TimelineEntry {
    TimelineEntry {
        phase: Phase::Unknown,
        line: before_line,
        file,
        end_line: None,
        label: format!("earlier runs not kept: {n}"),
        time: None,
        failed: true,
        runs: Some(n as u64),
    }
}

/// How many GPUs the launch used, as the log shows it: tensor x pipeline parallel size
/// from the launch args, or the number of ranks that failed, whichever is larger.
fn gpu_count(log: &LogFacts) -> Option<u64> {
    let arg = |k: &str| {
        log.extracted
            .args
            .get(k)
            .and_then(|a| a.value.trim().parse::<u64>().ok())
            .filter(|&n| n > 0)
    };
    let from_args = match (arg("tp_size"), arg("pp_size")) {
        (None, None) => None,
        (tp, pp) => Some(tp.unwrap_or(1) * pp.unwrap_or(1)),
    };
    let ranks = log
        .failure
        .as_ref()
        .map(|f| f.ranks.len() as u64)
        .filter(|&n| n > 0);
    from_args.max(ranks)
}

/// `line 7`, or `node2.log:7` when several inputs were read.
fn line_ref(line: u64, file: Option<&str>) -> String {
    match file {
        Some(f) => format!("{f}:{line}"),
        None => format!("line {line}"),
    }
}

/// The input a note's line is in, with several inputs: the rule whose note it is names its
/// evidence by file. (Scoring keeps a note's line but not its file; this asks again, and
/// only for notes of a report over several inputs.)
fn note_file(kb: &KnowledgeBase, ctx: &Context, text: &str, line: u64) -> Option<String> {
    kb.rules
        .iter()
        .filter(|r| r.def.note.is_some())
        .filter_map(|r| ctx.eval(r))
        .find(|fi| {
            fi.rule
                .def
                .note
                .as_ref()
                .map(|n| engine::fill(n, &fi.vars))
                .as_deref()
                == Some(text)
        })
        .and_then(|fi| {
            fi.evidence
                .iter()
                .find(|e| e.line == Some(line))
                .and_then(|e| e.file.clone())
        })
}

/// The failure's phase reason, its line numbers (`at line 163`) naming the file they are
/// in when several inputs were read (`at node1.log:163`): the reason is about the failing
/// input's own lines.
// The reason comes worded from the log layer; a structured reason (text and line refs)
// there would make this rewrite unnecessary.
fn with_file(reason: &str, file: Option<&str>) -> String {
    let Some(file) = file else {
        return reason.to_string();
    };
    let mut out = String::with_capacity(reason.len() + file.len());
    let mut rest = reason;
    while let Some(at) = rest.find("line ") {
        let before_ok = at == 0 || !rest.as_bytes()[at - 1].is_ascii_alphanumeric();
        let digits = rest[at + 5..]
            .bytes()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if before_ok && digits > 0 {
            out.push_str(&rest[..at]);
            out.push_str(file);
            out.push(':');
            out.push_str(&rest[at + 5..at + 5 + digits]);
            rest = &rest[at + 5 + digits..];
        } else {
            out.push_str(&rest[..at + 5]);
            rest = &rest[at + 5..];
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_reason_names_the_file_of_its_lines() {
        assert_eq!(
            with_file(
                "the traceback of the same error at line 163 passes through decode",
                Some("node1.log")
            ),
            "the traceback of the same error at node1.log:163 passes through decode"
        );
        assert_eq!(
            with_file("after line 2 (ready); pipeline 3", Some("a.log")),
            "after a.log:2 (ready); pipeline 3"
        );
        assert_eq!(with_file("at line 9", None), "at line 9");
        assert_eq!(
            with_file("the deadline 5 passed", Some("a.log")),
            "the deadline 5 passed"
        );
    }
}
