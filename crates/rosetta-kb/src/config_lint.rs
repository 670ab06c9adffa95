//! Findings about a model config against a transformers version, a context
//! length and a GPU architecture, each with a vocabulary cause and one line
//! of reason: `version-mismatch` (the release does not register the model
//! type), `rope-config` (a RoPE form that release does not read, or positions
//! beyond what the config covers), `model-config` (inconsistent or missing
//! fields, number formats the GPU does not run natively).
//!
//! The knowledge is data: the model-type table (`tables`) and
//! `kb/config-lint.toml` (RoPE forms by release, formats by compute
//! capability). This module reads no file and prints nothing; finding the
//! config is `rosetta_env::model_config`'s job, rendering is the binary's.
//! Where the data cannot tell (a model type older than the table, a
//! model-specific RoPE type), it says nothing rather than guess, and leaves a note.

use crate::tables::{GpuTable, Known, ModelTypeTable};
use pep440_rs::Version;
use rosetta_env::model_config::{ModelConfig, QuantScheme};
use rosetta_schema::{Arch, Cause, ComputeCapability};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::str::FromStr;
use std::sync::OnceLock;

const RULES_TOML: &str = include_str!("../../../kb/config-lint.toml");

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// Loading or serving will fail or go wrong.
    Error,
    /// Likely trouble, or slow; the reason says which.
    Warning,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The vocabulary cause.
    pub cause: Cause,
    /// Error or warning.
    pub severity: Severity,
    /// The config field concerned, e.g. `rope_scaling.rope_type`.
    pub field: String,
    /// One line, for a person.
    pub reason: String,
}

/// What the config is checked against.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Target {
    /// A transformers version (PEP 440); `None` skips version checks.
    pub transformers: Option<String>,
    /// The context length to serve.
    pub context_length: Option<u64>,
    /// The GPU.
    pub gpu: Option<Gpu>,
}

/// A GPU architecture.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Gpu {
    /// `sm_120`, or an AMD `gfx942`.
    pub arch: String,
    /// Compute capability (major, minor), NVIDIA only.
    pub cc: Option<(u32, u32)>,
}

/// The findings and what could not be checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Lint {
    /// Findings, errors first.
    pub findings: Vec<Finding>,
    /// What was not checked, and why; things worth knowing that are not problems.
    pub notes: Vec<String>,
}

/// `kb/config-lint.toml`, parsed.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// RoPE forms by release.
    pub rope: RopeRules,
    /// Number formats by compute capability.
    pub format: Vec<FormatRule>,
}

/// RoPE forms by release.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RopeRules {
    /// First release reading `rope_parameters` (v5).
    pub rope_parameters_since: String,
    /// First release validating `rope_scaling` generically (`rope_type`).
    pub generic_since: String,
    /// The types accepted before `generic_since`.
    pub legacy_types: Vec<String>,
    /// `rope_theta` when a v4 config class gets none.
    pub default_theta: f64,
    /// Known RoPE types.
    #[serde(rename = "type")]
    pub types: Vec<RopeType>,
}

/// One RoPE type.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RopeType {
    /// `llama3`, `yarn`, ...
    pub name: String,
    /// First release that understands it.
    pub since: String,
    /// Keys its validation requires.
    pub requires: Vec<String>,
}

/// A number format and the first compute capability that runs it natively.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatRule {
    /// `fp8`, `nvfp4`, `mxfp4`, `bfloat16`.
    pub scheme: String,
    /// `8.9`.
    pub min_cc: String,
    /// Why, for the reason line.
    pub why: String,
}

impl Rules {
    /// Parses a rules file.
    pub fn from_toml(text: &str) -> Result<Rules, String> {
        let r: Rules = toml::from_str(text).map_err(|e| e.to_string())?;
        for v in [&r.rope.rope_parameters_since, &r.rope.generic_since]
            .into_iter()
            .chain(r.rope.types.iter().map(|t| &t.since))
        {
            Version::from_str(v).map_err(|e| format!("version `{v}`: {e}"))?;
        }
        for f in &r.format {
            parse_cc(&f.min_cc).ok_or_else(|| format!("min_cc `{}` of {}", f.min_cc, f.scheme))?;
        }
        Ok(r)
    }

    /// The embedded rules (`kb/config-lint.toml`); a unit test guards that they parse.
    pub fn embedded() -> &'static Rules {
        static R: OnceLock<Rules> = OnceLock::new();
        R.get_or_init(|| {
            Rules::from_toml(RULES_TOML).unwrap_or_else(|_| Rules {
                rope: RopeRules {
                    rope_parameters_since: "5.0.0rc0".into(),
                    generic_since: "4.43.0".into(),
                    legacy_types: Vec::new(),
                    default_theta: 10000.0,
                    types: Vec::new(),
                },
                format: Vec::new(),
            })
        })
    }

    fn rope_type(&self, name: &str) -> Option<&RopeType> {
        self.rope.types.iter().find(|t| t.name == name)
    }
}

fn parse_cc(s: &str) -> Option<(u32, u32)> {
    ComputeCapability::parse(s).map(|c| (c.major, c.minor))
}

fn v(s: &str) -> Option<Version> {
    Version::from_str(s).ok()
}

/// Reads a GPU argument: `sm_120`, `sm_90a`, `compute_100`, `12.0`, `120`,
/// `gfx942`, or a GPU name the GPU table knows (`RTX PRO 6000`, `H200`).
pub fn parse_gpu(s: &str) -> Option<Gpu> {
    let arch = Arch::parse(s).or_else(|| {
        let info = GpuTable::embedded().lookup(s)?;
        Arch::parse(info.cc.as_deref().or(info.gfx.as_deref())?)
    })?;
    Some(Gpu {
        arch: arch.to_string(),
        cc: arch.cc().map(|c| (c.major, c.minor)),
    })
}

/// Lints a config with the embedded table and rules.
pub fn lint(cfg: &ModelConfig, target: &Target) -> Lint {
    lint_with(cfg, target, ModelTypeTable::embedded(), Rules::embedded())
}

/// Lints a config with the given table and rules.
pub fn lint_with(
    cfg: &ModelConfig,
    target: &Target,
    table: &ModelTypeTable,
    rules: &Rules,
) -> Lint {
    let mut l = Lint::default();
    let version = match target.transformers.as_deref() {
        Some(s) => match v(s) {
            Some(ver) => Some((s, ver)),
            None => {
                l.notes.push(format!(
                    "`{s}` is not a PEP 440 version: transformers checks skipped"
                ));
                None
            }
        },
        None => None,
    };
    if let Some((vs, ver)) = &version {
        model_type_checks(cfg, vs, table, &mut l);
        rope_version_checks(cfg, vs, ver, rules, &mut l);
        if let Some(saved) = cfg.saved_with.as_deref().and_then(|s| v(s).map(|x| (s, x))) {
            if saved.1 > *ver && saved.1.release().first() != ver.release().first() {
                l.notes.push(format!(
                    "the checkpoint was saved with transformers {}, a newer major release than {vs}",
                    saved.0
                ));
            }
        }
    }
    context_checks(cfg, target.context_length, &mut l);
    config_shape_checks(cfg, &mut l);
    if let Some(gpu) = &target.gpu {
        format_checks(cfg, gpu, rules, &mut l);
    }
    l.findings.sort_by_key(|f| f.severity);
    l
}

fn push(l: &mut Lint, cause: Cause, severity: Severity, field: &str, reason: String) {
    l.findings.push(Finding {
        cause,
        severity,
        field: field.to_string(),
        reason,
    });
}

fn model_type_checks(cfg: &ModelConfig, vs: &str, table: &ModelTypeTable, l: &mut Lint) {
    let Some(mt) = cfg.model_type.as_deref() else {
        return;
    };
    let remote = if cfg.auto_map {
        " (the config has auto_map: with trust_remote_code the repo's own code may still load it)"
    } else {
        ""
    };
    let sev = if cfg.auto_map {
        Severity::Warning
    } else {
        Severity::Error
    };
    match table.knows(mt, vs) {
        Known::Yes => {}
        Known::NotYet { first } => push(
            l,
            Cause::VersionMismatch,
            sev,
            "model_type",
            format!(
                "transformers {vs} does not register model_type `{mt}`; it first appears in {first}{remote}"
            ),
        ),
        Known::Removed { last_seen } => push(
            l,
            Cause::VersionMismatch,
            sev,
            "model_type",
            format!(
                "transformers {vs} no longer registers model_type `{mt}`; the last release with it is {last_seen}{remote}"
            ),
        ),
        Known::Unknown => {
            let range = match (table.releases.first(), table.releases.last()) {
                (Some(a), Some(b)) => format!("{}..{}", a.version, b.version),
                _ => "none".into(),
            };
            if table.get(mt).is_none() {
                l.notes.push(format!(
                    "model_type `{mt}` is registered by no transformers release in the table ({range}){}",
                    if cfg.auto_map {
                        "; the config's auto_map points to the repo's own code"
                    } else {
                        "; without auto_map, AutoConfig may not know it"
                    }
                ));
            } else {
                l.notes.push(format!(
                    "model_type `{mt}` predates the table's range ({range}): not checked against {vs}"
                ));
            }
        }
    }
}

/// The RoPE type of a rope dict (`rope_type`, or the legacy `type`).
fn rope_type_of(obj: &Value) -> Option<&str> {
    obj.get("rope_type")
        .or_else(|| obj.get("type"))
        .and_then(Value::as_str)
}

/// Whether a `rope_parameters` value is keyed by layer type (Gemma 3 and friends in v5).
fn per_layer(obj: &Value) -> bool {
    obj.as_object()
        .is_some_and(|m| !m.is_empty() && m.values().all(Value::is_object))
}

fn rope_version_checks(cfg: &ModelConfig, vs: &str, ver: &Version, rules: &Rules, l: &mut Lint) {
    let t = &cfg.text;
    let scaling = t.rope_scaling.as_ref().filter(|x| x.is_object());
    let params = t.rope_parameters.as_ref().filter(|x| x.is_object());
    let v5 = v(&rules.rope.rope_parameters_since).is_some_and(|s| *ver >= s);
    if !v5 {
        if let (Some(p), None) = (params, scaling) {
            if per_layer(p) {
                push(l, Cause::RopeConfig, Severity::Error, "rope_parameters", format!(
                    "rope_parameters is keyed by layer type (the v5 form); transformers {vs} reads rope_scaling and ignores it"
                ));
            } else if let Some(ty) = rope_type_of(p).filter(|ty| *ty != "default") {
                push(l, Cause::RopeConfig, Severity::Error, "rope_parameters", format!(
                    "transformers {vs} reads rope_scaling, not rope_parameters (the v5 form): the `{ty}` scaling would be ignored"
                ));
            }
        }
        if let Some(theta) = params
            .and_then(|p| p.get("rope_theta"))
            .and_then(Value::as_f64)
        {
            if t.rope_theta.is_none() && (theta - rules.rope.default_theta).abs() > f64::EPSILON {
                push(l, Cause::RopeConfig, Severity::Error, "rope_parameters.rope_theta", format!(
                    "rope_theta {theta} is only inside rope_parameters (the v5 form); transformers {vs} reads a top-level rope_theta and would use its default ({})",
                    rules.rope.default_theta
                ));
            }
        }
        if let Some(s) = scaling {
            let generic = v(&rules.rope.generic_since).is_some_and(|g| *ver >= g);
            if generic {
                rope_type_check(s, "rope_scaling", vs, ver, false, rules, l);
            } else {
                legacy_scaling_check(s, vs, rules, l);
            }
        }
        return;
    }
    // v5 reads rope_parameters; a legacy rope_scaling is converted into it.
    if let (Some(s), Some(p)) = (scaling, params) {
        if !per_layer(p) {
            let (ts, tp) = (rope_type_of(s), rope_type_of(p).or(Some("default")));
            let (fs, fp) = (
                s.get("factor").and_then(Value::as_f64),
                p.get("factor").and_then(Value::as_f64),
            );
            if ts.unwrap_or("default") != tp.unwrap_or("default") || fs != fp {
                push(l, Cause::RopeConfig, Severity::Warning, "rope_parameters", format!(
                    "rope_scaling ({} factor {}) and rope_parameters ({} factor {}) disagree: transformers {vs} reads rope_parameters, v4 code and older tools read rope_scaling",
                    ts.unwrap_or("default"), fs.map_or("-".into(), |f| f.to_string()),
                    tp.unwrap_or("default"), fp.map_or("-".into(), |f| f.to_string()),
                ));
            }
        }
    }
    let (obj, field) = match (params, scaling) {
        (Some(p), _) => (p, "rope_parameters"),
        (None, Some(s)) => (s, "rope_scaling"),
        (None, None) => return,
    };
    if per_layer(obj) {
        if let Some(m) = obj.as_object() {
            for (layer, sub) in m {
                rope_type_check(sub, &format!("{field}.{layer}"), vs, ver, true, rules, l);
            }
        }
    } else {
        rope_type_check(obj, field, vs, ver, true, rules, l);
    }
}

/// Before 4.43: exactly {"type": linear|dynamic, "factor": float > 1} (Llama-family validation).
fn legacy_scaling_check(s: &Value, vs: &str, rules: &Rules, l: &mut Lint) {
    let keys: Vec<&str> = s
        .as_object()
        .map(|m| m.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let ty = s.get("type").and_then(Value::as_str);
    let factor = s.get("factor").and_then(Value::as_f64);
    let ok = keys.len() == 2
        && ty.is_some_and(|t| rules.rope.legacy_types.iter().any(|x| x == t))
        && factor.is_some_and(|f| f > 1.0);
    if ok {
        return;
    }
    let g = &rules.rope.generic_since;
    let legacy = rules.rope.legacy_types.join("|");
    let named = rope_type_of(s);
    let reason = match named.and_then(|n| rules.rope_type(n).map(|t| (n, t))) {
        Some((n, t)) if v(&t.since).is_some_and(|since| v(vs).is_some_and(|x| x < since)) => format!(
            "transformers {vs} does not understand rope_type `{n}` (first in {}): before {g} rope_scaling must be exactly {{\"type\": {legacy}, \"factor\"}} and loading raises a ValueError",
            t.since
        ),
        _ if ty.is_none() && named.is_some() => format!(
            "rope_scaling names its type with `rope_type`; transformers {vs} reads only `type` (before {g}) and raises a ValueError"
        ),
        _ => format!(
            "before {g} transformers accepts rope_scaling only as exactly {{\"type\": {legacy}, \"factor\": > 1}}; this one has {{{}}} and {vs} raises a ValueError",
            keys.join(", ")
        ),
    };
    push(
        l,
        Cause::RopeConfig,
        Severity::Error,
        "rope_scaling",
        reason,
    );
}

/// Checks one RoPE scaling object against transformers `vs`: it names a type, the type is
/// one this version knows, its required keys are there, its factor is a number >= 1.
fn rope_type_check(
    obj: &Value,
    field: &str,
    vs: &str,
    ver: &Version,
    v5: bool,
    rules: &Rules,
    l: &mut Lint,
) {
    let Some(ty) = rope_type_of(obj) else {
        if !v5 {
            push(
                l,
                Cause::RopeConfig,
                Severity::Error,
                field,
                format!(
                "{field} has neither `rope_type` nor `type`; transformers {vs} raises a ValueError"
            ),
            );
        }
        return;
    };
    let Some(rt) = rules.rope_type(ty) else {
        l.notes.push(format!(
            "{field}: rope_type `{ty}` is model-specific (not a generic transformers RoPE type): not checked"
        ));
        return;
    };
    if let Some(since) = v(&rt.since) {
        if *ver < since {
            push(
                l,
                Cause::RopeConfig,
                Severity::Error,
                &format!("{field}.rope_type"),
                format!(
                "transformers {vs} does not understand rope_type `{ty}`; it first appears in {}",
                rt.since
            ),
            );
            return;
        }
    }
    rope_required_keys(obj, field, vs, ty, rt, v5, l);
    rope_factor_check(obj, field, l);
}

/// The keys RoPE type `ty` requires that `obj` lacks: an error before v5, a warning from
/// v5 (which fills `original_max_position_embeddings` itself).
fn rope_required_keys(
    obj: &Value,
    field: &str,
    vs: &str,
    ty: &str,
    rt: &RopeType,
    v5: bool,
    l: &mut Lint,
) {
    // v5 fills original_max_position_embeddings from the config itself.
    let missing: Vec<&str> = rt
        .requires
        .iter()
        .map(String::as_str)
        .filter(|k| obj.get(*k).is_none())
        .filter(|k| !(v5 && *k == "original_max_position_embeddings"))
        .collect();
    if !missing.is_empty() {
        let (sev, what) = if v5 {
            (Severity::Warning, "warns and the RoPE init then fails")
        } else {
            (Severity::Error, "raises a KeyError")
        };
        push(
            l,
            Cause::RopeConfig,
            sev,
            field,
            format!(
                "{field} of type `{ty}` lacks {}: transformers {vs} {what}",
                missing.join(", ")
            ),
        );
    }
}

/// A RoPE `factor` that is not a number >= 1: a warning.
fn rope_factor_check(obj: &Value, field: &str, l: &mut Lint) {
    if let Some(f) = obj.get("factor") {
        if f.as_f64().is_none_or(|x| x < 1.0) {
            push(
                l,
                Cause::RopeConfig,
                Severity::Warning,
                &format!("{field}.factor"),
                format!("{field}.factor must be a number >= 1, got {f}"),
            );
        }
    }
}

/// The scaling in effect: (type, factor, original positions).
fn effective_scaling(cfg: &ModelConfig) -> Option<(String, f64, Option<u64>)> {
    let t = &cfg.text;
    let obj = t
        .rope_parameters
        .as_ref()
        .filter(|x| x.is_object())
        .or(t.rope_scaling.as_ref().filter(|x| x.is_object()))?;
    let obj = if per_layer(obj) {
        obj.get("full_attention")
            .or_else(|| obj.as_object().and_then(|m| m.values().next()))?
    } else {
        obj
    };
    let ty = rope_type_of(obj).unwrap_or("default").to_string();
    let factor = obj.get("factor").and_then(Value::as_f64).unwrap_or(1.0);
    let orig = obj
        .get("original_max_position_embeddings")
        .and_then(Value::as_u64);
    Some((ty, factor, orig))
}

fn context_checks(cfg: &ModelConfig, ctx: Option<u64>, l: &mut Lint) {
    let Some(ctx) = ctx else { return };
    let Some(mpe) = cfg.text.max_position_embeddings else {
        l.notes.push(format!(
            "the config states no max_position_embeddings: --context-length {ctx} not checked"
        ));
        return;
    };
    let key = cfg
        .text
        .max_position_key
        .clone()
        .unwrap_or_else(|| "max_position_embeddings".into());
    // The positions a scaling covers: factor x the original positions (or x
    // max_position_embeddings when the config states no original), and never fewer than
    // max_position_embeddings itself. The messages print the numbers this check used.
    let scaled = effective_scaling(cfg)
        .filter(|(ty, f, _)| *f > 1.0 && ty != "default")
        .map(|(ty, f, orig)| {
            let (base, base_key) = match orig {
                Some(o) => (o, "original_max_position_embeddings"),
                None => (mpe, key.as_str()),
            };
            let product = ((base as f64) * f).floor() as u64;
            let how = format!("factor {f} x {base_key} {base} = {product}");
            (ty, f, how, product.max(mpe), product >= mpe)
        });
    match scaled {
        None if ctx > mpe => push(l, Cause::RopeConfig, Severity::Error, &key, format!(
            "--context-length {ctx} is beyond {key} {mpe} and no RoPE scaling covers it: positions past {mpe} were never trained (garbage output, or index errors in kernels); serve at most {mpe} or add a RoPE scaling (e.g. yarn with factor {})",
            ctx.div_ceil(mpe.max(1))
        )),
        Some((ty, _, how, covered, true)) if ctx > covered => push(l, Cause::RopeConfig, Severity::Error, &key, format!(
            "--context-length {ctx} is beyond the {covered} positions that the `{ty}` RoPE scaling covers ({how}); serve at most {covered}"
        )),
        Some((ty, _, how, covered, false)) if ctx > covered => push(l, Cause::RopeConfig, Severity::Error, &key, format!(
            "--context-length {ctx} is beyond {key} {covered}, the most positions the config allows (its `{ty}` RoPE scaling covers fewer: {how}); serve at most {covered}"
        )),
        Some((ty, _, how, _, _)) if ctx > mpe => l.notes.push(format!(
            "--context-length {ctx} is beyond {key} {mpe} but within the `{ty}` RoPE scaling ({how})"
        )),
        _ => {}
    }
}

fn config_shape_checks(cfg: &ModelConfig, l: &mut Lint) {
    if cfg.model_type.is_none() {
        if cfg.auto_map {
            l.notes.push(
                "no model_type; the config's auto_map names the repo's own config class".into(),
            );
        } else {
            push(
                l,
                Cause::ModelConfig,
                Severity::Warning,
                "model_type",
                "the config has no model_type: AutoConfig cannot choose a config class".into(),
            );
        }
    }
    if cfg.architectures.is_empty() {
        push(
            l,
            Cause::ModelConfig,
            Severity::Warning,
            "architectures",
            "the config has no architectures: vLLM and sglang choose the model class from it"
                .into(),
        );
    }
    if let (Some(mt), false) = (cfg.model_type.as_deref(), cfg.auto_map) {
        let root: String = mt
            .split(['_', '-'])
            .next()
            .unwrap_or(mt)
            .to_ascii_lowercase();
        for arch in &cfg.architectures {
            let norm: String = arch
                .chars()
                .filter(|c| c.is_ascii_alphanumeric())
                .collect::<String>()
                .to_ascii_lowercase();
            if !root.is_empty() && !norm.starts_with(&root) {
                push(l, Cause::ModelConfig, Severity::Warning, "architectures", format!(
                    "architecture `{arch}` does not match model_type `{mt}`: the framework picks the model class from architectures and the config class from model_type"
                ));
            }
        }
    }
    if cfg.architectures.iter().any(|a| a.ends_with("ForCausalLM")) {
        let t = &cfg.text;
        let missing: Vec<&str> = [
            ("hidden_size", t.hidden_size.is_some()),
            ("num_hidden_layers", t.num_hidden_layers.is_some()),
            ("num_attention_heads", t.num_attention_heads.is_some()),
            ("vocab_size", t.vocab_size.is_some()),
        ]
        .iter()
        .filter(|(_, present)| !present)
        .map(|(k, _)| *k)
        .collect();
        if !missing.is_empty() {
            push(l, Cause::ModelConfig, Severity::Warning, missing[0], format!(
                "a causal LM config without {}: the config class falls back to its defaults, which rarely match the weights",
                missing.join(", ")
            ));
        }
    }
}

fn format_checks(cfg: &ModelConfig, gpu: &Gpu, rules: &Rules, l: &mut Lint) {
    let Some(cc) = gpu.cc else {
        l.notes.push(format!(
            "{}: number-format checks know NVIDIA compute capabilities only",
            gpu.arch
        ));
        return;
    };
    let mut check = |scheme: &str, label: String, field: &str| {
        let Some(rule) = rules.format.iter().find(|f| f.scheme == scheme) else {
            return;
        };
        let Some(min) = parse_cc(&rule.min_cc) else {
            return;
        };
        if cc < min {
            push(
                l,
                Cause::ModelConfig,
                Severity::Warning,
                field,
                format!(
                    "{label} on {} (compute capability {}.{}), below {}: {}",
                    gpu.arch, cc.0, cc.1, rule.min_cc, rule.why
                ),
            );
        }
    };
    if let Some(q) = &cfg.quantization {
        if !matches!(q.scheme, QuantScheme::Other(_)) {
            check(
                q.scheme.id(),
                format!(
                    "the checkpoint is {} ({})",
                    q.scheme.id().to_ascii_uppercase(),
                    q.field
                ),
                &q.field,
            );
        }
    }
    if let Some(d) = cfg.dtype.as_deref() {
        if d == "bfloat16" {
            check(
                "bfloat16",
                "the checkpoint's dtype is bfloat16".into(),
                "torch_dtype",
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rosetta_env::model_config::{from_json_text, ConfigSource};
    use std::path::Path;

    fn cfg(t: &str) -> ModelConfig {
        from_json_text(t, Path::new("config.json"), ConfigSource::File).unwrap()
    }

    fn run(t: &str, tf: Option<&str>, ctx: Option<u64>, gpu: Option<&str>) -> Lint {
        lint(
            &cfg(t),
            &Target {
                transformers: tf.map(str::to_string),
                context_length: ctx,
                gpu: gpu.and_then(parse_gpu),
            },
        )
    }

    fn causes(l: &Lint) -> Vec<Cause> {
        l.findings.iter().map(|f| f.cause).collect()
    }

    const LLAMA31: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","max_position_embeddings":131072,
        "rope_scaling":{"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192,"rope_type":"llama3"},
        "rope_theta":500000.0,"torch_dtype":"bfloat16","hidden_size":4096,"num_hidden_layers":32,"num_attention_heads":32,"vocab_size":128256}"#;

    const GLM5: &str = r#"{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","max_position_embeddings":202752,
        "rope_theta":1000000.0,"hidden_size":6144,"num_hidden_layers":78,"num_attention_heads":64,"vocab_size":154880,"torch_dtype":"bfloat16",
        "quantization_config":{"quant_method":"modelopt","quant_algo":"NVFP4"}}"#;

    const SMALL: &str = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","max_position_embeddings":4096,
        "rope_theta":10000.0,"hidden_size":2048,"num_hidden_layers":16,"num_attention_heads":16,"vocab_size":32000}"#;

    #[test]
    fn embedded_rules_parse() {
        let r = Rules::from_toml(RULES_TOML).unwrap();
        assert!(r.rope_type("llama3").is_some());
        assert!(r.format.iter().any(|f| f.scheme == "nvfp4"));
    }

    #[test]
    fn llama31_needs_4_43() {
        let l = run(LLAMA31, Some("4.42.0"), None, None);
        assert_eq!(causes(&l), [Cause::RopeConfig], "{l:?}");
        assert!(l.findings[0].reason.contains("llama3") && l.findings[0].reason.contains("4.43.0"));
        let l = run(LLAMA31, Some("4.43.0"), None, None);
        assert!(l.findings.is_empty(), "{l:?}");
        let l = run(LLAMA31, Some("5.2.0"), Some(131072), Some("sm_90"));
        assert!(l.findings.is_empty(), "{l:?}");
    }

    #[test]
    fn glm5_needs_5_2() {
        let l = run(GLM5, Some("4.57.1"), Some(202752), Some("sm_120"));
        assert_eq!(causes(&l), [Cause::VersionMismatch], "{l:?}");
        assert!(
            l.findings[0].reason.contains("5.2.0"),
            "{}",
            l.findings[0].reason
        );
        let l = run(GLM5, Some("5.2.0"), Some(202752), Some("sm_120"));
        assert!(l.findings.is_empty(), "{l:?}");
    }

    #[test]
    fn context_beyond_positions_without_scaling() {
        let l = run(SMALL, None, Some(32768), None);
        assert_eq!(causes(&l), [Cause::RopeConfig]);
        assert!(l.findings[0].reason.contains("4096"));
        assert!(run(SMALL, None, Some(4096), None).findings.is_empty());
        // yarn x4 over 32768 covers 131072, not more.
        let yarn = r#"{"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","max_position_embeddings":32768,
            "rope_scaling":{"type":"yarn","factor":4.0,"original_max_position_embeddings":32768},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        let l = run(yarn, None, Some(131072), None);
        assert!(l.findings.is_empty(), "{l:?}");
        assert!(l.notes.iter().any(|n| n.contains("within the `yarn`")));
        assert!(
            l.notes
                .iter()
                .any(|n| n.contains("factor 4 x original_max_position_embeddings 32768 = 131072")),
            "{l:?}"
        );
        let l = run(yarn, None, Some(200000), None);
        assert_eq!(causes(&l), [Cause::RopeConfig]);
        assert!(
            l.findings[0].reason.contains(
                "beyond the 131072 positions that the `yarn` RoPE scaling covers (factor 4 x original_max_position_embeddings 32768 = 131072)"
            ),
            "{}",
            l.findings[0].reason
        );
    }

    /// The newcomer's pass (issue 12, section 10): a config whose max_position_embeddings
    /// (202752) is above what its yarn scaling covers (4 x 32768 = 131072) printed
    /// "beyond the 202752 positions that the `yarn` RoPE scaling covers (factor 4 x 32768)":
    /// a product that does not hold. The message names the number the check used.
    #[test]
    fn rope_coverage_arithmetic_prints_the_numbers_the_check_used() {
        let glm = r#"{"architectures":["GlmMoeDsaForCausalLM"],"model_type":"glm_moe_dsa","max_position_embeddings":202752,
            "rope_scaling":{"type":"yarn","factor":4.0,"original_max_position_embeddings":32768},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        let l = run(glm, None, Some(300000), None);
        assert_eq!(causes(&l), [Cause::RopeConfig], "{l:?}");
        let reason = &l.findings[0].reason;
        assert!(
            reason.contains("beyond max_position_embeddings 202752")
                && reason.contains("factor 4 x original_max_position_embeddings 32768 = 131072"),
            "{reason}"
        );
        assert!(
            !reason.contains("202752 positions that the `yarn`"),
            "{reason}"
        );
        // Within max_position_embeddings: no finding and no note.
        let l = run(glm, None, Some(150000), None);
        assert!(l.findings.is_empty() && l.notes.is_empty(), "{l:?}");
        // No original positions stated: the factor applies to max_position_embeddings.
        let no_orig = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","max_position_embeddings":4096,
            "rope_scaling":{"type":"linear","factor":2.0},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        let l = run(no_orig, None, Some(10000), None);
        assert!(
            l.findings[0]
                .reason
                .contains("beyond the 8192 positions that the `linear` RoPE scaling covers (factor 2 x max_position_embeddings 4096 = 8192)"),
            "{l:?}"
        );
    }

    #[test]
    fn v5_rope_parameters_read_by_v4_and_the_reverse() {
        let v5 = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","max_position_embeddings":131072,
            "rope_parameters":{"rope_type":"llama3","rope_theta":500000.0,"factor":8.0,"low_freq_factor":1.0,"high_freq_factor":4.0,"original_max_position_embeddings":8192},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        let l = run(v5, Some("4.57.1"), None, None);
        assert_eq!(causes(&l), [Cause::RopeConfig, Cause::RopeConfig], "{l:?}");
        assert!(run(v5, Some("5.0.0"), None, None).findings.is_empty());

        let both = r#"{"architectures":["LlamaForCausalLM"],"model_type":"llama","max_position_embeddings":131072,
            "rope_scaling":{"rope_type":"linear","factor":2.0},
            "rope_parameters":{"rope_type":"yarn","factor":4.0,"rope_theta":10000.0},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        let l = run(both, Some("5.2.0"), None, None);
        assert_eq!(causes(&l), [Cause::RopeConfig], "{l:?}");
        assert!(l.findings[0].reason.contains("disagree"));
        // A v4 config read by v5 is converted: nothing to say.
        assert!(run(LLAMA31, Some("5.24.0"), None, None).findings.is_empty());
    }

    #[test]
    fn formats_below_their_arch_are_warnings() {
        let l = run(GLM5, Some("5.2.0"), None, Some("sm_90"));
        assert_eq!(causes(&l), [Cause::ModelConfig]);
        assert_eq!(l.findings[0].severity, Severity::Warning);
        assert!(
            l.findings[0].reason.contains("NVFP4"),
            "{}",
            l.findings[0].reason
        );
        let fp8 = r#"{"architectures":["Qwen3ForCausalLM"],"model_type":"qwen3","quantization_config":{"quant_method":"fp8"},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        assert_eq!(
            causes(&run(fp8, None, None, Some("sm_86"))),
            [Cause::ModelConfig]
        );
        assert!(run(fp8, None, None, Some("sm_89")).findings.is_empty());
        assert!(run(fp8, None, None, Some("H200")).findings.is_empty());
        // bfloat16 on a T4.
        assert_eq!(
            causes(&run(LLAMA31, None, None, Some("7.5"))),
            [Cause::ModelConfig]
        );
        let amd = run(fp8, None, None, Some("gfx942"));
        assert!(amd.findings.is_empty() && !amd.notes.is_empty());
    }

    #[test]
    fn inconsistent_or_missing_fields() {
        let bad = r#"{"architectures":["LlamaForCausalLM"],"model_type":"qwen2","max_position_embeddings":4096}"#;
        let l = run(bad, None, None, None);
        assert_eq!(
            causes(&l),
            [Cause::ModelConfig, Cause::ModelConfig],
            "{l:?}"
        );
        let none = run(r#"{}"#, None, None, None);
        assert_eq!(causes(&none).len(), 2);
        // Remote code (auto_map) is allowed to disagree.
        let kimi = r#"{"architectures":["DeepseekV3ForCausalLM"],"model_type":"kimi_k2","auto_map":{"AutoConfig":"x.Y"},
            "hidden_size":1,"num_hidden_layers":1,"num_attention_heads":1,"vocab_size":1}"#;
        let l = run(kimi, Some("5.2.0"), None, None);
        assert!(l.findings.is_empty(), "{l:?}");
        assert!(l.notes.iter().any(|n| n.contains("kimi_k2")));
    }

    #[test]
    fn gpu_arguments_parse() {
        let p = |s: &str| parse_gpu(s).map(|g| (g.arch, g.cc));
        assert_eq!(p("sm_120"), Some(("sm_120".into(), Some((12, 0)))));
        assert_eq!(p("sm_90a"), Some(("sm_90".into(), Some((9, 0)))));
        assert_eq!(p("8.9"), Some(("sm_89".into(), Some((8, 9)))));
        assert_eq!(p("100"), Some(("sm_100".into(), Some((10, 0)))));
        assert_eq!(p("RTX PRO 6000").map(|x| x.0), Some("sm_120".into()));
        assert_eq!(p("gfx942"), Some(("gfx942".into(), None)));
        assert_eq!(p("gfx942:sramecc+:xnack-"), Some(("gfx942".into(), None)));
        assert_eq!(p("MI300X").map(|x| x.0), Some("gfx942".into()));
        assert_eq!(p("toaster"), None);
    }
}
