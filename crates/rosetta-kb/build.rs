//! Embeds every rule file under `kb/rules/` into the binary, so that the
//! built-in knowledge base needs no files at run time, with the literals the
//! scanner keeps lines for (extracted here once per build, with the library's
//! own `rosetta-log/src/literals.rs`, instead of at every start).

#[path = "../rosetta-log/src/literals.rs"]
#[allow(dead_code)]
mod literals;

/// `Rule::literals` of one rule file: the required literals of its `lines` and
/// `any_lines` patterns, `None` when one has none (or the file does not parse:
/// then the rule's own loading reports it).
fn rule_literals(text: &str) -> Option<Vec<String>> {
    let doc: toml::Table = text.parse().ok()?;
    let when = doc.get("when").and_then(|w| w.as_table());
    let mut out = Vec::new();
    for key in ["lines", "any_lines"] {
        let list = when.and_then(|w| w.get(key)).and_then(|v| v.as_array());
        for p in list.into_iter().flatten() {
            out.extend(literals::required_literals(p.as_str()?)?);
        }
    }
    Some(out)
}

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
    let rules = manifest.join("../../kb/rules");
    println!("cargo:rerun-if-changed={}", rules.display());
    let mut files = Vec::new();
    walk(&rules, &mut files);
    let mut code = String::from("/// Built-in rule files: (path relative to kb/rules, text, scanner literals).\npub const EMBEDDED: &[(&str, &str, Option<&[&str]>)] = &[\n");
    for f in files {
        let rel = f
            .strip_prefix(&rules)
            .unwrap_or(&f)
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().unwrap_or(f.clone());
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let lits = match rule_literals(&text) {
            Some(l) => format!("Some(&{l:?})"),
            None => "None".to_string(),
        };
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?}), {lits}),",
            abs.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_rules.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}
