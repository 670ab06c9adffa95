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
    inner_words(pattern, true)
}

/// Words one of which every match of `pattern` holds, lowercased when `lower` (and then
/// read ignoring ASCII case) or as written; 3+ bytes each, at most 128.
fn inner_words(pattern: &str, lower: bool) -> Option<Vec<String>> {
    let plain = pattern.replace("(?i)", "").replace("(?i:", "(?:");
    let hir = regex_syntax::parse(&plain).ok()?;
    let found = walk(&hir, lower);
    let words = without_superstrings(most_selective(found.exact, found.inner)?);
    (words.iter().all(|w| w.len() >= 3) && words.len() <= 128).then_some(words)
}

/// The prefix or suffix set of a pattern, whichever is the more selective, lowercased: what
/// `needles` gave before it looked inside patterns. Its short stubs (`has n`) keep a few
/// more lines for the scanner, so the scanner keeps them alongside the inner words.
fn affix_needles(pattern: &str) -> Option<Vec<String>> {
    use regex_syntax::hir::literal::ExtractKind;
    let plain = pattern.replace("(?i)", "").replace("(?i:", "(?:");
    let hir = regex_syntax::parse(&plain).ok()?;
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

/// The most words an exact set keeps before it is given up (a cross product of
/// alternations grows fast).
const EXACT_MAX: usize = 64;

/// What one part of a pattern says about the text it matches (lowercased or as written,
/// as the walk was asked): `exact`,
/// every string it can match, when they are few; `inner`, words one of which each of
/// its matches holds.
struct Found {
    exact: Option<Vec<String>>,
    inner: Option<Vec<String>>,
}

impl Found {
    fn exact(words: Vec<String>) -> Found {
        Found {
            exact: Some(words),
            inner: None,
        }
    }

    fn nothing() -> Found {
        Found {
            exact: None,
            inner: None,
        }
    }
}

/// Of two word sets, the one that prefilters better: the longer shortest word (a word
/// common in logs counting as two bytes long, and all words of `SELECTIVE_ENOUGH` bytes
/// alike), then the fewer words.
fn most_selective(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    let key = |w: &[String]| {
        (
            w.iter()
                .map(|x| selective_len(x))
                .min()
                .unwrap_or(0)
                .min(SELECTIVE_ENOUGH),
            std::cmp::Reverse(w.len()),
        )
    };
    match (a, b) {
        (Some(a), Some(b)) => Some(if key(&b) > key(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// A required word this long is rare enough in logs: between two sets whose shortest words
/// are both this long, the one of fewer words is the better, as the prefilters' automata
/// grow with their words.
const SELECTIVE_ENOUGH: usize = 12;

/// Words on 3 % or more of the lines of the corpus's logs (1,640 of them, counted
/// 2026-12-06): as a pattern's required word, such a word lets the pattern run on
/// every error line. `\bnixl\w*\.\w*nixl\w*Error\b` is better looked for by `nixl`
/// than by the longer `error`.
const COMMON_IN_LOGS: &[&str] = &[
    "aten",
    "assertion",
    "block",
    "cuda",
    "engine",
    "error",
    "failed",
    "file",
    "for",
    "info",
    "kernel",
    "lib",
    "line",
    "llama",
    "local",
    "model",
    "native",
    "opt",
    "out",
    "packages",
    "pid",
    "python",
    "pytorch",
    "self",
    "site",
    "src",
    "the",
    "thread",
    "torch",
    "usr",
    "vllm",
    "with",
];

/// How selective a required word is, as a length: its length, but two for a word common in
/// logs (ignoring case and the spaces around it; `: error: ` is not common), and nothing
/// for a word too short to be looked for (under 3 bytes).
fn selective_len(word: &str) -> usize {
    let core = word.trim_matches(' ');
    if word.len() < 3 {
        0
    } else if COMMON_IN_LOGS.iter().any(|w| w.eq_ignore_ascii_case(core)) {
        2
    } else {
        word.len()
    }
}

/// The words without those that hold another of them: a text holding `.exe: error: `
/// holds `: error: `, so the shorter word alone finds the same texts.
fn without_superstrings(words: Vec<String>) -> Vec<String> {
    let keep: Vec<bool> = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            !words
                .iter()
                .enumerate()
                .any(|(j, v)| j != i && w.contains(v.as_str()) && (w.len() > v.len() || j < i))
        })
        .collect();
    words
        .into_iter()
        .zip(keep)
        .filter_map(|(w, k)| k.then_some(w))
        .collect()
}

fn sorted(mut words: Vec<String>) -> Vec<String> {
    words.sort();
    words.dedup();
    words
}

/// Every concatenation of a word of `a` with a word of `b`; `None` past `EXACT_MAX`.
fn cross(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len().saturating_mul(b.len()) > EXACT_MAX {
        return None;
    }
    Some(sorted(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| format!("{x}{y}")))
            .collect(),
    ))
}

/// The characters of a small class (a case pair, `[-_ ]`), lowercased when `lower`.
fn class_chars(class: &regex_syntax::hir::Class, lower: bool) -> Option<Vec<String>> {
    use regex_syntax::hir::Class;
    let mut out = Vec::new();
    let mut push = |lo: u32, hi: u32| -> Option<()> {
        if hi - lo >= 4 || out.len() > 4 {
            return None;
        }
        for c in lo..=hi {
            let c = char::from_u32(c)?;
            out.push(if lower { c.to_ascii_lowercase() } else { c }.to_string());
        }
        Some(())
    };
    match class {
        Class::Unicode(u) => {
            for r in u.ranges() {
                push(r.start() as u32, r.end() as u32)?;
            }
        }
        Class::Bytes(b) => {
            for r in b.ranges() {
                push(u32::from(r.start()), u32::from(r.end()))?;
            }
        }
    }
    (out.len() <= 4).then(|| sorted(out))
}

/// Walks a pattern for the words its matches must hold: a concatenation holds the
/// words of any one part, and of any run of adjacent parts of known text joined; an
/// alternation holds one of its branches' words; an optional part holds nothing.
/// Unlike a prefix or suffix set, this finds the words in the middle of a pattern
/// (`'[\w.]+' object has no attribute`).
fn walk(hir: &Hir, lower: bool) -> Found {
    use regex_syntax::hir::HirKind;
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Found::exact(vec![String::new()]),
        HirKind::Literal(l) => {
            let text = String::from_utf8_lossy(&l.0);
            Found::exact(vec![if lower {
                text.to_ascii_lowercase()
            } else {
                text.into_owned()
            }])
        }
        HirKind::Class(c) => Found {
            exact: class_chars(c, lower),
            inner: None,
        },
        HirKind::Capture(c) => walk(&c.sub, lower),
        // An optional part (`(?:runtime )?`) is its words or nothing: a run of known text
        // goes on through it (`cuda (?:runtime )?error` holds `cuda error` or
        // `cuda runtime error`, not only `cuda `).
        HirKind::Repetition(r) if r.min == 0 && r.max == Some(1) => Found {
            exact: walk(&r.sub, lower).exact.map(|mut e| {
                e.push(String::new());
                sorted(e)
            }),
            inner: None,
        },
        HirKind::Repetition(r) if r.min == 0 => Found::nothing(),
        HirKind::Repetition(r) => {
            let sub = walk(&r.sub, lower);
            let once = r.max == Some(1);
            Found {
                exact: if once { sub.exact.clone() } else { None },
                inner: most_selective(sub.exact, sub.inner),
            }
        }
        HirKind::Concat(parts) => {
            let mut best: Option<Vec<String>> = None;
            let mut run: Vec<String> = vec![String::new()];
            let mut whole = true;
            for part in spliced(parts) {
                let f = walk(part, lower);
                best = most_selective(best, f.inner);
                match f.exact {
                    // The run so far is a choice of its own: fewer words than it crossed
                    // with a part's choices, which `most_selective` may prefer.
                    Some(e) if e.len() > 1 => {
                        best = most_selective(best, Some(run.clone()));
                        match cross(&run, &e) {
                            Some(joined) => run = joined,
                            None => {
                                whole = false;
                                best = most_selective(best, Some(std::mem::replace(&mut run, e)));
                            }
                        }
                    }
                    Some(e) => match cross(&run, &e) {
                        Some(joined) => run = joined,
                        None => {
                            whole = false;
                            best = most_selective(best, Some(std::mem::replace(&mut run, e)));
                        }
                    },
                    None => {
                        whole = false;
                        best = most_selective(
                            best,
                            Some(std::mem::replace(&mut run, vec![String::new()])),
                        );
                    }
                }
            }
            if whole {
                return Found {
                    exact: Some(run),
                    inner: best,
                };
            }
            Found {
                exact: None,
                inner: most_selective(best, Some(run)),
            }
        }
        HirKind::Alternation(branches) => {
            let found: Vec<Found> = branches.iter().map(|b| walk(b, lower)).collect();
            let exact = found
                .iter()
                .map(|f| f.exact.clone())
                .collect::<Option<Vec<Vec<String>>>>()
                .map(|sets| sorted(sets.concat()))
                .filter(|w| w.len() <= EXACT_MAX);
            let inner = found
                .into_iter()
                .map(|f| most_selective(f.exact, f.inner))
                .collect::<Option<Vec<Vec<String>>>>()
                .map(|sets| sorted(sets.concat()));
            Found { exact, inner }
        }
    }
}

/// The parts of a concatenation with the concatenations inside its groups spliced in:
/// a group does not change what is matched, and a run of known text goes on through it
/// (`python(3\.\d+)` holds `python3.`).
fn spliced(parts: &[Hir]) -> Vec<&Hir> {
    use regex_syntax::hir::HirKind;
    let mut out = Vec::with_capacity(parts.len());
    for part in parts {
        match part.kind() {
            HirKind::Capture(c) => match c.sub.kind() {
                HirKind::Concat(inner) => out.extend(spliced(inner)),
                _ => out.push(&*c.sub),
            },
            _ => out.push(part),
        }
    }
    out
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
    // A branch whose words are inside it (`'[\w.]+' object has no attribute`) has no prefix
    // set: its inner words, as written, stand in when they are long enough to mark an error.
    for pat in signal_patterns.iter().flatten().chain(extra.iter()) {
        if pat.contains("(?i") {
            continue;
        }
        let has_prefix = regex_syntax::parse(pat)
            .ok()
            .and_then(|h| prefix_literals(&h))
            .is_some_and(|w| w.iter().all(|x| x.len() >= 4));
        if has_prefix {
            continue;
        }
        let words = inner_words(pat, false).unwrap_or_default();
        if words.len() <= 8 && words.iter().all(|w| w.len() >= 10) {
            for w in words {
                if !out.contains(&w) {
                    out.push(w);
                }
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

/// Words (at most 8 of a kind) one of which every match of a case-insensitive pattern holds,
/// each as lower case, capitalised and upper case; empty when it has no such words.
pub fn case_variants(pattern: &str) -> Vec<String> {
    // The words at either end of the pattern (5+ bytes), else words from inside it when
    // they are long (10+ bytes): a short inner word (`kernel`, `version`) is on too
    // many lines to mark an error.
    let fit = |min: usize| move |w: &Vec<String>| w.len() <= 8 && w.iter().all(|x| x.len() >= min);
    let Some(words) = affix_needles(pattern)
        .filter(fit(5))
        .or_else(|| needles(pattern).filter(fit(10)))
    else {
        return Vec::new();
    };
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_scanner_gets_a_patterns_inner_words_as_written() {
        // The scanner's automaton is case-sensitive: a pattern without `(?i)` gives its
        // inner words in its own case, a long one only.
        let pats = vec![vec![r"'[\w.]+' Object Has No Attribute '\w+'".to_string()]];
        let words = super::signal_literals(&pats, &[]);
        assert!(
            words.contains(&"' Object Has No Attribute '".to_string()),
            "{words:?}"
        );
        let short = vec![vec![r"[A-Z]\w+ Kernel \d+".to_string()]];
        assert!(super::signal_literals(&short, &[]).is_empty());
    }

    fn needles(p: &str) -> Vec<String> {
        super::needles(p).unwrap_or_else(|| panic!("{p}: no needles"))
    }

    #[test]
    fn an_optional_part_and_a_group_do_not_end_a_run_of_known_text() {
        // `cuda ` alone would send the pattern to every line that names CUDA.
        assert_eq!(
            needles(r"(?i)\bCUDA (?:runtime |driver )?error\b.{0,100}'(?P<code>\d{1,3})'"),
            ["cuda driver error", "cuda error", "cuda runtime error"]
        );
        assert_eq!(needles(r"\bpython(3\.\d+)\b"), ["python3."]);
        assert_eq!(
            needles(r"(?i)capture (?:was )?invalidated"),
            ["capture invalidated", "capture was invalidated"]
        );
    }

    #[test]
    fn a_word_common_in_logs_is_not_chosen_over_a_rarer_one() {
        // `error` is longer than `nixl` but on a tenth of the lines of a log.
        assert_eq!(needles(r"\bnixl\w*\.\w*nixl\w*Error\b"), ["nixl"]);
        // With its punctuation a common word is rare again; a word holding another of the
        // set adds nothing (`.exe: error: ` holds `: error: `).
        assert_eq!(
            needles(r"^\s*(?:gcc|cc|nvcc)(?:-[\d.]+)?(?:\.exe)?: (?:fatal )?error: "),
            [": error: ", ": fatal error: "]
        );
    }

    #[test]
    fn needles_are_found_in_every_match() {
        for (p, text) in [
            (
                r"(?i)\bCUDA (?:runtime )?error\b",
                "a CUDA Runtime Error here",
            ),
            (r"(?i)\bCUDA (?:runtime )?error\b", "CUDA error: x"),
            (r"\bpython(3\.\d+)\b", "/usr/lib/python3.12/x"),
            (
                r"^\s*(?:gcc|cc)(?:\.exe)?: (?:fatal )?error: ",
                "cc.exe: fatal error: x",
            ),
        ] {
            let lower = text.to_ascii_lowercase();
            assert!(
                needles(p).iter().any(|n| lower.contains(n.as_str())),
                "{p} on {text}"
            );
        }
    }
}
