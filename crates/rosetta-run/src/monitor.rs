//! Reads the child's output as it arrives, line by line (a carriage return
//! ends a line too, so progress bars are seen as they move), and keeps what
//! the status line and the supervisor need: the phase and label of the last
//! milestone (rosetta-log's milestone shapes, the same the diagnosis uses),
//! the progress a bar shows (`31/81`), whether the server said it is ready,
//! and the address it announced. It never judges a failure: the diagnosis of
//! the whole log does that at the end.

use regex::Regex;
use rosetta_log::Vocabulary;
use rosetta_schema::Phase;
use std::sync::OnceLock;

/// Where a server listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// Host to connect to (a wildcard bind is asked on loopback).
    pub host: String,
    /// Port.
    pub port: u16,
}

impl Address {
    /// A bind address as a server prints it, made connectable: `0.0.0.0` and
    /// `::` become loopback; brackets around IPv6 are kept for URLs.
    pub fn new(host: &str, port: u16) -> Address {
        let h = host.trim().trim_matches(|c| c == '\'' || c == '"');
        let host = match h {
            "0.0.0.0" | "" | "*" => "127.0.0.1".to_string(),
            "::" | "[::]" => "[::1]".to_string(),
            h if h.contains(':') && !h.starts_with('[') => format!("[{h}]"),
            h => h.to_string(),
        };
        Address { host, port }
    }

    /// `http://host:port`.
    pub fn base_url(&self) -> String {
        format!("http://{}:{}", self.host, self.port)
    }
}

/// Where the address came from, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AddressSource {
    /// The server's own "listening on http://..." line.
    Announced,
    /// Its printed launch args (`host=`, `port=`).
    LogArgs,
    /// The launch command's args.
    Command,
}

struct Patterns {
    url: Regex,
    host: Regex,
    port: Regex,
    args_line: Regex,
    progress: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        url: Regex::new(r"https?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]+):(\d{1,5})").unwrap(),
        host: Regex::new(r#"['"]?\bhost['"]?\s*[:=]\s*['"]?([A-Za-z0-9.\-:\[\]]+)"#).unwrap(),
        port: Regex::new(r#"['"]?\bport['"]?\s*[:=]\s*['"]?(\d{1,5})\b"#).unwrap(),
        args_line: Regex::new(
            r"(?i)server_args=|ServerArgs\(|non-default args|args: Namespace\(|Namespace\(",
        )
        .unwrap(),
        progress: Regex::new(r"\b(\d{1,7})/(\d{1,7})\b").unwrap(),
    })
}

/// What a line changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    /// The phase or label moved (redraw the status).
    pub moved: bool,
    /// The server said it is ready (first time).
    pub ready: bool,
}

/// The live view of the child's output.
#[derive(Debug, Default)]
pub struct Monitor {
    /// Phase of the last milestone.
    pub phase: Option<Phase>,
    /// Its label (`weight load`).
    pub label: Option<&'static str>,
    /// Progress on the current label: done, total.
    pub progress: Option<(u64, u64)>,
    /// The server said it is ready.
    pub ready: bool,
    /// The address, with where it came from.
    pub address: Option<(Address, AddressSource)>,
    /// Lines seen.
    pub lines: u64,
    partial: [Vec<u8>; 2],
    log_host: Option<String>,
    log_port: Option<u16>,
}

impl Monitor {
    /// A monitor; `command_address` is the address the launch command names, if any.
    pub fn new(command_address: Option<Address>) -> Monitor {
        Monitor {
            address: command_address.map(|a| (a, AddressSource::Command)),
            ..Monitor::default()
        }
    }

    /// Feeds bytes of one stream (0 stdout, 1 stderr).
    pub fn feed(&mut self, stream: usize, bytes: &[u8]) -> Seen {
        let mut seen = Seen::default();
        let s = stream.min(1);
        let mut start = 0;
        for (i, b) in bytes.iter().enumerate() {
            if *b == b'\n' || *b == b'\r' {
                if self.partial[s].is_empty() {
                    self.line(&bytes[start..i], &mut seen);
                } else {
                    let mut l = std::mem::take(&mut self.partial[s]);
                    l.extend_from_slice(&bytes[start..i]);
                    self.line(&l, &mut seen);
                }
                start = i + 1;
            }
        }
        if start < bytes.len() {
            // Keep at most 64 KiB of a line that does not end.
            let room = 65536usize.saturating_sub(self.partial[s].len());
            let rest = &bytes[start..];
            self.partial[s].extend_from_slice(&rest[..rest.len().min(room)]);
        }
        seen
    }

    fn line(&mut self, raw: &[u8], seen: &mut Seen) {
        if raw.iter().all(|b| b.is_ascii_whitespace()) {
            return;
        }
        self.lines += 1;
        let (text, _) = rosetta_log::scan::normalize(raw);
        let prefix = rosetta_log::prefix::parse(&text);
        let msg = text.get(prefix.msg_start..).unwrap_or(&text);
        let p = patterns();
        if p.args_line.is_match(msg) {
            if let Some(c) = p.host.captures(msg) {
                self.log_host = Some(c[1].to_string());
            }
            if let Some(c) = p.port.captures(msg) {
                self.log_port = c[1].parse().ok();
            }
            if let (Some(h), Some(port)) = (&self.log_host, self.log_port) {
                self.offer(Address::new(h, port), AddressSource::LogArgs);
            } else if let Some(port) = self.log_port {
                self.offer(Address::new("127.0.0.1", port), AddressSource::LogArgs);
            }
        }
        let Some(shape) = Vocabulary::embedded().milestone(msg) else {
            // A progress bar continues the current label.
            if matches!(
                self.phase,
                Some(Phase::WeightLoad | Phase::GraphCapture | Phase::MemoryPlan)
            ) {
                if let Some(pr) = progress(msg) {
                    if self.progress != Some(pr) {
                        self.progress = Some(pr);
                        seen.moved = true;
                    }
                }
            }
            return;
        };
        if shape.ready {
            if let Some(c) = p.url.captures(msg) {
                if let Ok(port) = c[2].parse::<u16>() {
                    self.offer(Address::new(&c[1], port), AddressSource::Announced);
                }
            }
            if !self.ready {
                self.ready = true;
                seen.ready = true;
            }
        }
        // After ready, request and batch lines are serving, not a new phase.
        if self.ready && !shape.ready && shape.phase != Phase::Shutdown {
            return;
        }
        let pr = progress(msg);
        if self.label != Some(shape.label) || self.progress != pr {
            seen.moved = true;
        }
        self.phase = Some(shape.phase);
        self.label = Some(shape.label);
        self.progress = pr;
    }

    fn offer(&mut self, a: Address, src: AddressSource) {
        match &self.address {
            Some((_, old)) if *old < src => {}
            _ => self.address = Some((a, src)),
        }
    }

    /// The status words: `weight load 31/81`.
    pub fn status(&self) -> String {
        let mut s = self.label.unwrap_or("starting").to_string();
        if let Some((d, t)) = self.progress {
            s.push_str(&format!(" {d}/{t}"));
        }
        s
    }
}

/// `31/81` in a progress line (the last such pair, done <= total, total > 1).
fn progress(msg: &str) -> Option<(u64, u64)> {
    patterns()
        .progress
        .captures_iter(msg)
        .filter_map(|c| {
            let d: u64 = c[1].parse().ok()?;
            let t: u64 = c[2].parse().ok()?;
            (d <= t && t > 1).then_some((d, t))
        })
        .last()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn milestones_progress_and_ready() {
        let mut m = Monitor::new(None);
        m.feed(
            1,
            b"[2026-05-20 10:00:00] server_args=ServerArgs(model_path='/m', host='0.0.0.0', port=31000, tp_size=1)\n",
        );
        assert_eq!(m.label, Some("start"));
        assert_eq!(
            m.address,
            Some((Address::new("127.0.0.1", 31000), AddressSource::LogArgs))
        );
        m.feed(
            1,
            b"[2026-05-20 10:00:01] Load weight begin. avail mem=78.00 GB\n",
        );
        assert_eq!(m.phase, Some(Phase::WeightLoad));
        let s = m.feed(
            1,
            b"Loading safetensors checkpoint shards:  38% Completed | 31/81 [00:12<00:20]\r",
        );
        assert!(s.moved);
        assert_eq!(m.status(), "weight load 31/81");
        // a line split over two reads
        m.feed(1, b"[2026-05-20 10:00:09] Uvicorn running on http://0.0.0");
        assert!(!m.ready);
        let s = m.feed(1, b".0:31001 (Press CTRL+C to quit)\n");
        assert!(s.ready && m.ready);
        assert_eq!(
            m.address,
            Some((Address::new("127.0.0.1", 31001), AddressSource::Announced))
        );
        m.feed(1, b"[2026-05-20 10:00:10] Prefill batch. #new-seq: 1\n");
        assert_eq!(
            m.label,
            Some("ready"),
            "serving lines do not move the phase"
        );
    }

    #[test]
    fn the_command_address_gives_way_to_the_announced_one() {
        let mut m = Monitor::new(Some(Address::new("localhost", 8000)));
        m.feed(0, b"INFO:     Uvicorn running on http://[::]:8001\n");
        assert_eq!(
            m.address,
            Some((Address::new("::", 8001), AddressSource::Announced))
        );
        assert_eq!(
            m.address.as_ref().unwrap().0.base_url(),
            "http://[::1]:8001"
        );
    }

    #[test]
    fn garbage_never_panics() {
        let mut m = Monitor::new(None);
        m.feed(0, &[0xff, 0xfe, b'\r', 0, 1, 2, b'\n']);
        m.feed(7, &vec![b'x'; 200_000]);
        assert!(m.partial[1].len() <= 65536);
    }
}
