//! Python tracebacks rebuilt from retained lines: frames (file, line,
//! function, code), the exception line with its continuation lines, and
//! chains ("During handling of the above exception ..."). Lines of several
//! ranks printed at once are kept apart by their prefix's stream key. This
//! module reads records; it does not classify the exception.

use crate::scan::Record;
use regex::Regex;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::OnceLock;

/// One frame of a traceback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Frame {
    /// Source file as printed.
    pub file: String,
    /// Line number in that file.
    pub line: u32,
    /// Function name.
    pub function: String,
    /// The code line printed under the frame, trimmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// The exception that ends a traceback.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Exception {
    /// Qualified type, e.g. `torch.AcceleratorError`.
    pub type_name: String,
    /// The message on the same line.
    pub message: String,
    /// Log line of the exception line.
    pub line: u64,
    /// Message lines printed right after it.
    pub extra: Vec<String>,
}

impl Exception {
    /// The short type name (`AcceleratorError`).
    pub fn short_type(&self) -> &str {
        self.type_name.rsplit('.').next().unwrap_or(&self.type_name)
    }
}

/// A traceback.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Traceback {
    /// Input file index.
    pub source: usize,
    /// The stream (rank / process) it was printed on.
    pub stream: String,
    /// Rank from the prefix, if any.
    pub rank: Option<u32>,
    /// First line (the `Traceback` header, or the first frame when the header is missing).
    pub start_line: u64,
    /// Last line belonging to it.
    pub end_line: u64,
    /// Frames, outermost first.
    pub frames: Vec<Frame>,
    /// The exception, when printed.
    pub exception: Option<Exception>,
    /// Index (in the returned list) of the traceback this one was raised while handling.
    pub chained_from: Option<usize>,
    /// The chain says `The above exception was the direct cause of the following
    /// exception`: this one wraps the earlier on purpose (`raise X from e`).
    #[serde(skip)]
    pub(crate) direct_cause: bool,
    /// Indentation of the whole block (a traceback quoted inside pip's or a launcher's
    /// output is shifted right): code lines are indented beyond it, the exception is not.
    #[serde(skip)]
    indent: usize,
    /// Frames read from a native backtrace (gdb's `#N`, c10's `frame #N`), which print the
    /// innermost first: they are turned around when the block ends.
    #[serde(skip)]
    native_frames: usize,
    /// Read from faulthandler's dump of the crashed thread (`Current thread 0x...
    /// (most recent call first):`), which Python prints only on a fatal signal.
    #[serde(skip)]
    pub(crate) fault_dump: bool,
    /// The exception type IPython prints on its header (`IndexError    Traceback (most recent
    /// call last)`): the exception when the paste is cut before the last line.
    #[serde(skip)]
    header_type: Option<String>,
    /// What the header line says before `Traceback (most recent call last):` when a program
    /// prints the error and its traceback on one line (vLLM's worker: `Exception in worker
    /// ... while processing method m: CUDA out of memory. ..., Traceback (most recent call
    /// last):`): the exception's message when the traceback is cut before its last line.
    #[serde(skip)]
    pub(crate) header: Option<String>,
}

impl Traceback {
    /// Every frame was read from a native backtrace (a debugger's or a crash handler's
    /// `#N 0x.. in f (...)`): the stack of a crashed process, not a Python traceback.
    pub fn is_native(&self) -> bool {
        !self.frames.is_empty() && self.native_frames == self.frames.len()
    }

    /// A traceback opened at `rec`, on stream `stream`.
    fn start(rec: &Record, stream: &str, chained_from: Option<usize>) -> Traceback {
        Traceback {
            source: rec.source,
            stream: stream.to_string(),
            rank: rec.prefix.effective_rank(),
            start_line: rec.line,
            end_line: rec.line,
            frames: Vec::new(),
            exception: None,
            chained_from,
            direct_cause: false,
            indent: leading_ws(rec.message()),
            native_frames: 0,
            fault_dump: false,
            header_type: None,
            header: None,
        }
    }
}

fn leading_ws(msg: &str) -> usize {
    msg.len() - msg.trim_start().len()
}

struct Patterns {
    prose_exception: Regex,
    prose_repr: Regex,
    class_repr: Regex,
    native: Regex,
    frame: Regex,
    frame_head: Regex,
    frame_tail: Regex,
    rich_frame: Regex,
    rich_code: Regex,
    rich_path: Regex,
    frame_partial: Regex,
    pytest_frame: Regex,
    ipython_header: Regex,
    ipython_frame: Regex,
    ipython_code: Regex,
    exception: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        // `... it reports an error: RuntimeError: probability tensor contains ...`
        // An exception object printed as its repr inside prose or a list: `TypeError('...')`.
        prose_repr: crate::lazy::ascii_regex(r#"(?:^|[\s`'"(\[:=])((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z][A-Za-z0-9_]*?(?:Error|Exception))\(['"](\S.{4,}?)['"]\)"#).unwrap(),
        // An exception printed with its type object (`print(type(e), e)`, a debugger's
        // post-mortem): `<class 'RuntimeError'> FWD: Unsupported hidden_size`.
        class_repr: crate::lazy::ascii_regex(r"<class '(?:[A-Za-z_][A-Za-z0-9_]*\.)*([A-Z][A-Za-z0-9_]*?(?:Error|Exception))'>:?\s+(\S.{4,})$").unwrap(),
        prose_exception: crate::lazy::ascii_regex(r#"(?:^|[\s`'"(\[:])((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z][A-Za-z0-9_]*?(?:Error|Exception))(?:\(\w*\))?:\s+(\S.{4,})$"#).unwrap(),
        // gdb `#5  0x00007f.. in llama_sampler_softmax_impl(...) () from libllama.so`
        // and c10 `frame #3: c10d::ProcessGroupNCCL::watchdog() + 0x8c (0x7f.. in libtorch.so)`
        native: crate::lazy::ascii_regex(r"^\s*(?:#\d+\s+(?:0x[0-9a-fA-F]+ in )?|frame #\d+: (?:0x[0-9a-fA-F]+ )?|\d+\s+0x[0-9a-fA-F]+\s+)([A-Za-z_~][\w:~<>,]*?)\s*(?:\(|\+ 0x)(?:.*(?: at | from |\(0x[0-9a-f]+ in )([^\s)]+)\)?\s*$)?").unwrap(),
        // A paste that dropped the line numbers keeps `File "...", in f`.
        // A paste may lose the space after a comma (`line 6209,in f`).
        // faulthandler's dump writes `File "x.py", line 88 in replay` (no comma).
        frame: crate::lazy::ascii_regex(r#"File "([^"]+)", (?:line (\d+)(?:, ?| ))?in (\S+)"#).unwrap(),
        // A terminal wrapped a frame line right after `line`: the number and the function
        // open the next line (`File ".../model.py", line` / `120, in stream_model_load`).
        frame_head: crate::lazy::ascii_regex(r#"File "([^"]+)", line\s*$"#).unwrap(),
        frame_tail: crate::lazy::ascii_regex(r"^\s*(\d+), in (\S+)\s*$").unwrap(),
        // `rich`'s boxed traceback: `│ /x/utils.py:2612 in sample   │`, and the frame's
        // current line marked `│ ❱ 2612 │   outputs = self(   │`.
        rich_frame: crate::lazy::ascii_regex(r"^\s*│\s+(\S.*?\.pyx?):(\d+) in (\S+)\s*│?\s*$").unwrap(),
        rich_code: crate::lazy::ascii_regex(r"^\s*│\s*❱\s*\d+\s*│(.*?)│?\s*$").unwrap(),
        // A box too narrow for the path: it wraps, the file's name and line on the next row
        // (`│ /x/text_generation_server/utils/weights │` / `│ .py:192 in get_filename │`).
        rich_path: crate::lazy::ascii_regex(r"^\s*│\s+(/[^\s│]+)\s*│\s*$").unwrap(),
        // A pasted snippet that starts mid-frame: `/lib/.../config.py", line 1062, in f`
        frame_partial: crate::lazy::ascii_regex(r#"^\s*(\S[^"]*)", line (\d+), in (\S+)"#).unwrap(),
        // pytest's own traceback: `/x/flashinfer/jit/env.py:31: in <module>`.
        pytest_frame: crate::lazy::ascii_regex(r"^\s*(\S+?\.pyx?):(\d+): in (\S+)\s*$").unwrap(),
        // IPython (Jupyter, Colab) puts the exception's type on the header's left.
        ipython_header: crate::lazy::ascii_regex(r"^\s*((?:[A-Za-z_][A-Za-z0-9_]*\.)*[A-Z][A-Za-z0-9_]*?(?:Error|Exception|Interrupt|Exit))\s+Traceback \(most recent call last\)").unwrap(),
        // ... and its frames as `File /x/rl.py:854, in patch(a, b)` (IPython 8), `/x/rl.py in
        // patch(a, b)` (IPython 7), or a Markdown link to the file (Colab: `[/x/rl.py](url) in
        // patch(a, b)`): read only inside a traceback, they are too plain to open one.
        ipython_frame: crate::lazy::ascii_regex(r"^\s*(?:File )?(?:\[([^\]\s]+?\.pyx?)\]\([^)\s]*\)|([^\s\[\]]+?\.pyx?))(?::(\d+),)? in (<[^>]*>|[\w.]+)\(").unwrap(),
        // IPython marks the frame's current line with an arrow (`--> 854   x = f()`) among the
        // numbered lines around it.
        ipython_code: crate::lazy::ascii_regex(r"^\s*-+>\s*\d+\s(.*)$").unwrap(),
        exception: crate::lazy::ascii_regex(
            r#"^((?:[A-Za-z_][A-Za-z0-9_]*\.)*(?:[A-Za-z_][A-Za-z0-9_]*)?(?:Error|Exception|Interrupt|Exit|Warning|Failure|Fault|Iteration|Timeout|Abort|Exceeded)|KeyError|StopIteration|(?:[a-z_][A-Za-z0-9_]*\.){2,}[A-Z][A-Za-z0-9_]+)(?:\([\w.]+\))?(?::\s?(.*)|\(['"](.*)['"]\))?$"#,
        )
        .unwrap(),
    })
}

/// Finds `Type: message` inside a line of prose or a logger's message (`it reports an error:
/// RuntimeError: ...`, `Exception in worker: ValueError: ...`): the type must end in `Error` or
/// `Exception` and the message must have a few characters.
pub fn find_exception_in_prose(msg: &str) -> Option<(String, String)> {
    let p = patterns();
    let msg = msg.trim_end();
    let c = p
        .prose_exception
        .captures(msg)
        .or_else(|| p.prose_repr.captures(msg))
        .or_else(|| p.class_repr.captures(msg))?;
    Some((
        c[1].to_string(),
        c[2].trim().trim_end_matches('`').to_string(),
    ))
}

/// Parses `Type: message` when the line is an exception line.
pub fn parse_exception_line(msg: &str) -> Option<(String, String)> {
    let c = patterns().exception.captures(msg.trim_end())?;
    // A bare `Error:` heading is not an exception line.
    // `Type: message`, or the repr a logger prints: `Type('message')`.
    let message = c.get(2).or(c.get(3));
    if matches!(&c[1], "Error" | "Exception")
        && message.is_none_or(|m| m.as_str().trim().is_empty())
    {
        return None;
    }
    Some((
        c[1].to_string(),
        message.map_or(String::new(), |m| m.as_str().trim().to_string()),
    ))
}

#[derive(Default)]
struct StreamState {
    current: Option<Traceback>,
    /// The last finished traceback on this stream, for chaining and message continuation.
    last: Option<usize>,
    chain_pending: bool,
    /// The pending chain's marker was `direct cause` (a deliberate wrap).
    chain_direct: bool,
    last_line: u64,
    /// Whether the last exception line carried a timestamp of its own. The message of an
    /// exception printed raw (no timestamp) ends at the first stamped line: that line is
    /// the logger speaking again (`Received sigquit ...`, the next launch's banner).
    exc_stamped: bool,
    /// The last exception's message has ended; later lines are not its continuation.
    exc_closed: bool,
    /// The previous line was a Python frame (1) or its code (2) printed without its
    /// indentation: a logger prefix ate the spaces (`ERROR 09-17 23:37:06 [core.py:712]
    /// File ...`), so the one code line under a frame, and the `^^^^` marks under that,
    /// can only be told by their place.
    flat_frame: u8,
    /// Length of the stream's previous line as printed, to tell a terminal's hard wrap.
    last_len: usize,
    /// A frame line cut after `line` (its file and record line), waiting for its rest.
    frame_head: Option<(String, u64)>,
    /// A `rich` frame's path cut at the box's edge (the part and its record line).
    rich_head: Option<(String, u64)>,
    /// The finished traceback (its index in the output) that the current one continues: a
    /// wrapper's exception line followed at once by the frames of the error it carries.
    reopened: Option<usize>,
    /// The current traceback lists its innermost frame first (faulthandler's dump of the
    /// thread that crashed, `Current thread 0x... (most recent call first):`).
    innermost_first: bool,
    /// The current traceback is another thread's stack in that dump, not the one that crashed.
    other_thread: bool,
}

impl StreamState {
    /// The traceback a chain's marker (`During handling of the above exception, ...`) left
    /// pending, which the next one continues, and whether the marker named a direct cause
    /// (`raise ... from e`); the marker is used up.
    fn take_chain(&mut self) -> (Option<usize>, bool) {
        let from = if std::mem::take(&mut self.chain_pending) {
            self.last
        } else {
            None
        };
        (from, from.is_some() && self.chain_direct)
    }
}

/// An exception line that carries another process's error, whose traceback follows it with no
/// header of its own: Ray's `ray.exceptions.RayTaskError(ValueError): ray::Actor.method() ...`.
fn carries_remote_traceback(ex: &Exception) -> bool {
    let t = ex.type_name.rsplit('.').next().unwrap_or("");
    (t.starts_with("RayTaskError") || t.starts_with("RayActorError"))
        || ex.message.starts_with("ray::")
}

/// The exception line behind a prefix the parser does not know (a log collector's
/// container name before vLLM's process tag: `web-1 (EngineCore_0 pid=58) RuntimeError: ...`),
/// known by the type the traceback's last frame raises (`raise RuntimeError(message) from e`):
/// that type, followed by `:`, within the line's first 100 bytes.
fn raised_behind_prefix(tb: &Traceback, msg: &str) -> Option<(String, String)> {
    let code = tb.frames.last()?.code.as_deref()?;
    let raised = code.strip_prefix("raise ")?;
    let name_len = raised
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(raised.len());
    let name = raised[..name_len].rsplit('.').next()?;
    if name.len() < 4 || !name.starts_with(|c: char| c.is_ascii_uppercase()) {
        return None;
    }
    // Within the first 100 bytes, cut at a character boundary (a line may hold UTF-8).
    let mut cut = msg.len().min(100);
    while !msg.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &msg[..cut];
    let at = head.match_indices(name).map(|(i, _)| i).find(|&i| {
        let before_ok = i > 0 && msg.as_bytes()[i - 1] == b' ';
        before_ok && msg[i + name.len()..].starts_with(':')
    })?;
    parse_exception_line(&msg[at..]).filter(|(t, _)| t == name)
}

/// pytest marks the lines of the error it caught with `E` in the first column (`E   IndexError:
/// list index out of range`); the rest is the exception line.
fn without_pytest_marker(msg: &str) -> &str {
    match msg.strip_prefix('E') {
        Some(rest) if rest.starts_with("  ") => rest.trim_start(),
        _ => msg,
    }
}

/// Rebuilds tracebacks from the records of all sources, in record order.
pub fn collect(records: &[Record]) -> Vec<Traceback> {
    let pat = patterns();
    let mut out: Vec<Traceback> = Vec::new();
    let mut streams: HashMap<(usize, String), StreamState> = HashMap::new();
    // sglang prefixes only a traceback's first line (`[.. TP2] Scheduler hit an
    // exception: Traceback ...`); the unprefixed lines after it belong to that stream.
    let mut active: Option<((usize, String), u64)> = None;
    for rec in records {
        let (key, own_empty) = stream_of(rec, &mut active);
        let st = streams.entry(key.clone()).or_default();
        let line = open_line(st, &mut out, rec, &key.1, own_empty);
        read_line(pat, st, &mut out, &line);
    }
    let mut rest: Vec<_> = streams.into_values().collect();
    for st in rest.iter_mut() {
        finish(st, &mut out);
    }
    out.sort_by_key(|t| (t.source, t.start_line));
    out
}

/// One record as the traceback reader sees it.
struct Line<'a> {
    rec: &'a Record,
    /// The record's message (its text after the prefix).
    msg: &'a str,
    /// The stream it is read on (its own, or that of the sglang line it continues).
    stream: &'a str,
    /// It is the rest of the stream's previous line, hard-wrapped by a terminal or a text box.
    wrapped: bool,
}

/// What a line gives the frame reader.
enum FrameLine {
    /// The line was used up: the first half of a wrapped frame, or a `rich` frame's code.
    Used,
    /// A whole frame.
    Frame(Frame),
    /// No frame.
    Other,
}

/// The stream key of `rec` and whether its own prefix names no stream: an unprefixed line
/// within two lines of a prefixed one in the same source joins that line's stream (`active`).
fn stream_of(rec: &Record, active: &mut Option<((usize, String), u64)>) -> ((usize, String), bool) {
    let own = rec.prefix.stream_key();
    let own_empty = own.is_empty();
    let key = match &*active {
        Some((k, line)) if own.is_empty() && k.0 == rec.source && rec.line <= line + 2 => k.clone(),
        _ => (rec.source, own),
    };
    if !key.1.is_empty() {
        *active = Some((key.clone(), rec.line));
    }
    (key, own_empty)
}

/// Moves the stream on to `rec` (a gap of unretained lines ends its traceback) and tells
/// whether `rec` is the wrapped rest of the stream's previous line.
fn open_line<'a>(
    st: &mut StreamState,
    out: &mut Vec<Traceback>,
    rec: &'a Record,
    stream: &'a str,
    own_empty: bool,
) -> Line<'a> {
    let msg = rec.message();
    let gap = rec.line.saturating_sub(st.last_line);
    // A traceback is printed in one go: a gap of unretained lines ends it.
    if gap > 3 {
        finish(st, out);
        st.chain_pending = false;
    }
    st.last_line = rec.line;
    // A terminal or a text box wrapped a long prefixed line: the rest of it follows on
    // the next line with no prefix and no indent (`... in _initialize_k` / `v_caches`).
    // A line with a level or a time of its own (`[ERROR] 2025-03-16-11:32:36 ...`) is
    // another logger's line, not a wrapped rest.
    let own_stamp = rec.prefix.level.is_some() || rec.prefix.time.is_some();
    let wrapped =
        own_empty && !own_stamp && !stream.is_empty() && gap == 1 && st.last_len >= 80 && {
            !msg.is_empty() && !msg.starts_with([' ', '\t'])
        };
    st.last_len = rec.text.len();
    Line {
        rec,
        msg,
        stream,
        wrapped,
    }
}

/// Reads one line into its stream: a marker, a frame, or another line.
fn read_line(pat: &Patterns, st: &mut StreamState, out: &mut Vec<Traceback>, line: &Line) {
    if read_marker(pat, st, out, line) {
        return;
    }
    match read_frame(pat, st, line) {
        FrameLine::Used => {}
        FrameLine::Frame(f) => push_frame(pat, st, out, line, f),
        FrameLine::Other => read_other(st, out, line),
    }
}

/// Reads a line that opens, marks or chains a traceback (a `Traceback` header, IPython's
/// current-line arrow, faulthandler's thread header, a chain's marker); false when it is none.
fn read_marker(
    pat: &Patterns,
    st: &mut StreamState,
    out: &mut Vec<Traceback>,
    line: &Line,
) -> bool {
    let (rec, msg) = (line.rec, line.msg);
    if msg.contains("Traceback (most recent call last)") {
        finish(st, out);
        let (chained_from, direct) = st.take_chain();
        let mut t = Traceback::start(rec, line.stream, chained_from);
        t.direct_cause = direct;
        t.header_type = pat.ipython_header.captures(msg).map(|c| c[1].to_string());
        t.header = header_before(msg);
        st.current = Some(t);
        return true;
    }
    if let Some(c) = pat.ipython_code.captures(msg) {
        if let Some(tb) = st.current.as_mut().filter(|t| t.header_type.is_some()) {
            if let Some(f) = tb.frames.last_mut() {
                f.code = Some(c[1].trim().chars().take(300).collect());
            }
            tb.end_line = rec.line;
            return true;
        }
    }
    // faulthandler (a fatal signal in Python: `Fatal Python error: Segmentation fault`)
    // dumps each thread's stack, innermost frame first; the crashed one is `Current thread`.
    if msg.contains("(most recent call first)") {
        finish(st, out);
        st.chain_pending = false;
        st.current = Some(Traceback::start(rec, line.stream, None));
        st.innermost_first = true;
        st.other_thread = !msg.trim_start().starts_with("Current thread");
        return true;
    }
    if msg.contains("During handling of the above exception")
        || msg.contains("The above exception was the direct cause")
    {
        finish(st, out);
        st.chain_pending = true;
        st.chain_direct = msg.contains("direct cause");
        return true;
    }
    false
}

/// The words before a `Traceback (most recent call last)` header on its line, when they say
/// something (not a box drawing, a prompt or a bare exception type, which IPython prints there).
fn header_before(msg: &str) -> Option<String> {
    let at = msg.find("Traceback (most recent call last)")?;
    let before = msg[..at]
        .trim()
        .trim_end_matches([',', ':', ';', '-'])
        .trim();
    let words = before.split_whitespace().count();
    let says = words >= 3 && before.chars().filter(|c| c.is_alphabetic()).count() >= 12;
    says.then(|| before.chars().take(2000).collect())
}

/// Reads a frame from a line, joining one a terminal or a `rich` box wrapped over two lines.
fn read_frame(pat: &Patterns, st: &mut StreamState, line: &Line) -> FrameLine {
    let (rec, msg) = (line.rec, line.msg);
    let head = st.frame_head.take();
    if let Some(c) = pat.frame_head.captures(msg) {
        st.frame_head = Some((c[1].to_string(), rec.line));
        st.current
            .get_or_insert_with(|| Traceback::start(rec, line.stream, None))
            .end_line = rec.line;
        return FrameLine::Used;
    }
    let joined = head
        .filter(|(_, at)| rec.line == at + 1)
        .and_then(|(file, _)| {
            pat.frame_tail.captures(msg).map(|c| Frame {
                file,
                line: c[1].parse().unwrap_or(0),
                function: c[2].trim_end_matches(':').to_string(),
                code: None,
            })
        });
    if let Some(c) = pat.rich_code.captures(msg) {
        let code = c[1].trim_start_matches(|ch: char| ch == '│' || ch.is_whitespace());
        if let Some(f) = st.current.as_mut().and_then(|t| t.frames.last_mut()) {
            if f.code.is_none() && !code.trim().is_empty() {
                f.code = Some(code.trim().chars().take(300).collect());
            }
        }
        return FrameLine::Used;
    }
    let rich_head = st.rich_head.take();
    if let Some(c) = pat.rich_path.captures(msg) {
        st.rich_head = Some((c[1].to_string(), rec.line));
        return FrameLine::Used;
    }
    let rich_joined = rich_head
        .filter(|(_, at)| rec.line == at + 1)
        .and_then(|(part, _)| {
            let rest = msg.trim_start().trim_start_matches('│').trim_start();
            let whole = format!("│ {part}{rest}");
            pat.rich_frame.captures(&whole).map(|c| rich_frame(&c))
        });
    match joined
        .or(rich_joined)
        .or_else(|| one_line_frame(pat, st.current.as_ref(), msg))
    {
        Some(f) => FrameLine::Frame(f),
        None => FrameLine::Other,
    }
}

/// The frame of a `rich` frame line's captures.
fn rich_frame(c: &regex::Captures) -> Frame {
    Frame {
        file: c[1].trim().to_string(),
        line: c[2].parse().unwrap_or(0),
        function: c[3].to_string(),
        code: None,
    }
}

/// A frame printed on one line: `rich`'s, Python's, a paste's, pytest's, IPython's (only
/// inside an IPython traceback, `current`) or a native backtrace's.
fn one_line_frame(pat: &Patterns, current: Option<&Traceback>, msg: &str) -> Option<Frame> {
    pat.rich_frame
        .captures(msg)
        .map(|c| rich_frame(&c))
        .or_else(|| {
            pat.frame
                .captures(msg)
                .or_else(|| pat.frame_partial.captures(msg))
                .or_else(|| pat.pytest_frame.captures(msg))
                .map(|c| Frame {
                    file: c[1].trim().to_string(),
                    line: c.get(2).and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
                    function: c[3].trim_end_matches(':').to_string(),
                    code: None,
                })
        })
        .or_else(|| {
            let ipython = current.is_some_and(|t| t.header_type.is_some());
            let c = pat.ipython_frame.captures(msg).filter(|_| ipython)?;
            Some(Frame {
                file: c.get(1).or(c.get(2))?.as_str().to_string(),
                line: c.get(3).and_then(|m| m.as_str().parse().ok()).unwrap_or(0),
                function: c[4].to_string(),
                code: None,
            })
        })
        .or_else(|| {
            pat.native.captures(msg).map(|c| Frame {
                file: c.get(2).map_or(String::new(), |m| m.as_str().to_string()),
                line: 0,
                function: c[1].to_string(),
                code: None,
            })
        })
}

/// Adds frame `f` to the stream's traceback, reopening a wrapper's finished traceback whose
/// carried error's frames follow it, or opening one when no header came before.
fn push_frame(pat: &Patterns, st: &mut StreamState, out: &mut [Traceback], line: &Line, f: Frame) {
    let (rec, msg) = (line.rec, line.msg);
    // Frames right under a wrapper's exception line are the carried error's: the
    // traceback goes on, and its exception is the one at the end.
    if st.current.is_none() {
        if let Some(i) = st.last.filter(|&i| {
            out[i].end_line + 1 == rec.line
                && out[i]
                    .exception
                    .as_ref()
                    .is_some_and(carries_remote_traceback)
        }) {
            let mut t = out[i].clone();
            t.exception = None;
            st.current = Some(t);
            st.reopened = Some(i);
        }
    }
    // A frame with no header before it (a paste that starts mid-traceback, a native
    // backtrace). After a chain's marker it is the chained error's traceback, whose
    // header a wrapper replaced (Ray prints `ray::Actor.method()` there).
    let (chained_from, direct) = st.take_chain();
    let tb = st.current.get_or_insert_with(|| {
        let mut t = Traceback::start(rec, line.stream, chained_from);
        t.direct_cause = direct;
        // Frame lines sit two columns right of their header.
        t.indent = t.indent.saturating_sub(2);
        t
    });
    // Only a frame that opens its message lost its indentation to a prefix; one
    // behind a prefix the parser does not know (`dgx08:   File ...`) kept it.
    let flat = f.line > 0 && msg.starts_with("File \"") && leading_ws(msg) <= tb.indent;
    st.flat_frame = u8::from(flat);
    if f.line == 0 && f.code.is_none() && pat.native.is_match(msg) {
        tb.native_frames += 1;
    }
    tb.frames.push(f);
    tb.end_line = rec.line;
}

/// Reads a line that is neither a marker nor a frame: the wrapped rest of a frame's function,
/// a code line, an exception line, or the continuation of a finished exception's message.
fn read_other(st: &mut StreamState, out: &mut Vec<Traceback>, line: &Line) {
    let msg = line.msg;
    let ws = leading_ws(msg);
    let ident =
        |m: &str| !m.is_empty() && m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if line.wrapped && st.flat_frame == 1 && ident(msg) {
        if let Some(f) = st.current.as_mut().and_then(|t| t.frames.last_mut()) {
            f.function.push_str(msg);
            return;
        }
    }
    let marks = |m: &str| {
        let m = m.trim();
        !m.is_empty() && m.chars().all(|c| matches!(c, '^' | '~' | ' '))
    };
    let flat_code = match std::mem::take(&mut st.flat_frame) {
        1 => parse_exception_line(msg.trim_start()).is_none(),
        2 => marks(msg),
        _ => false,
    };
    if st.current.is_some() {
        read_in_traceback(st, out, line, ws, flat_code);
        return;
    }
    continue_message(st, out, line, ws);
}

/// Reads a line inside the stream's open traceback: a frame's code line (indented beyond
/// the block, or placed under a flat frame), the exception line that ends it, or another
/// line printed in between, which is left alone.
fn read_in_traceback(
    st: &mut StreamState,
    out: &mut Vec<Traceback>,
    line: &Line,
    ws: usize,
    flat_code: bool,
) {
    let (rec, msg) = (line.rec, line.msg);
    let Some(tb) = st.current.as_mut() else {
        return;
    };
    if ws > tb.indent || flat_code {
        if flat_code {
            st.flat_frame = 2;
        }
        let code = msg.trim();
        let decoration = code.chars().all(|c| matches!(c, '^' | '~' | ' ')) || code == "...";
        if !decoration {
            if let Some(f) = tb.frames.last_mut() {
                if f.code.is_none() {
                    f.code = Some(code.chars().take(300).collect());
                }
            }
        }
        tb.end_line = rec.line;
        return;
    }
    let parsed = parse_exception_line(without_pytest_marker(msg.trim_start()))
        .or_else(|| raised_behind_prefix(tb, msg));
    if let Some((t, m)) = parsed {
        st.exc_stamped = rec.prefix.time.is_some();
        st.exc_closed = false;
        tb.exception = Some(Exception {
            type_name: t,
            message: m,
            line: rec.line,
            extra: Vec::new(),
        });
        tb.end_line = rec.line;
        finish(st, out);
    }
    // Otherwise some other line inside a traceback (interleaved output); leave it.
}

/// Reads a line after the stream's last exception line as that message's continuation: the
/// rest of its sentence, the rest of a wrapped line, or a detail line.
fn continue_message(st: &mut StreamState, out: &mut [Traceback], line: &Line, ws: usize) {
    let (rec, msg) = (line.rec, line.msg);
    if rec.prefix.time.is_some() && !st.exc_stamped {
        st.exc_closed = true;
    }
    let Some(i) = st.last.filter(|_| !st.exc_closed) else {
        return;
    };
    let tb = &mut out[i];
    let Some(ex) = tb.exception.as_mut() else {
        return;
    };
    let near = rec.line <= tb.end_line + 2;
    // torch's state_dict errors indent their details with a tab.
    let detail = ws <= tb.indent || msg.starts_with('\t');
    // A message written over two source lines (`"... is not\n    divisible by
    // ..."`): the next line, indented deeper, goes on with the sentence in lower case.
    let goes_on = rec.line == tb.end_line + 1
        && ex.extra.is_empty()
        && ws > tb.indent
        && continues_sentence(&ex.message, msg);
    if goes_on {
        ex.message.push(' ');
        ex.message.push_str(msg.trim());
        tb.end_line = rec.line;
    } else if line.wrapped && near && ex.message.len() < 4000 {
        // The rest of a wrapped line joins it where the wrap cut it.
        let last = ex.extra.last_mut().unwrap_or(&mut ex.message);
        last.push_str(msg.trim_end());
        tb.end_line = rec.line;
    } else if near && ex.extra.len() < 12 && !msg.trim().is_empty() && detail {
        ex.extra.push(msg.trim().chars().take(2000).collect());
        tb.end_line = rec.line;
    }
}

/// Whether `next`, an indented line, goes on with the sentence `prev` left open: `prev`
/// ends in a word (no full stop, colon or quote) and `next` starts in lower case, as a message
/// written over two source lines prints (`"... is not\n    divisible by ..."`).
pub(crate) fn continues_sentence(prev: &str, next: &str) -> bool {
    prev.len() < 4000
        && prev.ends_with(|c: char| c.is_ascii_alphanumeric())
        && next.starts_with([' ', '\t'])
        && next
            .trim_start()
            .starts_with(|c: char| c.is_ascii_lowercase())
}

fn finish(st: &mut StreamState, out: &mut Vec<Traceback>) {
    if let Some(mut tb) = st.current.take() {
        let innermost_first = std::mem::take(&mut st.innermost_first);
        // An IPython traceback cut before its last line still names its exception's type.
        if tb.exception.is_none() {
            if let Some(t) = tb.header_type.take() {
                tb.exception = Some(Exception {
                    type_name: t,
                    message: String::new(),
                    line: tb.start_line,
                    extra: Vec::new(),
                });
            }
        }
        if std::mem::take(&mut st.other_thread) || (tb.frames.is_empty() && tb.exception.is_none())
        {
            return;
        }
        if innermost_first {
            tb.frames.reverse();
            tb.fault_dump = true;
        }
        // A native backtrace lists the innermost frame first; frames are kept outermost first.
        if tb.native_frames == tb.frames.len() {
            tb.frames.reverse();
        }
        match st.reopened.take() {
            Some(i) => {
                out[i] = tb;
                st.last = Some(i);
            }
            None => {
                out.push(tb);
                st.last = Some(out.len() - 1);
            }
        }
    }
}

#[cfg(test)]
mod prose_tests {
    use super::find_exception_in_prose;

    #[test]
    fn exceptions_inside_prose_are_found() {
        let (t, m) = find_exception_in_prose(
            "if the input is too long, it will report an error: RuntimeError: probability tensor contains either inf, nan or element < 0",
        )
        .unwrap();
        assert_eq!(t, "RuntimeError");
        assert!(m.starts_with("probability tensor"));
        assert!(find_exception_in_prose("Error: it failed").is_none());
        let (t, m) = find_exception_in_prose(
            "- case 3 (batch=4): TypeError('Unsupported MMA op kind: F8F6F4') after 2 s",
        )
        .unwrap();
        assert_eq!(
            (t.as_str(), m.as_str()),
            ("TypeError", "Unsupported MMA op kind: F8F6F4")
        );
        assert!(find_exception_in_prose("handles ValueError('x') quietly").is_none());
        // Garbled output that happens to hold `Error:` is not an exception: type names are ASCII.
        assert!(super::parse_exception_line("ICA香气IIADError: Aborted.").is_none());
        assert!(find_exception_in_prose("ICA香气IIADError: Aborted the run.").is_none());
        assert!(find_exception_in_prose("we saw a RuntimeError yesterday").is_none());
        // The type object printed before the message.
        let (t, m) = find_exception_in_prose(
            "<class 'torch.OutOfMemoryError'> CUDA out of memory. Tried to allocate 2.00 GiB",
        )
        .unwrap();
        assert_eq!(t, "OutOfMemoryError");
        assert!(m.starts_with("CUDA out of memory"));
        assert!(find_exception_in_prose("<class 'dict'> {'a': 1, 'b': 2}").is_none());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Scanner;

    fn tbs(log: &str) -> Vec<Traceback> {
        let out =
            Scanner::new(crate::Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
        collect(&out.records)
    }

    #[test]
    fn a_hard_wrapped_paste_joins_where_the_wrap_cut() {
        // A prefixed log pasted through a 100-column box: each long line's rest follows
        // with no prefix and no indent.
        let log = "(EngineCore pid=316)   File \"/opt/venv/lib/python3.12/site-packages/vllm/v1/engine/core.py\", line 305, in _initialize_k\nv_caches\n(EngineCore pid=316)     kv_cache_configs = get_kv_cache_configs(\n(EngineCore pid=316) ValueError: To serve at least one request with the model's max seq len (100000), (4.26 GiB KV cach\ne is needed, which is larger than the available KV cache memory (4.25 GiB).\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1, "{t:?}");
        assert_eq!(t[0].frames[0].function, "_initialize_kv_caches");
        let ex = t[0].exception.as_ref().unwrap();
        assert!(ex.message.contains("KV cache is needed"), "{}", ex.message);
        assert!(ex.extra.is_empty(), "{:?}", ex.extra);
        // A short line's next line is not its rest.
        let t = tbs("(EngineCore pid=3) Traceback (most recent call last):\n(EngineCore pid=3)   File \"a.py\", line 1, in f\n(EngineCore pid=3) ValueError: bad value\nsee the docs\n");
        let ex = t[0].exception.as_ref().unwrap();
        assert_eq!(ex.message, "bad value");
        assert_eq!(ex.extra, ["see the docs"]);
    }

    #[test]
    fn a_message_written_over_two_source_lines_is_one_sentence() {
        let t = tbs("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nValueError: The output_size of the weight = 96 is not\n            divisible by block_n = 128.\n");
        let ex = t[0].exception.as_ref().unwrap();
        assert_eq!(
            ex.message,
            "The output_size of the weight = 96 is not divisible by block_n = 128."
        );
        // A finished sentence, or a next line that is not indented, stays apart.
        let t = tbs("Traceback (most recent call last):\n  File \"a.py\", line 1, in f\nValueError: bad value.\n    see the docs\n");
        assert_eq!(t[0].exception.as_ref().unwrap().message, "bad value.");
    }

    #[test]
    fn pytest_frames_and_its_marked_exception_are_a_traceback() {
        let log = "/x/flashinfer/__init__.py:17: in <module>\n    from .jit import gen\n/x/flashinfer/jit/env.py:24: in _workspace\n    flags = _arch_flags()\nE   IndexError: list index out of range\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let fns: Vec<_> = t[0].frames.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(fns, ["<module>", "_workspace"]);
        assert_eq!(t[0].frames[0].code.as_deref(), Some("from .jit import gen"));
        let ex = t[0].exception.as_ref().expect("exception found");
        assert_eq!(ex.type_name, "IndexError");
        assert_eq!(ex.line, 5);
        // An `E` that opens a word is not pytest's marker.
        assert_eq!(
            without_pytest_marker("Error: it failed"),
            "Error: it failed"
        );
        assert_eq!(
            without_pytest_marker("E       ValueError: x"),
            "ValueError: x"
        );
    }

    #[test]
    fn a_chained_traceback_whose_header_a_wrapper_replaced_stays_chained() {
        // Ray prints `ray::Actor.method()` where the chained traceback's header would be.
        let log = "Traceback (most recent call last):\n  File \"/x/a.py\", line 1, in cb\n    g[i]\nIndexError: tuple index out of range\n\nThe above exception was the direct cause of the following exception:\n\nray::Actor.init() (pid=1)\n  File \"/x/cuda.py\", line 9, in set_device\n    init()\ntorch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization\n";
        let t = tbs(log);
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].chained_from, Some(0));
        assert!(t[1].direct_cause);
        assert_eq!(t[1].frames[0].function, "set_device");
        // `During handling ...` chains too, but is no deliberate wrap.
        let log = log.replace(
            "The above exception was the direct cause of the following exception:",
            "During handling of the above exception, another exception occurred:",
        );
        let t = tbs(&log);
        assert_eq!(t[1].chained_from, Some(0));
        assert!(!t[1].direct_cause);
    }

    #[test]
    fn a_raw_exception_message_ends_at_the_next_stamped_line() {
        // The exception's own detail lines continue it; the logger's next stamped line,
        // and what follows it (a kill, the next launch pasted after), do not.
        let log = "Traceback (most recent call last):\n  File \"/x/scheduler.py\", line 9, in run\n    f()\ntorch.AcceleratorError: CUDA error: device-side assert triggered\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n[2026-02-24 10:11:06] Received sigquit from a child process. It usually means the child failed.\nKilled\n# launch two\n[2026-02-24 09:12:03] server_args=ServerArgs(model_path='m')\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let ex = t[0].exception.as_ref().unwrap();
        assert_eq!(ex.extra.len(), 1, "{:?}", ex.extra);
        assert!(ex.extra[0].contains("CUDA_LAUNCH_BLOCKING"));
        assert_eq!(t[0].end_line, 5);
        // A stamped exception keeps its stamped continuation.
        let log = "[2026-02-24 10:11:06] ValueError: bad value\n[2026-02-24 10:11:06] more detail about the value\n";
        let t = tbs(log);
        if let Some(ex) = t.first().and_then(|t| t.exception.as_ref()) {
            assert!(ex.extra.iter().all(|e| e.contains("detail")));
        }
    }

    #[test]
    fn a_traceback_quoted_inside_pip_output_keeps_its_exception() {
        // pip indents the build's own output by six columns; the exception line sits at the
        // block's indentation, its code lines deeper, its message on the lines after.
        let log = "      Traceback (most recent call last):\n        File \"/tmp/pip-build-env-x/overlay/torch/utils/cpp_extension.py\", line 387, in _check_cuda_version\n          raise RuntimeError(CUDA_MISMATCH_MESSAGE)\n      RuntimeError:\n      The detected CUDA version (12.2) mismatches the version that was used to compile\n      PyTorch (11.7). Please make sure to use the same CUDA versions.\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let ex = t[0].exception.as_ref().expect("exception found");
        assert_eq!(ex.type_name, "RuntimeError");
        assert_eq!(ex.line, 4);
        assert!(
            ex.extra[0].starts_with("The detected CUDA version"),
            "{ex:?}"
        );
        assert_eq!(
            t[0].frames[0].code.as_deref(),
            Some("raise RuntimeError(CUDA_MISMATCH_MESSAGE)")
        );
    }

    #[test]
    fn exception_lines_in_both_forms() {
        assert_eq!(
            parse_exception_line("ValueError: bad value"),
            Some(("ValueError".into(), "bad value".into()))
        );
        assert_eq!(
            parse_exception_line(
                "AssertionError('Only FlashAttention backend is supported for now.')"
            ),
            Some((
                "AssertionError".into(),
                "Only FlashAttention backend is supported for now.".into()
            ))
        );
        assert_eq!(parse_exception_line("Error:"), None);
        assert_eq!(parse_exception_line("Error('')"), None);
    }

    #[test]
    fn a_rich_boxed_traceback_gives_its_frames_and_code() {
        let log = "╭──────── Traceback (most recent call last) ────────╮\n│ /srv/app/run.py:116 in <module>                   │\n│                                                   │\n│   115 │   start = time.time()                     │\n│ ❱ 116 │   outputs = pipe(inputs,                  │\n│                                                   │\n│ /x/transformers/generation/utils.py:2612 in sample │\n│ ❱ 2612 │   │   │   outputs = self(                │\n╰───────────────────────────────────────────────────╯\nTypeError: mlp_gemm_fp16(): incompatible function arguments.\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1, "{t:?}");
        let f: Vec<_> = t[0]
            .frames
            .iter()
            .map(|f| (f.function.as_str(), f.line))
            .collect();
        assert_eq!(f, [("<module>", 116), ("sample", 2612)]);
        assert_eq!(t[0].frames[0].file, "/srv/app/run.py");
        assert_eq!(t[0].frames[1].code.as_deref(), Some("outputs = self("));
        let ex = t[0]
            .exception
            .as_ref()
            .expect("the exception after the box");
        assert_eq!(ex.type_name, "TypeError");
    }

    #[test]
    fn a_rich_frame_whose_path_wraps_at_the_box_edge_joins_its_rest() {
        let log = "╭──── Traceback (most recent call last) ────╮\n│ /opt/site-packages/text_generation_server/utils/weights │\n│ .py:192 in get_filename                    │\n│                                            │\n│ ❱ 192 │   │   raise RuntimeError(f\"weight {tensor_name} does not exist\") │\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1, "{t:?}");
        let f = &t[0].frames[0];
        assert_eq!(
            (f.file.as_str(), f.line, f.function.as_str()),
            (
                "/opt/site-packages/text_generation_server/utils/weights.py",
                192,
                "get_filename"
            )
        );
        assert!(f
            .code
            .as_deref()
            .unwrap_or("")
            .starts_with("raise RuntimeError("));
    }

    #[test]
    fn a_frame_wrapped_after_its_line_word_joins_its_rest() {
        let log = "ERROR:    Traceback (most recent call last):\nERROR:      File \"/x/endpoints/utils/model.py\", line\n120, in stream_model_load\nERROR:        async for m in load_status:\nERROR:      File \"/x/common/model.py\", line 90, in load_model_gen\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let f: Vec<_> = t[0]
            .frames
            .iter()
            .map(|f| (f.function.as_str(), f.line))
            .collect();
        assert_eq!(f, [("stream_model_load", 120), ("load_model_gen", 90)]);
        assert_eq!(t[0].frames[0].file, "/x/endpoints/utils/model.py");
        // A line that is only a number and a name, with no cut frame above it, is no frame.
        assert!(tbs("120, in stream_model_load\n")
            .iter()
            .all(|t| t.frames.is_empty()));
    }

    #[test]
    fn faulthandler_dumps_keep_the_crashed_thread_outermost_first() {
        let log = "Fatal Python error: Segmentation fault\n\nThread 0x00007f62e7ffe6c0 (most recent call first):\n  File \"/x/scheduler.py\", line 2215 in watchdog_thread\n  File \"/usr/lib/python3.12/threading.py\", line 1010 in run\n\nCurrent thread 0x00007f62ebfff6c0 (most recent call first):\n  File \"/x/torch/cuda/graphs.py\", line 88 in replay\n  File \"/x/model_runner.py\", line 1633 in _forward_raw\n  File \"/x/tp_worker.py\", line 234 in forward_batch_generation\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let f: Vec<_> = t[0]
            .frames
            .iter()
            .map(|f| (f.function.as_str(), f.line))
            .collect();
        assert_eq!(
            f,
            [
                ("forward_batch_generation", 234),
                ("_forward_raw", 1633),
                ("replay", 88)
            ]
        );
    }

    #[test]
    fn a_ray_wrapper_carries_the_remote_traceback() {
        let log = "Traceback (most recent call last):\n  File \"/x/driver.py\", line 9, in main\n    ray.get(ref)\nray.exceptions.RayTaskError(ValueError): ray::Worker.generate() (pid=11, ip=10.0.0.1)\n  File \"/x/worker.py\", line 30, in generate\n    check(req)\n  File \"/x/engine.py\", line 482, in check\n    raise ValueError(msg)\nValueError: Requested token count exceeds the model's maximum context length\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let ex = t[0].exception.as_ref().unwrap();
        assert_eq!(ex.type_name, "ValueError");
        assert_eq!(ex.line, 9);
        let f: Vec<_> = t[0].frames.iter().map(|f| f.function.as_str()).collect();
        assert_eq!(f, ["main", "generate", "check"]);
    }

    #[test]
    fn a_frame_that_lost_the_space_after_its_comma() {
        let log = "Traceback (most recent call last):\n  File \"/x/runner.py\", line 6209,in _get_draft_probs\n    return f()\nRuntimeError: missing\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].frames[0].function, "_get_draft_probs");
        assert_eq!(t[0].frames[0].line, 6209);
    }

    #[test]
    fn frames_code_and_exception() {
        let log = r#"Traceback (most recent call last):
  File "/x/scheduler.py", line 2826, in run_scheduler_process
    scheduler.event_loop_overlap()
  File "/x/streams.py", line 231, in synchronize
    super().synchronize()
    ^^^^^^^^^^^^^^^^^^^^^
torch.AcceleratorError: CUDA error: an illegal memory access was encountered
Search for `cudaErrorIllegalAddress' in https://docs.nvidia.com for more information.
"#;
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].frames.len(), 2);
        assert_eq!(t[0].frames[1].function, "synchronize");
        assert_eq!(
            t[0].frames[1].code.as_deref(),
            Some("super().synchronize()")
        );
        let ex = t[0].exception.as_ref().unwrap();
        assert_eq!(ex.short_type(), "AcceleratorError");
        assert!(ex.message.contains("illegal memory access"));
        assert_eq!(ex.extra.len(), 1);
    }

    #[test]
    fn chained_exceptions_link_up() {
        let log = r#"Traceback (most recent call last):
  File "a.py", line 1, in f
    g()
KeyError: 'glm_moe_dsa'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "b.py", line 2, in h
    raise ValueError(x)
ValueError: The checkpoint you are trying to load has model type `glm_moe_dsa`
"#;
        let t = tbs(log);
        assert_eq!(t.len(), 2);
        assert_eq!(t[1].chained_from, Some(0));
        assert_eq!(t[0].exception.as_ref().unwrap().short_type(), "KeyError");
    }

    #[test]
    fn ranks_printing_at_once_stay_apart() {
        let log = "[rank0]: Traceback (most recent call last):\n[rank1]: Traceback (most recent call last):\n[rank0]:   File \"a.py\", line 1, in f\n[rank1]:   File \"b.py\", line 2, in g\n[rank0]: RuntimeError: zero\n[rank1]: RuntimeError: one\n";
        let t = tbs(log);
        assert_eq!(t.len(), 2);
        let r0 = t.iter().find(|t| t.rank == Some(0)).unwrap();
        assert_eq!(r0.frames[0].file, "a.py");
        assert_eq!(r0.exception.as_ref().unwrap().message, "zero");
    }

    #[test]
    fn an_ipython_traceback_gives_frames_code_and_the_headers_type_when_cut() {
        // Colab's Markdown links, IPython 8's `File x:N, in f(...)`, the arrowed current line;
        // the paste ends before the exception line.
        let log = "---------------------------------------------------------------------------\nKeyError                                  Traceback (most recent call last)\n[/tmp/ipython-input-1.py](https://localhost:8080/#) in <cell line: 0>()\n----> 1 run()\n\n2 frames\nFile /opt/lib/pkg/loader.py:41, in load(path, strict)\n     39 def load(path, strict):\n     40     table = read(path)\n---> 41     return table[\"weights\"]\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let fr: Vec<_> = t[0]
            .frames
            .iter()
            .map(|f| {
                (
                    f.file.as_str(),
                    f.line,
                    f.function.as_str(),
                    f.code.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            fr,
            [
                (
                    "/tmp/ipython-input-1.py",
                    0,
                    "<cell line: 0>",
                    Some("run()")
                ),
                (
                    "/opt/lib/pkg/loader.py",
                    41,
                    "load",
                    Some("return table[\"weights\"]")
                ),
            ]
        );
        let ex = t[0].exception.as_ref().expect("the header's type");
        assert_eq!(
            (ex.type_name.as_str(), ex.message.as_str(), ex.line),
            ("KeyError", "", 2)
        );
        // When the exception line is there, it is the exception.
        let t = tbs(&format!("{log}KeyError: 'weights'\n"));
        let ex = t[0].exception.as_ref().unwrap();
        assert_eq!((ex.message.as_str(), ex.line), ("'weights'", 11));
        // Outside an IPython traceback the plain form opens nothing.
        assert!(tbs("/opt/lib/pkg/loader.py in load(path)\n").is_empty());
    }

    #[test]
    fn a_snippet_starting_mid_frame_still_parses() {
        let log = "/lib/python3.11/site-packages/vllm/config.py\", line 1062, in _get_and_verify_max_len\n    if rope_scaling[\"type\"] == \"yarn\":\n       ~~~~~~~~~~~~^^^^^^^^\nKeyError: 'type'\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].frames[0].function, "_get_and_verify_max_len");
        assert_eq!(t[0].exception.as_ref().unwrap().short_type(), "KeyError");
    }

    #[test]
    fn the_raised_type_finds_its_line_behind_an_unknown_prefix() {
        let log = "Traceback (most recent call last):\n  File \"/x/torch/utils/cpp_extension.py\", line 2522, in _run_ninja_build\n    raise RuntimeError(message) from e\n\nweb-7 (EngineCore_0 pid=58) RuntimeError: Error building extension 'sampling':\n";
        let t = tbs(log);
        assert_eq!(t.len(), 1);
        let e = t[0]
            .exception
            .as_ref()
            .expect("the exception line is found");
        assert_eq!(e.short_type(), "RuntimeError");
        assert_eq!(e.message, "Error building extension 'sampling':");
        // Another type behind the prefix is another program's line, not this exception.
        let other = "Traceback (most recent call last):\n  File \"/x/a.py\", line 2, in f\n    raise RuntimeError(message) from e\n\nweb-7 (EngineCore_0 pid=58) ValueError: something else\n";
        assert!(tbs(other)[0].exception.is_none());
        // A line whose 100th byte falls inside a character is cut before it, not split.
        let wide = format!("Traceback (most recent call last):\n  File \"/x/a.py\", line 2, in f\n    raise RuntimeError(message) from e\n\na{}RuntimeError: x\n", "é".repeat(60));
        assert!(tbs(&wide)[0].exception.is_none());
    }
}

#[cfg(test)]
mod native_tests {
    use super::*;
    use crate::scan::Scanner;

    #[test]
    fn gdb_frames_are_frames() {
        let log = "#5  0x00007f1e9874ca5e in llama_sampler_softmax_impl(llama_token_data_array*) () from libllama.so\n#6  0x00007f1e98754d35 in llama_sampler_dist_apply(llama_sampler*, llama_token_data_array*) () from libllama.so\nAborted (core dumped)\n";
        let out =
            Scanner::new(crate::Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
        let t = collect(&out.records);
        assert_eq!(t.len(), 1, "{t:?}");
        // Kept outermost first, as Python prints them: gdb printed the innermost (#5) first.
        assert_eq!(t[0].frames[1].function, "llama_sampler_softmax_impl");
        assert_eq!(t[0].frames[1].file, "libllama.so");
        assert_eq!(t[0].frames[0].function, "llama_sampler_dist_apply");
    }

    #[test]
    fn numbered_address_frames_are_frames() {
        // TensorRT-LLM's exception stack: `N  0xADDR symbol + offset`, or a library and an
        // offset where the symbol is unknown (not a frame: no function).
        let log = "[TensorRT-LLM][ERROR] Assertion failed: d == a + length (/app/gptAttentionCommon.cpp:326)\n1       0x7f32dd086fbf /opt/lib/libnvinfer_plugin_tensorrt_llm.so.9(+0x37fbf) [0x7f32dd086fbf]\n2       0x7f32dd0e6c8a tensorrt_llm::plugins::GPTAttentionPluginCommon::GPTAttentionPluginCommon(void const*, unsigned long) + 762\n3       0x7f32dd0fa0d2 tensorrt_llm::plugins::GPTAttentionPluginCreator::deserializePlugin(char const*, void const*, unsigned long) + 50\n";
        let out =
            Scanner::new(crate::Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
        let t = collect(&out.records);
        assert_eq!(t.len(), 1, "{t:?}");
        assert!(t[0].is_native());
        // Outermost first: the caller, then the constructor it called.
        assert_eq!(
            t[0].frames[0].function,
            "tensorrt_llm::plugins::GPTAttentionPluginCreator::deserializePlugin"
        );
        assert_eq!(
            t[0].frames[1].function,
            "tensorrt_llm::plugins::GPTAttentionPluginCommon::GPTAttentionPluginCommon"
        );
    }

    #[test]
    fn a_frame_pasted_without_its_line_number_is_a_frame() {
        let log = "File \".../nixl/conn.py\", in _init_prep_handle\n    h = self.agent.prep_xfer_dlist(\"\", a)\nnixl._bindings.nixlNotFoundError: NIXL_ERR_NOT_FOUND\n";
        let out =
            Scanner::new(crate::Vocabulary::embedded(), &[]).scan_reader(0, &mut log.as_bytes());
        let t = collect(&out.records);
        assert_eq!(t.len(), 1, "{t:?}");
        assert_eq!(t[0].frames[0].function, "_init_prep_handle");
        assert_eq!(t[0].frames[0].line, 0);
        assert_eq!(
            t[0].frames[0].code.as_deref(),
            Some("h = self.agent.prep_xfer_dlist(\"\", a)")
        );
    }
}
