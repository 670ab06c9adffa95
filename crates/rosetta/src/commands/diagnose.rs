//! `rosetta diagnose`: read the logs, run the knowledge base, render the
//! report. Never touches the network.

use crate::args::{ColorChoice, DiagnoseArgs, Format};
use crate::exit::{Outcome, OK};
use anyhow::Context as _;
use rosetta_kb::KnowledgeBase;
use rosetta_report::Style;
use std::io::Write;

/// Runs `rosetta diagnose`.
pub fn run(args: DiagnoseArgs) -> Outcome {
    let mut kb = KnowledgeBase::embedded().context("the built-in knowledge base is broken")?;
    for dir in &args.kb {
        kb.add_dir(dir).context("cannot load --kb rules")?;
    }
    let cases = rosetta_cases::Cases::for_diagnose(&args.cases).context("cannot load --cases")?;
    let machine = match &args.env {
        Some(path) => Some(super::env_facts::load(path)?),
        None => None,
    };
    let gpu_names: Vec<&str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    let facts = rosetta_log::read_logs(&args.logs, kb.vocabulary(), &kb.literals(), &gpu_names)?;
    let mut report = rosetta_kb::report::build(&kb, &facts, machine.as_ref());
    cases.apply(&facts, &mut report);
    if args.redact {
        report = rosetta_report::redact(&report);
    }
    let format = match args.format {
        Format::Text => rosetta_report::Format::Text,
        Format::Json => rosetta_report::Format::Json,
        Format::Markdown => rosetta_report::Format::Markdown,
        Format::Html => rosetta_report::Format::Html,
    };
    let stdout = std::io::stdout();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never,
    };
    let mut out = std::io::BufWriter::new(stdout.lock());
    rosetta_report::render(
        &report,
        format,
        Style {
            color,
            top: args.top,
        },
        &mut out,
    )?;
    out.flush()?;
    Ok(OK)
}
