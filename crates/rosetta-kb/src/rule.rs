//! The rule format: one TOML file per rule under `kb/rules/<cause>/`, with
//! conditions on facts, a weight, text templates, experiments and
//! references. This module parses and checks rules (regexes compile, version
//! specifiers parse, words are from the vocabulary); matching is `engine`'s.

use crate::error::KbError;
use crate::fact::Fact;
use pep440_rs::VersionSpecifiers;
use rosetta_log::lazy::LazyRegex;
use rosetta_schema::{Cause, FailureClass, Phase};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// What a rule produces when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// Evidence for its cause.
    #[default]
    Cause,
    /// Evidence against its cause.
    Against,
    /// A note about a message (no cause).
    Note,
}

/// How much an experiment costs: one word list with the report, which prints it.
pub use rosetta_schema::report::Cost;

/// One experiment of a rule (`[[try]]`), before its placeholders are filled.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Experiment {
    /// What to do (a flag, a command, an env var).
    #[serde(rename = "do")]
    pub action: String,
    /// Rough cost.
    pub cost: Cost,
    /// What the outcome tells apart.
    #[serde(default)]
    pub tells: Option<String>,
    /// The launch changes that carry the experiment out, any one of them
    /// (`--disable-cuda-graph` for sglang, `--enforce-eager` for vLLM): how the
    /// journal knows which hypothesis a relaunch tested. See `change.rs`.
    #[serde(default)]
    pub change: Vec<crate::change::Change>,
}

/// Conditions, all of which must hold (each list is "any of").
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct When {
    /// Failure class, any of.
    #[serde(default)]
    pub class: Vec<FailureClass>,
    /// Failure phase, any of.
    #[serde(default)]
    pub phase: Vec<Phase>,
    /// Framework, any of (`sglang`, `vllm`, `tensorrt-llm`, `llama.cpp`, `tgi`, `ollama`, `pytorch`).
    #[serde(default)]
    pub framework: Vec<String>,
    /// GPU arch, any of (`sm_120`); `sm_10x` style prefixes end in `x`.
    #[serde(default)]
    pub gpu_arch: Vec<String>,
    /// GPU archs on which the rule does not hold, any of: the rule is dropped when the log (or
    /// `--env`) shows one of them, and kept when it shows no GPU at all (a quantization that
    /// needs sm_89+ is no cause on an sm_90 GPU, and may be on an unnamed one).
    #[serde(default)]
    pub not_gpu_arch: Vec<String>,
    /// Model type named in the log, any of.
    #[serde(default)]
    pub model_type: Vec<String>,
    /// A model type in the log (or captured as `model_type`) whose first transformers release matches.
    #[serde(default)]
    pub model_type_since: Option<String>,
    /// Exception short type, any of.
    #[serde(default)]
    pub exception: Vec<String>,
    /// Regex on the failure message (and the exception's extra lines).
    #[serde(default)]
    pub message: Option<String>,
    /// Regex on any frame of the failure (`file function code`).
    #[serde(default)]
    pub frames: Option<String>,
    /// Launch args: key -> regex on the value; all must match.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    /// Launch args: key -> regex on the value; at least one must match.
    #[serde(default)]
    pub any_args: BTreeMap<String, String>,
    /// Launch args that must be absent or false.
    #[serde(default)]
    pub no_args: Vec<String>,
    /// Versions: package -> PEP 440 specifiers; all must match.
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// Regexes that must each match some line.
    #[serde(default)]
    pub lines: Vec<String>,
    /// Regexes of which at least one must match some line.
    #[serde(default)]
    pub any_lines: Vec<String>,
    /// Regexes none of which may match any line.
    #[serde(default)]
    pub not_lines: Vec<String>,
    /// Derived facts that must hold.
    #[serde(default)]
    pub facts: Vec<Fact>,
    /// Derived facts that must not hold.
    #[serde(default)]
    pub not_facts: Vec<Fact>,
}

/// How a rule reads before launch (`rosetta preflight`): its severity, and
/// facts that stand in for the failure it explains. A rule without this
/// section never fires in preflight. Before launch the failure's own
/// conditions (`class`, `phase`, `exception`, `message`, `frames`, `lines`,
/// `any_lines`, and the facts that need a failure) are not asked; every other
/// condition still must hold, plus `facts` here.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preflight {
    /// `blocker` (will fail), `risk` (may fail: the crash is the rule's class), or `info`.
    pub severity: rosetta_schema::Severity,
    /// Derived facts that must hold before launch, in addition to `[when]`'s.
    #[serde(default)]
    pub facts: Vec<Fact>,
}

/// A rule as written in its file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleFile {
    /// Id, equal to the file name.
    pub id: String,
    /// The cause it supports (or opposes).
    pub cause: Cause,
    /// Cause, against, note.
    #[serde(default)]
    pub kind: Kind,
    /// Evidence strength, 0..1.
    #[serde(default)]
    pub weight: f64,
    /// One line; may use `{placeholders}`.
    #[serde(default)]
    pub summary: String,
    /// Why the evidence points here.
    #[serde(default)]
    pub why: Option<String>,
    /// A note added to the report when the rule fires.
    #[serde(default)]
    pub note: Option<String>,
    /// The conditions.
    #[serde(default)]
    pub when: When,
    /// Experiments.
    #[serde(default, rename = "try")]
    pub experiments: Vec<Experiment>,
    /// Sources.
    #[serde(default)]
    pub references: Vec<String>,
    /// How the rule reads before launch; absent: it does not fire in preflight.
    #[serde(default)]
    pub preflight: Option<Preflight>,
}

/// A rule, checked, its patterns compiled on first use (see `rosetta_log::lazy`).
#[derive(Debug, Clone)]
pub struct Rule {
    /// The file it came from.
    pub path: PathBuf,
    /// The rule as written.
    pub def: RuleFile,
    /// Compiled `message`.
    pub message: Option<LazyRegex>,
    /// Compiled `frames`.
    pub frames: Option<LazyRegex>,
    /// Compiled `args`.
    pub args: Vec<(String, LazyRegex)>,
    /// Compiled `any_args`.
    pub any_args: Vec<(String, LazyRegex)>,
    /// Compiled `versions`.
    pub versions: Vec<(String, VersionSpecifiers)>,
    /// Compiled `model_type_since`.
    pub model_type_since: Option<VersionSpecifiers>,
    /// Compiled `lines`.
    pub lines: Vec<LazyRegex>,
    /// Compiled `any_lines`.
    pub any_lines: Vec<LazyRegex>,
    /// Compiled `not_lines`.
    pub not_lines: Vec<LazyRegex>,
    /// `literals()`, once worked out (at build time for the built-in rules).
    literals: std::sync::OnceLock<Option<Vec<String>>>,
}

fn compile(path: &Path, field: &str, pattern: &str, check: bool) -> Result<LazyRegex, KbError> {
    if !check {
        // A built-in pattern: its needles were worked out at build time.
        let table = crate::kb::embedded_needles();
        return Ok(match table.binary_search_by(|(p, _)| (*p).cmp(pattern)) {
            Ok(i) => LazyRegex::trusted_with_needles(pattern, table[i].1),
            Err(_) => LazyRegex::trusted(pattern),
        });
    }
    LazyRegex::checked(pattern).map_err(|e| KbError::Field {
        path: path.to_path_buf(),
        field: field.to_string(),
        message: format!(
            "invalid regex: {}",
            e.to_string().lines().last().unwrap_or("")
        ),
    })
}

fn specifiers(path: &Path, field: &str, spec: &str) -> Result<VersionSpecifiers, KbError> {
    VersionSpecifiers::from_str(spec).map_err(|e| KbError::Field {
        path: path.to_path_buf(),
        field: field.to_string(),
        message: format!("invalid version specifier `{spec}`: {e}"),
    })
}

impl Rule {
    /// Parses and checks one rule file's text, compiling its patterns now.
    pub fn parse(path: &Path, text: &str) -> Result<Rule, KbError> {
        Self::parse_with(path, text, true)
    }

    /// Parses a built-in rule: its patterns compile on first use (the lint
    /// compiles every one at test time), and its scanner literals were
    /// extracted at build time.
    pub(crate) fn parse_embedded(
        path: &Path,
        text: &str,
        json: Option<&str>,
        literals: Option<&[&str]>,
    ) -> Result<Rule, KbError> {
        // The build script wrote the file as JSON too, which reads several times faster;
        // should that fail, the TOML reports what is wrong.
        let def = match json.and_then(|j| serde_json::from_str(j).ok()) {
            Some(def) => def,
            None => Self::read_toml(path, text)?,
        };
        let rule = Self::from_def(path, def, false)?;
        let _ = rule
            .literals
            .set(literals.map(|l| l.iter().map(|w| w.to_string()).collect()));
        Ok(rule)
    }

    fn parse_with(path: &Path, text: &str, check: bool) -> Result<Rule, KbError> {
        Self::from_def(path, Self::read_toml(path, text)?, check)
    }

    /// The rule as written, or an error naming the line and column.
    fn read_toml(path: &Path, text: &str) -> Result<RuleFile, KbError> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!("line {line}, column {col}: ")
            });
            KbError::Parse {
                path: path.to_path_buf(),
                message: format!(
                    "{}{}",
                    at.unwrap_or_default(),
                    e.message().trim().replace('\n', " ")
                ),
            }
        })
    }

    /// Checks a rule as written and prepares its patterns (`check`: compile them now).
    fn from_def(path: &Path, def: RuleFile, check: bool) -> Result<Rule, KbError> {
        let field = |(f, m): (String, String)| KbError::Field {
            path: path.to_path_buf(),
            field: f,
            message: m,
        };
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        check_fields(stem, &def).map_err(field)?;
        if let Some(p) = &def.preflight {
            check_preflight(&def.when, p).map_err(field)?;
        }
        if check {
            check_templates(&def).map_err(field)?;
        }
        for (i, x) in def.experiments.iter().enumerate() {
            for c in &x.change {
                c.check()
                    .map_err(|m| field((format!("try[{i}].change"), m)))?;
            }
        }
        Self::compiled(path, def, check)
    }

    /// The rule with its patterns and version specifiers prepared, in field order.
    fn compiled(path: &Path, def: RuleFile, check: bool) -> Result<Rule, KbError> {
        let w = &def.when;
        let message = w
            .message
            .as_deref()
            .map(|p| compile(path, "when.message", p, check))
            .transpose()?;
        let frames = w
            .frames
            .as_deref()
            .map(|p| compile(path, "when.frames", p, check))
            .transpose()?;
        let args = compile_keyed(path, "when.args", &w.args, check)?;
        let any_args = compile_keyed(path, "when.any_args", &w.any_args, check)?;
        let versions = w
            .versions
            .iter()
            .map(|(k, s)| {
                Ok((
                    k.clone(),
                    specifiers(path, &format!("when.versions.{k}"), s)?,
                ))
            })
            .collect::<Result<_, KbError>>()?;
        let model_type_since = w
            .model_type_since
            .as_deref()
            .map(|s| specifiers(path, "when.model_type_since", s))
            .transpose()?;
        let lines = compile_all(path, "when.lines", &w.lines, check)?;
        let any_lines = compile_all(path, "when.any_lines", &w.any_lines, check)?;
        let not_lines = compile_all(path, "when.not_lines", &w.not_lines, check)?;
        Ok(Rule {
            path: path.to_path_buf(),
            def,
            message,
            frames,
            args,
            any_args,
            versions,
            model_type_since,
            lines,
            any_lines,
            not_lines,
            literals: std::sync::OnceLock::new(),
        })
    }

    /// The rule's id.
    pub fn id(&self) -> &str {
        &self.def.id
    }

    /// Literals that a line matching one of this rule's line patterns must hold,
    /// so the scanner keeps such lines. `None` when a pattern is too general to prefilter.
    pub fn literals(&self) -> Option<Vec<String>> {
        self.literals
            .get_or_init(|| {
                let mut out = Vec::new();
                for p in self.def.when.lines.iter().chain(&self.def.when.any_lines) {
                    out.extend(required_literals(p)?);
                }
                Some(out)
            })
            .clone()
    }
}

pub use rosetta_log::literals::required_literals;

/// Compiles `key -> pattern` conditions (`args`, `any_args`), each named `field.key`.
fn compile_keyed(
    path: &Path,
    field: &str,
    patterns: &BTreeMap<String, String>,
    check: bool,
) -> Result<Vec<(String, LazyRegex)>, KbError> {
    patterns
        .iter()
        .map(|(k, p)| Ok((k.clone(), compile(path, &format!("{field}.{k}"), p, check)?)))
        .collect()
}

/// Compiles a list of line patterns (`lines`, `any_lines`, `not_lines`).
fn compile_all(
    path: &Path,
    field: &str,
    patterns: &[String],
    check: bool,
) -> Result<Vec<LazyRegex>, KbError> {
    patterns
        .iter()
        .map(|p| compile(path, field, p, check))
        .collect()
}

/// The id (kebab-case, equal to the file's stem when there is one), the weight, and the
/// text each kind of rule needs: (field, message) of the first that is wrong.
fn check_fields(stem: &str, def: &RuleFile) -> Result<(), (String, String)> {
    let field = |f: &str, m: String| Err((f.to_string(), m));
    if !stem.is_empty() && stem != def.id {
        return field(
            "id",
            format!("`{}` must equal the file name `{}`", def.id, stem),
        );
    }
    if def.id.is_empty()
        || !def
            .id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return field(
            "id",
            format!("`{}` must be kebab-case (a-z, 0-9, -)", def.id),
        );
    }
    if def.kind != Kind::Note && !(0.0..=1.0).contains(&def.weight) {
        return field("weight", format!("{} is outside 0..1", def.weight));
    }
    if def.kind != Kind::Note && def.weight == 0.0 {
        return field(
            "weight",
            "a cause or against rule needs a weight above 0".into(),
        );
    }
    if def.kind == Kind::Cause && def.summary.trim().is_empty() {
        return field("summary", "a cause rule needs a summary".into());
    }
    if def.kind == Kind::Note && def.note.is_none() {
        return field("note", "a note rule needs a note".into());
    }
    Ok(())
}

/// A `[preflight]` section: its facts hold before launch, and some condition of the rule
/// does, so it does not fire on every launch.
fn check_preflight(w: &When, p: &Preflight) -> Result<(), (String, String)> {
    if let Some(f) = p.facts.iter().find(|f| f.needs_run()) {
        return Err((
            "preflight.facts".into(),
            format!("`{f}` needs a run: it does not hold before launch"),
        ));
    }
    let before_launch = !(w.gpu_arch.is_empty()
        && w.model_type.is_empty()
        && w.model_type_since.is_none()
        && w.args.is_empty()
        && w.any_args.is_empty()
        && w.versions.is_empty()
        && p.facts.is_empty()
        && w.facts.iter().all(|f| f.needs_run()));
    if !before_launch {
        return Err((
            "preflight".into(),
            "no condition that holds before launch (gpu_arch, model_type, args, versions, facts): it would fire on every launch".into(),
        ));
    }
    Ok(())
}

/// Every `{placeholder}` of the rule's templates names a value the engine
/// fills: a template value, `arg:KEY`, `version:PKG`, or a capture of the
/// rule's own patterns. A wrong name would print `?` to the user.
fn check_templates(def: &RuleFile) -> Result<(), (String, String)> {
    let w = &def.when;
    let captures: Vec<String> = w
        .message
        .iter()
        .chain(&w.frames)
        .chain(&w.lines)
        .chain(&w.any_lines)
        .flat_map(|p| capture_names(p))
        .collect();
    let mut templates = vec![("summary".to_string(), def.summary.as_str())];
    templates.extend(def.why.as_deref().map(|t| ("why".to_string(), t)));
    templates.extend(def.note.as_deref().map(|t| ("note".to_string(), t)));
    for (i, x) in def.experiments.iter().enumerate() {
        templates.push((format!("try[{i}].do"), x.action.as_str()));
        templates.extend(x.tells.as_deref().map(|t| (format!("try[{i}].tells"), t)));
    }
    for (name, text) in templates {
        for p in crate::fact::placeholders(text) {
            if !crate::fact::is_template_value(p, &captures) {
                return Err((
                    name,
                    format!(
                        "`{{{p}}}` is no value a template may use (see docs/rules.md: template values, \
                         `arg:KEY`, `version:PKG`, `window:ID`, or a capture of this rule's patterns)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The named groups of a pattern: `(?P<name>` and `(?<name>`.
fn capture_names(pattern: &str) -> Vec<String> {
    let mut out = Vec::new();
    for start in ["(?P<", "(?<"] {
        let mut rest = pattern;
        while let Some(i) = rest.find(start) {
            rest = &rest[i + start.len()..];
            if let Some(j) = rest.find('>') {
                out.push(rest[..j].to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_parses_and_checks() {
        let text = r#"
id = "x-rule"
cause = "kernel-bug"
weight = 0.3
summary = "a kernel"
[when]
class = ["illegal-memory-access"]
versions = { torch = ">=2.8" }
lines = ["illegal memory access"]
[[try]]
do = "CUDA_LAUNCH_BLOCKING=1"
cost = "env"
"#;
        let r = Rule::parse(Path::new("kb/rules/kernel-bug/x-rule.toml"), text).unwrap();
        assert_eq!(r.def.when.class, vec![FailureClass::IllegalMemoryAccess]);
        assert_eq!(
            r.literals().unwrap(),
            vec!["illegal memory access".to_string()]
        );
    }

    #[test]
    fn errors_name_file_field_and_valid_words() {
        let e = Rule::parse(
            Path::new("a.toml"),
            "id = \"a\"\ncause = \"gpu-melted\"\nweight = 0.1\nsummary = \"s\"",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("a.toml") && e.contains("gpu-melted"), "{e}");
        let e = Rule::parse(Path::new("b.toml"), "id = \"b\"\ncause = \"kernel-bug\"\nweight = 0.1\nsummary = \"s\"\n[when]\nlines = [\"(\"]").unwrap_err().to_string();
        assert!(e.contains("when.lines") && e.contains("b.toml"), "{e}");
        let e = Rule::parse(Path::new("c.toml"), "id = \"c\"\ncause = \"kernel-bug\"\nweight = 0.1\nsummary = \"s\"\n[when]\nversions = { torch = \"~~2\" }").unwrap_err().to_string();
        assert!(e.contains("when.versions.torch"), "{e}");
        let e = Rule::parse(
            Path::new("d.toml"),
            "id = \"other\"\ncause = \"kernel-bug\"\nweight = 0.1\nsummary = \"s\"",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("file name"), "{e}");
    }

    #[test]
    fn facts_and_template_values_are_checked() {
        let head = "id = \"t\"\ncause = \"kernel-bug\"\nweight = 0.1\n";
        let parse = |body: &str| Rule::parse(Path::new("t.toml"), &format!("{head}{body}"));
        let e = parse("summary = \"s\"\n[when]\nfacts = [\"gpu-melted\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("gpu-melted") && e.contains("multi-rank"), "{e}");
        let e = parse("summary = \"s\"\n[when]\nlines = [\"x\"]\n[preflight]\nseverity = \"risk\"\nfacts = [\"serving\"]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("preflight.facts") && e.contains("serving"),
            "{e}"
        );
        // A misspelt value would print `?`; a capture of the rule's own pattern is fine.
        let e = parse("summary = \"on {kernal}\"\n[when]\nlines = [\"in (?P<kernel>\\\\w+)\"]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("summary") && e.contains("{kernal}"), "{e}");
        let r = parse("summary = \"on {kernel} {gpu_arch|?} {arg:tp_size} {1}\"\n[when]\nlines = [\"in (?P<kernel>\\\\w+)\"]\n[[try]]\ndo = \"--x {version:torch}\"\ncost = \"look\"").unwrap();
        assert_eq!(r.def.when.facts, Vec::<Fact>::new());
        let e = parse("summary = \"s\"\n[[try]]\ndo = \"--x {nope}\"\ncost = \"look\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("try[0].do"), "{e}");
    }

    #[test]
    fn general_patterns_have_no_literal() {
        assert!(required_literals(r".*").is_none());
        assert!(required_literals(r"(?i)unsupported arch").is_some());
    }
}
