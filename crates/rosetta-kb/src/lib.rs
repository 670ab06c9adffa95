//! The knowledge base: the rule format, loading, lint, matching and scoring,
//! and the data tables beside the rules (`kb/` at the repo root).
#![warn(missing_docs)]

pub mod config_lint;
pub mod tables;
