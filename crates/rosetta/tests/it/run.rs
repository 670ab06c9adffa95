//! `rosetta run` and `rosetta findings` end to end, around `fake_sglang.py`
//! (a fake sglang server we wrote, standard-library Python, listening on
//! 127.0.0.1): the decode-time device-side assert on the first request, the
//! relaunch with `--disable-cuda-graph` that rules cuda-graph out, a relaunch
//! with another attention backend that answers and so supports
//! backend-selection, `findings` in every format; stalls, signals, and
//! children that ignore SIGTERM, with a check that nothing is left running.

use super::*;
use std::time::{Duration, Instant};

fn fake() -> String {
    repo()
        .join("crates/rosetta/tests/it/fake_sglang.py")
        .display()
        .to_string()
}

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        Lab {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn journal(&self) -> String {
        self.dir.path().join("journal.sqlite").display().to_string()
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .env_clear()
            .env("HOME", self.dir.path())
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("NO_COLOR", "1")
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        c
    }

    /// `rosetta run --journal J <flags> -- python3 fake_sglang.py <fake args>`, the fake in `mode`.
    fn run(&self, flags: &[&str], fake_args: &[&str], mode: &str) -> Output {
        let j = self.journal();
        let f = fake();
        let mut args = vec!["run", "--journal", &j];
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "python3", &f]);
        args.extend_from_slice(fake_args);
        self.cmd(&args)
            .env("FAKE_SGLANG_MODE", mode)
            .env("FAKE_SGLANG_PIDFILE", self.dir.path().join("pids"))
            .output()
            .expect("rosetta runs")
    }

    fn findings(&self, args: &[&str]) -> Output {
        let j = self.journal();
        let mut a = vec!["findings", "--journal", &j];
        a.extend_from_slice(args);
        self.cmd(&a).output().expect("rosetta findings runs")
    }

    fn attempts(&self) -> serde_json::Value {
        json(&self.findings(&["--format", "json"]))
    }
}

fn alive(pid: i32) -> bool {
    // A zombie is dead for our purpose; a process still in the table otherwise is alive.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => !s
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn wait_file(path: &Path, limit: Duration) -> String {
    let t = Instant::now();
    while t.elapsed() < limit {
        if let Ok(s) = std::fs::read_to_string(path) {
            if s.ends_with('\n') {
                return s;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{} never appeared", path.display());
}

/// Long because it is one story told in order: runs of the fake server, each reading the
/// journal the runs before it wrote; split into pieces, the order the test is about would hide.
#[test]
fn fake_server_decode_assert_then_cuda_graph_ruled_out() {
    let lab = Lab::new();
    // 1: dies in decode on the probe's first request.
    let o = lab.run(&["--probe", "--no-status"], &[], "decode-assert");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    assert!(
        out.contains("Uvicorn running on http://127.0.0.1:"),
        "the child's output passes through:\n{out}"
    );
    assert!(out.contains("attempt #1 probe-failed"), "{out}");
    assert!(out.contains("died in decode after 1 token"), "{out}");
    assert!(
        out.contains("FAILURE  device-side-assert · decode"),
        "{out}"
    );
    let v = lab.attempts();
    let a1 = &v["attempts"][0];
    assert_eq!(a1["outcome"], "probe-failed");
    assert_eq!(a1["failure"]["class"], "device-side-assert");
    assert_eq!(a1["failure"]["phase"], "decode");
    assert_eq!(a1["probe"]["died_in"], "decode");
    assert!(a1["command"].as_str().unwrap().contains("fake_sglang.py"));
    let causes: Vec<&str> = a1["hypotheses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["cause"].as_str().unwrap())
        .collect();
    assert!(causes.contains(&"cuda-graph"), "{causes:?}");
    // The log kept with the attempt is the child's output, unchanged.
    let log = std::fs::read_to_string(a1["log"].as_str().unwrap()).unwrap();
    assert!(
        log.contains("server_args=ServerArgs(") && log.contains("device-side assert triggered")
    );
    assert!(out.contains(log.lines().next().unwrap()));

    // 2: the same launch with --disable-cuda-graph fails the same way: cuda-graph is ruled out.
    let o = lab.run(
        &["--probe", "--no-status", "--note", "eager mode"],
        &["--disable-cuda-graph"],
        "decode-assert",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(
        out.contains("journal: cuda-graph ruled out by attempt #2"),
        "the report says so on the spot:\n{out}"
    );
    let v = lab.attempts();
    let a2 = &v["attempts"][1];
    assert_eq!(a2["id"], 2);
    assert_eq!(a2["outcome"], "probe-failed");
    assert_eq!(a2["failure"]["class"], "device-side-assert");
    assert_eq!(a2["failure"]["phase"], "decode");
    let ro = a2["ruled_out"].as_array().unwrap();
    assert_eq!(ro.len(), 1, "{a2}");
    assert_eq!(ro[0]["cause"], "cuda-graph");
    assert_eq!(ro[0]["by_attempt"], 2);
    assert!(ro[0]["why"]
        .as_str()
        .unwrap()
        .contains("--disable-cuda-graph"));
    assert_eq!(a2["supported"].as_array().unwrap().len(), 0);
    assert_eq!(a2["notes"][0], "eager mode");

    // list, diff, show, export.
    let list = stdout(&lab.findings(&[]));
    assert!(list.contains("ruled out  cuda-graph by #2"), "{list}");
    assert!(list.contains("--disable-cuda-graph added (true)"), "{list}");
    let d = lab.findings(&["diff", "1", "2"]);
    let diff = stdout(&d);
    assert!(d.status.success(), "{}", stderr(&d));
    assert!(
        diff.contains("args        --disable-cuda-graph added (true)"),
        "{diff}"
    );
    let show = stdout(&lab.findings(&["show", "2"]));
    assert!(show.contains("ATTEMPT  #2 · probe-failed"), "{show}");
    assert!(show.contains("ruled out by attempt #2"), "{show}");
    let md = stdout(&lab.findings(&["export"]));
    for s in [
        "# Findings",
        "## Goal",
        "## Attempts",
        "## Still open",
        "## Ruled out",
    ] {
        assert!(md.contains(s), "{s}:\n{md}");
    }
    assert!(md.contains("`/models/fake-llama-7b` with sglang"), "{md}");
    assert!(
        md.contains("**#2**") && md.contains("This ruled out cuda-graph"),
        "{md}"
    );
    assert!(md.contains("- **cuda-graph**, by #2"), "{md}");
    let file = lab.dir.path().join("FINDINGS.md");
    let o = lab.findings(&[
        "export",
        "--goal",
        "GLM-5 on 8x RTX PRO 6000",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    assert!(std::fs::read_to_string(&file)
        .unwrap()
        .contains("GLM-5 on 8x RTX PRO 6000"));

    // 3: another attention backend, and the server answers: backend-selection gains support.
    let o = lab.run(
        &["--probe", "--no-status", "--stop-when-ready"],
        &["--disable-cuda-graph", "--attention-backend", "triton"],
        "ok",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(out.contains("attempt #3 ready"), "{out}");
    assert!(
        out.contains("backend-selection supported by this attempt"),
        "{out}"
    );
    let v = lab.attempts();
    let a3 = &v["attempts"][2];
    assert_eq!(a3["outcome"], "ready");
    assert_eq!(a3["probe"]["ok"], true);
    assert!(a3["probe"]["tokens"].as_u64().unwrap() >= 2);
    assert!(a3["probe"]["ttft_ms"].is_number());
    assert!(a3["failure"].is_null());
    let sup = a3["supported"].as_array().unwrap();
    assert!(
        sup.iter()
            .any(|r| r["cause"] == "backend-selection" && r["by_attempt"] == 3),
        "{a3}"
    );
    let md = stdout(&lab.findings(&["export"]));
    assert!(
        md.contains("## Supported") && md.contains("**backend-selection**, by #3"),
        "{md}"
    );
}

#[test]
fn a_stall_is_detected_and_the_group_killed() {
    let lab = Lab::new();
    let t = Instant::now();
    let o = lab.run(
        &["--stall", "2", "--grace", "2", "--no-status"],
        &[],
        "stall",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(4), "{out}\n{}", stderr(&o));
    assert!(t.elapsed() < Duration::from_secs(30));
    assert!(out.contains("attempt #1 stalled"), "{out}");
    assert!(out.contains("no output for"), "{out}");
    let v = lab.attempts();
    let a = &v["attempts"][0];
    assert_eq!(a["outcome"], "stalled");
    assert_eq!(a["failure"]["class"], "hang");
    assert_eq!(a["failure"]["phase"], "weight-load");
}

#[test]
fn children_that_ignore_sigterm_are_killed_and_none_is_left() {
    let lab = Lab::new();
    let pidfile = lab.dir.path().join("pids");
    let o = lab.run(
        &["--stall", "2", "--grace", "1", "--no-status"],
        &[],
        "ignore-term",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(4), "{out}\n{}", stderr(&o));
    assert!(out.contains("SIGKILL"), "{out}");
    let pids: Vec<i32> = std::fs::read_to_string(&pidfile)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    for p in pids {
        assert!(!alive(p), "process {p} of the launch is still alive");
    }
}

#[test]
fn sigterm_to_rosetta_reaches_the_group_and_its_code_is_ours() {
    let lab = Lab::new();
    let pidfile = lab.dir.path().join("pids");
    let j = lab.journal();
    let f = fake();
    let mut child = lab
        .cmd(&[
            "run",
            "--journal",
            &j,
            "--no-status",
            "--stall",
            "0",
            "--",
            "python3",
            &f,
        ])
        .env("FAKE_SGLANG_MODE", "ignore-term")
        .env("FAKE_SGLANG_PIDFILE", &pidfile)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pids: Vec<i32> = wait_file(&pidfile, Duration::from_secs(20))
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let code = child.wait().unwrap().code();
    assert_eq!(code, Some(128 + 15));
    for p in pids {
        assert!(!alive(p), "process {p} survived");
    }
    let v = lab.attempts();
    assert_eq!(v["attempts"][0]["outcome"], "interrupted");
}

#[test]
fn ready_is_recorded_while_the_server_serves() {
    let lab = Lab::new();
    let j = lab.journal();
    let f = fake();
    let mut child = lab
        .cmd(&["run", "--journal", &j, "--no-status", "--", "python3", &f])
        .env("FAKE_SGLANG_MODE", "ok")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    loop {
        let v = lab.attempts();
        if v["attempts"][0]["outcome"] == "ready" {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "never ready: {v}");
        std::thread::sleep(Duration::from_millis(100));
    }
    Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(128 + 2));
    let v = lab.attempts();
    assert_eq!(
        v["attempts"][0]["outcome"], "ready",
        "a Ctrl-C after ready keeps it ready"
    );
}

#[test]
fn a_command_that_cannot_start_is_a_clear_error() {
    let lab = Lab::new();
    let j = lab.journal();
    let o = lab
        .cmd(&[
            "run",
            "--journal",
            &j,
            "--no-status",
            "--",
            "/nonexistent/serve",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("/nonexistent/serve") && e.lines().count() == 1,
        "{e}"
    );
    let o = lab.findings(&["show", "9"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("#9"), "{}", stderr(&o));
}

#[test]
fn import_records_old_logs_as_attempts() {
    let lab = Lab::new();
    let ex = repo().join("examples/glm5-sm120.log");
    let o = lab.findings(&["import", ex.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("#1"), "{}", stdout(&o));
    let v = lab.attempts();
    let a = &v["attempts"][0];
    assert_eq!(a["outcome"], "crashed");
    assert_eq!(a["failure"]["class"], "device-side-assert");
    assert_eq!(a["hypotheses"][0]["cause"], "backend-selection");
    assert_eq!(a["source"], "import");
    let o = lab.findings(&["import", "/nonexistent.log"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent.log"));
}

#[test]
fn a_failed_probe_over_a_clean_log_does_not_read_ok() {
    let lab = Lab::new();
    let o = lab.run(
        &["--probe", "--no-status", "--stop-when-ready"],
        &[],
        "no-stream",
    );
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(4), "{out}\n{}", stderr(&o));
    assert!(out.contains("probe-failed"), "{out}");
    assert!(!out.contains("OK  no failure found"), "{out}");
    assert!(out.contains("NOT IN LOG"), "{out}");
}

/// What `rosetta run` adds after the child's own output, snapshotted: the attempt line, the
/// probe's verdict, the report and where it was recorded. What varies from run to run is
/// masked: the lab's folder, the probe's port, durations, the log file's time stamp, clock
/// times the fake prints, and the words of the broken stream (the OS's).
#[test]
fn run_report_after_the_child() {
    let lab = Lab::new();
    let o = lab.run(&["--probe", "--no-status"], &[], "decode-assert");
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{}", stderr(&o));
    let at = out
        .find("── rosetta: attempt #1")
        .expect("the attempt line");
    let ours = out[at..].replace(&lab.dir.path().display().to_string(), "<lab>");
    let masks = [
        (r"127\.0\.0\.1:\d+", "127.0.0.1:<port>"),
        (r"after \d+(?:\.\d+)?s\b", "after <secs>"),
        (r"attempt-1-\d{8}T\d{6}Z", "attempt-1-<stamp>"),
        (r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?", "<time>"),
        (r"\(the stream broke: [^)]*\)", "(the stream broke: <why>)"),
    ];
    let ours = masks.iter().fold(ours, |t, (re, with)| {
        regex::Regex::new(re)
            .unwrap()
            .replace_all(&t, *with)
            .into_owned()
    });
    assert!(ours.contains("died in decode"), "{ours}");
    insta::assert_snapshot!(ours);
}
