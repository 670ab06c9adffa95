//! What `rosetta findings` shows, written to a `&mut dyn Write`: the list of
//! attempts, one attempt with its (annotated) diagnosis, the difference of
//! two attempts, and the FINDINGS.md a person would write. Text for the
//! terminal, JSON (`{"attempts": [...]}`, the journal's contract) and
//! Markdown. Nothing here decides a ruling; it reads them.

use crate::diff::{self, Delta, Diff};
use crate::model::{Attempt, Outcome, Ruling, Verdict};
use crate::rulings::{annotate, in_force};
use rosetta_schema::Cause;
use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Write};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// For a terminal.
    Text,
    /// The JSON contract.
    Json,
    /// Markdown.
    Markdown,
}

/// A command line as a shell would read it back.
pub fn command_line(argv: &[String]) -> String {
    if argv.is_empty() {
        return "(not recorded)".into();
    }
    shlex::try_join(argv.iter().map(String::as_str)).unwrap_or_else(|_| argv.join(" "))
}

/// `2026-05-20 10:11` in the local time zone (RFC 3339 text as stored when it does not parse).
pub fn when(ts: &str) -> String {
    match ts.parse::<jiff::Timestamp>() {
        Ok(t) => t
            .to_zoned_datetime(jiff::tz::TimeZone::system())
            .strftime("%Y-%m-%d %H:%M")
            .to_string(),
        Err(_) => ts.to_string(),
    }
}

fn duration(a: &str, b: &str) -> Option<String> {
    let a: jiff::Timestamp = a.parse().ok()?;
    let b: jiff::Timestamp = b.parse().ok()?;
    let s = b.as_second() - a.as_second();
    Some(if s >= 3600 {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    })
}

/// The attempt before `at` in the journal, if any.
fn previous<'a>(all: &'a [Attempt], at: &Attempt) -> Option<&'a Attempt> {
    all.iter().filter(|a| a.id < at.id).max_by_key(|a| a.id)
}

/// What changed against the previous attempt, in one line.
pub fn changed(all: &[Attempt], at: &Attempt) -> String {
    match previous(all, at) {
        Some(p) => diff::summary(&diff::diff(p, at), 3),
        None => "(first)".into(),
    }
}

#[derive(Serialize)]
struct FailureJson {
    class: String,
    phase: String,
    rank: Option<u32>,
}

#[derive(Serialize)]
struct HypJson {
    cause: Cause,
    confidence: f64,
}

#[derive(Serialize)]
struct RulingJson {
    cause: Cause,
    by_attempt: i64,
    why: String,
}

#[derive(Serialize)]
struct AttemptJson<'a> {
    id: i64,
    outcome: Outcome,
    command: String,
    failure: Option<FailureJson>,
    hypotheses: Vec<HypJson>,
    ruled_out: Vec<RulingJson>,
    supported: Vec<RulingJson>,
    source: &'static str,
    started: &'a str,
    ended: Option<&'a str>,
    exit_code: Option<i32>,
    changed: String,
    argv: &'a [String],
    probe: Option<&'a crate::model::ProbeResult>,
    notes: Vec<&'a str>,
    log: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    report: Option<&'a rosetta_report::Report>,
}

fn attempt_json<'a>(
    all: &'a [Attempt],
    rulings: &'a [Ruling],
    at: &'a Attempt,
    with_report: bool,
) -> AttemptJson<'a> {
    let force = in_force(rulings, at);
    let pick = |v: Verdict| -> Vec<RulingJson> {
        force
            .iter()
            .filter(|r| r.verdict == v)
            .map(|r| RulingJson {
                cause: r.cause,
                by_attempt: r.by_attempt,
                why: r.why.clone(),
            })
            .collect()
    };
    AttemptJson {
        id: at.id,
        outcome: at.outcome,
        command: command_line(&at.command),
        failure: at.failure.map(|f| FailureJson {
            class: f.class.to_string(),
            phase: f.phase.to_string(),
            rank: f.rank,
        }),
        hypotheses: at
            .hypotheses
            .iter()
            .map(|h| HypJson {
                cause: h.cause,
                confidence: h.confidence,
            })
            .collect(),
        ruled_out: pick(Verdict::RuledOut),
        supported: pick(Verdict::Supported),
        source: at.source.as_str(),
        started: &at.started,
        ended: at.ended.as_deref(),
        exit_code: at.exit_code,
        changed: changed(all, at),
        argv: &at.command,
        probe: at.probe.as_ref(),
        notes: at.notes.iter().map(|n| n.text.as_str()).collect(),
        log: at.log_path.as_deref(),
        report: if with_report {
            at.report.as_ref()
        } else {
            None
        },
    }
}

/// `{"attempts": [...]}` for these attempts (`with_report` adds each full diagnosis).
pub fn json(
    all: &[Attempt],
    rulings: &[Ruling],
    which: &[&Attempt],
    with_report: bool,
    w: &mut dyn Write,
) -> io::Result<()> {
    #[derive(Serialize)]
    struct Doc<'a> {
        attempts: Vec<AttemptJson<'a>>,
    }
    let doc = Doc {
        attempts: which
            .iter()
            .map(|a| attempt_json(all, rulings, a, with_report))
            .collect(),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(io::Error::other)?;
    writeln!(w)
}

fn failure_text(at: &Attempt) -> String {
    match (at.failure, at.outcome) {
        (Some(f), _) => f.to_string(),
        (None, Outcome::Ready) => "-".into(),
        (None, Outcome::Running) => "(running)".into(),
        (None, _) => "(none in the log)".into(),
    }
}

fn top_cause(at: &Attempt) -> String {
    at.hypotheses
        .first()
        .map(|h| format!("{} {:.2}", h.cause, h.confidence))
        .unwrap_or_else(|| "-".into())
}

/// The hypotheses of the current problem: those of the latest failed attempt
/// not ruled out for its failure, and every ruling in force, latest per cause.
pub struct State<'a> {
    /// The attempt whose failure is the current problem.
    pub current: Option<&'a Attempt>,
    /// Causes still open, with their confidence there.
    pub open: Vec<(Cause, f64, &'a str)>,
    /// Ruled out, latest first per cause.
    pub ruled_out: Vec<&'a Ruling>,
    /// Supported.
    pub supported: Vec<&'a Ruling>,
}

/// The journal's state of knowledge.
pub fn state<'a>(all: &'a [Attempt], rulings: &'a [Ruling]) -> State<'a> {
    let current = all.iter().rev().find(|a| a.outcome.failed());
    let mut latest: BTreeMap<(Cause, String), &Ruling> = BTreeMap::new();
    for r in rulings {
        let key = (r.cause, r.failure.to_string());
        match latest.get(&key) {
            Some(old) if old.by_attempt > r.by_attempt => {}
            _ => {
                latest.insert(key, r);
            }
        }
    }
    let mut ruled_out: Vec<&Ruling> = latest
        .values()
        .copied()
        .filter(|r| r.verdict == Verdict::RuledOut)
        .collect();
    let mut supported: Vec<&Ruling> = latest
        .values()
        .copied()
        .filter(|r| r.verdict == Verdict::Supported)
        .collect();
    ruled_out.sort_by_key(|r| r.by_attempt);
    supported.sort_by_key(|r| r.by_attempt);
    let open = match current {
        Some(c) => {
            let force = in_force(rulings, c);
            c.hypotheses
                .iter()
                .filter(|h| {
                    !force
                        .iter()
                        .any(|r| r.cause == h.cause && r.verdict == Verdict::RuledOut)
                })
                .map(|h| (h.cause, h.confidence, h.summary.as_str()))
                .collect()
        }
        None => Vec::new(),
    };
    State {
        current,
        open,
        ruled_out,
        supported,
    }
}

/// `findings list`.
pub fn list(
    all: &[Attempt],
    rulings: &[Ruling],
    format: Format,
    w: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Json => {
            let which: Vec<&Attempt> = all.iter().collect();
            json(all, rulings, &which, false, w)
        }
        Format::Text => list_text(all, rulings, w),
        Format::Markdown => {
            writeln!(w, "| id | when | outcome | failure | top cause | changed |")?;
            writeln!(w, "|---|---|---|---|---|---|")?;
            for a in all {
                writeln!(
                    w,
                    "| #{} | {} | {} | {} | {} | {} |",
                    a.id,
                    when(&a.started),
                    a.outcome,
                    failure_text(a),
                    top_cause(a),
                    md_cell(&changed(all, a))
                )?;
            }
            Ok(())
        }
    }
}

/// `findings list` as text: a table of the attempts in aligned columns, then the rulings
/// in force.
fn list_text(all: &[Attempt], rulings: &[Ruling], w: &mut dyn Write) -> io::Result<()> {
    if all.is_empty() {
        return writeln!(
            w,
            "no attempts yet: `rosetta run -- <launch command>` records one"
        );
    }
    let rows: Vec<[String; 6]> = all
        .iter()
        .map(|a| {
            [
                format!("#{}", a.id),
                when(&a.started),
                a.outcome.to_string(),
                failure_text(a),
                top_cause(a),
                changed(all, a),
            ]
        })
        .collect();
    let head = ["id", "when", "outcome", "failure", "top cause", "changed"];
    let mut width = head.map(str::len);
    for r in &rows {
        for (i, c) in r.iter().enumerate().take(5) {
            width[i] = width[i].max(c.chars().count());
        }
    }
    let line = |w: &mut dyn Write, r: &[String]| -> io::Result<()> {
        let mut s = String::new();
        for (i, c) in r.iter().enumerate() {
            if i < 5 {
                s.push_str(&format!("{c:<width$}  ", width = width[i]));
            } else {
                s.push_str(c);
            }
        }
        writeln!(w, "{}", s.trim_end())
    };
    line(w, &head.map(String::from))?;
    for r in &rows {
        line(w, r)?;
    }
    let st = state(all, rulings);
    if !st.ruled_out.is_empty() || !st.supported.is_empty() {
        writeln!(w)?;
    }
    for r in &st.ruled_out {
        writeln!(w, "ruled out  {} by #{}: {}", r.cause, r.by_attempt, r.why)?;
    }
    for r in &st.supported {
        writeln!(w, "supported  {} by #{}: {}", r.cause, r.by_attempt, r.why)?;
    }
    Ok(())
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn probe_text(p: &crate::model::ProbeResult) -> String {
    let mut s = format!("{}: ", p.url);
    if p.ok {
        s.push_str(&format!(
            "{} token(s), first after {} ms",
            p.tokens,
            p.ttft_ms.unwrap_or(0)
        ));
        if !p.text.is_empty() {
            s.push_str(&format!(": {:?}", p.text));
        }
    } else {
        if let Some(ph) = p.died_in {
            s.push_str(&format!("failed in {ph}"));
        } else {
            s.push_str("failed");
        }
        if p.tokens > 0 {
            s.push_str(&format!(" after {} token(s)", p.tokens));
        }
        if let Some(st) = p.status {
            s.push_str(&format!(", HTTP {st}"));
        }
        if let Some(e) = &p.error {
            s.push_str(&format!(": {e}"));
        }
    }
    s
}

/// `findings show ID`: the attempt and its diagnosis, with the journal's rulings written in.
pub fn show(
    all: &[Attempt],
    rulings: &[Ruling],
    at: &Attempt,
    format: Format,
    style: rosetta_report::Style,
    w: &mut dyn Write,
) -> io::Result<()> {
    if format == Format::Json {
        return json(all, rulings, &[at], true, w);
    }
    let md = format == Format::Markdown;
    let exit = at
        .exit_code
        .map(|c| format!(" · exit {c}"))
        .unwrap_or_default();
    let span = match &at.ended {
        Some(e) => format!(
            "{} ({})",
            when(&at.started),
            duration(&at.started, e).unwrap_or_default()
        ),
        None => when(&at.started),
    };
    let rows = show_rows(all, at);
    if md {
        writeln!(w, "## Attempt #{} · {}{exit} · {span}\n", at.id, at.outcome)?;
        for (k, v) in &rows {
            writeln!(w, "- **{k}**: {}", md_cell(v))?;
        }
        writeln!(w)?;
    } else {
        writeln!(w, "ATTEMPT  #{} · {}{exit} · {span}", at.id, at.outcome)?;
        for (k, v) in &rows {
            writeln!(w, "{k:<9}{v}")?;
        }
        writeln!(w)?;
    }
    match &at.report {
        Some(r) => {
            let mut r = r.clone();
            let force = in_force(rulings, at);
            annotate(&mut r, &force);
            rosetta_report::render(
                &r,
                if md {
                    rosetta_report::Format::Markdown
                } else {
                    rosetta_report::Format::Text
                },
                style,
                w,
            )
        }
        None => writeln!(w, "(no diagnosis recorded: the attempt has not ended)"),
    }
}

/// The labelled rows `findings show` prints under the attempt's title, in order: command,
/// change, failure, probe, model, machine, versions, environment, log and notes.
fn show_rows(all: &[Attempt], at: &Attempt) -> Vec<(&'static str, String)> {
    let mut rows: Vec<(&str, String)> = vec![("command", command_line(&at.command))];
    if let Some(p) = previous(all, at) {
        rows.push((
            "changed",
            format!("{} (against #{})", changed(all, at), p.id),
        ));
    }
    if let Some(f) = at.failure {
        let rank = f.rank.map(|r| format!(" · rank {r}")).unwrap_or_default();
        rows.push(("failure", format!("{f}{rank}")));
    }
    if let Some(p) = &at.probe {
        rows.push(("probe", probe_text(p)));
    }
    if let Some(m) = &at.model {
        let h = m
            .config_hash
            .as_ref()
            .map(|h| format!(" (config.json {h})"))
            .unwrap_or_default();
        rows.push(("model", format!("{}{h}", m.path)));
    }
    let fp = &at.fingerprint;
    if let Some(machine) = machine_text(fp) {
        rows.push(("machine", machine));
    }
    if !fp.packages.is_empty() {
        let v: Vec<String> = fp
            .packages
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        rows.push(("versions", v.join(" · ")));
    }
    if !at.env.is_empty() {
        let v: Vec<String> = at
            .env
            .iter()
            .map(|(k, v)| {
                let short: String = v.chars().take(60).collect();
                let more = if short.len() < v.len() { "…" } else { "" };
                format!("{k}={short}{more}")
            })
            .collect();
        rows.push(("env", v.join(" ")));
    }
    if let Some(l) = &at.log_path {
        rows.push(("log", l.clone()));
    }
    for n in &at.notes {
        rows.push(("note", format!("{} ({})", n.text, when(&n.at))));
    }
    rows
}

/// The machine of a fingerprint (`8x H100 · driver 550.54 · CUDA 12.4`), when it has GPUs
/// or a driver.
fn machine_text(fp: &crate::model::Fingerprint) -> Option<String> {
    if fp.gpus.is_empty() && fp.driver.is_none() {
        return None;
    }
    let gpus = fp
        .gpus
        .first()
        .map(|g| format!("{}x {}", fp.gpus.len(), g.name))
        .unwrap_or_default();
    let drv = fp
        .driver
        .as_ref()
        .map(|d| format!(" · driver {d}"))
        .unwrap_or_default();
    let cuda = fp
        .cuda
        .as_ref()
        .map(|d| format!(" · CUDA {d}"))
        .unwrap_or_default();
    Some(format!("{gpus}{drv}{cuda}"))
}

fn delta_rows(title: &str, ds: &[Delta], arg: bool, out: &mut Vec<(String, String)>) {
    let inert: &[String] = if arg {
        rosetta_kb::change::inert_args()
    } else if title == "env" {
        rosetta_kb::change::inert_env()
    } else {
        &[]
    };
    let (quiet, loud): (Vec<&Delta>, Vec<&Delta>) = ds.iter().partition(|d| inert.contains(&d.key));
    for d in loud {
        let text = if arg { d.describe_arg() } else { d.describe() };
        out.push((title.to_string(), text));
    }
    // Differences that never count as a change (kb/changes.toml) come last, marked.
    for d in quiet {
        let text = if arg { d.describe_arg() } else { d.describe() };
        out.push((title.to_string(), format!("{text}  (no effect)")));
    }
}

/// `findings diff A B`.
pub fn diff_view(d: &Diff, format: Format, w: &mut dyn Write) -> io::Result<()> {
    if format == Format::Json {
        serde_json::to_writer_pretty(&mut *w, d).map_err(io::Error::other)?;
        return writeln!(w);
    }
    let mut rows: Vec<(String, String)> = Vec::new();
    if let Some(id) = d.unknown_launch {
        rows.push(("launch".into(), diff::unknown_launch_text(id)));
    }
    let args_title = if d.args_from_log {
        "args (log)"
    } else {
        "args"
    };
    delta_rows(args_title, &d.args, true, &mut rows);
    delta_rows("env", &d.env, false, &mut rows);
    delta_rows("versions", &d.versions, false, &mut rows);
    delta_rows("machine", &d.machine, false, &mut rows);
    delta_rows("model", &d.model, false, &mut rows);
    let fail = |f: &Option<crate::model::FailureRef>| {
        f.map(|f| f.to_string()).unwrap_or_else(|| "none".into())
    };
    let moved = if d.outcome.0 == d.outcome.1 && d.failure.0 == d.failure.1 {
        format!("same: {} · {}", d.outcome.1, fail(&d.failure.1))
    } else {
        format!(
            "{} · {}  ->  {} · {}",
            d.outcome.0,
            fail(&d.failure.0),
            d.outcome.1,
            fail(&d.failure.1)
        )
    };
    if format == Format::Markdown {
        writeln!(w, "## #{} -> #{}\n", d.a, d.b)?;
        writeln!(w, "| what | change |\n|---|---|")?;
        for (k, v) in &rows {
            writeln!(w, "| {k} | {} |", md_cell(v))?;
        }
        if rows.is_empty() {
            writeln!(w, "| launch | the same |")?;
        }
        return writeln!(w, "| outcome | {} |", md_cell(&moved));
    }
    writeln!(w, "#{} -> #{}", d.a, d.b)?;
    if rows.is_empty() {
        writeln!(
            w,
            "launch      the same (args, env, versions, machine, model)"
        )?;
    }
    for (k, v) in &rows {
        writeln!(w, "{k:<12}{v}")?;
    }
    writeln!(w, "{:<12}{moved}", "outcome")
}

/// The earliest and the latest start among the attempts (an imported log is dated by its
/// file and may be older than attempts recorded before it).
fn span(all: &[Attempt]) -> Option<(&str, &str)> {
    let key = |a: &&Attempt| (a.started.parse::<jiff::Timestamp>().ok(), a.started.clone());
    let first = all.iter().min_by_key(key)?;
    let last = all.iter().max_by_key(key)?;
    Some((first.started.as_str(), last.started.as_str()))
}

/// A goal for the export when the user gives none: the model, the framework and the GPUs,
/// all from one launch (the latest that names a model) or launches of that same model, so
/// that a journal holding unrelated logs never pairs one log's model with another's GPUs.
pub fn default_goal(all: &[Attempt]) -> String {
    let model_of = |a: &Attempt| a.model.as_ref().map(|m| m.path.clone());
    let model = all.iter().rev().find_map(model_of);
    // Launches that may lend a missing framework or GPU: the same model, or none named.
    let kin: Vec<&Attempt> = all
        .iter()
        .rev()
        .filter(|a| model.is_none() || model_of(a).is_none_or(|m| Some(&m) == model.as_ref()))
        .collect();
    let framework = kin
        .iter()
        .find_map(|a| a.report.as_ref().and_then(|r| r.facts.framework.clone()));
    let gpus = kin.iter().find_map(|a| {
        let g = &a.fingerprint.gpus;
        g.first()
            .map(|x| format!("{}x {}", g.len(), x.name))
            .or_else(|| {
                // No GPU on the machine record (an import, or a run on another box):
                // the log's own GPU and, when the log shows it, how many.
                let facts = &a.report.as_ref()?.facts;
                let name = facts.gpus.first()?;
                Some(match facts.gpu_count {
                    Some(n) => format!("{n}x {name}"),
                    None => name.clone(),
                })
            })
    });
    let mut others: Vec<String> = all
        .iter()
        .filter_map(model_of)
        .filter(|m| Some(m) != model.as_ref())
        .collect();
    others.sort();
    others.dedup();
    let mut s = String::from("Serve ");
    s.push_str(
        &model
            .map(|m| format!("`{m}`"))
            .unwrap_or("the model".into()),
    );
    if let Some(f) = framework {
        s.push_str(&format!(" with {f}"));
    }
    if let Some(g) = gpus {
        s.push_str(&format!(" on {g}"));
    }
    s.push_str(": the server starts and answers a request.");
    if !others.is_empty() {
        let list: Vec<String> = others.iter().map(|m| format!("`{m}`")).collect();
        s.push_str(&format!(
            " The journal also holds attempts with {} {}; give the goal with --goal if it is not this one.",
            if others.len() == 1 { "another model," } else { "other models," },
            list.join(", ")
        ));
    }
    s
}

/// `findings export --format markdown`: the FINDINGS.md a person would write.
pub fn export_markdown(
    all: &[Attempt],
    rulings: &[Ruling],
    goal: Option<&str>,
    w: &mut dyn Write,
) -> io::Result<()> {
    writeln!(w, "# Findings\n")?;
    writeln!(w, "## Goal\n")?;
    writeln!(
        w,
        "{}\n",
        goal.map(String::from).unwrap_or_else(|| default_goal(all))
    )?;
    if let (Some((first, last)), Some(latest)) = (span(all), all.last()) {
        writeln!(
            w,
            "{} attempt(s) from {} to {}; the latest ended {}.\n",
            all.len(),
            when(first),
            when(last),
            latest.outcome
        )?;
    }
    writeln!(w, "## Attempts\n")?;
    if all.is_empty() {
        writeln!(w, "None yet.\n")?;
    }
    for at in all {
        let mut p = format!("**#{}** ({}, {}).", at.id, when(&at.started), at.outcome);
        match previous(all, at) {
            None => p.push_str(&format!(
                " Launched `{}`.",
                command_line(&at.command).replace('`', "'")
            )),
            Some(prev) => {
                let d = diff::diff(prev, at);
                p.push_str(&format!(
                    " Changed against #{}: {}.",
                    prev.id,
                    diff::summary(&d, 6)
                ));
            }
        }
        push_ending(&mut p, at);
        push_verdicts(&mut p, at, rulings);
        for n in &at.notes {
            p.push_str(&format!(" Note: {}", n.text.trim()));
            if !n.text.trim_end().ends_with('.') {
                p.push('.');
            }
        }
        writeln!(w, "{p}\n")?;
    }
    let st = state(all, rulings);
    write_still_open(&st, rulings, w)?;
    write_rulings(&st, w)
}

/// Adds to an exported attempt's paragraph how it ended: up (and the probe), still running,
/// stopped, or how it failed.
fn push_ending(p: &mut String, at: &Attempt) {
    match (at.outcome, at.failure) {
        (Outcome::Ready, _) => {
            p.push_str(" The server came up");
            match &at.probe {
                Some(pr) if pr.ok => p.push_str(&format!(
                    " and answered the probe ({} token(s), first after {} ms).",
                    pr.tokens,
                    pr.ttft_ms.unwrap_or(0)
                )),
                Some(_) => p.push_str(" but the probe failed."),
                None => p.push_str(" (no probe sent)."),
            }
        }
        (Outcome::Running, _) => p.push_str(" Still running when exported."),
        (Outcome::Interrupted, _) => p.push_str(" Stopped by hand before it was ready."),
        (o, Some(f)) => {
            let rank = f.rank.map(|r| format!(" on rank {r}")).unwrap_or_default();
            let how = match o {
                Outcome::Stalled => "It stalled",
                Outcome::ProbeFailed => "It failed on the probe request",
                _ => "It crashed",
            };
            p.push_str(&format!(" {how}: {f}{rank}."));
            if let Some(pr) = at.probe.as_ref().filter(|p| !p.ok) {
                if let Some(ph) = pr.died_in {
                    p.push_str(&format!(" The probe died in {ph}."));
                }
            }
        }
        (_, None) => p.push_str(" It failed with nothing the log names."),
    }
}

/// Adds to an exported attempt's paragraph the rulings it made, or, when it made none, the
/// diagnosis's leading hypotheses.
fn push_verdicts(p: &mut String, at: &Attempt, rulings: &[Ruling]) {
    let made: Vec<&Ruling> = rulings.iter().filter(|r| r.by_attempt == at.id).collect();
    if made.is_empty() {
        if let Some(h) = at.hypotheses.first() {
            let more: Vec<String> = at
                .hypotheses
                .iter()
                .skip(1)
                .take(2)
                .map(|h| format!("{} {:.2}", h.cause, h.confidence))
                .collect();
            p.push_str(&format!(
                " The diagnosis put {} first ({:.2}; {})",
                h.cause,
                h.confidence,
                h.summary.trim_end_matches('.')
            ));
            if more.is_empty() {
                p.push('.');
            } else {
                p.push_str(&format!(", then {}.", more.join(", ")));
            }
        }
    } else {
        for r in made {
            let word = match r.verdict {
                Verdict::RuledOut => "This ruled out",
                Verdict::Supported => "This supports",
            };
            p.push_str(&format!(
                " {word} {} (the experiment of #{}: {}).",
                r.cause,
                r.against_attempt,
                r.experiment
                    .split(':')
                    .next()
                    .unwrap_or(&r.experiment)
                    .trim()
            ));
        }
    }
}

/// The export's "Still open" section: the open hypotheses of the current failure, each
/// with the next test not yet tried.
fn write_still_open(st: &State<'_>, rulings: &[Ruling], w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "## Still open\n")?;
    match st.current {
        Some(c) if !st.open.is_empty() => {
            writeln!(w, "For the failure of #{} ({}):\n", c.id, failure_text(c))?;
            let tried: Vec<&str> = rulings.iter().map(|r| r.experiment.as_str()).collect();
            for (cause, conf, summary) in &st.open {
                let next = c
                    .hypotheses
                    .iter()
                    .find(|h| h.cause == *cause)
                    .and_then(|h| h.tests.iter().find(|t| !tried.contains(&t.action.as_str())))
                    .map(|t| format!(" Next: {}", t.action))
                    .unwrap_or_default();
                writeln!(w, "- **{cause}** ({conf:.2}): {summary}.{next}")?;
            }
            writeln!(w)?;
        }
        Some(_) => writeln!(
            w,
            "Nothing: every hypothesis of the latest failure is ruled out.\n"
        )?,
        None => writeln!(w, "No failed attempt.\n")?,
    }
    Ok(())
}

/// The export's "Ruled out" section, and "Supported" when anything is.
fn write_rulings(st: &State<'_>, w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "## Ruled out\n")?;
    if st.ruled_out.is_empty() {
        writeln!(w, "Nothing yet.\n")?;
    } else {
        for r in &st.ruled_out {
            writeln!(
                w,
                "- **{}**, by #{} (for {}): {}",
                r.cause, r.by_attempt, r.failure, r.why
            )?;
        }
        writeln!(w)?;
    }
    if !st.supported.is_empty() {
        writeln!(w, "## Supported\n")?;
        for r in &st.supported {
            writeln!(
                w,
                "- **{}**, by #{} (for {}): {}",
                r.cause, r.by_attempt, r.failure, r.why
            )?;
        }
        writeln!(w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Fingerprint, Source};
    use rosetta_report::Report;

    /// Two `rosetta run -- bash -c 'cat glm5.log; exit 1'` attempts and the same log
    /// imported afterwards, dated earlier by its file (the newcomer's pass, issue 12
    /// section 9). No machine GPU was recorded (no GPU where `run` ran).
    fn newcomer_journal() -> Vec<Attempt> {
        let mut report = Report::default();
        report.facts.gpus = vec!["NVIDIA RTX PRO 6000 (sm_120)".into()];
        report.facts.gpu_count = Some(8);
        let launched = |id: i64, started: &str| Attempt {
            id,
            source: Source::Run,
            started: started.into(),
            ended: Some(started.into()),
            cwd: None,
            command: vec!["bash".into(), "-c".into(), "cat glm5.log; exit 1".into()],
            args: None,
            log_args: BTreeMap::new(),
            env: BTreeMap::new(),
            fingerprint: Fingerprint::default(),
            model: None,
            outcome: Outcome::Crashed,
            exit_code: Some(1),
            failure: None,
            hypotheses: Vec::new(),
            probe: None,
            log_path: None,
            report: Some(report.clone()),
            notes: Vec::new(),
        };
        let mut imported = launched(3, "2026-12-01T14:10:00Z");
        imported.source = Source::Import;
        imported.command = Vec::new();
        vec![
            launched(1, "2026-12-01T14:40:00Z"),
            launched(2, "2026-12-01T14:42:00Z"),
            imported,
        ]
    }

    #[test]
    fn the_goal_counts_the_gpus_the_log_shows() {
        let goal = default_goal(&newcomer_journal());
        assert!(goal.contains("on 8x NVIDIA RTX PRO 6000"), "{goal}");
        assert!(!goal.contains("1x"), "{goal}");
    }

    #[test]
    fn the_goal_takes_model_framework_and_gpus_from_one_launch() {
        // A vLLM run of one model on A100s, then a log of another model on RTX PRO 6000s
        // that names no framework: the goal must not pair the first run's framework or
        // GPUs with the latest model.
        let mut all = newcomer_journal();
        let mut vllm = Report::default();
        vllm.facts.framework = Some("vllm".into());
        vllm.facts.gpus = vec!["NVIDIA A100".into()];
        all[0].report = Some(vllm);
        all[0].model = Some(crate::model::ModelRef {
            path: "meta-llama/Llama-3.1-70B-Instruct".into(),
            ..Default::default()
        });
        all[2].model = Some(crate::model::ModelRef {
            path: "zai-org/GLM-5".into(),
            ..Default::default()
        });
        let goal = default_goal(&all);
        assert!(goal.starts_with("Serve `zai-org/GLM-5`"), "{goal}");
        assert!(!goal.contains("vllm") && !goal.contains("A100"), "{goal}");
        assert!(goal.contains("on 8x NVIDIA RTX PRO 6000"), "{goal}");
        assert!(
            goal.contains("another model, `meta-llama/Llama-3.1-70B-Instruct`"),
            "{goal}"
        );
    }

    #[test]
    fn the_date_range_runs_from_earliest_to_latest() {
        let all = newcomer_journal();
        let mut out = Vec::new();
        export_markdown(&all, &[], None, &mut out).unwrap();
        let md = String::from_utf8(out).unwrap();
        let line = md
            .lines()
            .find(|l| l.contains("attempt(s) from"))
            .expect("the range line");
        let (first, last) = span(&all).unwrap();
        assert_eq!(first, "2026-12-01T14:10:00Z");
        assert_eq!(last, "2026-12-01T14:42:00Z");
        assert!(
            line.contains(&format!("from {} to {}", when(first), when(last))),
            "{line}"
        );
    }

    #[test]
    fn an_imported_log_is_not_the_same_launch_as_a_command() {
        let all = newcomer_journal();
        let summary = changed(&all, &all[2]);
        assert!(!summary.contains("same launch"), "{summary}");
        assert!(summary.contains("#3 is an imported log"), "{summary}");
        // Two recorded launches of one command are the same launch.
        assert_eq!(changed(&all, &all[1]), "same launch");
        let d = diff::diff(&all[1], &all[2]);
        assert!(!d.same_launch());
        let mut out = Vec::new();
        diff_view(&d, Format::Text, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(!text.contains("the same (args"), "{text}");
        assert!(text.contains("imported log"), "{text}");
    }
}
