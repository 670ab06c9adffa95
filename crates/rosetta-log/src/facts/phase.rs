//! When it broke: the phase of the failing incident, from its signal's hint,
//! its frames, the call on its last code line, the identifiers in its
//! message, the failing block, then the last milestone, then the class.

use super::*;

/// A traceback whose frames run through one module's top level into another's
/// (`<module>` importing `<module>`), ending at most two calls below the last
/// import: the error is raised while the program imports, before it runs.
pub(super) fn raised_while_importing(frames: &[crate::traceback::Frame]) -> Option<&str> {
    let last_module = frames.iter().rposition(|fr| fr.function == "<module>")?;
    let chained = last_module > 0 && frames[last_module - 1].function == "<module>";
    // A traceback that opens on an installed package's module-level code: that code
    // runs when the package is imported (a program's own `<module>`, or one run with
    // `python -m`, comes after runpy's frames or is not under site-packages).
    let file = frames[last_module].file.as_str();
    let package_import = last_module == 0
        && (file.contains("site-packages") || file.contains("dist-packages"))
        && !file.ends_with("__main__.py");
    ((chained || package_import) && frames.len() - 1 - last_module <= 2).then_some(file)
}

/// The build error comes from a compiler run at run time (Triton, Inductor, a JIT-built extension).
pub(super) fn jit_build(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> bool {
    let (re, offline) = (
        voc.shape(ShapeId::JitBuild),
        voc.shape(ShapeId::OfflineBuild),
    );
    let jit = |t: &str| re.is_match(t) && !offline.is_match(t);
    jit(&inc.message)
        || f.records.iter().any(|r| {
            r.source == inc.source
                && r.line + 5 >= inc.line
                && r.line <= inc.end_line
                && jit(r.message())
        })
}

/// The phase named by the function that prints a line of the failing block (or
/// one of the two lines before it), in the `function_name: message` form of
/// native tools. Only identifiers with an underscore count: `Error:` or `Note:`
/// are words, not functions.
/// The first code identifier of a message (a name with `_`, a dotted path or a camelCase
/// hump; English words are none of these) that the phase words name.
pub(super) fn message_identifier_phase(
    voc: &Vocabulary,
    msg: &str,
    skip: impl Fn(&str) -> bool,
) -> Option<(Phase, String)> {
    // A location inside a dependency's own source (a Rust panic `at
    // ~/.cargo/registry/src/.../tokio-1.45.1/src/runtime/blocking/shutdown.rs:51:21`, the
    // standard library's `/rustc/<hash>/library/...`) names that library's internals, not
    // the step the program ran.
    let dependency_source = |w: &str| w.contains("/.cargo/registry/") || w.contains("/rustc/");
    msg.split_whitespace()
        .filter(|w| !dependency_source(w))
        .flat_map(|w| w.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')))
        .map(|t| t.trim_matches('.'))
        .filter(|t| !skip(t))
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

/// The phase the failing lines (or the two before) give through a native function they are
/// printed by or say the failure happened in, and how they name it.
pub(super) fn block_function_phase(
    voc: &Vocabulary,
    f: &LogFacts,
    inc: &Incident,
) -> Option<(Phase, String)> {
    let phase_of = |ident: &str, how: &str| {
        voc.phase_of_function(ident, "")
            .filter(|p| *p != Phase::Unknown)
            .map(|p| (p, format!("{how} {ident}")))
    };
    let named = |r: &Record| {
        let msg = r.message().trim_start();
        // `llama_model_load: ...`: the function that prints the line.
        let head = msg.split_once(": ").map(|(h, _)| h.trim()).filter(|ident| {
            ident.contains('_')
                && ident.len() <= 80
                && ident.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && ident.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        });
        // `Assertion Error in trtSmToCask: ...`, `error: (-215) ... in function 'cv::resize'`:
        // the function a native error names as where it happened.
        let place = || {
            error_in_function()
                .captures_iter(msg)
                .filter_map(|c| c.get(1))
                .map(|m| m.as_str().trim_end_matches(':'))
                .find(|ident| {
                    ident.contains('_')
                        || ident.contains("::")
                        || ident
                            .as_bytes()
                            .windows(2)
                            .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
                })
        };
        head.and_then(|h| phase_of(h, "printed by"))
            .or_else(|| place().and_then(|p| phase_of(p, "about a failure in")))
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

/// `<error word> in [function] 'name'`: the function a native error says it happened in.
fn error_in_function() -> &'static crate::lazy::LazyRegex {
    static R: std::sync::OnceLock<crate::lazy::LazyRegex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        crate::lazy::LazyRegex::trusted(
            r"(?i:error|failure|failed|assertion)(?:\s+\w+)? in (?:function )?[`']?([A-Za-z_][\w:]{2,80})",
        )
    })
}

pub(super) fn short_path(p: &str) -> String {
    let parts: Vec<&str> = p.rsplit('/').take(3).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// The phase of an incident, and why: the first step of [`PHASE_STEPS`] that says one.
/// The order is the precedence (`docs/labels.md`): what the failing lines name, then what the
/// lines around them name, then the steps the log shows, then the report's words, then the
/// class's usual step; with none of these, `unknown`.
pub(super) fn phase_of(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> (Phase, String) {
    PHASE_STEPS
        .iter()
        .find_map(|step| step(voc, f, inc))
        .unwrap_or_else(|| (Phase::Unknown, "the log does not say".into()))
}

/// The incident's line is a reporter's sentence: no logger prefix, not an exception line,
/// twelve words or more, one of them a first-person word (programs do not write `I` or `my`).
fn prose_sentence(f: &LogFacts, inc: &Incident) -> bool {
    record_at(f, inc.source, inc.key_line).is_some_and(|r| {
        let msg = r.message().trim();
        let words: Vec<&str> = msg.split_whitespace().collect();
        let first_person = words.iter().any(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'');
            ["i", "i'm", "i've", "im", "my", "we", "me"]
                .iter()
                .any(|p| w.eq_ignore_ascii_case(p))
        });
        r.prefix.level.is_none()
            && r.prefix.time.is_none()
            && words.len() >= 12
            && first_person
            && crate::traceback::parse_exception_line(msg).is_none()
    })
}

/// One way of reading the phase; `None` leaves it to the next.
type PhaseStep = fn(&Vocabulary, &LogFacts, &Incident) -> Option<(Phase, String)>;

/// The ways of reading the phase, in precedence order.
const PHASE_STEPS: &[PhaseStep] = &[
    by_message_hint,
    by_frames,
    by_logger_location,
    by_cut_call,
    by_message_identifier,
    by_block_function,
    by_import,
    by_install_command,
    by_same_error_after,
    by_error_just_before,
    by_block_prose,
    by_milestone_before,
    by_flushed_late,
    by_quote_on_top,
    by_serving_frames,
    by_report_prose,
    by_forward_shape,
    by_class,
];

/// A phase the failing message itself names (a signal's phase); a start-up hint yields to a frame that names a later step.
fn by_message_hint(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    let p = inc.phase_hint?;
    // A reporter's sentence that names an error ("it just spits out hipErrorNoBinaryForGpu
    // every time ...") says what the message was, not when the program printed it.
    if p == Phase::Startup && prose_sentence(f, inc) {
        return None;
    }
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
        return Some((q, format!("the error is raised inside {func}")));
    }
    // A start-up hint after the program said it serves (a library that fails to load
    // once a request needs it: cuDNN's sub-libraries, a backend opened on first use)
    // was a lazy load: the steps after it say when.
    if p == Phase::Startup && served_before(f, inc) {
        return None;
    }
    // Likewise a start-up hint after the process said it began a later step (`Loading
    // model from ...`, a weight-load progress bar): the message is of a kind usually seen
    // at start-up, but this time the step running was that one.
    if p == Phase::Startup && passed_startup(f, inc) {
        return None;
    }
    // A library opened by name at its first use (cuDNN's sub-libraries) is not an import:
    // it failed in whatever step first needed it, which the steps after this one say.
    if p == Phase::Startup && block_matches(voc, f, inc, ShapeId::LoadedOnUse) {
        return None;
    }
    Some((p, "the error message names it".into()))
}

/// The failing process had begun a step after start-up (loading weights, communicators,
/// memory planning) when it failed: its last milestone before the failure names one.
fn passed_startup(f: &LogFacts, inc: &Incident) -> bool {
    last_milestone(f, inc).is_some_and(|m| {
        !matches!(
            m.phase,
            Phase::Unknown | Phase::Startup | Phase::Install | Phase::Shutdown
        )
    })
}

/// The failing process was serving when it failed: its last step before the failure is
/// the one where it said it accepts requests, or a request's.
fn served_before(f: &LogFacts, inc: &Incident) -> bool {
    last_milestone(f, inc)
        .is_some_and(|m| m.ready || matches!(m.phase, Phase::Prefill | Phase::Decode))
}

/// The last milestone of the failing input before the failure.
fn last_milestone<'a>(f: &'a LogFacts, inc: &Incident) -> Option<&'a Milestone> {
    f.milestones
        .iter()
        .rfind(|m| m.source == inc.source && m.line < inc.line)
}

/// The innermost frame whose function names a step; a frame that names two (sampling) is settled by the milestone before it, else unknown.
fn by_frames(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    let mut ambiguous: Option<&str> = None;
    for fr in inc.frames.iter().rev() {
        match voc.phase_of_function(&fr.function, &fr.file) {
            // A frame that names two phases at once (sampling: the first token is
            // prefill, later ones decode) leaves it to the outer frames.
            Some(Phase::Unknown) => {
                ambiguous.get_or_insert(fr.function.as_str());
            }
            // A prompt or token pass inside the server's own warm-up (its last milestone a
            // warm-up begun and not ended): the warm-up ran it (the labels' convention).
            Some(p @ (Phase::Prefill | Phase::Decode)) => {
                if let Some(m) = last_milestone(f, inc)
                    .filter(|m| m.phase == Phase::Warmup && !m.done && !m.ready)
                {
                    return Some((
                        Phase::Warmup,
                        format!(
                            "the traceback passes through {}, run by the warm-up begun at line {}",
                            fr.function, m.line
                        ),
                    ));
                }
                return Some((p, format!("the traceback passes through {}", fr.function)));
            }
            Some(p) => return Some((p, format!("the traceback passes through {}", fr.function))),
            None => {}
        }
    }
    if let Some(func) = ambiguous {
        // Output already began (a decode milestone is the last before it): a later token.
        // A prompt pass is the last: its first token.
        let last = last_milestone(f, inc);
        match last.map(|m| m.phase) {
            Some(Phase::Decode) => {
                return Some((
                    Phase::Decode,
                    format!("the traceback is in {func}, and tokens were already being generated (line {})", last.map_or(0, |m| m.line)),
                ))
            }
            Some(Phase::Prefill) if !last.is_some_and(|m| m.done) => {
                return Some((
                    Phase::Prefill,
                    format!("the traceback is in {func}, right after a prompt pass (line {}): the first token", last.map_or(0, |m| m.line)),
                ))
            }
            _ => {}
        }
        // A call that does not fit the callee's signature fails the first time it runs,
        // whatever the input: the first token's pass.
        if inc.exception.as_ref().is_some_and(|e| {
            e.type_name.ends_with("TypeError")
                && voc.shape(ShapeId::CallSignature).is_match(&e.message)
        }) {
            return Some((
                Phase::Prefill,
                format!("the traceback is in {func}, and a call that does not fit its function's signature fails on the first token"),
            ));
        }
        return Some((
            Phase::Unknown,
            format!("the traceback is in {func}, which runs for the first token (prefill) and every later one (decode)"),
        ));
    }
    None
}

/// The file the failing line's logger names (`E0305 10:00:00.000 745
/// site-packages/torch/_inductor/runtime/triton_heuristics.py:533] ...`): the code that
/// wrote the error is a frame of its own.
fn by_logger_location(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    let loc = record_at(f, inc.source, inc.line)?
        .prefix
        .location
        .as_deref()?;
    let file = loc.rsplit_once(':').map_or(loc, |(file, _)| file);
    // A bare file name (`[core.py:343]`) names no package.
    if !file.contains('/') {
        return None;
    }
    let p = voc
        .phase_of_function("", &format!("/{file}"))
        .filter(|p| *p != Phase::Unknown)?;
    Some((p, format!("the line is logged from {file}")))
}

/// A traceback cut short ends on a frame whose code calls the step that was running.
fn by_cut_call(voc: &Vocabulary, _f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // A traceback cut short (a paste, a `[...]`) ends on a frame whose code line calls the
    // step that was running (`self.init_cuda_graph()`): the call names it as a frame would.
    if let Some((p, call)) = last_call_phase(voc, &inc.frames) {
        return Some((p, format!("the last frame calls {call}")));
    }
    None
}

/// The step the last frame's code line calls, when its name says one.
fn last_call_phase<'a>(
    voc: &Vocabulary,
    frames: &'a [crate::traceback::Frame],
) -> Option<(Phase, &'a str)> {
    frames
        .last()
        .and_then(|fr| fr.code.as_deref())
        .and_then(called_function)
        .and_then(|call| voc.phase_of_function(call, "").map(|p| (p, call)))
        .filter(|(p, _)| *p != Phase::Unknown)
}

/// The identifiers the message names, read as frames would be.
fn by_message_identifier(
    voc: &Vocabulary,
    _f: &LogFacts,
    inc: &Incident,
) -> Option<(Phase, String)> {
    // The message names the code that raised (`ServerArgs() got multiple values for ...`,
    // `load_weights() got an unexpected keyword argument`): its identifiers are read as
    // frames would be, when no frame said anything.
    // A build error names the source file it compiles (`flashinfer_prefill.cu`): the
    // kernel being built, not the step that ran.
    let compiled = |t: &str| {
        inc.class == FailureClass::BuildError
            && [".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp", ".cxx"]
                .iter()
                .any(|x| t.ends_with(x))
    };
    if let Some((p, ident)) = message_identifier_phase(voc, &inc.message, compiled) {
        return Some((p, format!("the message names {ident}")));
    }
    None
}

/// A native tool's function names on the failing lines and the lines just before.
fn by_block_function(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // A native tool's own function names its lines (`llama_model_load: ...`,
    // `ggml_gallocr_reserve_n: failed to allocate ...`): the failing block's and the
    // lines just before it say which step ran, as a traceback's frames would.
    if let Some((p, what)) = block_function_phase(voc, f, inc) {
        return Some((p, format!("the failing lines are {what}")));
    }
    None
}

/// Raised by module-level code while a module imports another: start-up.
fn by_import(_voc: &Vocabulary, _f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // Raised by module-level code while one module imports another: the program
    // never got past its imports.
    if inc.class != FailureClass::BuildError {
        if let Some(file) = raised_while_importing(&inc.frames) {
            return Some((
                Phase::Startup,
                format!("it is raised while importing {}", short_path(file)),
            ));
        }
    }
    None
}

/// A build error right after an install command: install.
fn by_install_command(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
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
                    // A phase hint for an install: a package or engine build ran here.
                    .any(|s| {
                        let sg = &sig.signals[s];
                        sg.strength < 5 && sg.phase == Some(Phase::Install)
                    })
            });
        if install {
            return Some((Phase::Install, "an install command precedes it".into()));
        }
    }
    None
}

/// The same error printed again right after (another rank, the framework's own traceback of it).
fn by_same_error_after(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
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
            return Some((p, format!("the same error at line {} names it", other.line)));
        }
        // A traceback cut before its exception: the call on its last line is the innermost step.
        if other.exception.is_none() {
            if let Some((p, call)) = last_call_phase(voc, &other.frames) {
                return Some((
                    p,
                    format!(
                        "the traceback of the same error at line {} ends calling {call}",
                        other.line
                    ),
                ));
            }
        }
        if raised_while_importing(&other.frames).is_some() {
            return Some((
                Phase::Startup,
                format!(
                    "the traceback at line {} is raised while importing",
                    other.line
                ),
            ));
        }
        for fr in other.frames.iter().rev() {
            if let Some(p) = voc
                .phase_of_function(&fr.function, &fr.file)
                .filter(|p| *p != Phase::Unknown)
            {
                return Some((
                    p,
                    format!(
                        "the traceback of the same error at line {} passes through {}",
                        other.line, fr.function
                    ),
                ));
            }
        }
    }
    None
}

/// An error line printed just before the traceback names the phase.
fn by_error_just_before(
    _voc: &Vocabulary,
    f: &LogFacts,
    inc: &Incident,
) -> Option<(Phase, String)> {
    // An error line printed just before the traceback (the engine's own message,
    // then the Python exception it turned into) may name the phase.
    if let Some(prev) = f.incidents.iter().rfind(|x| {
        x.source == inc.source
            && x.end_line < inc.line
            && (x.end_line + 3 >= inc.line || (x.role == Role::Weak && x.end_line + 15 >= inc.line))
    }) {
        if let Some(p) = prev.phase_hint {
            return Some((
                p,
                format!("the error at line {} just before names it", prev.line),
            ));
        }
    }
    None
}

/// The failing block's own words.
fn by_block_prose(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // The failing block's own words ("crashes as soon as it receives the next batch").
    if let Some((p, line)) = prose_phase_within(voc, f, inc.source, inc.line, inc.end_line) {
        return Some((p, format!("the failing block says so at line {line}")));
    }
    None
}

/// The last milestone before the failure, on the failing rank when it has any.
fn by_milestone_before(_voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
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
            return Some((phase, format!("after line {} ({})", m.line, m.label)));
        }
    }
    None
}

/// A program's own progress printed after its failure, from its start onwards: its standard
/// output went to a pipe, so it was held in a buffer and written out when the process exited,
/// after the error it wrote unbuffered to standard error (a C++ engine under compute-sanitizer,
/// a CUDA program's `printf` into a pipe). Those lines tell what ran before the fault: the
/// last of their milestones is the phase. Only when nothing before the failure names a step,
/// and only lines without a time of their own (a relaunch's lines carry one, or a new `$`
/// command) within the next two hundred lines, and with no specific error after them: a report
/// that quotes the error and then pastes the log leading to it (`by_quote_on_top`) shows that
/// error again at the end of the paste; a buffer flushed at exit is the last the program said.
fn by_flushed_late(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    let same = |m: &&Milestone| m.source == inc.source;
    // A line with its own time, level or process id came from a logger or a journal, which
    // write as they go.
    let logged = record_at(f, inc.source, inc.line).is_some_and(|r| {
        r.prefix.level.is_some() || r.prefix.time.is_some() || r.prefix.pid.is_some()
    });
    // A Python exception is left to the quote and traceback steps: a traceback cut above a
    // paste reads the same as one written before a buffer's flush.
    let python = inc.exception.is_some() || !inc.frames.is_empty();
    if inc.time.is_some() || logged || python {
        return None;
    }
    if f.milestones
        .iter()
        .filter(same)
        .any(|m| m.line < inc.line && m.phase != Phase::Startup)
    {
        return None;
    }
    let after: Vec<&Milestone> = f
        .milestones
        .iter()
        .filter(same)
        .filter(|m| m.line > inc.end_line.max(inc.line) && m.line <= inc.line + 200)
        .take_while(|m| m.phase != Phase::Startup && m.time.is_none() && !m.ready)
        .filter(|m| m.phase != Phase::Shutdown)
        .collect();
    let m = after.last()?;
    // Any incident after it, or any line after it inside the failing block, that names a
    // failure of its own (above the generic error line's strength).
    let specific_error_after = f
        .incidents
        .iter()
        .any(|x| x.source == inc.source && x.line > m.line && x.strength > GENERIC_STRENGTH)
        || f.records
            .iter()
            .filter(|r| r.source == inc.source && r.line > m.line && r.errorish)
            .any(|r| {
                voc.signal_matches_read(r.message()).into_iter().any(|s| {
                    let sig = &voc.signals[s];
                    sig.role == Role::Root && sig.strength > GENERIC_STRENGTH
                })
            });
    if specific_error_after {
        return None;
    }
    let phase = if m.done { successor(m.phase) } else { m.phase };
    (phase != Phase::Unknown).then(|| {
        (
            phase,
            format!(
                "line {} ({}) was printed after the failure: output held in a buffer until the process exited",
                m.line, m.label
            ),
        )
    })
}

/// An error message quoted at the top of a report, above the log it came from.
fn by_quote_on_top(_voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // An error message quoted at the top of a report (`name: message`, not a sentence about
    // it), above the log it came from: when that log stops in the middle of a step, that
    // step is where it broke. A log that ends after a finished step says nothing of when.
    let before = f
        .milestones
        .iter()
        .any(|m| m.source == inc.source && m.line < inc.line);
    if !before && inc.line <= 3 && inc.message.contains(':') {
        let last_after = f
            .milestones
            .iter()
            .rfind(|m| m.source == inc.source && m.line > inc.end_line);
        // The lines after it are the run's log, not another exception (a traceback that
        // begins above the paste and chains into the next one).
        let another_error = |m: &Milestone| {
            f.incidents.iter().any(|x| {
                x.source == inc.source
                    && x.line > inc.end_line
                    && x.line <= m.line
                    && (x.exception.is_some() || !x.frames.is_empty())
            })
        };
        if let Some(m) = last_after.filter(|m| !m.done && !another_error(m)) {
            let phase = m.phase;
            if !matches!(phase, Phase::Startup | Phase::Shutdown | Phase::Unknown) {
                return Some((
                    phase,
                    format!(
                        "the error is quoted above the log it came from, which stops after line {} ({})",
                        m.line, m.label
                    ),
                ));
            }
        }
    }
    None
}

/// Serving-loop frames: the server was serving (weaker than a milestone), but not which step.
fn by_serving_frames(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // Serving-loop frames (`execute_model`, `event_loop_overlap`) say the server was
    // serving, which is weaker than a milestone (the warm-up request runs there too). The
    // loop runs a prompt's pass and every later token's alike: by itself it names neither,
    // and the report's words decide when they say (a guess is worse than `unknown`).
    let fr = inc
        .frames
        .iter()
        .rev()
        .find(|fr| voc.serving_function(&fr.function))?;
    if let Some(said) = by_report_prose(voc, f, inc) {
        return Some(said);
    }
    Some((
        Phase::Unknown,
        format!(
            "the traceback passes through the serving loop ({}), which runs prompts and later tokens alike",
            fr.function
        ),
    ))
}

/// The report says in words when it broke.
fn by_report_prose(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // A pasted report often says in words when it broke ("on the first request").
    if let Some((p, line)) = prose_phase(voc, f, inc.source) {
        return Some((p, format!("the report says so at line {line}")));
    }
    None
}

/// A shape mismatch raised inside a module's forward: the model running on its input.
fn by_forward_shape(_voc: &Vocabulary, _f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    // A shape that does not fit, raised inside a module's `forward`, is the model running on
    // its first input, not the loader (which raises outside any forward).
    if inc.class == FailureClass::ShapeMismatch
        && inc.frames.iter().any(|fr| fr.function == "forward")
    {
        return Some((
            Phase::Prefill,
            "the shape error is raised in a module's forward, running the model on its input"
                .into(),
        ));
    }
    None
}

/// The class's usual step, where the labels put it (docs/labels.md); evidence above overrides it.
fn by_class(voc: &Vocabulary, f: &LogFacts, inc: &Incident) -> Option<(Phase, String)> {
    let by_class = match inc.class {
        // A library opened at its first use failed in the step that first used it.
        FailureClass::ImportError if !block_matches(voc, f, inc, ShapeId::LoadedOnUse) => {
            Some(Phase::Startup)
        }
        FailureClass::ConfigError => Some(Phase::Startup),
        // A collective that had already run many times was set up long before; one named
        // while it runs (NCCL's enqueue, its kernel) may or may not be the first.
        FailureClass::CommError
            if !voc.shape(ShapeId::LateCollective).is_match(&inc.message)
                && !block_matches(voc, f, inc, ShapeId::CollectiveCall) =>
        {
            Some(Phase::CommInit)
        }
        FailureClass::MissingWeights => Some(Phase::WeightLoad),
        // A shape error that names a forward pass's tensors (a rotary table, a cache, an
        // index) is not a load's: the class's usual step yields to it, and the log says no other.
        FailureClass::ShapeMismatch if !block_matches(voc, f, inc, ShapeId::ForwardTensors) => {
            Some(Phase::WeightLoad)
        }
        // With no server milestone before it, a compiler error is a build from source,
        // unless a just-in-time compiler (Triton, Inductor, a JIT extension) ran it.
        FailureClass::BuildError if !jit_build(voc, f, inc) => Some(Phase::Install),
        _ => None,
    };
    by_class.map(|p| (p, format!("{} errors happen there", inc.class)))
}

/// Whether the failing block (its message, its lines, its frames' code) matches a shape.
fn block_matches(voc: &Vocabulary, f: &LogFacts, inc: &Incident, id: ShapeId) -> bool {
    let shape = voc.shape(id);
    shape.is_match(&inc.message)
        || inc
            .frames
            .iter()
            .filter_map(|fr| fr.code.as_deref())
            .any(|c| shape.is_match(c))
        || (inc.line..=inc.end_line.max(inc.key_line))
            .filter_map(|l| record_at(f, inc.source, l))
            .any(|r| shape.is_match(r.message()))
}

pub(super) fn successor(p: Phase) -> Phase {
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

/// The function a frame's code line calls last in its chain (`self.model_runner.init_cuda_graph(`
/// and a cut `self.init_cuda_graph` give `init_cuda_graph`), when the line is a call or a
/// bare attribute: an assignment's target is not a call.
pub(super) fn called_function(code: &str) -> Option<&str> {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = R.get_or_init(|| {
        crate::lazy::ascii_regex(r"^(?:[A-Za-z_][\w.\[\]]*\s*=\s*|return\s+|await\s+|\.)?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w{3,})\s*(?:\(|$)")
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
        // A chained call continued on its own line.
        assert_eq!(
            called_function(".build_for_cudagraph_capture(common_attn_metadata)"),
            Some("build_for_cudagraph_capture")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::facts::facts_of;

    fn phase(text: &str) -> Phase {
        facts_of(text).failure.expect("a failure").phase
    }

    #[test]
    fn a_call_that_does_not_fit_its_signature_in_sampling_fails_on_the_first_token() {
        let tb = |msg: &str| {
            format!("Traceback (most recent call last):\n  File \"/x/transformers/generation/utils.py\", line 3254, in _sample\n    outputs = self(**model_inputs)\n  File \"/x/torch/nn/modules/module.py\", line 1747, in _call_impl\n    return forward_call(*args, **kwargs)\n{msg}\n")
        };
        assert_eq!(
            phase(&tb(
                "TypeError: lce_forward() got an unexpected keyword argument 'cache_position'"
            )),
            Phase::Prefill
        );
        // Another error in the same frames may come from any token's input.
        assert_eq!(
            phase(&tb(
                "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'"
            )),
            Phase::Unknown
        );
    }

    #[test]
    fn the_logger_location_of_the_failing_line_names_the_code_that_wrote_it() {
        let log = |path: &str| {
            format!("E0305 20:23:38.779000 745 {path}:533] RuntimeError: Internal Triton PTX codegen error\nE0305 20:23:38.779000 745 {path}:533] ptxas fatal   : Value 'sm_120' is not defined for option 'gpu-name'\n")
        };
        assert_eq!(
            phase(&log(
                "site-packages/torch/_inductor/runtime/triton_heuristics.py"
            )),
            Phase::GraphCapture
        );
        // A location outside any phase's code says nothing.
        assert_ne!(
            phase(&log("site-packages/myapp/serve.py")),
            Phase::GraphCapture
        );
    }

    #[test]
    fn a_native_error_names_the_function_it_failed_in() {
        let log = |place: &str| {
            format!("[01/04/2023-17:36:59] [F] [TRT] Assertion failed: Unsupported SM: 0x809\n../rtSafe/cuda/caskUtils.cpp:111\nAborting...\n[01/04/2023-17:36:59] [E] [TRT] ../rtSafe/cuda/caskUtils.cpp (111) - Assertion Error in {place}: 0 (Unsupported SM: 0x809)\n")
        };
        assert_eq!(phase(&log("buildSerializedNetwork")), Phase::Install);
        let f = facts_of(&log("buildSerializedNetwork"));
        let reason = &f.failure.expect("a failure").phase_reason;
        assert!(
            reason.contains("failure in buildSerializedNetwork"),
            "{reason}"
        );
        // A plain word after "in" is not a function: nothing is read from it.
        assert_eq!(phase(&log("build")), Phase::Unknown);
    }

    #[test]
    fn a_library_that_fails_to_load_after_the_server_serves_loaded_lazily() {
        let log = |before: &str| {
            format!("{before}Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory\nAborted (core dumped)\n")
        };
        // cuDNN opens its sub-libraries at their first use, not at import: with no step
        // named before it, the log does not say which step that was.
        assert_eq!(phase(&log("Device \"cuda\" is detected\n")), Phase::Unknown);
        // A library an import links (the dynamic linker's own message) is start-up.
        assert_eq!(
            phase("Device \"cuda\" is detected\nImportError: libcudnn.so.9: cannot open shared object file: No such file or directory\n"),
            Phase::Startup
        );
        // After the web UI said it serves, a request asked for it: the prompt's pass.
        assert_eq!(
            phase(&log("Running on local URL:  http://0.0.0.0:7860\n")),
            Phase::Prefill
        );
        // uvicorn's process start is followed by the app's own start-up: not serving yet,
        // and the step of the app that first used the library is not named.
        assert_eq!(
            phase(&log("INFO:     Started server process [1]\nINFO:     Waiting for application startup.\n")),
            Phase::Unknown
        );
    }

    #[test]
    fn a_start_up_kind_of_error_after_loading_began_is_weight_load() {
        let log = |before: &str| {
            format!("{before}\"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!\"\nAborted (core dumped)\n")
        };
        assert_eq!(phase(&log("Global seed set to 42\n")), Phase::Startup);
        assert_eq!(
            phase(&log("Loading model from models/sd-v1/model.ckpt\nDiffusionWrapper has 859.52 M params.\n")),
            Phase::WeightLoad
        );
    }

    #[test]
    fn a_log_pasted_with_every_line_indented_keeps_its_milestones() {
        let log = |margin: &str| {
            format!("{margin}print_info: n_ctx_train      = 4096\n{margin}print_info: model type       = 4B\n{margin}Illegal instruction (core dumped)\n")
        };
        assert_eq!(phase(&log("")), Phase::WeightLoad);
        assert_eq!(phase(&log("    ")), Phase::WeightLoad);
        // A line indented more than the rest (a traceback's code) is still not one.
        let mixed = "Traceback (most recent call last):\n  File \"/x/run.py\", line 3, in main\n    print_info: model type = 4B\nValueError: bad value\n";
        assert_eq!(phase(mixed), Phase::Unknown);
    }

    #[test]
    fn a_panic_in_a_dependencys_source_names_no_step() {
        let log = |path: &str| {
            format!("INFO router: Initializing workers\nthread '<unnamed>' panicked at {path}/src/runtime/blocking/shutdown.rs:51:21:\nCannot drop a runtime in a context where blocking is not allowed.\n")
        };
        assert_ne!(
            phase(&log(
                "/home/u/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/tokio-1.45.1"
            )),
            Phase::Shutdown
        );
        // The program's own source does name its step.
        assert_eq!(phase(&log("/home/u/router")), Phase::Shutdown);
    }

    #[test]
    fn a_prompt_pass_inside_an_unfinished_warm_up_is_warmup() {
        let log = |before: &str| {
            format!("INFO engine: Loading weights took 2.1 s\n{before}Traceback (most recent call last):\n  File \"/srv/engine/runner.py\", line 88, in forward_extend\n    logits = self.model(ids)\nRuntimeError: CUDA error: an illegal memory access was encountered\n")
        };
        // The warm-up began and did not end: its dummy prompt pass failed.
        assert_eq!(
            phase(&log("INFO engine: Start warmup with 4 requests\n")),
            Phase::Warmup
        );
        let f = facts_of(&log("INFO engine: Start warmup with 4 requests\n"));
        let reason = f.failure.expect("a failure").phase_reason;
        assert!(reason.contains("warm-up begun at line 2"), "{reason}");
        // The warm-up ended (and the server served): a request's prompt pass.
        assert_eq!(
            phase(&log(
                "INFO engine: Start warmup with 4 requests\nINFO engine: warmup done\n"
            )),
            Phase::Prefill
        );
        // No warm-up at all: the frame names the step.
        assert_eq!(phase(&log("")), Phase::Prefill);
    }

    #[test]
    fn a_frame_through_graph_capture_is_graph_capture() {
        assert_eq!(
            phase(
                "Traceback (most recent call last):\n  File \"/x/cuda_graph_runner.py\", line 10, in capture\n    graph.replay()\nRuntimeError: CUDA error: operation not permitted when stream is capturing\n"
            ),
            Phase::GraphCapture
        );
    }

    #[test]
    fn a_device_refused_at_start_is_start_up_unless_a_sentence_tells_it() {
        assert_eq!(
            phase("Error: Could not create backend: Runtime compute cap 87 is not compatible with compile time compute cap 87\n"),
            Phase::Startup
        );
        assert_eq!(
            phase("i have an rx 6600 and an old cpu and i just want to try a small model but it spits out hipErrorNoBinaryForGpu: Unable to find code object for all current devices! every time\n"),
            Phase::Unknown
        );
    }

    #[test]
    fn a_windows_frame_under_inductor_is_graph_capture() {
        assert_eq!(
            phase(
                "Traceback (most recent call last):\n  File \"C:\\venv\\Lib\\site-packages\\torch\\_inductor\\compile_fx.py\", line 923, in _compile_fx_inner\n    raise InductorError(e)\nValueError: bad value in generated code\n"
            ),
            Phase::GraphCapture
        );
    }

    #[test]
    fn ptxas_on_nvccs_own_ptx_is_a_build_not_a_jit() {
        let log = "  ptxas /tmp/tmpxft_00005ef5_00000000-6_matmul.ptx, line 284; error   : Feature 'ldmatrix' requires .target sm_75 or higher\n  ptxas fatal   : Ptx assembly aborted due to errors\n";
        assert_eq!(phase(log), Phase::Install);
        // The same error on PTX a code generator wrote at run time is not an install.
        let jit = "  ptxas /tmp/tmp3k2j/kernel.ptx, line 284; error   : Feature 'ldmatrix' requires .target sm_75 or higher\n";
        assert_ne!(phase(jit), Phase::Install);
    }

    #[test]
    fn an_error_after_weights_began_loading_is_weight_load() {
        assert_eq!(
            phase(
                "INFO 05-01 10:00:00 [model_runner.py:1] Starting to load model /m...\nKeyError: 'model.layers.0.mlp.experts.w13_weight'\n"
            ),
            Phase::WeightLoad
        );
    }

    #[test]
    fn an_error_quoted_above_its_log_takes_the_logs_last_step() {
        // An engine-neutral error line: the test is about the quote, not an engine's wording.
        let quoted = "Error: GGML_ASSERT(n > 0) failed\n\
            time=2025-03-06T06:24:21.616Z level=INFO source=runner.go:992 msg=\"Server listening on 127.0.0.1:44397\"\n\
            llama_model_loader: loaded meta data with 34 key-value pairs and 389 tensors from /m.gguf\n\
            llama_model_loader: - kv   0: general.architecture str = bert\n";
        assert_eq!(phase(quoted), Phase::WeightLoad);
        // Further down, an error is not a quote: no milestone before it says nothing.
        let later = format!("{}{}", "note\n".repeat(5), quoted);
        assert_ne!(phase(&later), Phase::WeightLoad);
        // The end of a traceback cut above the paste, chained into another: not a quote.
        let chained = "  File \"/x/semantic.py\", line 623, in arange\n\
            ValueError: arange's range must be a power of 2\n\n\
            The above exception was the direct cause of the following exception:\n\n\
            Traceback (most recent call last):\n\
            \x20 File \"/x/jit.py\", line 348, in <lambda>\n\
            \x20   return self.run(grid=grid, warmup=False)\n\
            llama_model_loader: loaded meta data with 34 key-value pairs\n";
        assert_ne!(phase(chained), Phase::WeightLoad);
    }

    #[test]
    fn a_native_programs_buffered_output_after_its_fault_names_the_step() {
        // The sanitizer's report comes first (unbuffered); the engine's own lines, held in a
        // pipe's buffer, come out at exit: the prefill was running.
        let flushed = "========= COMPUTE-SANITIZER\n\
            ========= Invalid __global__ read of size 16 bytes\n\
            =========     at rmsnorm(float *)+0x630 in norm.cu:27\n\
            =========     by thread (208,0,0) in block (36,0,0)\n\
            ========= \n\
            ========= Program hit cudaErrorLaunchFailure (error 719) on CUDA API call to cudaDeviceSynchronize.\n\
            ========= \n\
            [engine] CUDA error 719 (unspecified launch failure) at norm.cu:75\n\
            [engine] device 0: H100\n\
            [engine] weights uploaded\n\
            [engine] request 1: prefill 37 tokens\n\
            ========= Target application returned an error\n\
            ========= ERROR SUMMARY: 2 errors\n";
        assert_eq!(phase(flushed), Phase::Prefill);
        // A logger's line (its own level and time) was written when it happened: what follows
        // it came later.
        let logged =
            "2026-01-01 10:00:00 ERROR CUDA error: an illegal memory access was encountered\n\
            [engine] request 1: prefill 37 tokens\n";
        assert_ne!(phase(logged), Phase::Prefill);
        // A specific error after the steps: not the last the program said, so not a buffer
        // flushed at exit (a report quoting an error above the log that leads to it again).
        let quoted_again = "CUDA error: an illegal memory access was encountered\n\
            [engine] request 1: prefill 37 tokens\n\
            RuntimeError: CUDA error: an illegal memory access was encountered\n";
        let reason = facts_of(quoted_again)
            .failure
            .expect("a failure")
            .phase_reason;
        assert!(!reason.contains("buffer"), "{reason}");
    }

    #[test]
    fn a_traceback_opening_on_a_packages_module_code_is_an_import() {
        let tb = |file: &str, frames: usize| {
            let mut s = format!("Traceback (most recent call last):\n  File \"{file}\", line 290, in <module>\n    lib = load()\n");
            for i in 0..frames {
                s += &format!("  File \"/usr/lib/python3/dist-packages/pkg/f{i}.py\", line 1, in helper_{i}\n    x()\n");
            }
            s + "ValueError: the table has 3 columns\n"
        };
        assert_eq!(
            phase(&tb("/usr/lib/python3/dist-packages/pkg/ext.py", 1)),
            Phase::Startup
        );
        // A program's own script, or a deep call under the package's module code (a
        // server run by `python -m` serves from there): not an import.
        assert_ne!(phase(&tb("/home/me/run.py", 1)), Phase::Startup);
        assert_ne!(
            phase(&tb("/usr/lib/python3/dist-packages/pkg/ext.py", 4)),
            Phase::Startup
        );
    }

    #[test]
    fn the_phase_after_a_finished_step_is_its_successor() {
        assert_eq!(successor(Phase::WeightLoad), Phase::MemoryPlan);
        assert_eq!(successor(Phase::Warmup), Phase::Prefill);
    }

    #[test]
    fn a_serving_loop_alone_does_not_name_prefill_or_decode() {
        let tb = "Traceback (most recent call last):\n  File \"/v/vllm/worker/model_runner.py\", line 1, in execute_model\n    out = self.model(x)\n  File \"/v/vllm/model_executor/layers/linear.py\", line 2, in apply\n    y = x @ w\nRuntimeError: mat1 and mat2 must have the same dtype\n";
        assert_eq!(phase(tb), Phase::Unknown);
        // A frame inside the loop that names its step decides.
        let decode = tb.replace("in apply", "in update_running_batch");
        assert_eq!(phase(&decode), Phase::Decode);
    }
}
