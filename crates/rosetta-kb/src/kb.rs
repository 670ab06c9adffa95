//! The knowledge base as loaded: the embedded rules plus any `--kb DIR`
//! folders. A later rule with the same id replaces an earlier one, so a user
//! can override a built-in rule.

use crate::error::KbError;
use crate::rule::Rule;
use rosetta_log::Vocabulary;
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_rules.rs"));
}

/// The built-in rule patterns, sorted, with the literals each needs (worked out by the
/// build script with `rosetta_log::literals::needles`).
pub(crate) fn embedded_needles() -> &'static [(&'static str, Option<&'static [&'static str]>)] {
    embedded::NEEDLES
}

/// Loaded rules, and the log vocabulary they come with.
#[derive(Debug, Clone, Default)]
pub struct KnowledgeBase {
    /// Rules, in load order.
    pub rules: Vec<Rule>,
    /// Vocabulary files from `--kb` folders (added to the built-in `kb/vocab/`).
    extra_vocab: Vec<(PathBuf, String)>,
    /// The compiled vocabulary, when `--kb` folders added to it.
    vocab: Option<&'static Vocabulary>,
    /// Whether `--kb` folders added rules or vocabulary (their literals join the scanner's).
    extended: bool,
}

impl KnowledgeBase {
    /// The built-in rules.
    pub fn embedded() -> Result<KnowledgeBase, KbError> {
        let mut kb = KnowledgeBase::default();
        for e in embedded::EMBEDDED {
            let path = PathBuf::from("kb/rules").join(e.rel);
            kb.add(Rule::parse_embedded(&path, e.toml, e.json, e.literals)?);
        }
        Ok(kb)
    }

    /// `literals()` of the built-in rules, read from the table the build script wrote,
    /// without loading the rules: the scanner can be built while they load.
    pub fn embedded_literals() -> Vec<String> {
        let mut out: Vec<String> = embedded::EMBEDDED
            .iter()
            .filter_map(|e| e.literals)
            .flatten()
            .map(|w| w.to_string())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The scanner for the built-in vocabulary and rules, from the word lists the build
    /// script worked out (`rosetta_log::scan_words`): only its automatons are built here.
    /// The same as `rosetta_log::Scanner::new(Vocabulary::embedded(), &embedded_literals())`.
    pub fn embedded_scanner() -> rosetta_log::Scanner {
        rosetta_log::Scanner::from_lists(
            embedded::SCAN_PATS,
            embedded::SCAN_KINDS,
            embedded::SCAN_ERROR_WORDS,
        )
    }

    /// The number of built-in rule files.
    pub fn embedded_count() -> usize {
        embedded::EMBEDDED.len()
    }

    /// Adds every `*.toml` under a folder (recursively): rules, and vocabulary files
    /// (those holding `[[signal]]`, `[[milestone]]`, ... tables).
    pub fn add_dir(&mut self, dir: &Path) -> Result<usize, KbError> {
        let mut files = Vec::new();
        collect(dir, &mut files)?;
        let n = files.len();
        self.extended |= n > 0;
        let mut vocab_added = false;
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|source| KbError::Read {
                path: f.clone(),
                source,
            })?;
            if Vocabulary::is_vocabulary(&text) {
                self.extra_vocab.push((f, text));
                vocab_added = true;
            } else {
                self.add(Rule::parse(&f, &text)?);
            }
        }
        if vocab_added {
            self.vocab = Some(Vocabulary::with_extra(self.extra_vocab.clone())?);
        }
        Ok(n)
    }

    /// The log scanner for these rules and this vocabulary: the built-in one from the build
    /// script's word lists (`embedded_scanner`, only its automatons built) unless `--kb`
    /// folders added words, then one worked out from the loaded rules. Every command that
    /// reads logs builds it once and gives each log `Scanner::fresh`.
    pub fn scanner(&self) -> rosetta_log::Scanner {
        if self.extended {
            rosetta_log::Scanner::new(self.vocabulary(), &self.literals())
        } else {
            Self::embedded_scanner()
        }
    }

    /// The log vocabulary: the built-in one, plus what `--kb` folders added.
    pub fn vocabulary(&self) -> &'static Vocabulary {
        self.vocab.unwrap_or_else(Vocabulary::embedded)
    }

    fn add(&mut self, rule: Rule) {
        if let Some(i) = self.rules.iter().position(|r| r.id() == rule.id()) {
            self.rules[i] = rule;
        } else {
            self.rules.push(rule);
        }
    }

    /// Literals the scanner should look for so that rule lines are kept.
    pub fn literals(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .rules
            .iter()
            .filter_map(|r| r.literals())
            .flatten()
            .collect();
        out.sort();
        out.dedup();
        out
    }
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), KbError> {
    let meta = std::fs::metadata(dir).map_err(|source| KbError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    if meta.is_file() {
        out.push(dir.to_path_buf());
        return Ok(());
    }
    let rd = std::fs::read_dir(dir).map_err(|source| KbError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect(&p, out)?;
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_time_needles_are_those_worked_out_at_run_time() {
        let table = embedded_needles();
        assert!(table.len() > 500, "{} patterns", table.len());
        assert!(
            table.windows(2).all(|w| w[0].0 < w[1].0),
            "sorted, no repeats"
        );
        for (p, n) in table {
            let built = n.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
            assert_eq!(built, rosetta_log::literals::needles(p), "{p}");
        }
    }

    #[test]
    fn built_in_rules_load_lazily_with_the_literals_of_a_checked_load() {
        let kb = KnowledgeBase::embedded().unwrap();
        assert_eq!(kb.rules.len(), KnowledgeBase::embedded_count());
        assert!(kb
            .rules
            .iter()
            .all(|r| r.lines.iter().all(|l| !l.is_compiled())));
        for e in embedded::EMBEDDED {
            let path = PathBuf::from("kb/rules").join(e.rel);
            let checked = Rule::parse(&path, e.toml).unwrap();
            let lazy = kb.rules.iter().find(|r| r.id() == checked.id()).unwrap();
            assert_eq!(lazy.literals(), checked.literals(), "{}", checked.id());
        }
        assert!(!kb.literals().is_empty());
        assert_eq!(KnowledgeBase::embedded_literals(), kb.literals());
    }

    #[test]
    fn the_scanner_words_worked_out_at_build_time_are_those_of_the_start_up() {
        let v = Vocabulary::embedded();
        let rules = KnowledgeBase::embedded_literals();
        let words = rosetta_log::scan_words::scan_words(&rosetta_log::scan_words::WordSources {
            serving: &v.scanner_serving,
            errors: &v.scanner_errors,
            signal_words: &v.signal_literals(),
            context: &v.scanner_context,
            milestone_words: &v.milestone_literals(),
            extra: &rules,
        });
        assert!(words.pats.len() > 1000, "{}", words.pats.len());
        assert_eq!(words.pats, embedded::SCAN_PATS);
        assert_eq!(words.kinds, embedded::SCAN_KINDS);
        assert_eq!(words.error_words, embedded::SCAN_ERROR_WORDS);
    }

    #[test]
    fn a_folders_rule_adds_its_literals_to_the_scanner() {
        let line = "zorblax qwvvx\n";
        let kept = |kb: &KnowledgeBase| {
            let out = kb.scanner().scan_reader(0, &mut line.as_bytes());
            out.records.iter().any(|r| r.text.contains("zorblax"))
        };
        let mut kb = KnowledgeBase::embedded().unwrap();
        // No built-in word is on the line: it is only counted.
        assert!(!kept(&kb));
        let dir = std::env::temp_dir().join(format!("rosetta-kb-scanner-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("mine.toml"),
            "id = \"mine\"\ncause = \"kernel-bug\"\nweight = 0.9\nsummary = \"ours\"\nreferences = [\"internal\"]\n[when]\nlines = ['zorblax (?P<k>qw\\w+)']\n",
        )
        .unwrap();
        kb.add_dir(&dir).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        // The folder's rule needs the line, so the scanner now keeps it.
        assert!(kept(&kb));
    }

    #[test]
    fn every_fact_is_asked_by_some_rule() {
        // A fact no rule asks is code no log can reach: drop it, or write its rule.
        let kb = KnowledgeBase::embedded().unwrap();
        for fact in crate::fact::Fact::ALL {
            let asked = kb.rules.iter().any(|r| {
                let w = &r.def.when;
                w.facts.contains(&fact)
                    || w.not_facts.contains(&fact)
                    || r.def
                        .preflight
                        .as_ref()
                        .is_some_and(|p| p.facts.contains(&fact))
            });
            assert!(asked, "no built-in rule asks the fact `{fact}`");
        }
    }
}
