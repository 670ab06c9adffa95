//! Snapshots of what a person reads: the text and Markdown reports of the
//! bundled example, and a rule-file error. Review changes with `cargo insta review`.

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
