//! Assembles the report of `rosetta diagnose` from the log facts and the
//! scored hypotheses: the failure, the compacted timeline, the warnings with
//! the notes that concern them. Layout is `rosetta-report`'s business.

use crate::engine::{self, Context, Machine};
use crate::KnowledgeBase;
use rosetta_log::LogFacts;
use rosetta_report::{Facts, Failure, FrameRef, Input, NoFailure, Report, TimelineEntry, Warning};
use rosetta_schema::Phase;

/// Runs the knowledge base over the facts and builds the report.
pub fn build(kb: &KnowledgeBase, log: &LogFacts, machine: Option<&Machine>) -> Report {
    let ctx = Context::new(log, machine);
    let scored = engine::diagnose(kb, &ctx);
    let multi = log.inputs.len() > 1;
    let file_of = |source: usize| {
        multi.then(|| {
            log.inputs
                .get(source)
                .map(|i| i.name.display().to_string())
                .unwrap_or_default()
        })
    };

    let failure = log.failure.as_ref().map(|f| Failure {
        class: f.class,
        phase: f.phase,
        rank: f.rank,
        ranks: f.ranks.clone(),
        line: f.line,
        file: file_of(f.source),
        time: f.time.clone(),
        message: f.message.clone(),
        exception: f.exception.clone(),
        surfaced: f
            .surfaced
            .as_ref()
            .map(|(line, message)| rosetta_report::Surfaced {
                line: *line,
                message: message.clone(),
            }),
        asynchronous: f.asynchronous,
        sync_point: f.sync_point.clone(),
        phase_reason: f.phase_reason.clone(),
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
    });

    // Timeline: consecutive milestones of the same label collapse into one step.
    let mut timeline: Vec<TimelineEntry> = Vec::new();
    let fail_at = log
        .failure
        .as_ref()
        .map(|f| (f.source, f.line, f.run_start));
    if let Some(f) = &log.failure {
        for (k, (class, line)) in f.earlier_runs.iter().enumerate() {
            if let Some((_, n)) = f.unseen_runs.filter(|(at, _)| *at == k) {
                timeline.push(unseen_runs(n, *line));
            }
            timeline.push(TimelineEntry {
                phase: Phase::Unknown,
                line: *line,
                end_line: None,
                label: format!("earlier run: {class}"),
                time: None,
                failed: true,
                runs: None,
            });
        }
        if let Some((_, n)) = f.unseen_runs.filter(|(at, _)| *at >= f.earlier_runs.len()) {
            timeline.push(unseen_runs(n, f.run_start));
        }
    }
    for m in &log.milestones {
        if fail_at.is_some_and(|(s, l, start)| m.source == s && (m.line > l || m.line < start)) {
            continue;
        }
        match timeline.last_mut() {
            Some(last) if last.label == m.label => last.end_line = Some(m.line),
            _ => {
                if timeline.len() < 64 {
                    timeline.push(TimelineEntry {
                        phase: m.phase,
                        line: m.line,
                        end_line: None,
                        label: m.label.to_string(),
                        time: m.time.clone(),
                        failed: false,
                        runs: None,
                    });
                }
            }
        }
    }
    if let Some(f) = &log.failure {
        let label = match f.phase {
            Phase::Unknown => f.class.to_string(),
            p => format!("{p}: {}", f.class),
        };
        timeline.push(TimelineEntry {
            phase: f.phase,
            line: f.line,
            end_line: None,
            label,
            time: f.time.clone(),
            failed: true,
            runs: None,
        });
    }

    let mut notes: Vec<String> = Vec::new();
    let mut warnings: Vec<Warning> = log
        .warnings
        .iter()
        .map(|w| Warning {
            text: w.text.clone(),
            count: w.count,
            ranks: w.ranks.clone(),
            line: w.line,
            note: None,
        })
        .collect();
    for (text, line, about) in &scored.notes {
        // The note concerns a warning when its evidence line is one (any occurrence of it).
        let target = warnings.iter_mut().find(|w| {
            Some(w.line) == *line
                || about
                    .as_ref()
                    .is_some_and(|a| w.text.starts_with(a.trim()) || a.trim().starts_with(&w.text))
        });
        match target {
            Some(w) if w.note.is_none() => {
                w.note = Some(text.clone());
                notes.push(format!("line {}: {}", w.line, text));
            }
            _ => notes.push(match line {
                Some(l) => format!("line {l}: {text}"),
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

    let table = crate::tables::GpuTable::embedded();
    let mut gpu_archs: Vec<String> = Vec::new();
    let gpus: Vec<String> = log
        .extracted
        .gpus
        .iter()
        .map(|g| match table.lookup(&g.value).and_then(|i| i.arch()) {
            Some(a) => {
                if !gpu_archs.contains(&a) {
                    gpu_archs.push(a.clone());
                }
                format!("{} ({a})", g.value)
            }
            None => g.value.clone(),
        })
        .collect();
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
        failure,
        hypotheses: scored.hypotheses,
        notes,
        timeline,
        warnings,
        warning_total: log.warning_total,
        facts: Facts {
            framework: log.extracted.framework.clone(),
            versions: log
                .extracted
                .versions
                .iter()
                .map(|(k, v)| (k.clone(), v.value.clone()))
                .collect(),
            gpus,
            gpu_archs,
            model_types: log
                .extracted
                .model_types
                .iter()
                .map(|m| m.value.clone())
                .collect(),
            args: log.extracted.args.len(),
        },
        similar: Vec::new(),
        other_inputs: log
            .other_inputs
            .iter()
            .map(|o| rosetta_report::OtherFailure {
                file: file_of(o.source).unwrap_or_default(),
                class: o.class,
                phase: o.phase,
                line: o.line,
                time: o.time.clone(),
                rank: o.rank,
                message: o.message.clone(),
            })
            .collect(),
        no_failure: log.failure.is_none().then(|| {
            let lines: u64 = log.inputs.iter().map(|i| i.lines).sum();
            NoFailure {
                reason: if lines == 0 {
                    "empty"
                } else if log.unnamed_errors.is_empty() {
                    "clean"
                } else {
                    "unknown-pattern"
                }
                .into(),
                lines: log
                    .unnamed_errors
                    .iter()
                    .map(|(source, line, text)| rosetta_report::Evidence {
                        line: Some(*line),
                        file: file_of(*source),
                        text: text.clone(),
                    })
                    .collect(),
            }
        }),
    }
}

/// A step standing for the launches a long restart loop repeated beyond what the scanner
/// kept: counted, not read, so their outcome is not known one by one.
fn unseen_runs(n: usize, before_line: u64) -> TimelineEntry {
    TimelineEntry {
        phase: Phase::Unknown,
        line: before_line,
        end_line: None,
        label: format!("earlier runs not kept: {n}"),
        time: None,
        failed: true,
        runs: Some(n as u64),
    }
}
