//! Embeds the log vocabulary (`kb/vocab/**/*.toml`: signals, milestones, phase words,
//! line shapes, scanner words) into the binary, so that it needs no files at run time.

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
