//! Closing the loop: which hypotheses an attempt tested, and what it showed.
//!
//! Attempt B tested hypothesis H of an earlier failed attempt A when B differs
//! from A by exactly changes that experiments of H list (`[[try]] change` in
//! the knowledge base): every launch arg and env var that differs (less the
//! inert ones of `kb/changes.toml`) is such a change, and the packages, the
//! machine and the model are the same. If B fails the same way (class and
//! phase), H is ruled out by B; if the failure goes away or changes, B
//! supports H. The nearest earlier attempt that B differs from exactly is the
//! one compared. Which change tests which cause is data; this module only
//! compares.

use crate::diff::{diff, Delta, Diff};
use crate::model::{Attempt, FailureRef, HypothesisRec, Outcome, Ruling, Test, Verdict};
use rosetta_kb::change::{inert_args, inert_env, Change, ChangeOp, Target};
use rosetta_kb::KnowledgeBase;
use rosetta_report::{Experiment, Hypothesis, Report, Tried};
use rosetta_schema::{Cause, Phase};
use std::collections::BTreeMap;

/// The relaunch experiments of a hypothesis, from the rules behind it.
pub fn tests_for(kb: &KnowledgeBase, h: &Hypothesis) -> Vec<Test> {
    let mut out: Vec<Test> = Vec::new();
    for id in std::iter::once(&h.rule).chain(&h.also_rules) {
        let Some(rule) = kb.rules.iter().find(|r| r.id() == id) else {
            continue;
        };
        for x in &rule.def.experiments {
            if !x.change.is_empty() && !out.iter().any(|t| t.action == x.action) {
                out.push(Test {
                    action: x.action.clone(),
                    changes: x.change.clone(),
                });
            }
        }
    }
    out
}

/// The report's hypotheses as the journal keeps them.
pub fn hypotheses_of(kb: &KnowledgeBase, report: &Report) -> Vec<HypothesisRec> {
    report
        .hypotheses
        .iter()
        .map(|h| HypothesisRec {
            cause: h.cause,
            confidence: h.confidence,
            rule: h.rule.clone(),
            summary: h.summary.clone(),
            tests: tests_for(kb, h),
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Arg,
    Env,
}

fn describe(kind: Kind, d: &Delta) -> String {
    match kind {
        Kind::Arg => d.describe_arg(),
        Kind::Env => d.describe(),
    }
}

/// A failure past the ready line needs a request to show again.
fn needs_request(f: &FailureRef, outcome: Outcome) -> bool {
    outcome == Outcome::ProbeFailed || matches!(f.phase, Phase::Prefill | Phase::Decode)
}

/// The rulings attempt `b` makes, judged against the attempts before it.
pub fn judge(earlier: &[Attempt], b: &Attempt) -> Vec<Ruling> {
    if matches!(b.outcome, Outcome::Running | Outcome::Interrupted) {
        return Vec::new();
    }
    let mut candidates: Vec<&Attempt> = earlier
        .iter()
        .filter(|a| a.id < b.id && a.outcome.failed() && a.failure.is_some())
        .collect();
    candidates.sort_by_key(|a| std::cmp::Reverse(a.id));
    for a in candidates {
        let Some(af) = a.failure else { continue };
        let d = diff(a, b);
        let Some(deltas) = testing_deltas(&d) else {
            continue;
        };
        let Some(tested) = tests_carried_out(a, b, &deltas) else {
            continue;
        };
        let Some(verdict) = verdict_of(a, af, b) else {
            return Vec::new();
        };
        return rulings_of(a, af, b, verdict, tested, &deltas);
    }
    Vec::new()
}

/// For each cause of A's hypotheses, the tests that B's changes carry out: each test's
/// action and the indexes of the changes that carry it out.
type Tested = BTreeMap<Cause, Vec<(String, Vec<usize>)>>;

/// The changes from A to B that may test something: the args and env vars that differ,
/// less the inert ones; `None` when the packages, machine, model or command differ too,
/// or nothing does.
fn testing_deltas(d: &Diff) -> Option<Vec<(Kind, &Delta)>> {
    if !d.versions.is_empty()
        || !d.machine.is_empty()
        || !d.model.is_empty()
        || !d.command.is_empty()
    {
        return None;
    }
    let inert_a = inert_args();
    let inert_e = inert_env();
    let deltas: Vec<(Kind, &Delta)> = d
        .args
        .iter()
        .filter(|x| !inert_a.contains(&x.key))
        .map(|x| (Kind::Arg, x))
        .chain(
            d.env
                .iter()
                .filter(|x| !inert_e.contains(&x.key))
                .map(|x| (Kind::Env, x)),
        )
        .collect();
    (!deltas.is_empty()).then_some(deltas)
}

/// Which tests of A's hypotheses the deltas carry out; `None` when none does, or when some
/// delta is no test's change.
fn tests_carried_out(a: &Attempt, b: &Attempt, deltas: &[(Kind, &Delta)]) -> Option<Tested> {
    let mut explained = vec![false; deltas.len()];
    let mut tested: Tested = BTreeMap::new();
    for h in &a.hypotheses {
        for t in &h.tests {
            let hit: Vec<usize> = deltas
                .iter()
                .enumerate()
                .filter(|(_, (kind, x))| t.changes.iter().any(|c| makes(c, *kind, x, a, b)))
                .map(|(i, _)| i)
                .collect();
            if !hit.is_empty() {
                for &i in &hit {
                    explained[i] = true;
                }
                let entry = tested.entry(h.cause).or_default();
                if !entry.iter().any(|(act, _)| *act == t.action) {
                    entry.push((t.action.clone(), hit));
                }
            }
        }
    }
    if tested.is_empty() || explained.iter().any(|e| !e) {
        return None;
    }
    Some(tested)
}

/// Whether the delta from A to B is the change a test lists (its arg or env var, moved
/// the way the change says).
fn makes(c: &Change, kind: Kind, x: &Delta, a: &Attempt, b: &Attempt) -> bool {
    let target_ok = match (c.target(), kind) {
        (Target::Arg(k), Kind::Arg) | (Target::Env(k), Kind::Env) => k == x.key,
        _ => false,
    };
    // A number absent from a command is the value the server
    // printed (its default, or its own heuristic).
    let numeric = matches!(c.op, ChangeOp::Lower | ChangeOp::Higher);
    let before = x.before.as_deref().or_else(|| {
        (numeric && kind == Kind::Arg)
            .then(|| a.log_args.get(&x.key).map(String::as_str))
            .flatten()
    });
    let after = x.after.as_deref().or_else(|| {
        (numeric && kind == Kind::Arg)
            .then(|| b.log_args.get(&x.key).map(String::as_str))
            .flatten()
    });
    target_ok && c.matches(before, after)
}

/// What B's ending says of the hypotheses it tested against A's failure `af`: ruled out
/// when it failed the same way, supported when it failed otherwise or came up; `None`
/// when it says nothing (ready without the request a late failure needs).
fn verdict_of(a: &Attempt, af: FailureRef, b: &Attempt) -> Option<Verdict> {
    Some(match (b.outcome, b.failure) {
        (o, Some(bf)) if o.failed() && bf.same_as(&af) => Verdict::RuledOut,
        (o, Some(_)) if o.failed() => Verdict::Supported,
        (Outcome::Ready, _) => {
            let probed = b.probe.as_ref().is_some_and(|p| p.ok);
            if needs_request(&af, a.outcome) && !probed {
                // Ready without a request says nothing about a failure on the first request.
                return None;
            }
            Verdict::Supported
        }
        _ => return None,
    })
}

/// One ruling per tested cause, saying what B changed against A and what happened.
fn rulings_of(
    a: &Attempt,
    af: FailureRef,
    b: &Attempt,
    verdict: Verdict,
    tested: Tested,
    deltas: &[(Kind, &Delta)],
) -> Vec<Ruling> {
    let happened = match verdict {
        Verdict::RuledOut => format!("failed the same way ({af})"),
        Verdict::Supported => match (b.outcome, b.failure) {
            (Outcome::Ready, _) => {
                if b.probe.as_ref().is_some_and(|p| p.ok) {
                    "was ready and answered the probe".to_string()
                } else {
                    "was ready".to_string()
                }
            }
            (_, Some(bf)) => format!("failed differently ({bf}, not {af})"),
            _ => "ended differently".to_string(),
        },
    };
    let others: Vec<Cause> = tested.keys().copied().collect();
    tested
        .into_iter()
        .map(|(cause, tests)| {
            let mut idx: Vec<usize> = tests.iter().flat_map(|(_, h)| h.clone()).collect();
            idx.sort();
            idx.dedup();
            let changes: Vec<String> = idx
                .iter()
                .map(|&i| describe(deltas[i].0, deltas[i].1))
                .collect();
            let with: Vec<String> = others
                .iter()
                .filter(|c| **c != cause)
                .map(|c| c.to_string())
                .collect();
            let joint = if with.is_empty() || verdict == Verdict::RuledOut {
                String::new()
            } else {
                format!("; the same change also tests {}", with.join(", "))
            };
            Ruling {
                cause,
                verdict,
                by_attempt: b.id,
                against_attempt: a.id,
                failure: FailureRef { rank: None, ..af },
                experiment: tests
                    .first()
                    .map(|(act, _)| act.clone())
                    .unwrap_or_default(),
                why: format!(
                    "#{} changed {} against #{} and {happened}{joint}",
                    b.id,
                    changes.join(", "),
                    a.id
                ),
            }
        })
        .collect()
}

/// The rulings in force for an attempt: those made by it or before it, about
/// its failure (or made by it), the latest per cause.
pub fn in_force<'a>(rulings: &'a [Ruling], at: &Attempt) -> Vec<&'a Ruling> {
    let mut latest: BTreeMap<Cause, &Ruling> = BTreeMap::new();
    for r in rulings {
        let about = r.by_attempt == at.id || at.failure.is_some_and(|f| f.same_as(&r.failure));
        if r.by_attempt <= at.id && about {
            match latest.get(&r.cause) {
                Some(old) if old.by_attempt > r.by_attempt => {}
                _ => {
                    latest.insert(r.cause, r);
                }
            }
        }
    }
    latest.into_values().collect()
}

/// The part of an experiment's text that is the same in the report (before any `{placeholder}`).
fn action_prefix(action: &str) -> &str {
    let p = action.split('{').next().unwrap_or(action).trim_end();
    if p.len() >= 6 {
        p
    } else {
        action
    }
}

/// Writes the journal's rulings into a report: ruled-out hypotheses go last
/// with a note, supported ones get a note, and experiments already carried
/// out are marked and moved after the ones not yet tried.
pub fn annotate(report: &mut Report, rulings: &[&Ruling]) {
    if rulings.is_empty() {
        return;
    }
    let mut notes = Vec::new();
    for r in rulings {
        let word = match r.verdict {
            Verdict::RuledOut => "ruled out",
            Verdict::Supported => "supported",
        };
        notes.push(format!(
            "journal: {} {word} by attempt #{}: {}",
            r.cause, r.by_attempt, r.why
        ));
    }
    for h in &mut report.hypotheses {
        let mut tried: Vec<Experiment> = Vec::new();
        let mut fresh: Vec<Experiment> = Vec::new();
        for mut x in h.experiments.drain(..) {
            let done = rulings.iter().find(|r| {
                r.cause == h.cause && !r.experiment.is_empty() && {
                    let p = action_prefix(&r.experiment);
                    x.action.starts_with(p)
                }
            });
            match done {
                Some(r) => {
                    x.tried = Some(Tried {
                        attempt: r.by_attempt,
                        verdict: r.verdict.as_str().to_string(),
                    });
                    tried.push(x);
                }
                None => fresh.push(x),
            }
        }
        fresh.extend(tried);
        h.experiments = fresh;
    }
    let ruled_out = |h: &Hypothesis| {
        rulings
            .iter()
            .any(|r| r.cause == h.cause && r.verdict == Verdict::RuledOut)
    };
    let (keep, out): (Vec<Hypothesis>, Vec<Hypothesis>) =
        report.hypotheses.drain(..).partition(|h| !ruled_out(h));
    report.hypotheses = keep;
    report.hypotheses.extend(out.into_iter().map(|mut h| {
        h.summary = format!("[ruled out] {}", h.summary);
        h
    }));
    notes.append(&mut report.notes);
    report.notes = notes;
}
