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
