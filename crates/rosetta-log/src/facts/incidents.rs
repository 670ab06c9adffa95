//! Incidents: a traceback, or a block of adjacent error lines, with its class
//! from the strongest signal in it and the message to show; and the error
//! lines no signal names.

use super::*;
use crate::vocab::Signal;

/// The last error-looking lines that no signal named: an error level, an error banner
/// (`error-line` shape), or an exception line. A word like `fail` inside a
/// configuration dump, or a `#` comment, is not an error line.
pub(super) fn unnamed_errors(voc: &Vocabulary, records: &[Record]) -> Vec<(usize, u64, String)> {
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

/// The line names a failure: a signal that can class an incident, or an exception line.
pub(super) fn names_failure(voc: &Vocabulary, msg: &str) -> bool {
    voc.signal_matches_read(msg)
        .into_iter()
        .any(|s| voc.signals[s].strength >= 5)
        || traceback::parse_exception_line(msg.trim()).is_some()
}

/// Incidents from tracebacks and from error lines outside them.
pub(super) fn incidents(voc: &Vocabulary, records: &[Record], tbs: &[Traceback]) -> Vec<Incident> {
    let times = Times::new(records);
    let in_tb = |source: usize, line: u64| {
        tbs.iter().any(|t| {
            t.source == source
                && t.start_line <= line
                && line <= t.end_line + t.exception.as_ref().map_or(0, |e| e.extra.len() as u64)
        })
    };
    let mut out: Vec<Incident> = Vec::new();
    for tb in tbs {
        let mut inc = traceback_incident(voc, tb, tbs);
        // A deliberate wrap (`raise DeferredCudaCallError(...) from e`) that names what the
        // program was doing (CUDA's lazy initialisation) around a bare Python error (an
        // index out of range) is the failure; the inner error is its detail. So is an error
        // raised while handling one that quotes what the first said (`KeyError: 'gfx1101'`,
        // then `KeyError: "Unknown GPU architecture: gfx1101. ..."`): a handler explaining it.
        if let Some(inner) = tb
            .chained_from
            .filter(|&i| tb.direct_cause || explains(tbs.get(i), tb))
            .and_then(|i| out.get_mut(i))
        {
            let generic_inner =
                inner.class == FailureClass::PythonError && inner.signals.is_empty();
            if generic_inner
                && inc.class != FailureClass::PythonError
                && inc.role == Role::Root
                && inc.strength > inner.strength
            {
                inner.role = Role::Weak;
            }
        }
        times.stamp(&mut inc, tb.source, tb.start_line);
        out.push(inc);
    }
    line_incidents(voc, records, &in_tb, &times, &mut out);
    out.sort_by_key(|x| (x.source, x.line));
    absorb_native_backtraces(&mut out);
    out
}

/// Whether `outer`, raised while handling `inner`, repeats what `inner` said (its message,
/// unquoted, at least three characters): the handler re-raising it with an explanation.
fn explains(inner: Option<&Traceback>, outer: &Traceback) -> bool {
    fn said(t: &Traceback) -> Option<&str> {
        t.exception.as_ref().map(|e| e.message.as_str())
    }
    let (Some(inner), Some(outer)) = (inner.and_then(said), said(outer)) else {
        return false;
    };
    let inner = inner.trim().trim_matches(['\'', '"']);
    inner.chars().count() >= 3 && outer.contains(inner) && outer.len() > inner.len() + 8
}

/// The last timestamp seen in each record's source, at or before it: the time of an
/// incident whose own lines carry none.
struct Times<'a> {
    records: &'a [Record],
    times: Vec<Option<(f64, String)>>,
}

impl<'a> Times<'a> {
    fn new(records: &'a [Record]) -> Times<'a> {
        let mut last_time: HashMap<usize, (f64, String)> = HashMap::new();
        let mut times: Vec<Option<(f64, String)>> = Vec::with_capacity(records.len());
        for r in records {
            if let (Some(t), Some(tt)) = (r.prefix.time, &r.prefix.time_text) {
                last_time.insert(r.source, (t, tt.clone()));
            }
            times.push(last_time.get(&r.source).cloned());
        }
        Times { records, times }
    }

    fn at(&self, source: usize, line: u64) -> Option<(f64, String)> {
        let idx = self
            .records
            .partition_point(|r| (r.source, r.line) <= (source, line));
        idx.checked_sub(1).and_then(|i| self.times[i].clone())
    }

    fn stamp(&self, inc: &mut Incident, source: usize, line: u64) {
        if let Some((t, tt)) = self.at(source, line) {
            inc.time = Some(t);
            inc.time_text = Some(tt);
        }
    }
}

/// The incident of one traceback: classed by the signals in its exception (or, cut before
/// it, in the statement its last frame raises), then by what its frames say.
fn traceback_incident(voc: &Vocabulary, tb: &Traceback, tbs: &[Traceback]) -> Incident {
    let mut texts: Vec<String> = Vec::new();
    // A traceback cut before its exception line, whose last frame's code is a `raise`:
    // that statement says what was raised.
    let raised = tb
        .exception
        .is_none()
        .then(|| {
            tb.frames
                .last()
                .and_then(|f| f.code.as_deref())
                .and_then(raised_by)
        })
        .flatten();
    texts.extend(raised.clone());
    // Cut before its exception, a traceback whose header line first said what went wrong
    // (the error and its traceback printed on one line) is classed by those words.
    let header = tb.header.clone().filter(|_| tb.exception.is_none());
    texts.extend(header.clone());
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
        voc,
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
        refine_exception_class(voc, &mut inc, tb, ex);
    } else if let Some(r) = raised.as_ref().filter(|_| inc.strength > 0) {
        inc.message = quote(r);
    } else if let Some(h) = header.as_ref().filter(|_| inc.strength > 0) {
        inc.message = quote(h);
    } else if inc.strength == 0 {
        truncated_traceback(voc, &mut inc, tb, raised);
    }
    if let Some(prev) = tb
        .chained_from
        .and_then(|i| tbs.get(i))
        .and_then(|t| t.exception.as_ref())
    {
        inc.cause_of = Some(format!("{}: {}", prev.type_name, prev.message));
    }
    inc
}

/// A raised exception that no signal classed (a python error) takes its class from where it
/// was raised: a package's build, an import of a module that does not compile, an assert on
/// shapes, config code.
fn refine_exception_class(voc: &Vocabulary, inc: &mut Incident, tb: &Traceback, ex: &Exception) {
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
    // So is one raised inside code that runs a compiler build (a JIT's ninja, Triton's
    // `compile` turning a kernel into IR): the build failed.
    let in_build = raised_in_build(voc, &tb.frames)
        || voc
            .shape(ShapeId::BuildFrames)
            .is_match(&frames_text(tb.frames.iter()));
    if in_build {
        promote(inc, FailureClass::BuildError, 74, "build-frames");
    }
    // A module that does not compile, reached by an import (the innermost frame is a
    // module's own import line): the import failed, whatever the file holds.
    let import_syntax = matches!(
        ex.short_type(),
        "SyntaxError" | "IndentationError" | "TabError"
    ) && tb.frames.last().is_some_and(|f| {
        f.function == "<module>"
            && f.code
                .as_deref()
                .is_some_and(|c| c.starts_with("from ") || c.starts_with("import "))
    });
    if import_syntax {
        promote(inc, FailureClass::ImportError, 75, "import-syntax");
    }
    if asserts_shape {
        promote(inc, FailureClass::ShapeMismatch, 80, "shape-assert");
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
    // A call whose arguments the callee does not take is two pieces of code
    // disagreeing on a signature, wherever it is raised: no config value was read.
    let call_signature = voc.shape(ShapeId::CallSignature).is_match(&inc.message);
    if generic && !call_signature && inc.class == FailureClass::PythonError {
        let frame_text = frames_text(tb.frames.iter().rev().take(3));
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
            promote(inc, FailureClass::ConfigError, 70, "config-code");
        }
    }
}

/// A python error (no signal classed it) takes the class that where it was raised says; the
/// first such step wins.
fn promote(inc: &mut Incident, class: FailureClass, strength: u8, signal: &'static str) {
    if inc.class == FailureClass::PythonError {
        inc.class = class;
        inc.strength = strength;
        inc.signals.push(signal);
    }
}

/// A traceback cut before its exception line, with no signal in it: a weak failure, classed
/// by its frames, its message what its last frame raises or where it ends.
fn truncated_traceback(
    voc: &Vocabulary,
    inc: &mut Incident,
    tb: &Traceback,
    raised: Option<String>,
) {
    // Frames without an exception line: a truncated traceback; config code names the class.
    let frame_text = frames_text(tb.frames.iter());
    // Raised in a package's build, or by code that runs a compiler build (a JIT's ninja).
    let in_build =
        raised_in_build(voc, &tb.frames) || voc.shape(ShapeId::BuildFrames).is_match(&frame_text);
    // A native backtrace with no error above it is the stack of a process that
    // crashed (a debugger's `bt`, a crash handler's dump).
    // So is faulthandler's dump of the crashed thread with its `Fatal Python
    // error` header cut: Python prints it only on a fatal signal.
    inc.class = if in_build {
        FailureClass::BuildError
    } else if tb.is_native() || tb.fault_dump {
        FailureClass::NativeAbort
    } else if voc.shape(ShapeId::ConfigWords).is_match(&frame_text) {
        FailureClass::ConfigError
    } else {
        FailureClass::PythonError
    };
    inc.strength = 8;
    inc.role = Role::Weak;
    inc.message = raised.map(|r| quote(&r)).unwrap_or_else(|| {
        tb.frames
            .last()
            .map(|f| {
                let what = if tb.is_native() {
                    "native backtrace"
                } else if tb.fault_dump {
                    "the crashed thread's stack (faulthandler)"
                } else {
                    "traceback"
                };
                format!("{what} ends in {} ({}:{})", f.function, f.file, f.line)
            })
            .unwrap_or_default()
    });
}

/// Incidents from error lines outside tracebacks, grouped when adjacent on the same stream.
fn line_incidents(
    voc: &Vocabulary,
    records: &[Record],
    in_tb: &dyn Fn(usize, u64) -> bool,
    times: &Times,
    out: &mut Vec<Incident>,
) {
    let mut i = 0;
    while i < records.len() {
        let r = &records[i];
        let Some(opening) = opens_block(voc, r, in_tb) else {
            i += 1;
            continue;
        };
        let (j, last_line) = block_end(voc, records, i, in_tb);
        let (texts, text_lines) = block_texts(&records[i..j]);
        let mut inc = classify_lines(voc, &texts, &text_lines, r.source, r.line, r.line);
        let is_warning = is_warning(voc, r);
        if signal_counts(voc, &mut inc, is_warning) {
            out.push(signalled(inc, &records[i..j], last_line, times));
        } else if let Some(inc) = bare_exception(voc, &texts, r, last_line, is_warning) {
            out.push(inc);
        } else if opening == Opening::Generic && !is_warning {
            out.push(generic_error(voc, records, i, &texts, last_line, times));
        }
        i = j;
    }
}

/// Why a line opens a block of error lines.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// A signal or an exception line names a failure.
    Named,
    /// An error line (error level, an error banner) that nothing names.
    Generic,
}

/// Whether the line opens a block of error lines, and why.
fn opens_block(
    voc: &Vocabulary,
    r: &Record,
    in_tb: &dyn Fn(usize, u64) -> bool,
) -> Option<Opening> {
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
    if !candidate {
        return None;
    }
    let strongest = voc
        .signal_matches_read(r.message())
        .into_iter()
        .map(|s| voc.signals[s].strength)
        .max();
    let above_info = r.prefix.level.is_none_or(|l| l > Level::Info);
    let named = strongest.is_some_and(|st| st >= 80)
        || (above_info
            && (strongest.is_some_and(|st| st >= 5)
                || traceback::parse_exception_line(r.message().trim()).is_some()
                || traceback::find_exception_in_prose(r.message()).is_some()));
    if named {
        Some(Opening::Named)
    } else {
        is_error_line(voc, r).then_some(Opening::Generic)
    }
}

/// A warning line: at WARNING level (NCCL's `NCCL WARN` only for its known-harmless notices)
/// or a Python warning.
fn is_warning(voc: &Vocabulary, r: &Record) -> bool {
    // NCCL prints its real failures as `NCCL WARN` too (`Cuda failure`, `Connect
    // to ... failed`); only its known-harmless notices count as warnings.
    let nccl_warn = r.text.contains(" NCCL WARN ");
    (r.prefix.level == Some(Level::Warning)
        && (!nccl_warn || voc.shape(ShapeId::BenignNcclWarn).is_match(r.message())))
        || voc.shape(ShapeId::PythonWarning).is_match(r.message())
}

/// Whether the block's signal makes it an incident of its own: a warning needs a strong one,
/// except a failed import, which is kept as a weak failure (its role demoted here).
fn signal_counts(voc: &Vocabulary, inc: &mut Incident, is_warning: bool) -> bool {
    // A warning line needs a strong signal to count as a root failure; a weaker one
    // (a failed import logged as a warning) is kept as a weak failure, used when
    // nothing else failed.
    let weak_warning = is_warning && inc.strength < 85;
    let kept_as_weak = weak_warning
        && inc.class == FailureClass::ImportError
        && !voc.shape(ShapeId::IgnoredImport).is_match(&inc.message);
    if kept_as_weak && inc.role == Role::Root {
        inc.role = Role::Weak;
    }
    inc.strength >= 5 && (!weak_warning || kept_as_weak)
}

/// The incident a signal classed, completed from its block: end, rank, the exception line
/// for a message, and the block's own time (else the last one before it).
fn signalled(mut inc: Incident, block: &[Record], last_line: u64, times: &Times) -> Incident {
    let r = &block[0];
    inc.end_line = last_line;
    inc.rank = block.iter().find_map(|x| x.prefix.effective_rank());
    if let Some(line) = block
        .iter()
        .find(|x| traceback::parse_exception_line(x.message().trim()).is_some())
    {
        if inc.message.is_empty() {
            inc.message = line.message().trim().to_string();
        }
    }
    let own = block
        .iter()
        .find_map(|x| Some((x.prefix.time?, x.prefix.time_text.clone()?)));
    if let Some((t, tt)) = own.or_else(|| times.at(r.source, r.line)) {
        inc.time = Some(t);
        inc.time_text = Some(tt);
    }
    inc
}

/// An exception line on its own, with no signal: a python error (weak on a warning line).
fn bare_exception(
    voc: &Vocabulary,
    texts: &[String],
    r: &Record,
    last_line: u64,
    is_warning: bool,
) -> Option<Incident> {
    let (t, m) = texts.iter().find_map(|x| {
        traceback::parse_exception_line(x.trim()).or_else(|| traceback::find_exception_in_prose(x))
    })?;
    let mut inc = classify(voc, texts, r.source, r.line, r.line);
    inc.class = FailureClass::PythonError;
    inc.strength = 10;
    inc.role = if is_warning { Role::Weak } else { Role::Root };
    inc.message = format!("{t}: {m}");
    inc.end_line = last_line;
    inc.rank = r.prefix.effective_rank();
    Some(inc)
}

/// An error line no signal names, opening the block at `records[i]`: a failure of last
/// resort, so that a log holding one never reads as clean (a build error after a build).
fn generic_error(
    voc: &Vocabulary,
    records: &[Record],
    i: usize,
    texts: &[String],
    last_line: u64,
    times: &Times,
) -> Incident {
    let r = &records[i];
    let mut inc = classify(voc, texts, r.source, r.line, r.line);
    inc.class = FailureClass::PythonError;
    inc.strength = GENERIC_STRENGTH;
    inc.role = Role::Root;
    inc.signals.push("error-line");
    if compiler_style(r.message()) && after_build_step(voc, records, i) {
        inc.class = FailureClass::BuildError;
        inc.signals.push("build-diagnostic");
    }
    inc.message = quote(r.message());
    inc.end_line = last_line;
    inc.rank = r.prefix.effective_rank();
    if let Some((t, tt)) = times.at(r.source, r.line) {
        inc.time = Some(t);
        inc.time_text = Some(tt);
    }
    inc
}

/// Where the block of error lines opened at `records[i]` ends (exclusive), and its last line.
fn block_end(
    voc: &Vocabulary,
    records: &[Record],
    i: usize,
    in_tb: &dyn Fn(usize, u64) -> bool,
) -> (usize, u64) {
    let sig = voc;
    let r = &records[i];
    let key = r.prefix.stream_key();
    let mut j = i + 1;
    let mut last_line = r.line;
    let mut group_time = r.prefix.time;
    while j < records.len() {
        let n = &records[j];
        // Error lines, indented detail, and short fillers of a paste (`[...]`, a code fence).
        // A table (Triton's model status) wraps a long cell onto rows of its own.
        // A line the logger stamped at INFO or below continues the block only when a
        // signal names it: its error word may be a signal's literal in ordinary words
        // (a server announcing its version after a crash is the next launch).
        let quiet_level = n.prefix.level.is_some_and(|l| l <= Level::Info);
        let errorish = n.errorish && (!quiet_level || !sig.signal_matches(n.message()).is_empty());
        let continues = errorish
            || one_call(&records[j - 1], n)
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
    (j, last_line)
}

/// The texts a block of error lines is classified on, and the line each starts on.
fn block_texts(block: &[Record]) -> (Vec<String>, Vec<u64>) {
    // The prefix parser strips `NCCL WARN`; it is the class's best word, so keep it.
    let mut texts: Vec<String> = Vec::new();
    // The line each text starts on: a blank line inside the block is not a record.
    let mut text_lines: Vec<u64> = Vec::new();
    for x in block {
        let wrapped = wrapped_cell(x.message()).zip(texts.last_mut());
        if let Some((rest, prev)) = wrapped.filter(|(_, p)| p.len() < 1000) {
            // The wrapped part of a table cell continues the cell above it.
            let head = prev.trim_end().trim_end_matches('|').trim_end().to_string();
            *prev = format!("{head} {rest}");
            continue;
        }
        if let Some(prev) = texts.last_mut().filter(|p| {
            traceback::continues_sentence(p, x.message())
                && traceback::parse_exception_line(p.trim()).is_some()
        }) {
            // An exception message written over two source lines goes on here.
            prev.push(' ');
            prev.push_str(x.message().trim());
            continue;
        }
        texts.push(match x.text.find(" NCCL WARN ") {
            Some(_) if !x.message().contains("NCCL") => format!("NCCL WARN {}", x.message()),
            _ => x.message().to_string(),
        });
        text_lines.push(x.line);
    }
    (texts, text_lines)
}

/// A native backtrace printed just before an abort belongs to it.
fn absorb_native_backtraces(out: &mut Vec<Incident>) {
    let mut absorbed = Vec::new();
    for i in 0..out.len() {
        if !out[i].frames.is_empty() || out[i].exception.is_some() {
            continue;
        }
        let (src, line) = (out[i].source, out[i].line);
        // Frames printed right before the abort, or right after it (a crash handler's dump).
        // Python's faulthandler (`Fatal Python error: Segmentation fault`) dumps every
        // thread's stack after it; the crashed thread's may follow the others'.
        let end = if out[i].message.starts_with("Fatal Python error") {
            out[i].end_line + 200
        } else {
            out[i].end_line
        };
        let donor = (0..out.len()).rev().find(|&j| {
            let x = &out[j];
            j != i
                && x.source == src
                && x.exception.is_none()
                && !x.frames.is_empty()
                && x.role == Role::Weak
                // A cut traceback that its frames already class (a build's) stays its own
                // beside a wrapper's line that only says something failed.
                && (out[i].role != Role::Cascade
                    || matches!(x.class, FailureClass::NativeAbort | FailureClass::PythonError))
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
}

/// The strength of an error line that no signal names: below every signal and below a
/// bare exception line (10), so that anything more specific wins.
pub(super) const GENERIC_STRENGTH: u8 = 6;

/// The frames as text for the vocabulary's word checks: file, function and code, a line each.
fn frames_text<'a>(frames: impl Iterator<Item = &'a Frame>) -> String {
    frames
        .map(|f| {
            format!(
                "{} {} {}\n",
                f.file,
                f.function,
                f.code.as_deref().unwrap_or("")
            )
        })
        .collect()
}

/// A compiler's diagnostic with no location in front (`error: 'kernel' attribute requires
/// Metal language standard macos-metal2.3`, rustc's `error[E0425]: cannot find value`): the
/// line opens with a lower-case `error:` or `error[CODE]:`.
fn compiler_style(msg: &str) -> bool {
    let m = msg.trim_start();
    m.starts_with("error: ")
        || m.strip_prefix("error[").is_some_and(|rest| {
            rest.split_once("]: ").is_some_and(|(code, _)| {
                code.len() <= 8 && code.chars().all(|c| c.is_ascii_alphanumeric())
            })
        })
}

/// A build ran just before record `at`: within the 30 lines above it (same input), a line
/// that hints at an install or a build (`cargo build`, `pip install`, CMake's progress).
fn after_build_step(voc: &Vocabulary, records: &[Record], at: usize) -> bool {
    let r = &records[at];
    records[..at]
        .iter()
        .rev()
        .take_while(|x| x.source == r.source && x.line + 30 >= r.line)
        .any(|x| {
            voc.signal_matches(x.message()).into_iter().any(|s| {
                let sg = &voc.signals[s];
                sg.strength < 5 && sg.phase == Some(Phase::Install)
            })
        })
}

/// Frames run by a package build (pip's build env, setuptools): the phase vocabulary's
/// `install` paths say so.
pub(super) fn raised_in_build(voc: &Vocabulary, frames: &[Frame]) -> bool {
    frames
        .iter()
        .any(|f| voc.phase_of_function(&f.function, &f.file) == Some(Phase::Install))
}

/// A row of a text table (`| name | 1 | UNAVAILABLE: ... |`).
pub(super) fn table_row(msg: &str) -> bool {
    msg.trim_start().starts_with('|')
}

/// The text of a table row that only continues a wrapped cell: its leading cells are empty
/// (`|      |     | mpiSize == tp * pp (...) |`).
pub(super) fn wrapped_cell(msg: &str) -> Option<String> {
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

/// A line at error level, or one that opens with an error banner (`ERROR:`, `error:`,
/// `FATAL`, `fatal error`, `[E]`, ...; the `error-line` shape).
pub(super) fn is_error_line(voc: &Vocabulary, r: &Record) -> bool {
    matches!(r.prefix.level, Some(Level::Error | Level::Critical))
        || voc.shape(ShapeId::ErrorLine).is_match(r.message())
        || voc.is_banner(&r.text)
}

/// Two lines of one logging call: a multi-line message that the logger stamped line by line
/// with the same time, level (above INFO) and source location (torch's `E1105 18:09:29.303000
/// 9336 triton_heuristics.py:715]` on the code it quotes, then on the error it carries).
fn one_call(a: &Record, b: &Record) -> bool {
    let (p, q) = (&a.prefix, &b.prefix);
    p.time_text.is_some()
        && p.time_text == q.time_text
        && p.location.is_some()
        && p.location == q.location
        && p.pid == q.pid
        && p.level.is_some_and(|l| l > Level::Info)
        && p.level == q.level
}

/// Classifies a group of texts by its strongest signal.
pub(super) fn classify(
    sig: &Vocabulary,
    texts: &[String],
    source: usize,
    line: u64,
    key_line: u64,
) -> Incident {
    classify_lines(sig, texts, &[], source, line, key_line)
}

/// `classify`, with the line each text starts on (`text_lines`, one per text) when the texts
/// are lines of the log: the key line is then the chosen text's own, blank lines between
/// them or not. Without them, texts after the first are taken to follow `line` one a line.
pub(super) fn classify_lines(
    sig: &Vocabulary,
    texts: &[String],
    text_lines: &[u64],
    source: usize,
    line: u64,
    key_line: u64,
) -> Incident {
    let mut inc = unclassed(source, line, key_line);
    let mut picks = Picks::default();
    for (ti, t) in texts.iter().enumerate() {
        picks.read(sig, &mut inc, ti, t);
    }
    let chosen = picks.chosen(sig);
    // A signal that lost the class to another says nothing of the phase: the NCCL watchdog
    // reporting an illegal address (`ProcessGroupNCCL ... CUDA error`) names a communicator,
    // not the step that faulted. Hint-only rows always speak.
    inc.phase_hint = picks.phase_hint(chosen.map(|((_, s, _), _)| sig.signals[s].class));
    if let Some(((strength, s, ti), role)) = chosen {
        inc.class = sig.signals[s].class;
        inc.strength = strength;
        inc.role = role;
        inc.message = quote(&texts[ti]);
        inc.key_line = match text_lines.get(ti) {
            Some(&at) if text_lines.len() == texts.len() => at,
            _ if texts.len() > 1 && key_line == line => key_line + ti as u64,
            _ => key_line,
        };
    }
    inc
}

/// An incident at `line` that no signal has classed yet: a cascade python error of strength 0.
fn unclassed(source: usize, line: u64, key_line: u64) -> Incident {
    Incident {
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
    }
}

/// A signal that may class a block: its strength, its index among the vocabulary's signals,
/// and the index of the text it matched.
type Pick = (u8, usize, usize);

/// What `classify_lines` gathers from a block's texts: the strongest signal of each role and
/// the phases the signals imply.
#[derive(Default)]
struct Picks {
    root: Option<Pick>,
    cascade: Option<Pick>,
    /// A weak signal (a fallback notice, how a process ended) names the block only when no
    /// root signal does: any other error of the block is the failure.
    weak: Option<Pick>,
    /// The first strong synchronous root, for an asynchronous fault reported after it.
    first_sync_root: Option<Pick>,
    /// Phases the signals imply: (strength, phase, the class the signal names, hint only).
    phases: Vec<(u8, Phase, FailureClass, bool)>,
}

impl Picks {
    /// Reads text `ti`: its signals go into the incident's list and into the best picks.
    fn read(&mut self, sig: &Vocabulary, inc: &mut Incident, ti: usize, t: &str) {
        if t.contains("asynchronously reported") {
            inc.asynchronous = true;
        }
        // An error given only by its number reads as its text too, a tuple of strings as
        // their joined text.
        let matched = sig.signal_matches_read(t);
        // A line whose strongest signal is weak (a fallback notice quoting the error it
        // fell back from) is weak as a whole: the error it quotes did not stop the program.
        let line_weak = matched
            .iter()
            .map(|&s| &sig.signals[s])
            .filter(|sg| sg.strength >= 5)
            .max_by_key(|sg| sg.strength)
            .is_some_and(|sg| sg.role == Role::Weak);
        for s in matched {
            let sg = &sig.signals[s];
            if !inc.signals.contains(&sg.id) {
                inc.signals.push(sg.id);
            }
            inc.asynchronous |= sg.asynchronous;
            if let Some(p) = sg.phase {
                self.phases
                    .push((sg.strength, p, sg.class, sg.strength < 5));
            }
            // Strength-1 rows only hint at the phase; they never name the class.
            if sg.strength >= 5 {
                self.offer(sg, (sg.strength, s, ti), line_weak);
            }
        }
    }

    /// Keeps a class-naming signal if it is the strongest of its role so far (a root on a
    /// weak line counts as weak), and the first strong synchronous root.
    fn offer(&mut self, sg: &Signal, pick: Pick, line_weak: bool) {
        let slot = match sg.role {
            Role::Cascade => &mut self.cascade,
            Role::Root if !line_weak => &mut self.root,
            Role::Root | Role::Weak => &mut self.weak,
        };
        if slot.is_none_or(|(st, _, _)| sg.strength > st) {
            *slot = Some(pick);
        }
        if sg.role == Role::Root
            && !line_weak
            && !sg.asynchronous
            && sg.strength >= 85
            && self.first_sync_root.is_none()
        {
            self.first_sync_root = Some(pick);
        }
    }

    /// The signal that classes the block, with the role it gives: the best root (or weak)
    /// signal that can class, else the best cascade.
    fn chosen(&self, sig: &Vocabulary) -> Option<(Pick, Role)> {
        let mut best_root = self.root;
        // An asynchronous fault (a launch failure, an illegal address) is reported at the
        // next call after whatever went wrong: a strong error of another class printed
        // before it in the same block (a kernel with no code for this GPU) is its root.
        if let (Some(best), Some(first)) = (best_root, self.first_sync_root) {
            let (b, f) = (&sig.signals[best.1], &sig.signals[first.1]);
            if b.asynchronous && first.2 < best.2 && f.class != b.class {
                best_root = Some(first);
            }
        }
        match (best_root.or(self.weak), self.cascade) {
            (Some(r), _) if r.0 >= 5 => Some((r, sig.signals[r.1].role)),
            (_, Some(c)) => Some((c, Role::Cascade)),
            (Some(r), None) => Some((r, sig.signals[r.1].role)),
            (None, None) => None,
        }
    }

    /// The phase of the strongest signal that names `class` (the chosen one's) or only
    /// hints; the first of equal strength wins.
    fn phase_hint(&self, class: Option<FailureClass>) -> Option<Phase> {
        self.phases
            .iter()
            .filter(|(_, _, c, hint)| *hint || class.is_none_or(|k| k == *c))
            .fold(None::<(u8, Phase)>, |best, &(st, p, _, _)| match best {
                Some((b, _)) if b >= st => best,
                _ => Some((st, p)),
            })
            .map(|(_, p)| p)
    }
}

/// What a `raise` statement raises, as an exception line: `raise RuntimeError(f"weight
/// {name} does not exist")` gives `RuntimeError: weight {name} does not exist`. Only a type
/// named like an exception with a string literal for its message (cut at the line's end when
/// the paste cut it).
fn raised_by(code: &str) -> Option<String> {
    let rest = code.trim().strip_prefix("raise ")?;
    let (ty, arg) = rest.split_once('(')?;
    let exceptional = ty.ends_with("Error") || ty.ends_with("Exception");
    if !exceptional
        || !ty
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
    {
        return None;
    }
    let arg = arg.trim_start();
    let arg = arg
        .strip_prefix(['f', 'r', 'b', 'F', 'R', 'B'])
        .filter(|a| a.starts_with(['"', '\'']))
        .unwrap_or(arg);
    let q = arg.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let body = &arg[1..];
    let text = body.split(q).next().unwrap_or(body).trim();
    (text.len() >= 5).then(|| format!("{ty}: {text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voc() -> &'static Vocabulary {
        Vocabulary::embedded()
    }

    #[test]
    fn a_cut_traceback_through_a_build_is_a_build_error_beside_a_wrapper_line() {
        // The engine's wrapper says only that it failed; the traceback under it, cut before
        // its exception, runs torch's extension builder: a build failed.
        let p = "ERROR 07-02 07:04:46 [core.py:500]";
        let log = format!(
            "{p} EngineCore failed to start.\n{p} Traceback (most recent call last):\n{p}   File \"/venv/lib/python3.12/site-packages/torch/utils/cpp_extension.py\", line 2506, in _run_ninja_build\n{p}     subprocess.run(\n"
        );
        let f = crate::facts::facts_of(&log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::BuildError, "{}", f.message);
        // Cut in code that builds nothing, it stays a python error.
        let other = log.replace("_run_ninja_build", "_check_cuda_version");
        let f = crate::facts::facts_of(&other).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::PythonError, "{}", f.message);
    }

    #[test]
    fn a_cut_traceback_is_classed_by_the_error_its_header_line_printed() {
        // vLLM's worker prints the error, then its traceback, on one line; the paste is cut
        // before the exception line.
        let p = "(VllmWorkerProcess pid=67) ERROR 11-05 03:21:52 multiproc_worker_utils.py:233]";
        let head = "Exception in worker VllmWorkerProcess while processing method determine_num_available_blocks: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total capacity of 22.09 GiB of which 758.44 MiB is free.";
        let log = format!(
            "{p} {head}, Traceback (most recent call last):\n{p}   File \"/v/vllm/executor/multiproc_worker_utils.py\", line 226, in _run_worker_process\n{p}     output = executor(*args, **kwargs)\n"
        );
        let f = crate::facts::facts_of(&log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::GpuOom, "{}", f.message);
        assert!(f.message.contains("CUDA out of memory"), "{}", f.message);
        // Words that name nothing leave the cut traceback where it ends.
        let log = log.replace(
            head,
            "Exception in worker VllmWorkerProcess while processing method run",
        );
        let f = crate::facts::facts_of(&log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::PythonError, "{}", f.message);
        assert!(
            f.message.contains("ends in _run_worker_process"),
            "{}",
            f.message
        );
    }

    #[test]
    fn a_handler_re_raising_with_an_explanation_names_the_failure() {
        // `except KeyError: raise KeyError(f"Unknown GPU architecture: {arch}. ...")`: the
        // second error says what the first meant.
        let log = "Traceback (most recent call last):\n  File \"/x/chip_info.py\", line 60, in get_gfx\n    return GFX_MAP[gfx]\nKeyError: 'gfx1101'\nDuring handling of the above exception, another exception occurred:\nTraceback (most recent call last):\n  File \"/x/chip_info.py\", line 65, in get_gfx\n    raise KeyError(\nKeyError: \"Unknown GPU architecture: gfx1101. Supported architectures: ['gfx90a', 'gfx942']\"\n";
        let f = crate::facts::facts_of(log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::NoKernelForArch, "{}", f.message);
        assert_eq!(f.line, 9);
        // A handler failing on its own (its error does not repeat the first) leaves the
        // first error the failure.
        let other = log.replace("gfx1101. Supported", "gfx1100. Supported");
        let f = crate::facts::facts_of(&other).failure.expect("a failure");
        assert_eq!(
            (f.class, f.line),
            (FailureClass::PythonError, 4),
            "{}",
            f.message
        );
    }

    #[test]
    fn an_exception_raised_while_triton_compiles_a_kernel_is_a_build_error() {
        // Triton's front end refusing the kernel it turns into IR: a compile that failed,
        // whatever the exception type.
        let log = "Traceback (most recent call last):\n  File \"/app/vllm/attention/ops/unified_attention.py\", line 88, in unified_attention\n    kernel_unified_attention_2d[(\n  File \"/usr/lib/python3/dist-packages/triton/compiler/compiler.py\", line 278, in compile\n    module = src.make_ir(options, codegen_fns, module_map, context)\n  File \"/usr/lib/python3/dist-packages/triton/language/semantic.py\", line 623, in arange\n    raise ValueError(\"arange's range must be a power of 2\")\nValueError: arange's range must be a power of 2\n";
        let f = crate::facts::facts_of(log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::BuildError, "{}", f.message);
        // The same error raised by the kernel's caller, before any compile, is a python error.
        let caller = log.replace(
            "compiler/compiler.py\", line 278, in compile",
            "runtime/jit.py\", line 569, in run",
        );
        let f = crate::facts::facts_of(&caller).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::PythonError, "{}", f.message);
    }

    #[test]
    fn the_lines_of_one_logging_call_are_one_incident() {
        // torch's logger stamps each line of a multi-line message: the quoted code line does
        // not end the block, and the error it carries names the failure.
        let p =
            "E1105 18:09:29.303000 9336 torch/_inductor/runtime/triton_heuristics.py:715] [0/0]";
        let log = format!(
            "{p} triton.compiler.errors.CompilationError: at 1:0:\n{p} def triton_poi_fused_0(in_ptr0, xnumel):\n{p} ^\n{p} ValueError(\"type fp8e4nv not supported in this architecture\")\n"
        );
        let f = crate::facts::facts_of(&log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::NoKernelForArch, "{}", f.message);
        // Lines of two calls (another location) stay apart.
        let q = "E1105 18:09:29.303000 9336 torch/_dynamo/convert_frame.py:12]";
        let two = format!("{p} triton.compiler.errors.CompilationError: at 1:0:\n{q} def f():\n{q} ValueError(\"type fp8e4nv not supported in this architecture\")\n");
        let f = crate::facts::facts_of(&two).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::BuildError, "{}", f.message);
    }

    #[test]
    fn a_fallback_notice_yields_to_the_error_after_it() {
        // The pinned pool's notice quotes a CUDA error (which alone names a failure); the
        // server carried on without the pool, so the error after it is the failure.
        let notice = "E0327 01:23:03.175862 1 pinned_memory_manager.cc:202] failed to allocate pinned system memory: CUDA driver version is insufficient for CUDA runtime version\n";
        let f = crate::facts::facts_of(notice).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::CudaRuntimeError, "{}", f.message);
        let log = format!("{notice}E0327 01:23:03.176953 1 model_repository_manager.cc:1682] unexpected platform type caffe2_netdef for resnet50_netdef\n");
        let f = crate::facts::facts_of(&log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::ConfigError, "{}", f.message);
        assert!(f.message.contains("caffe2_netdef"), "{}", f.message);
        // The same CUDA error on a line of its own is the failure.
        let bare = "E0327 01:23:03.175862 1 server.cc:20] CUDA driver version is insufficient for CUDA runtime version\nE0327 01:23:03.176953 1 model_repository_manager.cc:1682] unexpected platform type caffe2_netdef for resnet50_netdef\n";
        let f = crate::facts::facts_of(bare).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::CudaRuntimeError, "{}", f.message);
    }

    #[test]
    fn a_native_backtrace_alone_is_a_native_crash() {
        let log = "#0  0x00007efc5442df84 in nvinfer1::ICudaEngine::getNbIOTensors() const (this=0x0) at include/NvInferRuntime.h:2160\n#1  0x00007efc54451cf8 in onnxruntime::TensorrtExecutionProvider::Compute(onnxruntime::FunctionState) const (ctx=0x1) at providers/tensorrt/tensorrt_execution_provider.cc:3395\n#2  0x00007f02b5a68157 in onnxruntime::utils::ExecuteGraph(onnxruntime::SessionState const&) () from libonnxruntime.so\n";
        let f = crate::facts::facts_of(log).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::NativeAbort);
        assert!(f.message.contains("getNbIOTensors"), "{}", f.message);
        // A Python traceback cut before its exception stays a Python error.
        let py = "Traceback (most recent call last):\n  File \"/x/serve.py\", line 3, in main\n    run()\n";
        let f = crate::facts::facts_of(py).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::PythonError);
        // faulthandler's dump of the crashed thread, its `Fatal Python error` header cut:
        // Python prints it only on a fatal signal.
        let dump = "Current thread 0x00007f62ebfff6c0 (most recent call first):\n  File \"/x/torch/distributed/distributed_c10d.py\", line 3068 in all_reduce\n  File \"/x/srt/layers/logits_processor.py\", line 297 in __init__\n";
        let f = crate::facts::facts_of(dump).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::NativeAbort, "{}", f.message);
    }

    #[test]
    fn a_raise_statement_says_what_was_raised() {
        assert_eq!(
            raised_by(r#"raise RuntimeError(f"weight {tensor_name} does not exist")"#).as_deref(),
            Some("RuntimeError: weight {tensor_name} does not exist")
        );
        assert_eq!(
            raised_by("raise ValueError('unsupported head size").as_deref(),
            Some("ValueError: unsupported head size")
        );
        assert_eq!(raised_by("raise ValueError(msg)"), None);
        assert_eq!(raised_by("raise"), None);
        assert_eq!(raised_by("raise self.error_class('oops, it broke')"), None);
        assert_eq!(raised_by("outputs = self(x)"), None);
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

    #[test]
    fn a_compiler_diagnostic_after_a_build_command_is_a_build_error() {
        let err =
            "error: 'kernel' attribute requires Metal language standard macos-metal2.3 or higher\n";
        let built =
            format!("$ cargo build --features metal\n   Compiling mistralrs-quant v0.6.0\n{err}");
        let f = crate::facts::facts_of(&built).failure.expect("a failure");
        assert_eq!(
            (f.class, f.line),
            (FailureClass::BuildError, 3),
            "{}",
            f.message
        );
        // The same words with no build before them are the program's own error.
        let f = crate::facts::facts_of(err).failure.expect("a failure");
        assert_eq!(f.class, FailureClass::PythonError);
        assert!(compiler_style(
            "error[E0425]: cannot find value `x` in this scope"
        ));
        assert!(!compiler_style("error [main] connection lost"));
    }

    #[test]
    fn a_rust_error_report_is_classed_by_its_causes() {
        let f = crate::facts::facts_of(
            "Error: Could not create backend\n\nCaused by:\n    Could not start backend: Runtime compute cap 75 is not compatible with compile time compute cap 80\n",
        );
        let fl = f.failure.expect("a failure");
        assert_eq!(fl.class, FailureClass::NoKernelForArch);
        assert!(fl.message.contains("compute cap 75"), "{}", fl.message);
        // A cause a signal does not know leaves the report's own line the failure.
        let f = crate::facts::facts_of(
            "Error: Could not create backend\n\nCaused by:\n    0: the quick brown fox\n",
        );
        assert!(f
            .failure
            .expect("a failure")
            .message
            .contains("Could not create backend"));
    }
}
