//! Mechanisms a newcomer's first hour broke (issue 12, points 1-3 and 13) and the arch
//! inferred from indirect evidence (issue 8): restart loops, several unrelated inputs,
//! context lines that are not evidence, empty, binary and unknown input.

use super::*;

fn example() -> String {
    std::fs::read_to_string(repo().join("examples/glm5-sm120.log")).unwrap()
}

/// The example's second launch (from its second `server_args=` line to the end).
fn second_run() -> Vec<String> {
    let lines: Vec<String> = example().lines().map(String::from).collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("server_args="))
        .collect();
    lines[*starts.last().unwrap()..].to_vec()
}

/// Moves every `HH:MM:SS` of a line forward by `secs`.
fn shift(line: &str, secs: u32) -> String {
    let b = line.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < b.len() {
        let d = |k: usize| b.get(i + k).is_some_and(|c| c.is_ascii_digit());
        if d(0)
            && d(1)
            && b.get(i + 2) == Some(&b':')
            && d(3)
            && d(4)
            && b.get(i + 5) == Some(&b':')
            && d(6)
            && d(7)
        {
            let n = |k: usize| line[i + k..i + k + 2].parse::<u32>().unwrap();
            let t = n(0) * 3600 + n(3) * 60 + n(6) + secs;
            out.push_str(&format!(
                "{:02}:{:02}:{:02}",
                t / 3600 % 24,
                t / 60 % 60,
                t % 60
            ));
            i += 8;
        } else {
            let c = line[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn the_example_without_its_gpu_names_still_blames_the_backend() {
    // Lines 2 and 4 name the GPU; what is left says Blackwell and 95 GiB per GPU.
    let text: String = example()
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1 && *i != 3)
        .map(|(_, l)| format!("{l}\n"))
        .collect();
    assert!(!text.contains("RTX PRO"));
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        text.as_bytes(),
    ));
    let top = &v["hypotheses"][0];
    assert_eq!(top["cause"], "backend-selection", "{top}");
    let ev = top["evidence"].to_string();
    assert!(ev.contains("sm_120") && ev.contains("inferred"), "{ev}");
    assert!(
        ev.contains("rosetta env --format json"),
        "says how to make it certain: {ev}"
    );
}

/// The example's machine lines once (its GPU line), then its second launch `runs` times,
/// each `every` seconds after the one before.
fn restart_loop(runs: u32, every: u32) -> String {
    let mut log: String = example()
        .lines()
        .take(4)
        .map(|l| format!("{l}\n"))
        .collect();
    let launch = second_run();
    for k in 0..runs {
        for l in &launch {
            log.push_str(&shift(l, k * every));
            log.push('\n');
        }
    }
    log
}

#[test]
fn a_restart_loop_diagnoses_the_last_run_in_full() {
    let launch = second_run();
    let log = restart_loop(10, 600);
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "loop.log", &log);
    let v = json(&run(&["diagnose", "--format", "json", &p]));
    let f = &v["failure"];
    let per_run = launch.len() as u64;
    assert!(
        f["line"].as_u64().unwrap() > 9 * per_run,
        "the last run: {f}"
    );
    assert_eq!(f["rank"], 2, "rank of the last run kept: {f}");
    assert!(
        f["surfaced"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("device-side assert"),
        "{f}"
    );
    assert!(
        f["sync_point"]
            .as_str()
            .unwrap_or("")
            .contains("process_batch_result_decode"),
        "{f}"
    );
    let notes = v["notes"].to_string();
    assert!(notes.contains("10 runs"), "{notes}");
    assert_eq!(v["hypotheses"][0]["cause"], "backend-selection");
}

#[test]
fn a_long_restart_loop_keeps_the_last_runs_steps_and_a_short_timeline() {
    // 120 launches: the earlier runs must not take the room of the last run's steps.
    let launch = second_run();
    let log = restart_loop(120, 300);
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "loop.log", &log);
    let v = json(&run(&["diagnose", "--format", "json", &p]));
    let last_start = 4 + 119 * launch.len() as u64;
    let steps: Vec<String> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["line"].as_u64().unwrap() > last_start)
        .map(|e| e["label"].as_str().unwrap().to_string())
        .collect();
    for want in [
        "weight load",
        "CUDA graph capture",
        "ready",
        "decode: device-side-assert",
    ] {
        assert!(steps.iter().any(|s| s == want), "{want} in {steps:?}");
    }
    assert!(
        v["notes"].to_string().contains("120 runs"),
        "{}",
        v["notes"]
    );
    let out = run(&["diagnose", &p]);
    let text = String::from_utf8_lossy(&out.stdout);
    let timeline: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("TIMELINE"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert!(
        timeline[0].contains("runs 1-119: the same failure"),
        "{timeline:?}"
    );
    assert!(timeline.len() <= 8, "{timeline:?}");
    // Every format folds the earlier runs the same way.
    let md = run(&["diagnose", "--format", "markdown", &p]);
    let md = String::from_utf8_lossy(&md.stdout);
    let line = md.lines().find(|l| l.starts_with("**Timeline")).unwrap();
    assert!(
        line.starts_with("**Timeline:** runs 1-119: the same failure"),
        "{line}"
    );
    assert!(line.len() < 1500, "{line}");
    let html = run(&["diagnose", "--format", "html", &p]);
    let html = String::from_utf8_lossy(&html.stdout);
    assert!(html.contains("runs 1-119: the same failure"));
    assert!(html.matches("<li").count() < 40, "{html}");
}

#[test]
fn byte_identical_copies_are_runs_too() {
    let launch = second_run().join("\n") + "\n";
    let log = launch.repeat(300);
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        log.as_bytes(),
    ));
    let notes = v["notes"].to_string();
    assert!(notes.contains("300 runs"), "{notes}");
    assert_eq!(v["failure"]["rank"], 2);
}

#[test]
fn a_log_pasted_twice_keeps_every_earlier_run() {
    // Two copies of the two-launch example: four runs, OOM, assert, OOM, assert. The
    // first copy's last exception must not swallow the second copy's banner and launch
    // (a raw exception's message ends at the next stamped line), or the third run merges
    // into the second and vanishes from the timeline.
    let log = example().repeat(2);
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        log.as_bytes(),
    ));
    let failed: Vec<(String, u64)> = v["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["failed"] == true)
        .map(|e| {
            (
                e["label"].as_str().unwrap().to_string(),
                e["line"].as_u64().unwrap(),
            )
        })
        .collect();
    let n = example().lines().count() as u64;
    let labels: Vec<&str> = failed.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "earlier run: gpu-oom",
            "earlier run: device-side-assert",
            "earlier run: gpu-oom",
            "decode: device-side-assert"
        ],
        "{failed:?}"
    );
    assert_eq!(failed[2].1, failed[0].1 + n, "{failed:?}");
    assert!(v["notes"].to_string().contains("4 runs"), "{}", v["notes"]);
}

#[test]
fn two_unrelated_logs_each_keep_their_failure() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "node1.log",
        "[2026-03-01 10:00:00] INFO starting\n[2026-03-01 10:00:05] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n",
    );
    let b = write(
        dir.path(),
        "node2.log",
        "[2026-03-01 11:00:00] INFO starting\n[2026-03-01 11:00:09] RuntimeError: CUDA error: an illegal memory access was encountered\n",
    );
    let v = json(&run(&["diagnose", "--format", "json", &a, &b]));
    assert_eq!(v["failure"]["class"], "gpu-oom");
    assert!(v["failure"]["file"]
        .as_str()
        .unwrap()
        .ends_with("node1.log"));
    let others = v["other_inputs"].as_array().expect("other_inputs");
    assert_eq!(others.len(), 1, "{others:?}");
    assert_eq!(others[0]["class"], "illegal-memory-access");
    assert_eq!(others[0]["line"], 2);
    assert!(others[0]["file"].as_str().unwrap().ends_with("node2.log"));
    let text = stdout(&run(&["diagnose", "--color", "never", &a, &b]));
    assert!(text.contains("node2.log:2"), "{text}");
    assert!(text.contains("holds the first root error"), "{text}");
}

/// The newcomer's pass (issue 12, section 5): with two inputs, NOTES (`line 7`), the phase
/// reason (`the same error at line 163`) and WARNINGS carried no file, and the TIMELINE
/// ran node2's steps on after the example's decode as if they followed it. Section 2:
/// only text said which input holds the first root error.
#[test]
fn with_two_inputs_every_line_reference_carries_its_file() {
    let ex = repo().join("examples/glm5-sm120.log");
    let ex = ex.to_str().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let b = write(
        dir.path(),
        "node2.log",
        "[2026-03-01 11:00:00] Load weight end. avail mem=20.00 GB\n\
         [2026-03-01 11:00:01] WARNING something odd on node two\n\
         [2026-03-01 11:00:09] RuntimeError: CUDA error: an illegal memory access was encountered\n",
    );
    let text = stdout(&run(&["diagnose", "--color", "never", ex, &b]));
    let section = |name: &str| -> String {
        text.split(&format!("\n{name}"))
            .nth(1)
            .and_then(|rest| rest.split("\n\n").next())
            .unwrap_or_default()
            .to_string()
    };
    // NOTES: every `line N` names its file.
    let notes = section("NOTES");
    assert!(notes.contains("glm5-sm120.log:82"), "{notes}");
    assert!(!notes.contains("line 82"), "{notes}");
    // The phase reason.
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("the same error at ") && words.contains("glm5-sm120.log:163 passes through"),
        "{text}"
    );
    // WARNINGS: each row starts with file:line.
    let warnings = section("WARNINGS");
    for row in warnings.lines().skip(1).filter(|l| l.contains('×')) {
        assert!(row.trim_start().contains(".log:"), "{row}");
    }
    assert!(warnings.contains("node2.log:2"), "{warnings}");
    // TIMELINE: each file's steps are led by its name, the example's before node2's, and
    // node2's own failure ends its steps.
    let timeline = section("TIMELINE");
    let (a, n2) = (
        timeline.find("glm5-sm120.log:").expect("example's steps"),
        timeline.find("node2.log:").expect("node2's steps"),
    );
    assert!(a < n2, "{timeline}");
    assert!(
        timeline[n2..].contains("illegal-memory-access ✗"),
        "{timeline}"
    );
    assert!(
        !timeline[..n2].contains("illegal-memory-access"),
        "{timeline}"
    );
    // JSON: timeline entries carry their file, and the report says which holds the root.
    let v = json(&run(&["diagnose", "--format", "json", ex, &b]));
    for e in v["timeline"].as_array().unwrap() {
        assert!(
            e["file"].as_str().is_some_and(|f| f.ends_with(".log")),
            "{e}"
        );
    }
    assert!(v["first_root_error_in"]
        .as_str()
        .unwrap()
        .ends_with("glm5-sm120.log"));
    for w in v["warnings"].as_array().unwrap() {
        assert!(w["file"].as_str().is_some(), "{w}");
    }
    // Markdown and HTML say which input holds the first root error too.
    for format in ["markdown", "html"] {
        let out = stdout(&run(&["diagnose", "--format", format, ex, &b]));
        assert!(
            out.contains("holds the first root error"),
            "{format}: {out}"
        );
        assert!(out.contains("node2.log:"), "{format}: {out}");
    }
    // One input: no file names anywhere in the line references.
    let v = json(&run(&["diagnose", "--format", "json", ex]));
    assert!(v.get("first_root_error_in").is_none());
    assert!(v["timeline"][0].get("file").is_none());
}

#[test]
fn a_started_server_line_is_context_not_evidence() {
    let ex = repo().join("examples/glm5-sm120.log");
    let v = json(&run(&[
        "diagnose",
        "--format",
        "json",
        ex.to_str().unwrap(),
    ]));
    for h in v["hypotheses"].as_array().unwrap() {
        for e in h["evidence"].as_array().unwrap() {
            let t = e["text"].as_str().unwrap();
            assert!(!t.contains("Started server process"), "{}: {t}", h["cause"]);
        }
    }
}

#[test]
fn empty_input_says_it_is_empty() {
    let out = run_stdin(&["diagnose", "--color", "never"], b"");
    let text = stdout(&out);
    assert!(text.contains("empty") && !text.starts_with("OK"), "{text}");
    let v = json(&run_stdin(&["diagnose", "--format", "json"], b""));
    assert_eq!(v["no_failure"]["reason"], "empty");
}

#[test]
fn binary_input_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let p = write(dir.path(), "core.dump", "");
    std::fs::write(&p, bytes).unwrap();
    let out = run(&["diagnose", &p]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("core.dump") && err.contains("does not look like a log"),
        "{err}"
    );
}

#[test]
fn an_unknown_error_is_not_ok() {
    let log = "INFO loading\nINFO step 1\nERROR frobnicator 7 lost its quux\nINFO giving up\n";
    let out = run_stdin(&["diagnose", "--color", "never"], log.as_bytes());
    let text = stdout(&out);
    assert!(!text.starts_with("OK"), "{text}");
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        log.as_bytes(),
    ));
    if v["failure"].is_null() {
        assert_eq!(v["no_failure"]["reason"], "unknown-pattern");
        assert!(v["no_failure"]["lines"].to_string().contains("frobnicator"));
    }
    // A log with no error-looking line at all is fine.
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        b"INFO all good\n",
    ));
    assert_eq!(v["no_failure"]["reason"], "clean");
}

/// Lines `from..=to` of the bundled example, which dies in decode at line 162.
fn example_head(from: usize, to: usize) -> String {
    example()
        .lines()
        .skip(from - 1)
        .take(to + 1 - from)
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn a_log_that_stops_inside_start_up_is_unfinished_not_ok() {
    // Cut during CUDA graph capture: the step began and nothing finishes it.
    let cut = example_head(81, 140);
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        cut.as_bytes(),
    ));
    assert!(v["failure"].is_null(), "{v}");
    assert_eq!(v["no_failure"]["reason"], "unfinished", "{v}");
    let e = &v["no_failure"]["ends_during"];
    assert_eq!(e["phase"], "graph-capture", "{e}");
    assert_eq!(e["finished"], false, "{e}");
    for format in ["text", "markdown", "html"] {
        let out = stdout(&run_stdin(
            &["diagnose", "--color", "never", "--format", format],
            cut.as_bytes(),
        ));
        assert!(
            !out.contains("No failure found") && !out.starts_with("OK"),
            "{format}: {out}"
        );
        assert!(
            out.contains("the log ends during graph-capture"),
            "{format}: {out}"
        );
    }
    // Cut right after the process groups came up: start-up is still open.
    let cut = example_head(1, 20);
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        cut.as_bytes(),
    ));
    assert_eq!(v["no_failure"]["reason"], "unfinished", "{v}");
    assert_eq!(v["no_failure"]["ends_during"]["phase"], "comm-init");
    assert_eq!(v["no_failure"]["ends_during"]["finished"], true);
    // A script that loads its weights and then prints what it generated is clean.
    let script = "Loading checkpoint shards: 100%|##########| 4/4 [00:05<00:00]\n\
                  The capital of France is Paris.\n";
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        script.as_bytes(),
    ));
    assert_eq!(v["no_failure"]["reason"], "clean", "{v}");
    // A server that became ready and served is clean too.
    let ready = format!(
        "{}[2026-02-24 10:09:30] The server is fired up and ready to roll!\n",
        example_head(81, 140)
    );
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        ready.as_bytes(),
    ));
    assert_eq!(v["no_failure"]["reason"], "clean", "{v}");
}

#[test]
fn another_inputs_failure_is_never_an_earlier_run_of_this_one() {
    // The second log's failure has no year in its time, so the inputs sort by file: put
    // it first. The example's own earlier run (gpu-oom at line 73) must stay its own.
    let dir = tempfile::tempdir().unwrap();
    let other = write(
        dir.path(),
        "vllm.log",
        "INFO 03-01 10:00:00 api_server.py:1] vLLM API server version 0.9.1\n\
         NCCL WARN socketStartConnect: Connect to 10.1.2.8<45678> failed : Software caused connection abort\n\
         torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error\n",
    );
    let glm = write(dir.path(), "glm5.log", &example());
    for order in [[&other, &glm], [&glm, &other]] {
        let v = json(&run(&["diagnose", "--format", "json", order[0], order[1]]));
        let earlier: Vec<(String, String, u64)> = v["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["label"].as_str().unwrap().starts_with("earlier run"))
            .map(|e| {
                (
                    e["label"].as_str().unwrap().to_string(),
                    e["file"].as_str().unwrap_or_default().to_string(),
                    e["line"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(earlier.len(), 1, "{earlier:?}");
        assert_eq!(earlier[0].0, "earlier run: gpu-oom", "{earlier:?}");
        assert!(earlier[0].1.ends_with("glm5.log"), "{earlier:?}");
        assert_eq!(earlier[0].2, 73, "{earlier:?}");
        assert_eq!(v["failure"]["class"], "device-side-assert");
    }
}

#[test]
fn a_five_megabyte_line_quotes_its_error() {
    // A request's payload printed on the line that also carries the error: the quote
    // keeps the line's head and the error's words, in the JSON and on screen.
    let log = format!(
        "[2026-02-24 10:00:00] server_args=ServerArgs(model_path='m')\n[2026-02-24 10:05:00] request payload: {} RuntimeError: CUDA error: an illegal memory access was encountered\n",
        "x".repeat(5_000_000)
    );
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        log.as_bytes(),
    ));
    let m = v["failure"]["message"].as_str().unwrap();
    assert!(m.chars().count() <= 600, "{}", m.len());
    assert!(m.starts_with("request payload: x"), "{m}");
    assert!(
        m.ends_with("an illegal memory access was encountered"),
        "{m}"
    );
    let out = run_stdin(&["diagnose"], log.as_bytes());
    let text = String::from_utf8_lossy(&out.stdout);
    let failure: String = text
        .lines()
        .take(6)
        .flat_map(str::split_whitespace)
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        failure.contains("illegal memory access was encountered"),
        "{failure}"
    );
}

#[test]
fn a_message_split_over_two_lines_is_read_and_matched_whole() {
    // vLLM writes some checks over two source lines; the log keeps the line break.
    let text = "ValueError: The output_size of gate's and up's weight = 96 is not\n            divisible by weight quantization block_n = 128.\n";
    let v = json(&run_stdin(
        &["diagnose", "--format", "json"],
        text.as_bytes(),
    ));
    let failure = &v["failure"];
    assert_eq!(failure["class"], "config-error", "{failure}");
    assert_eq!(failure["phase"], "weight-load", "{failure}");
    let top = &v["hypotheses"][0];
    assert_eq!(top["cause"], "bad-launch-args", "{top}");
    // The rule's evidence is the failure's own line, though its words span two.
    assert_eq!(top["evidence"][0]["line"], 1, "{top}");
}
