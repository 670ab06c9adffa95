//! Line prefixes: timestamps of the common shapes, rank tags (`TP3`, `DP1`,
//! `EP0`, `PP0` in any order, `[rank0]:`), process tags
//! (`(EngineCore_DP0 pid=274)`, Ray's `(Worker pid=N, ip=...)`), levels and
//! `file.py:N` locations. This module reads one already-normalised line and
//! says where its message starts; it knows nothing about what messages mean.

use crate::lazy::LazyRegex;
use serde::Serialize;
use std::sync::OnceLock;

/// Severity, as the prefix says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Debug / trace.
    Debug,
    /// Info / notice.
    Info,
    /// Warning.
    Warning,
    /// Error.
    Error,
    /// Critical / fatal.
    Critical,
}

/// What the prefix of one line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prefix {
    /// Seconds on a sortable scale (days since year 0 when the year is known,
    /// else since the start of the year), for ordering lines across files.
    pub time: Option<f64>,
    /// The timestamp text as printed.
    pub time_text: Option<String>,
    /// Tensor-parallel rank (`TP3`, `Worker_TP3`).
    pub tp: Option<u32>,
    /// Data-parallel rank.
    pub dp: Option<u32>,
    /// Expert-parallel rank.
    pub ep: Option<u32>,
    /// Pipeline-parallel rank.
    pub pp: Option<u32>,
    /// Global rank (`[rank0]:`, `rank=0`).
    pub rank: Option<u32>,
    /// Process tag (`EngineCore_DP0`, `WorkerDict`).
    pub process: Option<String>,
    /// Process id, when printed.
    pub pid: Option<u32>,
    /// Severity.
    pub level: Option<Level>,
    /// `file.py:123` when printed.
    pub location: Option<String>,
    /// Byte offset where the message starts.
    pub msg_start: usize,
}

impl Prefix {
    /// The rank to report: the global rank, else the TP rank.
    pub fn effective_rank(&self) -> Option<u32> {
        self.rank.or(self.tp)
    }

    /// A key that separates interleaved streams (one per rank or process),
    /// so that tracebacks printed by several ranks at once stay apart.
    pub fn stream_key(&self) -> String {
        let mut k = String::new();
        if let Some(p) = &self.process {
            k.push_str(p);
        }
        if let Some(pid) = self.pid {
            k.push_str(&format!("#{pid}"));
        }
        for (tag, v) in [
            ("r", self.rank),
            ("dp", self.dp),
            ("tp", self.tp),
            ("pp", self.pp),
        ] {
            if let Some(v) = v {
                k.push_str(&format!("{tag}{v}"));
            }
        }
        k
    }
}

struct Patterns {
    ray: LazyRegex,
    torchrun: LazyRegex,
    sglang: LazyRegex,
    rank_only: LazyRegex,
    iso: LazyRegex,
    vllm: LazyRegex,
    glog: LazyRegex,
    glog_bracket: LazyRegex,
    ggml: LazyRegex,
    level_word: LazyRegex,
    quote: LazyRegex,
    nccl: LazyRegex,
    logfmt: LazyRegex,
    syslog: LazyRegex,
    trt: LazyRegex,
    spdlog: LazyRegex,
    logger_rank: LazyRegex,
    location: LazyRegex,
    bracket_location: LazyRegex,
    tag: LazyRegex,
    compose: LazyRegex,
    pylog: LazyRegex,
    name_pid: LazyRegex,
    buildkit: LazyRegex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        // (EngineCore_DP0 pid=274) / (WorkerDict pid=1216, ip=10.0.0.1) / (VllmWorker rank=0 pid=12)
        ray: LazyRegex::prefiltered(r"^\(([A-Za-z_][\w\-.]*)(?: rank=(\d+))?(?: pid=(\d+))?(?:, ip=[^)]*)?\)\s+"),
        quote: LazyRegex::prefiltered(r"^(?:>(?: |$)|`{3,}| {0,12}\|(?: |$)|\*\*\b)"),
        nccl: LazyRegex::prefiltered(r"^\S+:\d+:\d+ \[(\d+)\] (?:[\w/.\-]+\.\w+:\d+ )?NCCL (INFO|WARN|TRACE|ERROR) "),
        logfmt: LazyRegex::prefiltered(r"^time=\S+ level=(\w+) (?:source=\S+ )?"),
        torchrun: LazyRegex::prefiltered(r"^\[(?:rank|Rank )(\d+)\]:\s?"),
        // [2026-11-29 22:27:32,782 TP0] / [2025-12-15 00:02:05 DP1 TP1] / [2026-03-21 01:40:19]
        sglang: LazyRegex::prefiltered(r"^\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)((?:\s+(?:DP|TP|EP|PP|CP|ATTN_CP|MOE_DP)\d+)*)\]\s*"),
        rank_only: LazyRegex::prefiltered(r"^\[((?:(?:DP|TP|EP|PP|CP|ATTN_CP|MOE_DP)\d+\s*)+)\]\s*"),
        iso: LazyRegex::prefiltered(r"^\[?(\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\]?\s+"),
        // INFO 06-12 08:49:30 [core.py:700]
        vllm: LazyRegex::prefiltered(r"^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\s+(?:\[([^\]\s]+:\d+)\]\s*)?"),
        // W1129 22:27:29.110000 626 torch/distributed/run.py:851]
        glog: LazyRegex::prefiltered(r"^([IWEF])(\d\d)(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)\s+\d+\s+([^\]\s]+:\d+)\]\s?"),
        // [W1129 22:03:56.326321538 ProcessGroupNCCL.cpp:1575]
        glog_bracket: LazyRegex::prefiltered(r"^\[([IWEF])(\d\d)(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)\s+(?:\d+\s+)?([^\]\s]+:\d+)\]\s?"),
        // ggml's common log with timestamps (llama-server, llama-cli: `0.00.316.267 E `), the
        // time since start as minutes.seconds.milliseconds.microseconds, then a level letter
        // (source: llama.cpp common/log.cpp).
        ggml: LazyRegex::prefiltered(r"^\d{1,6}\.\d\d\.\d{3}\.\d{3} ([IWED]) "),
        // (after a run of progress dots, as Ascend's tools print before `[ERROR]`)
        level_word: LazyRegex::prefiltered(r"^\.*(?:\[(?i:(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|E|W|I))\]|(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|Error|Warning)\b:?)\s*"),
        syslog: LazyRegex::prefiltered(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.\-/]+(?:\[(\d+)\])?: "),
        trt: LazyRegex::prefiltered(r"^\[(TensorRT-LLM|TRT-LLM)\](?:\s*\[RANK (\d+)\])?\s*\[(ERROR|WARNING|INFO|DEBUG|VERBOSE|E|W|I|V)\]\s*"),
        // spdlog's default pattern (`[2024-05-01 10:00:00.123] [name] [warning] `), and with
        // other bracketed fields before its level (ctranslate2's `[ctranslate2] [thread 10436]
        // [warning] `): the level is the last bracketed word.
        spdlog: LazyRegex::prefiltered(r"^(?:\[[^\[\]]{1,60}\]\s*){1,3}\[(trace|debug|info|warning|warn|error|critical)\]\s*"),
        logger_rank: LazyRegex::prefiltered(r"^[\w.\-]*\[rank[= ]?(\d+)\]"),
        location: LazyRegex::prefiltered(r"^([\w\-./]+\.(?:py|cpp|cc|cu|h|hpp|rs|c)):(\d+)(?::| -|\])\s*"),
        // ` [multiproc_executor.py:852] `: vLLM's location tag left when a paste cut the rest of the prefix
        bracket_location: LazyRegex::prefiltered(r"^\s*\[([\w\-.]+\.py:\d+)\]\s?"),
        tag: LazyRegex::prefiltered(r"(DP|TP|EP|PP|CP|ATTN_CP|MOE_DP)(\d+)"),
        // `vllm-1  | INFO ...`: docker compose names the service, padded, before a bar.
        compose: LazyRegex::prefiltered(r"^([a-z0-9][a-z0-9_.\-]{0,40})\s+\| "),
        // Fields joined by ` - ` or ` | ` after a timestamp: Python logging's
        // `%(asctime)s - %(name)s - %(levelname)s - %(message)s` (`- lmdeploy - ERROR - `,
        // also with the time missing), loguru's `| ERROR    | module:function:12 - `.
        pylog: LazyRegex::prefiltered(r"^(?:[-|]\s{1,8})?(?:[\w.\-]{1,40}\s{1,8}[-|]\s{1,8})?(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|SUCCESS|TRACE)\s{0,8}[-|]\s+(?:[\w.<>\-]+:[\w.<>\-]+:\d+\s+-\s+)?"),
        // Python logging's `%(name)s %(process)d %(levelname)s %(message)s` (Xinference's
        // `xinference.core.supervisor 53091 ERROR    Failed to launch ...`).
        name_pid: LazyRegex::prefiltered(r"^[a-z_]\w{0,30}(?:\.\w{1,30}){1,6} \d{1,9} (DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+"),
        // `#10 1380.2 ...`: Docker BuildKit's plain progress output, a build step and its seconds.
        buildkit: LazyRegex::prefiltered(r"^#\d+ \d+\.\d+ "),
    })
}

fn level_from(word: &str) -> Option<Level> {
    Some(match word.to_ascii_uppercase().as_str() {
        "DEBUG" | "D" | "V" | "VERBOSE" | "TRACE" => Level::Debug,
        "INFO" | "I" | "NOTICE" | "SUCCESS" => Level::Info,
        "WARNING" | "WARN" | "W" => Level::Warning,
        "ERROR" | "E" => Level::Error,
        "CRITICAL" | "FATAL" | "F" => Level::Critical,
        _ => return None,
    })
}

fn apply_tags(p: &mut Prefix, tags: &str) {
    for c in patterns().tag.captures_iter(tags) {
        let v: Option<u32> = c[2].parse().ok();
        match &c[1] {
            "TP" => p.tp = v,
            "DP" => p.dp = v,
            "EP" => p.ep = v,
            "PP" => p.pp = v,
            _ => {}
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS[.,frac]` or `MM-DD HH:MM:SS` to sortable seconds.
fn parse_time(text: &str) -> Option<f64> {
    let t = text.trim_start_matches('[');
    let bytes = t.as_bytes();
    let num = |s: &str| s.parse::<f64>().ok();
    let (year, month, day, rest) = if bytes.len() >= 19 && bytes[4] == b'-' {
        (num(&t[0..4])?, num(&t[5..7])?, num(&t[8..10])?, &t[11..])
    } else if bytes.len() >= 14 && bytes[2] == b'-' {
        (0.0, num(&t[0..2])?, num(&t[3..5])?, &t[6..])
    } else {
        return None;
    };
    let h = num(rest.get(0..2)?)?;
    let m = num(rest.get(3..5)?)?;
    let s = num(rest.get(6..8)?)?;
    let frac = rest
        .get(8..)
        .and_then(|f| {
            let f = f.strip_prefix(['.', ',']).unwrap_or("");
            let digits: String = f
                .chars()
                .take_while(|c| c.is_ascii_digit())
                .take(6)
                .collect();
            if digits.is_empty() {
                None
            } else {
                Some(digits.parse::<f64>().ok()? / 10f64.powi(digits.len() as i32))
            }
        })
        .unwrap_or(0.0);
    let days = year * 372.0 + month * 31.0 + day;
    Some(days * 86400.0 + h * 3600.0 + m * 60.0 + s + frac)
}

/// Necessary conditions for each prefix pattern, from the line's first bytes:
/// a pattern whose gate is shut cannot match, so its regex is not run. Most
/// lines open with none of the shapes, and this keeps the scan of a big log
/// from running fifteen anchored regexes on each kept line.
/// Level words a prefix may open with: the six of vLLM's prefix first.
const LEVELS: [&str; 9] = [
    "DEBUG", "INFO", "WARNING", "WARN", "ERROR", "CRITICAL", "FATAL", "Error", "Warning",
];

/// A `file.py:N` location can only sit before the first `:` and end in a source extension.
fn may_be_location(rest: &str) -> bool {
    rest.find(':').is_some_and(|i| {
        let head = &rest[..i];
        [".py", ".cpp", ".cc", ".cu", ".h", ".hpp", ".rs", ".c"]
            .iter()
            .any(|e| head.ends_with(e))
    })
}

struct Gates {
    compose: bool,
    ray: bool,
    quote: bool,
    nccl: bool,
    logfmt: bool,
    torchrun: bool,
    sglang: bool,
    rank_only: bool,
    glog: bool,
    glog_bracket: bool,
    ggml: bool,
    vllm: bool,
    iso: bool,
    trt: bool,
    spdlog: bool,
    bracket_location: bool,
    syslog: bool,
    level_word: bool,
    pylog: bool,
    name_pid: bool,
    buildkit: bool,
}

/// The searcher for NCCL's word, built once.
fn nccl_finder() -> &'static memchr::memmem::Finder<'static> {
    static F: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    F.get_or_init(|| memchr::memmem::Finder::new(b"NCCL "))
}

impl Gates {
    const OPEN: Gates = Gates {
        compose: true,
        ray: true,
        quote: true,
        nccl: true,
        logfmt: true,
        torchrun: true,
        sglang: true,
        rank_only: true,
        glog: true,
        glog_bracket: true,
        ggml: true,
        vllm: true,
        iso: true,
        trt: true,
        spdlog: true,
        bracket_location: true,
        syslog: true,
        level_word: true,
        pylog: true,
        name_pid: true,
        buildkit: true,
    };

    #[inline]
    fn of(rest: &str) -> Gates {
        let b = rest.as_bytes();
        let b0 = b.first().copied().unwrap_or(0);
        let b1 = b.get(1).copied().unwrap_or(0);
        // `\d` is Unicode: a non-ASCII byte may open a digit.
        let digitish = |c: u8| c.is_ascii_digit() || c >= 0x80;
        // `\s` is Unicode too.
        let spaceish =
            |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') || c >= 0x80;
        let open = b0 == b'[';
        Gates {
            compose: (b0.is_ascii_lowercase() || b0.is_ascii_digit())
                && memchr::memchr(b'|', &b[..b.len().min(64)]).is_some(),
            ray: b0 == b'(',
            quote: b0 == b'>'
                || b0 == b'`'
                || rest.starts_with("**")
                || rest.trim_start_matches(' ').starts_with('|'),
            nccl: nccl_finder().find(b).is_some(),
            logfmt: b.starts_with(b"time="),
            torchrun: b.starts_with(b"[rank") || b.starts_with(b"[Rank "),
            sglang: open && digitish(b1),
            rank_only: open && b1.is_ascii_uppercase(),
            glog: matches!(b0, b'I' | b'W' | b'E' | b'F') && digitish(b1),
            glog_bracket: open && matches!(b1, b'I' | b'W' | b'E' | b'F'),
            ggml: b0.is_ascii_digit() && b.iter().take(7).any(|&c| c == b'.'),
            vllm: LEVELS[..6].iter().any(|w| {
                b.starts_with(w.as_bytes()) && b.get(w.len()).is_some_and(|&c| spaceish(c))
            }),
            // `\d{4}-`: the dash sits at byte 4 (5 behind a bracket) unless a digit is non-ASCII.
            iso: (b0.is_ascii_digit() && b.get(4) == Some(&b'-'))
                || (open && b1.is_ascii_digit() && b.get(5) == Some(&b'-'))
                || b0 >= 0x80
                || (open && b1 >= 0x80),
            trt: b.starts_with(b"[T"),
            spdlog: open,
            bracket_location: rest.trim_start().starts_with('['),
            syslog: b0.is_ascii_uppercase()
                && b.get(1..3)
                    .is_some_and(|m| m.iter().all(u8::is_ascii_lowercase))
                && b.get(3) == Some(&b' '),
            level_word: open || b0 == b'.' || LEVELS.iter().any(|w| b.starts_with(w.as_bytes())),
            // ` - ERROR - ` / ` | ERROR ` within the first fields.
            // (the pattern's first `-` or `|` lies within its first 60 bytes).
            pylog: memchr::memchr2(b'-', b'|', &b[..b.len().min(72)]).is_some(),
            name_pid: (b0.is_ascii_lowercase() || b0 == b'_')
                && memchr::memchr(b' ', &b[..b.len().min(64)]).is_some(),
            buildkit: b0 == b'#' && b1.is_ascii_digit(),
        }
    }
}

/// Parses the prefix of one line (ANSI codes already stripped).
pub fn parse(line: &str) -> Prefix {
    parse_with(line, false)
}

/// The parse; `ungated` runs every pattern's regex (tests compare the two).
fn parse_with(line: &str, ungated: bool) -> Prefix {
    let pat = patterns();
    let mut p = Prefix::default();
    let mut rest = line;
    let mut pos = 0usize;
    // Prefix tokens come in many orders; peel them off until none matches.
    for _ in 0..8 {
        let g = if ungated {
            Gates::OPEN
        } else {
            Gates::of(rest)
        };
        let taken = peel_token(&mut p, rest, pos, &g, pat);
        if taken == 0 {
            break;
        }
        pos += taken;
        rest = &line[pos..];
    }
    if p.level.is_some() {
        pos += peel_logger_tail(&mut p, rest, ungated, pat);
    }
    p.msg_start = pos;
    p
}

/// Peels one prefix token off `rest` into `p`; the bytes taken, 0 when none matched or peeling stops.
#[inline]
fn peel_token(p: &mut Prefix, rest: &str, pos: usize, g: &Gates, pat: &Patterns) -> usize {
    if let Some(n) = peel_process_token(p, rest, pos, g, pat) {
        return n;
    }
    peel_stamp_token(p, rest, g, pat).unwrap_or(0)
}

/// Whether a Ray-style `(name pid=…)` tag names a process (has a pid or a worker-like name).
#[inline]
fn is_ray_process(c: &crate::lazy::Captures<'_>) -> bool {
    c.get(3).is_some()
        || [
            "Worker",
            "Engine",
            "Process",
            "Actor",
            "Scheduler",
            "Dict",
            "TP",
            "Rank",
            "rank",
        ]
        .iter()
        .any(|w| c[1].contains(w))
}

/// The first tokens tried (build, compose, Ray, Python logging, quotes, NCCL, logfmt, ranks);
/// `Some(bytes taken)` when one matched, `None` to try the rest.
#[inline]
fn peel_process_token(
    p: &mut Prefix,
    rest: &str,
    pos: usize,
    g: &Gates,
    pat: &Patterns,
) -> Option<usize> {
    if let Some(c) = (pos == 0 && g.buildkit)
        .then(|| pat.buildkit.captures(rest))
        .flatten()
    {
        Some(c[0].len())
    } else if let Some(c) = (pos == 0 && g.compose)
        .then(|| pat.compose.captures(rest))
        .flatten()
    {
        p.process = Some(c[1].to_string());
        Some(c[0].len())
    } else if let Some(c) = g
        .ray
        .then(|| pat.ray.captures(rest))
        .flatten()
        .filter(is_ray_process)
    {
        let name = c[1].to_string();
        apply_tags(p, &name);
        if let Some(r) = c.get(2) {
            p.rank = r.as_str().parse().ok();
        }
        p.pid = c.get(3).and_then(|m| m.as_str().parse().ok());
        p.process = Some(name);
        Some(c[0].len())
    } else if let Some(c) = (g.pylog && p.level.is_none() && (p.time.is_some() || pos == 0))
        .then(|| pat.pylog.captures(rest))
        .flatten()
        .filter(|c| p.time.is_some() || !c[0].starts_with(['-', '|']))
    {
        p.level = level_from(&c[1]);
        Some(c[0].len())
    } else if let Some(c) = (g.name_pid && p.level.is_none())
        .then(|| pat.name_pid.captures(rest))
        .flatten()
    {
        p.level = level_from(&c[1]);
        Some(c[0].len())
    } else if let Some(c) = g.quote.then(|| pat.quote.captures(rest)).flatten() {
        // A log pasted as a Markdown quote or with its line in bold (`**error: ...**`),
        // or the margin of a sub-exception in a Python exception group's traceback (`  | `).
        Some(c[0].len())
    } else if let Some(c) = g.nccl.then(|| pat.nccl.captures(rest)).flatten() {
        p.level = level_from(match &c[2] {
            "TRACE" => "DEBUG",
            other => other,
        });
        Some(c[0].len())
    } else if let Some(c) = g.logfmt.then(|| pat.logfmt.captures(rest)).flatten() {
        p.level = level_from(&c[1]);
        Some(c[0].len())
    } else if let Some(c) = g.torchrun.then(|| pat.torchrun.captures(rest)).flatten() {
        p.rank = c[1].parse().ok();
        Some(c[0].len())
    } else if let Some(c) = g.sglang.then(|| pat.sglang.captures(rest)).flatten() {
        p.time = parse_time(&c[1]);
        p.time_text = Some(c[1].to_string());
        apply_tags(p, &c[2]);
        Some(c[0].len())
    } else if let Some(c) = g.rank_only.then(|| pat.rank_only.captures(rest)).flatten() {
        apply_tags(p, &c[1]);
        Some(c[0].len())
    } else {
        None
    }
}

/// The later tokens tried (glog, vLLM, ISO time, TensorRT, spdlog, `[file:line]`, syslog, a level
/// word); `Some(bytes taken)` when one matched (0 to stop peeling), `None` when none did.
#[inline]
fn peel_stamp_token(p: &mut Prefix, rest: &str, g: &Gates, pat: &Patterns) -> Option<usize> {
    if let Some(c) = g
        .glog
        .then(|| pat.glog.captures(rest))
        .flatten()
        .or_else(|| {
            g.glog_bracket
                .then(|| pat.glog_bracket.captures(rest))
                .flatten()
        })
    {
        p.level = level_from(&c[1]);
        let text = format!("{}-{} {}", &c[2], &c[3], &c[4]);
        p.time = parse_time(&text);
        p.time_text = Some(text);
        p.location = Some(c[5].to_string());
        Some(c[0].len())
    } else if let Some(c) = (g.ggml && p.level.is_none())
        .then(|| pat.ggml.captures(rest))
        .flatten()
    {
        p.level = level_from(&c[1]);
        Some(c[0].len())
    } else if let Some(c) = g.vllm.then(|| pat.vllm.captures(rest)).flatten() {
        p.level = level_from(&c[1]);
        p.time = parse_time(&c[2]);
        p.time_text = Some(c[2].to_string());
        p.location = c.get(3).map(|m| m.as_str().to_string());
        Some(c[0].len())
    } else if let Some(c) = g.iso.then(|| pat.iso.captures(rest)).flatten() {
        if p.time.is_some() {
            return Some(0);
        }
        p.time = parse_time(&c[1]);
        p.time_text = Some(c[1].to_string());
        Some(c[0].len())
    } else if let Some(c) = g.trt.then(|| pat.trt.captures(rest)).flatten() {
        if let Some(r) = c.get(2) {
            p.rank = r.as_str().parse().ok();
        }
        p.level = level_from(&c[3]);
        Some(c[0].len())
    } else if let Some(c) = (g.spdlog && p.level.is_none())
        .then(|| pat.spdlog.captures(rest))
        .flatten()
    {
        p.level = level_from(&c[1]);
        Some(c[0].len())
    } else if let Some(c) = g
        .bracket_location
        .then(|| pat.bracket_location.captures(rest))
        .flatten()
        .filter(|_| p.location.is_none())
    {
        p.location = Some(c[1].to_string());
        Some(c[0].len())
    } else if let Some(c) = g.syslog.then(|| pat.syslog.captures(rest)).flatten() {
        if let Some(pid) = c.get(1) {
            p.pid = pid.as_str().parse().ok();
        }
        Some(c[0].len())
    } else if p.level.is_none() {
        peel_level_word(p, rest, g, pat)
    } else {
        None
    }
}

/// A bare level word (`WARNING `, `[E] `); `Error:`/`Warning:` with no time before it is a message.
#[inline]
fn peel_level_word(p: &mut Prefix, rest: &str, g: &Gates, pat: &Patterns) -> Option<usize> {
    let c = g
        .level_word
        .then(|| pat.level_word.captures(rest))
        .flatten()?;
    let word = c.get(1).or(c.get(2)).map(|m| m.as_str()).unwrap_or("");
    // `Error:` / `Warning:` at the start is a message, not a level tag,
    // unless a timestamp came first.
    let is_message_word = matches!(word, "Error" | "Warning");
    if is_message_word && p.time.is_none() {
        return Some(0);
    }
    p.level = level_from(word);
    Some(c[0].len())
}

/// After a level: a logger location (`engine:`, `model_config.py:1098:`) and a `[rank N]` tag;
/// the bytes taken.
fn peel_logger_tail(p: &mut Prefix, rest: &str, ungated: bool, pat: &Patterns) -> usize {
    // `INFO engine: ...`, `WARNING model_config.py:1098: ...`, `worker[rank=0]: ...`
    let mut taken = 0;
    let mut rest = rest;
    if let Some(c) = (ungated || may_be_location(rest))
        .then(|| pat.location.captures(rest))
        .flatten()
    {
        p.location = Some(format!("{}:{}", &c[1], &c[2]));
        taken = c[0].len();
        rest = &rest[taken..];
    }
    if let Some(c) = rest
        .contains("[rank")
        .then(|| pat.logger_rank.captures(rest))
        .flatten()
    {
        if p.rank.is_none() {
            p.rank = c[1].parse().ok();
        }
    }
    taken
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A gate never shuts a pattern that would have matched: lines built
        /// from prefix pieces in any order parse the same with and without them.
        #[test]
        fn gates_change_no_parse(parts in proptest::collection::vec(prop_oneof![
            Just("[2026-02-24 10:00:01 TP3] "), Just("[2026-02-24T10:00:01.5Z] "),
            Just("2026-02-24 10:00:01,123 "), Just("INFO 06-12 08:49:30 [core.py:700] "),
            Just("WARNING "), Just("ERROR: "), Just("Error: "), Just("[E] "), Just("[rank3]: "),
            Just("(EngineCore_DP0 pid=274) "), Just("(VllmWorker rank=0 pid=12) "),
            Just("W1129 22:27:29.110000 626 torch/distributed/run.py:851] "),
            Just("[W1129 22:03:56.326321538 ProcessGroupNCCL.cpp:1575] "),
            Just("node1:123:456 [3] NCCL INFO "), Just("time=2026-01-01T00:00:00Z level=ERROR "),
            Just("Feb 24 10:00:01 host kernel[12]: "), Just("[TensorRT-LLM][RANK 1][ERROR] "),
            Just("model_config.py:1098: "), Just(" [multiproc_executor.py:852] "), Just("> "),
            Just("```"), Just("[TP0 DP1] "), Just("worker[rank=2]: "), Just("INFO:     "),
            Just("\u{661}\u{662}\u{663}\u{664}-01-01 00:00:00 "), Just("INFO\u{a0}"),
            Just("10.0.0.1:5000 - "), Just("x"), Just(": "), Just("1"), Just("["),
            Just("    | "), Just("  |"), Just("|"), Just("xinference.core.supervisor 53091 ERROR    "),
            Just(".."), Just("..[ERROR] "), Just("0.00.316.267 E "), Just("12.05.001.999 I "),
            Just("0.00."),
        ], 0..6), tail in "[ -~]{0,12}") {
            let line = format!("{}{}", parts.concat(), tail);
            prop_assert_eq!(parse(&line), parse_with(&line, true));
        }
    }

    fn msg<'a>(line: &'a str, p: &Prefix) -> &'a str {
        &line[p.msg_start..]
    }

    #[test]
    fn ggml_common_log_lines_carry_their_level_letter() {
        let l =
            "0.00.316.267 E llama_adapter_lora_init_from_file_ptr: failed to apply lora adapter";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Error));
        assert!(msg(l, &p).starts_with("llama_adapter_lora_init_from_file_ptr: failed"));
        let l = "0.00.188.390 I srv  llama_server: initializing ...";
        assert_eq!(parse(l).level, Some(Level::Info));
        let l = "12.03.004.005 W common_fit_params: not enough memory";
        assert_eq!(parse(l).level, Some(Level::Warning));
        // A version or an address is not a time since start.
        assert_eq!(parse("0.5.9 E is the release").level, None);
        assert_eq!(parse("10.0.0.1 E x").level, None);
    }

    #[test]
    fn spdlog_levels_are_read_after_other_bracketed_fields() {
        let p = parse("[ctranslate2] [thread 10436] [warning] The compute type inferred from the saved model is float16");
        assert_eq!(p.level, Some(Level::Warning));
        assert!(p.msg_start > 0);
        let p = parse("[2024-05-01 10:00:00.123] [server] [error] failed to bind");
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(
            &"[2024-05-01 10:00:00.123] [server] [error] failed to bind"[p.msg_start..],
            "failed to bind"
        );
        // A bracketed word that is not a level is message.
        assert_eq!(
            parse("[ctranslate2] [thread 1] [loading] model").level,
            None
        );
    }

    #[test]
    fn an_exception_groups_margin_is_a_prefix() {
        let l = "    | RuntimeError: CUDA error: invalid device function";
        assert_eq!(
            msg(l, &parse(l)),
            "RuntimeError: CUDA error: invalid device function"
        );
        let l = "    |   File \"/x/model.py\", line 3, in forward";
        assert_eq!(
            msg(l, &parse(l)),
            "  File \"/x/model.py\", line 3, in forward"
        );
    }

    #[test]
    fn a_line_pasted_in_bold_is_read_without_its_stars() {
        let l = "**docker: Error response from daemon: unknown or invalid runtime name: nvidia.**";
        assert_eq!(
            msg(l, &parse(l)),
            "docker: Error response from daemon: unknown or invalid runtime name: nvidia.**"
        );
        // Stars that are the message (a banner of asterisks) stay.
        let l = "*****";
        assert_eq!(msg(l, &parse(l)), "*****");
        let l = "** 3 errors **";
        assert_eq!(msg(l, &parse(l)), "** 3 errors **");
    }

    #[test]
    fn a_cut_vllm_prefix_leaves_its_location_tag() {
        let l = " [multiproc_executor.py:852] KeyError: 'layers.0.k_scale'";
        let p = parse(l);
        assert_eq!(p.location.as_deref(), Some("multiproc_executor.py:852"));
        assert_eq!(msg(l, &p), "KeyError: 'layers.0.k_scale'");
        let l = " [multiproc_executor.py:852]   File \"/v/utils.py\", line 268, in f";
        assert_eq!(msg(l, &parse(l)), "  File \"/v/utils.py\", line 268, in f");
        // A bracketed list in a message is not a location.
        let l = "[1, 2, 3] is the answer";
        assert_eq!(parse(l).msg_start, 0);
    }

    #[test]
    fn sglang_prefixes_in_any_order() {
        let l = "[2026-11-29 22:27:32,782 TP0] Init torch distributed begin.";
        let p = parse(l);
        assert_eq!(p.tp, Some(0));
        assert!(p.time.is_some());
        assert_eq!(msg(l, &p), "Init torch distributed begin.");

        let l = "[2025-12-15 00:02:05 DP1 TP1] Scheduler hit an exception: Traceback";
        let p = parse(l);
        assert_eq!((p.dp, p.tp), (Some(1), Some(1)));
        assert_eq!(msg(l, &p), "Scheduler hit an exception: Traceback");

        let l = "[DP0 TP0 EP0] can't use cuda graph for draft extend!";
        let p = parse(l);
        assert_eq!((p.dp, p.tp, p.ep), (Some(0), Some(0), Some(0)));

        let l = "[2026-03-21 01:40:19] WARNING model_config.py:1098: Transformers version 5.3.0 is used";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Warning));
        assert_eq!(p.location.as_deref(), Some("model_config.py:1098"));
        assert_eq!(msg(l, &p), "Transformers version 5.3.0 is used");
    }

    #[test]
    fn vllm_and_ray_prefixes() {
        let l = "(EngineCore_DP0 pid=274) ERROR 06-12 08:49:30 [core.py:700] EngineCore failed to start.";
        let p = parse(l);
        assert_eq!(p.process.as_deref(), Some("EngineCore_DP0"));
        assert_eq!(p.dp, Some(0));
        assert_eq!(p.pid, Some(274));
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(p.location.as_deref(), Some("core.py:700"));
        assert_eq!(msg(l, &p), "EngineCore failed to start.");

        let l = "(WorkerDict pid=1216, ip=10.0.0.3) [2025-05-26 15:54:41 TP1] Scheduler hit an exception: x";
        let p = parse(l);
        assert_eq!(p.tp, Some(1));
        assert_eq!(msg(l, &p), "Scheduler hit an exception: x");

        let l =
            "(Worker_TP1 pid=1268) INFO 04-28 07:10:22 [v1/executor/multiproc_executor.py:857] hi";
        let p = parse(l);
        assert_eq!(p.tp, Some(1));
        assert_eq!(msg(l, &p), "hi");
    }

    #[test]
    fn buildkit_step_prefixes() {
        let l = "#10 1380.2 /x/vec_dtypes.cuh(55): error: more than one instance";
        assert_eq!(
            msg(l, &parse(l)),
            "/x/vec_dtypes.cuh(55): error: more than one instance"
        );
        let l = "#10 1384.6     uint32_t* s_u32 = (uint32_t*)(s);";
        assert_eq!(msg(l, &parse(l)), "    uint32_t* s_u32 = (uint32_t*)(s);");
        for l in ["#include <cuda.h>", "#1 of 3 downloads", "# 10 1.5 GB"] {
            assert_eq!(msg(l, &parse(l)), l);
        }
    }

    #[test]
    fn docker_compose_service_prefixes() {
        let l = "vllm-1  | INFO 06-12 08:49:30 [core.py:700] EngineCore failed to start.";
        let p = parse(l);
        assert_eq!(p.process.as_deref(), Some("vllm-1"));
        assert_eq!(p.level, Some(Level::Info));
        assert_eq!(msg(l, &p), "EngineCore failed to start.");
        let l = "scalellm          | ./entrypoint.sh: line 28:     7 Killed     /app/bin/scalellm";
        assert_eq!(
            msg(l, &parse(l)),
            "./entrypoint.sh: line 28:     7 Killed     /app/bin/scalellm"
        );
        // A table row, a shell pipe and a bar later in the line are not service names.
        for l in [
            "| NVIDIA-SMI 550.54 |",
            "cat log.txt | grep ERROR",
            "Error: x | y",
        ] {
            let p = parse(l);
            assert!(p.process.is_none(), "{l}");
        }
    }

    #[test]
    fn torchrun_glog_and_python_logging() {
        let l = "[rank0]:[W1129 22:27:33.151781957 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy";
        let p = parse(l);
        assert_eq!(p.rank, Some(0));
        assert_eq!(p.level, Some(Level::Warning));
        assert_eq!(msg(l, &p), "Warning: WARNING: destroy");

        let l = "W1129 22:27:29.110000 626 torch/distributed/run.py:851] *****";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Warning));
        assert_eq!(msg(l, &p), "*****");

        let l = "2026-11-29 22:01:32,847 INFO engine: torch 2.11.0+cu130";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Info));
        assert_eq!(msg(l, &p), "engine: torch 2.11.0+cu130");

        let l = "2026-11-29 22:03:54,733 INFO worker[rank=1]: torch 2.11.0";
        assert_eq!(parse(l).rank, Some(1));
    }

    #[test]
    fn python_logging_and_loguru_fields() {
        let l = "2024-07-23 14:18:00,452 - lmdeploy - ERROR - <Triton> test failed!";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Error));
        assert!(p.time.is_some());
        assert_eq!(msg(l, &p), "<Triton> test failed!");

        let l = "lmdeploy - ERROR - base.py:53 - RuntimeError: Internal Triton PTX codegen error";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(p.location.as_deref(), Some("base.py:53"));
        assert_eq!(
            msg(l, &p),
            "RuntimeError: Internal Triton PTX codegen error"
        );

        let l = "2024-05-01 10:00:00.123 | WARNING  | app.main:load:42 - slow disk";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Warning));
        assert_eq!(msg(l, &p), "slow disk");

        let l = "2024-05-01 10:00:00 - INFO - loading weights";
        assert_eq!(parse(l).level, Some(Level::Info));

        // `%(name)s %(process)d %(levelname)s` (a dotted module logger), with the time
        // before it or not.
        let l = "xinference.core.supervisor 53091 ERROR    Failed to launch replica m-0: boom";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(msg(l, &p), "Failed to launch replica m-0: boom");
        let l = "2025-01-02 10:00:00,123 xinference.core.worker 12 INFO     Launching model";
        assert_eq!(parse(l).level, Some(Level::Info));
        // A tool's progress dots before its bracketed level.
        let l = "..[ERROR] the socversion of bin package does not match";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Error));
        assert_eq!(msg(l, &p), "the socversion of bin package does not match");

        // Prose and list items keep their words: no timestamp, no level field.
        for l in [
            "- ERROR - a bullet of a pasted checklist",
            "the build - ERROR - appears twice",
            "Results - 3 passed",
            "step 2 ERROR was printed twice",
            "e.g. 2 ERROR lines",
            "the job 12 INFO page",
        ] {
            let p = parse(l);
            assert_eq!(p.level, None, "{l}");
            assert_eq!(p.msg_start, 0, "{l}");
        }
    }

    #[test]
    fn plain_messages_keep_their_words() {
        let l = "Error: exception done_getting_tensors: wrong number of tensors";
        let p = parse(l);
        assert_eq!(p.msg_start, 0);
        let l = "RuntimeError: an illegal memory access was encountered";
        assert_eq!(parse(l).msg_start, 0);
        let l = "INFO:     Application startup complete.";
        let p = parse(l);
        assert_eq!(p.level, Some(Level::Info));
        assert_eq!(msg(l, &p), "Application startup complete.");
    }

    #[test]
    fn times_order_across_shapes() {
        let a = parse("[2026-11-29 22:27:32,782 TP0] a").time.unwrap();
        let b = parse("[2026-11-29 22:27:33,152 TP1] b").time.unwrap();
        assert!(b > a);
    }
}
