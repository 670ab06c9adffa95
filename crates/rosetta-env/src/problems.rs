//! Turns a judged [`EnvReport`] into the problems a user should know about
//! before launching: libraries with no code for a GPU, PTX the driver cannot
//! compile, PTX-only libraries, torch or CUDA runtime newer than the driver,
//! CPU-only torch on a GPU machine, duplicate and mixed-CUDA installs.
//!
//! Reads only the report; it neither probes nor renders.

use crate::arch::{ComputeCapability, CudaVersion, Verdict};
use crate::report::{
    normalize_name, EnvReport, Library, Problem, ProblemKind, Severity, Target, TargetSource,
};
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(crate) fn find(r: &EnvReport, driver: Option<CudaVersion>) -> Vec<Problem> {
    let mut out = Vec::new();
    coverage(r, driver, &mut out);
    torch(r, driver, &mut out);
    runtimes(r, driver, &mut out);
    duplicates(r, &mut out);
    mixed_majors(r, &mut out);
    out.sort_by_key(|p| (p.severity, p.kind));
    out
}

fn who(lib: &Library) -> String {
    match &lib.package {
        Some(p) => format!("{p}: {}", lib.file_name()),
        None => lib.path.clone(),
    }
}

/// Libraries that are per-arch or per-CUDA variants of each other (sgl-kernel's
/// `sm90/` and `sm100/` folders, bitsandbytes' `libbitsandbytes_cuda128.so`):
/// the package loads the one that fits, so a variant without code for a GPU
/// is a problem only when no sibling has code for it.
fn variant_key(path: &str) -> Option<String> {
    let mut changed = false;
    let parts: Vec<String> = path
        .split('/')
        .map(|part| {
            let is_sm_dir = part
                .strip_prefix("sm")
                .map(|d| d.trim_end_matches(['a', 'f']))
                .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
            if is_sm_dir {
                changed = true;
                return "sm*".to_string();
            }
            let (p, c) = mask_cuda_tokens(part);
            changed |= c;
            p
        })
        .collect();
    changed.then(|| parts.join("/"))
}

/// Replaces `cuda128` / `cu128` / `rocm62` tokens in a file name by `*`.
fn mask_cuda_tokens(name: &str) -> (String, bool) {
    let mut out = String::new();
    let mut changed = false;
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let rest = &name[i..];
        let at_word = i == 0 || !b[i - 1].is_ascii_alphabetic();
        let prefix = ["cuda", "rocm", "cu"]
            .into_iter()
            .find(|p| at_word && rest.starts_with(p));
        if let Some(p) = prefix {
            let digits = rest[p.len()..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            if digits >= 2 {
                out.push('*');
                i += p.len() + digits;
                changed = true;
                continue;
            }
        }
        let ch = rest.chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    (out, changed)
}

/// Problems of each library on each target: PTX only on a GPU present, PTX too new for
/// the driver, or no code at all (unless a variant sibling covers the target).
fn coverage(r: &EnvReport, driver: Option<CudaVersion>, out: &mut Vec<Problem>) {
    let groups = variant_groups(r);
    for t in &r.targets {
        let Some(cc) = ComputeCapability::parse(&t.arch) else {
            continue;
        };
        let gpu_words = gpu_words(t);
        for lib in &r.libraries {
            let verdict = lib.targets.get(&t.arch).copied().unwrap_or(Verdict::Sass);
            match verdict {
                Verdict::Sass => {}
                Verdict::PtxJit => {
                    if t.source == TargetSource::Present {
                        out.push(Problem {
                            kind: ProblemKind::PtxOnly,
                            severity: Severity::Info,
                            message: format!(
                                "{} runs on {gpu_words} only through PTX JIT ({}): the first launch compiles its kernels, minutes for a large library (cached in ~/.nv/ComputeCache)",
                                who(lib),
                                lib.ptx.join(", ")
                            ),
                            gpu: Some(t.arch.clone()),
                            library: Some(lib.path.clone()),
                            package: lib.package.clone(),
                        });
                    }
                }
                Verdict::None => {
                    if lib.sass.is_empty() && lib.ptx.is_empty() {
                        continue; // only relocatable / ROCm / LTO code: nothing the runtime loads
                    }
                    if sibling_covers(r, &groups, lib, &t.arch) {
                        continue;
                    }
                    out.push(no_code(lib, t, cc, &gpu_words, driver));
                }
            }
        }
    }
}

/// The libraries (by index) of each variant group (see [`variant_key`]).
fn variant_groups(r: &EnvReport) -> HashMap<String, Vec<usize>> {
    let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, lib) in r.libraries.iter().enumerate() {
        if let Some(k) = variant_key(&lib.path) {
            groups.entry(k).or_default().push(i);
        }
    }
    groups
}

/// A target in words: its arch, its GPU's name, and whether it was named with `--gpu`.
fn gpu_words(t: &Target) -> String {
    match (&t.source, &t.name) {
        (TargetSource::Present, Some(n)) => format!("{} ({n})", t.arch),
        (TargetSource::Present, None) => t.arch.clone(),
        (TargetSource::Named, Some(n)) => format!("{} ({n}, named with --gpu)", t.arch),
        (TargetSource::Named, None) => format!("{} (named with --gpu)", t.arch),
    }
}

/// Whether a variant of `lib` (same group) has code for `arch`.
fn sibling_covers(
    r: &EnvReport,
    groups: &HashMap<String, Vec<usize>>,
    lib: &Library,
    arch: &str,
) -> bool {
    variant_key(&lib.path)
        .and_then(|k| groups.get(&k))
        .is_some_and(|g| {
            g.iter().any(|&j| {
                r.libraries[j]
                    .targets
                    .get(arch)
                    .copied()
                    .unwrap_or(Verdict::None)
                    != Verdict::None
            })
        })
}

/// The problem of a library with no code the target runs: its PTX needs a newer driver
/// (when a driver is known and PTX would compile but for its ISA), else no code at all.
fn no_code(
    lib: &Library,
    t: &Target,
    cc: ComputeCapability,
    gpu_words: &str,
    driver: Option<CudaVersion>,
) -> Problem {
    // PTX that would compile but for its ISA version?
    let too_new: Vec<(String, String)> = lib
        .ptx
        .iter()
        .filter_map(|p| {
            let target = crate::arch::CodeTarget::parse(p)?;
            if !target.ptx_compiles_for(cc) {
                return None;
            }
            Some((p.clone(), lib.ptx_isa.get(p)?.clone()))
        })
        .collect();
    if let (false, Some(d)) = (too_new.is_empty(), driver) {
        let (p, isa) = &too_new[0];
        let need = isa.split_once('.').and_then(|(a, b)| {
            Some(CudaVersion::first_for_ptx_isa(
                a.parse().ok()?,
                b.parse().ok()?,
            ))
        });
        let need = need
            .map(|v| v.to_string())
            .unwrap_or_else(|| "a newer".into());
        return Problem {
            kind: ProblemKind::PtxTooNewForDriver,
            severity: Severity::Error,
            message: format!(
                "{} has for {gpu_words} only PTX {p} of ISA {isa}, which needs a CUDA {need} driver; this driver supports CUDA {d} (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)",
                who(lib)
            ),
            gpu: Some(t.arch.clone()),
            library: Some(lib.path.clone()),
            package: lib.package.clone(),
        };
    }
    Problem {
        kind: ProblemKind::NoCodeForGpu,
        severity: Severity::Error,
        message: format!(
            "{} has no code for {gpu_words}: it carries {} (kernels from it fail with 'no kernel image is available')",
            who(lib),
            lib.archs_summary()
        ),
        gpu: Some(t.arch.clone()),
        library: Some(lib.path.clone()),
        package: lib.package.clone(),
    }
}

/// Compares a build's CUDA version with the driver's.
fn newer_than_driver(
    what: &str,
    built: CudaVersion,
    driver: CudaVersion,
    kind: ProblemKind,
    package: Option<String>,
) -> Option<Problem> {
    if built <= driver {
        return None;
    }
    let (severity, consequence) = if built.major > driver.major {
        (
            Severity::Error,
            "CUDA cannot initialise ('CUDA driver version is insufficient for CUDA runtime version'); install a driver for CUDA {built} or a build for CUDA {driver}",
        )
    } else {
        (
            Severity::Warning,
            "it runs through CUDA minor-version compatibility, but PTX it JIT-compiles and some newer APIs need a driver for CUDA {built}",
        )
    };
    let consequence = consequence
        .replace("{built}", &built.to_string())
        .replace("{driver}", &driver.to_string());
    Some(Problem {
        kind,
        severity,
        message: format!(
            "{what} is built for CUDA {built}; the driver supports up to CUDA {driver}: {consequence}"
        ),
        gpu: None,
        library: None,
        package,
    })
}

fn torch(r: &EnvReport, driver: Option<CudaVersion>, out: &mut Vec<Problem>) {
    let Some(t) = &r.torch else {
        return;
    };
    match (&t.cuda, &t.hip) {
        (Some(c), _) => {
            if let (Some(built), Some(d)) = (CudaVersion::parse(c), driver) {
                out.extend(newer_than_driver(
                    &format!("torch {}", t.version),
                    built,
                    d,
                    ProblemKind::TorchCudaNewerThanDriver,
                    Some("torch".into()),
                ));
            }
        }
        (None, hip) if !r.gpus.is_empty() => {
            let what = match hip {
                Some(h) => format!("a ROCm {h} build"),
                None => "a CPU-only build".to_string(),
            };
            out.push(Problem {
                kind: ProblemKind::TorchWithoutCuda,
                severity: Severity::Error,
                message: format!(
                    "torch {} is {what}: it will not use the {} NVIDIA GPU(s) here (torch.cuda.is_available() is False)",
                    t.version,
                    r.gpus.len()
                ),
                gpu: None,
                library: None,
                package: Some("torch".into()),
            });
        }
        _ => {}
    }
}

fn runtimes(r: &EnvReport, driver: Option<CudaVersion>, out: &mut Vec<Problem>) {
    let Some(d) = driver else {
        return;
    };
    for p in &r.packages {
        if !normalize_name(&p.name).starts_with("nvidia-cuda-runtime") {
            continue;
        }
        if let Some(v) = CudaVersion::parse(&p.version) {
            out.extend(newer_than_driver(
                &format!("{} {}", p.name, p.version),
                v,
                d,
                ProblemKind::CudaRuntimeNewerThanDriver,
                Some(p.name.clone()),
            ));
        }
    }
}

fn duplicates(r: &EnvReport, out: &mut Vec<Problem>) {
    let mut seen: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for p in &r.packages {
        seen.entry(normalize_name(&p.name))
            .or_default()
            .push(&p.version);
    }
    for (name, versions) in seen {
        if versions.len() > 1 {
            out.push(Problem {
                kind: ProblemKind::DuplicatePackage,
                severity: Severity::Warning,
                message: format!(
                    "{name} is installed {} times ({}): Python imports the first on sys.path, tools may read another's metadata",
                    versions.len(),
                    versions.join(", ")
                ),
                gpu: None,
                library: None,
                package: Some(name),
            });
        }
    }
}

/// The CUDA major a distribution is built for, from its name
/// (`nvidia-cublas-cu12`, `cupy-cuda13x`, `jax-cuda12-plugin`) or a local
/// version (`2.11.0+cu130`).
fn cuda_major(name: &str, version: &str) -> Option<u32> {
    let n = normalize_name(name);
    for part in n.split('-') {
        let digits = part
            .strip_prefix("cuda")
            .or_else(|| part.strip_prefix("cu"))
            .map(|d| d.trim_end_matches('x'));
        if let Some(d) = digits {
            if (2..=3).contains(&d.len()) && d.chars().all(|c| c.is_ascii_digit()) {
                return d[..2].parse().ok();
            }
        }
    }
    let local = version.split_once('+')?.1;
    let d = local.strip_prefix("cu")?;
    if d.len() >= 3 && d.chars().all(|c| c.is_ascii_digit()) {
        return d[..d.len() - 1].parse().ok();
    }
    None
}

fn mixed_majors(r: &EnvReport, out: &mut Vec<Problem>) {
    let mut by_major: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    for p in &r.packages {
        if let Some(m) = cuda_major(&p.name, &p.version) {
            by_major.entry(m).or_default().insert(p.name.clone());
        }
    }
    if by_major.len() < 2 {
        return;
    }
    let parts: Vec<String> = by_major
        .iter()
        .map(|(m, names)| {
            let list: Vec<&str> = names.iter().map(String::as_str).take(4).collect();
            let more = if names.len() > 4 {
                format!(", +{}", names.len() - 4)
            } else {
                String::new()
            };
            format!("CUDA {m} ({}{more})", list.join(", "))
        })
        .collect();
    out.push(Problem {
        kind: ProblemKind::MixedCudaMajors,
        severity: Severity::Info,
        message: format!(
            "packages for different CUDA major versions are installed together: {}; a library may load the other's runtime ('libcudart.so.12: cannot open shared object file', undefined symbols)",
            parts.join(" and ")
        ),
        gpu: None,
        library: None,
        package: None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variant_keys() {
        assert_eq!(
            variant_key("/s/sgl_kernel/sm90/common_ops.abi3.so"),
            variant_key("/s/sgl_kernel/sm100/common_ops.abi3.so")
        );
        assert!(variant_key("/s/sgl_kernel/sm90/common_ops.abi3.so").is_some());
        assert_eq!(
            variant_key("/s/bitsandbytes/libbitsandbytes_cuda128.so"),
            variant_key("/s/bitsandbytes/libbitsandbytes_cuda130.so")
        );
        assert_eq!(variant_key("/s/torch/lib/libtorch_cuda.so"), None);
        assert_eq!(variant_key("/s/smart/libx.so"), None);
        assert!(!mask_cuda_tokens("libcudart.so.13").1);
    }

    #[test]
    fn cuda_majors() {
        assert_eq!(cuda_major("nvidia-cublas-cu12", "12.8.4.1"), Some(12));
        assert_eq!(cuda_major("nvidia_nccl_cu13", "2.28"), Some(13));
        assert_eq!(cuda_major("cupy-cuda13x", "14.2.0"), Some(13));
        assert_eq!(cuda_major("jax-cuda12-plugin", "0.6"), Some(12));
        assert_eq!(cuda_major("torch", "2.11.0+cu130"), Some(13));
        assert_eq!(cuda_major("torch", "2.9.0+cu126"), Some(12));
        assert_eq!(cuda_major("torch", "2.11.0"), None);
        assert_eq!(cuda_major("nvidia-cublas", "13.0.2"), None);
        assert_eq!(cuda_major("cucumber", "1.0"), None);
    }
}
