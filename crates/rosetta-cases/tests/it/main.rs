//! The case library over real files: logs that resemble nothing (`tests/unrelated`,
//! written by us, and the clean H200 probe run) find no similar report; every
//! corpus case finds itself first in the full library and never once its batch
//! is left out; a team's folder adds cases; masking and signatures survive any
//! bytes.

use proptest::prelude::*;
use rosetta_cases::case::batch_of;
use rosetta_cases::{signature, Cases, Library, Mode, Tuning};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn facts(path: &Path) -> rosetta_log::LogFacts {
    rosetta_log::read_logs(
        &[path.to_path_buf()],
        rosetta_log::Vocabulary::embedded(),
        &[],
        &[],
    )
    .unwrap()
}

fn cases() -> Cases {
    Cases {
        library: Library::embedded().unwrap(),
        mode: Mode::Blend,
        tuning: Tuning::default(),
    }
}

#[test]
fn logs_that_resemble_nothing_get_no_similar_report_and_no_new_cause() {
    let kb = rosetta_kb::KnowledgeBase::embedded().unwrap();
    let mut logs: Vec<PathBuf> =
        std::fs::read_dir(repo().join("crates/rosetta-cases/tests/unrelated"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .collect();
    logs.push(repo().join("corpus/cases/h2-008/log.txt"));
    assert!(logs.len() >= 10);
    let cases = cases();
    for log in logs {
        let f = rosetta_log::read_logs(
            std::slice::from_ref(&log),
            rosetta_log::Vocabulary::embedded(),
            &kb.literals(),
            &[],
        )
        .unwrap();
        let mut report = rosetta_report::build(&kb, &f, None);
        let before = report.hypotheses.clone();
        cases.apply(&f, &mut report);
        assert!(
            report.similar.is_empty(),
            "{}: {:?}",
            log.display(),
            report.similar
        );
        if f.failure.is_none() {
            assert_eq!(report.hypotheses, before, "{}", log.display());
        }
    }
}

#[test]
fn every_corpus_case_finds_itself_first_and_never_without_its_batch() {
    let full = Library::embedded().unwrap();
    let mut without: std::collections::HashMap<String, Library> = std::collections::HashMap::new();
    let mut n = 0;
    for dir in rosetta_cases::case::case_dirs(&repo().join("corpus/cases")).unwrap() {
        let id = dir.file_name().unwrap().to_string_lossy().into_owned();
        let Some(case) = full.cases().iter().find(|c| c.id == id) else {
            continue; // the clean run is not in the library
        };
        let sig = signature::of(&facts(&dir.join("log.txt")));
        assert_eq!(
            sig.to_text(),
            case.sig,
            "{id}: build.rs cut another signature"
        );
        let hits = full.search(&sig);
        let top = hits[0].score;
        assert!(top > 0.999, "{id}: {top}");
        assert!(
            hits.iter()
                .take_while(|h| h.score >= top - 1e-4)
                .any(|h| h.case.id == id),
            "{id}"
        );
        let lobo = without.entry(batch_of(&id).to_string()).or_insert_with(|| {
            let mut l = Library::from_cases(full.cases().to_vec());
            l.exclude(&[batch_of(&id)]);
            l
        });
        assert!(
            lobo.search(&sig)
                .iter()
                .all(|h| h.case.batch() != batch_of(&id)),
            "{id}"
        );
        n += 1;
    }
    assert!(n > 200, "{n}");
}

fn write_case(dir: &Path, name: &str, log: &str, expect: &str) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("log.txt"), log).unwrap();
    std::fs::write(d.join("expect.toml"), expect).unwrap();
}

const TEAM_LOG: &str = "Traceback (most recent call last):\n  File \"/opt/acme/serve.py\", line 12, in main\n    acme_quantum_loader.attach(shard)\nRuntimeError: acme_quantum_loader: shard 7 has a frobnicated header checksum\n";
const TEAM_EXPECT: &str = "source = \"https://tracker.example.invalid/ACME-42\"\nclass = \"missing-weights\"\nphase = \"weight-load\"\ncause = \"weight-layout\"\nalso = []\nfix = \"Re-export the shards with the acme exporter 2.1 or newer.\"\n";

#[test]
fn a_team_folder_adds_its_cases_and_they_are_found() {
    let tmp = tempfile::tempdir().unwrap();
    write_case(tmp.path(), "acme-001", TEAM_LOG, TEAM_EXPECT);
    std::fs::create_dir_all(tmp.path().join("not-a-case")).unwrap();
    let mut lib = Library::embedded().unwrap();
    let before = lib.cases().len();
    assert_eq!(lib.add_dir(tmp.path()).unwrap(), 1);
    assert_eq!(lib.add_dir(tmp.path()).unwrap(), 1, "same id replaces");
    assert_eq!(lib.cases().len(), before + 1);
    let log = tmp.path().join("query.log");
    std::fs::write(&log, TEAM_LOG.replace("shard 7", "shard 3")).unwrap();
    let hits = lib.search(&signature::of(&facts(&log)));
    assert_eq!(hits[0].case.id, "acme-001");
    assert!(hits[0].score > 0.9, "{}", hits[0].score);
}

#[test]
fn a_bad_team_case_is_a_one_line_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    write_case(
        tmp.path(),
        "acme-002",
        TEAM_LOG,
        &TEAM_EXPECT.replace("weight-layout", "gremlins"),
    );
    let err = Library::embedded()
        .unwrap()
        .add_dir(tmp.path())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("acme-002") && err.contains("expect.toml"),
        "{err}"
    );
    assert!(err.contains("gremlins"), "{err}");
    assert!(!err.contains('\n'), "{err}");
    let missing = Library::empty()
        .add_dir(&tmp.path().join("nope"))
        .unwrap_err()
        .to_string();
    assert!(missing.contains("nope"), "{missing}");
}

proptest! {
    #[test]
    fn masking_any_text_is_bounded_and_stable(s in "\\PC{0,400}") {
        let m = signature::mask(&s);
        prop_assert!(m.chars().count() <= signature::MAX_LINE_CHARS);
        prop_assert!(!m.contains("  "));
    }

    #[test]
    fn any_bytes_give_a_bounded_signature(bytes in proptest::collection::vec(any::<u8>(), 0..4000)) {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), &bytes).unwrap();
        // Bytes that are not text are refused (a one-line error); the rest get a signature.
        let Ok(f) = rosetta_log::read_logs(&[tmp.path().to_path_buf()], rosetta_log::Vocabulary::embedded(), &[], &[]) else {
            return Ok(());
        };
        let sig = signature::of(&f);
        prop_assert!(sig.lines.len() <= signature::MAX_LINES);
        prop_assert_eq!(signature::Signature::from_text(&sig.to_text()), sig.clone());
        let _ = cases().library.search(&sig);
    }
}
