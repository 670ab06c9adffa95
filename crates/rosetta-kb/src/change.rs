//! The launch changes that perform an experiment: an experiment's `change`
//! list (`[[try]] change = [{ arg = "disable_cuda_graph", op = "on" }]`) says
//! which difference between two launches carries it out, so that the journal
//! can tell which hypothesis a relaunch tested. This module owns the format,
//! its checks and the comparison of one value before and after; which
//! attempts to compare and what a same or different outcome means is the
//! journal's business. Also the launch args and env vars whose difference
//! never counts as a change (`kb/changes.toml`).

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// What happens to the arg or env var.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeOp {
    /// Turned on: absent or off before (`false`, `0`, `none`, `no`, `off`), present and not off after.
    On,
    /// Turned off: on before, absent or off after.
    Off,
    /// Set to a value matching `to` that it did not match before.
    Set,
    /// Present after with another value than before (matching `to` when given).
    Changed,
    /// A number, lower after than before.
    Lower,
    /// A number, higher after than before.
    Higher,
}

impl ChangeOp {
    /// All ops, for error messages.
    pub const ALL: &'static [ChangeOp] = &[
        ChangeOp::On,
        ChangeOp::Off,
        ChangeOp::Set,
        ChangeOp::Changed,
        ChangeOp::Lower,
        ChangeOp::Higher,
    ];

    /// The word used in rule files.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeOp::On => "on",
            ChangeOp::Off => "off",
            ChangeOp::Set => "set",
            ChangeOp::Changed => "changed",
            ChangeOp::Lower => "lower",
            ChangeOp::Higher => "higher",
        }
    }
}

/// One difference between two launches that carries out an experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    /// A launch arg, by its canonical key (`disable_cuda_graph`, `tp_size`): the
    /// keys `when.args` uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arg: Option<String>,
    /// An environment variable (`CUDA_LAUNCH_BLOCKING`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// What happens to it.
    pub op: ChangeOp,
    /// For `set` (required) and `changed` (optional): a regex the new value matches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
}

/// What a change is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A launch arg (canonical key).
    Arg(&'a str),
    /// An environment variable.
    Env(&'a str),
}

/// A value that counts as off: absent, or `false`, `0`, `none`, `no`, `off`.
/// A bare flag (empty value) is on.
pub fn is_off(v: Option<&str>) -> bool {
    match v {
        None => true,
        Some(v) => matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "false" | "0" | "none" | "no" | "off"
        ),
    }
}

fn number(v: Option<&str>) -> Option<f64> {
    v?.trim()
        .trim_matches(|c| c == '\'' || c == '"')
        .parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
}

impl Change {
    /// What the change is about.
    pub fn target(&self) -> Target<'_> {
        match (&self.arg, &self.env) {
            (Some(a), _) => Target::Arg(a),
            (None, Some(e)) => Target::Env(e),
            (None, None) => Target::Arg(""),
        }
    }

    /// Checks the change as written; the message names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        match (&self.arg, &self.env) {
            (Some(_), Some(_)) => return Err("give `arg` or `env`, not both".into()),
            (None, None) => return Err("give `arg` (a canonical launch key) or `env`".into()),
            (Some(a), None) => {
                if a.is_empty()
                    || !a
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                {
                    return Err(format!(
                        "arg `{a}` must be a canonical key: snake_case, no leading dashes (`disable_cuda_graph`)"
                    ));
                }
            }
            (None, Some(e)) => {
                if e.is_empty()
                    || !e
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                {
                    return Err(format!(
                        "env `{e}` must be an environment variable name (A-Z, 0-9, _)"
                    ));
                }
            }
        }
        match (self.op, &self.to) {
            (ChangeOp::Set, None) => return Err("op `set` needs `to` (a regex)".into()),
            (ChangeOp::On | ChangeOp::Off | ChangeOp::Lower | ChangeOp::Higher, Some(_)) => {
                return Err(format!("op `{}` takes no `to`", self.op.as_str()))
            }
            _ => {}
        }
        if let Some(to) = &self.to {
            Regex::new(to).map_err(|e| {
                format!(
                    "`to` is not a valid regex: {}",
                    e.to_string().lines().last().unwrap_or("")
                )
            })?;
        }
        Ok(())
    }

    /// Whether going from `before` to `after` (each `None` when absent) carries out this change.
    pub fn matches(&self, before: Option<&str>, after: Option<&str>) -> bool {
        let to = || self.to.as_deref().and_then(|t| Regex::new(t).ok());
        match self.op {
            ChangeOp::On => is_off(before) && !is_off(after),
            ChangeOp::Off => !is_off(before) && is_off(after),
            ChangeOp::Set => match (to(), after) {
                (Some(re), Some(a)) => re.is_match(a) && !before.is_some_and(|b| re.is_match(b)),
                _ => false,
            },
            ChangeOp::Changed => match after {
                Some(a) if before != Some(a) && !is_off(Some(a)) => {
                    self.to.is_none() || to().is_some_and(|re| re.is_match(a))
                }
                _ => false,
            },
            ChangeOp::Lower => {
                matches!((number(before), number(after)), (Some(b), Some(a)) if a < b)
            }
            ChangeOp::Higher => {
                matches!((number(before), number(after)), (Some(b), Some(a)) if a > b)
            }
        }
    }

    /// The change for people: `--disable-cuda-graph on`, `CUDA_LAUNCH_BLOCKING set to ^1$`.
    pub fn describe(&self) -> String {
        let what = match self.target() {
            Target::Arg(a) => format!("--{}", a.replace('_', "-")),
            Target::Env(e) => e.to_string(),
        };
        match (self.op, &self.to) {
            (ChangeOp::Set, Some(t)) | (ChangeOp::Changed, Some(t)) => {
                format!("{what} {} to /{t}/", self.op.as_str())
            }
            (op, _) => format!("{what} {}", op.as_str()),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InertFile {
    inert_args: Vec<String>,
    inert_env: Vec<String>,
}

const CHANGES_TOML: &str = include_str!("../../../kb/changes.toml");

fn inert() -> &'static InertFile {
    static F: OnceLock<InertFile> = OnceLock::new();
    F.get_or_init(|| {
        toml::from_str(CHANGES_TOML).unwrap_or(InertFile {
            inert_args: Vec::new(),
            inert_env: Vec::new(),
        })
    })
}

/// Launch args (canonical keys) whose difference between two launches is no
/// change at all (a random seed, the port, log verbosity).
pub fn inert_args() -> &'static [String] {
    &inert().inert_args
}

/// Environment variables whose difference is no change at all.
pub fn inert_env() -> &'static [String] {
    &inert().inert_env
}

/// Checks `kb/changes.toml` (for the lint): it parses and its names are well formed.
pub fn check_inert() -> Result<(), String> {
    let f: InertFile = toml::from_str(CHANGES_TOML).map_err(|e| format!("kb/changes.toml: {e}"))?;
    for a in &f.inert_args {
        Change {
            arg: Some(a.clone()),
            env: None,
            op: ChangeOp::On,
            to: None,
        }
        .check()
        .map_err(|e| format!("kb/changes.toml: inert_args: {e}"))?;
    }
    for e in &f.inert_env {
        Change {
            arg: None,
            env: Some(e.clone()),
            op: ChangeOp::On,
            to: None,
        }
        .check()
        .map_err(|m| format!("kb/changes.toml: inert_env: {m}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(arg: &str, op: ChangeOp, to: Option<&str>) -> Change {
        Change {
            arg: Some(arg.into()),
            env: None,
            op,
            to: to.map(String::from),
        }
    }

    #[test]
    fn on_and_off() {
        let c = ch("disable_cuda_graph", ChangeOp::On, None);
        assert!(c.matches(None, Some("True")));
        assert!(c.matches(Some("False"), Some("true")));
        assert!(c.matches(None, Some("")), "a bare flag is on");
        assert!(!c.matches(Some("True"), Some("True")));
        assert!(!c.matches(None, Some("false")));
        let c = ch("enable_torch_compile", ChangeOp::Off, None);
        assert!(c.matches(Some("True"), None));
        assert!(c.matches(Some("1"), Some("0")));
        assert!(!c.matches(None, None));
    }

    #[test]
    fn set_changed_lower_higher() {
        let c = Change {
            arg: None,
            env: Some("CUDA_LAUNCH_BLOCKING".into()),
            op: ChangeOp::Set,
            to: Some("^1$".into()),
        };
        assert!(c.matches(None, Some("1")));
        assert!(!c.matches(Some("1"), Some("1")));
        assert!(!c.matches(None, Some("0")));
        let c = ch("attention_backend", ChangeOp::Changed, None);
        assert!(c.matches(Some("fa3"), Some("triton")));
        assert!(c.matches(None, Some("triton")));
        assert!(!c.matches(Some("triton"), Some("triton")));
        assert!(!c.matches(Some("triton"), None));
        let c = ch("mem_fraction_static", ChangeOp::Lower, None);
        assert!(c.matches(Some("0.95"), Some("0.8")));
        assert!(!c.matches(Some("0.8"), Some("0.95")));
        assert!(!c.matches(None, Some("0.8")));
        assert!(ch("x", ChangeOp::Higher, None).matches(Some("1"), Some("2")));
    }

    #[test]
    fn checks_name_the_problem() {
        assert!(ch("--disable-cuda-graph", ChangeOp::On, None)
            .check()
            .unwrap_err()
            .contains("canonical"));
        assert!(ch("x", ChangeOp::Set, None)
            .check()
            .unwrap_err()
            .contains("to"));
        assert!(ch("x", ChangeOp::On, Some("1"))
            .check()
            .unwrap_err()
            .contains("takes no"));
        assert!(ch("x", ChangeOp::Set, Some("("))
            .check()
            .unwrap_err()
            .contains("regex"));
        check_inert().unwrap();
        assert!(inert_args().iter().any(|a| a == "random_seed"));
    }
}
