//! The env report: the JSON contract of `rosetta env --format json`, its
//! loader for `diagnose --env`, the query helpers the knowledge base calls,
//! and the step that judges every library against every target GPU and lists
//! the problems.
//!
//! It does not probe anything (`gpu.rs`, `python.rs`, `scan.rs` do) and does
//! not render (`render.rs`). Every field is `#[serde(default)]` so that a
//! report from an older or newer rosetta still loads.

use crate::arch::{judge, CodeKind, CodeTarget, ComputeCapability, CudaVersion, PtxCode, Verdict};
use crate::error::EnvError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// Version of this JSON layout; bumped when a field changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

/// Everything `rosetta env` found.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EnvReport {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// The GPUs present.
    pub gpus: Vec<Gpu>,
    /// Where the GPU facts came from (`nvidia-smi`), if anywhere.
    pub gpu_source: Option<String>,
    /// The architectures every library is judged against: the GPUs present,
    /// then those named with `--gpu`.
    pub targets: Vec<Target>,
    /// The Python environment inspected, if any.
    pub python: Option<PythonInfo>,
    /// Every installed distribution, in `sys.path` order.
    pub packages: Vec<Package>,
    /// The torch build, if torch is installed.
    pub torch: Option<TorchBuild>,
    /// Every shared library that carries CUDA code.
    pub libraries: Vec<Library>,
    /// What a user should know before launching, worst first.
    pub problems: Vec<Problem>,
    /// What could not be read or probed, one line each.
    pub notes: Vec<String>,
    /// Figures about the scan itself.
    pub scan: ScanStats,
}

/// One GPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Gpu {
    /// Index as the driver numbers it.
    pub index: Option<u32>,
    /// Product name: `NVIDIA H200`.
    pub name: String,
    /// Compute capability: `9.0`.
    pub compute_capability: String,
    /// Driver version: `580.159.04`.
    pub driver: Option<String>,
    /// The highest CUDA version the driver supports: `13.0`.
    pub cuda_driver_version: Option<String>,
    /// Total memory in MiB.
    pub memory_mib: Option<u64>,
}

impl Gpu {
    /// The arch key, `sm_90`, if the compute capability parses.
    pub fn arch(&self) -> Option<String> {
        ComputeCapability::parse(&self.compute_capability).map(|c| c.arch())
    }
}

/// An architecture libraries are judged against.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Target {
    /// `sm_90`.
    pub arch: String,
    /// `present` (a GPU in this machine) or `named` (`--gpu`).
    pub source: TargetSource,
    /// The GPU's name, when known.
    pub name: Option<String>,
}

/// Why an architecture is a target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetSource {
    /// A GPU of this machine.
    #[default]
    Present,
    /// Named on the command line.
    Named,
}

/// The Python environment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct PythonInfo {
    /// The interpreter asked, if one was.
    pub executable: Option<String>,
    /// Its version: `3.12.3`.
    pub version: Option<String>,
    /// The site-packages folders read, in import order.
    pub site_packages: Vec<String>,
}

/// One installed distribution.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Package {
    /// Its name as its METADATA spells it.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// What `torch/version.py` says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TorchBuild {
    /// `2.11.0+cu130`.
    pub version: String,
    /// The CUDA it was built with (`13.0`), `None` for CPU and ROCm builds.
    pub cuda: Option<String>,
    /// The ROCm/HIP version of a ROCm build.
    pub hip: Option<String>,
    /// The file read.
    pub path: String,
}

/// A shared library that carries CUDA code.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Library {
    /// Absolute path.
    pub path: String,
    /// The distribution that installed it (from the RECORD files), if known.
    pub package: Option<String>,
    /// SASS archs in `.nv_fatbin`, each once: `sm_80`, `sm_90a`, `sm_100f`.
    pub sass: Vec<String>,
    /// PTX targets in `.nv_fatbin`, each once: `compute_100a`.
    pub ptx: Vec<String>,
    /// The PTX ISA version of each PTX target (the highest seen): `{"compute_100a": "9.0"}`.
    pub ptx_isa: BTreeMap<String, String>,
    /// LTO-IR targets (need a device link; not loadable as is).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lto_ir: Vec<String>,
    /// Cubins per SASS arch, as `cuobjdump --list-elf` counts them
    /// (nvcc-linked libraries list each arch twice).
    pub sass_counts: BTreeMap<String, u64>,
    /// PTX entries per target, as `cuobjdump --list-ptx` counts them.
    pub ptx_counts: BTreeMap<String, u64>,
    /// Fat binary containers (registered modules) in `.nv_fatbin`.
    pub modules: u64,
    /// The distinct code sets of those modules and how many modules have each.
    pub module_sets: Vec<ModuleSet>,
    /// The verdict per target arch: `{"sm_90": "sass"}`.
    pub targets: BTreeMap<String, Verdict>,
    /// Per target arch, how many modules (fat binary containers) have no code
    /// for it although the library as a whole has. Their kernels would fail
    /// there if launched; often they are never launched there (torch's
    /// sm_100a-only modules on an H100) or hold no kernels at all (nvcc 13's
    /// device-link module carries SASS but no PTX), so this is a fact, not a
    /// problem.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub modules_without_code: BTreeMap<String, u64>,
    /// Relocatable device code (`__nv_relfatbin`): pre-link copies the
    /// runtime does not load; not part of the verdicts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relocatable: Option<CodeSummary>,
    /// Code embedded outside the fat binary sections: containers or raw
    /// cubins the library loads itself (cuFFT's `.ldata`, CASK's
    /// `.cask_resource`). Part of the verdicts. Looked for only when
    /// `.nv_fatbin` alone has no SASS for some target, since it reads those
    /// sections whole; `cuobjdump` does not list it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedded: Option<CodeSummary>,
    /// How the `.nv_fatbin` payloads are stored.
    pub encodings: EncodingCounts,
    /// Its `.nv_fatbin` holds only cubins without a kernel (a registration
    /// stub, like cuFFTW's) and nothing is embedded elsewhere: it launches no
    /// kernel of its own, so it is not judged (`targets` stays empty).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stub: bool,
    /// Bytes of `.nv_fatbin`.
    pub fatbin_bytes: u64,
    /// Bytes of ROCm code (`.hip_fatbin`), not decoded.
    #[serde(skip_serializing_if = "is_zero")]
    pub hip_fatbin_bytes: u64,
    /// What was odd about this file (truncated section, unknown entries).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Code targets found somewhere else than `.nv_fatbin`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CodeSummary {
    /// SASS archs, each once.
    pub sass: Vec<String>,
    /// PTX targets, each once.
    pub ptx: Vec<String>,
    /// PTX ISA version per PTX target.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub ptx_isa: BTreeMap<String, String>,
    /// Cubins per SASS arch.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub sass_counts: BTreeMap<String, u64>,
    /// Containers (and raw cubins).
    pub modules: u64,
    /// The sections it was found in.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sections: Vec<String>,
}

/// A distinct set of code targets shared by `count` modules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ModuleSet {
    /// SASS archs and PTX targets (`sm_90a`, `compute_90`).
    pub codes: Vec<String>,
    /// How many modules carry exactly this set.
    pub count: u64,
}

/// Entry encodings, counted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct EncodingCounts {
    /// Stored as is.
    pub raw: u64,
    /// LZ4 block.
    pub lz4: u64,
    /// zstd frame.
    pub zstd: u64,
}

/// Something a user should know before launching.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// What kind of problem.
    pub kind: ProblemKind,
    /// How bad.
    pub severity: Severity,
    /// One or two sentences for a person.
    pub message: String,
    /// The target arch concerned (`sm_120`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// The library concerned (absolute path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
    /// The package concerned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
}

/// The kinds of [`Problem`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// A library has no code a target GPU can run.
    NoCodeForGpu,
    /// A library's only code for a GPU is PTX whose ISA the driver is too old for.
    PtxTooNewForDriver,
    /// torch was built for a newer CUDA than the driver supports.
    TorchCudaNewerThanDriver,
    /// A CUDA runtime package is newer than the driver supports.
    CudaRuntimeNewerThanDriver,
    /// torch has no CUDA although an NVIDIA GPU is present.
    TorchWithoutCuda,
    /// A library runs on a GPU only through PTX JIT (slow first launch).
    PtxOnly,
    /// The same distribution is installed twice.
    DuplicatePackage,
    /// Packages built for different CUDA major versions are installed together.
    MixedCudaMajors,
    /// Another kind, written by a newer rosetta.
    #[serde(other)]
    Other,
}

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Severity {
    /// The launch will fail where this code is needed.
    Error,
    /// Likely to hurt; check it.
    Warning,
    /// Good to know.
    Info,
}

/// Figures about the scan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScanStats {
    /// The folders and files scanned.
    pub roots: Vec<String>,
    /// Files named `*.so` / `*.so.*` found.
    pub shared_objects: u64,
    /// Of those, 64-bit little-endian ELF files.
    pub elf_files: u64,
    /// Libraries with CUDA code.
    pub libraries: u64,
    /// Fat binary containers read.
    pub containers: u64,
    /// Fat binary entries read.
    pub entries: u64,
    /// Bytes of `.nv_fatbin` in all libraries.
    pub fatbin_bytes: u64,
    /// Wall time of the whole probe, in milliseconds.
    pub elapsed_ms: u64,
}

impl EnvReport {
    /// Loads a report written by `rosetta env --format json`.
    pub fn from_json_file(path: &Path) -> Result<EnvReport, EnvError> {
        let text = std::fs::read_to_string(path).map_err(|source| EnvError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| EnvError::Json {
            path: path.to_path_buf(),
            source,
        })
    }

    /// The archs of the GPUs present, each once, in GPU order: `["sm_90"]`.
    pub fn gpu_archs(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for a in self.gpus.iter().filter_map(Gpu::arch) {
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }

    /// Every arch judged: the GPUs present, then those named with `--gpu`.
    pub fn target_archs(&self) -> Vec<String> {
        self.targets.iter().map(|t| t.arch.clone()).collect()
    }

    /// The highest CUDA version the driver supports, if a GPU was probed.
    pub fn driver_cuda(&self) -> Option<CudaVersion> {
        self.gpus.iter().find_map(|g| {
            g.cuda_driver_version
                .as_deref()
                .and_then(CudaVersion::parse)
        })
    }

    /// The libraries with no code `arch` can run (`sm_120`, `12.0`). Uses the
    /// stored verdict when `arch` was a target, else judges from the library's
    /// archs, so any arch named in a log can be asked about.
    pub fn libraries_without_code_for(&self, arch: &str) -> Vec<&Library> {
        let driver = self.driver_cuda();
        self.libraries
            .iter()
            .filter(|l| l.verdict_for(arch, driver) == Some(Verdict::None))
            .collect()
    }

    /// The installed distribution called `name` (compared as PEP 503 names).
    pub fn package(&self, name: &str) -> Option<&Package> {
        let want = normalize_name(name);
        self.packages
            .iter()
            .find(|p| normalize_name(&p.name) == want)
    }

    /// The problems of one kind.
    pub fn problems_of(&self, kind: ProblemKind) -> Vec<&Problem> {
        self.problems.iter().filter(|p| p.kind == kind).collect()
    }

    /// Judges every library against every target and lists the problems.
    /// Called once after probing; idempotent.
    pub fn judge(&mut self) {
        let driver = self.driver_cuda();
        let archs: Vec<(String, ComputeCapability)> = self
            .targets
            .iter()
            .filter_map(|t| ComputeCapability::parse(&t.arch).map(|c| (t.arch.clone(), c)))
            .collect();
        for lib in &mut self.libraries {
            lib.targets.clear();
            lib.modules_without_code.clear();
            if lib.stub {
                continue;
            }
            for (key, cc) in &archs {
                let v = lib.judge(*cc, driver);
                lib.targets.insert(key.clone(), v);
                if v != Verdict::None {
                    let n = lib.modules_without(*cc, driver);
                    if n > 0 {
                        lib.modules_without_code.insert(key.clone(), n);
                    }
                }
            }
        }
        self.problems = crate::problems::find(self, driver);
    }
}

impl Library {
    /// The file name: `libtorch_cuda.so`.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }

    /// The verdict for `arch` (`sm_120`, `12.0`): the stored one if judged,
    /// else computed; `None` if `arch` does not parse or the library is a
    /// kernel-free [`stub`](Library::stub).
    pub fn verdict_for(&self, arch: &str, driver: Option<CudaVersion>) -> Option<Verdict> {
        let cc = ComputeCapability::parse(arch)?;
        if self.stub {
            return None;
        }
        if let Some(v) = self.targets.get(&cc.arch()) {
            return Some(*v);
        }
        Some(self.judge(cc, driver))
    }

    /// Judges this library's code (`.nv_fatbin` and embedded) against one GPU.
    pub fn judge(&self, gpu: ComputeCapability, driver: Option<CudaVersion>) -> Verdict {
        let (mut sass, mut ptx) =
            code_targets(self.sass.iter().chain(self.ptx.iter()), &self.ptx_isa);
        if let Some(e) = &self.embedded {
            let (s, p) = code_targets(e.sass.iter().chain(e.ptx.iter()), &e.ptx_isa);
            sass.extend(s);
            ptx.extend(p);
        }
        judge(&sass, &ptx, gpu, driver)
    }

    /// How many modules have no code for `gpu`.
    pub fn modules_without(&self, gpu: ComputeCapability, driver: Option<CudaVersion>) -> u64 {
        self.module_sets
            .iter()
            .filter(|m| {
                let (sass, ptx) = code_targets(m.codes.iter(), &self.ptx_isa);
                judge(&sass, &ptx, gpu, driver) == Verdict::None
            })
            .map(|m| m.count)
            .sum()
    }

    /// Its SASS archs and PTX targets, comma-separated, for messages
    /// ("it carries sm_90a, sm_100a"); embedded code after a semicolon.
    pub fn archs_summary(&self) -> String {
        let mut all: Vec<&str> = self.sass.iter().map(String::as_str).collect();
        all.extend(self.ptx.iter().map(String::as_str));
        let mut text = if all.is_empty() {
            "no loadable code".to_string()
        } else {
            all.join(", ")
        };
        if let Some(e) = self.embedded.as_ref().filter(|e| e.modules > 0) {
            let mut more: Vec<&str> = e.sass.iter().map(String::as_str).collect();
            more.extend(e.ptx.iter().map(String::as_str));
            text.push_str(&format!(
                "; embedded in {}: {}",
                e.sections.join(", "),
                more.join(", ")
            ));
        }
        text
    }
}

/// SASS and PTX targets from labels (`sm_90a`, `compute_90`); PTX ISA
/// versions from `isa`.
fn code_targets<'a>(
    labels: impl Iterator<Item = &'a String>,
    isa: &BTreeMap<String, String>,
) -> (Vec<CodeTarget>, Vec<PtxCode>) {
    let mut sass = Vec::new();
    let mut ptx = Vec::new();
    for l in labels {
        let Some(t) = CodeTarget::parse(l) else {
            continue;
        };
        if l.starts_with("sm_") {
            sass.push(t);
        } else {
            let isa = isa.get(l).and_then(|v| {
                let (a, b) = v.split_once('.')?;
                Some((a.parse().ok()?, b.parse().ok()?))
            });
            ptx.push(PtxCode { target: t, isa });
        }
    }
    (sass, ptx)
}

/// Package names compare as the schema normalises them (PEP 503).
pub use rosetta_schema::normalize_name;

/// Builds a [`Library`]'s code fields from a fat binary walk.
pub(crate) fn fill_codes(lib: &mut Library, scan: &crate::fatbin::FatbinScan) {
    count_codes(lib, scan);
    lib.modules = scan.containers;
    lib.module_sets = module_sets(scan);
    lib.encodings = EncodingCounts {
        raw: scan.encodings.raw,
        lz4: scan.encodings.lz4,
        zstd: scan.encodings.zstd,
    };
}

/// The label of a code target of a kind (`sm_90a`, `compute_90`).
fn target_label(kind: CodeKind, (sm, variant): (u32, crate::arch::Variant)) -> String {
    CodeTarget {
        cc: ComputeCapability::from_sm(sm),
        variant,
    }
    .label(kind)
}

/// The SASS, PTX (with counts and newest ISA) and LTO-IR targets of the walk, and a note
/// per entry kind not known.
fn count_codes(lib: &mut Library, scan: &crate::fatbin::FatbinScan) {
    use crate::fatbin::EntryKind;
    let mut sass: BTreeSet<(u32, crate::arch::Variant)> = BTreeSet::new();
    let mut ptx: BTreeSet<(u32, crate::arch::Variant)> = BTreeSet::new();
    let mut lto: BTreeSet<(u32, crate::arch::Variant)> = BTreeSet::new();
    let mut other: BTreeMap<u16, u64> = BTreeMap::new();
    for (code, n) in &scan.codes {
        let target = CodeTarget {
            cc: ComputeCapability::from_sm(code.sm),
            variant: code.variant,
        };
        match code.kind {
            EntryKind::Sass => {
                sass.insert((code.sm, code.variant));
                *lib.sass_counts
                    .entry(target.label(CodeKind::Sass))
                    .or_insert(0) += n;
            }
            EntryKind::Ptx => {
                ptx.insert((code.sm, code.variant));
                let label = target.label(CodeKind::Ptx);
                *lib.ptx_counts.entry(label.clone()).or_insert(0) += n;
                if let Some((a, b)) = code.isa {
                    let isa = format!("{a}.{b}");
                    let e = lib.ptx_isa.entry(label).or_insert_with(|| isa.clone());
                    if isa_key(&isa) > isa_key(e) {
                        *e = isa;
                    }
                }
            }
            EntryKind::LtoIr => {
                lto.insert((code.sm, code.variant));
            }
            EntryKind::Other(k) => *other.entry(k).or_insert(0) += n,
        }
    }
    lib.sass = sass
        .into_iter()
        .map(|k| target_label(CodeKind::Sass, k))
        .collect();
    lib.ptx = ptx
        .into_iter()
        .map(|k| target_label(CodeKind::Ptx, k))
        .collect();
    lib.lto_ir = lto
        .into_iter()
        .map(|k| target_label(CodeKind::Sass, k).replacen("sm_", "lto_", 1))
        .collect();
    for (k, n) in other {
        lib.notes
            .push(format!("{n} fat binary entries of unknown kind {k}"));
    }
}

/// The walk's module code sets as labels, merged where they differ only in ISA versions
/// or non-loadable entries, most common first.
fn module_sets(scan: &crate::fatbin::FatbinScan) -> Vec<ModuleSet> {
    use crate::fatbin::EntryKind;
    let mut sets: Vec<ModuleSet> = scan
        .modules
        .iter()
        .map(|(codes, count)| {
            let mut labels: Vec<String> = Vec::new();
            for c in codes {
                let l = match c.kind {
                    EntryKind::Sass => target_label(CodeKind::Sass, (c.sm, c.variant)),
                    EntryKind::Ptx => target_label(CodeKind::Ptx, (c.sm, c.variant)),
                    _ => continue,
                };
                if !labels.contains(&l) {
                    labels.push(l);
                }
            }
            ModuleSet {
                codes: labels,
                count: *count,
            }
        })
        .collect();
    // Merge sets that differ only in ISA versions or non-loadable entries.
    let mut merged: HashMap<Vec<String>, u64> = HashMap::new();
    for s in sets.drain(..) {
        *merged.entry(s.codes).or_insert(0) += s.count;
    }
    let mut sets: Vec<ModuleSet> = merged
        .into_iter()
        .map(|(codes, count)| ModuleSet { codes, count })
        .collect();
    sets.sort_by(|a, b| b.count.cmp(&a.count).then(a.codes.cmp(&b.codes)));
    sets
}

fn isa_key(v: &str) -> (u32, u32) {
    let (a, b) = v.split_once('.').unwrap_or((v, "0"));
    (a.parse().unwrap_or(0), b.parse().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(sass: &[&str], ptx: &[(&str, &str)]) -> Library {
        Library {
            path: "/x/libk.so".into(),
            sass: sass.iter().map(|s| s.to_string()).collect(),
            ptx: ptx.iter().map(|p| p.0.to_string()).collect(),
            ptx_isa: ptx
                .iter()
                .map(|p| (p.0.to_string(), p.1.to_string()))
                .collect(),
            ..Library::default()
        }
    }

    #[test]
    fn verdicts_from_archs() {
        let l = lib(&["sm_80", "sm_90a", "sm_100a"], &[("compute_100a", "9.0")]);
        assert_eq!(l.verdict_for("sm_90", None), Some(Verdict::Sass));
        assert_eq!(l.verdict_for("sm_100", None), Some(Verdict::Sass));
        assert_eq!(l.verdict_for("sm_120", None), Some(Verdict::None));
        assert_eq!(l.verdict_for("8.6", None), Some(Verdict::Sass));
        assert_eq!(l.verdict_for("H200", None), None);
        let l = lib(&["sm_90"], &[("compute_90", "9.0")]);
        assert_eq!(l.verdict_for("sm_120", None), Some(Verdict::PtxJit));
    }

    #[test]
    fn helpers_and_round_trip() {
        let mut r = EnvReport {
            schema_version: SCHEMA_VERSION,
            gpus: vec![Gpu {
                index: Some(0),
                name: "NVIDIA H200".into(),
                compute_capability: "9.0".into(),
                driver: Some("580.159.04".into()),
                cuda_driver_version: Some("13.0".into()),
                memory_mib: Some(143771),
            }],
            targets: vec![
                Target {
                    arch: "sm_90".into(),
                    source: TargetSource::Present,
                    name: None,
                },
                Target {
                    arch: "sm_120".into(),
                    source: TargetSource::Named,
                    name: None,
                },
            ],
            libraries: vec![lib(
                &["sm_80", "sm_90a", "sm_100a"],
                &[("compute_100a", "9.0")],
            )],
            packages: vec![Package {
                name: "Flash_Attn".into(),
                version: "3.0".into(),
            }],
            ..EnvReport::default()
        };
        r.judge();
        assert_eq!(r.gpu_archs(), vec!["sm_90"]);
        assert_eq!(r.target_archs(), vec!["sm_90", "sm_120"]);
        assert_eq!(r.libraries[0].targets["sm_120"], Verdict::None);
        assert_eq!(r.libraries_without_code_for("sm_120").len(), 1);
        assert_eq!(r.libraries_without_code_for("sm_90").len(), 0);
        // Not a target: judged on the fly.
        assert_eq!(r.libraries_without_code_for("sm_75").len(), 1);
        assert!(r.package("flash-attn").is_some());
        assert_eq!(r.problems_of(ProblemKind::NoCodeForGpu).len(), 1);
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""sm_120":"none""#));
        let back: EnvReport = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        // Tolerant of missing and unknown fields.
        let min: EnvReport = serde_json::from_str(
            r#"{"gpus":[{"name":"x","compute_capability":"12.0"}],"future":1,
               "problems":[{"kind":"something-new","severity":"info","message":"m"}]}"#,
        )
        .unwrap();
        assert_eq!(min.gpu_archs(), vec!["sm_120"]);
        assert_eq!(min.problems[0].kind, ProblemKind::Other);
    }
}
