//! The case library: the embedded cases (compiled from `corpus/cases` by
//! `build.rs`), a team's own cases added with `--cases DIR`, batches left out
//! for honest scoring, and the search that ranks cases by the similarity of
//! their signature to a log's. What a similar case means for the causes is
//! `blend.rs`'s business.

use crate::case::{self, Case};
use crate::signature::{self, Signature};
use crate::vector::{Features, Index};
use crate::CasesError;
use std::io::Read as _;
use std::path::Path;
use std::sync::OnceLock;

const EMBEDDED: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/library.json.deflate"));

/// A case found similar to a log.
#[derive(Debug, Clone, Copy)]
pub struct Hit<'a> {
    /// The case.
    pub case: &'a Case,
    /// Similarity, 0..=1.
    pub score: f32,
}

/// Labelled cases and their index.
#[derive(Debug)]
pub struct Library {
    cases: Vec<Case>,
    features: Features,
    index: OnceLock<Index>,
}

impl Library {
    /// The library compiled into the binary.
    pub fn embedded() -> Result<Library, CasesError> {
        let mut json = Vec::new();
        flate2::read::DeflateDecoder::new(EMBEDDED)
            .read_to_end(&mut json)
            .map_err(|e| CasesError::Embedded(e.to_string()))?;
        let cases: Vec<Case> =
            serde_json::from_slice(&json).map_err(|e| CasesError::Embedded(e.to_string()))?;
        Ok(Library::from_cases(cases))
    }

    /// A library of these cases.
    pub fn from_cases(cases: Vec<Case>) -> Library {
        Library {
            cases,
            features: Features::default(),
            index: OnceLock::new(),
        }
    }

    /// An empty library.
    pub fn empty() -> Library {
        Library::from_cases(Vec::new())
    }

    /// Scores with other features (for measurement).
    pub fn with_features(mut self, features: Features) -> Library {
        self.features = features;
        self.index = OnceLock::new();
        self
    }

    /// The cases.
    pub fn cases(&self) -> &[Case] {
        &self.cases
    }

    /// Adds every case folder under `dir` (a folder holding `log.txt` and
    /// `expect.toml`, as in `corpus/cases`); a case with the id of one already
    /// held replaces it. Returns how many were added. Each log is read the way
    /// `diagnose` reads one, so its signature is cut by the same code.
    pub fn add_dir(&mut self, dir: &Path) -> Result<usize, CasesError> {
        let dirs = case::case_dirs(dir).map_err(|e| CasesError::Read {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let mut n = 0;
        for d in dirs {
            let expect = d.join("expect.toml");
            let labels = case::read_labels(&expect).map_err(|message| CasesError::Labels {
                path: expect.clone(),
                message,
            })?;
            if labels.class == rosetta_schema::FailureClass::None {
                continue;
            }
            let log = d.join("log.txt");
            let facts = rosetta_log::read_logs(
                std::slice::from_ref(&log),
                rosetta_log::Vocabulary::embedded(),
                &[],
                &[],
            )
            .map_err(|e| CasesError::Read {
                path: log.clone(),
                message: e.to_string(),
            })?;
            let sig = signature::of(&facts);
            if sig.is_empty() {
                continue;
            }
            let id = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            self.cases.retain(|c| c.id != id);
            self.cases.push(Case {
                id,
                labels,
                sig: sig.to_text(),
            });
            n += 1;
        }
        self.index = OnceLock::new();
        Ok(n)
    }

    /// Leaves out every case whose batch (the id before its first `-`) or id is
    /// one of `names`; returns how many left.
    pub fn exclude(&mut self, names: &[&str]) -> usize {
        let before = self.cases.len();
        self.cases
            .retain(|c| !names.iter().any(|n| *n == c.batch() || *n == c.id));
        self.index = OnceLock::new();
        before - self.cases.len()
    }

    /// Builds the vectors of the library now (they are built on first use otherwise).
    pub fn warm(&self) {
        self.index();
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let sigs: Vec<Signature> = self.cases.iter().map(Case::signature).collect();
            Index::build(&sigs, self.features)
        })
    }

    /// Every case with a positive similarity to `sig`, best first (ties by id).
    pub fn search(&self, sig: &Signature) -> Vec<Hit<'_>> {
        if sig.is_empty() || self.cases.is_empty() {
            return Vec::new();
        }
        let scores = self.index().scores(sig);
        let mut hits: Vec<Hit> = self
            .cases
            .iter()
            .zip(scores)
            .filter(|(_, s)| *s > 0.0)
            .map(|(case, score)| Hit { case, score })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.case.id.cmp(&b.case.id)));
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_library_loads_and_holds_every_batch() {
        let lib = Library::embedded().unwrap();
        assert!(lib.cases().len() > 200, "{}", lib.cases().len());
        for b in ["h2", "rx", "ry", "rz", "rw", "rv", "ru"] {
            assert!(
                lib.cases().iter().any(|c| c.batch() == b),
                "no case of batch {b}"
            );
        }
        assert!(
            lib.cases()
                .iter()
                .all(|c| !c.sig.is_empty() && c.labels.source.starts_with("http")
                    || c.batch() == "h2")
        );
    }

    #[test]
    fn excluding_a_batch_removes_all_of_it_and_only_it() {
        let mut lib = Library::embedded().unwrap();
        let n = lib.cases().len();
        let rx = lib.cases().iter().filter(|c| c.batch() == "rx").count();
        assert_eq!(lib.exclude(&["rx"]), rx);
        assert_eq!(lib.cases().len(), n - rx);
        assert!(lib.cases().iter().all(|c| c.batch() != "rx"));
        assert_eq!(lib.exclude(&["ry-001"]), 1);
    }
}
