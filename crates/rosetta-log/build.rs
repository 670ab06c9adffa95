//! Embeds the log vocabulary (`kb/vocab/**/*.toml`: signals, milestones, phase words,
//! line shapes, scanner words) into the binary, so that it needs no files at run time,
//! and extracts the scanner's literal words from its patterns here, once per build
//! (`src/literals.rs`, shared with the library), instead of at every start.

#[path = "src/literals.rs"]
#[allow(dead_code)]
mod literals;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let vocab = manifest.join("../../kb/vocab");
    println!("cargo:rerun-if-changed={}", vocab.display());
    let mut files = Vec::new();
    walk(&vocab, &mut files);
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    std::fs::write(
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
            .join("vocab_literals.rs"),
        literal_code(&files),
    )
    .expect("OUT_DIR is writable");
    let mut code = String::from(
        "/// Built-in vocabulary files: (path relative to kb/vocab, text).\npub const EMBEDDED: &[(&str, &str)] = &[\n",
    );
    for f in files {
        let rel = f
            .strip_prefix(&vocab)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().unwrap_or(f.clone());
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            abs.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_vocab.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}

/// The entries of one kind, in load order, a later entry with the same id replacing an
/// earlier one (as `Vocabulary::from_files` does): their patterns.
fn entries(docs: &[toml::Table], kind: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for doc in docs {
        let Some(list) = doc.get(kind).and_then(|v| v.as_array()) else {
            continue;
        };
        for e in list {
            let id = e.get("id").map(|v| match v.as_str() {
                Some(s) => s.to_string(),
                None => v.to_string(),
            });
            let pats: Vec<String> = e
                .get("patterns")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let id = id.unwrap_or_default();
            match out.iter().position(|(x, _)| *x == id) {
                Some(i) => out[i] = (id, pats),
                None => out.push((id, pats)),
            }
        }
    }
    out
}

/// `SIGNAL_LITERALS` and `MILESTONE_LITERALS` of the built-in vocabulary.
fn literal_code(files: &[PathBuf]) -> String {
    let docs: Vec<toml::Table> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
            text.parse::<toml::Table>()
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        })
        .collect();
    let signals: Vec<Vec<String>> = entries(&docs, "signal").into_iter().map(|e| e.1).collect();
    let mut extra: Vec<String> = entries(&docs, "banner")
        .iter()
        .map(|e| literals::join_patterns(&e.1))
        .collect();
    if let Some((_, p)) = entries(&docs, "shape")
        .into_iter()
        .find(|(id, _)| id == "wrong-output")
    {
        extra.push(literals::join_patterns(&p));
    }
    let milestone_groups: Vec<Vec<String>> = entries(&docs, "milestone")
        .into_iter()
        .map(|e| e.1)
        .collect();
    let milestones: Vec<String> = milestone_groups
        .iter()
        .map(|p| literals::join_patterns(p))
        .collect();
    let list = |name: &str, words: Vec<String>| {
        let mut s = format!("/// Extracted at build time.\npub const {name}: &[&str] = &[\n");
        for w in words {
            let _ = writeln!(s, "    {w:?},");
        }
        s.push_str("];\n");
        s
    };
    let required = |name: &str, pats: Vec<String>| {
        let mut s = format!(
            "/// Extracted at build time: required literals per pattern.\npub const {name}: &[Option<&[&str]>] = &[\n"
        );
        for p in pats {
            match literals::needles(&p) {
                Some(w) => {
                    let _ = writeln!(s, "    Some(&{w:?}),");
                }
                None => s.push_str("    None,\n"),
            }
        }
        s.push_str("];\n");
        s
    };
    // One entry per pattern: the sets compile and prefilter pattern by pattern.
    let flat = |groups: &[Vec<String>]| groups.iter().flatten().cloned().collect::<Vec<_>>();
    required("SIGNAL_REQUIRED", flat(&signals))
        + &required("MILESTONE_REQUIRED", flat(&milestone_groups))
        + &list(
            "SIGNAL_LITERALS",
            literals::signal_literals(&signals, &extra),
        )
        + &list(
            "MILESTONE_LITERALS",
            literals::milestone_literals(&milestones),
        )
}
