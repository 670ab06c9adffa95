//! Compiles the case library embedded in the binary: every labelled case under
//! `corpus/cases/` (not `../shared/cases`, the evaluation set) is read with
//! `rosetta-log` exactly as `diagnose` reads a user's log, and only its labels
//! and signature (the masked failure block) are kept. Whole logs are never
//! embedded. Three files, each in the form a start can use without parsing:
//! - `library.rs`: the cases as Rust statics (`include!`d by `library.rs`);
//!   parsing the same as JSON was a tenth of `diagnose`'s start-up on a small log;
//! - `index.bin`: the library's TF-IDF index, weighed (`vector::Index::pack`),
//!   for the library as it is embedded;
//! - `terms.bin`: each signature's term counts (`vector::pack_counts`), for a
//!   library that changes (`--cases DIR`, left-out batches) and is weighed again
//!   without tokenising every signature.

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
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("library.rs"), statics(&cases)).expect("write the case library");
    let counts: Vec<_> = cases
        .iter()
        .map(|c| vector::counts(&c.signature(), vector::Features::default()))
        .collect();
    std::fs::write(out.join("terms.bin"), vector::pack_counts(&counts))
        .expect("write the term counts");
    let index = vector::Index::from_counts(&counts, vector::Features::default())
        .pack()
        .expect("the default index packs");
    std::fs::write(out.join("index.bin"), index).expect("write the index");
}

/// The cases as a Rust expression of type `&[Embedded]` (`Debug` of a `str` is a valid
/// Rust string literal; of a vocabulary word, its variant's name).
fn statics(cases: &[case::Case]) -> String {
    use std::fmt::Write;
    let mut src = String::from("&[\n");
    for c in cases {
        let l = &c.labels;
        let also: Vec<String> = l.also.iter().map(|a| format!("Cause::{a:?}")).collect();
        writeln!(
            src,
            "Embedded {{ id: {:?}, source: {:?}, class: FailureClass::{:?}, phase: Phase::{:?}, \
             cause: Cause::{:?}, also: &[{}], fix: {:?}, sig: {:?} }},",
            c.id,
            l.source,
            l.class,
            l.phase,
            l.cause,
            also.join(", "),
            l.fix,
            c.sig
        )
        .expect("writing to a String");
    }
    src.push(']');
    src
}
