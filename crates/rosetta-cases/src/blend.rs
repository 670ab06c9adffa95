//! What similar cases mean for the report: the short list of similar reports
//! shown to the user (above a floor, at most five), and the causes of the
//! closest cases as evidence in the ranking. A case votes for its cause (and,
//! with less weight, its `also` causes) in proportion to its similarity; the
//! votes' shares are mixed with the rules' confidences at a weight chosen by
//! leave-one-batch-out cross-validation (`docs/cases.md`). A cause only the
//! cases suggest enters the list marked as such. Finding the cases is
//! `library.rs`'s business.

use crate::library::Hit;
use rosetta_report::{CaseRef, Experiment, Hypothesis, Report, Similar};
use rosetta_schema::Cause;

/// The rule id of a hypothesis that only similar reports support.
pub const CASES_RULE: &str = "similar-reports";

/// The numbers of the blend. [`Tuning::default`] holds the values chosen by
/// leave-one-batch-out cross-validation; `docs/cases.md` gives the table.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tuning {
    /// A case is shown when its similarity reaches this.
    pub show_floor: f32,
    /// The floor when rosetta found no failure and the signature is the log's
    /// last error-looking lines.
    pub fallback_floor: f32,
    /// At most this many similar reports are shown.
    pub max_shown: usize,
    /// A case votes when its similarity reaches this.
    pub vote_floor: f32,
    /// At most this many cases vote.
    pub voters: usize,
    /// A case votes only when its similarity reaches this share of the closest case's: beside
    /// a near match, cases a fraction as similar add noise, not evidence (0: off).
    pub relative_floor: f32,
    /// Weight of a case's `also` causes against its cause.
    pub also: f64,
    /// Share of belief given to the cases' votes, against the rules' confidences.
    pub weight: f64,
    /// The share when no rule cites a line of the log: the rules' ranking is then only how
    /// often the failure's class has each cause. Kept at `weight`: on held-out batches a
    /// larger share ranked a right cause first more often, on the corpus leave one batch out
    /// less often (`docs/cases.md`, "When no rule cites a line").
    pub bare: f64,
    /// A cause no rule names enters the list when its share of the votes reaches this.
    pub enter: f64,
    /// A case's vote is its similarity to this power.
    pub power: f64,
    /// The cause with the largest share of the votes is lifted to third place
    /// when it is not in the first three and its share reaches this (above 1: never).
    pub third: f64,
    /// A case this similar is the same report: its cause is lifted to third place
    /// when it is not in the first three, whatever the other cases vote (above 1: never).
    pub known: f32,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            show_floor: 0.30,
            fallback_floor: 0.5,
            max_shown: 5,
            vote_floor: 0.10,
            voters: 7,
            relative_floor: 0.25,
            also: 0.5,
            weight: 0.05,
            bare: 0.05,
            enter: 0.1,
            power: 1.0,
            third: 0.3,
            known: 0.9,
        }
    }
}

impl Tuning {
    /// These numbers with some replaced, as `name=value` pairs separated by commas
    /// (`power=2,voters=5`); the names are the fields'. The error names the pair that
    /// does not parse.
    pub fn with(self, pairs: &str) -> Result<Tuning, String> {
        // Through the fields' own names and types (serde), so a number added to the
        // blend is settable here without a list to keep in step.
        let mut fields = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(m)) => m,
            _ => return Err("the blend's numbers do not serialise".into()),
        };
        for pair in pairs.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (name, value) = pair
                .split_once('=')
                .ok_or_else(|| format!("`{pair}` is not name=value"))?;
            let name = name.trim();
            let slot = fields
                .get_mut(name)
                .ok_or_else(|| format!("no number named `{name}`"))?;
            let number: serde_json::Number = value
                .trim()
                .parse()
                .map_err(|_| format!("`{pair}`: not a number"))?;
            *slot = serde_json::Value::Number(number);
        }
        serde_json::from_value(serde_json::Value::Object(fields))
            .map_err(|e| format!("`{pairs}`: {e}"))
    }
}

/// How the ranking uses the cases (measurement switches; users get `Blend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Rules and cases together.
    Blend,
    /// The rules' ranking untouched (cases are still shown).
    Rules,
    /// The cases' votes alone as the ranking.
    Cases,
    /// No library: nothing is looked up or shown (the baseline of the benchmark).
    Off,
}

/// The similar reports to show: hits at or above the floor, best first.
pub fn shown(hits: &[Hit], fallback: bool, t: &Tuning) -> Vec<Similar> {
    let floor = if fallback {
        t.fallback_floor
    } else {
        t.show_floor
    };
    hits.iter()
        .filter(|h| h.score >= floor)
        .take(t.max_shown)
        .map(|h| Similar {
            case: h.case.id.clone(),
            source: h.case.labels.source.clone(),
            class: h.case.labels.class,
            phase: h.case.labels.phase,
            cause: h.case.labels.cause,
            fix: h.case.labels.fix.clone(),
            score: (f64::from(h.score) * 100.0).round() / 100.0,
        })
        .collect()
}

/// A cause the cases vote for: its share of the votes and the cases behind it
/// (those whose own cause it is first, best first).
#[derive(Debug, Clone)]
pub struct Vote<'a> {
    /// The cause.
    pub cause: Cause,
    /// Its share of all votes, 0..=1.
    pub share: f64,
    /// The voting cases whose cause (not `also`) it is.
    pub cases: Vec<&'a Hit<'a>>,
    /// The voting cases with it among their `also` causes.
    pub also_cases: Vec<&'a Hit<'a>>,
}

/// The causes the closest cases vote for, largest share first.
pub fn votes<'a>(hits: &'a [Hit<'a>], t: &Tuning) -> Vec<Vote<'a>> {
    let mut out: Vec<(Vote, f64)> = Vec::new();
    let mut add = |cause: Cause, w: f64, h: &'a Hit<'a>, main: bool| {
        if cause == Cause::Unknown || w <= 0.0 {
            return;
        }
        let i = match out.iter().position(|(v, _)| v.cause == cause) {
            Some(i) => i,
            None => {
                out.push((
                    Vote {
                        cause,
                        share: 0.0,
                        cases: Vec::new(),
                        also_cases: Vec::new(),
                    },
                    0.0,
                ));
                out.len() - 1
            }
        };
        out[i].1 += w;
        if main {
            out[i].0.cases.push(h);
        } else {
            out[i].0.also_cases.push(h);
        }
    };
    let best = hits.iter().map(|h| h.score).fold(0.0f32, f32::max);
    let floor = t.vote_floor.max(best * t.relative_floor);
    for h in hits.iter().filter(|h| h.score >= floor).take(t.voters) {
        let s = f64::from(h.score).powf(t.power);
        add(h.case.labels.cause, s, h, true);
        for a in &h.case.labels.also {
            add(*a, s * t.also, h, false);
        }
    }
    let total: f64 = out.iter().map(|(_, w)| w).sum();
    let mut votes: Vec<Vote> = out
        .into_iter()
        .map(|(mut v, w)| {
            v.share = if total > 0.0 { w / total } else { 0.0 };
            v
        })
        .collect();
    votes.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.cause.cmp(&b.cause)));
    votes
}

/// The voting cases behind a cause, most similar first.
fn case_refs(v: &Vote) -> Vec<CaseRef> {
    let mut all: Vec<&Hit> = v.cases.iter().chain(&v.also_cases).copied().collect();
    all.sort_by(|a, b| b.score.total_cmp(&a.score));
    all.iter()
        .map(|h| CaseRef {
            case: h.case.id.clone(),
            source: h.case.labels.source.clone(),
            score: (f64::from(h.score) * 100.0).round() / 100.0,
        })
        .collect()
}

/// How a case is named to a user: `owner/repo#N` for a GitHub thread, else its id.
fn case_name(c: &crate::Case) -> String {
    if c.labels.source.starts_with("http") {
        rosetta_report::thread_name(&c.labels.source)
    } else {
        c.id.clone()
    }
}

fn cases_hypothesis(v: &Vote) -> Hypothesis {
    let mut all: Vec<&Hit> = v.cases.iter().chain(&v.also_cases).copied().collect();
    all.sort_by(|a, b| b.score.total_cmp(&a.score));
    let best = all.first().map(|h| h.case);
    let n = all.len();
    let summary = match best {
        Some(c) => format!(
            "seen in {n} similar report{}: {}",
            if n == 1 { "" } else { "s" },
            c.labels.fix
        ),
        None => format!("seen in {n} similar reports"),
    };
    let mut experiments: Vec<Experiment> = Vec::new();
    let mut references: Vec<String> = Vec::new();
    for h in &all {
        let fix = h.case.labels.fix.trim();
        if !fix.is_empty() && experiments.len() < 3 && !experiments.iter().any(|e| e.action == fix)
        {
            experiments.push(Experiment {
                action: fix.to_string(),
                as_in: Some(case_name(h.case)),
                ..Experiment::default()
            });
        }
        if !references.contains(&h.case.labels.source) {
            references.push(h.case.labels.source.clone());
        }
    }
    Hypothesis {
        cause: v.cause,
        rule: CASES_RULE.to_string(),
        confidence: 0.0,
        summary,
        why: Some(format!(
            "no rule fired for {}; the labelled reports whose failure looks most like this one name it",
            v.cause
        )),
        evidence: Vec::new(),
        experiments,
        references,
        also_rules: Vec::new(),
        cases: case_refs(v),
    }
}

/// A hypothesis being ranked: its unnormalised score, its order of arrival (the tie-break)
/// and itself.
type Scored = (f64, usize, Hypothesis);

/// Mixes the cases' votes into the report's hypotheses (which must come from a
/// log with a failure): each cause's confidence becomes
/// `(1 - weight) · rules + weight · votes`; causes only the cases name enter
/// marked as such; the list is re-sorted. In [`Mode::Cases`] the votes alone
/// make the list; in [`Mode::Rules`] nothing changes.
pub fn blend(hyps: &mut Vec<Hypothesis>, hits: &[Hit], mode: Mode, t: &Tuning) {
    if matches!(mode, Mode::Rules | Mode::Off) {
        return;
    }
    let votes = votes(hits, t);
    if votes.is_empty() {
        return;
    }
    let bare = hyps.iter().all(|h| h.evidence.is_empty());
    let w = match mode {
        Mode::Cases => 1.0,
        _ if bare => t.bare,
        _ => t.weight,
    };
    if mode == Mode::Cases {
        hyps.retain(|h| votes.iter().any(|v| v.cause == h.cause));
    }
    let mut scored = mixed(hyps.drain(..), &votes, mode, w, t);
    // "No rule explains it" yields to any cause the cases name.
    if scored.len() > 1 {
        scored.retain(|(_, _, h)| h.cause != Cause::Unknown);
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    lift_top_vote(&mut scored, &votes, t);
    lift_known_case(&mut scored, hits, &votes, t);
    *hyps = normalised(scored);
}

/// The rules' hypotheses scored `(1 - w) · confidence + w · share` (with the cases behind
/// their cause), then the causes only the cases name that enter, in vote order.
fn mixed(
    hyps: impl Iterator<Item = Hypothesis>,
    votes: &[Vote],
    mode: Mode,
    w: f64,
    t: &Tuning,
) -> Vec<Scored> {
    let mut scored: Vec<Scored> = Vec::new();
    for (i, mut h) in hyps.enumerate() {
        let mut s = (1.0 - w) * h.confidence;
        if let Some(v) = votes.iter().find(|v| v.cause == h.cause) {
            s += w * v.share;
            h.cases = case_refs(v);
        }
        scored.push((s, i, h));
    }
    let n = scored.len();
    for (j, v) in votes.iter().enumerate() {
        if (mode == Mode::Cases || v.share >= t.enter)
            && !scored.iter().any(|(_, _, h)| h.cause == v.cause)
        {
            scored.push((w * v.share, n + j, cases_hypothesis(v)));
        }
    }
    scored
}

/// Lifts the cause with the largest share of the votes to third place when it is below
/// and its share reaches `t.third`.
fn lift_top_vote(scored: &mut Vec<Scored>, votes: &[Vote], t: &Tuning) {
    if let Some(v) = votes.first().filter(|v| v.share >= t.third) {
        if let Some(i) = scored
            .iter()
            .position(|x| x.2.cause == v.cause)
            .filter(|&i| i > 2)
        {
            let mut x = scored.remove(i);
            x.0 = x.0.max(scored[2].0);
            scored.insert(2, x);
        }
    }
}

/// The same report seen before (a near-exact match) names its cause, however many
/// looser matches vote otherwise: it is lifted to third place (or entered there).
fn lift_known_case(scored: &mut Vec<Scored>, hits: &[Hit], votes: &[Vote], t: &Tuning) {
    if let Some(v) = hits
        .first()
        .filter(|h| h.score >= t.known)
        .and_then(|h| votes.iter().find(|v| v.cause == h.case.labels.cause))
    {
        let at = scored.iter().position(|x| x.2.cause == v.cause);
        if at.is_none_or(|i| i > 2) {
            let mut x = match at {
                Some(i) => scored.remove(i),
                None => (0.0, usize::MAX, cases_hypothesis(v)),
            };
            let third = scored.len().min(2);
            if let Some(y) = scored.get(third) {
                x.0 = x.0.max(y.0);
            }
            scored.insert(third, x);
        }
    }
}

/// The hypotheses in their ranked order, each confidence its share of the scores'
/// total, rounded to hundredths.
fn normalised(scored: Vec<Scored>) -> Vec<Hypothesis> {
    let total: f64 = scored.iter().map(|(s, _, _)| s).sum();
    scored
        .into_iter()
        .map(|(s, _, mut h)| {
            h.confidence = if total > 0.0 {
                (s / total * 100.0).round() / 100.0
            } else {
                0.0
            };
            h
        })
        .collect()
}

/// Fills `report.similar` and, when the report has a failure, blends the
/// cases' causes into its hypotheses.
pub fn apply(report: &mut Report, hits: &[Hit], fallback: bool, mode: Mode, t: &Tuning) {
    report.similar = shown(hits, fallback, t);
    if report.failure.is_some() && !fallback {
        blend(&mut report.hypotheses, hits, mode, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::{Case, Labels};
    use rosetta_schema::{FailureClass, Phase};

    fn case(id: &str, cause: Cause, also: &[Cause]) -> Case {
        Case {
            id: id.into(),
            labels: Labels {
                source: format!("https://github.com/o/r/issues/{}", id.len()),
                class: FailureClass::GpuOom,
                phase: Phase::GraphCapture,
                cause,
                also: also.to_vec(),
                fix: format!("fix of {id}"),
            },
            sig: String::new(),
        }
    }

    #[test]
    fn tuning_takes_named_numbers_and_names_a_bad_pair() {
        let t = Tuning::default().with("power=2, voters=5").unwrap();
        assert_eq!((t.power, t.voters), (2.0, 5));
        assert_eq!(t.weight, Tuning::default().weight);
        assert_eq!(Tuning::default().with("").unwrap(), Tuning::default());
        let e = Tuning::default().with("power=2,votes=5").unwrap_err();
        assert!(e.contains("`votes`"), "{e}");
        let e = Tuning::default().with("voters=2.5").unwrap_err();
        assert!(e.contains("voters=2.5"), "{e}");
        // Every number of the blend is settable by its field name.
        let all = serde_json::to_value(Tuning::default()).unwrap();
        for name in all.as_object().unwrap().keys() {
            let t = Tuning::default().with(&format!("{name}=3")).unwrap();
            assert_ne!(t, Tuning::default(), "{name}");
        }
        assert!(Tuning::default().with("power").is_err());
    }

    fn hyp(cause: Cause, confidence: f64) -> Hypothesis {
        Hypothesis {
            cause,
            rule: format!("rule-{cause}"),
            confidence,
            summary: String::new(),
            why: None,
            evidence: vec![],
            experiments: vec![],
            references: vec![],
            also_rules: vec![],
            cases: vec![],
        }
    }

    #[test]
    fn cases_add_evidence_and_a_cause_only_they_name_enters_marked() {
        let cs = [
            case("a-1", Cause::MemoryBudget, &[Cause::CudaGraph]),
            case("a-2", Cause::MemoryBudget, &[]),
            case("a-3", Cause::KernelBug, &[]),
        ];
        let hits: Vec<Hit> = cs
            .iter()
            .zip([0.8f32, 0.6, 0.05])
            .map(|(case, score)| Hit { case, score })
            .collect();
        let t = Tuning::default();
        let v = votes(&hits, &t);
        assert_eq!(v[0].cause, Cause::MemoryBudget);
        assert!(
            v.iter().all(|x| x.cause != Cause::KernelBug),
            "below the vote floor"
        );
        let rules = vec![hyp(Cause::CudaGraph, 0.7), hyp(Cause::FrameworkBug, 0.3)];

        let mut same = rules.clone();
        blend(&mut same, &hits, Mode::Rules, &t);
        assert_eq!(same, rules);

        let mut h = rules.clone();
        blend(&mut h, &hits, Mode::Blend, &t);
        let mb = h.iter().find(|x| x.cause == Cause::MemoryBudget).unwrap();
        assert_eq!(mb.rule, CASES_RULE);
        assert!(
            mb.summary
                .starts_with("seen in 2 similar reports: fix of a-1"),
            "{}",
            mb.summary
        );
        assert_eq!(mb.cases.len(), 2);
        let cg = h.iter().find(|x| x.cause == Cause::CudaGraph).unwrap();
        assert_eq!(cg.cases[0].case, "a-1", "an `also` cause is evidence too");
        let sum: f64 = h.iter().map(|x| x.confidence).sum();
        assert!((sum - 1.0).abs() < 0.03, "{sum}");
        assert!(h.windows(2).all(|w| w[0].confidence >= w[1].confidence));

        let mut only = rules.clone();
        blend(&mut only, &hits, Mode::Cases, &t);
        assert_eq!(only[0].cause, Cause::MemoryBudget);
        assert!(only.iter().all(|x| x.cause != Cause::FrameworkBug));
    }

    #[test]
    fn beside_a_near_match_distant_cases_do_not_vote() {
        let cs = [
            case("n-1", Cause::KernelBug, &[Cause::FrameworkBug]),
            case("n-2", Cause::DriverEnv, &[]),
            case("n-3", Cause::FrameworkBug, &[]),
            case("n-4", Cause::FrameworkBug, &[]),
        ];
        let hits: Vec<Hit> = cs
            .iter()
            .zip([0.68f32, 0.47, 0.13, 0.12])
            .map(|(case, score)| Hit { case, score })
            .collect();
        let causes = |t: &Tuning| votes(&hits, t).iter().map(|v| v.cause).collect::<Vec<_>>();
        // Without the relative floor the two distant cases lift framework-bug over driver-env.
        let off = Tuning::default().with("relative_floor=0").unwrap();
        assert_eq!(causes(&off)[1], Cause::FrameworkBug);
        let t = Tuning::default();
        assert_eq!(
            causes(&t),
            vec![Cause::KernelBug, Cause::DriverEnv, Cause::FrameworkBug]
        );
        let fb = votes(&hits, &t);
        assert!(
            fb[2].cases.is_empty(),
            "only the near case's `also` is left"
        );
        // When every match is distant, the relative floor keeps them all.
        let far: Vec<Hit> = cs
            .iter()
            .zip([0.2f32, 0.15, 0.13, 0.12])
            .map(|(case, score)| Hit { case, score })
            .collect();
        assert_eq!(votes(&far, &t)[0].cause, Cause::FrameworkBug);
    }

    #[test]
    fn a_report_seen_before_keeps_its_cause_in_the_top_three() {
        // The log is a report the library holds (1.0); six loose neighbours vote otherwise.
        let mut cs = vec![case("k-0", Cause::FrameworkBug, &[])];
        for i in 1..7 {
            cs.push(case(&format!("k-{i}"), Cause::InstallEnv, &[]));
        }
        let hits: Vec<Hit> = cs
            .iter()
            .zip([1.0f32, 0.34, 0.3, 0.28, 0.25, 0.22, 0.19])
            .map(|(case, score)| Hit { case, score })
            .collect();
        let rules = || {
            vec![
                hyp(Cause::VersionMismatch, 0.33),
                hyp(Cause::WeightLayout, 0.33),
                hyp(Cause::ModelConfig, 0.2),
                hyp(Cause::FrameworkBug, 0.14),
            ]
        };
        let top3 = |t: &Tuning| {
            let mut h = rules();
            blend(&mut h, &hits, Mode::Blend, t);
            h.iter().take(3).map(|x| x.cause).collect::<Vec<_>>()
        };
        let never = Tuning {
            known: 2.0,
            ..Tuning::default()
        };
        assert!(!top3(&never).contains(&Cause::FrameworkBug), "outvoted");
        let seen = top3(&Tuning::default());
        assert_eq!(seen[2], Cause::FrameworkBug, "{seen:?}");
        // Below the floor of a report seen before, the votes decide as they did.
        let mut loose = hits.clone();
        loose[0].score = 0.6;
        let mut h = rules();
        blend(&mut h, &loose, Mode::Blend, &Tuning::default());
        assert!(h.iter().take(3).all(|x| x.cause != Cause::FrameworkBug));
    }

    #[test]
    fn cases_weigh_more_when_no_rule_cites_a_line() {
        let cs = [
            case("c-1", Cause::CommSetup, &[]),
            case("c-2", Cause::CommSetup, &[]),
        ];
        let hits: Vec<Hit> = cs
            .iter()
            .zip([0.6f32, 0.5])
            .map(|(case, score)| Hit { case, score })
            .collect();
        let t = Tuning {
            bare: 0.8,
            ..Tuning::default()
        };
        // Only the class's prior ranks: the similar reports take the lead.
        let mut prior = vec![hyp(Cause::FrameworkBug, 0.6), hyp(Cause::CommSetup, 0.4)];
        blend(&mut prior, &hits, Mode::Blend, &t);
        assert_eq!(prior[0].cause, Cause::CommSetup);
        // A rule that cites a line keeps its place.
        let mut cited = vec![hyp(Cause::FrameworkBug, 0.6), hyp(Cause::CommSetup, 0.4)];
        cited[0].evidence.push(rosetta_report::Evidence {
            line: Some(3),
            file: None,
            text: "AssertionError: lengths differ".into(),
        });
        blend(&mut cited, &hits, Mode::Blend, &t);
        assert_eq!(cited[0].cause, Cause::FrameworkBug);
    }

    #[test]
    fn no_rule_fired_yields_to_the_cases_and_weak_cases_are_not_shown() {
        let cs = [case("b-1", Cause::CommSetup, &[])];
        let hits = vec![Hit {
            case: &cs[0],
            score: 0.25,
        }];
        let t = Tuning::default();
        let mut h = vec![hyp(Cause::Unknown, 1.0)];
        blend(&mut h, &hits, Mode::Blend, &t);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].cause, Cause::CommSetup);
        assert!(
            shown(&hits, false, &t).is_empty(),
            "0.25 is below the floor"
        );
        let strong = vec![Hit {
            case: &cs[0],
            score: 0.4,
        }];
        assert_eq!(shown(&strong, false, &t).len(), 1);
        assert!(
            shown(&strong, true, &t).is_empty(),
            "without a failure the floor is higher"
        );
    }
}
