//! `rosetta preflight`: resolve the target (an `--env` file, flags, else this
//! machine probed the way `rosetta env` does), run `rosetta_preflight`, render
//! the report. Exit 1 when a finding is a blocker, 0 otherwise; bad input 2.

use crate::args::{ColorChoice, Format, PreflightArgs};
use crate::exit::{Outcome, FINDINGS, OK};
use anyhow::Context as _;
use rosetta_env::{GpuSource, Options, PythonSource};
use rosetta_kb::KnowledgeBase;
use rosetta_preflight::{Inputs, Target};
use std::io::Write;

/// Runs `rosetta preflight`.
pub fn run(args: PreflightArgs) -> Outcome {
    let mut kb = KnowledgeBase::embedded().context("the built-in knowledge base is broken")?;
    for dir in &args.kb {
        kb.add_dir(dir).context("cannot load --kb rules")?;
    }
    let (env, env_from) = match &args.env {
        Some(path) => {
            let report = rosetta_env::EnvReport::from_json_file(path)?;
            (Some(report), Some(path.display().to_string()))
        }
        // Planning for another machine: the flags describe it.
        None if args.gpu.is_some() => (None, None),
        // On the serving machine: read it as `rosetta env` does. A probe that
        // cannot run leaves its part unknown.
        None => {
            let opts = Options {
                python: PythonSource::Auto,
                scan: Vec::new(),
                gpus: GpuSource::Probe,
                named: Vec::new(),
                threads: None,
                cc_from_name: Some(|n: &str| {
                    rosetta_kb::tables::GpuTable::embedded().lookup(n)?.cc
                }),
            };
            match rosetta_env::probe(&opts) {
                Ok(r) => (Some(r), Some("this machine (rosetta env)".to_string())),
                Err(_) => (None, None),
            }
        }
    };
    let inputs = Inputs {
        command: args.command.clone(),
        model: args.model.clone(),
        target: Target {
            env,
            env_from,
            gpu: args.gpu.clone(),
            gpus: args.gpus,
            gpu_memory_gib: args.gpu_memory,
            transformers: args.transformers.clone(),
            engine_version: args.engine_version.clone(),
        },
    };
    let report = rosetta_preflight::run(&inputs, &kb, rosetta_launch::Engines::embedded())?;
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
    rosetta_report::render_preflight(&report, format, color, &mut out)?;
    out.flush()?;
    Ok(if report.has_blocker() { FINDINGS } else { OK })
}
