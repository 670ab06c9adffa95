//! The tests every store must pass. Each takes a fresh `Place`.

use crate::Place;
use rosetta_journal::render::{self, Format};
use rosetta_journal::rulings::tests_for;
use rosetta_journal::{
    Attempt, FailureRef, Fingerprint, HypothesisRec, ModelRef, Note, Outcome, ProbeResult, Source,
    Verdict,
};
use rosetta_kb::KnowledgeBase;
use rosetta_schema::{Cause, FailureClass, Phase};
use std::collections::BTreeMap;
use std::sync::OnceLock;

fn kb() -> &'static KnowledgeBase {
    static KB: OnceLock<KnowledgeBase> = OnceLock::new();
    KB.get_or_init(|| KnowledgeBase::embedded().unwrap())
}

/// A hypothesis carried by a real rule of the knowledge base, with that rule's tests.
fn hyp(cause: Cause, rule: &str, confidence: f64) -> HypothesisRec {
    let h = rosetta_report::Hypothesis {
        cause,
        rule: rule.into(),
        confidence,
        summary: format!("{cause} via {rule}"),
        why: None,
        evidence: vec![],
        experiments: vec![],
        references: vec![],
        also_rules: vec![],
        cases: vec![],
    };
    HypothesisRec {
        cause,
        confidence,
        rule: rule.into(),
        summary: h.summary.clone(),
        tests: tests_for(kb(), &h),
    }
}

fn decode_assert() -> Option<FailureRef> {
    Some(FailureRef {
        class: FailureClass::DeviceSideAssert,
        phase: Phase::Decode,
        rank: Some(0),
    })
}

fn base(extra: &[(&str, &str)]) -> Attempt {
    let mut log_args: BTreeMap<String, String> = [
        ("model_path", "/models/glm-5"),
        ("tp_size", "8"),
        ("attention_backend", "flashinfer"),
        ("disable_cuda_graph", "False"),
        ("random_seed", "1234"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    for (k, v) in extra {
        log_args.insert(k.to_string(), v.to_string());
    }
    let mut command: Vec<String> = ["python3", "-m", "sglang.launch_server", "--tp", "8"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (k, v) in extra {
        command.push(format!("--{}", k.replace('_', "-")));
        if *v != "True" {
            command.push(v.to_string());
        }
    }
    Attempt {
        id: 0,
        source: Source::Run,
        started: jiff::Timestamp::now().to_string(),
        ended: None,
        cwd: Some("/work".into()),
        command,
        args: None,
        log_args,
        env: [("CUDA_VISIBLE_DEVICES".to_string(), "0,1".to_string())]
            .into_iter()
            .collect(),
        fingerprint: Fingerprint {
            packages: [("torch".to_string(), "2.9.1".to_string())]
                .into_iter()
                .collect(),
            driver: Some("580.82".into()),
            ..Fingerprint::default()
        },
        model: Some(ModelRef {
            path: "/models/glm-5".into(),
            config_hash: Some("0123456789abcdef".into()),
        }),
        outcome: Outcome::Running,
        exit_code: None,
        failure: None,
        hypotheses: vec![],
        probe: None,
        log_path: None,
        report: None,
        notes: vec![],
    }
}

fn failed(mut a: Attempt) -> Attempt {
    a.outcome = Outcome::ProbeFailed;
    a.exit_code = Some(1);
    a.failure = decode_assert();
    a.ended = Some(jiff::Timestamp::now().to_string());
    a.hypotheses = vec![
        hyp(Cause::BackendSelection, "async-fault-backend", 0.5),
        hyp(Cause::KernelBug, "async-fault-kernel-defect", 0.3),
        hyp(Cause::CudaGraph, "async-fault-under-graph-replay", 0.2),
    ];
    a.probe = Some(ProbeResult {
        ok: false,
        url: "http://127.0.0.1:30000/v1/chat/completions".into(),
        tokens: 1,
        died_in: Some(Phase::Decode),
        error: Some("connection closed".into()),
        ..ProbeResult::default()
    });
    a
}

/// Begins and finishes an attempt as `rosetta run` does; returns its id and rulings.
fn run(j: &mut rosetta_journal::Journal, a: Attempt) -> (i64, Vec<rosetta_journal::Ruling>) {
    let mut started = a.clone();
    started.outcome = Outcome::Running;
    started.failure = None;
    started.hypotheses.clear();
    let id = j.begin(&started).unwrap();
    let mut a = a;
    a.id = id;
    let r = j.finish(&a).unwrap();
    (id, r)
}

pub fn migrations_are_versioned(p: Place) {
    drop(p.open());
    let mut j = p.open();
    assert!(j.attempts().unwrap().is_empty());
    // A journal from a newer rosetta is refused with a clear message.
    match &p {
        Place::Sqlite(d) => {
            let c = rusqlite::Connection::open(d.path().join("journal.sqlite")).unwrap();
            c.execute(
                "UPDATE rosetta_meta SET value = '99' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        }
        Place::Postgres(url) => {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            c.execute(
                "UPDATE rosetta_meta SET value = '99' WHERE key = 'schema_version'",
                &[],
            )
            .unwrap();
        }
    }
    let e = rosetta_journal::Journal::open(&p.spec())
        .err()
        .expect("a newer schema is refused")
        .to_string();
    assert!(e.contains("99") && e.contains("upgrade rosetta"), "{e}");
}

pub fn an_attempt_reads_back(p: Place) {
    let mut j = p.open();
    let mut a = failed(base(&[]));
    a.notes = vec![Note {
        at: "2026-05-20T10:00:00Z".into(),
        text: "first try".into(),
    }];
    a.log_path = Some("/tmp/attempt-1.log".into());
    let (id, rulings) = run(&mut j, a.clone());
    assert_eq!(id, 1);
    assert!(rulings.is_empty());
    let back = j.attempt(id).unwrap();
    a.id = id;
    assert_eq!(back, a);
    let (id2, _) = run(&mut j, base(&[]));
    assert_eq!(id2, 2, "ids count up from 1");
    let all = j.attempts().unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[1].outcome, Outcome::Running);
}

pub fn notes_attach_to_attempts(p: Place) {
    let mut j = p.open();
    let (id, _) = run(&mut j, failed(base(&[])));
    j.add_note(id, "the assert names index_select").unwrap();
    j.add_note(id, "same on the other node").unwrap();
    let a = j.attempt(id).unwrap();
    let texts: Vec<&str> = a.notes.iter().map(|n| n.text.as_str()).collect();
    assert_eq!(
        texts,
        ["the assert names index_select", "same on the other node"]
    );
    assert!(j.add_note(7, "x").is_err());
}

pub fn missing_attempt_is_a_clear_error(p: Place) {
    let mut j = p.open();
    run(&mut j, failed(base(&[])));
    let e = j.attempt(5).err().unwrap().to_string();
    assert!(e.contains("#5") && e.contains("from 1 to 1"), "{e}");
}

pub fn same_failure_after_the_change_rules_out(p: Place) {
    let mut j = p.open();
    run(&mut j, failed(base(&[])));
    // The relaunch adds --disable-cuda-graph; sglang draws a new random seed.
    let (id, rulings) = run(
        &mut j,
        failed(base(&[
            ("disable_cuda_graph", "True"),
            ("random_seed", "99"),
        ])),
    );
    assert_eq!(id, 2);
    assert_eq!(rulings.len(), 1, "{rulings:?}");
    let r = &rulings[0];
    assert_eq!(
        (r.cause, r.verdict, r.by_attempt, r.against_attempt),
        (Cause::CudaGraph, Verdict::RuledOut, 2, 1)
    );
    assert!(r.why.contains("--disable-cuda-graph"), "{}", r.why);
    assert!(r.why.contains("failed the same way"), "{}", r.why);
    assert_eq!(j.rulings().unwrap(), rulings);
}

pub fn a_different_failure_supports(p: Place) {
    let mut j = p.open();
    run(&mut j, failed(base(&[])));
    // Another attention backend and the server answers: backend-selection gains support.
    let mut b = base(&[("attention_backend", "triton")]);
    b.outcome = Outcome::Ready;
    b.probe = Some(ProbeResult {
        ok: true,
        url: "http://127.0.0.1:30000/v1/chat/completions".into(),
        tokens: 8,
        ttft_ms: Some(40),
        ..ProbeResult::default()
    });
    let (_, rulings) = run(&mut j, b);
    let causes: Vec<(Cause, Verdict)> = rulings.iter().map(|r| (r.cause, r.verdict)).collect();
    assert!(
        causes.contains(&(Cause::BackendSelection, Verdict::Supported)),
        "{rulings:?}"
    );
    assert!(rulings.iter().all(|r| r.verdict == Verdict::Supported));
}

pub fn an_unexplained_difference_rules_nothing(p: Place) {
    let mut j = p.open();
    run(&mut j, failed(base(&[])));
    // Two changes, one of which no experiment proposes: nothing can be concluded.
    let (_, r) = run(
        &mut j,
        failed(base(&[
            ("disable_cuda_graph", "True"),
            ("chunked_prefill_size", "4096"),
        ])),
    );
    assert!(r.is_empty(), "{r:?}");
    // The same change on another torch: not exactly the experiment either.
    let mut c = failed(base(&[("disable_cuda_graph", "True")]));
    c.fingerprint
        .packages
        .insert("torch".into(), "2.10.0".into());
    let (_, r) = run(&mut j, c);
    assert!(r.is_empty(), "{r:?}");
    // The same launch again is a repeat, not a test.
    let (_, r) = run(&mut j, failed(base(&[])));
    assert!(r.is_empty(), "{r:?}");
}

pub fn ready_without_probe_says_nothing_about_decode(p: Place) {
    let mut j = p.open();
    run(&mut j, failed(base(&[])));
    let mut b = base(&[("disable_cuda_graph", "True")]);
    b.outcome = Outcome::Ready;
    let (_, r) = run(&mut j, b);
    assert!(
        r.is_empty(),
        "a decode failure needs a request to show again: {r:?}"
    );
}

pub fn concurrent_writers_share_one_journal(p: Place) {
    drop(p.open());
    let threads = 4;
    let each = 8;
    std::thread::scope(|s| {
        for t in 0..threads {
            let p = &p;
            s.spawn(move || {
                let mut j = p.open();
                for i in 0..each {
                    let a = if i % 2 == 0 {
                        failed(base(&[(
                            "max_running_requests",
                            &format!("{}", t * 100 + i),
                        )]))
                    } else {
                        failed(base(&[("disable_cuda_graph", "True")]))
                    };
                    run(&mut j, a);
                    if i == 3 {
                        j.add_note(1, &format!("writer {t}")).unwrap();
                    }
                }
            });
        }
    });
    let mut j = p.open();
    let all = j.attempts().unwrap();
    assert_eq!(all.len(), threads * each);
    let ids: Vec<i64> = all.iter().map(|a| a.id).collect();
    let want: Vec<i64> = (1..=(threads * each) as i64).collect();
    assert_eq!(ids, want);
    assert!(all.iter().all(|a| a.outcome == Outcome::ProbeFailed));
    assert!(all.iter().all(|a| a.hypotheses.len() == 3));
    assert_eq!(all[0].notes.len(), threads);
}

pub fn findings_render_from_the_store(p: Place) {
    let mut j = p.open();
    run(&mut j, failed(base(&[])));
    run(
        &mut j,
        failed(base(&[
            ("disable_cuda_graph", "True"),
            ("random_seed", "7"),
        ])),
    );
    let all = j.attempts().unwrap();
    let rulings = j.rulings().unwrap();

    let mut out = Vec::new();
    render::list(&all, &rulings, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("ruled out  cuda-graph by #2"), "{text}");
    assert!(
        text.contains("--disable-cuda-graph False -> True"),
        "{text}"
    );

    let mut out = Vec::new();
    render::list(&all, &rulings, Format::Json, &mut out).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let a2 = &v["attempts"][1];
    for key in [
        "id",
        "outcome",
        "command",
        "failure",
        "hypotheses",
        "ruled_out",
        "supported",
    ] {
        assert!(a2.get(key).is_some(), "{key} missing in {a2}");
    }
    assert_eq!(a2["failure"]["class"], "device-side-assert");
    assert_eq!(a2["failure"]["phase"], "decode");
    assert_eq!(a2["failure"]["rank"], 0);
    assert_eq!(a2["hypotheses"][0]["cause"], "backend-selection");
    assert!(a2["hypotheses"][0]["confidence"].is_number());
    assert_eq!(a2["ruled_out"][0]["cause"], "cuda-graph");
    assert_eq!(a2["ruled_out"][0]["by_attempt"], 2);
    assert!(a2["ruled_out"][0]["why"]
        .as_str()
        .unwrap()
        .contains("same way"));
    assert_eq!(v["attempts"][0]["ruled_out"].as_array().unwrap().len(), 0);

    let d = rosetta_journal::diff::diff(&all[0], &all[1]);
    let mut out = Vec::new();
    render::diff_view(&d, Format::Text, &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("--disable-cuda-graph False -> True"),
        "{text}"
    );

    let mut out = Vec::new();
    render::export_markdown(&all, &rulings, None, &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    for section in ["## Goal", "## Attempts", "## Still open", "## Ruled out"] {
        assert!(md.contains(section), "{section} missing:\n{md}");
    }
    assert!(
        md.contains("**#2**") && md.contains("This ruled out cuda-graph"),
        "{md}"
    );
    assert!(md.contains("- **cuda-graph**, by #2"), "{md}");
    assert!(md.contains("- **backend-selection**"), "{md}");
}

pub fn command_args_and_the_servers_own_values(p: Place) {
    let mut j = p.open();
    // A graph-capture OOM; the relaunch lowers the memory fraction that the first
    // command left to the server's heuristic (0.88 in its printed args).
    let oom = |a: Attempt| {
        let mut a = failed(a);
        a.failure = Some(FailureRef {
            class: FailureClass::GpuOom,
            phase: Phase::GraphCapture,
            rank: None,
        });
        a.hypotheses = vec![
            hyp(Cause::MemoryBudget, "memory-fraction-too-high", 0.6),
            hyp(Cause::CudaGraph, "graph-capture-failed", 0.4),
        ];
        a
    };
    let mut a = oom(base(&[("mem_fraction_static", "0.88")]));
    a.args = Some(BTreeMap::new());
    run(&mut j, a);
    let mut b = oom(base(&[("mem_fraction_static", "0.8")]));
    b.args = Some(
        [("mem_fraction_static".to_string(), "0.8".to_string())]
            .into_iter()
            .collect(),
    );
    let (_, r) = run(&mut j, b);
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(
        (r[0].cause, r[0].verdict),
        (Cause::MemoryBudget, Verdict::RuledOut)
    );
    assert!(
        r[0].why.contains("--mem-fraction-static added (0.8)"),
        "{}",
        r[0].why
    );
    // An env var set on the command line is a change like a flag: NCCL_P2P_DISABLE=1 is no
    // experiment of these hypotheses, so nothing is concluded.
    let mut c = oom(base(&[("mem_fraction_static", "0.8")]));
    c.args = Some(
        [("mem_fraction_static".to_string(), "0.8".to_string())]
            .into_iter()
            .collect(),
    );
    c.env.insert("NCCL_P2P_DISABLE".into(), "1".into());
    let (_, r) = run(&mut j, c);
    assert!(r.is_empty(), "{r:?}");
}
