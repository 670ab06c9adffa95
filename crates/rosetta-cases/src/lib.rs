//! The case library: labelled real reports (`corpus/cases`, compiled into the
//! binary as signatures, plus a team's own with `--cases DIR`), the search for
//! the ones whose failure looks like a log's, and their causes as evidence in
//! the ranking. The failure itself comes from `rosetta-log`; the rules'
//! hypotheses from `rosetta-kb`; this crate only adds `similar` and mixes the
//! cases' votes in.
//!
//! Measurement switches, for `scripts/score-lobo` and not for users (see
//! `docs/cases.md`): `ROSETTA_CASES_EXCLUDE=rx,ry` leaves batches (or single
//! case ids) out of the library; `ROSETTA_CASES_MODE=rules|cases|blend`
//! picks the ranking, and `off` skips the library altogether (the baseline of
//! `scripts/bench-cases`); `ROSETTA_CASES_TUNING=power=2,voters=5` changes
//! numbers of [`Tuning`] to measure a choice before it becomes the default.
#![warn(missing_docs)]

pub mod blend;
pub mod case;
pub mod error;
pub mod library;
pub mod signature;
pub mod vector;

pub use blend::{Mode, Tuning};
pub use case::Case;
pub use error::CasesError;
pub use library::{Hit, Library};
pub use signature::Signature;

use rosetta_log::LogFacts;
use rosetta_report::Report;
use std::path::PathBuf;

/// Leaves batches or case ids out of the library (comma-separated).
pub const EXCLUDE_ENV: &str = "ROSETTA_CASES_EXCLUDE";
/// `blend` (default), `rules`, `cases` or `off`.
pub const MODE_ENV: &str = "ROSETTA_CASES_MODE";
/// `name=value,...` over [`Tuning::default`] (see [`Tuning::with`]).
pub const TUNING_ENV: &str = "ROSETTA_CASES_TUNING";

/// The library, mode and tuning `diagnose` uses.
#[derive(Debug)]
pub struct Cases {
    /// The library.
    pub library: Library,
    /// How the ranking uses it.
    pub mode: Mode,
    /// The numbers.
    pub tuning: Tuning,
}

impl Cases {
    /// The embedded library plus the case folders of `dirs`, less the batches
    /// named in `ROSETTA_CASES_EXCLUDE`, ranked as `ROSETTA_CASES_MODE` says.
    pub fn for_diagnose(dirs: &[PathBuf]) -> Result<Cases, CasesError> {
        let mode = match std::env::var(MODE_ENV).as_deref() {
            Ok("rules") => Mode::Rules,
            Ok("cases") => Mode::Cases,
            Ok("off") => Mode::Off,
            _ => Mode::Blend,
        };
        let tuning = match std::env::var(TUNING_ENV) {
            Ok(s) => Tuning::default().with(&s).map_err(CasesError::Tuning)?,
            Err(_) => Tuning::default(),
        };
        if mode == Mode::Off {
            return Ok(Cases {
                library: Library::empty(),
                mode,
                tuning,
            });
        }
        let mut library = Library::embedded()?;
        for d in dirs {
            library.add_dir(d)?;
        }
        if let Ok(ex) = std::env::var(EXCLUDE_ENV) {
            let names: Vec<&str> = ex
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .collect();
            library.exclude(&names);
        }
        Ok(Cases {
            library,
            mode,
            tuning,
        })
    }

    /// Does now the work the first search would do (the library's vectors), so that a
    /// caller can do it on another thread while it reads the log.
    pub fn warm(&self) {
        if self.mode != Mode::Off {
            self.library.warm();
        }
    }

    /// Finds the cases similar to the log and adds them to the report
    /// (`similar`, and their causes to the hypotheses).
    pub fn apply(&self, facts: &LogFacts, report: &mut Report) {
        let found = self.search(facts);
        self.blend(found, report);
    }

    /// The cases similar to the log: the half of [`Cases::apply`] that needs only the
    /// facts, so that it can run beside the rules.
    pub fn search(&self, facts: &LogFacts) -> Found<'_> {
        if self.mode == Mode::Off {
            return Found::default();
        }
        let sig = signature::of(facts);
        Found {
            hits: self.library.search(&sig),
            fallback: sig.is_fallback(),
        }
    }

    /// Adds what [`Cases::search`] found to the report.
    pub fn blend(&self, found: Found<'_>, report: &mut Report) {
        if self.mode == Mode::Off {
            return;
        }
        blend::apply(report, &found.hits, found.fallback, self.mode, &self.tuning);
    }
}

/// What [`Cases::search`] found for one log.
#[derive(Debug, Default)]
pub struct Found<'a> {
    hits: Vec<Hit<'a>>,
    /// The signature was cut from the log's last lines, not a failure block.
    fallback: bool,
}
