//! `rosetta diagnose`: read the logs, run the knowledge base, render the
//! report; with `--each` (or `--format jsonl`), one report per input file,
//! diagnosed on every core and written in the order of the files. Never
//! touches the network.

use crate::args::{ColorChoice, DiagnoseArgs, DiagnoseFormat};
use crate::exit::{Outcome, BAD_INPUT, OK};
use anyhow::Context as _;
use rosetta_kb::KnowledgeBase;
use rosetta_report::{Report, Style};
use std::collections::BTreeMap;
use std::io::{IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What to say on stderr before reading a terminal: without a file, `diagnose`
/// reads stdin, and a newcomer typing `rosetta diagnose` would otherwise see it
/// wait in silence.
pub fn stdin_hint(logs: &[PathBuf], stdin_is_terminal: bool) -> Option<&'static str> {
    let reads_stdin = logs.is_empty() || logs.iter().any(|p| p.as_os_str() == "-");
    (reads_stdin && stdin_is_terminal).then_some(
        "rosetta diagnose: reading the log from standard input (Ctrl-D to end); \
         to diagnose a file: rosetta diagnose FILE... (see --help)",
    )
}

/// Everything a report needs besides the log, loaded once.
struct Setup {
    kb: KnowledgeBase,
    cases: rosetta_cases::Cases,
    machine: Option<rosetta_kb::Machine>,
    gpu_names: Vec<&'static str>,
    redact: bool,
}

impl Setup {
    fn report(&self, scanner: &rosetta_log::Scanner, paths: &[PathBuf]) -> anyhow::Result<Report> {
        let facts =
            rosetta_log::read_logs_with(scanner, paths, self.kb.vocabulary(), &self.gpu_names)?;
        // The case library is searched on a second core while the rules run: both read
        // only the facts.
        let (mut report, found) = std::thread::scope(|s| {
            let similar = s.spawn(|| self.cases.search(&facts));
            let report = rosetta_report::build(&self.kb, &facts, self.machine.as_ref());
            match similar.join() {
                Ok(found) => (report, found),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        });
        self.cases.blend(found, &mut report);
        if self.redact {
            report = rosetta_report::redact(&report);
        }
        Ok(report)
    }
}

/// Runs `rosetta diagnose`.
pub fn run(args: DiagnoseArgs) -> Outcome {
    let each = args.each || args.format == DiagnoseFormat::Jsonl;
    if each && args.format == DiagnoseFormat::Html {
        anyhow::bail!(
            "--each writes one report per file and html is one page: use text, markdown, json or jsonl"
        );
    }
    if let Some(hint) = stdin_hint(&args.logs, std::io::stdin().is_terminal()) {
        crate::exit::say(format_args!("{hint}"));
    }
    let (setup, scanner) = Setup::load(&args)?;
    // Never dropped: the process ends with the command, and freeing the rules, the case
    // library and the automatons one allocation at a time took a twentieth of start-up.
    let setup = std::mem::ManuallyDrop::new(setup);
    let scanner = std::mem::ManuallyDrop::new(scanner);
    let stdout = std::io::stdout();
    let style = Style {
        color: match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never
            }
        },
        top: args.top,
    };
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !each {
        return one_report(&setup, &scanner, &args.logs, args.format, style, &mut out);
    }
    let stdin = [PathBuf::from("-")];
    let files: &[PathBuf] = if args.logs.is_empty() {
        &stdin
    } else {
        &args.logs
    };
    let failed = each_file(&setup, &scanner, files, args.format, style, &mut out)?;
    out.flush()?;
    Ok(if failed > 0 { BAD_INPUT } else { OK })
}

impl Setup {
    /// Loads the knowledge base (with `--kb`), the machine (`--env`), the case library and
    /// the log scanner, the slow parts on other cores.
    fn load(args: &DiagnoseArgs) -> anyhow::Result<(Setup, rosetta_log::Scanner)> {
        // The case library (unpacked, its vectors built) loads on the second core while this
        // one reads the knowledge base and builds the scanner: a third of start-up, hidden.
        let case_dirs = args.cases.clone();
        let cases = std::thread::spawn(move || {
            rosetta_cases::Cases::for_diagnose(&case_dirs).inspect(rosetta_cases::Cases::warm)
        });
        // The scanner's automata (a third of start-up) are built on another core while the
        // rules load, from the built-in vocabulary and the rules' literals worked out at build
        // time; rules or vocabulary from `--kb` folders add literals, so then it waits for them.
        let early_scanner = args
            .kb
            .is_empty()
            .then(|| std::thread::spawn(KnowledgeBase::embedded_scanner));
        // The vocabulary the facts need, its literal prefilters built on a thread of their
        // own: the log is scanned with the scanner alone, so they need only be ready when the
        // facts are read from the scanned lines (a fact that asks first waits for them, it
        // does not build them twice). Never joined: the process ends with the command.
        std::thread::spawn(|| rosetta_log::Vocabulary::embedded().warm());
        let mut kb = KnowledgeBase::embedded().context("the built-in knowledge base is broken")?;
        for dir in &args.kb {
            kb.add_dir(dir).context("cannot load --kb rules")?;
        }
        let machine = match &args.env {
            Some(path) => Some(super::env_facts::load(path)?),
            None => None,
        };
        let gpu_names: Vec<&'static str> =
            rosetta_kb::tables::GpuTable::embedded().names().collect();
        let scanner = match early_scanner {
            Some(building) => building
                .join()
                .map_err(|_| anyhow::anyhow!("the log scanner could not be built"))?,
            None => kb.scanner(),
        };
        let cases = cases
            .join()
            .map_err(|_| anyhow::anyhow!("the case library could not be loaded"))?
            .context("cannot load --cases")?;
        let setup = Setup {
            kb,
            cases,
            machine,
            gpu_names,
            redact: args.redact,
        };
        Ok((setup, scanner))
    }
}

/// Diagnoses all the logs as one and writes the report; an input that could not be read
/// to its end is bad input (an error when nothing of it was read).
fn one_report(
    setup: &Setup,
    scanner: &rosetta_log::Scanner,
    logs: &[PathBuf],
    format: DiagnoseFormat,
    style: Style,
    out: &mut dyn Write,
) -> Outcome {
    let report = setup.report(scanner, logs)?;
    // An input that could not be read to its end (a truncated .gz) is bad input: the
    // report covers what was read, and the exit code and stderr say it is partial.
    let broken = report
        .inputs
        .iter()
        .find_map(|i| i.note.as_ref().map(|n| (i, n)));
    if let Some((input, note)) = broken.filter(|(i, _)| i.lines == 0) {
        anyhow::bail!("{}: {note}; nothing could be read", input.path);
    }
    rosetta_report::render(&report, report_format(format), style, out)?;
    out.flush()?;
    if let Some((input, note)) = broken {
        crate::exit::say(format_args!(
            "rosetta: error: {}: {note}; the report covers its first {}",
            input.path,
            rosetta_report::count(input.lines, "line")
        ));
        return Ok(BAD_INPUT);
    }
    Ok(OK)
}

fn report_format(f: DiagnoseFormat) -> rosetta_report::Format {
    match f {
        DiagnoseFormat::Text => rosetta_report::Format::Text,
        DiagnoseFormat::Json | DiagnoseFormat::Jsonl => rosetta_report::Format::Json,
        DiagnoseFormat::Markdown => rosetta_report::Format::Markdown,
        DiagnoseFormat::Html => rosetta_report::Format::Html,
    }
}

/// One file's output, rendered by a worker: the bytes and the name to show the
/// file under (its path as the report holds it: redacted with `--redact`).
enum Done {
    Report(Vec<u8>, String),
    Failed(String, String),
}

/// Diagnoses each file on its own, on every core, and writes the reports in the
/// order of the files (a worker's report waits until those before it are out).
/// Returns how many files could not be read.
fn each_file(
    setup: &Setup,
    scanner: &rosetta_log::Scanner,
    files: &[PathBuf],
    format: DiagnoseFormat,
    style: Style,
    out: &mut dyn Write,
) -> anyhow::Result<usize> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len())
        .max(1);
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Done)>(workers * 4);
    let mut failed = 0;
    std::thread::scope(|s| -> anyhow::Result<()> {
        for _ in 0..workers {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(i) else { break };
                let done = match render_one(setup, scanner, file, format, style) {
                    Ok((bytes, name)) => Done::Report(bytes, name),
                    Err(e) if setup.redact => Done::Failed(
                        rosetta_report::redact_str(&crate::exit::one_line(&e)),
                        rosetta_report::redact_str(&file.display().to_string()),
                    ),
                    Err(e) => Done::Failed(crate::exit::one_line(&e), file.display().to_string()),
                };
                if tx.send((i, done)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, Done> = BTreeMap::new();
        let mut written = 0;
        if format == DiagnoseFormat::Json {
            out.write_all(b"[\n")?;
        }
        for (i, done) in rx.iter() {
            pending.insert(i, done);
            while let Some(done) = pending.remove(&written) {
                let file = &files[written];
                if let Done::Failed(e, _) = &done {
                    failed += 1;
                    crate::exit::say(format_args!(
                        "rosetta: {}",
                        failure_line(&file.display().to_string(), e)
                    ));
                }
                write_one(out, &done, format, written)?;
                written += 1;
            }
        }
        if format == DiagnoseFormat::Json {
            out.write_all(b"\n]\n")?;
        }
        Ok(())
    })?;
    Ok(failed)
}

/// The stderr line for a file `--each` could not read: the file, then why; the
/// reading layer's messages name their file already, and then it is not said twice.
fn failure_line(file: &str, error: &str) -> String {
    if error.contains(file) {
        error.to_string()
    } else {
        format!("{file}: {error}")
    }
}

fn render_one(
    setup: &Setup,
    scanner: &rosetta_log::Scanner,
    file: &Path,
    format: DiagnoseFormat,
    style: Style,
) -> anyhow::Result<(Vec<u8>, String)> {
    let report = setup.report(&scanner.fresh(), std::slice::from_ref(&file.to_path_buf()))?;
    let name = match report.inputs.first() {
        Some(input) if setup.redact => input.path.clone(),
        _ => file.display().to_string(),
    };
    let mut buf = Vec::new();
    match format {
        DiagnoseFormat::Jsonl | DiagnoseFormat::Json => {
            serde_json::to_writer(&mut buf, &report)?;
        }
        f => rosetta_report::render(&report, report_format(f), style, &mut buf)?,
    }
    Ok((buf, name))
}

/// Writes one file's output: under a `==> FILE <==` header for text and
/// Markdown, as `{"file", "report"}` (or `{"file", "error"}`) for JSON.
fn write_one(
    out: &mut dyn Write,
    done: &Done,
    format: DiagnoseFormat,
    index: usize,
) -> std::io::Result<()> {
    let (Done::Report(_, shown) | Done::Failed(_, shown)) = done;
    let name = serde_json::to_string(&shown).map_err(std::io::Error::other)?;
    match (format, done) {
        (DiagnoseFormat::Jsonl | DiagnoseFormat::Json, done) => {
            if format == DiagnoseFormat::Json && index > 0 {
                out.write_all(b",\n")?;
            }
            write!(out, "{{\"file\":{name},")?;
            match done {
                Done::Report(bytes, _) => {
                    out.write_all(b"\"report\":")?;
                    out.write_all(bytes)?;
                }
                Done::Failed(e, _) => {
                    let e = serde_json::to_string(e).map_err(std::io::Error::other)?;
                    write!(out, "\"error\":{e}")?;
                }
            }
            out.write_all(b"}")?;
            if format == DiagnoseFormat::Jsonl {
                out.write_all(b"\n")?;
            }
            Ok(())
        }
        (_, Done::Report(bytes, _)) => {
            if index > 0 {
                out.write_all(b"\n")?;
            }
            writeln!(out, "==> {shown} <==")?;
            out.write_all(bytes)
        }
        (_, Done::Failed(..)) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stdin_hint_shows_only_when_a_terminal_would_be_read() {
        let none: Vec<PathBuf> = Vec::new();
        let dash = vec![PathBuf::from("-")];
        let file = vec![PathBuf::from("a.log")];
        assert!(stdin_hint(&none, true).is_some_and(|h| h.contains("Ctrl-D")));
        assert!(stdin_hint(&dash, true).is_some());
        assert_eq!(stdin_hint(&none, false), None);
        assert_eq!(stdin_hint(&file, true), None);
    }

    /// The newcomer's pass (issue 12, section 11): `--each adir` printed
    /// `rosetta: adir: adir is a directory, not a log file`.
    #[test]
    fn each_names_a_failed_file_once() {
        assert_eq!(
            failure_line("adir", "adir is a directory, not a log file"),
            "adir is a directory, not a log file"
        );
        assert_eq!(failure_line("a.log", "disk error"), "a.log: disk error");
    }
}
