//! Compiles the case library embedded in the binary: every labelled case under
//! `corpus/cases/` (not `../shared/cases`, the evaluation set) is read with
//! `rosetta-log` exactly as `diagnose` reads a user's log, and only its labels
//! and signature (the masked failure block) are kept, as JSON (not compressed:
//! inflating it cost more start-up than its megabyte of binary is worth).
//! Whole logs are never embedded. Beside it, each signature's term counts
//! (what `vector.rs` makes of it with the default features), so that a start
//! does not tokenise the whole library again (`vector::pack_counts`).

#[path = "src/case.rs"]
#[allow(dead_code)]
mod case;
#[path = "src/signature.rs"]
#[allow(dead_code)]
mod signature;
#[path = "src/vector.rs"]
#[allow(dead_code)]
mod vector;

use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../../corpus/cases");
    println!("cargo:rerun-if-changed={}", root.display());
    println!("cargo:rerun-if-changed=src/signature.rs");
    println!("cargo:rerun-if-changed=src/case.rs");
    println!("cargo:rerun-if-changed=src/vector.rs");
    let dirs = case::case_dirs(&root)
        .unwrap_or_else(|e| panic!("cannot read the case corpus {}: {e}", root.display()));
    let mut cases = Vec::new();
    for dir in dirs {
        let expect = dir.join("expect.toml");
        let labels = case::read_labels(&expect)
            .unwrap_or_else(|e| panic!("bad case labels {}: {e}", expect.display()));
        if labels.class == rosetta_schema::FailureClass::None {
            // A clean run is a control, not a report anyone would be pointed to.
            continue;
        }
        let log = dir.join("log.txt");
        let facts = rosetta_log::read_logs(
            std::slice::from_ref(&log),
            rosetta_log::Vocabulary::embedded(),
            &[],
            &[],
        )
        .unwrap_or_else(|e| panic!("cannot read case log {}: {e}", log.display()));
        let sig = signature::of(&facts);
        if sig.is_empty() {
            continue;
        }
        let id = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_else(|| panic!("case folder name is not UTF-8: {}", dir.display()))
            .to_string();
        cases.push(case::Case {
            id,
            labels,
            sig: sig.to_text(),
        });
    }
    let json = serde_json::to_vec(&cases).expect("the case library serialises");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("library.json"), json).expect("write the case library");
    let counts: Vec<_> = cases
        .iter()
        .map(|c| vector::counts(&c.signature(), vector::Features::default()))
        .collect();
    std::fs::write(out.join("terms.bin"), vector::pack_counts(&counts))
        .expect("write the term counts");
}
