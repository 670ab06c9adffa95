//! The findings journal: every launch that `rosetta run` wraps (and every old
//! log `rosetta findings import` reads) becomes an attempt, with its command,
//! args, environment, machine, model, outcome, diagnosis and probe result.
//! Attempts test hypotheses: a relaunch that differs from an earlier failed
//! attempt by exactly an experiment's change (data in the knowledge base)
//! rules the hypothesis out when it fails the same way, and supports it when
//! the failure goes away or changes.
//!
//! Stored in SQLite (a file, the default) or PostgreSQL (a team's journal),
//! one schema, versioned migrations. This crate never prints: `render` writes
//! to a `&mut dyn Write`.
#![warn(missing_docs)]

pub mod db;
pub mod diff;
mod error;
pub mod model;
pub mod render;
pub mod rulings;
mod store;

pub use error::JournalError;
pub use model::{
    Attempt, FailureRef, Fingerprint, GpuPrint, HypothesisRec, ModelRef, Note, Outcome,
    ProbeResult, Ruling, Source, Test, Verdict,
};
pub use store::{default_path, is_postgres_url, redact_url, Journal, SCHEMA_VERSION};
