//! Bad input: a report or a one-line error naming the file with exit code 2;
//! never a panic, a hang or a memory blow-up.

use super::*;

fn one_line_error(out: &Output, needle: &str) {
    assert_eq!(
        out.status.code(),
        Some(2),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(err.contains(needle), "names {needle}: {err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn a_missing_file_is_a_one_line_error() {
    let out = run(&["diagnose", "/no/such/server.log"]);
    one_line_error(&out, "/no/such/server.log");
    // The reason once (the newcomer's pass, issue 12 section 11, saw it twice).
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("os error").count(), 1, "{err}");
    let out = run(&["diagnose", "--kb", "/no/such/rules", "/no/such/server.log"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("os error").count(), 1, "{err}");
}

#[test]
fn a_directory_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().to_str().unwrap().to_string();
    one_line_error(&run(&["diagnose", &p]), &p);
}

#[test]
fn an_empty_file_reports_no_failure() {
    let v = json(&run_stdin(&["diagnose", "--format", "json"], b""));
    assert!(v["failure"].is_null());
}

#[test]
fn random_bytes_are_not_a_log() {
    let mut x: u64 = 0x9E3779B97F4A7C15;
    let bytes: Vec<u8> = (0..4_000_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    // Not a log: a one-line error naming the input, exit code 2.
    one_line_error(
        &run_stdin(&["diagnose", "--format", "json"], &bytes),
        "does not look like a log",
    );
}

#[test]
fn invalid_utf8_is_read_lossily() {
    let mut log =
        b"RuntimeError: CUDA error: an illegal memory access \xff\xfe was encountered\n".to_vec();
    log.extend_from_slice(b"\xc3\x28 more \x80\n");
    let v = json(&run_stdin(&["diagnose", "--format", "json"], &log));
    assert_eq!(v["failure"]["class"], "illegal-memory-access");
}

#[test]
fn a_truncated_gzip_reports_what_was_read_and_exits_2() {
    let mut text = Vec::new();
    for i in 0..20_000 {
        text.extend_from_slice(
            format!(
                "[2026-01-01 10:00:00 TP0] Decode batch, #running-req: {i}, cuda graph: True\n"
            )
            .as_bytes(),
        );
    }
    text.extend_from_slice(b"RuntimeError: CUDA error: an illegal memory access was encountered\n");
    let gz = super::diagnose::gzip_bytes(&text);
    let cut = &gz[..gz.len() / 2];
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("server.log.gz");
    std::fs::write(&p, cut).unwrap();
    let out = run(&["diagnose", "--format", "json", p.to_str().unwrap()]);
    // A one-line error naming the file, exit 2, and the report of what was read.
    one_line_error(&out, "server.log.gz");
    assert!(String::from_utf8_lossy(&out.stderr).contains("truncated"));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the report is JSON");
    let note = v["inputs"][0]["note"].as_str().unwrap_or("");
    assert!(note.contains("truncated"), "{v}");
    assert!(v["inputs"][0]["lines"].as_u64().unwrap_or(0) > 0, "{v}");
}

#[test]
fn a_compressed_file_cut_before_its_first_line_is_a_one_line_error() {
    let gz = super::diagnose::gzip_bytes(b"RuntimeError: CUDA error: out of memory\n");
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("tiny.log.gz");
    std::fs::write(&p, &gz[..10]).unwrap();
    let out = run(&["diagnose", p.to_str().unwrap()]);
    one_line_error(&out, "tiny.log.gz");
    assert!(out.stdout.is_empty(), "no report of nothing");
}

#[test]
fn a_300_mb_line_is_cut_not_buffered() {
    let mut data = b"INFO start\n".to_vec();
    data.extend(std::iter::repeat_n(b'x', 300 << 20));
    data.extend_from_slice(
        b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n",
    );
    let v = json(&run_stdin(&["diagnose", "--format", "json"], &data));
    assert_eq!(v["failure"]["class"], "illegal-memory-access");
    assert_eq!(v["failure"]["line"], 3);
    assert_eq!(v["inputs"][0]["lines"], 3);
}

#[test]
fn a_storm_of_progress_bars_collapses() {
    let mut line = Vec::new();
    for i in 0..200_000 {
        line.extend_from_slice(
            format!(
                "Loading safetensors checkpoint shards: {:3}% Completed | {}/163\r",
                i % 100,
                i % 163
            )
            .as_bytes(),
        );
    }
    line.extend_from_slice(b"\nRuntimeError: CUDA error: out of memory\n");
    let v = json(&run_stdin(&["diagnose", "--format", "json"], &line));
    assert_eq!(v["failure"]["class"], "gpu-oom");
    assert_eq!(v["failure"]["line"], 2);
}

#[test]
fn a_broken_rule_file_names_file_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad-rule.toml");
    std::fs::write(
        &p,
        "id = \"bad-rule\"\ncause = \"gpu-melted\"\nweight = 0.5\nsummary = \"x\"\n",
    )
    .unwrap();
    let out = run_stdin(&["diagnose", "--kb", dir.path().to_str().unwrap()], b"hi\n");
    one_line_error(&out, "bad-rule.toml");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("kernel-bug"),
        "lists valid causes"
    );
}

#[test]
fn a_broken_env_file_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("env.json");
    std::fs::write(&p, "{not json").unwrap();
    one_line_error(
        &run_stdin(&["diagnose", "--env", p.to_str().unwrap()], b"hi\n"),
        "env.json",
    );
}

#[test]
fn a_closed_pipe_on_stdout_and_stderr_is_no_panic() {
    // `rosetta diagnose x.gz 2>&1 | head -1`: the reader goes away, and both the report and
    // the truncation notice meet a closed pipe. That ends the run quietly, never with a panic
    // (exit 101).
    let gz =
        super::diagnose::gzip_bytes(&b"RuntimeError: CUDA error: out of memory\n".repeat(2000));
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("server.log.gz");
    std::fs::write(&p, &gz[..gz.len() - 8]).unwrap();
    // Both read ends close as soon as the child starts, before it writes a byte.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rosetta"))
        .args(["diagnose", p.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    let status = child.wait().unwrap();
    assert_ne!(status.code(), Some(101), "{status:?}");
    assert!(status.code().is_some(), "killed by a signal: {status:?}");
}
