//! GPU architectures as values: an NVIDIA compute capability (`9.0`,
//! `sm_90`) or an AMD `gfx` target (`gfx942`), parsed from every spelling a
//! log, a flag or a table uses, printed one way, ordered.
//!
//! This is the one parser of arch text in rosetta; which code runs on which
//! arch (SASS/PTX targets, `a`/`f` variants, PTX ISA) is `rosetta-env`'s
//! `arch` module, GPU names and generations are the knowledge base's table.

use std::fmt;

/// A GPU's compute capability, e.g. 9.0 (`sm_90`) or 12.0 (`sm_120`).
///
/// Displays as `9.0`; [`ComputeCapability::arch`] gives `sm_90`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ComputeCapability {
    /// The major version (9 for Hopper).
    pub major: u32,
    /// The minor version.
    pub minor: u32,
}

impl ComputeCapability {
    /// From the SM number of a fat binary entry: 90 -> 9.0, 121 -> 12.1.
    pub fn from_sm(sm: u32) -> ComputeCapability {
        ComputeCapability {
            major: sm / 10,
            minor: sm % 10,
        }
    }

    /// The SM number: 9.0 -> 90.
    pub fn sm(self) -> u32 {
        self.major * 10 + self.minor
    }

    /// The arch name used as a key in reports: `sm_90`.
    pub fn arch(self) -> String {
        format!("sm_{}", self.sm())
    }

    /// The family: code built `f` for a capability runs on the later minors
    /// of the same major, so the family is the major (10 for 10.0 and 10.3).
    pub fn family(self) -> u32 {
        self.major
    }

    /// Parses `9.0`, `sm_90`, `sm90`, `sm_90a`, `compute_90`, `90`, any case.
    /// A variant suffix is dropped: a GPU has a capability; `a`/`f` are
    /// properties of code. `None` for anything else (`H200`, `9.10`, `gfx942`).
    pub fn parse(text: &str) -> Option<ComputeCapability> {
        let t = text.trim().to_ascii_lowercase();
        if let Some((maj, min)) = t.split_once('.') {
            if !all_digits(maj) || !all_digits(min) {
                return None;
            }
            let major: u32 = maj.parse().ok()?;
            let minor: u32 = min.parse().ok()?;
            if minor > 9 || major == 0 || major > 99 {
                return None;
            }
            return Some(ComputeCapability { major, minor });
        }
        let digits = t
            .strip_prefix("sm_")
            .or_else(|| t.strip_prefix("compute_"))
            .or_else(|| t.strip_prefix("sm"))
            .unwrap_or(&t);
        let digits = digits
            .strip_suffix(['a', 'f'])
            .unwrap_or(digits)
            .trim_start_matches('0');
        if !all_digits(digits) || digits.len() > 3 {
            return None;
        }
        let sm: u32 = digits.parse().ok()?;
        if !(10..=999).contains(&sm) {
            return None;
        }
        Some(ComputeCapability::from_sm(sm))
    }

    /// Integrated (Jetson / Tegra) parts run only SASS built for exactly their
    /// capability (PyTorch's `DEVICE_REQUIREMENT` table excludes them from the
    /// ranges of their discrete siblings).
    pub fn is_integrated(self) -> bool {
        matches!(self.sm(), 53 | 62 | 72 | 87)
    }
}

impl fmt::Display for ComputeCapability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// An AMD GPU target, `gfx942`, `gfx90a`, `gfx1100`.
///
/// Held as the hexadecimal value of its digits (LLVM's names are a decimal
/// major, a decimal minor and a hexadecimal stepping, so `90a` and `1100`
/// both read as hex and print back the same), which keeps [`Arch`] `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gfx(u32);

impl Gfx {
    /// Parses `gfx942` (any case) and a target id with features,
    /// `gfx942:sramecc+:xnack-`, whose features it drops (as
    /// [`ComputeCapability::parse`] drops `a`/`f`); `None` for anything else.
    pub fn parse(text: &str) -> Option<Gfx> {
        let t = text.trim().to_ascii_lowercase();
        let t = t.split_once(':').map_or(t.as_str(), |(id, _)| id);
        let digits = t.strip_prefix("gfx")?;
        let ok = (3..=4).contains(&digits.len())
            && !digits.starts_with('0')
            && digits.bytes().all(|b| b.is_ascii_hexdigit());
        if !ok {
            return None;
        }
        u32::from_str_radix(digits, 16).ok().map(Gfx)
    }
}

impl fmt::Display for Gfx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gfx{:x}", self.0)
    }
}

/// A GPU architecture: what a GPU is, as code targets name it.
///
/// Displays as `sm_120` or `gfx942`; orders NVIDIA before AMD, then by
/// capability (or target).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// An NVIDIA GPU, by compute capability.
    Nvidia(ComputeCapability),
    /// An AMD GPU, by `gfx` target.
    Amd(Gfx),
}

impl Arch {
    /// Parses every spelling [`ComputeCapability::parse`] and [`Gfx::parse`] take.
    pub fn parse(text: &str) -> Option<Arch> {
        ComputeCapability::parse(text)
            .map(Arch::Nvidia)
            .or_else(|| Gfx::parse(text).map(Arch::Amd))
    }

    /// The compute capability, NVIDIA only.
    pub fn cc(self) -> Option<ComputeCapability> {
        match self {
            Arch::Nvidia(cc) => Some(cc),
            Arch::Amd(_) => None,
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Arch::Nvidia(cc) => write!(f, "sm_{}", cc.sm()),
            Arch::Amd(g) => g.fmt(f),
        }
    }
}

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn cc(s: &str) -> ComputeCapability {
        ComputeCapability::parse(s).unwrap()
    }

    #[test]
    fn parses_capabilities() {
        assert_eq!(cc("9.0"), ComputeCapability { major: 9, minor: 0 });
        assert_eq!(cc("sm_120"), cc("12.0"));
        assert_eq!(cc("sm_120a"), cc("12.0"));
        assert_eq!(cc("sm_100f"), cc("10.0"));
        assert_eq!(cc("sm90"), cc("9.0"));
        assert_eq!(cc("compute_90"), cc("9.0"));
        assert_eq!(cc("121"), cc("12.1"));
        assert_eq!(cc("SM_89"), cc("8.9"));
        assert_eq!(cc(" 8.6 "), cc("8.6"));
        for bad in [
            "H200", "9.10", "", "sm_", "sm_x", "gfx942", "+9.0", "9.+0", "sm_9", "1000",
        ] {
            assert!(ComputeCapability::parse(bad).is_none(), "{bad}");
        }
        assert_eq!(cc("12.0").arch(), "sm_120");
        assert_eq!(cc("12.0").to_string(), "12.0");
        assert_eq!(cc("10.3").family(), cc("sm_100").family());
        assert_ne!(cc("12.0").family(), cc("10.0").family());
        assert!(cc("8.7").is_integrated() && !cc("8.6").is_integrated());
    }

    #[test]
    fn parses_archs() {
        let a = |s: &str| Arch::parse(s).map(|a| a.to_string());
        assert_eq!(a("sm_120a").as_deref(), Some("sm_120"));
        assert_eq!(a("12.0").as_deref(), Some("sm_120"));
        assert_eq!(a("compute_90").as_deref(), Some("sm_90"));
        assert_eq!(a("gfx942").as_deref(), Some("gfx942"));
        assert_eq!(a("GFX90a").as_deref(), Some("gfx90a"));
        assert_eq!(a("gfx1100").as_deref(), Some("gfx1100"));
        assert_eq!(a("gfx942:sramecc+:xnack-").as_deref(), Some("gfx942"));
        assert_eq!(a("gfx"), None);
        assert_eq!(a("gfx0942"), None);
        assert_eq!(a("toaster"), None);
        assert_eq!(Arch::parse("gfx942").unwrap().cc(), None);
        assert_eq!(Arch::parse("sm_90").unwrap().cc(), Some(cc("9.0")));
    }

    #[test]
    fn orders() {
        assert!(cc("8.9") < cc("9.0") && cc("9.0") < cc("10.0") && cc("10.0") < cc("10.3"));
        let (h, b, mi) = (
            Arch::parse("sm_90").unwrap(),
            Arch::parse("sm_100").unwrap(),
            Arch::parse("gfx942").unwrap(),
        );
        assert!(h < b && b < mi);
        assert!(Arch::parse("gfx90a").unwrap() < mi);
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in "\\PC{0,12}") {
            let _ = Arch::parse(&s);
            let _ = ComputeCapability::parse(&s);
        }

        #[test]
        fn arch_display_round_trips(sm in 10u32..=999) {
            let c = ComputeCapability::from_sm(sm);
            prop_assert_eq!(ComputeCapability::parse(&c.to_string()), Some(c));
            prop_assert_eq!(ComputeCapability::parse(&c.arch()), Some(c));
            let a = Arch::Nvidia(c);
            prop_assert_eq!(Arch::parse(&a.to_string()), Some(a));
        }

        #[test]
        fn gfx_display_round_trips(s in "gfx[1-9a-f][0-9a-f]{2,3}") {
            let a = Arch::parse(&s).unwrap();
            prop_assert_eq!(a.to_string(), s.clone());
            prop_assert_eq!(Arch::parse(&a.to_string()), Some(a));
        }
    }
}
