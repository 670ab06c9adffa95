//! `rosetta env`: resolves the flags into `rosetta_env::Options`, probes,
//! renders to stdout. GPU names given to `--gpu` (`H200`) are resolved with
//! the knowledge base's GPU table; everything else is `rosetta-env`'s.

use crate::args::{ColorChoice, EnvArgs, Format};
use crate::exit::{Outcome, OK};
use anyhow::Context;
use rosetta_env::render::{self, TextOptions};
use rosetta_env::{ComputeCapability, GpuSource, NamedGpu, Options, PythonSource};
use std::io::Write;

/// Runs `rosetta env`.
pub fn run(args: EnvArgs) -> Outcome {
    let named = args
        .gpu
        .iter()
        .map(|g| parse_gpu(g))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let python = if !args.scan.is_empty() {
        PythonSource::Skip
    } else if let Some(dir) = args.site_packages {
        PythonSource::SitePackages(dir)
    } else if let Some(py) = args.python {
        PythonSource::Interpreter(py)
    } else {
        PythonSource::Auto
    };
    let opts = Options {
        python,
        scan: args.scan,
        gpus: GpuSource::Probe,
        named,
        threads: args.jobs.filter(|&n| n > 0),
        cc_from_name: Some(cc_from_name),
    };
    let report = rosetta_env::probe(&opts)?;
    write_report(&report, args.format, args.color, args.counts)
        .context("write the report to stdout")?;
    Ok(OK)
}

fn write_report(
    report: &rosetta_env::EnvReport,
    format: Format,
    color: ColorChoice,
    counts: bool,
) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    match format {
        Format::Json => {
            let mut out = std::io::BufWriter::new(stdout.lock());
            render::json(report, &mut out)?;
            out.flush()
        }
        Format::Markdown => {
            let mut out = std::io::BufWriter::new(stdout.lock());
            render::markdown(report, &mut out)?;
            out.flush()
        }
        Format::Text | Format::Html => {
            let choice = match color {
                ColorChoice::Auto => anstream::ColorChoice::Auto,
                ColorChoice::Always => anstream::ColorChoice::Always,
                ColorChoice::Never => anstream::ColorChoice::Never,
            };
            let mut out = anstream::AutoStream::new(stdout.lock(), choice);
            render::text(
                report,
                &mut out,
                TextOptions {
                    color: true,
                    counts,
                },
            )?;
            out.flush()
        }
    }
}

/// `sm_120`, `12.0`, `120`, or a GPU name the knowledge base knows (`H200`).
fn parse_gpu(text: &str) -> anyhow::Result<NamedGpu> {
    if let Some(cc) = ComputeCapability::parse(text) {
        return Ok(NamedGpu { cc, name: None });
    }
    let cc = cc_from_name(text).and_then(|cc| ComputeCapability::parse(&cc));
    match cc {
        Some(cc) => Ok(NamedGpu {
            cc,
            name: Some(text.to_string()),
        }),
        None => anyhow::bail!(
            "read --gpu `{text}`: not an arch (sm_120, 12.0) nor a GPU name rosetta knows (H200, RTX PRO 6000, B200)"
        ),
    }
}

fn cc_from_name(name: &str) -> Option<String> {
    rosetta_kb::tables::GpuTable::embedded().lookup(name)?.cc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_flags() {
        assert_eq!(parse_gpu("sm_120").unwrap().cc.arch(), "sm_120");
        assert_eq!(parse_gpu("9.0").unwrap().cc.arch(), "sm_90");
        let h = parse_gpu("H200").unwrap();
        assert_eq!(h.cc.arch(), "sm_90");
        assert_eq!(h.name.as_deref(), Some("H200"));
        assert_eq!(parse_gpu("RTX PRO 6000").unwrap().cc.arch(), "sm_120");
        let e = parse_gpu("potato").unwrap_err().to_string();
        assert!(e.contains("potato"), "{e}");
    }
}
