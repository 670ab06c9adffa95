//! Known regression windows, from the knowledge base's `kb/windows.toml`
//! (embedded at build time): ranges of a package's releases where something
//! is known to go wrong or that another package excludes. This module only
//! loads the table and answers "which windows cover this release"; what the
//! windows say is data, written in the TOML file.

use pep440_rs::{Version, VersionSpecifiers};
use rosetta_schema::package::normalize_name;
use serde::Deserialize;
use std::str::FromStr;
use std::sync::OnceLock;

const WINDOWS_TOML: &str = include_str!("../../../kb/windows.toml");

/// A malformed windows table.
#[derive(Debug, thiserror::Error)]
#[error("read the regression windows table: {0}")]
pub struct WindowsError(String);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowFile {
    window: Vec<WindowRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WindowRow {
    id: String,
    package: String,
    specifier: String,
    what: String,
    reference: String,
}

/// One regression window.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Window {
    /// The name rules use (`{window:ID}`).
    pub id: String,
    /// The package whose releases it covers (normalised).
    pub package: String,
    /// The PEP 440 specifiers, as written.
    pub specifier: String,
    /// What happens in these releases.
    pub what: String,
    /// Where it comes from.
    pub reference: String,
    #[serde(skip)]
    spec: VersionSpecifiers,
}

impl Window {
    /// Whether the window covers `version`.
    pub fn contains(&self, version: &Version) -> bool {
        self.spec.contains(version)
    }

    /// How a template names it: `sglang >=0.5.7,<0.5.10`.
    pub fn label(&self) -> String {
        format!("{} {}", self.package, self.specifier)
    }
}

/// Parses a windows table (the embedded one, or a test's).
pub fn parse_windows(text: &str) -> Result<Vec<Window>, WindowsError> {
    let file: WindowFile = toml::from_str(text).map_err(|e| WindowsError(e.to_string()))?;
    let mut seen = std::collections::HashSet::new();
    file.window
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let kebab = !r.id.is_empty()
                && r.id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !kebab || !seen.insert(r.id.clone()) {
                return Err(WindowsError(format!(
                    "window {} ({}): id `{}` must be kebab-case and unique",
                    i + 1,
                    r.package,
                    r.id
                )));
            }
            let spec = VersionSpecifiers::from_str(&r.specifier).map_err(|e| {
                WindowsError(format!(
                    "window {} ({}): specifier `{}`: {e}",
                    i + 1,
                    r.package,
                    r.specifier
                ))
            })?;
            Ok(Window {
                id: r.id,
                package: normalize_name(&r.package),
                specifier: r.specifier,
                what: r.what,
                reference: r.reference,
                spec,
            })
        })
        .collect()
}

/// The embedded windows (empty if the embedded table were broken; a unit test guards it).
pub fn embedded() -> &'static [Window] {
    static W: OnceLock<Vec<Window>> = OnceLock::new();
    W.get_or_init(|| parse_windows(WINDOWS_TOML).unwrap_or_default())
}

/// The embedded window a rule names (`{window:ID}`).
pub fn by_id(id: &str) -> Option<&'static Window> {
    embedded().iter().find(|w| w.id == id)
}

/// The embedded windows of one package.
pub fn for_package(package: &str) -> Vec<&'static Window> {
    let p = normalize_name(package);
    embedded().iter().filter(|w| w.package == p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_table_parses_and_covers_the_known_windows() {
        let all = parse_windows(WINDOWS_TOML).unwrap();
        assert!(all.len() >= 4);
        let v = |s: &str| Version::from_str(s).unwrap();
        let sg = for_package("sglang");
        let rope = sg.iter().find(|w| w.what.contains("RoPE")).unwrap();
        for yes in ["0.5.7", "0.5.8.post1", "0.5.9"] {
            assert!(rope.contains(&v(yes)), "{yes}");
        }
        for no in ["0.5.6.post2", "0.5.10rc0", "0.5.10"] {
            assert!(!rope.contains(&v(no)), "{no}");
        }
        let tf = for_package("Transformers");
        let vllm_excl = tf.iter().find(|w| w.what.contains("vLLM 0.19.1")).unwrap();
        assert!(vllm_excl.contains(&v("5.0.0")) && vllm_excl.contains(&v("5.5.0")));
        assert!(!vllm_excl.contains(&v("5.5.3")) && !vllm_excl.contains(&v("4.57.1")));
    }

    #[test]
    fn bad_tables_are_clear_errors() {
        let e = parse_windows(
            "[[window]]\nid='x'\npackage='x'\nspecifier='>=>1'\nwhat=''\nreference=''\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("specifier `>=>1`"), "{e}");
        assert!(parse_windows("[[window]]\npackage='x'\n").is_err());
        let twice = "[[window]]\nid='a'\npackage='x'\nspecifier='>=1'\nwhat=''\nreference=''\n";
        let e = parse_windows(&twice.repeat(2)).unwrap_err();
        assert!(e.to_string().contains("unique"), "{e}");
        assert_eq!(
            by_id("sglang-rope-warning").map(Window::label).as_deref(),
            Some("sglang >=0.5.7,<0.5.10")
        );
    }
}
