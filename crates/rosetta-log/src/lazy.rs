//! Regexes compiled on first use. The knowledge base and the vocabulary hold
//! hundreds of patterns and a run needs only the few that its log reaches;
//! compiling all of them at start took most of `diagnose`'s start-up.
//!
//! Patterns from files a user gives (`--kb`) are still checked when loaded
//! (`LazyRegex::checked`), so a bad pattern is an error naming its file. The
//! built-in ones are checked by the knowledge-base lint at test time and made
//! with `LazyRegex::trusted`; should one not compile all the same, it matches
//! nothing rather than panicking (and fails any test that reaches it, through a
//! debug assertion).

use regex::{Regex, RegexSet};
use std::sync::OnceLock;

/// A regex compiled on first use, behind a literal prefilter: until it is
/// compiled, a text that holds none of the literals every match must contain
/// (`needles`, looked for ignoring ASCII case) is answered "no match" without
/// compiling it. Derefs to `Regex`; its inherent `is_match`, `find`,
/// `captures`, `find_iter` and `captures_iter` take the prefilter first.
///
/// Perl classes (`\d`, `\w`, `\s`, their negations) and word boundaries are
/// ASCII (`ascii_classes`): logs are ASCII where it matters, and a Unicode
/// `\w{0,20}` costs a hundred times more to compile.
#[derive(Clone)]
pub struct LazyRegex {
    pattern: String,
    re: OnceLock<Regex>,
    /// `None` inside: no literal is required (or the caller prefilters).
    filter: OnceLock<Option<aho_corasick::AhoCorasick>>,
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.pattern).finish()
    }
}

fn never() -> Regex {
    Regex::new(r"[^\s\S]").expect("static pattern compiles")
}

static NEVER: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(never);

impl LazyRegex {
    /// Compiles now (for patterns from user files): the error is the caller's to report.
    pub fn checked(pattern: &str) -> Result<LazyRegex, regex::Error> {
        let re = Regex::new(&ascii_classes(pattern))?;
        Ok(LazyRegex {
            pattern: pattern.to_string(),
            re: OnceLock::from(re),
            filter: OnceLock::from(None),
        })
    }

    /// Compiles on first use (for built-in patterns, linted at test time).
    pub fn trusted(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            re: OnceLock::new(),
            filter: OnceLock::new(),
        }
    }

    /// Compiles on first use, with no prefilter of its own (the caller has one).
    pub fn prefiltered(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            re: OnceLock::new(),
            filter: OnceLock::from(None),
        }
    }

    /// Whether `text` may hold a match: false only when it is not compiled yet and
    /// `text` lacks every required literal.
    fn may_match(&self, text: &str) -> bool {
        if self.re.get().is_some() {
            return true;
        }
        let filter = self.filter.get_or_init(|| {
            let words = crate::literals::needles(&self.pattern)?;
            // A few needles, searched in a few lines: an NFA builds fastest.
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
                .build(&words)
                .ok()
        });
        filter.as_ref().is_none_or(|ac| ac.is_match(text))
    }

    /// `Regex::is_match`, prefiltered.
    pub fn is_match(&self, text: &str) -> bool {
        self.may_match(text) && self.get().is_match(text)
    }

    /// `Regex::find`, prefiltered.
    pub fn find<'h>(&self, text: &'h str) -> Option<regex::Match<'h>> {
        if !self.may_match(text) {
            return None;
        }
        self.get().find(text)
    }

    /// `Regex::captures`, prefiltered.
    pub fn captures<'h>(&self, text: &'h str) -> Option<regex::Captures<'h>> {
        if !self.may_match(text) {
            return None;
        }
        self.get().captures(text)
    }

    /// `Regex::find_iter`, prefiltered.
    pub fn find_iter<'r, 'h>(&'r self, text: &'h str) -> regex::Matches<'r, 'h> {
        if !self.may_match(text) {
            return NEVER.find_iter(text);
        }
        self.get().find_iter(text)
    }

    /// `Regex::captures_iter`, prefiltered.
    pub fn captures_iter<'r, 'h>(&'r self, text: &'h str) -> regex::CaptureMatches<'r, 'h> {
        if !self.may_match(text) {
            return NEVER.captures_iter(text);
        }
        self.get().captures_iter(text)
    }

    /// The pattern as written; compiles nothing.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The compiled regex.
    pub fn get(&self) -> &Regex {
        self.re.get_or_init(|| {
            Regex::new(&ascii_classes(&self.pattern)).unwrap_or_else(|e| {
                // Tests run with debug assertions: a built-in pattern that does not
                // compile fails the first test that reaches it.
                debug_assert!(false, "a built-in pattern does not compile: {e}");
                never()
            })
        })
    }

    /// Whether it has been compiled (for tests of laziness).
    pub fn is_compiled(&self) -> bool {
        self.re.get().is_some()
    }
}

impl std::ops::Deref for LazyRegex {
    type Target = Regex;
    fn deref(&self) -> &Regex {
        self.get()
    }
}

/// A set of many patterns, built on first use, with room for its lazy DFA: at
/// the default cache size the DFA for a whole table keeps running out of states
/// and the search falls back to the (many times slower) PikeVM on every line.
#[derive(Debug)]
pub struct LazySet {
    patterns: Vec<String>,
    set: OnceLock<RegexSet>,
}

impl LazySet {
    /// A set built on first use.
    pub fn trusted(patterns: Vec<String>) -> LazySet {
        LazySet {
            patterns,
            set: OnceLock::new(),
        }
    }

    /// A set built now (for patterns from user files).
    pub fn checked(patterns: Vec<String>) -> Result<LazySet, regex::Error> {
        let set = build(&patterns)?;
        Ok(LazySet {
            patterns,
            set: OnceLock::from(set),
        })
    }

    /// The patterns, as given.
    pub fn patterns(&self) -> &[String] {
        &self.patterns
    }

    /// The compiled set.
    pub fn get(&self) -> &RegexSet {
        self.set
            .get_or_init(|| build(&self.patterns).unwrap_or_else(|_| RegexSet::empty()))
    }

    /// Whether it has been built (for tests of laziness).
    pub fn is_compiled(&self) -> bool {
        self.set.get().is_some()
    }
}

fn build(patterns: &[String]) -> Result<RegexSet, regex::Error> {
    regex::RegexSetBuilder::new(patterns.iter().map(|p| ascii_classes(p)))
        .size_limit(64 << 20)
        .dfa_size_limit(64 << 20)
        .build()
}

/// Many entries of one or more patterns each, every pattern compiled on first
/// use, behind a literal prefilter: a pattern is only run on a text holding one
/// of its required literals (or always, when it has none), and an entry matches
/// when one of its patterns does. Finds the same entries as a `RegexSet` of the
/// entries' joined patterns would, without building the set's automaton (for
/// the signal table that took a third of `diagnose` on a small log), and
/// compiling only the patterns whose literals occur, not whole entries (one
/// entry's alternation of twenty case-insensitive patterns took 28 ms).
#[derive(Debug)]
pub struct FilteredSet {
    /// Each entry's patterns joined into one alternation, as written.
    joined: Vec<String>,
    res: Vec<LazyRegex>,
    /// Per pattern: the entry it belongs to (ascending).
    owner: Vec<usize>,
    required: Vec<Option<Vec<String>>>,
    prefilter: OnceLock<Prefilter>,
}

#[derive(Debug)]
struct Prefilter {
    ac: aho_corasick::AhoCorasick,
    /// Per literal of `ac`: the patterns that require it.
    owners: Vec<Vec<usize>>,
    /// Patterns with no required literal.
    always: Vec<usize>,
}

impl FilteredSet {
    /// The entries, each a list of patterns (compiled on first use), with each
    /// pattern's required literals in the same order, flattened
    /// (`crate::literals::needles` of each, lowercase, looked for ignoring
    /// ASCII case; `None`: always run).
    pub fn new(groups: Vec<Vec<String>>, required: Vec<Option<Vec<String>>>) -> FilteredSet {
        let mut res = Vec::new();
        let mut owner = Vec::new();
        let mut joined = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            joined.push(crate::literals::join_patterns(g));
            for p in g {
                res.push(LazyRegex::prefiltered(p));
                owner.push(i);
            }
        }
        debug_assert_eq!(res.len(), required.len());
        FilteredSet {
            joined,
            res,
            owner,
            required,
            prefilter: OnceLock::new(),
        }
    }

    /// Each entry's patterns, joined into one alternation.
    pub fn patterns(&self) -> impl Iterator<Item = &str> {
        self.joined.iter().map(String::as_str)
    }

    fn prefilter(&self) -> &Prefilter {
        self.prefilter.get_or_init(|| {
            let mut lits: Vec<String> = Vec::new();
            let mut owners: Vec<Vec<usize>> = Vec::new();
            let mut index: std::collections::HashMap<String, usize> = Default::default();
            let mut always = Vec::new();
            for (i, req) in self.required.iter().enumerate() {
                match req {
                    Some(words) if !words.is_empty() => {
                        for w in words {
                            let at = *index.entry(w.clone()).or_insert_with(|| {
                                lits.push(w.clone());
                                owners.push(Vec::new());
                                lits.len() - 1
                            });
                            if !owners[at].contains(&i) {
                                owners[at].push(i);
                            }
                        }
                    }
                    _ => always.push(i),
                }
            }
            let ac = aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                .ascii_case_insensitive(true)
                .build(&lits);
            match ac {
                Ok(ac) => Prefilter { ac, owners, always },
                // Cannot happen for literals; run every pattern if it does.
                Err(_) => Prefilter {
                    ac: aho_corasick::AhoCorasick::new(Vec::<String>::new())
                        .expect("an empty automaton builds"),
                    owners: Vec::new(),
                    always: (0..self.res.len()).collect(),
                },
            }
        })
    }

    /// The indices of the entries that match `text`, ascending.
    pub fn matches(&self, text: &str) -> Vec<usize> {
        let p = self.prefilter();
        let mut candidate = vec![false; self.res.len()];
        for &i in &p.always {
            candidate[i] = true;
        }
        for m in p.ac.find_overlapping_iter(text) {
            for &i in &p.owners[m.pattern().as_usize()] {
                candidate[i] = true;
            }
        }
        let mut out: Vec<usize> = Vec::new();
        for (i, &cand) in candidate.iter().enumerate() {
            let entry = self.owner[i];
            if cand && out.last() != Some(&entry) && self.res[i].is_match(text) {
                out.push(entry);
            }
        }
        out
    }

    /// Whether entry `index` matches `text`.
    pub fn matches_one(&self, index: usize, text: &str) -> bool {
        (0..self.res.len()).any(|i| self.owner[i] == index && self.res[i].is_match(text))
    }
}

/// A regex of a built-in table compiled now, with its Perl classes made ASCII
/// (as `LazyRegex` does): a fifth of the compile time of the Unicode classes.
pub fn ascii_regex(pattern: &str) -> Result<Regex, regex::Error> {
    Regex::new(&ascii_classes(pattern))
}

/// The pattern with its Perl classes and word boundaries made ASCII.
pub fn ascii_classes(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains('\\') {
        return std::borrow::Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 32);
    let mut chars = pattern.chars().peekable();
    // Depth of character classes; `]` first in a class is a literal.
    let mut depth = 0usize;
    let mut class_start = false;
    while let Some(c) = chars.next() {
        let first = class_start;
        class_start = false;
        match c {
            '\\' => {
                let Some(n) = chars.next() else {
                    out.push(c);
                    break;
                };
                let inside = depth > 0;
                match (n, inside) {
                    ('d', false) => out.push_str("[0-9]"),
                    ('d', true) => out.push_str("0-9"),
                    ('w', false) => out.push_str("[0-9A-Za-z_]"),
                    ('w', true) => out.push_str("0-9A-Za-z_"),
                    ('s', false) => out.push_str("[\\t\\n\\x0B\\f\\r ]"),
                    ('s', true) => out.push_str("\\t\\n\\x0B\\f\\r "),
                    ('D', false) => out.push_str("[^0-9]"),
                    ('W', false) => out.push_str("[^0-9A-Za-z_]"),
                    ('S', false) => out.push_str("[^\\t\\n\\x0B\\f\\r ]"),
                    ('b', false) => out.push_str("(?-u:\\b)"),
                    ('B', false) => out.push_str("(?-u:\\B)"),
                    _ => {
                        out.push(c);
                        out.push(n);
                    }
                }
            }
            '[' => {
                if depth > 0 && chars.peek() == Some(&':') {
                    // [:alpha:] inside a class: copy to its closing `:]`.
                    out.push(c);
                    for d in chars.by_ref() {
                        out.push(d);
                        if d == ']' {
                            break;
                        }
                    }
                    continue;
                }
                depth += 1;
                out.push(c);
                if chars.peek() == Some(&'^') {
                    out.push(chars.next().unwrap_or('^'));
                }
                class_start = true;
            }
            ']' if depth > 0 && !first => {
                depth -= 1;
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::literals::needles;
    use proptest::prelude::*;

    /// Pieces of patterns: Perl classes in and out of brackets, brackets whose
    /// first `]` is literal, POSIX classes, escapes, case-insensitive groups.
    const PIECES: &[&str] = &[
        r"\d",
        r"\w",
        r"\s",
        r"\D",
        r"\W",
        r"\S",
        r"\b",
        r"\B",
        r"[\w.-]",
        r"[^\s]",
        r"[\d,]",
        r"[]a]",
        r"[^]a]",
        r"[[:alpha:]_]",
        r"\.",
        r"\\",
        r"\\d",
        r"a",
        r"ab",
        r"Ab",
        r"(?i)ab",
        r"(?i:b\w)",
        r"x+",
        r".",
        r"[a-c]",
        r"(?:a|\d)",
        r"\d{1,3}",
        r"\w*",
        r"\s?",
        " ",
        r"error",
        r"(?i)error: ",
        r"[\s\S]",
    ];

    fn pattern() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(PIECES), 1..6).prop_map(|v| v.concat())
    }

    fn haystack() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(
                &[
                    "a", "b", "A", "B", "1", "9", " ", "\t", "\n", "_", ".", "-", ",", "]", "x",
                    "\\", "error: ", "ERROR: ", "Ab", "d",
                ][..],
            ),
            0..24,
        )
        .prop_map(|v| v.concat())
    }

    proptest! {
        /// On ASCII text the rewritten pattern finds exactly what the original does.
        #[test]
        fn ascii_classes_agree_with_unicode_classes_on_ascii_text(p in pattern(), h in haystack()) {
            let Ok(orig) = Regex::new(&p) else { return Ok(()) };
            let ascii = Regex::new(&ascii_classes(&p)).expect("the rewrite compiles");
            let spans = |re: &Regex| re.find_iter(&h).map(|m| m.range()).collect::<Vec<_>>();
            prop_assert_eq!(spans(&orig), spans(&ascii), "pattern {} -> {}", p, ascii_classes(&p));
        }

        /// The prefilter never hides a match: a text that matches holds a needle.
        #[test]
        fn a_match_always_holds_a_needle(p in pattern(), h in haystack()) {
            let Ok(orig) = Regex::new(&p) else { return Ok(()) };
            if let (Some(m), Some(words)) = (orig.find(&h), needles(&p)) {
                let lower = h.to_ascii_lowercase();
                prop_assert!(words.iter().any(|w| lower.contains(w.as_str())),
                    "{} matched {:?} in {:?} without any of {:?}", p, m.as_str(), h, words);
            }
            let lazy = LazyRegex::trusted(&p);
            prop_assert_eq!(lazy.is_match(&h), orig.is_match(&h));
            prop_assert_eq!(lazy.captures(&h).map(|c| c.get(0).map(|m| m.range())),
                orig.captures(&h).map(|c| c.get(0).map(|m| m.range())));
        }
    }

    #[test]
    fn a_text_without_the_needles_compiles_nothing() {
        let re = LazyRegex::trusted(r"(?i)error: .{1,200} was not declared in this scope");
        assert!(!re.is_match("error: something else entirely"));
        assert_eq!(re.find_iter("nothing here").count(), 0);
        assert!(!re.is_compiled());
        assert!(re.is_match("ERROR: `x` WAS NOT DECLARED IN THIS SCOPE"));
        assert!(re.is_compiled());
    }

    #[test]
    fn needles_are_the_more_selective_end_and_ignore_case_flags() {
        assert_eq!(
            needles(r"(?i)error: .{1,200} was not declared in this scope"),
            Some(vec![" was not declared in this scope".to_string()])
        );
        assert_eq!(
            needles(r"(?i)\bMemoryError"),
            Some(vec!["memoryerror".to_string()])
        );
        assert_eq!(needles(r".*"), None);
    }

    #[test]
    fn ascii_classes_rewrites_outside_and_inside_brackets() {
        assert_eq!(ascii_classes(r"\d+"), "[0-9]+");
        assert_eq!(ascii_classes(r"[\w.-]"), "[0-9A-Za-z_.-]");
        assert_eq!(ascii_classes(r"\\d"), r"\\d");
        assert_eq!(ascii_classes(r"[]\d]"), "[]0-9]");
        assert_eq!(ascii_classes(r"\bx"), r"(?-u:\b)x");
        assert_eq!(ascii_classes(r"[[:alpha:]\d]"), "[[:alpha:]0-9]");
    }
}
