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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// A regex compiled on first use, behind a literal prefilter: until it is
/// compiled, a text that holds none of the literals every match must contain
/// (`needles`, looked for ignoring ASCII case) is answered "no match" without
/// compiling it.
///
/// Compiled in two tiers. First with `regex-lite`, which compiles a pattern in
/// microseconds where `regex` takes a third of a millisecond (its literal
/// optimisations, its DFAs), and searches slower. A run touches a few hundred
/// patterns on a handful of lines each, so the first tier is nearly always the
/// last. Once a regex has spent `PROMOTE_AFTER` searching (a big log, a
/// pattern on every line), about what compiling it with `regex` costs, it is
/// compiled again with `regex` and searches fast from then on: never more than
/// about twice the time of the better choice made in hindsight. Both tiers match alike on what they are given: the first gets the
/// pattern as written (`regex-lite`'s classes and word boundaries are ASCII),
/// the second gets it with its Perl classes made ASCII (`ascii_classes`); a
/// property test holds them to the same matches. A pattern `regex-lite` does
/// not take (a Unicode class) goes to `regex` at once.
///
/// Perl classes (`\d`, `\w`, `\s`, their negations) and word boundaries are
/// ASCII: logs are ASCII where it matters, and a Unicode `\w{0,20}` costs a
/// hundred times more to compile.
pub struct LazyRegex {
    pattern: String,
    /// Whether the pattern sets the case-insensitive flag (read once, for `lite_fits`).
    insensitive: bool,
    lite: OnceLock<Option<regex_lite::Regex>>,
    re: OnceLock<Regex>,
    /// Nanoseconds spent searching with the first tier so far.
    spent: AtomicU64,
    /// `None` inside: no literal is required (or the caller prefilters).
    filter: OnceLock<Option<Needles>>,
}

/// The literals a pattern requires (any one of them), looked for ignoring ASCII case. A
/// pattern has a handful: a scan per literal for its first byte costs nothing to build,
/// where an automaton per pattern took an eighth of a small log's run to build.
#[derive(Clone, Debug)]
struct Needles(Vec<Box<[u8]>>);

impl Needles {
    fn new(words: Vec<String>) -> Needles {
        Needles(
            words
                .into_iter()
                .map(|w| w.into_bytes().into_boxed_slice())
                .collect(),
        )
    }

    /// Whether `text` holds one of the literals.
    fn any_in(&self, text: &str) -> bool {
        self.0
            .iter()
            .any(|n| contains_ignore_ascii_case(text.as_bytes(), n))
    }
}

/// Whether `hay` holds `needle`, ASCII letters compared without case (other bytes as they are).
fn contains_ignore_ascii_case(hay: &[u8], needle: &[u8]) -> bool {
    let Some(&first) = needle.first() else {
        return true;
    };
    if hay.len() < needle.len() {
        return false;
    }
    let last_start = hay.len() - needle.len();
    let (lo, up) = (first.to_ascii_lowercase(), first.to_ascii_uppercase());
    let mut from = 0;
    while from <= last_start {
        let Some(at) = memchr::memchr2(lo, up, &hay[from..=last_start]) else {
            return false;
        };
        let start = from + at;
        if hay[start..start + needle.len()].eq_ignore_ascii_case(needle) {
            return true;
        }
        from = start + 1;
    }
    false
}

/// Time the first tier searches before the regex is compiled for speed: about
/// what `regex` takes to compile one of the built-in patterns (the median is a
/// third of a millisecond).
pub const PROMOTE_AFTER: std::time::Duration = std::time::Duration::from_micros(300);

impl Clone for LazyRegex {
    fn clone(&self) -> LazyRegex {
        LazyRegex {
            pattern: self.pattern.clone(),
            insensitive: self.insensitive,
            lite: self.lite.clone(),
            re: self.re.clone(),
            spent: AtomicU64::new(self.spent.load(Ordering::Relaxed)),
            filter: self.filter.clone(),
        }
    }
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("LazyRegex").field(&self.pattern).finish()
    }
}

fn never() -> Regex {
    Regex::new(r"[^\s\S]").expect("static pattern compiles")
}

/// The compiled tier a search runs on.
enum Tier<'r> {
    Lite(&'r regex_lite::Regex),
    Full(&'r Regex),
}

/// One match of a `LazyRegex`: the same for both tiers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Match<'h> {
    /// The matched text.
    text: &'h str,
    /// Its offset in the haystack.
    start: usize,
}

impl<'h> Match<'h> {
    /// The match's start offset in the haystack.
    pub fn start(&self) -> usize {
        self.start
    }
    /// The match's end offset in the haystack.
    pub fn end(&self) -> usize {
        self.start + self.text.len()
    }
    /// `start()..end()`.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start..self.end()
    }
    /// The matched text.
    pub fn as_str(&self) -> &'h str {
        self.text
    }
    /// Whether the match is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
    /// The matched text's length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }
}

impl<'h> From<regex::Match<'h>> for Match<'h> {
    fn from(m: regex::Match<'h>) -> Match<'h> {
        Match {
            text: m.as_str(),
            start: m.start(),
        }
    }
}

impl<'h> From<regex_lite::Match<'h>> for Match<'h> {
    fn from(m: regex_lite::Match<'h>) -> Match<'h> {
        Match {
            text: m.as_str(),
            start: m.start(),
        }
    }
}

/// The capture groups of one match of a `LazyRegex`, from either tier.
#[derive(Debug)]
pub struct Captures<'h>(CapturesInner<'h>);

#[derive(Debug)]
enum CapturesInner<'h> {
    Lite(regex_lite::Captures<'h>),
    Full(regex::Captures<'h>),
}

impl<'h> Captures<'h> {
    /// Group `i` (0 is the whole match), if it took part.
    pub fn get(&self, i: usize) -> Option<Match<'h>> {
        match &self.0 {
            CapturesInner::Lite(c) => c.get(i).map(Match::from),
            CapturesInner::Full(c) => c.get(i).map(Match::from),
        }
    }
    /// The group named `name`, if it took part.
    pub fn name(&self, name: &str) -> Option<Match<'h>> {
        match &self.0 {
            CapturesInner::Lite(c) => c.name(name).map(Match::from),
            CapturesInner::Full(c) => c.name(name).map(Match::from),
        }
    }
    /// The number of groups, the whole match included.
    pub fn len(&self) -> usize {
        match &self.0 {
            CapturesInner::Lite(c) => c.len(),
            CapturesInner::Full(c) => c.len(),
        }
    }
    /// Every group in order, `None` for one that did not take part.
    pub fn iter(&self) -> impl Iterator<Item = Option<Match<'h>>> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
    /// Never: a match has at least its whole-match group.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// `c[i]`: group `i`'s text; panics when the group did not take part (as `regex`'s).
impl std::ops::Index<usize> for Captures<'_> {
    type Output = str;
    fn index(&self, i: usize) -> &str {
        self.get(i)
            .unwrap_or_else(|| panic!("no group at index '{i}'"))
            .as_str()
    }
}

/// `c["name"]`: the named group's text; panics when it did not take part.
impl std::ops::Index<&str> for Captures<'_> {
    type Output = str;
    fn index(&self, name: &str) -> &str {
        self.name(name)
            .unwrap_or_else(|| panic!("no group named '{name}'"))
            .as_str()
    }
}

impl LazyRegex {
    /// Compiles now (for patterns from user files): the error is the caller's to report.
    pub fn checked(pattern: &str) -> Result<LazyRegex, regex::Error> {
        let re = Regex::new(&ascii_classes(pattern))?;
        Ok(LazyRegex {
            pattern: pattern.to_string(),
            insensitive: pattern.contains("(?i"),
            lite: OnceLock::from(None),
            re: OnceLock::from(re),
            spent: AtomicU64::new(0),
            filter: OnceLock::from(None),
        })
    }

    /// Compiles on first use (for built-in patterns, linted at test time).
    pub fn trusted(pattern: &str) -> LazyRegex {
        LazyRegex {
            pattern: pattern.to_string(),
            insensitive: pattern.contains("(?i"),
            lite: OnceLock::new(),
            re: OnceLock::new(),
            spent: AtomicU64::new(0),
            filter: OnceLock::new(),
        }
    }

    /// Compiles on first use, with the literals a build script worked out for it
    /// (`crate::literals::needles` of the pattern; `None`: it has none and is always run).
    pub fn trusted_with_needles(pattern: &str, needles: Option<&[&str]>) -> LazyRegex {
        let words = needles.map(|w| Needles::new(w.iter().map(|s| s.to_string()).collect()));
        LazyRegex {
            filter: OnceLock::from(words),
            ..LazyRegex::trusted(pattern)
        }
    }

    /// Compiles on first use, with no prefilter of its own (the caller has one).
    pub fn prefiltered(pattern: &str) -> LazyRegex {
        LazyRegex {
            filter: OnceLock::from(None),
            ..LazyRegex::trusted(pattern)
        }
    }

    /// Whether `text` may hold a match: false only when it is not compiled yet and
    /// `text` lacks every required literal.
    fn may_match(&self, text: &str) -> bool {
        if self.re.get().is_some() {
            return true;
        }
        let filter = self
            .filter
            .get_or_init(|| crate::literals::needles(&self.pattern).map(Needles::new));
        filter.as_ref().is_none_or(|n| n.any_in(text))
    }

    /// The tier to search with: the second once compiled, or once the first has
    /// spent `PROMOTE_AFTER`; else the first (compiled now if need be).
    fn tier(&self, text: &str) -> Tier<'_> {
        if let Some(re) = self.re.get() {
            return Tier::Full(re);
        }
        if self.spent.load(Ordering::Relaxed) < PROMOTE_AFTER.as_nanos() as u64
            && lite_fits(self.insensitive, text)
        {
            if let Some(lite) = self.lite() {
                return Tier::Lite(lite);
            }
        }
        Tier::Full(self.get())
    }

    fn lite(&self) -> Option<&regex_lite::Regex> {
        self.lite
            .get_or_init(|| {
                regex_lite::Regex::new(&self.pattern)
                    .ok()
                    .filter(|_| lite_takes(&self.pattern))
            })
            .as_ref()
    }

    /// Runs one search on the first tier, charging its time.
    fn timed<T>(&self, search: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = search();
        let ns = u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.spent.fetch_add(ns, Ordering::Relaxed);
        out
    }

    /// Whether `text` holds a match.
    pub fn is_match(&self, text: &str) -> bool {
        self.may_match(text)
            && match self.tier(text) {
                Tier::Lite(r) => self.timed(|| r.is_match(text)),
                Tier::Full(r) => r.is_match(text),
            }
    }

    /// The leftmost-first match in `text`.
    pub fn find<'h>(&self, text: &'h str) -> Option<Match<'h>> {
        if !self.may_match(text) {
            return None;
        }
        match self.tier(text) {
            Tier::Lite(r) => self.timed(|| r.find(text).map(Match::from)),
            Tier::Full(r) => r.find(text).map(Match::from),
        }
    }

    /// The groups of the leftmost-first match in `text`.
    pub fn captures<'h>(&self, text: &'h str) -> Option<Captures<'h>> {
        if !self.may_match(text) {
            return None;
        }
        match self.tier(text) {
            Tier::Lite(r) => {
                self.timed(|| r.captures(text).map(|c| Captures(CapturesInner::Lite(c))))
            }
            Tier::Full(r) => r.captures(text).map(|c| Captures(CapturesInner::Full(c))),
        }
    }

    /// Every non-overlapping match in `text`, left to right (on the first tier,
    /// found at once, so that their search is charged).
    pub fn find_iter<'r, 'h>(&'r self, text: &'h str) -> Box<dyn Iterator<Item = Match<'h>> + 'r>
    where
        'h: 'r,
    {
        if !self.may_match(text) {
            return Box::new(std::iter::empty());
        }
        match self.tier(text) {
            Tier::Lite(r) => {
                let all: Vec<Match<'h>> =
                    self.timed(|| r.find_iter(text).map(Match::from).collect());
                Box::new(all.into_iter())
            }
            Tier::Full(r) => Box::new(r.find_iter(text).map(Match::from)),
        }
    }

    /// The captures of every non-overlapping match in `text`, left to right (on
    /// the first tier, found at once, so that their search is charged).
    pub fn captures_iter<'r, 'h>(
        &'r self,
        text: &'h str,
    ) -> Box<dyn Iterator<Item = Captures<'h>> + 'r>
    where
        'h: 'r,
    {
        if !self.may_match(text) {
            return Box::new(std::iter::empty());
        }
        match self.tier(text) {
            Tier::Lite(r) => {
                let all: Vec<Captures<'h>> = self.timed(|| {
                    r.captures_iter(text)
                        .map(|c| Captures(CapturesInner::Lite(c)))
                        .collect()
                });
                Box::new(all.into_iter())
            }
            Tier::Full(r) => Box::new(
                r.captures_iter(text)
                    .map(|c| Captures(CapturesInner::Full(c))),
            ),
        }
    }

    /// The names of the capture groups, in order (`None` for an unnamed group;
    /// the first is the whole match).
    pub fn capture_names(&self) -> Vec<Option<&str>> {
        match (self.re.get(), self.lite()) {
            (None, Some(l)) => l.capture_names().collect(),
            _ => self.get().capture_names().collect(),
        }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The second tier, compiled now if it is not yet.
    pub fn get(&self) -> &Regex {
        self.re.get_or_init(|| {
            Regex::new(&ascii_classes(&self.pattern)).unwrap_or_else(|e| {
                debug_assert!(false, "a built-in pattern does not compile: {e}");
                never()
            })
        })
    }

    /// Whether either tier is compiled.
    pub fn is_compiled(&self) -> bool {
        self.re.get().is_some() || self.lite.get().is_some_and(Option::is_some)
    }

    /// Whether the second tier is compiled.
    pub fn is_promoted(&self) -> bool {
        self.re.get().is_some()
    }
}

/// Whether `regex-lite` reads `pattern` as `regex` does once its classes are
/// made ASCII. Its case-insensitive flag folds ASCII letters only, where
/// `regex`'s folds Unicode: a `(?i)` pattern with a non-ASCII letter goes to
/// `regex` (and `lite_fits` keeps the text apart that folds to ASCII).
fn lite_takes(pattern: &str) -> bool {
    !pattern.contains("(?i") || pattern.is_ascii()
}

/// Whether the first tier searches `text` as the second would: always, but for
/// a case-insensitive pattern on text holding one of the two non-ASCII letters
/// that Unicode folds to an ASCII one (the Kelvin sign to `k`, the long s to `s`).
fn lite_fits(insensitive: bool, text: &str) -> bool {
    !insensitive || text.is_ascii() || !text.contains(['\u{212A}', '\u{017F}'])
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

    /// Builds the literal prefilter now (on a spare core, before the first line needs it).
    pub fn warm(&self) {
        self.prefilter();
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
            // The literals are lowercase and the text is lowercased before the search: an
            // automaton that folds case itself takes four times as long to build, and
            // building it was a tenth of a small log's run.
            let ac = aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
                .build(lits.iter().map(|l| l.to_ascii_lowercase()));
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

    /// The patterns whose required literals `text` holds (or that have none), ascending
    /// and once each: a handful per line, where a flag per pattern cleared for every line
    /// cost a tenth of reading a small log.
    fn candidates(&self, text: &str) -> Vec<usize> {
        let p = self.prefilter();
        let mut candidate = p.always.clone();
        let lower: std::borrow::Cow<'_, str> = if text.bytes().any(|b| b.is_ascii_uppercase()) {
            text.to_ascii_lowercase().into()
        } else {
            text.into()
        };
        for m in p.ac.find_overlapping_iter(lower.as_ref()) {
            candidate.extend_from_slice(&p.owners[m.pattern().as_usize()]);
        }
        candidate.sort_unstable();
        candidate.dedup();
        candidate
    }

    /// The indices of the entries that match `text`, ascending.
    pub fn matches(&self, text: &str) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for i in self.candidates(text) {
            let entry = self.owner[i];
            if out.last() != Some(&entry) && self.res[i].is_match(text) {
                out.push(entry);
            }
        }
        out
    }

    /// The first entry (lowest index) that matches `text`: the entries' patterns are run in
    /// order and the search stops at the first that matches.
    pub fn first(&self, text: &str) -> Option<usize> {
        self.candidates(text)
            .into_iter()
            .find(|&i| self.res[i].is_match(text))
            .map(|i| self.owner[i])
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
        r"(a|b)",
        r"(?P<n>\d+)",
        r"(x)?",
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

    /// ASCII text with non-ASCII letters in it, two of which fold to ASCII ones.
    fn any_haystack() -> impl Strategy<Value = String> {
        prop::collection::vec(
            prop::sample::select(&["é", "\u{212A}", "\u{017F}", "ß", "→", "K"][..]),
            0..3,
        )
        .prop_flat_map(|extra| {
            haystack().prop_map(move |h| {
                let mut out = h;
                for (i, e) in extra.iter().enumerate() {
                    let at = (i * 7) % (out.len() + 1);
                    let at = (0..=at)
                        .rev()
                        .find(|&j| out.is_char_boundary(j))
                        .unwrap_or(0);
                    out.insert_str(at, e);
                }
                out
            })
        })
    }

    proptest! {
        /// The needle scan finds a literal exactly where a search of both texts with their
        /// ASCII letters lower-cased does.
        #[test]
        fn the_needle_scan_agrees_with_a_lowercased_search(h in any_haystack(), n in any_haystack()) {
            let lower = |s: &str| s.to_ascii_lowercase();
            prop_assert_eq!(
                contains_ignore_ascii_case(h.as_bytes(), n.as_bytes()),
                lower(&h).contains(&lower(&n))
            );
        }

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

    proptest! {
        /// The first tier (`regex-lite`) and the second (`regex`, classes made
        /// ASCII) find the same matches and the same groups, on any text.
        #[test]
        fn both_tiers_match_alike(p in pattern(), h in any_haystack()) {
            prop_assume!(Regex::new(&p).is_ok());
            let lite = LazyRegex::prefiltered(&p);
            let full = LazyRegex::prefiltered(&p);
            full.get();
            let spans = |r: &LazyRegex| r.find_iter(&h).map(|m| m.range()).collect::<Vec<_>>();
            let groups = |r: &LazyRegex| {
                r.captures_iter(&h)
                    .map(|c| c.iter().map(|m| m.map(|m| m.range())).collect::<Vec<_>>())
                    .collect::<Vec<_>>()
            };
            prop_assert_eq!(lite.is_match(&h), full.is_match(&h), "{} on {:?}", p, h);
            prop_assert_eq!(spans(&lite), spans(&full), "{} on {:?}", p, h);
            prop_assert_eq!(groups(&lite), groups(&full), "{} on {:?}", p, h);
            prop_assert_eq!(lite.capture_names(), full.capture_names());
            prop_assert!(full.is_promoted());
        }
    }

    #[test]
    fn a_regex_starts_on_the_first_tier_and_is_promoted_once_it_has_searched_enough() {
        let re = LazyRegex::trusted(r"(?i)error: .{1,200} was not declared");
        assert!(re.is_match("ERROR: x was not declared"));
        assert!(re.is_compiled() && !re.is_promoted());
        let line = "error: ".repeat(600) + "y was not declared";
        let want = Regex::new(re.as_str())
            .unwrap()
            .find(&line)
            .map(|m| m.range());
        assert!(want.is_some());
        let mut searches = 0;
        while !re.is_promoted() {
            assert_eq!(re.find(&line).map(|m| m.range()), want);
            searches += 1;
            assert!(searches < 100_000, "never promoted");
        }
        assert_eq!(re.find(&line).map(|m| m.range()), want);
        assert_eq!(re.captures(&line).map(|c| c.len()), Some(1));
    }

    #[test]
    fn case_folding_to_ascii_letters_is_left_to_the_second_tier() {
        // The Kelvin sign folds to `k` in Unicode: the first tier would not see it.
        let re = LazyRegex::prefiltered(r"(?i)kernel");
        assert!(re.is_match("\u{212A}ernel"));
        let re = LazyRegex::prefiltered(r"(?i)kernel");
        assert!(re.is_match("KERNEL"));
        assert!(!re.is_promoted());
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
    fn needles_come_from_inside_a_pattern_too() {
        // (pattern, its needles joined with `|`, or None)
        let cases: &[(&str, Option<&str>)] = &[
            // Between two classes, where neither end has a literal.
            (
                r"'[\w.]+' object has no attribute '\w+'",
                Some("' object has no attribute '"),
            ),
            // A run of known parts joined: a small alternation, a case pair, the words around.
            (
                r"(?i)# (?:cuda|gpu) blocks: 0\b",
                Some("# cuda blocks: 0|# gpu blocks: 0"),
            ),
            (r"[Kk]illed by signal \d+", Some("killed by signal ")),
            // An optional part holds nothing; the longest required word wins.
            (r"^\s*(?:\S+: line \d+:\s+)?Killed(?:\s|$)", Some("killed")),
            // An alternation holds one of its branches' words, or nothing when one has none.
            (
                r"(?:cannot find|unable to locate) \S+",
                Some("cannot find |unable to locate "),
            ),
            (r"(?:cannot find|\d+) \S+", None),
        ];
        for (pattern, want) in cases {
            let got = needles(pattern).map(|w| w.join("|"));
            assert_eq!(got.as_deref(), *want, "{pattern}");
        }
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
