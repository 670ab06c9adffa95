//! `diagnose --each` and `--format jsonl`: one report per input, the same report
//! `diagnose FILE` gives, in the order of the files, an unreadable file
//! reported without losing the others; and no stdin hint when stdin is a pipe.

use super::*;

fn logs() -> Vec<String> {
    [
        "examples/glm5-sm120.log",
        "corpus/cases/h2-001/log.txt",
        "corpus/cases/h2-002/log.txt",
        "corpus/cases/h2-003/log.txt",
    ]
    .iter()
    .map(|p| repo().join(p).display().to_string())
    .collect()
}

fn alone(file: &str) -> serde_json::Value {
    json(&run(&["diagnose", "--format", "json", file]))
}

#[test]
fn jsonl_writes_one_line_per_file_with_the_report_it_gets_alone() {
    let files = logs();
    // Repeats too: many files, few cores, the order must still be the files'.
    let mut args = vec!["diagnose", "--format", "jsonl"];
    let many: Vec<&str> = files.iter().chain(&files).map(String::as_str).collect();
    args.extend(&many);
    let out = run(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), many.len(), "{text}");
    for (line, file) in lines.iter().zip(&many) {
        let v: serde_json::Value = serde_json::from_str(line).expect("each line is JSON");
        assert_eq!(v["file"], *file);
        assert_eq!(v["report"], alone(file), "{file}");
    }
}

#[test]
fn each_text_report_is_the_one_diagnose_gives_alone_under_a_header() {
    let files = logs();
    let out = run(&["diagnose", "--each", &files[0], &files[1]]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut expected = String::new();
    for (i, f) in files[..2].iter().enumerate() {
        if i > 0 {
            expected.push('\n');
        }
        expected.push_str(&format!("==> {f} <==\n"));
        expected.push_str(&stdout(&run(&["diagnose", f])));
    }
    assert_eq!(stdout(&out), expected);
}

#[test]
fn each_json_is_one_array_of_file_and_report() {
    let files = logs();
    let v = json(&run(&[
        "diagnose", "--each", "--format", "json", &files[1], &files[2],
    ]));
    let a = v.as_array().expect("an array");
    assert_eq!(a.len(), 2);
    assert_eq!(a[1]["file"], files[2].as_str());
    assert_eq!(a[1]["report"], alone(&files[2]));
}

#[test]
fn an_unreadable_file_is_reported_and_the_others_still_are() {
    let files = logs();
    let missing = repo().join("no/such/file.log").display().to_string();
    let out = run(&[
        "diagnose", "--format", "jsonl", &files[1], &missing, &files[2],
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[1]["file"], missing.as_str());
    assert!(lines[1]["error"].as_str().is_some_and(|e| !e.is_empty()));
    assert!(lines[1].get("report").is_none());
    assert_eq!(lines[2]["report"], alone(&files[2]));
    assert!(
        stderr(&out).contains("no/such/file.log"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn each_refuses_html_which_is_one_page() {
    let files = logs();
    let out = run(&["diagnose", "--each", "--format", "html", &files[1]]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("html"), "{}", stderr(&out));
}

#[test]
fn piped_stdin_gets_no_terminal_hint() {
    let log = std::fs::read(&logs()[1]).unwrap();
    let out = run_stdin(&["diagnose"], &log);
    assert!(out.status.success());
    assert!(!stderr(&out).contains("Ctrl-D"), "{}", stderr(&out));
    let out = run_stdin(&["diagnose", "--format", "jsonl"], &log);
    let v: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["file"], "-");
}
