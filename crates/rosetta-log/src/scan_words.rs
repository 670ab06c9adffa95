//! The scanner's word lists: which literals its automaton looks for, what a hit on each
//! means, and which words make a kept line an error line.
//!
//! Plain `std` code, shared with `rosetta-kb`'s build script (`#[path]`), which works
//! out the lists of the built-in vocabulary and rules once per build; `Scanner::new`
//! runs the same function at start-up only when `--kb` folders add words.

use std::collections::HashSet;

/// The kind code of a word whose hit marks an error line (`ScanWords::kinds`).
pub const KIND_ERROR: u32 = u32::MAX;
/// The kind code of a word whose hit makes a line worth keeping, not an error line.
pub const KIND_CONTEXT: u32 = u32::MAX - 1;

/// The scanner's words, in automaton order (leftmost-first: an earlier word wins a tie).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanWords {
    /// The automaton's words: the serving-loop words first, then error words, then context.
    pub pats: Vec<String>,
    /// Per word: the index of its serving-loop word, or `KIND_ERROR`, or `KIND_CONTEXT`.
    pub kinds: Vec<u32>,
    /// The words that make a kept line an error line, none holding another.
    pub error_words: Vec<String>,
}

/// The inputs, each list in vocabulary order.
pub struct WordSources<'a> {
    /// Serving-loop words (`[scanner] serving`).
    pub serving: &'a [String],
    /// Error words (`[scanner] error_words`, `bpe_leak_words`).
    pub errors: &'a [String],
    /// The literals the signals, banners and the wrong-output shape need.
    pub signal_words: &'a [String],
    /// Context words (`[scanner] context_words`).
    pub context: &'a [String],
    /// The milestones' prefix literals.
    pub milestone_words: &'a [String],
    /// The rules' line-pattern literals.
    pub extra: &'a [String],
}

/// Works out the scanner's word lists. Every literal a signal needs is an error word too,
/// so no signal can miss its line; a word that holds a shorter word of its own list is
/// left out (it finds no line the shorter one does not), except serving-loop words, which
/// are counted by which one hit.
pub fn scan_words(src: &WordSources<'_>) -> ScanWords {
    let mut pats: Vec<&str> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    let mut kinds = Vec::new();
    for (i, s) in src.serving.iter().enumerate() {
        pats.push(s);
        seen.insert(s);
        kinds.push(u32::try_from(i).unwrap_or(KIND_CONTEXT - 1));
    }
    for s in src.errors.iter().chain(src.signal_words) {
        if seen.insert(s) {
            pats.push(s);
            kinds.push(KIND_ERROR);
        }
    }
    for s in src
        .context
        .iter()
        .chain(src.milestone_words)
        .chain(src.extra)
    {
        if !s.is_empty() && seen.insert(s) {
            pats.push(s);
            kinds.push(KIND_CONTEXT);
        }
    }
    let serving = src.serving.len();
    let drop = contained_elsewhere(&pats, |i| i >= serving);
    let (pats, kinds): (Vec<String>, Vec<u32>) = pats
        .into_iter()
        .zip(kinds)
        .zip(drop)
        .filter(|(_, drop)| !drop)
        .map(|((p, k), _)| (p.to_string(), k))
        .unzip();
    let mut error_words: Vec<&str> = src
        .errors
        .iter()
        .chain(src.signal_words)
        .map(String::as_str)
        .collect();
    error_words.sort_unstable();
    error_words.dedup();
    let drop = contained_elsewhere(&error_words, |_| true);
    let error_words = error_words
        .into_iter()
        .zip(drop)
        .filter(|(_, d)| !d)
        .map(|(w, _)| w.to_string())
        .collect();
    ScanWords {
        pats,
        kinds,
        error_words,
    }
}

/// Which words (among those `eligible`) hold another eligible word of at most 8 bytes: an
/// automaton without them matches on exactly the same texts. Words of up to 8 bytes are keys
/// of one hash set per length, and each word's substrings of those lengths are looked up, so
/// the cost is a few lookups per byte, not a comparison of every pair.
pub fn contained_elsewhere<S: AsRef<str>>(
    words: &[S],
    eligible: impl Fn(usize) -> bool,
) -> Vec<bool> {
    const KEY: usize = 8;
    fn pack(b: &[u8]) -> u64 {
        b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
    }
    let mut keys: [HashSet<u64>; KEY + 1] = Default::default();
    for (i, w) in words.iter().enumerate() {
        let b = w.as_ref().as_bytes();
        if eligible(i) && !b.is_empty() && b.len() <= KEY {
            keys[b.len()].insert(pack(b));
        }
    }
    let lens: Vec<usize> = (1..=KEY).filter(|&l| !keys[l].is_empty()).collect();
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let b = w.as_ref().as_bytes();
            eligible(i)
                && lens
                    .iter()
                    .take_while(|&&l| l < b.len())
                    .any(|&l| b.windows(l).any(|sub| keys[l].contains(&pack(sub))))
        })
        .collect()
}
