//! The knowledge base: the rule format, loading, lint, matching and scoring,
//! and the data tables beside the rules (`kb/` at the repo root). It turns
//! facts (from the log, and optionally the machine) into ranked hypotheses and
//! notes, and assembles the report; it reads no files of the user's.
#![warn(missing_docs)]

pub mod change;
pub mod config_lint;
pub mod engine;
pub mod error;
pub mod fact;
mod kb;
mod machine;
pub mod plan;
pub mod rule;
pub mod tables;
pub mod windows;

pub use engine::{Context, Machine};
pub use error::KbError;
pub use kb::KnowledgeBase;
