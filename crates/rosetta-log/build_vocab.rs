//! What the build scripts of `rosetta-log` and `rosetta-kb` read out of the vocabulary
//! files (`kb/vocab/**/*.toml`), the way `Vocabulary::from_files` reads them: shared
//! through `#[path]`, so that the literals embedded at build time and the scanner's word
//! lists come from one reading. The including script declares `mod literals`.

use std::path::{Path, PathBuf};

/// Every `*.toml` file under `dir`, in the order the vocabulary loads them.
pub fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// The vocabulary files under `dir`, in load order, each watched by cargo (the build
/// script runs again when one changes or one is added).
pub fn watched_files(dir: &Path) -> Vec<PathBuf> {
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files = Vec::new();
    walk(dir, &mut files);
    for f in &files {
        println!("cargo:rerun-if-changed={}", f.display());
    }
    files
}

/// The files, parsed; a file that does not parse stops the build, naming it.
pub fn parse(files: &[PathBuf]) -> Vec<toml::Table> {
    files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
            text.parse::<toml::Table>()
                .unwrap_or_else(|e| panic!("{}: {e}", f.display()))
        })
        .collect()
}

/// The entries of one kind, in load order, a later entry with the same id replacing an
/// earlier one (as `Vocabulary::from_files` does): their patterns.
pub fn entries(docs: &[toml::Table], kind: &str) -> Vec<(String, Vec<String>)> {
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

/// The vocabulary's words for the scanner.
pub struct VocabWords {
    /// Patterns of each signal.
    pub signals: Vec<Vec<String>>,
    /// Patterns of each milestone.
    pub milestones: Vec<Vec<String>>,
    /// `Vocabulary::signal_literals`.
    pub signal_literals: Vec<String>,
    /// `Vocabulary::milestone_literals`.
    pub milestone_literals: Vec<String>,
    /// `[scanner] serving`.
    pub serving: Vec<String>,
    /// `[scanner] error_words` then `bpe_leak_words`.
    pub errors: Vec<String>,
    /// `[scanner] context_words`.
    pub context: Vec<String>,
}

/// Reads the vocabulary's words for the scanner out of its parsed files.
pub fn vocab_words(docs: &[toml::Table]) -> VocabWords {
    let signals: Vec<Vec<String>> = entries(docs, "signal").into_iter().map(|e| e.1).collect();
    let mut extra: Vec<String> = entries(docs, "banner")
        .iter()
        .map(|e| crate::literals::join_patterns(&e.1))
        .collect();
    if let Some((_, p)) = entries(docs, "shape")
        .into_iter()
        .find(|(id, _)| id == "wrong-output")
    {
        extra.push(crate::literals::join_patterns(&p));
    }
    let milestones: Vec<Vec<String>> = entries(docs, "milestone")
        .into_iter()
        .map(|e| e.1)
        .collect();
    let joined: Vec<String> = milestones
        .iter()
        .map(|p| crate::literals::join_patterns(p))
        .collect();
    let strings = |t: &toml::Table, key: &str| -> Vec<String> {
        t.get(key)
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (mut serving, mut errors, mut context) = (Vec::new(), Vec::new(), Vec::new());
    for doc in docs {
        if let Some(sc) = doc.get("scanner").and_then(|v| v.as_table()) {
            serving.extend(strings(sc, "serving"));
            errors.extend(strings(sc, "error_words"));
            errors.extend(strings(sc, "bpe_leak_words"));
            context.extend(strings(sc, "context_words"));
        }
    }
    VocabWords {
        signal_literals: crate::literals::signal_literals(&signals, &extra),
        milestone_literals: crate::literals::milestone_literals(&joined),
        signals,
        milestones,
        serving,
        errors,
        context,
    }
}
