//! Snapshots of what a person or a program reads: the bundled example's report
//! in every format (text, Markdown, JSON, HTML), and a rule-file error. Review
//! changes with `cargo insta review`.

use super::*;

fn example() -> String {
    repo().join("examples/glm5-sm120.log").display().to_string()
}

#[test]
fn example_text_report() {
    let out = run(&["diagnose", "--color", "never", &example()]);
    assert!(out.status.success());
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

#[test]
fn example_markdown_report() {
    let out = run(&["diagnose", "--format", "markdown", &example()]);
    assert!(out.status.success());
    insta::assert_snapshot!(String::from_utf8(out.stdout).unwrap());
}

/// The example's report in `format`, with the checkout's path as `<repo>`
/// where it names the input file as given (JSON does; HTML does not).
fn example_as(format: &str) -> String {
    let out = run(&["diagnose", "--format", format, &example()]);
    assert!(out.status.success(), "{format}");
    let text = String::from_utf8(out.stdout).unwrap();
    text.replace(&repo().display().to_string(), "<repo>")
}

#[test]
fn example_json_report() {
    let text = example_as("json");
    assert!(
        text.contains("<repo>/examples/glm5-sm120.log"),
        "the input is named"
    );
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v.is_object());
    insta::assert_snapshot!(text);
}

#[test]
fn example_html_report() {
    let text = example_as("html");
    assert!(text.contains("<html") || text.contains("<!doctype") || text.contains("<!DOCTYPE"));
    insta::assert_snapshot!(text);
}

#[test]
fn rule_file_error_message() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("typo-rule.toml");
    std::fs::write(
        &p,
        "id = \"typo-rule\"\ncause = \"kernel-bug\"\nweight = 0.5\nsumary = \"x\"\n",
    )
    .unwrap();
    let out = run_stdin(&["diagnose", "--kb", dir.path().to_str().unwrap()], b"hi\n");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).replace(dir.path().to_str().unwrap(), "<dir>");
    insta::assert_snapshot!(err);
}
