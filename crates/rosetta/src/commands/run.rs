//! `rosetta run -- CMD`: records an attempt in the journal, supervises the
//! launch (rosetta-run), diagnoses the attempt's log on the spot when it
//! crashed, stalled or failed its probe (the same pipeline as `diagnose`),
//! records how it ended with the rulings it makes, and prints the report with
//! the journal's rulings written in. Exits with the launch's own code.

use crate::args::{ColorChoice, RunArgs};
use crate::commands::journal;
use crate::exit::{Coded, Outcome as Code, STOPPED};
use anyhow::Context as _;
use rosetta_journal::rulings::{annotate, hypotheses_of, in_force};
use rosetta_journal::{Attempt, FailureRef, Journal, Note, Outcome, Ruling, Source};
use rosetta_kb::KnowledgeBase;
use rosetta_report::Report;
use rosetta_run::status::Size;
use rosetta_run::{Options, StatusTarget, Terminal};
use rosetta_schema::{FailureClass, Phase};
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

fn terminal_size() -> Option<Size> {
    terminal_size::terminal_size_of(std::io::stderr()).map(|(w, h)| (h.0, w.0))
}

/// Runs `rosetta run`.
pub fn run(args: RunArgs) -> Code {
    let kb = knowledge_base(&args.kb)?;
    let mut j = journal::open(args.journal.as_deref())?;

    // What the child gets: our environment, with Python's output unbuffered so
    // that its log arrives line by line.
    let mut child_env: Vec<(String, String)> = Vec::new();
    if std::env::var_os("PYTHONUNBUFFERED").is_none() {
        child_env.push(("PYTHONUNBUFFERED".into(), "1".into()));
    }
    // The launch command, parsed the way `preflight` reads it: canonical args,
    // the environment it sets (`env X=1 ...`), the address it names.
    let engines = rosetta_launch::Engines::embedded();
    let launch = rosetta_launch::parse_words(&args.command, engines).ok();
    let command_address = launch.as_ref().and_then(|l| {
        let port = l.port(engines)?;
        let host = l.host(engines).unwrap_or_else(|| "127.0.0.1".into());
        Some(rosetta_run::Address::new(&host, port))
    });
    let mut attempt = new_attempt(&args, launch.as_ref(), &child_env);
    attempt.id = j.begin(&attempt)?;
    let log_path = attempt_log(&mut j, &mut attempt)?;

    // The machine, read while the server starts.
    let python = rosetta_run::fingerprint::interpreter_of(&args.command);
    let fingerprint =
        std::thread::spawn(move || rosetta_run::fingerprint::probe(python.as_deref()));

    let opts = options(&args, &log_path, command_address, child_env);
    let (ending, ready_note) = supervise(&opts, terminal(args.no_status), &mut j, &mut attempt)?;

    // Diagnose the attempt's log, the way `diagnose` does.
    let (facts, report) = diagnose(&kb, &log_path, &ending)?;
    attempt.log_args = facts
        .extracted
        .args
        .iter()
        .map(|(k, v)| (k.clone(), v.value.clone()))
        .collect();
    attempt.fingerprint = fingerprint.join().unwrap_or_default();
    settle(&mut attempt, &kb, &report, &ending);
    let made = j.finish(&attempt)?;
    let rulings = j.rulings()?;

    let out = std::io::stdout();
    let color = match args.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => anstream::AutoStream::choice(&out) != anstream::ColorChoice::Never,
    };
    let mut w = std::io::BufWriter::new(out.lock());
    write_summary(
        &mut w,
        &attempt,
        &ending,
        &log_path,
        ready_note.as_deref(),
        &made,
    )?;
    if attempt.outcome.failed() {
        write_report(&mut w, report, &attempt, &rulings, color, args.top)?;
    }
    writeln!(
        w,
        "── recorded in {} · rosetta findings show {}",
        j.location(),
        attempt.id
    )?;
    w.flush()?;
    exit_code(&ending, &attempt)
}

/// The built-in knowledge base with the rules of each `--kb` folder added.
fn knowledge_base(dirs: &[PathBuf]) -> anyhow::Result<KnowledgeBase> {
    let mut kb = KnowledgeBase::embedded().context("the built-in knowledge base is broken")?;
    for dir in dirs {
        kb.add_dir(dir).context("cannot load --kb rules")?;
    }
    Ok(kb)
}

/// The attempt as it begins: the command, where and with what environment it runs, the notes.
fn new_attempt(
    args: &RunArgs,
    launch: Option<&rosetta_launch::LaunchCommand>,
    child_env: &[(String, String)],
) -> Attempt {
    let env = rosetta_run::fingerprint::recorded_env(
        std::env::vars()
            .chain(child_env.iter().cloned())
            .chain(launch.iter().flat_map(|l| l.env.clone())),
    );
    Attempt {
        id: 0,
        source: Source::Run,
        started: now(),
        ended: None,
        cwd: std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string()),
        command: args.command.clone(),
        args: launch.map(|l| l.args()),
        log_args: BTreeMap::new(),
        env,
        fingerprint: Default::default(),
        model: None,
        outcome: Outcome::Running,
        exit_code: None,
        failure: None,
        hypotheses: Vec::new(),
        probe: None,
        log_path: None,
        report: None,
        notes: args
            .note
            .iter()
            .map(|t| Note {
                at: now(),
                text: t.clone(),
            })
            .collect(),
    }
}

/// The path of the attempt's log in the journal's log folder (created), recorded in the journal.
fn attempt_log(j: &mut Journal, attempt: &mut Attempt) -> anyhow::Result<PathBuf> {
    let log_dir = j
        .log_dir(journal::state_dir().as_deref())
        .context("no folder for the attempt's log: set HOME or XDG_STATE_HOME")?;
    std::fs::create_dir_all(&log_dir)
        .with_context(|| format!("cannot create {}", log_dir.display()))?;
    let stamp = jiff::Timestamp::now()
        .strftime("%Y%m%dT%H%M%SZ")
        .to_string();
    let log_path = log_dir.join(format!("attempt-{}-{stamp}.log", attempt.id));
    let log_path = std::path::absolute(&log_path).unwrap_or(log_path);
    attempt.log_path = Some(log_path.display().to_string());
    j.set_log_path(attempt.id, &log_path.display().to_string())?;
    Ok(log_path)
}

/// What `supervise` takes: the command, its log, the probe and the stall and grace times
/// of the flags, the address the command names and the child's extra environment.
fn options(
    args: &RunArgs,
    log_path: &Path,
    command_address: Option<rosetta_run::Address>,
    child_env: Vec<(String, String)>,
) -> Options {
    Options {
        command: args.command.clone(),
        log_path: log_path.to_path_buf(),
        probe: args.probe,
        probe_timeout: Duration::from_secs(args.probe_timeout.max(1)),
        stall: (args.stall > 0).then(|| Duration::from_secs(args.stall)),
        grace: Duration::from_secs(args.grace),
        stop_when_ready: args.stop_when_ready,
        command_address,
        env: child_env,
    }
}

/// Where the launch's output goes: our stdout and stderr, with a live status line on a
/// terminal unless `--no-status` or `TERM=dumb`.
fn terminal(no_status: bool) -> Terminal {
    let status = (!no_status
        && std::io::stderr().is_terminal()
        && std::env::var("TERM").map_or(true, |t| t != "dumb"))
    .then(|| StatusTarget {
        out: Box::new(std::io::stderr()),
        size: Box::new(terminal_size),
    });
    Terminal {
        stdout: Box::new(std::io::stdout()),
        stderr: Box::new(std::io::stderr()),
        status,
    }
}

/// Supervises the launch, recording the attempt as ready the moment it is (with a note
/// when that could not be recorded); when the launch never ran, records it as crashed.
fn supervise(
    opts: &Options,
    term: Terminal,
    j: &mut Journal,
    attempt: &mut Attempt,
) -> anyhow::Result<(rosetta_run::Ending, Option<String>)> {
    let mut ready_note: Option<String> = None;
    let ending = {
        let j = &mut *j;
        let attempt = &*attempt;
        let ready_note = &mut ready_note;
        rosetta_run::supervise(opts, term, &mut |ev| {
            if let rosetta_run::Event::Ready { probe } = ev {
                // Recorded at once: the server may now serve for hours.
                let mut a = attempt.clone();
                a.outcome = Outcome::Ready;
                a.probe = probe.clone();
                a.ended = Some(now());
                *ready_note = match j.finish(&a) {
                    Ok(_) => None,
                    Err(e) => Some(format!("could not record the ready attempt: {e}")),
                };
            }
        })
    };
    match ending {
        Ok(e) => Ok((e, ready_note)),
        Err(e) => {
            // The launch never ran: record that, then report the error.
            attempt.outcome = Outcome::Crashed;
            attempt.ended = Some(now());
            attempt.notes.push(Note {
                at: now(),
                text: format!("rosetta could not run it: {e}"),
            });
            let _ = j.finish(attempt);
            Err(e.into())
        }
    }
}

/// The facts of the attempt's log and the report built from them; a stall the log
/// cannot show becomes the failure.
fn diagnose(
    kb: &KnowledgeBase,
    log_path: &Path,
    ending: &rosetta_run::Ending,
) -> anyhow::Result<(rosetta_log::LogFacts, Report)> {
    let gpu_names: Vec<&str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    let mut facts = rosetta_log::read_logs_with(
        &kb.scanner(),
        &[log_path.to_path_buf()],
        kb.vocabulary(),
        &gpu_names,
    )?;
    if ending.outcome == Outcome::Stalled && facts.failure.is_none() {
        // The log cannot say it hung: rosetta saw it go silent, so that is the failure.
        facts.failure = Some(stall_failure(&facts, ending));
    }
    let report = rosetta_report::build(kb, &facts, None);
    Ok((facts, report))
}

/// Fills in how the attempt ended: packages, model, outcome, failure, hypotheses, the
/// report and rosetta's notes.
fn settle(
    attempt: &mut Attempt,
    kb: &KnowledgeBase,
    report: &Report,
    ending: &rosetta_run::Ending,
) {
    if attempt.fingerprint.packages.is_empty() {
        // No Python environment could be read: the versions the log names stand in.
        attempt.fingerprint.packages = report.facts.versions.clone();
    }
    attempt.model = attempt
        .args
        .as_ref()
        .and_then(|a| a.get("model_path"))
        .or_else(|| attempt.log_args.get("model_path"))
        .map(|m| rosetta_run::fingerprint::model_ref(m));
    attempt.outcome = ending.outcome;
    attempt.exit_code = ending.exit_code;
    attempt.probe = ending.probe.clone();
    attempt.ended = Some(now());
    attempt.failure = journal::failure_of(report);
    if attempt.outcome == Outcome::Stalled {
        // A stall leaves no error line: the failure is the hang, in the phase it hung in.
        let phase = ending.phase.unwrap_or(Phase::Unknown);
        attempt.failure = attempt.failure.or(Some(FailureRef {
            class: FailureClass::Hang,
            phase,
            rank: None,
        }));
    }
    if !attempt.outcome.failed() {
        // A ready or interrupted attempt did not fail: what the log shows on the way out
        // (a KeyboardInterrupt traceback at Ctrl-C) stays in the stored report only.
        attempt.failure = None;
    }
    if attempt.outcome.failed() {
        attempt.hypotheses = hypotheses_of(kb, report);
    }
    attempt.report = Some(report.clone());
    for n in &ending.notes {
        attempt.notes.push(Note {
            at: now(),
            text: format!("rosetta: {n}"),
        });
    }
}

/// Writes the closing lines: how the attempt ended, its probe, rosetta's notes, and the
/// rulings it made when no report follows.
fn write_summary(
    w: &mut dyn Write,
    attempt: &Attempt,
    ending: &rosetta_run::Ending,
    log_path: &Path,
    ready_note: Option<&str>,
    made: &[Ruling],
) -> anyhow::Result<()> {
    let exit = ending
        .exit_code
        .map(|c| format!(" · exit {c}"))
        .unwrap_or_default();
    writeln!(
        w,
        "\n── rosetta: attempt #{} {}{exit} after {} · log {}",
        attempt.id,
        attempt.outcome,
        secs(ending.elapsed),
        log_path.display()
    )?;
    if let Some(n) = ready_note {
        writeln!(w, "   {n}")?;
    }
    if let Some(p) = &attempt.probe {
        writeln!(w, "   probe  {}", probe_line(p))?;
    }
    for n in &ending.notes {
        writeln!(w, "   {n}")?;
    }
    if ending.leftover {
        writeln!(
            w,
            "   warning: processes of the launch's group are still alive"
        )?;
    }
    // A printed report carries the rulings in its notes; otherwise say them here.
    for r in made.iter().filter(|_| !attempt.outcome.failed()) {
        writeln!(
            w,
            "   journal: {} {} by this attempt: {}",
            r.cause,
            r.verdict.as_str().replace('-', " "),
            r.why
        )?;
    }
    Ok(())
}

/// Writes the failed attempt's report, with the journal's rulings in force written in.
fn write_report(
    w: &mut dyn Write,
    mut shown: Report,
    attempt: &Attempt,
    rulings: &[Ruling],
    color: bool,
    top: usize,
) -> anyhow::Result<()> {
    // The attempt failed (a probe, a stall, an exit code) where its log shows no
    // error: the report must not read "OK".
    if let Some(nf) = shown.no_failure.as_mut().filter(|n| n.reason == "clean") {
        nf.reason = "not-in-log".into();
    }
    let force = in_force(rulings, attempt);
    annotate(&mut shown, &force);
    writeln!(w)?;
    rosetta_report::render(
        &shown,
        rosetta_report::Format::Text,
        rosetta_report::Style { color, top },
        w,
    )?;
    Ok(())
}

/// The exit code: 128 + N after signal N, the launch's own code, 4 when rosetta stopped a
/// launch that was not ready, and never 0 for a failed attempt.
fn exit_code(ending: &rosetta_run::Ending, attempt: &Attempt) -> Code {
    let code: i32 = if let Some(sig) = ending.interrupted_by {
        128 + sig
    } else if ending.stopped_by_rosetta {
        if attempt.outcome == Outcome::Ready {
            0
        } else {
            i32::from(STOPPED)
        }
    } else {
        match (ending.exit_code, attempt.outcome) {
            (Some(c), _) => c,
            (None, Outcome::Ready) => 0,
            _ => 1,
        }
    };
    let code = u8::try_from(code.clamp(0, 255)).unwrap_or(1);
    if code != 0 && !attempt.outcome.failed() && attempt.outcome != Outcome::Interrupted {
        return Ok(code);
    }
    if attempt.outcome.failed() && code == 0 {
        // A failed attempt never exits 0, even when the launcher said 0.
        return Err(Coded {
            code: 1,
            message: format!("attempt #{} {}", attempt.id, attempt.outcome),
        }
        .into());
    }
    Ok(code)
}

/// The failure of a stalled launch whose log shows none: a hang at its last line, in the
/// phase the live status had reached.
fn stall_failure(
    facts: &rosetta_log::LogFacts,
    ending: &rosetta_run::Ending,
) -> rosetta_log::Failure {
    let (line, text) = facts
        .last_lines
        .iter()
        .rev()
        .find(|(_, _, t)| !t.trim().is_empty())
        .map(|(_, l, t)| (*l, t.trim().chars().take(200).collect::<String>()))
        .unwrap_or((facts.inputs.first().map_or(0, |i| i.lines), String::new()));
    let silent = ending.silent_for.map(|d| d.as_secs()).unwrap_or(0);
    rosetta_log::Failure::without_incident(
        FailureClass::Hang,
        ending.phase.unwrap_or(Phase::Unknown),
        &format!(
            "rosetta run saw no output for {silent} s while the status was `{}`",
            ending.status
        ),
        0,
        line,
        format!("no output for {silent} s after: {text}"),
        "rosetta-run-stall",
    )
}

fn probe_line(p: &rosetta_journal::ProbeResult) -> String {
    let mut s = p.url.clone();
    if p.ok {
        s.push_str(&format!(
            ": {} token(s), first after {} ms, {:?}",
            p.tokens,
            p.ttft_ms.unwrap_or(0),
            p.text
        ));
    } else {
        if let Some(ph) = p.died_in {
            s.push_str(&format!(": died in {ph}"));
        }
        if p.tokens > 0 {
            s.push_str(&format!(" after {} token(s)", p.tokens));
        }
        if let Some(e) = &p.error {
            s.push_str(&format!(" ({e})"));
        }
    }
    s
}
