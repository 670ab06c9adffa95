//! Every rule carries its own logs: `<id>.fires.log` must make it fire (and
//! put its cause among the hypotheses, or its note among the notes) and
//! `<id>.quiet.log`, a near miss, must leave it silent. This harness turns
//! each file into a named test, plus one lint test over the whole knowledge base.

use libtest_mimic::{Arguments, Failed, Trial};
use rosetta_kb::change::Target;
use rosetta_kb::rule::{Kind, Rule};
use rosetta_kb::{Context, KnowledgeBase};
use rosetta_log::scan::Scanner;
use rosetta_log::vocab::{Entry, EntryKind, Vocabulary};
use std::path::{Path, PathBuf};

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kb/rules")
}

fn rule_files() -> Vec<PathBuf> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let mut es: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        es.sort();
        for p in es {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    let mut v = Vec::new();
    walk(&rules_dir(), &mut v);
    v
}

fn run_log(
    kb: &KnowledgeBase,
    log: &Path,
) -> Result<(Vec<String>, rosetta_report::Report), Failed> {
    let names: Vec<&str> = rosetta_kb::tables::GpuTable::embedded().names().collect();
    let facts = rosetta_log::read_logs(
        &[log.to_path_buf()],
        rosetta_log::Vocabulary::embedded(),
        &kb.literals(),
        &names,
    )
    .map_err(|e| Failed::from(e.to_string()))?;
    // A rule about the machine carries `<id>.fires.env.json` / `<id>.quiet.env.json`
    // (a `rosetta env --format json` report) beside its logs.
    let env = log.with_extension("env.json");
    let machine = if env.exists() {
        let text = std::fs::read_to_string(&env).map_err(|e| Failed::from(e.to_string()))?;
        Some(
            rosetta_kb::Machine::from_env_json(&text)
                .map_err(|e| Failed::from(format!("{}: {e}", env.display())))?,
        )
    } else {
        None
    };
    let ctx = Context::new(&facts, machine.as_ref());
    let fired = rosetta_kb::engine::fired(kb, &ctx)
        .into_iter()
        .map(String::from)
        .collect();
    Ok((fired, rosetta_report::build(kb, &facts, machine.as_ref())))
}

fn check_fires(kb: &KnowledgeBase, rule: &Rule, log: &Path) -> Result<(), Failed> {
    let (fired, report) = run_log(kb, log)?;
    if !fired.iter().any(|f| f == rule.id()) {
        let failure = report
            .failure
            .as_ref()
            .map(|f| format!("{} / {}", f.class, f.phase))
            .unwrap_or_else(|| "no failure".into());
        return Err(format!(
            "{} did not fire on {} (failure: {failure}; fired: {})",
            rule.id(),
            log.display(),
            fired.join(", ")
        )
        .into());
    }
    match rule.def.kind {
        Kind::Cause => {
            let h = report.hypotheses.iter().find(|h| h.cause == rule.def.cause);
            let carried = h.is_some_and(|h| {
                h.rule == rule.id() || h.also_rules.iter().any(|r| r == rule.id())
            });
            if !carried {
                return Err(format!(
                    "{} fired but its cause {} is not carried by it in the report",
                    rule.id(),
                    rule.def.cause
                )
                .into());
            }
        }
        Kind::Note => {
            if report.notes.is_empty() {
                return Err(format!("{} fired but the report has no notes", rule.id()).into());
            }
        }
        Kind::Against => {}
    }
    Ok(())
}

fn check_quiet(kb: &KnowledgeBase, rule: &Rule, log: &Path) -> Result<(), Failed> {
    let (fired, _) = run_log(kb, log)?;
    if fired.iter().any(|f| f == rule.id()) {
        return Err(format!("{} fired on its quiet log {}", rule.id(), log.display()).into());
    }
    Ok(())
}

/// Long because it is the list of the rule files' checks, one short block per check over
/// the same parsed files; each block is its own rule of the lint.
fn lint(files: &[PathBuf]) -> Result<(), Failed> {
    let mut problems = Vec::new();
    let mut ids = std::collections::HashSet::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| Failed::from(e.to_string()))?;
        let rule = match Rule::parse(f, &text) {
            Ok(r) => r,
            Err(e) => {
                problems.push(e.to_string());
                continue;
            }
        };
        if !ids.insert(rule.id().to_string()) {
            problems.push(format!("{}: duplicate id {}", f.display(), rule.id()));
        }
        let dir = f
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|n| n.to_str())
            .unwrap_or("");
        if dir != rule.def.cause.as_str() {
            problems.push(format!(
                "{}: lives in `{dir}/` but its cause is `{}`",
                f.display(),
                rule.def.cause
            ));
        }
        if !f.with_extension("fires.log").exists() {
            problems.push(format!(
                "{}: no {}.fires.log beside it",
                f.display(),
                rule.id()
            ));
        }
        if rule.def.references.is_empty() {
            problems.push(format!("{}: no references", f.display()));
        }
        if rule.literals().is_none() {
            problems.push(format!(
                "{}: a `lines`/`any_lines` pattern has no literal of 3+ characters to prefilter on",
                f.display()
            ));
        }
        // An experiment's `change` must be the one its `do` text proposes: the
        // flag (`--disable-cuda-graph` or `disable_cuda_graph`) or the env var
        // is named there, so that the journal rules out what people read.
        for (i, x) in rule.def.experiments.iter().enumerate() {
            for c in &x.change {
                let named = match c.target() {
                    Target::Arg(a) => {
                        x.action.contains(&format!("--{}", a.replace('_', "-")))
                            || x.action.contains(a)
                    }
                    Target::Env(e) => x.action.contains(e),
                };
                if !named {
                    problems.push(format!(
                        "{}: try[{i}].change {} is not named in its `do` text",
                        f.display(),
                        c.describe()
                    ));
                }
            }
        }
        let w = &rule.def.when;
        let conditions = !(w.class.is_empty()
            && w.lines.is_empty()
            && w.any_lines.is_empty()
            && w.message.is_none()
            && w.facts.is_empty());
        if !conditions {
            problems.push(format!(
                "{}: no condition on class, lines, message or facts: it would fire on everything",
                f.display()
            ));
        }
    }
    if let Err(e) = rosetta_kb::change::check_inert() {
        problems.push(e);
    }
    if files.is_empty() {
        problems.push("no rules found".into());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

/// Every rule pattern, run the way `diagnose` runs it (behind its literal
/// prefilter, on either tier, see `rosetta_log::lazy`), finds on every line of the
/// rules' own logs and of the examples what the pattern as written finds.
fn patterns_agree_as_run(files: &[PathBuf]) -> Result<(), Failed> {
    let mut lines: Vec<String> = Vec::new();
    let mut logs: Vec<PathBuf> = files
        .iter()
        .flat_map(|f| [f.with_extension("fires.log"), f.with_extension("quiet.log")])
        .collect();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    logs.extend(
        std::fs::read_dir(examples)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path()),
    );
    for log in logs
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
    {
        if let Ok(text) = std::fs::read_to_string(log) {
            lines.extend(text.lines().map(str::to_string));
        }
    }
    let mut problems = Vec::new();
    for f in files {
        let Ok(rule) = Rule::parse(f, &std::fs::read_to_string(f).unwrap_or_default()) else {
            continue;
        };
        let pats = rule
            .message
            .iter()
            .chain(&rule.frames)
            .chain(rule.args.iter().map(|(_, r)| r))
            .chain(rule.any_args.iter().map(|(_, r)| r))
            .chain(&rule.lines)
            .chain(&rule.any_lines)
            .chain(&rule.not_lines);
        for p in pats {
            let as_written = regex::Regex::new(p.as_str()).map_err(|e| e.to_string())?;
            // On the first tier until it has searched enough, and on the second.
            let as_run = rosetta_log::lazy::LazyRegex::trusted(p.as_str());
            let promoted = rosetta_log::lazy::LazyRegex::trusted(p.as_str());
            promoted.get();
            for l in &lines {
                let want = as_written.find(l).map(|m| m.range());
                for (tier, re) in [("first", &as_run), ("second", &promoted)] {
                    if re.find(l).map(|m| m.range()) != want {
                        problems.push(format!(
                            "{}: {} on {l:?} ({tier} tier)",
                            rule.id(),
                            p.as_str()
                        ));
                    }
                }
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn vocab_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kb/vocab")
}

/// The vocabulary files as they are on disk (so that an edit is tested without a rebuild).
fn vocab_files() -> Vec<(PathBuf, String)> {
    fn walk(d: &Path, out: &mut Vec<PathBuf>) {
        let mut es: Vec<PathBuf> = std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        es.sort();
        for p in es {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "toml") {
                out.push(p);
            }
        }
    }
    let mut paths = Vec::new();
    walk(&vocab_dir(), &mut paths);
    paths
        .into_iter()
        .filter_map(|p| {
            let t = std::fs::read_to_string(&p).ok()?;
            Some((p, t))
        })
        .collect()
}

/// Whether the scanner keeps a one-line log, or counts it as a serving-loop line (it must,
/// for a signal or milestone to see it).
fn scanner_keeps(voc: &Vocabulary, line: &str) -> bool {
    let out = Scanner::new(voc, &[]).scan_reader(0, &mut line.as_bytes());
    let counted = [
        out.serving.prefill(),
        out.serving.decode(),
        out.serving.throughput(),
    ]
    .iter()
    .any(|c| c.0 > 0);
    counted || out.records.iter().any(|r| r.line == 1)
}

fn entry_matches(voc: &Vocabulary, e: &Entry, text: &str) -> bool {
    match e.kind {
        EntryKind::Signal => voc.signal_matches_one(e.index, text),
        EntryKind::Milestone => voc.milestone_matches_one(e.index, text),
        EntryKind::Frame => voc.frame_matches_one(e.index, text),
        EntryKind::Prose => voc.prose_matches_one(e.index, text),
        EntryKind::Shape => voc.shape_matches_one(e.index, text),
        EntryKind::Banner => voc.banner_matches_one(e.index, text),
    }
}

/// Every `fires` example of an entry matches it (and, for signals and milestones, the
/// scanner keeps its line; for frame words, the entry wins the precedence).
fn check_vocab_fires(voc: &Vocabulary, e: &Entry) -> Result<(), Failed> {
    let mut bad = Vec::new();
    for ex in &e.fires {
        if !entry_matches(voc, e, ex) {
            bad.push(format!("does not match {ex:?}"));
            continue;
        }
        match e.kind {
            EntryKind::Signal | EntryKind::Milestone | EntryKind::Banner
                if !scanner_keeps(voc, ex) =>
            {
                bad.push(format!(
                    "the scanner does not keep {ex:?}: no literal of it is a scanner word"
                ));
            }
            EntryKind::Milestone => {
                let first = voc.milestone(ex).map(|m| m.id);
                if first != Some(voc.milestones[e.index].id) {
                    bad.push(format!("{ex:?} is taken by milestone {first:?} first"));
                }
            }
            EntryKind::Frame => {
                let want = e.id.split('#').next().unwrap_or_default();
                // `function @ path` examples give the frame's file too.
                let (func, file) = ex
                    .split_once(" @ ")
                    .map_or((ex.as_str(), ""), |(f, p)| (f.trim(), p.trim()));
                let got = voc.phase_of_function(func, file).map(|p| p.as_str());
                if got != Some(want) {
                    bad.push(format!("{ex:?} names {got:?} first, not {want}"));
                }
            }
            _ => {}
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!("{} ({}): {}", e.id, e.file.display(), bad.join("; ")).into())
    }
}

fn check_vocab_quiet(voc: &Vocabulary, e: &Entry) -> Result<(), Failed> {
    let bad: Vec<&String> = e
        .quiet
        .iter()
        .filter(|q| entry_matches(voc, e, q))
        .collect();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} ({}) matches its quiet examples {bad:?}",
            e.id,
            e.file.display()
        )
        .into())
    }
}

/// The vocabulary lint: every entry has examples both ways, ids are unique, and every
/// signal branch that gives the scanner no prefix literal has a `fires` example of its own
/// that the scanner keeps.
fn vocab_lint(voc: &Vocabulary) -> Result<(), Failed> {
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for e in &voc.entries {
        if e.fires.is_empty() {
            problems.push(format!(
                "{}: {:?} `{}` has no `fires` examples",
                e.file.display(),
                e.kind,
                e.id
            ));
        }
        if e.quiet.is_empty() {
            problems.push(format!(
                "{}: {:?} `{}` has no `quiet` examples",
                e.file.display(),
                e.kind,
                e.id
            ));
        }
        if matches!(
            e.kind,
            EntryKind::Signal | EntryKind::Milestone | EntryKind::Shape | EntryKind::Banner
        ) && !seen.insert((format!("{:?}", e.kind), e.id.clone()))
        {
            problems.push(format!("{}: duplicate id `{}`", e.file.display(), e.id));
        }
    }
    for e in voc.entries.iter().filter(|e| e.kind == EntryKind::Signal) {
        for branch in voc.signal_patterns(e.index) {
            let Ok(hir) = regex_syntax::parse(branch) else {
                problems.push(format!(
                    "{}: `{}` branch does not parse: {branch}",
                    e.file.display(),
                    e.id
                ));
                continue;
            };
            let has_literal = rosetta_log::vocab::prefix_literals(&hir)
                .is_some_and(|l| l.iter().all(|w| w.len() >= 4));
            if has_literal {
                continue;
            }
            let Ok(re) = regex::Regex::new(branch) else {
                continue;
            };
            let covered = e
                .fires
                .iter()
                .any(|ex| re.is_match(ex) && scanner_keeps(voc, ex));
            if !covered {
                problems.push(format!(
                    "{}: signal `{}` branch {branch:?} has no prefix literal for the scanner and no `fires` example of its own that the scanner keeps",
                    e.file.display(),
                    e.id
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n").into())
    }
}

fn vocab_trials() -> Vec<Trial> {
    let voc = match Vocabulary::from_files(vocab_files()) {
        Ok(v) => std::sync::Arc::new(v),
        Err(e) => {
            let msg = e.to_string();
            return vec![Trial::test("vocab_lint", move || Err(msg.clone().into()))];
        }
    };
    let mut trials = Vec::new();
    {
        let voc = voc.clone();
        trials.push(Trial::test("vocab_lint", move || vocab_lint(&voc)));
    }
    for (i, e) in voc.entries.iter().enumerate() {
        let kind = format!("{:?}", e.kind).to_lowercase();
        let name = format!("vocab::{kind}::{}", e.id);
        let v = voc.clone();
        trials.push(Trial::test(format!("{name}::fires"), move || {
            check_vocab_fires(&v, &v.entries[i])
        }));
        let v = voc.clone();
        trials.push(Trial::test(format!("{name}::quiet"), move || {
            check_vocab_quiet(&v, &v.entries[i])
        }));
    }
    trials
}

fn main() {
    let args = Arguments::from_args();
    let files = rule_files();
    let kb = match KnowledgeBase::embedded() {
        Ok(kb) => kb,
        Err(e) => {
            eprintln!("built-in knowledge base does not load: {e}");
            std::process::exit(101);
        }
    };
    let kb = std::sync::Arc::new(kb);
    let mut trials = vec![{
        let files = files.clone();
        Trial::test("kb_lint", move || lint(&files))
    }];
    {
        let files = files.clone();
        trials.push(Trial::test("patterns_agree_as_run", move || {
            patterns_agree_as_run(&files)
        }));
    }
    trials.extend(vocab_trials());
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let Ok(rule) = Rule::parse(f, &text) else {
            continue;
        };
        let id = rule.id().to_string();
        let fires = f.with_extension("fires.log");
        let quiet = f.with_extension("quiet.log");
        if fires.exists() {
            let (kb, rule) = (kb.clone(), rule.clone());
            trials.push(Trial::test(format!("{id}::fires"), move || {
                check_fires(&kb, &rule, &fires)
            }));
        }
        if quiet.exists() {
            let (kb, rule) = (kb.clone(), rule.clone());
            trials.push(Trial::test(format!("{id}::quiet"), move || {
                check_quiet(&kb, &rule, &quiet)
            }));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
