//! The derived facts a rule may name, and the values its templates may use:
//! one list each. The rule parser reads `facts` into [`Fact`], the engine
//! matches on it exhaustively, the lint checks templates against
//! [`TEMPLATE_VALUES`], and `docs/rules.md` carries the generated list
//! (checked by a test, rewritten with `UPDATE_README=1`).

use serde::Deserialize;
use std::fmt;

/// A fact derived from the log, the launch and the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
pub enum Fact {
    /// Positions reach or pass the model's position limit.
    #[serde(rename = "position-overflow")]
    PositionOverflow,
    /// More than one rank.
    #[serde(rename = "multi-rank")]
    MultiRank,
    /// CUDA graphs are on.
    #[serde(rename = "cuda-graph-on")]
    CudaGraphOn,
    /// The failure names an exception type.
    #[serde(rename = "exception")]
    Exception,
    /// The server was serving requests before the failure.
    #[serde(rename = "serving")]
    Serving,
    /// The GPU is sm_100 or newer.
    #[serde(rename = "new-arch")]
    NewArch,
    /// The GPU is sm_75 or older.
    #[serde(rename = "old-arch")]
    OldArch,
    /// (--env) a CUDA library has no code for the GPU present.
    #[serde(rename = "env:no-code-for-gpu")]
    EnvNoCodeForGpu,
    /// (--env) torch is built for a newer CUDA than the driver supports.
    #[serde(rename = "env:torch-cuda-newer-than-driver")]
    EnvTorchCudaNewerThanDriver,
    /// A request names a token id at or above the vocabulary size.
    #[serde(rename = "request-token-beyond-vocab")]
    RequestTokenBeyondVocab,
    /// The model runs in float16.
    #[serde(rename = "fp16")]
    Fp16,
    /// A shape mismatch whose sizes differ by the tensor-parallel size.
    #[serde(rename = "shape-ratio-tp")]
    ShapeRatioTp,
    /// The configured context is above the model's position limit.
    #[serde(rename = "context-over-limit")]
    ContextOverLimit,
    /// The memory fraction leaves less headroom than the engine's default.
    #[serde(rename = "memory-headroom-short")]
    MemoryHeadroomShort,
    /// A module missing from an installed package is imported by another package's code.
    #[serde(rename = "import-across-packages")]
    ImportAcrossPackages,
    /// A module missing from a package is imported by that package's own code on a path
    /// that runs on one platform only.
    #[serde(rename = "import-on-platform-path")]
    ImportOnPlatformPath,
    /// A function defined inside a frame of the traceback refused a keyword its caller, of
    /// the same codebase, passed.
    #[serde(rename = "keyword-within-codebase")]
    KeywordWithinCodebase,
}

impl Fact {
    /// Every fact, in the order the docs list them.
    pub const ALL: [Fact; 17] = [
        Fact::PositionOverflow,
        Fact::MultiRank,
        Fact::CudaGraphOn,
        Fact::Exception,
        Fact::Serving,
        Fact::NewArch,
        Fact::OldArch,
        Fact::EnvNoCodeForGpu,
        Fact::EnvTorchCudaNewerThanDriver,
        Fact::RequestTokenBeyondVocab,
        Fact::Fp16,
        Fact::ShapeRatioTp,
        Fact::ContextOverLimit,
        Fact::MemoryHeadroomShort,
        Fact::ImportAcrossPackages,
        Fact::ImportOnPlatformPath,
        Fact::KeywordWithinCodebase,
    ];

    /// The name rules use.
    pub fn name(self) -> &'static str {
        self.info().0
    }

    /// What it means, for the docs.
    pub fn about(self) -> &'static str {
        self.info().1
    }

    /// Whether it needs a failure (or a log of a run) to hold; preflight does not ask it.
    pub fn needs_run(self) -> bool {
        self.info().2
    }

    /// Reads a fact's name.
    pub fn parse(name: &str) -> Option<Fact> {
        Fact::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Long because it is one flat `match` over `Fact`, one arm per fact: (name, meaning,
    /// whether it needs a run). Each arm is data; splitting it would only scatter the table.
    fn info(self) -> (&'static str, &'static str, bool) {
        match self {
            Fact::PositionOverflow => (
                "position-overflow",
                "positions reach or pass the model's position limit",
                true,
            ),
            Fact::MultiRank => (
                "multi-rank",
                "more than one rank (tp/dp/ep/pp/world size > 1, or several ranks in the log)",
                false,
            ),
            Fact::CudaGraphOn => (
                "cuda-graph-on",
                "CUDA graphs are on (not disabled, not eager)",
                false,
            ),
            Fact::Exception => (
                "exception",
                "the failure names an exception type (`ValueError: ...`), not a bare error line",
                true,
            ),
            Fact::Serving => (
                "serving",
                "the server was serving before the failure: a ready, request or batch milestone precedes it, or the engine dumped the batch it was running (vLLM's `Dumping input data`)",
                true,
            ),
            Fact::NewArch => ("new-arch", "the GPU is sm_100 or newer", false),
            Fact::OldArch => ("old-arch", "the GPU is sm_75 or older", false),
            Fact::EnvNoCodeForGpu => (
                "env:no-code-for-gpu",
                "(`--env`) a CUDA library has no code for the GPU present",
                false,
            ),
            Fact::EnvTorchCudaNewerThanDriver => (
                "env:torch-cuda-newer-than-driver",
                "(`--env`) torch is built for a newer CUDA than the driver supports",
                false,
            ),
            Fact::RequestTokenBeyondVocab => (
                "request-token-beyond-vocab",
                "a request names a token id at or above the vocabulary size printed in the log",
                true,
            ),
            Fact::Fp16 => (
                "fp16",
                "the model runs in float16 (a dtype flag or a line saying so)",
                false,
            ),
            Fact::ShapeRatioTp => (
                "shape-ratio-tp",
                "the failing shape mismatch has one size equal to the other times the tensor-parallel size",
                true,
            ),
            Fact::ContextOverLimit => (
                "context-over-limit",
                "the configured context length is above the model's position limit",
                false,
            ),
            Fact::MemoryHeadroomShort => (
                "memory-headroom-short",
                "the memory fraction leaves less room for activations and CUDA graphs than the engine's own default keeps, by more than the engine file's `risk_below` share (needs the GPU's memory: `--env`, or preflight; the heuristic is data in `kb/engines/`)",
                false,
            ),
            Fact::ImportAcrossPackages => (
                "import-across-packages",
                "the failure is `No module named 'a.b'` (package `a` is installed, its module `b` is not), the code importing it is not under `a/`, and it asks for `a.b` itself (not a deeper `a.b.c`, which says a whole part of `a` is absent): another package's code expects another version of `a`",
                true,
            ),
            Fact::ImportOnPlatformPath => (
                "import-on-platform-path",
                "the failure is `No module named 'a.b'` (package `a` is installed, its module `b` is not), the code importing it is under `a/` itself, and its file or folder is named for one platform or accelerator (`rocm_aiter_fusion.py`, `platforms/xpu.py`: the vocabulary's `platform-path` shape): the package's code on a path its main platform's tests do not run asks for a module the package no longer has",
                true,
            ),
            Fact::KeywordWithinCodebase => (
                "keyword-within-codebase",
                "the failure is `f() got an unexpected keyword argument` for a function defined inside another function (`Outer.method.<locals>.f`) whose frame is in the traceback, and that frame's file and the calling frame's file are of one codebase (one installed package, or one source tree): caller and callee are the same program's code",
                true,
            ),
        }
    }
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Values every template may use, besides the rule's own named (`{name}`)
/// and numbered (`{1}`) captures, `{arg:KEY}`, `{version:PKG}` and `{window:ID}`
/// (a regression window of `kb/windows.toml`, printed as its package and range).
pub const TEMPLATE_VALUES: &[(&str, &str)] = &[
    (
        "class",
        "the failure class (before launch: the class the rule predicts)",
    ),
    (
        "phase",
        "the failure phase (before launch: the phase the rule predicts)",
    ),
    ("gpu", "the GPU's name as the log or the machine gives it"),
    (
        "gpu_arch",
        "the GPU's arch (`sm_120`), the one a `gpu_arch` condition matched first",
    ),
    (
        "model_type",
        "the model type (the one `model_type` or `model_type_since` matched first)",
    ),
    (
        "first_release",
        "the first transformers release that knows the model type",
    ),
    ("limit", "the model's position limit"),
    ("max_position", "the highest position the log shows in use"),
    ("context", "the configured context length"),
    ("max_id", "the highest token id a request named"),
    ("vocab", "the vocabulary size printed in the log"),
    ("flag", "the launch arg an `any_args` condition matched"),
    ("value", "that arg's value"),
    (
        "library",
        "(`--env`) the CUDA library with no code for the GPU",
    ),
    ("package", "(`--env`) the package that ships it"),
    ("missing_arch", "(`--env`) the arch it lacks"),
];

/// Whether `name` (a `{placeholder}` without its `|default`) is a value
/// templates may use, given the rule's own capture names.
pub fn is_template_value(name: &str, captures: &[String]) -> bool {
    TEMPLATE_VALUES.iter().any(|(n, _)| *n == name)
        || name.strip_prefix("arg:").is_some_and(|k| !k.is_empty())
        || name.strip_prefix("version:").is_some_and(|k| !k.is_empty())
        || name
            .strip_prefix("window:")
            .is_some_and(|id| crate::windows::by_id(id).is_some())
        || (!name.is_empty() && name.bytes().all(|b| b.is_ascii_digit()))
        || captures.iter().any(|c| c == name)
}

/// The `{placeholder}` names of a template, as `engine::fill` reads them.
pub fn placeholders(template: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(i) = rest.find('{') {
        let after = &rest[i + 1..];
        match after.find('}') {
            Some(j) if j > 0 && !after[..j].split('|').next().unwrap_or(" ").contains(' ') => {
                out.push(after[..j].split('|').next().unwrap_or(""));
                rest = &after[j + 1..];
            }
            _ => rest = after,
        }
    }
    out
}

/// The Markdown list of facts and template values that `docs/rules.md`
/// carries between its `<!-- facts -->` markers.
pub fn docs_section() -> String {
    let mut s =
        String::from("Derived facts (`[when].facts`, `not_facts`, `[preflight].facts`):\n\n");
    for f in Fact::ALL {
        s.push_str(&format!("- `{}`: {}", f.name(), f.about()));
        if f.needs_run() {
            s.push_str(" *(needs a run: not asked before launch)*");
        }
        s.push('\n');
    }
    s.push_str(
        "\nTemplate values (`summary`, `why`, `note`, `try.do`, `try.tells`), besides the rule's own \
         named and numbered captures, `{arg:KEY}`, `{version:PKG}` and `{window:ID}` (a regression \
         window of `kb/windows.toml` by its id, printed as its package and range: a version range \
         is written once, there):\n\n",
    );
    for (n, about) in TEMPLATE_VALUES {
        s.push_str(&format!("- `{{{n}}}`: {about}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for f in Fact::ALL {
            assert_eq!(Fact::parse(f.name()), Some(f));
            let toml_value: Fact = toml::from_str::<std::collections::HashMap<String, Fact>>(
                &format!("x = \"{}\"", f.name()),
            )
            .unwrap()["x"];
            assert_eq!(toml_value, f, "serde name of {f:?}");
        }
        let mut names: Vec<_> = Fact::ALL.iter().map(|f| f.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Fact::ALL.len());
        assert_eq!(Fact::parse("no-such-fact"), None);
    }

    #[test]
    fn placeholders_as_fill_reads_them() {
        assert_eq!(
            placeholders("a {gpu} b {x|y} {arg:tp_size} { not } {1} {}"),
            vec!["gpu", "x", "arg:tp_size", "1"]
        );
        assert!(is_template_value("arg:tp_size", &[]));
        assert!(is_template_value("2", &[]));
        assert!(is_template_value("kernel", &["kernel".into()]));
        assert!(!is_template_value("kernal", &["kernel".into()]));
        assert!(!is_template_value("arg:", &[]));
        assert!(is_template_value("window:sglang-rope-warning", &[]));
        assert!(!is_template_value("window:no-such-window", &[]));
    }

    #[test]
    fn docs_carry_the_generated_list() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/rules.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let (begin, end) = ("<!-- facts:begin -->\n", "<!-- facts:end -->");
        let (Some(a), Some(b)) = (doc.find(begin), doc.find(end)) else {
            panic!("docs/rules.md lacks the {begin:?} .. {end:?} markers");
        };
        let shown = &doc[a + begin.len()..b];
        let real = docs_section();
        if shown != real {
            if std::env::var_os("UPDATE_README").is_some() {
                let new = format!("{}{real}{}", &doc[..a + begin.len()], &doc[b..]);
                std::fs::write(path, new).unwrap();
                return;
            }
            panic!(
                "docs/rules.md's list of facts is stale; regenerate with \
                 `UPDATE_README=1 cargo test -p rosetta-kb fact`\n--- docs\n{shown}\n--- code\n{real}"
            );
        }
    }
}
