//! The case library: the embedded cases (compiled from `corpus/cases` by
//! `build.rs`), a team's own cases added with `--cases DIR`, batches left out
//! for honest scoring, and the search that ranks cases by the similarity of
//! their signature to a log's. What a similar case means for the causes is
//! `blend.rs`'s business.

use crate::case::{self, Case};
use crate::signature::{self, Signature};
use crate::vector::{self, Counts, Features, Index};
use crate::CasesError;
use rosetta_schema::{Cause, FailureClass, Phase};
use std::path::Path;
use std::sync::OnceLock;

/// An embedded case as `build.rs` writes it: statics, so that a start parses nothing.
struct Embedded {
    id: &'static str,
    source: &'static str,
    class: FailureClass,
    phase: Phase,
    cause: Cause,
    also: &'static [Cause],
    fix: &'static str,
    sig: &'static str,
}

impl Embedded {
    fn case(&self) -> Case {
        Case {
            id: self.id.to_string(),
            labels: case::Labels {
                source: self.source.to_string(),
                class: self.class,
                phase: self.phase,
                cause: self.cause,
                also: self.also.to_vec(),
                fix: self.fix.to_string(),
            },
            sig: self.sig.to_string(),
        }
    }
}

/// The embedded cases (not compressed: inflating them took a fifth of the start-up of
/// `diagnose` on a small log, for 1.4 MB of binary saved).
const EMBEDDED: &[Embedded] = include!(concat!(env!("OUT_DIR"), "/library.rs"));
/// The term counts of the embedded cases' signatures (default features), in case order.
const EMBEDDED_TERMS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/terms.bin"));
/// The embedded library's index, weighed (`Index::pack`).
const EMBEDDED_INDEX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/index.bin"));

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
    /// Each case's term counts with the default features, in case order, when
    /// known: computed by `build.rs` for the embedded cases (unpacked when the
    /// library first changes), by `add_dir` for the cases it adds; `None` for a
    /// library made from cases.
    counts: Option<Vec<Counts>>,
    /// The cases are the embedded ones, all of them: their index is `EMBEDDED_INDEX`
    /// and their term counts are still packed in `EMBEDDED_TERMS`.
    pristine: bool,
    features: Features,
    index: OnceLock<Index>,
}

impl Library {
    /// The library compiled into the binary.
    pub fn embedded() -> Result<Library, CasesError> {
        let mut lib = Library::from_cases(EMBEDDED.iter().map(Embedded::case).collect());
        lib.pristine = true;
        Ok(lib)
    }

    /// A library of these cases.
    pub fn from_cases(cases: Vec<Case>) -> Library {
        Library {
            cases,
            counts: None,
            pristine: false,
            features: Features::default(),
            index: OnceLock::new(),
        }
    }

    /// Before the library changes: the embedded term counts, unpacked.
    fn unpack_counts(&mut self) -> Result<(), CasesError> {
        if self.pristine {
            let counts =
                vector::unpack_counts(EMBEDDED_TERMS, self.cases.len()).ok_or_else(|| {
                    CasesError::Embedded("the term counts do not fit the cases".into())
                })?;
            self.counts = Some(counts);
            self.pristine = false;
        }
        Ok(())
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
        self.unpack_counts()?;
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
            // A case of the same id is replaced; the embedded counts follow, and only the
            // added case is tokenised (from its text form, as `build.rs` does).
            if let Some(i) = self.cases.iter().position(|c| c.id == id) {
                self.cases.remove(i);
                if let Some(counts) = &mut self.counts {
                    counts.remove(i);
                }
            }
            let sig = sig.to_text();
            if let Some(counts) = &mut self.counts {
                counts.push(vector::counts(
                    &Signature::from_text(&sig),
                    Features::default(),
                ));
            }
            self.cases.push(Case { id, labels, sig });
            n += 1;
        }
        self.index = OnceLock::new();
        Ok(n)
    }

    /// Leaves out every case whose batch (the id before its first `-`) or id is
    /// one of `names`; returns how many left.
    pub fn exclude(&mut self, names: &[&str]) -> usize {
        let before = self.cases.len();
        let keep = |c: &Case| !names.iter().any(|n| *n == c.batch() || *n == c.id);
        if self.cases.iter().all(keep) {
            return 0;
        }
        if self.unpack_counts().is_err() {
            // Not the counts `build.rs` wrote: weigh the rest from their signatures.
            self.counts = None;
            self.pristine = false;
        }
        if let Some(counts) = &mut self.counts {
            let mut kept = self.cases.iter().map(keep);
            counts.retain(|_| kept.next().unwrap_or(false));
        }
        self.cases.retain(keep);
        self.index = OnceLock::new();
        before - self.cases.len()
    }

    /// Builds the vectors of the library now (they are built on first use otherwise).
    pub fn warm(&self) {
        self.index();
    }

    fn index(&self) -> &Index {
        self.index.get_or_init(|| match &self.counts {
            _ if self.pristine && self.features == Features::default() => {
                Index::unpack(EMBEDDED_INDEX, self.cases.len()).unwrap_or_else(|| {
                    let sigs: Vec<Signature> = self.cases.iter().map(Case::signature).collect();
                    Index::build(&sigs, self.features)
                })
            }
            Some(counts) if self.features == Features::default() => {
                Index::from_counts(counts, self.features)
            }
            _ => {
                let sigs: Vec<Signature> = self.cases.iter().map(Case::signature).collect();
                Index::build(&sigs, self.features)
            }
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

    /// The library's term counts are there, one per case, and equal what each
    /// case's signature gives now.
    fn assert_counts_follow_signatures(lib: &Library) {
        let counts = lib.counts.as_ref().expect("the term counts are kept");
        assert_eq!(counts.len(), lib.cases().len());
        for (c, n) in lib.cases().iter().zip(counts) {
            assert_eq!(
                *n,
                vector::counts(&c.signature(), Features::default()),
                "{}",
                c.id
            );
        }
    }

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
        // Upstream cases cite their thread; our probe runs (h2 to h9) name their program.
        for b in ["h3", "h4", "h5", "h6", "h7", "h8", "h9"] {
            assert!(
                lib.cases().iter().any(|c| c.batch() == b),
                "no case of batch {b}"
            );
        }
        assert!(lib.cases().iter().all(|c| {
            let src = &c.labels.source;
            !c.sig.is_empty() && src.starts_with("http") || src.starts_with("rosetta probe ")
        }));
    }

    #[test]
    fn the_embedded_term_counts_are_what_the_signatures_give_now() {
        let mut lib = Library::embedded().unwrap();
        assert!(
            lib.counts.is_none(),
            "unpacked only when the library changes"
        );
        lib.unpack_counts().unwrap();
        assert_counts_follow_signatures(&lib);
        // And the index built from them ranks as one built from the signatures.
        let mut fresh = Library::from_cases(lib.cases().to_vec());
        fresh.exclude(&["rx"]);
        let mut packed = Library::embedded().unwrap();
        packed.exclude(&["rx"]);
        let top = |lib: &Library, q: &Case| -> Vec<(String, f32)> {
            let hits = lib.search(&q.signature());
            hits.iter()
                .take(5)
                .map(|h| (h.case.id.clone(), h.score))
                .collect()
        };
        for q in lib.cases().iter().filter(|c| c.batch() == "rx").take(10) {
            let a = top(&fresh, q);
            assert_eq!(a, top(&packed, q), "{}", q.id);
            assert!(!a.is_empty());
        }
    }

    #[test]
    fn added_cases_keep_the_embedded_counts_and_rank_as_a_fresh_library() {
        let dir = tempfile::tempdir().unwrap();
        let embedded = Library::embedded().unwrap();
        // One new case, and one that replaces an embedded case of the same id.
        let replaced = embedded.cases()[3].id.clone();
        for (id, log) in [
            ("team-001", "Traceback (most recent call last):\n  File \"/x/serve.py\", line 3, in run\n    x.cuda()\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"),
            (replaced.as_str(), "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"),
        ] {
            let d = dir.path().join(id);
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("log.txt"), log).unwrap();
            std::fs::write(
                d.join("expect.toml"),
                "source = \"team\"\nclass = \"gpu-oom\"\nphase = \"decode\"\ncause = \"memory-budget\"\n",
            )
            .unwrap();
        }
        let mut lib = Library::embedded().unwrap();
        assert_eq!(lib.add_dir(dir.path()).unwrap(), 2);
        assert_eq!(lib.cases().len(), embedded.cases().len() + 1);
        assert_counts_follow_signatures(&lib);
        let fresh = Library::from_cases(lib.cases().to_vec());
        let q = lib
            .cases()
            .iter()
            .find(|c| c.id == "team-001")
            .unwrap()
            .signature();
        let ids = |l: &Library| -> Vec<String> {
            l.search(&q)
                .iter()
                .take(3)
                .map(|h| h.case.id.clone())
                .collect()
        };
        assert_eq!(ids(&lib)[0], "team-001");
        assert_eq!(ids(&lib), ids(&fresh));
    }

    #[test]
    fn the_embedded_index_is_the_one_its_term_counts_weigh_to() {
        let lib = Library::embedded().unwrap();
        let ready = Index::unpack(EMBEDDED_INDEX, lib.cases().len()).expect("it unpacks");
        let counts = vector::unpack_counts(EMBEDDED_TERMS, lib.cases().len()).unwrap();
        assert_eq!(ready, Index::from_counts(&counts, Features::default()));
        // Packing is the inverse of unpacking; a different document count, a cut, a
        // wrong magic or trailing bytes are refused.
        assert_eq!(ready.pack().as_deref(), Some(EMBEDDED_INDEX));
        let n = lib.cases().len();
        assert!(Index::unpack(EMBEDDED_INDEX, n - 1).is_none());
        assert!(Index::unpack(&EMBEDDED_INDEX[..EMBEDDED_INDEX.len() - 3], n).is_none());
        assert!(Index::unpack(&EMBEDDED_INDEX[1..], n).is_none());
        let mut longer = EMBEDDED_INDEX.to_vec();
        longer.push(0);
        assert!(Index::unpack(&longer, n).is_none());
        // A library with a batch left out is weighed again, and ranks differently.
        let mut less = Library::embedded().unwrap();
        assert_eq!(less.exclude(&["no-such-batch"]), 0);
        assert!(less.pristine);
        assert!(less.exclude(&["rx"]) > 0);
        assert!(!less.pristine && less.counts.is_some());
    }

    #[test]
    fn term_counts_survive_packing_and_bad_bytes_are_refused() {
        let docs = vec![vec![(1, 2), (7, 1)], vec![], vec![(3, 4)]];
        let bytes = vector::pack_counts(&docs);
        assert_eq!(vector::unpack_counts(&bytes, 3), Some(docs));
        assert_eq!(vector::unpack_counts(&bytes, 2), None);
        assert_eq!(vector::unpack_counts(&bytes[..bytes.len() - 1], 3), None);
        let mut unsorted = vector::pack_counts(&[vec![(7, 1), (1, 2)]]);
        assert_eq!(vector::unpack_counts(&unsorted, 1), None);
        unsorted.truncate(0);
        assert_eq!(vector::unpack_counts(&[255, 255, 255, 255], 1), None);
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
