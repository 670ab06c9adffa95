//! The failure: the first root incident of the last run, where cascades,
//! echoes and consequences lose; the other inputs' failures; runs that a
//! restart loop folded away.

use super::*;

/// Each input other than the failure's that holds a root error of its own: the first
/// root of its last run (after its last start milestone).
pub(super) fn other_inputs(voc: &Vocabulary, f: &LogFacts) -> Vec<OtherFailure> {
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

/// Whether an incident's key line is a reporter's prose around a quoted error: no logger
/// prefix, not an exception line, fifteen words or more, and the error words in backticks;
/// or a sentence that introduces what follows (six words or more, something in backticks,
/// ending in a colon: "The nightly `rocminfo` segfaults before printing useful output:").
pub(super) fn narrated_line(f: &LogFacts, inc: &Incident) -> bool {
    let Some(r) = record_at(f, inc.source, inc.key_line) else {
        return false;
    };
    let msg = r.message().trim();
    let words = msg.split_whitespace().count();
    let quotes = msg.matches('`').count() >= 2;
    r.prefix.level.is_none()
        && r.prefix.time.is_none()
        && traceback::parse_exception_line(msg).is_none()
        && !source_located(msg)
        && ((quotes && words >= 15)
            || (quotes && words >= 6 && msg.ends_with(':'))
            || first_person_sentence(msg))
}

/// A line that opens with the source location that wrote it (`/pytorch/.../IndexKernelUtils.cu:16:`,
/// `main.c:12:5:`): a program's own message (an assertion, a compiler's), never a
/// person's sentence, however many words and backticks it holds.
fn source_located(msg: &str) -> bool {
    let first = msg.split_whitespace().next().unwrap_or("");
    let mut parts = first.trim_end_matches(':').split(':');
    let (Some(path), Some(line)) = (parts.next(), parts.next()) else {
        return false;
    };
    path.rsplit('/').next().is_some_and(|name| {
        name.rsplit_once('.')
            .is_some_and(|(stem, ext)| !stem.is_empty() && (1..=4).contains(&ext.len()))
    }) && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
}

/// A reporter's own sentence about the error (`We are observing a peculiarly random CUDA
/// error related to NCCL.`): it opens with a first-person word and quotes no message (no
/// colon, as `CUDA error: ...` would have).
fn first_person_sentence(msg: &str) -> bool {
    let mut words = msg.split_whitespace();
    let first = words.next().unwrap_or("");
    ["I", "We", "I'm", "I've", "We're", "We've", "My", "Our"].contains(&first)
        && words.count() >= 5
        && !msg.contains(':')
        && msg.ends_with(['.', '!', ','])
}

/// The first root of a run, unless it is an error its program logged and went on from
/// (at most three lines, the key one at error or warning level, no traceback, then the same
/// stream logging at a lower level) and a later root of the run is another process's
/// traceback (any traceback, after a warning): a supervisor that logs a failed call and
/// carries on did not end the run; the process that died did.
fn past_survived(f: &LogFacts, members: &[usize]) -> usize {
    let first = members[0];
    let inc = &f.incidents[first];
    if inc.exception.is_some() || !inc.frames.is_empty() || inc.end_line > inc.line + 2 {
        return first;
    }
    let Some(r) = record_at(f, inc.source, inc.key_line) else {
        return first;
    };
    // An error or a warning (an optional module that failed to import, logged and fallen
    // back from: `WARNING ... Failed to import from vllm._C with ModuleNotFoundError(...)`).
    if !matches!(r.prefix.level, Some(Level::Error | Level::Warning)) {
        return first;
    }
    let stream = r.prefix.stream_key();
    // A warning says by its level that the program went on: any later traceback of the run
    // is what ended it, on whatever stream.
    let warned = r.prefix.level == Some(Level::Warning);
    let fatal = members[1..].iter().copied().find(|&m| {
        let x = &f.incidents[m];
        x.source == inc.source
            && x.line > inc.end_line
            && x.exception.is_some()
            && !x.frames.is_empty()
            && x.strength > GENERIC_STRENGTH
            && (warned
                || record_at(f, x.source, x.line).is_some_and(|y| y.prefix.stream_key() != stream))
    });
    let Some(m) = fatal else {
        return first;
    };
    let went_on = f.records.iter().any(|y| {
        y.source == inc.source
            && y.line > inc.end_line
            && y.line < f.incidents[m].line
            && matches!(y.prefix.level, Some(Level::Info | Level::Debug))
            && y.prefix.stream_key() == stream
    });
    if went_on {
        m
    } else {
        first
    }
}

/// Splits root incidents into runs (restarts) and picks the failure; also
/// returns the line ranges of root incidents that belong to other runs.
pub(super) fn choose_failure(
    voc: &Vocabulary,
    f: &LogFacts,
    templates: &[(usize, HashMap<u64, TemplateStat>)],
) -> (Option<Failure>, Vec<(usize, u64, u64)>) {
    let roots = failure_roots(f);
    let mut runs = split_runs(f, &roots);
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
            runs = split_runs(f, &own);
        }
    }
    let other_runs = other_run_ranges(f, &runs);
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
        (runs.len() - 1 + unseen, past_survived(f, &run.0), run.1)
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
    let import_warning = import_warning_before(voc, f, inc, run_start);
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
    let surfaced = surfaced_error(f, inc);
    let frames_of = surfaced.unwrap_or(inc);
    let sync_point = (inc.asynchronous || frames_of.asynchronous)
        .then(|| sync_point(frames_of))
        .flatten();
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

/// The root incidents a failure is chosen from, in the order they happened: those a signal
/// or an exception names (generic error lines only when none is), less a reporter's
/// sentences that narrate an error a log line shows first-hand.
fn failure_roots(f: &LogFacts) -> Vec<usize> {
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
    // A reporter's sentence that quotes an error in backticks (`first replay fails with
    // \`HSA_STATUS_...\``) narrates the crash; the log lines the report holds say it first-hand.
    let narrated: Vec<bool> = f.incidents.iter().map(|x| narrated_line(f, x)).collect();
    // First-hand means a line a signal names: a traceback cut before its exception says
    // where, not what, and the sentence may be the only place the error is written.
    let first_hand = (0..f.incidents.len()).any(|i| {
        !narrated[i]
            && f.incidents[i].strength > GENERIC_STRENGTH
            && !f.incidents[i].signals.is_empty()
    });
    if first_hand {
        roots.retain(|&i| !narrated[i]);
    }
    // An exception that carries another process's traceback as its message (torch's
    // `ProcessRaisedException: ... -- Process 1 terminated with the following error:` and the
    // child's whole traceback after it): the child's error is the failure, the carrier only
    // reports it.
    let carried: Vec<usize> = roots
        .iter()
        .copied()
        .filter(|&i| carries_next(f, i).is_some_and(|j| roots.contains(&j)))
        .collect();
    roots.retain(|i| !carried.contains(i));
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
    roots
}

/// The traceback an exception's message introduces and that follows it at once: the
/// exception's own message is empty or its last line ends in a colon (`terminated with the
/// following error:`), and the next incident on the same input starts within two lines with
/// an exception of its own that is not weaker.
fn carries_next(f: &LogFacts, i: usize) -> Option<usize> {
    let inc = &f.incidents[i];
    let e = inc.exception.as_ref()?;
    let last = e
        .extra
        .iter()
        .rev()
        .map(|l| l.trim())
        .find(|l| !l.is_empty())
        .unwrap_or(e.message.trim());
    if !(last.is_empty() || last.ends_with(':')) {
        return None;
    }
    let j = (0..f.incidents.len())
        .filter(|&j| {
            let x = &f.incidents[j];
            x.source == inc.source && x.line > inc.line
        })
        .min_by_key(|&j| f.incidents[j].line)?;
    let next = &f.incidents[j];
    (next.line <= inc.end_line + 2
        && next.exception.is_some()
        && next.strength >= inc.strength
        && next.role == Role::Root)
        .then_some(j)
}

/// Runs: a relaunch (a start milestone) or a long pause between two root incidents. Each
/// run holds its incidents, where it starts (the relaunch line, else its first incident)
/// and whether a relaunch started it.
fn split_runs(f: &LogFacts, roots: &[usize]) -> Vec<(Vec<usize>, u64, bool)> {
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
}

/// Line ranges of the runs before the last, which evidence for the last one must avoid.
fn other_run_ranges(f: &LogFacts, runs: &[(Vec<usize>, u64, bool)]) -> Vec<(usize, u64, u64)> {
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
    other_runs
}

/// A failed import logged as a warning before a Python error of the same run: frameworks
/// catch the ImportError, degrade, and fail later ("X requires Y"); the import is the root.
fn import_warning_before<'a>(
    voc: &Vocabulary,
    f: &'a LogFacts,
    inc: &Incident,
    run_start: u64,
) -> Option<&'a Record> {
    if inc.class != FailureClass::PythonError {
        return None;
    }
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
}

/// A kernel assertion printed before the Python error: the error that followed names the
/// rank, the exception and the sync point.
fn surfaced_error<'a>(f: &'a LogFacts, inc: &Incident) -> Option<&'a Incident> {
    if inc.exception.is_some() {
        return None;
    }
    f.incidents
        .iter()
        .filter(|x| {
            x.source == inc.source
                && x.line > inc.end_line
                && x.line <= inc.end_line + 400
                && x.exception.is_some()
        })
        .find(|x| x.class == inc.class || x.asynchronous)
}

/// Where an asynchronous error surfaced: the innermost frame outside torch, with its code.
fn sync_point(frames_of: &Incident) -> Option<String> {
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
}

/// Launches of a restart loop that the scanner counted but did not keep. The lines of the
/// last run's relaunch template between its start and its first root error are what one
/// launch prints of it; the scanner's count of that template in the input (kept or not),
/// divided by that, is the number of launches, plus one when the first failure came
/// before the template's first line. What exceeds the runs seen is unseen (byte-identical
/// pasted copies, whose launches cannot be told apart by time, are counted this way too).
pub(super) fn unseen_relaunches(
    f: &LogFacts,
    templates: &[(usize, HashMap<u64, TemplateStat>)],
    runs: &[(Vec<usize>, u64, bool)],
) -> usize {
    let Some((incs, start, true)) = runs.last() else {
        return 0;
    };
    let first = &f.incidents[incs[0]];
    let source = first.source;
    let Some(rec) = record_at(f, source, *start) else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::facts_of;

    const OOM: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB";

    #[test]
    fn a_reporters_sentence_about_an_error_yields_to_the_log_line_that_shows_it() {
        let log = "We are observing a peculiarly random CUDA error related to NCCL.\n\n\
                   gpu47:4962:5097 [1] transport/nvls.cc:223 NCCL WARN Cuda failure 999 'unknown error'\n";
        let fl = facts_of(log).failure.expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::CommError, 3));
        // A first-person line that quotes the message is not narration.
        assert!(!first_person_sentence("We got CUDA error: out of memory."));
        assert!(source_located("/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: block"));
        assert!(source_located("main.c:12:5: error: expected"));
        assert!(!source_located(
            "When I run `python serve.py` it fails with `CUDA error`"
        ));
        assert!(!source_located("Note: the error is `x`"));
        assert!(first_person_sentence(
            "I see an illegal memory access on every run."
        ));
    }

    #[test]
    fn the_last_run_fails_and_the_earlier_one_is_kept_as_history() {
        let f = facts_of(&format!(
            "INFO 05-01 10:00:00 [api_server.py:1] vLLM API server version 0.8.5\n\
             {OOM}\n\
             INFO 05-01 10:05:00 [api_server.py:1] vLLM API server version 0.8.5\n\
             ModuleNotFoundError: No module named 'flash_attn'\n"
        ));
        let fl = f.failure.as_ref().expect("a failure");
        assert_eq!(fl.class, FailureClass::ImportError);
        assert_eq!(fl.line, 4);
        assert_eq!(fl.earlier_runs, vec![(FailureClass::GpuOom, 2)]);
    }

    #[test]
    fn a_supervisor_error_it_went_on_from_yields_to_the_process_that_died() {
        let sup = "2026-01-04 15:57:53,100 - manager.worker - INFO - Starting model instance\n\
                   2026-01-04 15:57:53,434 - manager.worker - ERROR - Failed to update model service: update() takes 2 positional arguments but 3 were given\n";
        let went_on =
            "2026-01-04 15:57:53,500 - manager.worker - INFO - Creating container workload\n";
        let died = "(EngineCore_DP0 pid=90) ERROR 01-04 15:58:26 [core.py:866] EngineCore failed to start.\n\
                    (EngineCore_DP0 pid=90) Traceback (most recent call last):\n\
                    (EngineCore_DP0 pid=90)   File \"/x/vllm/v1/engine/core.py\", line 857, in run_engine_core\n\
                    (EngineCore_DP0 pid=90)     engine_core = EngineCoreProc(*args, **kwargs)\n\
                    (EngineCore_DP0 pid=90) RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:212] ifa != nullptr. Unable to find interface for: [0.0.0.189]\n";
        let fl = facts_of(&format!("{sup}{went_on}{died}"))
            .failure
            .expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::CommError, 8));
        // Nothing says the supervisor went on: its error stays the first of the run.
        let fl = facts_of(&format!("{sup}{died}"))
            .failure
            .expect("a failure");
        assert_eq!(fl.line, 2);
    }

    #[test]
    fn an_import_warning_the_program_went_on_from_yields_to_the_traceback_that_ended_it() {
        let log = "WARNING 03-04 11:50:55 _custom_ops.py:19] Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")\n\
                   INFO 03-04 11:51:09 llm_engine.py:232] Initializing a V0 LLM engine (v0.7.1)\n\
                   [rank0]: Traceback (most recent call last):\n\
                   [rank0]:   File \"/x/vllm_ascend/ops/activation.py\", line 25, in silu_and_mul_forward_oot\n\
                   [rank0]:     out = torch_npu.npu_swiglu(x)\n\
                   [rank0]: RuntimeError: call aclnnSwiGlu failed, detail:EZ1001: The binary_info_config.json of socVersion [ascend310p] does not support opType [SwiGlu].\n";
        let fl = facts_of(log).failure.expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::NoKernelForArch, 6));
        // Without the lines that show it went on, the warning stays the run's first root.
        let cut: String = log.lines().take(1).map(|l| format!("{l}\n")).collect();
        let fl = facts_of(&cut).failure.expect("a failure");
        assert_eq!(fl.class, FailureClass::ImportError);
    }

    #[test]
    fn a_watchdog_after_an_illegal_access_is_its_consequence() {
        let f = facts_of(
            "RuntimeError: CUDA error: an illegal memory access was encountered\n\
             [rank0]:[E501 10:00:00.000000000 ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered\n",
        );
        let fl = f.failure.as_ref().expect("a failure");
        assert_eq!(fl.class, FailureClass::IllegalMemoryAccess);
        assert_eq!(fl.line, 1);
    }

    #[test]
    fn a_deliberate_wrap_that_names_the_operation_is_the_failure() {
        let log = "Traceback (most recent call last):\n  File \"/x/random.py\", line 126, in cb\n    g = default_generators[i]\nIndexError: tuple index out of range\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"/x/cuda/__init__.py\", line 338, in _lazy_init\n    raise DeferredCudaCallError(msg) from e\ntorch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: tuple index out of range\n";
        let fl = facts_of(log).failure.expect("a failure");
        assert_eq!(fl.class, FailureClass::CudaRuntimeError);
        assert_eq!(fl.line, 11);
        // Raised while handling the first without `from`, the second is still its wrap when
        // it repeats what the first said (a handler explaining it) ...
        let handled = log.replace(
            "The above exception was the direct cause of the following exception:",
            "During handling of the above exception, another exception occurred:",
        );
        let fl = facts_of(&handled).failure.expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::CudaRuntimeError, 11));
        // ... and not when it says something else (the handler failed on its own): the
        // first stays.
        let own = handled.replace("with error: tuple index out of range", "with error: 3");
        let fl = facts_of(&own).failure.expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::PythonError, 4));
    }

    #[test]
    fn an_exception_that_carries_a_child_traceback_yields_to_it() {
        let log = "Traceback (most recent call last):\n  File \"/x/run.py\", line 31, in <module>\n    mp.spawn(worker, nprocs=2)\n  File \"/x/spawn.py\", line 211, in join\n    raise ProcessRaisedException(msg, error_index, failed_process.pid)\ntorch.multiprocessing.spawn.ProcessRaisedException: \n\n-- Process 1 terminated with the following error:\nTraceback (most recent call last):\n  File \"/x/run.py\", line 11, in worker\n    dist.init_process_group(\"gloo\")\n  File \"/x/distributed_c10d.py\", line 2087, in _new_process_group_helper\n    backend_class = ProcessGroupGloo(\ntorch.distributed.DistStoreError: wait timeout after 30000ms, keys: /default_pg/0//cpu//0/0\n";
        let fl = facts_of(log).failure.expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::CommError, 14));
        assert_eq!(fl.phase, Phase::CommInit);
        let f = facts_of(log);
        assert_eq!(carries_next(&f, 0), Some(1));
        // An exception whose message says something of its own, with another traceback after
        // it, carries nothing.
        let own = log.replace(
            "ProcessRaisedException: \n\n-- Process 1 terminated with the following error:",
            "ProcessRaisedException: worker 1 exited with code 3",
        );
        assert_eq!(carries_next(&facts_of(&own), 0), None);
    }

    #[test]
    fn a_signal_that_lost_the_class_does_not_name_the_phase() {
        // The communicator's name is in the line, but the fault is an illegal address.
        let f = facts_of(
            "[rank4]:[E402 16:49:38.988158820 ProcessGroupNCCL.cpp:1515] [PG 97 Rank 0] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered\n",
        );
        let fl = f.failure.as_ref().expect("a failure");
        assert_eq!(fl.class, FailureClass::IllegalMemoryAccess);
        assert_ne!(fl.phase, Phase::CommInit);
    }

    #[test]
    fn a_sentence_quoting_an_error_yields_to_the_log_it_narrates() {
        let f = facts_of(
            "After the upgrade and a normal launch, the first decode replay fails with `HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception. code: 0x1016`, killing all schedulers.\n\
             \n\
             The same model works in eager mode.\n\
             \n\
             \n\
             Exception: Capture cuda graph failed: HIP error: operation failed due to a previous error during capture\n",
        );
        let fl = f.failure.as_ref().expect("a failure");
        assert_eq!(fl.line, 6);
        // Alone, the narrated error is the failure.
        let f = facts_of("After the upgrade and a normal launch, the first decode replay fails with `HSA_STATUS_ERROR_EXCEPTION: An HSAIL operation resulted in a hardware exception.` on all ranks.\n");
        assert_eq!(f.failure.map(|fl| fl.line), Some(1));
        // A sentence that introduces the pasted output names the crash; the output shows it.
        let f = facts_of("The nightly `rocminfo` segfaults before printing useful output:\n\n```text\nSegmentation fault (core dumped)\n```\n\nGDB stack from the nightly binary:\n\n```text\nThread 1 \"rocminfo\" received signal SIGSEGV, Segmentation fault.\n#0  0x0000000100000001 in ?? ()\n```\n");
        assert_eq!(f.failure.map(|fl| fl.line), Some(10));
    }

    #[test]
    fn a_kernel_assertion_with_a_quoted_message_is_the_programs_not_a_sentence() {
        let f = facts_of(
            "/pytorch/aten/src/ATen/native/cuda/IndexKernelUtils.cu:16: vectorized_gather_kernel: block: [18,0,0], thread: [0,0,0] Assertion `ind >=0 && ind < ind_dim_size && \"vectorized gather kernel index out of bounds\"` failed.\n\
             Traceback (most recent call last):\n  File \"/x/serve.py\", line 3, in handle\n    out = model(ids)\n\
             RuntimeError: Expected mha_graph.execute(handle, variant_pack, workspace_ptr.get()).is_good() to be true, but got false.\n",
        );
        let fl = f.failure.as_ref().expect("a failure");
        assert_eq!((fl.class, fl.line), (FailureClass::DeviceSideAssert, 1));
    }

    #[test]
    fn a_clean_log_has_no_failure() {
        let f = facts_of(
            "INFO 05-01 10:00:00 [x.py:1] serving\nINFO:     Application startup complete.\n",
        );
        assert!(f.failure.is_none());
    }
}
