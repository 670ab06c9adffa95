//! Line prefixes: timestamps of the common shapes, rank tags (`TP3`, `DP1`,
//! `EP0`, `PP0` in any order, `[rank0]:`), process tags
//! (`(EngineCore_DP0 pid=274)`, Ray's `(Worker pid=N, ip=...)`), levels and
//! `file.py:N` locations. This module reads one already-normalised line and
//! says where its message starts; it knows nothing about what messages mean.

use regex::Regex;
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
    ray: Regex,
    torchrun: Regex,
    sglang: Regex,
    rank_only: Regex,
    iso: Regex,
    vllm: Regex,
    glog: Regex,
    glog_bracket: Regex,
    level_word: Regex,
    quote: Regex,
    nccl: Regex,
    logfmt: Regex,
    syslog: Regex,
    trt: Regex,
    logger_rank: Regex,
    location: Regex,
    bracket_location: Regex,
    tag: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        // (EngineCore_DP0 pid=274) / (WorkerDict pid=1216, ip=10.0.0.1) / (VllmWorker rank=0 pid=12)
        ray: Regex::new(r"^\(([A-Za-z_][\w\-.]*)(?: rank=(\d+))?(?: pid=(\d+))?(?:, ip=[^)]*)?\)\s+").unwrap(),
        quote: Regex::new(r"^(?:>(?: |$)|`{3,})").unwrap(),
        nccl: Regex::new(r"^\S+:\d+:\d+ \[(\d+)\] (?:[\w/.\-]+\.\w+:\d+ )?NCCL (INFO|WARN|TRACE|ERROR) ").unwrap(),
        logfmt: Regex::new(r"^time=\S+ level=(\w+) (?:source=\S+ )?").unwrap(),
        torchrun: Regex::new(r"^\[(?:rank|Rank )(\d+)\]:\s?").unwrap(),
        // [2026-11-29 22:27:32,782 TP0] / [2025-12-15 00:02:05 DP1 TP1] / [2026-03-21 01:40:19]
        sglang: Regex::new(r"^\[(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?)((?:\s+(?:DP|TP|EP|PP|CP|ATTN_CP|MOE_DP)\d+)*)\]\s*").unwrap(),
        rank_only: Regex::new(r"^\[((?:(?:DP|TP|EP|PP|CP|ATTN_CP|MOE_DP)\d+\s*)+)\]\s*").unwrap(),
        iso: Regex::new(r"^\[?(\d{4}-\d\d-\d\d[ T_]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\]?\s+").unwrap(),
        // INFO 06-12 08:49:30 [core.py:700]
        vllm: Regex::new(r"^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+(\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)\s+(?:\[([^\]\s]+:\d+)\]\s*)?").unwrap(),
        // W1129 22:27:29.110000 626 torch/distributed/run.py:851]
        glog: Regex::new(r"^([IWEF])(\d\d)(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)\s+\d+\s+([^\]\s]+:\d+)\]\s?").unwrap(),
        // [W1129 22:03:56.326321538 ProcessGroupNCCL.cpp:1575]
        glog_bracket: Regex::new(r"^\[([IWEF])(\d\d)(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)\s+(?:\d+\s+)?([^\]\s]+:\d+)\]\s?").unwrap(),
        level_word: Regex::new(r"^(?:\[(?i:(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|E|W|I))\]|(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|Error|Warning)\b:?)\s*").unwrap(),
        syslog: Regex::new(r"^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ [\w.\-/]+(?:\[(\d+)\])?: ").unwrap(),
        trt: Regex::new(r"^\[(TensorRT-LLM|TRT-LLM)\](?:\s*\[RANK (\d+)\])?\s*\[(ERROR|WARNING|INFO|DEBUG|VERBOSE|E|W|I|V)\]\s*").unwrap(),
        logger_rank: Regex::new(r"^[\w.\-]*\[rank[= ]?(\d+)\]").unwrap(),
        location: Regex::new(r"^([\w\-./]+\.(?:py|cpp|cc|cu|h|hpp|rs|c)):(\d+)(?::| -|\])\s*").unwrap(),
        // ` [multiproc_executor.py:852] `: vLLM's location tag left when a paste cut the rest of the prefix
        bracket_location: Regex::new(r"^\s*\[([\w\-.]+\.py:\d+)\]\s?").unwrap(),
        tag: Regex::new(r"(DP|TP|EP|PP|CP|ATTN_CP|MOE_DP)(\d+)").unwrap(),
    })
}

fn level_from(word: &str) -> Option<Level> {
    Some(match word.to_ascii_uppercase().as_str() {
        "DEBUG" | "D" | "V" | "VERBOSE" | "TRACE" => Level::Debug,
        "INFO" | "I" | "NOTICE" => Level::Info,
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

/// Parses the prefix of one line (ANSI codes already stripped).
pub fn parse(line: &str) -> Prefix {
    let pat = patterns();
    let mut p = Prefix::default();
    let mut rest = line;
    let mut pos = 0usize;
    // Prefix tokens come in many orders; peel them off until none matches.
    for _ in 0..8 {
        let before = pos;
        if let Some(c) = pat.ray.captures(rest).filter(|c| {
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
        }) {
            let name = c[1].to_string();
            apply_tags(&mut p, &name);
            if let Some(r) = c.get(2) {
                p.rank = r.as_str().parse().ok();
            }
            p.pid = c.get(3).and_then(|m| m.as_str().parse().ok());
            p.process = Some(name);
            pos += c[0].len();
        } else if let Some(c) = pat.quote.captures(rest) {
            // A log pasted as a Markdown quote.
            pos += c[0].len();
        } else if let Some(c) = pat.nccl.captures(rest) {
            p.level = level_from(match &c[2] {
                "TRACE" => "DEBUG",
                other => other,
            });
            pos += c[0].len();
        } else if let Some(c) = pat.logfmt.captures(rest) {
            p.level = level_from(&c[1]);
            pos += c[0].len();
        } else if let Some(c) = pat.torchrun.captures(rest) {
            p.rank = c[1].parse().ok();
            pos += c[0].len();
        } else if let Some(c) = pat.sglang.captures(rest) {
            p.time = parse_time(&c[1]);
            p.time_text = Some(c[1].to_string());
            apply_tags(&mut p, &c[2]);
            pos += c[0].len();
        } else if let Some(c) = pat.rank_only.captures(rest) {
            apply_tags(&mut p, &c[1]);
            pos += c[0].len();
        } else if let Some(c) = pat
            .glog
            .captures(rest)
            .or_else(|| pat.glog_bracket.captures(rest))
        {
            p.level = level_from(&c[1]);
            let text = format!("{}-{} {}", &c[2], &c[3], &c[4]);
            p.time = parse_time(&text);
            p.time_text = Some(text);
            p.location = Some(c[5].to_string());
            pos += c[0].len();
        } else if let Some(c) = pat.vllm.captures(rest) {
            p.level = level_from(&c[1]);
            p.time = parse_time(&c[2]);
            p.time_text = Some(c[2].to_string());
            p.location = c.get(3).map(|m| m.as_str().to_string());
            pos += c[0].len();
        } else if let Some(c) = pat.iso.captures(rest) {
            if p.time.is_some() {
                break;
            }
            p.time = parse_time(&c[1]);
            p.time_text = Some(c[1].to_string());
            pos += c[0].len();
        } else if let Some(c) = pat.trt.captures(rest) {
            if let Some(r) = c.get(2) {
                p.rank = r.as_str().parse().ok();
            }
            p.level = level_from(&c[3]);
            pos += c[0].len();
        } else if let Some(c) = pat
            .bracket_location
            .captures(rest)
            .filter(|_| p.location.is_none())
        {
            p.location = Some(c[1].to_string());
            pos += c[0].len();
        } else if let Some(c) = pat.syslog.captures(rest) {
            if let Some(pid) = c.get(1) {
                p.pid = pid.as_str().parse().ok();
            }
            pos += c[0].len();
        } else if p.level.is_none() {
            if let Some(c) = pat.level_word.captures(rest) {
                let word = c.get(1).or(c.get(2)).map(|m| m.as_str()).unwrap_or("");
                // `Error:` / `Warning:` at the start is a message, not a level tag,
                // unless a timestamp came first.
                let is_message_word = matches!(word, "Error" | "Warning");
                if is_message_word && p.time.is_none() {
                    break;
                }
                p.level = level_from(word);
                pos += c[0].len();
            }
        }
        rest = &line[pos..];
        if pos == before {
            break;
        }
    }
    // `INFO engine: ...`, `WARNING model_config.py:1098: ...`, `worker[rank=0]: ...`
    if p.level.is_some() {
        if let Some(c) = pat.location.captures(rest) {
            p.location = Some(format!("{}:{}", &c[1], &c[2]));
            pos += c[0].len();
            rest = &line[pos..];
        }
        if let Some(c) = pat.logger_rank.captures(rest) {
            if p.rank.is_none() {
                p.rank = c[1].parse().ok();
            }
        }
    }
    p.msg_start = pos;
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg<'a>(line: &'a str, p: &Prefix) -> &'a str {
        &line[p.msg_start..]
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
