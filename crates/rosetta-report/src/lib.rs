//! The report of `rosetta diagnose` (the JSON contract of `triage-schema.md`),
//! the report of `rosetta preflight`, and their renderers: text for a terminal, JSON, Markdown for pasting into an
//! upstream issue, HTML for a standalone page. Renderers only lay out what the
//! report holds; nothing here decides a cause.
#![warn(missing_docs)]

mod model;
mod preflight;
mod redact;
mod render;

pub use model::*;
pub use preflight::{
    render_preflight, render_preflight_width, MemoryPlan, PreflightFacts, PreflightFinding,
    PreflightReport, Severity, WeightsSource,
};
pub use redact::{public_services, redact, redact_str};
pub use render::{count, paragraph, render, render_width, text_width, thread_name, Format, Style};
