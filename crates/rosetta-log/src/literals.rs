//! Literal extraction from patterns: the words a line must hold for a pattern
//! to match it, which the scanner looks for instead of running every regex on
//! every line. Depends on `regex-syntax` alone so that `build.rs` can include
//! this file and do the extraction for the built-in vocabulary at build time
//! (it costs tens of milliseconds, paid once per build instead of once per run).
//! It does not compile or run regexes.

use regex_syntax::hir::Hir;

/// Joins the branches of an entry into one pattern, each branch in its own group so that
/// an inline flag stays inside its branch.
pub fn join_patterns(pats: &[String]) -> String {
    if pats.len() == 1 {
        return pats[0].clone();
    }
    pats.iter()
        .map(|p| format!("(?:{p})"))
        .collect::<Vec<_>>()
        .join("|")
}

/// Prefix literals of each top-level branch of a pattern, extracted branch by branch
/// so that one branch without a finite prefix does not cost the others theirs.
/// `None` for a branch with no finite prefix set.
pub fn branch_literals(hir: &Hir) -> Vec<Option<Vec<String>>> {
    use regex_syntax::hir::HirKind;
    let branches: Vec<&Hir> = match hir.kind() {
        HirKind::Alternation(alts) => alts.iter().collect(),
        _ => vec![hir],
    };
    branches.into_iter().map(prefix_literals).collect()
}

/// The finite prefix-literal set of a pattern, if it has one.
pub fn prefix_literals(hir: &Hir) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::{ExtractKind, Extractor};
    let mut ex = Extractor::new();
    ex.kind(ExtractKind::Prefix).limit_total(400);
    let mut seq = ex.extract(hir);
    seq.optimize_for_prefix_by_preference();
    let words: Vec<String> = seq
        .literals()?
        .iter()
        .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned())
        .collect();
    (!words.is_empty()).then_some(words)
}

/// The finite set of `kind` literals (prefixes or suffixes) of a pattern: 3+ bytes
/// each, at most 128, lowercased with `lower`; `None` when it has no such set.
fn finite_literals(
    hir: &Hir,
    kind: regex_syntax::hir::literal::ExtractKind,
    lower: bool,
) -> Option<Vec<String>> {
    let mut ex = regex_syntax::hir::literal::Extractor::new();
    ex.kind(kind).limit_total(256);
    let mut seq = ex.extract(hir);
    seq.optimize_for_prefix_by_preference();
    let mut words: Vec<String> = seq
        .literals()?
        .iter()
        .map(|l| String::from_utf8_lossy(l.as_bytes()).into_owned())
        .collect();
    if lower {
        words.iter_mut().for_each(|w| w.make_ascii_lowercase());
        words.sort();
        words.dedup();
    }
    (!words.is_empty() && words.iter().all(|w| w.len() >= 3) && words.len() <= 128).then_some(words)
}

/// Literals such that every match of `pattern` contains one of them (3+ bytes
/// each, at most 128); `None` when the pattern is too general to prefilter.
pub fn required_literals(pattern: &str) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::ExtractKind;
    let hir = regex_syntax::parse(pattern).ok()?;
    finite_literals(&hir, ExtractKind::Prefix, false)
        .or_else(|| finite_literals(&hir, ExtractKind::Suffix, false))
}

/// Literals (lowercase) one of which every match of `pattern` holds, ignoring
/// ASCII case; `None` when there are none worth looking for. Case-insensitive
/// groups are read as written (a `(?i)` pattern's literals are its own words,
/// not their case variants), which is sound because the needles are looked for
/// ignoring ASCII case.
pub fn needles(pattern: &str) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::ExtractKind;
    let plain = pattern.replace("(?i)", "").replace("(?i:", "(?:");
    let hir = regex_syntax::parse(&plain).ok()?;
    // Prefixes or suffixes, whichever set is the more selective: the longer
    // shortest literal (`error: .{1,200} was not declared` is found by its end).
    let shortest = |w: &[String]| w.iter().map(String::len).min().unwrap_or(0);
    match (
        finite_literals(&hir, ExtractKind::Prefix, true),
        finite_literals(&hir, ExtractKind::Suffix, true),
    ) {
        (Some(p), Some(s)) if shortest(&s) > shortest(&p) => Some(s),
        (Some(p), _) => Some(p),
        (None, s) => s,
    }
}

/// Literals (4+ bytes) that every match of some signal branch starts with, for the
/// scanner: from each signal's patterns, then the banner patterns and the
/// wrong-output shape (`extra`, whole patterns), which are looked for on kept lines too.
pub fn signal_literals(signal_patterns: &[Vec<String>], extra: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let all = signal_patterns
        .iter()
        .map(|p| join_patterns(p))
        .chain(extra.iter().cloned());
    for pat in all {
        let Ok(hir) = regex_syntax::parse(&pat) else {
            continue;
        };
        // The whole pattern's prefix set when it has a finite one, else each
        // branch's that has a small one.
        // A whole-pattern set trimmed by the extractor's limit holds short stubs (`S`,
        // `Sig`) that are then dropped; such a set stands for nothing, so go branch by branch.
        let whole = prefix_literals(&hir).filter(|w| w.iter().all(|x| x.len() >= 4));
        let words: Vec<String> = match whole {
            Some(w) => w,
            // Only branches with a few long words: a short or case-folded prefix
            // (`are `, `For `) would stop the scanner on every line.
            None => branch_literals(&hir)
                .into_iter()
                .flatten()
                .filter(|w| w.len() <= 8 && w.iter().all(|x| x.len() >= 6))
                .flatten()
                .collect(),
        };
        for w in words {
            if w.len() >= 4 && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    // A case-insensitive branch has no finite prefix set (each letter doubles it), so
    // the passes above drop it; its own words stand in, as a line writes them: lower
    // case, capitalised and upper case (the scanner's automaton is case-sensitive).
    for pat in signal_patterns.iter().flatten().chain(extra.iter()) {
        if !pat.contains("(?i") {
            continue;
        }
        for w in case_variants(pat) {
            if !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}

/// The words (5+ bytes, at most 8) every match of a case-insensitive pattern holds,
/// each as lower case, capitalised and upper case; empty when it has no such words.
pub fn case_variants(pattern: &str) -> Vec<String> {
    let Some(words) = needles(pattern) else {
        return Vec::new();
    };
    if words.len() > 8 || words.iter().any(|w| w.len() < 5) {
        return Vec::new();
    }
    let mut out = Vec::new();
    for w in words {
        let mut cap = w.clone();
        if let Some(c) = cap.get_mut(0..1) {
            c.make_ascii_uppercase();
        }
        for v in [w.clone(), cap, w.to_ascii_uppercase()] {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Prefix literals (4+ bytes, at most 40) of the milestone patterns (each one
/// entry's joined pattern), for the scanner's context words.
pub fn milestone_literals(milestone_patterns: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for pat in milestone_patterns {
        let Ok(hir) = regex_syntax::parse(pat) else {
            continue;
        };
        for w in branch_literals(&hir).into_iter().flatten().flatten() {
            if w.len() >= 4 && w.len() <= 40 && !out.contains(&w) {
                out.push(w);
            }
        }
    }
    out
}
