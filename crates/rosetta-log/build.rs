//! Embeds the log vocabulary (`kb/vocab/**/*.toml`: signals, milestones, phase words,
//! line shapes, scanner words) into the binary, so that it needs no files at run time,
//! and extracts the scanner's literal words from its patterns here, once per build
//! (`src/literals.rs`, shared with the library), instead of at every start. Each file
//! is embedded as JSON as well: the same data reads several times faster than TOML.

#[path = "src/literals.rs"]
#[allow(dead_code)]
mod literals;

#[path = "build_vocab.rs"]
#[allow(dead_code)]
mod build_vocab;

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let vocab = manifest.join("../../kb/vocab");
    let files = build_vocab::watched_files(&vocab);
    let docs = build_vocab::parse(&files);
    std::fs::write(
        PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
            .join("vocab_literals.rs"),
        literal_code(&docs),
    )
    .expect("OUT_DIR is writable");
    let mut code = String::from(
        "/// Built-in vocabulary files: (path relative to kb/vocab, text, the same as JSON).\npub const EMBEDDED: &[(&str, &str, Option<&str>)] = &[\n",
    );
    for (f, doc) in files.iter().zip(&docs) {
        let rel = f
            .strip_prefix(&vocab)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().unwrap_or(f.clone());
        let json = match serde_json::to_string(doc) {
            Ok(j) => format!("Some({j:?})"),
            Err(_) => "None".to_string(),
        };
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?}), {json}),",
            abs.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_vocab.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}

/// `SIGNAL_LITERALS` and `MILESTONE_LITERALS` of the built-in vocabulary.
fn literal_code(docs: &[toml::Table]) -> String {
    let words = build_vocab::vocab_words(docs);
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
    required("SIGNAL_REQUIRED", flat(&words.signals))
        + &required("MILESTONE_REQUIRED", flat(&words.milestones))
        + &list("SIGNAL_LITERALS", words.signal_literals)
        + &list("MILESTONE_LITERALS", words.milestone_literals)
}
