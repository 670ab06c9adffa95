//! Findings from each source, in one shape: what the command parser noticed,
//! what the config checker found, and what the knowledge base's rules predict
//! before launch; then sorted, de-duplicated and guarded so that no fix names
//! a transformers release that cannot load the model.

use regex::Regex;
use rosetta_env::model_config::ModelConfig;
use rosetta_kb::config_lint::{Lint, Severity as LintSeverity};
use rosetta_kb::engine::fill;
use rosetta_kb::rule::Kind;
use rosetta_kb::tables::{Known, ModelTypeTable};
use rosetta_kb::{Context, KnowledgeBase};
use rosetta_launch::{EngineSpec, LaunchCommand, ParseNote};
use rosetta_report::{PreflightFinding, Severity};
use rosetta_schema::Cause;
use std::sync::OnceLock;

fn finding(cause: Cause, severity: Severity, rule: &str, message: String) -> PreflightFinding {
    PreflightFinding {
        cause,
        severity,
        rule: rule.to_string(),
        message,
        evidence: Vec::new(),
        fix: None,
        crash: None,
        why: None,
        references: Vec::new(),
    }
}

/// What parsing the command noticed.
pub fn from_parse(
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    engine_version: Option<&str>,
    out: &mut Vec<PreflightFinding>,
) {
    let table = flag_table(spec, engine_version);
    for n in &cmd.notes {
        if let Some(f) = from_note(n, cmd, spec, &table) {
            out.push(f);
        }
    }
    for p in &cmd.positional {
        let mut f = finding(
            Cause::BadLaunchArgs,
            Severity::Risk,
            "launch:stray-word",
            format!(
                "`{p}` is not a flag's value and {} takes no positional argument here",
                spec.id
            ),
        );
        f.evidence.push(p.clone());
        f.crash = Some("config-error in startup (unrecognized arguments)".into());
        out.push(f);
    }
}

/// Names the flag table the command was checked against (and the version it is for).
fn flag_table(spec: &EngineSpec, engine_version: Option<&str>) -> String {
    match (&spec.flags_version, engine_version) {
        (Some(t), Some(v)) if t != v => {
            format!("{} {t}'s flag table (the command is for {v})", spec.id)
        }
        (Some(t), _) => format!("{} {t}'s flag table", spec.id),
        (None, _) => format!("rosetta's partial flag table for {}", spec.id),
    }
}

/// The finding for one parse note; none for a note that is no finding (shell words ignored).
fn from_note(
    n: &ParseNote,
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    table: &str,
) -> Option<PreflightFinding> {
    Some(match n {
        ParseNote::UnknownFlag { spelled } => unknown_flag(spelled, spec, table),
        ParseNote::UnlistedFlag { spelled } => {
            let mut f = finding(
                Cause::BadLaunchArgs,
                Severity::Info,
                "launch:unlisted-flag",
                format!("`{spelled}` is not in {table}: not checked"),
            );
            f.evidence.push(spelled.clone());
            f
        }
        ParseNote::BadChoice {
            key,
            value,
            choices,
        } => bad_choice(key, value, choices, spec, table),
        ParseNote::BadType {
            key,
            value,
            expected,
        } => {
            let mut f = finding(
                Cause::BadLaunchArgs,
                Severity::Blocker,
                "launch:bad-type",
                format!("{} takes an {expected}, not `{value}`", spec.spelling(key)),
            );
            f.evidence.push(format!("{key}={value}"));
            f.crash = Some("config-error in startup (invalid value)".into());
            f
        }
        ParseNote::MissingValue { spelled } => {
            let mut f = finding(
                Cause::BadLaunchArgs,
                Severity::Blocker,
                "launch:missing-value",
                format!("{spelled} needs a value and has none"),
            );
            f.evidence.push(spelled.clone());
            f.crash = Some("config-error in startup (expected one argument)".into());
            f
        }
        ParseNote::Repeated { key } => repeated_flag(key, cmd, spec),
        ParseNote::Deprecated { spelled } => {
            let mut f = finding(
                Cause::BadLaunchArgs,
                Severity::Info,
                "launch:deprecated-flag",
                format!("{spelled} is deprecated in {table}"),
            );
            f.evidence.push(spelled.clone());
            f
        }
        ParseNote::IgnoredShell { .. } => return None,
    })
}

/// A flag the engine's table does not have: the server would exit at startup.
fn unknown_flag(spelled: &str, spec: &EngineSpec, table: &str) -> PreflightFinding {
    let mut f = finding(
        Cause::BadLaunchArgs,
        Severity::Risk,
        "launch:unknown-flag",
        format!(
            "`{spelled}` is not a flag of {}: the server would exit with `unrecognized arguments`",
            spec.id
        ),
    );
    f.evidence.push(format!("{spelled}: not in {table}"));
    f.crash = Some("config-error in startup".into());
    f.fix = Some(format!(
        "remove {spelled}, or check its spelling against `--help` of the installed {}",
        spec.id
    ));
    f
}

/// A value outside the flag's choices.
fn bad_choice(
    key: &str,
    value: &str,
    choices: &[String],
    spec: &EngineSpec,
    table: &str,
) -> PreflightFinding {
    let mut f = finding(
        Cause::BadLaunchArgs,
        Severity::Risk,
        "launch:bad-choice",
        format!(
            "{} {value} is not one of the values {} accepts",
            spec.spelling(key),
            spec.id
        ),
    );
    f.evidence.push(format!(
        "{key}={value}; {table} allows {}",
        choices.join(", ")
    ));
    f.crash = Some("config-error in startup (invalid choice)".into());
    f
}

/// A flag given more than once: the last one wins.
fn repeated_flag(key: &str, cmd: &LaunchCommand, spec: &EngineSpec) -> PreflightFinding {
    let mut f = finding(
        Cause::BadLaunchArgs,
        Severity::Info,
        "launch:repeated-flag",
        format!(
            "{} is given more than once; the last one wins",
            spec.spelling(key)
        ),
    );
    f.evidence
        .push(format!("{key}={}", cmd.get(key).unwrap_or_default()));
    f
}

/// The config checker's findings, with a fix spelled for this engine.
pub fn from_config_lint(
    lint: &Lint,
    cfg: &ModelConfig,
    cmd: &LaunchCommand,
    spec: &EngineSpec,
    transformers: Option<&str>,
    out: &mut Vec<PreflightFinding>,
) {
    let table = ModelTypeTable::embedded();
    for l in &lint.findings {
        let severity = match l.severity {
            LintSeverity::Error => Severity::Blocker,
            LintSeverity::Warning => Severity::Risk,
        };
        let mut f = finding(
            l.cause,
            severity,
            &format!("config:{}", l.field),
            l.reason.clone(),
        );
        f.evidence
            .push(format!("{}: {}", cfg.path.display(), l.field));
        match l.field.as_str() {
            "model_type" => {
                if let (Some(mt), Some(v)) = (&cfg.model_type, transformers) {
                    f.evidence
                        .push(format!("model_type {mt} · transformers {v}"));
                    f.crash =
                        Some("config-error in startup (KeyError / unrecognized model type)".into());
                    match table.knows(mt, v) {
                        Known::NotYet { first } => {
                            f.fix = Some(format!("pip install 'transformers>={first}'"));
                        }
                        Known::Removed { last_seen } => {
                            f.fix = Some(format!("pip install 'transformers<={last_seen}'"));
                        }
                        _ => {}
                    }
                }
            }
            k if k == "max_position_embeddings"
                || cfg.text.max_position_key.as_deref() == Some(k) =>
            {
                if let (Some(mpe), Some(ctx)) =
                    (cfg.text.max_position_embeddings, cmd.get("context_length"))
                {
                    f.evidence.push(format!("context_length={ctx} · {k}={mpe}"));
                    f.fix = Some(format!("{} {mpe}", spec.spelling("context_length")));
                    f.crash = Some(
                        "config-error in startup, or device-side-assert on long prompts".into(),
                    );
                }
            }
            _ => {}
        }
        out.push(f);
    }
}

/// The knowledge base's rules, run before launch.
pub fn from_rules(
    kb: &KnowledgeBase,
    ctx: &Context,
    _spec: &EngineSpec,
    out: &mut Vec<PreflightFinding>,
) {
    for rule in &kb.rules {
        let Some(pre) = &rule.def.preflight else {
            continue;
        };
        if rule.def.kind != Kind::Cause {
            continue;
        }
        let Some(fi) = ctx.eval(rule) else { continue };
        let w = &rule.def.when;
        let crash = w.class.first().map(|c| {
            let others = w.class.len().saturating_sub(1);
            let mut s = c.to_string();
            if let Some(p) = w.phase.first() {
                s.push_str(&format!(" in {p}"));
            }
            if others > 0 {
                s.push_str(&format!(" (or {others} related failure classes)"));
            }
            s
        });
        out.push(PreflightFinding {
            cause: rule.def.cause,
            severity: pre.severity,
            rule: rule.id().to_string(),
            message: fill(&rule.def.summary, &fi.vars),
            evidence: fi.evidence.iter().map(|e| e.text.clone()).collect(),
            fix: rule
                .def
                .experiments
                .first()
                .map(|x| fill(&x.action, &fi.vars)),
            crash,
            why: rule.def.why.as_ref().map(|y| fill(y, &fi.vars)),
            references: rule.def.references.clone(),
        });
    }
}

fn version_in_fix() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"transformers\s*(==|>=|<=|~=|<|>)\s*v?(\d+(?:\.\d+){0,2}(?:[a-z]+\d*)?)")
            .expect("static regex")
    })
}

/// A fix that pins or lowers transformers to a release the table says cannot
/// load the model's type: the version named, when it is such a trap.
pub fn trap_in_fix(fix: &str, model_type: &str) -> Option<String> {
    let table = ModelTypeTable::embedded();
    for c in version_in_fix().captures_iter(fix) {
        let (op, v) = (&c[1], &c[2]);
        // `>=` and `>` lead a resolver to a newer release: a floor is never the trap.
        if matches!(op, ">=" | ">") {
            continue;
        }
        let below_first = op == "<" && table.first_release(model_type) == Some(v);
        if below_first
            || matches!(
                table.knows(model_type, v),
                Known::NotYet { .. } | Known::Removed { .. }
            )
        {
            return Some(v.to_string());
        }
    }
    None
}

/// Sorts (blockers first), merges findings that say the same thing, and
/// removes any fix that names a transformers release unable to load the model.
pub fn finish(
    mut all: Vec<PreflightFinding>,
    cfg: Option<&ModelConfig>,
    _transformers: Option<&str>,
    notes: &mut Vec<String>,
) -> Vec<PreflightFinding> {
    if let Some(mt) = cfg.and_then(|c| c.model_type.as_deref()) {
        for f in &mut all {
            if let Some(v) = f.fix.as_deref().and_then(|x| trap_in_fix(x, mt)) {
                notes.push(format!(
                    "a fix of {} named transformers {v}, which cannot load model type {mt}: dropped",
                    f.rule
                ));
                f.fix = None;
            }
        }
    }
    // A backend the table finds without code, when a rule says the same of the
    // same flag: one finding, the rule's, with the library's coverage as evidence.
    let mut merged: Vec<PreflightFinding> = Vec::new();
    let (table, rest): (Vec<_>, Vec<_>) = all
        .into_iter()
        .partition(|f| f.rule.starts_with("backend:"));
    merged.extend(rest);
    for t in table {
        let key = t.evidence.first().cloned().unwrap_or_default();
        match merged
            .iter_mut()
            .find(|f| !key.is_empty() && f.evidence.iter().any(|e| e == &key))
        {
            Some(f) => {
                f.evidence.extend(t.evidence.into_iter().skip(1));
                f.severity = f.severity.min(t.severity);
                if f.fix.is_none() {
                    f.fix = t.fix;
                }
            }
            None => merged.push(t),
        }
    }
    let mut out: Vec<PreflightFinding> = Vec::new();
    for f in merged {
        if let Some(prev) = out
            .iter_mut()
            .find(|p| p.cause == f.cause && p.message == f.message)
        {
            for e in f.evidence {
                if !prev.evidence.contains(&e) {
                    prev.evidence.push(e);
                }
            }
            prev.severity = prev.severity.min(f.severity);
            continue;
        }
        out.push(f);
    }
    out.sort_by_key(|f| f.severity);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_downgrade_below_the_first_release_is_a_trap() {
        assert_eq!(
            trap_in_fix("pip install transformers==4.57.1", "glm_moe_dsa").as_deref(),
            Some("4.57.1")
        );
        assert_eq!(
            trap_in_fix("pip install 'transformers>=5.2.0'", "glm_moe_dsa"),
            None
        );
        assert_eq!(
            trap_in_fix("pip install transformers==5.2.0", "glm_moe_dsa"),
            None
        );
        assert_eq!(
            trap_in_fix("pip install transformers==4.57.1", "llama"),
            None
        );
        assert_eq!(
            trap_in_fix("pip install 'transformers<5.2.0'", "glm_moe_dsa").as_deref(),
            Some("5.2.0")
        );
    }
}
