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

/// A regex compiled on first use. Derefs to `Regex`.
#[derive(Clone)]
pub struct LazyRegex {
    pattern: String,
    re: OnceLock<Regex>,
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.pattern).finish()
    }
}

fn never() -> Regex {
    Regex::new(r"[^\s\S]").expect("static pattern compiles")
}

impl LazyRegex {
    /// Compiles now (for patterns from user files): the error is the caller's to report.
    pub fn checked(pattern: &str) -> Result<LazyRegex, regex::Error> {
        let re = Regex::new(pattern)?;
        Ok(LazyRegex {
            pattern: pattern.to_string(),
            re: OnceLock::from(re),
        })
    }

    /// Compiles on first use (for built-in patterns, linted at test time).
    pub fn trusted(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            re: OnceLock::new(),
        }
    }

    /// The pattern as written; compiles nothing.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The compiled regex.
    pub fn get(&self) -> &Regex {
        self.re.get_or_init(|| {
            Regex::new(&self.pattern).unwrap_or_else(|e| {
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
    regex::RegexSetBuilder::new(patterns)
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
    /// (`crate::literals::required_literals` of each; `None`: always run).
    pub fn new(groups: Vec<Vec<String>>, required: Vec<Option<Vec<String>>>) -> FilteredSet {
        let mut res = Vec::new();
        let mut owner = Vec::new();
        let mut joined = Vec::new();
        for (i, g) in groups.iter().enumerate() {
            joined.push(crate::literals::join_patterns(g));
            for p in g {
                res.push(LazyRegex::trusted(p));
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
