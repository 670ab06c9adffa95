//! `rosetta findings`: the journal of attempts. `list`, `show ID`, `diff A B`,
//! `note ID TEXT`, `export` (FINDINGS.md) and `import LOG...` (old logs
//! diagnosed and recorded as attempts). Rendering is rosetta-journal's.

use crate::args::{ColorChoice, FindingsAction, FindingsArgs, Format};
use crate::commands::journal;
use crate::exit::{Outcome as Code, OK};
use anyhow::Context as _;
use rosetta_journal::render::{self, Format as JFormat};
use rosetta_journal::rulings::hypotheses_of;
use rosetta_journal::{Attempt, FailureRef, Fingerprint, GpuPrint, Journal, Outcome, Source};
use rosetta_kb::KnowledgeBase;
use rosetta_schema::FailureClass;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

fn format_of(f: Option<Format>, default: JFormat) -> anyhow::Result<JFormat> {
    Ok(match f {
        None => default,
        Some(Format::Text) => JFormat::Text,
        Some(Format::Json) => JFormat::Json,
        Some(Format::Markdown) => JFormat::Markdown,
        Some(Format::Html) => anyhow::bail!(
            "--format html is not available for `rosetta findings`; use text, json or markdown"
        ),
    })
}

/// Runs `rosetta findings`.
pub fn run(args: FindingsArgs) -> Code {
    let action = args.action.unwrap_or(FindingsAction::List);
    let default = match action {
        FindingsAction::Export { .. } => JFormat::Markdown,
        _ => JFormat::Text,
    };
    let format = format_of(args.format, default)?;
    let mut j = journal::open(args.journal.as_deref())?;
    let stdout = std::io::stdout();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never,
    };
    let mut w = std::io::BufWriter::new(stdout.lock());
    match action {
        FindingsAction::List => {
            let all = j.attempts()?;
            let rulings = j.rulings()?;
            render::list(&all, &rulings, format, &mut w)?;
        }
        FindingsAction::Show { id, top } => {
            let at = j.attempt(id)?;
            let all = j.attempts()?;
            let rulings = j.rulings()?;
            render::show(
                &all,
                &rulings,
                &at,
                format,
                rosetta_report::Style { color, top },
                &mut w,
            )?;
        }
        FindingsAction::Diff { a, b } => {
            let x = j.attempt(a)?;
            let y = j.attempt(b)?;
            let d = rosetta_journal::diff::diff(&x, &y);
            render::diff_view(&d, format, &mut w)?;
        }
        FindingsAction::Note { id, text } => {
            let text = text.join(" ");
            j.add_note(id, &text)?;
            writeln!(w, "noted on attempt #{id}")?;
        }
        FindingsAction::Export { goal, output } => {
            export(&mut j, format, goal.as_deref(), output.as_deref(), &mut w)?
        }
        FindingsAction::Import { logs, kb: dirs } => import(&mut j, &logs, &dirs, &mut w)?,
    }
    w.flush()?;
    Ok(OK)
}

/// `findings export`: every attempt as FINDINGS.md (or JSON), to a file or to `w`.
fn export(
    j: &mut Journal,
    format: JFormat,
    goal: Option<&str>,
    output: Option<&Path>,
    w: &mut dyn Write,
) -> anyhow::Result<()> {
    let all = j.attempts()?;
    let rulings = j.rulings()?;
    let mut buf: Vec<u8> = Vec::new();
    match format {
        JFormat::Json => {
            let which: Vec<&Attempt> = all.iter().collect();
            render::json(&all, &rulings, &which, false, &mut buf)?;
        }
        JFormat::Markdown | JFormat::Text => {
            render::export_markdown(&all, &rulings, goal, &mut buf)?
        }
    }
    match output {
        Some(path) => {
            std::fs::write(path, &buf)
                .with_context(|| format!("cannot write {}", path.display()))?;
            writeln!(w, "wrote {} ({} attempts)", path.display(), all.len())?;
        }
        None => w.write_all(&buf)?,
    }
    Ok(())
}

/// `findings import`: diagnoses each log and records it as an attempt, printing the
/// attempt and the rulings it made.
fn import(
    j: &mut Journal,
    logs: &[PathBuf],
    dirs: &[PathBuf],
    w: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut kb = KnowledgeBase::embedded().context("the built-in knowledge base is broken")?;
    for dir in dirs {
        kb.add_dir(dir).context("cannot load --kb rules")?;
    }
    let gpu_names: Vec<&str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    // One scanner for all the logs (its automatons built once), a fresh budget for each.
    let scanner = kb.scanner();
    for log in logs {
        let attempt = imported_attempt(&kb, &scanner.fresh(), &gpu_names, log)?;
        let (id, made) = j.record(&attempt)?;
        let fail = attempt
            .failure
            .map(|f| f.to_string())
            .unwrap_or_else(|| "no failure".into());
        writeln!(w, "#{id} {} ({}, {fail})", log.display(), attempt.outcome)?;
        for r in made {
            writeln!(
                w,
                "   {} {} by #{id}: {}",
                r.cause,
                r.verdict.as_str().replace('-', " "),
                r.why
            )?;
        }
    }
    Ok(())
}

/// One old log diagnosed into an attempt: its outcome from the failure (or a ready
/// milestone), its time from the file's, its arguments, versions and GPUs from the log.
fn imported_attempt(
    kb: &KnowledgeBase,
    scanner: &rosetta_log::Scanner,
    gpu_names: &[&str],
    log: &PathBuf,
) -> anyhow::Result<Attempt> {
    let facts = rosetta_log::read_logs_with(
        scanner,
        std::slice::from_ref(log),
        kb.vocabulary(),
        gpu_names,
    )?;
    let report = rosetta_report::build(kb, &facts, None);
    let failure = journal::failure_of(&report);
    let ready = facts.milestones.iter().any(|m| m.ready);
    let outcome = match failure {
        Some(f) if f.class == FailureClass::Hang => Outcome::Stalled,
        Some(_) => Outcome::Crashed,
        None if ready => Outcome::Ready,
        None => Outcome::Stalled,
    };
    let when = std::fs::metadata(log)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| jiff::Timestamp::try_from(t).ok())
        .unwrap_or_else(jiff::Timestamp::now)
        .to_string();
    let log_args: BTreeMap<String, String> = facts
        .extracted
        .args
        .iter()
        .map(|(k, v)| (k.clone(), v.value.clone()))
        .collect();
    let fingerprint = Fingerprint {
        packages: report.facts.versions.clone(),
        gpus: log_gpus(
            facts.extracted.gpus.iter().map(|g| g.value.as_str()),
            report.facts.gpu_count,
        ),
        ..Fingerprint::default()
    };
    Ok(Attempt {
        id: 0,
        source: Source::Import,
        started: when.clone(),
        ended: Some(when),
        cwd: None,
        command: Vec::new(),
        args: None,
        model: log_args
            .get("model_path")
            .map(|m| rosetta_run::fingerprint::model_ref(m)),
        log_args,
        env: BTreeMap::new(),
        fingerprint,
        outcome,
        exit_code: None,
        failure: failure.map(|f: FailureRef| f),
        hypotheses: hypotheses_of(kb, &report),
        probe: None,
        log_path: Some(
            std::path::absolute(log)
                .unwrap_or_else(|_| log.clone())
                .display()
                .to_string(),
        ),
        report: Some(report),
        notes: Vec::new(),
    })
}

/// The GPUs of an imported log, one entry per GPU as `run` records them: one name printed
/// (`GPU 0-7: NVIDIA RTX PRO 6000`) with the count the launch shows (tp_size=8) is eight
/// GPUs, not one.
fn log_gpus<'a>(names: impl Iterator<Item = &'a str>, count: Option<u64>) -> Vec<GpuPrint> {
    let names: Vec<&str> = names.collect();
    let each = match (names.as_slice(), count) {
        ([_], Some(n)) => n.clamp(1, 4096) as usize,
        _ => 1,
    };
    names
        .iter()
        .flat_map(|n| {
            std::iter::repeat_n(
                GpuPrint {
                    name: n.to_string(),
                    ..GpuPrint::default()
                },
                each,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The newcomer's pass (issue 12, section 9): an imported GLM-5 log (`GPU 0-7`,
    /// tp_size=8) gave the goal "on 1x NVIDIA RTX PRO 6000".
    #[test]
    fn an_imported_log_records_as_many_gpus_as_it_shows() {
        let g = log_gpus(["NVIDIA RTX PRO 6000"].into_iter(), Some(8));
        assert_eq!(g.len(), 8);
        assert!(g.iter().all(|x| x.name == "NVIDIA RTX PRO 6000"));
        assert_eq!(log_gpus(["H100"].into_iter(), None).len(), 1);
        assert_eq!(log_gpus(["H100", "A100"].into_iter(), Some(8)).len(), 2);
    }
}
