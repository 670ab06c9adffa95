//! The supervisor and the probe against real processes and a real HTTP
//! server on 127.0.0.1 that the test starts: output copied byte for byte,
//! exit codes passed through, stalls, groups stopped with nothing left, and
//! the probe's reading of a streamed answer, an HTTP error and a connection
//! that drops after the first token. Property tests feed the monitor any bytes.

use rosetta_journal::Outcome;
use rosetta_run::{supervise, Address, Ending, Monitor, Options, Terminal};
use rosetta_schema::Phase;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn opts(dir: &tempfile::TempDir, script: &str) -> Options {
    Options {
        command: vec!["sh".into(), "-c".into(), script.into()],
        log_path: dir.path().join("attempt.log"),
        probe: false,
        probe_timeout: Duration::from_secs(10),
        stall: None,
        grace: Duration::from_secs(1),
        stop_when_ready: false,
        command_address: None,
        env: vec![],
    }
}

fn go(o: &Options) -> (Ending, Vec<u8>, Vec<u8>) {
    let (out, err) = (Sink::default(), Sink::default());
    let term = Terminal {
        stdout: Box::new(out.clone()),
        stderr: Box::new(err.clone()),
        status: None,
    };
    let e = supervise(o, term, &mut |_| {}).expect("supervise");
    let o = out.0.lock().unwrap().clone();
    let r = err.0.lock().unwrap().clone();
    (e, o, r)
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .is_some_and(|r| r.trim_start().starts_with('Z'))
    })
}

#[test]
fn output_is_copied_unchanged_and_the_exit_code_passes_through() {
    let d = tempfile::tempdir().unwrap();
    let o = opts(
        &d,
        "printf 'a\\033[31mred\\033[0m\\r50%%\\r100%%\\n'; printf 'err line\\n' >&2; printf 'no newline'; exit 3",
    );
    let (e, out, err) = go(&o);
    assert_eq!(e.outcome, Outcome::Crashed);
    assert_eq!(e.exit_code, Some(3));
    assert_eq!(out, b"a\x1b[31mred\x1b[0m\r50%\r100%\nno newline");
    assert_eq!(err, b"err line\n");
    let log = std::fs::read(&o.log_path).unwrap();
    assert_eq!(
        log.len(),
        out.len() + err.len(),
        "the log holds both streams"
    );
}

#[test]
fn a_signal_death_is_128_plus_the_signal() {
    let d = tempfile::tempdir().unwrap();
    let (e, _, _) = go(&opts(&d, "kill -KILL $$"));
    assert_eq!(e.exit_code, Some(128 + 9));
    assert_eq!(e.outcome, Outcome::Crashed);
}

#[test]
fn a_stall_stops_the_group_and_a_term_ignoring_grandchild_gets_sigkill() {
    let d = tempfile::tempdir().unwrap();
    let pids = d.path().join("pids");
    let script = format!(
        "trap '' TERM; (trap '' TERM; echo $(sh -c 'echo $PPID') >> {p}; exec sleep 600) & echo $$ >> {p}; echo 'Load weight begin'; exec sleep 600",
        p = pids.display()
    );
    let mut o = opts(&d, &script);
    o.stall = Some(Duration::from_secs(1));
    let (e, out, _) = go(&o);
    assert_eq!(e.outcome, Outcome::Stalled);
    assert!(e.stopped_by_rosetta && e.killed, "{e:?}");
    assert!(!e.leftover);
    assert_eq!(e.phase, Some(Phase::WeightLoad));
    assert!(String::from_utf8_lossy(&out).contains("Load weight begin"));
    let pids: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    for p in pids {
        assert!(!alive(p), "{p} is still alive");
    }
}

#[test]
fn leftovers_of_a_child_that_exited_are_stopped() {
    let d = tempfile::tempdir().unwrap();
    let pidfile = d.path().join("pid");
    // The child starts a background process and exits at once.
    let script = format!("sleep 600 & echo $! > {}; exit 1", pidfile.display());
    let (e, _, _) = go(&opts(&d, &script));
    assert_eq!(e.exit_code, Some(1));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!alive(pid), "the orphan {pid} was left running");
    assert!(!e.leftover);
}

#[test]
fn a_missing_program_is_an_error_naming_it() {
    let d = tempfile::tempdir().unwrap();
    let mut o = opts(&d, "");
    o.command = vec!["/nonexistent/server".into()];
    let term = Terminal {
        stdout: Box::new(Sink::default()),
        stderr: Box::new(Sink::default()),
        status: None,
    };
    let e = supervise(&o, term, &mut |_| {}).err().unwrap().to_string();
    assert!(e.contains("/nonexistent/server"), "{e}");
}

/// A one-shot HTTP server on 127.0.0.1: answers `/v1/models`, then the chat request with `reply`.
/// One request per connection, and it says so (`Connection: close`): a client that kept the
/// first connection for the second request would race the server's close.
fn server(reply: &'static [u8]) -> Address {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for s in l.incoming().take(2) {
            let Ok(mut s) = s else { return };
            let mut r = BufReader::new(s.try_clone().unwrap());
            let mut first = String::new();
            r.read_line(&mut first).unwrap();
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                r.read_line(&mut h).unwrap();
                if h.trim().is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0u8; len];
            r.read_exact(&mut body).unwrap();
            if first.starts_with("GET /v1/models") {
                let b = br#"{"data":[{"id":"m"}]}"#;
                write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    b.len()
                )
                .unwrap();
                s.write_all(b).unwrap();
            } else {
                let req: serde_json::Value = serde_json::from_slice(&body).unwrap();
                assert_eq!(req["model"], "m");
                assert_eq!(req["stream"], true);
                s.write_all(reply).unwrap();
                // Dropping the socket closes the connection.
            }
        }
    });
    Address::new("127.0.0.1", port)
}

#[test]
fn the_probe_reads_a_streamed_answer() {
    let a = server(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\
data: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"stop\"}]}\n\n\
data: [DONE]\n\n",
    );
    let mut seen = vec![];
    let r = rosetta_run::probe::probe(&a, Duration::from_secs(10), &mut |p| seen.push(p));
    assert!(r.ok, "{r:?}");
    assert_eq!(r.tokens, 2);
    assert_eq!(r.text, "Hello");
    assert!(r.ttft_ms.is_some());
    assert_eq!(seen.len(), 3);
}

#[test]
fn the_probe_names_the_step_a_server_died_in() {
    let a = server(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n\
data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n",
    );
    let r = rosetta_run::probe::probe(&a, Duration::from_secs(10), &mut |_| {});
    assert!(!r.ok);
    assert_eq!((r.tokens, r.died_in), (1, Some(Phase::Decode)));
    let a = server(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 13\r\nConnection: close\r\n\r\nCUDA error: x");
    let r = rosetta_run::probe::probe(&a, Duration::from_secs(10), &mut |_| {});
    assert!(!r.ok);
    assert_eq!(r.status, Some(500));
    assert_eq!(r.died_in, Some(Phase::Prefill));
    assert!(r.error.unwrap().contains("CUDA error"));
    // Nothing listens: the server is gone before the request.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let r = rosetta_run::probe::probe(
        &Address::new("127.0.0.1", port),
        Duration::from_secs(5),
        &mut |_| {},
    );
    assert!(!r.ok && r.died_in == Some(Phase::Prefill), "{r:?}");
}

proptest::proptest! {
    #[test]
    fn the_monitor_takes_any_bytes(chunks in proptest::collection::vec(proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000), 0..20), stream in 0usize..3) {
        let mut m = Monitor::new(None);
        for c in &chunks {
            m.feed(stream, c);
        }
        let _ = m.status();
    }

    #[test]
    fn the_monitor_sees_the_same_lines_however_they_are_split(cut in 1usize..200) {
        let text = b"[2026-01-01 00:00:00] Load weight begin.\nLoading safetensors checkpoint shards:  50% Completed | 1/2\r\nINFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n";
        let mut whole = Monitor::new(None);
        whole.feed(0, text);
        let mut parts = Monitor::new(None);
        for c in text.chunks(cut) {
            parts.feed(0, c);
        }
        proptest::prop_assert_eq!(whole.ready, parts.ready);
        proptest::prop_assert_eq!(whole.address, parts.address);
        proptest::prop_assert_eq!(whole.lines, parts.lines);
    }
}
