//! Snapshots of what a person or a program reads: the bundled example's report
//! in every format (text, Markdown, JSON, HTML), `rosetta env` on the fat-binary
//! fixtures in its three formats, the journal's views, and a rule-file error. Review
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

/// A config the transformers release asked for does not know yet (a model type newer than
/// it), with a context beyond its positions, for an arch named by the user.
const NEW_MODEL_CONFIG: &str = r#"{
  "architectures": ["GlmMoeDsaForCausalLM"],
  "model_type": "glm_moe_dsa",
  "hidden_size": 6144,
  "num_attention_heads": 64,
  "num_hidden_layers": 78,
  "max_position_embeddings": 202752,
  "rope_theta": 1000000,
  "torch_dtype": "bfloat16"
}"#;

fn config_as(format: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.json");
    std::fs::write(&cfg, NEW_MODEL_CONFIG).unwrap();
    let cfg = cfg.display().to_string();
    let out = rosetta(
        &[
            "config",
            &cfg,
            "--transformers",
            "4.57.0",
            "--context-length",
            "262144",
            "--gpu",
            "sm_120",
            "--format",
            format,
        ],
        dir.path(),
        &[("COLUMNS", "100"), ("NO_COLOR", "1")],
    );
    // Findings exit 1; a report is written either way.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{format}: {}",
        stderr(&out)
    );
    stdout(&out).replace(&cfg, "<config.json>")
}

#[test]
fn config_text_report() {
    insta::assert_snapshot!(config_as("text"));
}

#[test]
fn config_markdown_report() {
    insta::assert_snapshot!(config_as("markdown"));
}

#[test]
fn config_json_report() {
    let text = config_as("json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(v.is_object());
    insta::assert_snapshot!(text);
}

/// `diagnose --each --format jsonl`: one JSON object a line, each naming its file.
#[test]
fn each_jsonl_reports() {
    let dir = tempfile::tempdir().unwrap();
    let oom = dir.path().join("oom.log");
    std::fs::write(
        &oom,
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.11 GiB\n",
    )
    .unwrap();
    let oom = oom.display().to_string();
    let out = run(&["diagnose", "--each", "--format", "jsonl", &example(), &oom]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&repo().display().to_string(), "<repo>")
        .replace(&oom, "<oom.log>");
    assert_eq!(text.lines().count(), 2, "one line per input");
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert!(v.get("file").is_some(), "{line}");
    }
    insta::assert_snapshot!(text);
}

/// The journal's views of one attempt imported from the example log: the list, the attempt,
/// and the FINDINGS.md export. Times (the file's) and the journal's path vary, so they are
/// masked.
fn findings_as(args: &[&str]) -> String {
    journal_view(false, args)
}

/// The same with a second attempt imported after the first: the example log relaunched with
/// another attention backend (what `findings diff` compares).
fn findings_pair_as(args: &[&str]) -> String {
    journal_view(true, args)
}

fn journal_view(second: bool, args: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let journal = dir.path().join("journal.sqlite").display().to_string();
    let log = dir.path().join("glm5-sm120.log");
    std::fs::copy(repo().join("examples/glm5-sm120.log"), &log).unwrap();
    let mut import = vec![log.display().to_string()];
    if second {
        let text = std::fs::read_to_string(&log).unwrap();
        let relaunched = text.replace("attention_backend='nsa'", "attention_backend='triton'");
        assert_ne!(text, relaunched, "the example names its attention backend");
        let path = dir.path().join("relaunch.log");
        std::fs::write(&path, relaunched).unwrap();
        import.push(path.display().to_string());
    }
    let log = import[0].clone();
    let env = [("COLUMNS", "100"), ("NO_COLOR", "1")];
    let mut cmd = vec!["findings", "--journal", &journal, "import"];
    cmd.extend(import.iter().map(String::as_str));
    let imported = rosetta(&cmd, dir.path(), &env);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let mut full = vec!["findings", "--journal", &journal];
    full.extend_from_slice(args);
    let out = rosetta(&full, dir.path(), &env);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    mask_times(
        &stdout(&out)
            .replace(&journal, "<journal>")
            .replace(&log, "<log>")
            .replace(&dir.path().display().to_string(), "<dir>"),
    )
}

/// `2026-12-02 11:47`, `2026-12-02T11:47:03Z` and the like become `<time>`.
fn mask_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    while i < b.len() {
        let date = b.len() >= i + 16
            && digits(&b[i..i + 4])
            && b[i + 4] == b'-'
            && digits(&b[i + 5..i + 7])
            && b[i + 7] == b'-'
            && digits(&b[i + 8..i + 10])
            && (b[i + 10] == b' ' || b[i + 10] == b'T')
            && digits(&b[i + 11..i + 13])
            && b[i + 13] == b':'
            && digits(&b[i + 14..i + 16]);
        if date {
            let mut j = i + 16;
            while j < b.len()
                && (b[j].is_ascii_digit() || matches!(b[j], b':' | b'.' | b'Z' | b'+'))
            {
                j += 1;
            }
            out.push_str("<time>");
            i = j;
        } else {
            let ch = text[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[test]
fn findings_list_text() {
    insta::assert_snapshot!(findings_as(&["list"]));
}

#[test]
fn findings_list_json() {
    let text = findings_as(&["list", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["attempts"].as_array().map(Vec::len), Some(1));
    insta::assert_snapshot!(text);
}

#[test]
fn findings_show_text() {
    insta::assert_snapshot!(findings_as(&["show", "1"]));
}

#[test]
fn findings_export_markdown() {
    insta::assert_snapshot!(findings_as(&["export"]));
}

#[test]
fn findings_list_markdown() {
    insta::assert_snapshot!(findings_as(&["list", "--format", "markdown"]));
}

#[test]
fn findings_show_json() {
    let text = findings_as(&["show", "1", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["attempts"][0]["id"], 1, "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn findings_show_markdown() {
    insta::assert_snapshot!(findings_as(&["show", "1", "--format", "markdown"]));
}

#[test]
fn findings_diff_text() {
    let text = findings_pair_as(&["diff", "1", "2"]);
    assert!(text.contains("--attention-backend nsa -> triton"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn findings_diff_json() {
    let text = findings_pair_as(&["diff", "1", "2", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["args"][0]["after"], "triton", "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn findings_diff_markdown() {
    insta::assert_snapshot!(findings_pair_as(&[
        "diff", "1", "2", "--format", "markdown"
    ]));
}

/// `rosetta env` on the fat-binary fixtures, judged against sm_120, in `format`. No
/// `nvidia-smi` is reachable (an empty PATH), so the GPU part reads the same on every machine;
/// the checkout's path and the scan's duration are masked.
fn env_as(format: &str) -> String {
    let empty = tempfile::tempdir().unwrap();
    let fixtures = repo().join("crates/rosetta-env/tests/fixtures");
    let out = std::process::Command::new(bin())
        .args(["env", "--scan"])
        .arg(&fixtures)
        .args(["--gpu", "sm_120", "--color", "never", "--format", format])
        .env("PATH", empty.path())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100")
        .output()
        .expect("rosetta runs");
    assert!(
        out.status.success(),
        "{format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout)
        .unwrap()
        .replace(&repo().display().to_string(), "<repo>");
    let ms = regex::Regex::new(r#""elapsed_ms": \d+"#).unwrap();
    let secs = regex::Regex::new(r"\d+\.\d\d s\b").unwrap();
    let text = ms.replace_all(&text, r#""elapsed_ms": 0"#);
    secs.replace_all(&text, "<elapsed>").into_owned()
}

#[test]
fn env_text_report() {
    let text = env_as("text");
    assert!(text.contains("has no code for sm_120"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn env_markdown_report() {
    let text = env_as("markdown");
    assert!(text.contains("| sm_120 |"), "{text}");
    insta::assert_snapshot!(text);
}

#[test]
fn env_json_report() {
    let text = env_as("json");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["targets"][0]["arch"], "sm_120");
    assert_eq!(v["libraries"].as_array().map(Vec::len), Some(5));
    insta::assert_snapshot!(text);
}
