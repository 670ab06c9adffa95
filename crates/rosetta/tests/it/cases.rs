//! Similar reports end to end: `similar` in the JSON contract, a corpus log
//! finding its own case (and not once its batch is left out with
//! `ROSETTA_CASES_EXCLUDE`), logs that resemble nothing getting none, and a
//! team's `--cases DIR` (found; a bad label is exit 2 naming the file).

use super::*;

fn json_env(args: &[&str], env: &[(&str, &str)]) -> serde_json::Value {
    let out = Command::new(bin())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("rosetta runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn corpus_log(id: &str) -> String {
    repo()
        .join("corpus/cases")
        .join(id)
        .join("log.txt")
        .display()
        .to_string()
}

#[test]
fn a_corpus_log_finds_its_own_report_first_with_the_contract_fields() {
    let v = json_env(
        &["diagnose", "--format", "json", &corpus_log("rx-001")],
        &[],
    );
    let similar = v["similar"].as_array().unwrap();
    assert!(!similar.is_empty() && similar.len() <= 5, "{similar:?}");
    let first = &similar[0];
    assert_eq!(first["case"], "rx-001");
    assert_eq!(
        first["source"],
        "https://github.com/pytorch/torchtitan/issues/853"
    );
    assert_eq!(first["cause"], "comm-setup");
    for key in ["class", "phase", "fix", "score"] {
        assert!(!first[key].is_null(), "{key} missing: {first}");
    }
    let scores: Vec<f64> = similar
        .iter()
        .map(|s| s["score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "best first: {scores:?}"
    );
    assert!(scores[0] > 0.99, "{scores:?}");
}

#[test]
fn leaving_its_batch_out_keeps_a_case_out_of_its_own_library() {
    let v = json_env(
        &["diagnose", "--format", "json", &corpus_log("rx-001")],
        &[("ROSETTA_CASES_EXCLUDE", "rx")],
    );
    for s in v["similar"].as_array().unwrap() {
        assert!(!s["case"].as_str().unwrap().starts_with("rx-"), "{s}");
    }
    let rules = json_env(
        &["diagnose", "--format", "json", &corpus_log("rx-001")],
        &[
            ("ROSETTA_CASES_EXCLUDE", "rx"),
            ("ROSETTA_CASES_MODE", "rules"),
        ],
    );
    assert!(rules["hypotheses"]
        .as_array()
        .unwrap()
        .iter()
        .all(|h| h["rule"] != "similar-reports" && h.get("cases").is_none()));
}

#[test]
fn logs_that_resemble_nothing_get_an_empty_similar() {
    let dir = repo().join("crates/rosetta-cases/tests/unrelated");
    let mut logs: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path().display().to_string())
        .collect();
    logs.push(corpus_log("h2-008"));
    for log in &logs {
        let v = json_env(&["diagnose", "--format", "json", log], &[]);
        assert_eq!(v["similar"], serde_json::json!([]), "{log}");
    }
    let clean = run_stdin(
        &["diagnose", "--format", "json", "-"],
        b"INFO starting\nINFO model loaded\nINFO done: 128 tokens\n",
    );
    assert_eq!(json(&clean)["similar"], serde_json::json!([]));
}

#[test]
fn a_team_cases_folder_is_searched_and_a_bad_label_is_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let case = tmp.path().join("acme-001");
    std::fs::create_dir_all(&case).unwrap();
    let log = "Traceback (most recent call last):\n  File \"/opt/acme/serve.py\", line 12, in main\n    acme_quantum_loader.attach(shard)\nRuntimeError: acme_quantum_loader: shard 7 has a frobnicated header checksum\n";
    std::fs::write(case.join("log.txt"), log).unwrap();
    std::fs::write(
        case.join("expect.toml"),
        "source = \"https://tracker.example.invalid/ACME-42\"\nclass = \"missing-weights\"\nphase = \"weight-load\"\ncause = \"weight-layout\"\nfix = \"Re-export the shards with the acme exporter 2.1.\"\n",
    )
    .unwrap();
    let query = tmp.path().join("query.log");
    std::fs::write(&query, log.replace("shard 7", "shard 2")).unwrap();
    let dir = tmp.path().display().to_string();
    let q = query.display().to_string();
    let v = json_env(&["diagnose", "--format", "json", "--cases", &dir, &q], &[]);
    assert_eq!(v["similar"][0]["case"], "acme-001", "{}", v["similar"]);
    let causes: Vec<&str> = v["hypotheses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["cause"].as_str().unwrap())
        .collect();
    assert!(
        causes[..3.min(causes.len())].contains(&"weight-layout"),
        "{causes:?}"
    );
    let text = run(&["diagnose", "--cases", &dir, &q]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(
        text.contains("SIMILAR REPORTS") && text.contains("tracker.example.invalid/ACME-42"),
        "{text}"
    );

    std::fs::write(
        case.join("expect.toml"),
        "source = \"x\"\nclass = \"gremlins\"\n",
    )
    .unwrap();
    let out = run(&["diagnose", "--cases", &dir, &q]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("expect.toml") && err.lines().count() == 1,
        "{err}"
    );
}
