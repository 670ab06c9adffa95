//! The report stage of `rosetta diagnose` and `rosetta preflight`: assembly of
//! the report (the JSON contract of `triage-schema.md`, whose model lives in
//! `rosetta-schema`) from the log facts and the knowledge base's scored
//! hypotheses, and the renderers: text for a terminal, JSON, Markdown for
//! pasting into an upstream issue, HTML for a standalone page. Assembly picks
//! and orders what the kb and the log found; renderers only lay out what the
//! report holds; nothing here decides a cause.
#![warn(missing_docs)]

mod assemble;
mod preflight;
mod redact;
mod render;

pub use assemble::build;
pub use preflight::{
    render_preflight, render_preflight_width, MemoryPlan, PreflightFacts, PreflightFinding,
    PreflightReport, WeightsSource,
};
pub use redact::{public_services, redact, redact_str};
pub use render::{count, paragraph, render, render_width, text_width, thread_name, Format, Style};
pub use rosetta_schema::report::*;
