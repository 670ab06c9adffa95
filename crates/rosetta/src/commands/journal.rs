//! Which journal `run` and `findings` use (`--journal`, else `$ROSETTA_JOURNAL`,
//! else the SQLite file in the user's state folder), opened with a one-line
//! error that names it; and the conversion of a diagnosis into what the
//! journal records.

use anyhow::Context as _;
use rosetta_journal::{FailureRef, Journal};
use rosetta_report::Report;
use std::path::PathBuf;

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok().filter(|v| !v.is_empty())
}

/// The user's state folder for rosetta (`$XDG_STATE_HOME/rosetta`).
pub fn state_dir() -> Option<PathBuf> {
    rosetta_journal::default_path(&env).and_then(|p| p.parent().map(PathBuf::from))
}

/// Opens the journal named by the flag, the environment or the default.
pub fn open(flag: Option<&str>) -> anyhow::Result<Journal> {
    let spec = match flag.map(String::from).or_else(|| env("ROSETTA_JOURNAL")) {
        Some(s) => s,
        None => rosetta_journal::default_path(&env)
            .context("no journal: set --journal, ROSETTA_JOURNAL or HOME")?
            .display()
            .to_string(),
    };
    Ok(Journal::open(&spec)?)
}

/// The failure of a report as the journal keeps it.
pub fn failure_of(report: &Report) -> Option<FailureRef> {
    report.failure.as_ref().map(|f| FailureRef {
        class: f.class,
        phase: f.phase,
        rank: f.rank,
    })
}
