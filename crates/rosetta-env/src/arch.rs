//! Which code runs on which GPU: SASS/PTX code targets with their `a`/`f`
//! variants, CUDA versions, the PTX ISA -> CUDA table, and the per-GPU verdict
//! (`sass`, `ptx-jit`, `none`).
//!
//! Compute capabilities themselves, and reading them from text, are
//! `rosetta_schema::arch`'s. Pure functions over small values; reading binaries lives in `fatbin.rs`,
//! deciding what is a problem in `report.rs`. The rules follow
//! `research/mechanics.md` A.7-A.8: a cubin runs on the same major with a minor
//! at least its own (`a`: that exact capability only; `f`: the same family);
//! PTX is compiled by the driver for any capability at least its target (`a`:
//! that exact capability; `f`: the same family) when the driver knows its ISA.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Compute capabilities are the schema's: one parser of arch text for every crate.
pub use rosetta_schema::ComputeCapability;

/// The `a` / `f` suffix of a code target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// No suffix: forward compatible within the major (SASS) or beyond (PTX).
    Plain,
    /// `a`, arch-specific (fat binary flag 0x100000): that exact capability only.
    Arch,
    /// `f`, family-specific (flag 0x200000): later members of the same family.
    Family,
}

impl Variant {
    /// The suffix as written after the SM number.
    pub fn suffix(self) -> &'static str {
        match self {
            Variant::Plain => "",
            Variant::Arch => "a",
            Variant::Family => "f",
        }
    }
}

/// Machine code (SASS, a cubin) or PTX for the driver to compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CodeKind {
    /// A cubin: machine code for one architecture.
    Sass,
    /// PTX: compiled by the driver at first launch.
    Ptx,
}

/// One code target: `sm_90a`, `compute_100f`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CodeTarget {
    /// The capability the code was built for.
    pub cc: ComputeCapability,
    /// Its `a` / `f` variant.
    pub variant: Variant,
}

impl CodeTarget {
    /// The label as reports print it: `sm_90a` for SASS, `compute_90a` for PTX.
    pub fn label(self, kind: CodeKind) -> String {
        let prefix = match kind {
            CodeKind::Sass => "sm_",
            CodeKind::Ptx => "compute_",
        };
        format!("{prefix}{}{}", self.cc.sm(), self.variant.suffix())
    }

    /// Parses `sm_90a` or `compute_100f` (either prefix; the kind is the caller's).
    pub fn parse(text: &str) -> Option<CodeTarget> {
        let t = text.trim();
        let rest = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))?;
        let (digits, variant) = if let Some(d) = rest.strip_suffix('a') {
            (d, Variant::Arch)
        } else if let Some(d) = rest.strip_suffix('f') {
            (d, Variant::Family)
        } else {
            (rest, Variant::Plain)
        };
        let sm: u32 = digits.parse().ok()?;
        Some(CodeTarget {
            cc: ComputeCapability::from_sm(sm),
            variant,
        })
    }

    /// Whether a cubin built for this target loads on `gpu`.
    pub fn sass_runs_on(self, gpu: ComputeCapability) -> bool {
        match self.variant {
            Variant::Arch => self.cc == gpu,
            // A plain or family cubin: same major, minor at least the cubin's
            // (an `f` cubin is the same machine code; `f` matters for PTX).
            Variant::Plain | Variant::Family => {
                if gpu.is_integrated() && gpu != self.cc {
                    return false;
                }
                self.cc.major == gpu.major && gpu.minor >= self.cc.minor
            }
        }
    }

    /// Whether the driver can compile PTX of this target for `gpu` (ignoring
    /// the ISA version; see [`CudaVersion::supports_ptx_isa`]).
    pub fn ptx_compiles_for(self, gpu: ComputeCapability) -> bool {
        match self.variant {
            Variant::Arch => self.cc == gpu,
            Variant::Family => self.cc.major == gpu.major && gpu.minor >= self.cc.minor,
            Variant::Plain => gpu >= self.cc,
        }
    }
}

/// A CUDA version, e.g. 13.0 (the driver's highest, or a build's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CudaVersion {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
}

impl CudaVersion {
    /// Parses `13.0`, `12.8.90`, `13`; `None` for anything else.
    pub fn parse(text: &str) -> Option<CudaVersion> {
        let mut parts = text.trim().split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = match parts.next() {
            Some(m) => m.parse().ok()?,
            None => 0,
        };
        Some(CudaVersion { major, minor })
    }

    /// The first CUDA release whose driver compiles PTX of ISA `major.minor`
    /// (NVIDIA's table as encoded in cuda-python's `_ptx_utils.py`:
    /// 7.x -> 11.x, 8.0-8.5 -> 12.0-12.5, 8.6 -> 12.7, 8.7 -> 12.8,
    /// 8.8 -> 12.9, 9.x -> 13.x).
    pub fn first_for_ptx_isa(major: u32, minor: u32) -> CudaVersion {
        let (cm, cn) = match (major, minor) {
            (0..=6, _) => (10, 0),
            (7, m) => (11, m),
            (8, m @ 0..=5) => (12, m),
            (8, m) => (12, m + 1),
            (9, m) => (13, m),
            // Beyond the table: assume the 9.x pattern continues.
            (maj, m) => (maj + 4, m),
        };
        CudaVersion {
            major: cm,
            minor: cn,
        }
    }

    /// Whether a driver of this CUDA version compiles PTX of ISA `major.minor`.
    pub fn supports_ptx_isa(self, major: u32, minor: u32) -> bool {
        self >= CudaVersion::first_for_ptx_isa(major, minor)
    }
}

impl fmt::Display for CudaVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// Whether a library can run on a GPU, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// No code the GPU can run: `no kernel image is available`.
    None,
    /// Only PTX the driver compiles at first launch.
    PtxJit,
    /// A cubin that loads as is.
    Sass,
}

impl Verdict {
    /// The id as JSON writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Sass => "sass",
            Verdict::PtxJit => "ptx-jit",
            Verdict::None => "none",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A PTX target with its ISA version, as judged for a GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtxCode {
    /// The target (`compute_100a`).
    pub target: CodeTarget,
    /// The PTX ISA version (major, minor), when known.
    pub isa: Option<(u32, u32)>,
}

/// The verdict for one set of code on one GPU: `sass` if a cubin loads,
/// else `ptx-jit` if the driver can compile some PTX (its ISA known to the
/// driver, or the driver unknown), else `none`.
pub fn judge(
    sass: &[CodeTarget],
    ptx: &[PtxCode],
    gpu: ComputeCapability,
    driver: Option<CudaVersion>,
) -> Verdict {
    if sass.iter().any(|t| t.sass_runs_on(gpu)) {
        return Verdict::Sass;
    }
    let jit = ptx.iter().any(|p| {
        p.target.ptx_compiles_for(gpu)
            && match (driver, p.isa) {
                (Some(d), Some((maj, min))) => d.supports_ptx_isa(maj, min),
                _ => true,
            }
    });
    if jit {
        Verdict::PtxJit
    } else {
        Verdict::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cc(s: &str) -> ComputeCapability {
        ComputeCapability::parse(s).unwrap()
    }
    fn t(s: &str) -> CodeTarget {
        CodeTarget::parse(s).unwrap()
    }

    #[test]
    fn parses_capabilities() {
        assert_eq!(cc("9.0"), ComputeCapability { major: 9, minor: 0 });
        assert_eq!(cc("sm_120"), cc("12.0"));
        assert_eq!(cc("sm_90a"), cc("9.0"));
        assert_eq!(cc("compute_100"), cc("10.0"));
        assert_eq!(cc("121"), cc("12.1"));
        assert_eq!(cc("SM_89"), cc("8.9"));
        assert!(ComputeCapability::parse("H200").is_none());
        assert!(ComputeCapability::parse("9.10").is_none());
        assert!(ComputeCapability::parse("").is_none());
        assert_eq!(cc("12.0").arch(), "sm_120");
    }

    #[test]
    fn labels_round_trip() {
        for s in ["sm_80", "sm_90a", "sm_100f", "sm_121a"] {
            assert_eq!(t(s).label(CodeKind::Sass), s);
        }
        assert_eq!(t("compute_100a").label(CodeKind::Ptx), "compute_100a");
        assert!(CodeTarget::parse("sm_x").is_none());
    }

    #[test]
    fn sass_rules() {
        // Same major, minor >= the cubin's.
        assert!(t("sm_80").sass_runs_on(cc("8.6")));
        assert!(t("sm_80").sass_runs_on(cc("8.9")));
        assert!(!t("sm_86").sass_runs_on(cc("8.0")));
        assert!(!t("sm_90").sass_runs_on(cc("10.0")));
        assert!(t("sm_100").sass_runs_on(cc("10.3")));
        assert!(!t("sm_120").sass_runs_on(cc("10.0")));
        // `a`: exactly that capability.
        assert!(t("sm_90a").sass_runs_on(cc("9.0")));
        assert!(!t("sm_100a").sass_runs_on(cc("10.3")));
        // `f`: the family.
        assert!(t("sm_100f").sass_runs_on(cc("10.3")));
        assert!(!t("sm_100f").sass_runs_on(cc("12.0")));
        // Integrated parts: exact only.
        assert!(!t("sm_80").sass_runs_on(cc("8.7")));
        assert!(t("sm_87").sass_runs_on(cc("8.7")));
    }

    #[test]
    fn ptx_rules() {
        assert!(t("compute_90").ptx_compiles_for(cc("12.0")));
        assert!(!t("compute_100").ptx_compiles_for(cc("9.0")));
        assert!(t("compute_100a").ptx_compiles_for(cc("10.0")));
        assert!(!t("compute_100a").ptx_compiles_for(cc("12.0")));
        assert!(t("compute_100f").ptx_compiles_for(cc("10.3")));
        assert!(!t("compute_100f").ptx_compiles_for(cc("11.0")));
    }

    #[test]
    fn ptx_isa_table() {
        let v = CudaVersion::first_for_ptx_isa;
        assert_eq!(v(7, 8).to_string(), "11.8");
        assert_eq!(v(8, 5).to_string(), "12.5");
        assert_eq!(v(8, 6).to_string(), "12.7");
        assert_eq!(v(8, 8).to_string(), "12.9");
        assert_eq!(v(9, 0).to_string(), "13.0");
        assert_eq!(v(9, 2).to_string(), "13.2");
        let d = CudaVersion::parse("13.0").unwrap();
        assert!(d.supports_ptx_isa(9, 0));
        assert!(!d.supports_ptx_isa(9, 1));
        assert_eq!(CudaVersion::parse("12.8.90").unwrap().to_string(), "12.8");
        assert!(CudaVersion::parse("abc").is_none());
    }

    #[test]
    fn judges() {
        let sass = [t("sm_90")];
        let ptx = [PtxCode {
            target: t("compute_90"),
            isa: Some((9, 0)),
        }];
        assert_eq!(judge(&sass, &ptx, cc("9.0"), None), Verdict::Sass);
        assert_eq!(judge(&sass, &ptx, cc("12.0"), None), Verdict::PtxJit);
        let old = CudaVersion::parse("12.8");
        assert_eq!(judge(&sass, &ptx, cc("12.0"), old), Verdict::None);
        assert_eq!(judge(&sass, &ptx, cc("8.0"), None), Verdict::None);
        assert!(Verdict::Sass > Verdict::PtxJit && Verdict::PtxJit > Verdict::None);
    }
}
