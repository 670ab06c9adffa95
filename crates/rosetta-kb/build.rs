//! Embeds every rule file under `kb/rules/` into the binary, so that the
//! built-in knowledge base needs no files at run time, with the literals the
//! scanner keeps lines for (extracted here once per build, with the library's
//! own `rosetta-log/src/literals.rs`, instead of at every start).
//!
//! Each file is parsed here once and embedded as JSON as well as TOML: reading
//! 450 rules' TOML took a fifth of an empty log's start-up, and the same data as
//! JSON reads several times faster. The TOML stays for what shows the rule as
//! written; a file that does not parse is embedded as `None` and its own loading
//! reports the error.

#[path = "../rosetta-log/src/literals.rs"]
#[allow(dead_code)]
mod literals;

#[path = "../rosetta-log/build_vocab.rs"]
#[allow(dead_code)]
mod build_vocab;

#[path = "../rosetta-log/src/scan_words.rs"]
#[allow(dead_code)]
mod scan_words;

/// `Rule::literals` of one rule file: the required literals of its `lines` and
/// `any_lines` patterns, `None` when one has none (or the file does not parse:
/// then the rule's own loading reports it).
fn rule_literals(doc: &toml::Table) -> Option<Vec<String>> {
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

/// Every regex of one rule file's `[when]` (message, frames, args, any_args, lines,
/// any_lines, not_lines), for the needle table.
fn rule_patterns(doc: &toml::Table) -> Vec<String> {
    let Some(when) = doc.get("when").and_then(|w| w.as_table()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for key in ["message", "frames"] {
        if let Some(p) = when.get(key).and_then(|v| v.as_str()) {
            out.push(p.to_string());
        }
    }
    for key in ["args", "any_args"] {
        if let Some(t) = when.get(key).and_then(|v| v.as_table()) {
            out.extend(t.values().filter_map(|v| v.as_str()).map(str::to_string));
        }
    }
    for key in ["lines", "any_lines", "not_lines"] {
        if let Some(list) = when.get(key).and_then(|v| v.as_array()) {
            out.extend(list.iter().filter_map(|v| v.as_str()).map(str::to_string));
        }
    }
    out
}

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let rules = manifest.join("../../kb/rules");
    println!("cargo:rerun-if-changed={}", rules.display());
    let mut files = Vec::new();
    build_vocab::walk(&rules, &mut files);
    let mut code = String::from("/// One built-in rule file.\npub struct EmbeddedRule {\n    /// Its path relative to kb/rules.\n    pub rel: &'static str,\n    /// Its text.\n    pub toml: &'static str,\n    /// The same as JSON (`None`: the TOML does not parse).\n    pub json: Option<&'static str>,\n    /// The scanner literals of its line patterns (`None`: one has none).\n    pub literals: Option<&'static [&'static str]>,\n}\n/// Built-in rule files.\npub const EMBEDDED: &[EmbeddedRule] = &[\n");
    // The literals a line must hold for each built-in pattern to match it
    // (`literals::needles`), so that a rule's regex is not parsed at run time to find them.
    let mut table: std::collections::BTreeMap<String, Option<Vec<String>>> = Default::default();
    let mut rule_words: Vec<String> = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&rules)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let abs = f.canonicalize().unwrap_or(f.clone());
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let doc = text.parse::<toml::Table>().ok();
        for p in doc.iter().flat_map(rule_patterns) {
            let n = literals::needles(&p);
            table.entry(p).or_insert(n);
        }
        let lits = match doc.as_ref().and_then(rule_literals) {
            Some(l) => {
                let code = format!("Some(&{l:?})");
                rule_words.extend(l);
                code
            }
            None => "None".to_string(),
        };
        let json = match doc.as_ref().and_then(|d| serde_json::to_string(d).ok()) {
            Some(j) => format!("Some({j:?})"),
            None => "None".to_string(),
        };
        let _ = writeln!(
            code,
            "    EmbeddedRule {{ rel: {rel:?}, toml: include_str!({:?}), json: {json}, literals: {lits} }},",
            abs.to_string_lossy()
        );
    }
    code.push_str("];\n");
    code.push_str("/// Built-in rule patterns (sorted) with their needles (`literals::needles`).\npub const NEEDLES: &[(&str, Option<&[&str]>)] = &[\n");
    for (p, n) in &table {
        let n = match n {
            Some(words) => format!("Some(&{words:?})"),
            None => "None".to_string(),
        };
        let _ = writeln!(code, "    ({p:?}, {n}),");
    }
    code.push_str("];\n");
    code.push_str(&scanner_code(&manifest, rule_words));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
        .join("embedded_rules.rs");
    std::fs::write(out, code).expect("OUT_DIR is writable");
}

/// The scanner's word lists for the built-in vocabulary and rules (`scan_words`), worked
/// out here once instead of at every start: `SCAN_PATS`, `SCAN_KINDS`, `SCAN_ERROR_WORDS`.
fn scanner_code(manifest: &std::path::Path, mut rule_words: Vec<String>) -> String {
    let files = build_vocab::watched_files(&manifest.join("../../kb/vocab"));
    let v = build_vocab::vocab_words(&build_vocab::parse(&files));
    // As `KnowledgeBase::embedded_literals` gives them.
    rule_words.sort();
    rule_words.dedup();
    let words = scan_words::scan_words(&scan_words::WordSources {
        serving: &v.serving,
        errors: &v.errors,
        signal_words: &v.signal_literals,
        context: &v.context,
        milestone_words: &v.milestone_literals,
        extra: &rule_words,
    });
    let mut code = String::from(
        "/// The scanner's words for the built-in vocabulary and rules (`scan_words`).\npub const SCAN_PATS: &[&str] = &[\n",
    );
    for w in &words.pats {
        let _ = writeln!(code, "    {w:?},");
    }
    code.push_str("];\n/// What a hit on each of `SCAN_PATS` means (`scan_words::KIND_*`).\npub const SCAN_KINDS: &[u32] = &");
    let _ = writeln!(code, "{:?};", words.kinds);
    code.push_str(
        "/// The error words (`scan_words`).\npub const SCAN_ERROR_WORDS: &[&str] = &[\n",
    );
    for w in &words.error_words {
        let _ = writeln!(code, "    {w:?},");
    }
    code.push_str("];\n");
    code
}
