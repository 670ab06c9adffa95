//! Probes of the machine for `rosetta env`: the GPUs, the Python environment
//! and, for every shared library in it that carries CUDA code, which GPU
//! architectures it can run on; and the report `rosetta diagnose --env`
//! reads back. (Model configs are another module's.)
//!
//! Probes return facts; they never print and never fail the whole run when a
//! part of the machine cannot be read: that becomes a note. Only input the
//! user named (a `--scan` path, a `--python` interpreter, a report file) is
//! an error when unreadable.
//!
//! # For `diagnose --env`
//!
//! ```no_run
//! use rosetta_env::EnvReport;
//! let env = EnvReport::from_json_file("env.json".as_ref())?;   // EnvError names the file
//! for arch in env.gpu_archs() {                                // ["sm_120"]: GPUs present
//!     for lib in env.libraries_without_code_for(&arch) {       // verdict `none` there
//!         println!("{} ({:?}) has only {}", lib.path, lib.package, lib.archs_summary());
//!     }
//! }
//! # Ok::<(), rosetta_env::EnvError>(())
//! ```
//!
//! - [`EnvReport`] is the JSON contract: `gpus[] {name, compute_capability,
//!   driver, cuda_driver_version, memory_mib}`, `packages[] {name, version}`,
//!   `libraries[] {path, package, sass[], ptx[], targets {"sm_90": "sass" |
//!   "ptx-jit" | "none"}, sass_counts, ...}`, `problems[] {kind, severity,
//!   message, gpu, library, package}`, plus `targets`, `python`, `torch`,
//!   `notes`, `scan`. Unknown fields are ignored and missing ones default, so
//!   reports of other rosetta versions load.
//! - [`EnvReport::gpu_archs`]: archs of the GPUs present (`sm_90`), each once;
//!   [`EnvReport::target_archs`] adds those named with `--gpu`.
//! - [`EnvReport::libraries_without_code_for`]: libraries whose verdict for an
//!   arch is `none`; an arch that was not a target is judged on the fly from
//!   the library's archs, so an arch read from a log works too.
//! - [`Library::verdict_for`], [`EnvReport::driver_cuda`],
//!   [`EnvReport::package`], [`EnvReport::problems_of`] (e.g.
//!   [`ProblemKind::TorchCudaNewerThanDriver`]), `env.torch` (torch's CUDA).
#![warn(missing_docs)]

pub mod arch;
mod command;
pub mod elf;
mod error;
pub mod fatbin;
pub mod gpu;
pub mod model_config;
mod par;
mod problems;
pub mod python;
pub mod render;
mod report;
pub mod scan;
pub mod source;

pub use arch::{ComputeCapability, CudaVersion, Verdict};
pub use error::{ElfError, EnvError};
pub use report::{
    normalize_name, CodeSummary, EncodingCounts, EnvReport, Gpu, Library, ModuleSet, Package,
    Problem, ProblemKind, PythonInfo, ScanStats, Severity, Target, TargetSource, TorchBuild,
    SCHEMA_VERSION,
};

use std::path::{Path, PathBuf};
use std::time::Instant;

/// Which Python environment to inspect.
#[derive(Debug, Clone, Default)]
pub enum PythonSource {
    /// The active virtualenv / conda env, else `python3` on `PATH`; none found is a note.
    #[default]
    Auto,
    /// This interpreter (`--python`); an error if it does not answer.
    Interpreter(PathBuf),
    /// This site-packages folder (`--site-packages`), no interpreter.
    SitePackages(PathBuf),
    /// No Python environment (`--scan`).
    Skip,
}

/// How to find the GPUs.
#[derive(Debug, Clone, Default)]
pub enum GpuSource {
    /// Ask `nvidia-smi`.
    #[default]
    Probe,
    /// Do not look (tests, or reading another machine's files).
    Skip,
    /// Use these.
    Given(Vec<Gpu>),
}

/// A GPU arch named on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedGpu {
    /// Its capability.
    pub cc: ComputeCapability,
    /// A product name, when the user gave one (`H200`).
    pub name: Option<String>,
}

/// What to probe.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The Python environment.
    pub python: PythonSource,
    /// Files or folders to scan instead of the Python environment.
    pub scan: Vec<PathBuf>,
    /// The GPUs.
    pub gpus: GpuSource,
    /// Archs to judge against besides the GPUs present.
    pub named: Vec<NamedGpu>,
    /// Worker threads (default: the available parallelism, 4 to 32).
    pub threads: Option<usize>,
    /// Fills a GPU's compute capability from its name when the driver does not
    /// say (old drivers); the binary passes the knowledge base's GPU table.
    pub cc_from_name: Option<fn(&str) -> Option<String>>,
}

/// Probes the machine and judges every library found against every target.
pub fn probe(opts: &Options) -> Result<EnvReport, EnvError> {
    let started = Instant::now();
    let threads = opts.threads.unwrap_or_else(par::default_threads);
    let mut report = EnvReport {
        schema_version: SCHEMA_VERSION,
        ..EnvReport::default()
    };
    std::thread::scope(|s| -> Result<(), EnvError> {
        let gpu_job = match &opts.gpus {
            GpuSource::Probe => Some(s.spawn(gpu::probe)),
            _ => None,
        };
        let sites = python_sites(&opts.python, &mut report)?;
        let owner_sites = record_sites(&sites, &opts.scan);
        let dist_job = s.spawn(move || {
            owner_sites
                .iter()
                .map(|site| (site.clone(), python::read_site(site, threads.min(8))))
                .collect::<Vec<_>>()
        });
        let roots = roots_to_scan(opts, &sites);
        report.scan.roots = roots.iter().map(|r| r.path.display().to_string()).collect();
        let scanned = scan::scan_roots(&roots, threads)?;
        let site_dists = dist_job.join().unwrap_or_default();
        fill_found(&mut report, opts, &sites, &site_dists, scanned);
        match (&opts.gpus, gpu_job) {
            (_, Some(job)) => {
                let g = job.join().unwrap_or_default();
                report.gpus = g.gpus;
                report.gpu_source = g.source;
                report.notes.extend(g.notes);
            }
            (GpuSource::Given(gpus), None) => report.gpus = gpus.clone(),
            _ => {}
        }
        Ok(())
    })?;
    fill_compute_capabilities(&mut report, opts.cc_from_name);
    report.targets = targets(&report.gpus, &opts.named);
    report.judge();
    look_deeper_where_short(&mut report, threads);
    report.scan.elapsed_ms = started.elapsed().as_millis() as u64;
    Ok(report)
}

/// The site-packages folders of the Python environment asked for, with its facts and
/// notes put into the report; an interpreter or folder the user named must answer.
fn python_sites(python: &PythonSource, report: &mut EnvReport) -> Result<Vec<PathBuf>, EnvError> {
    let mut sites: Vec<PathBuf> = Vec::new();
    match python {
        PythonSource::Skip => {}
        PythonSource::SitePackages(dir) => {
            std::fs::read_dir(dir).map_err(|source| EnvError::Read {
                path: dir.clone(),
                source,
            })?;
            sites.push(absolute(dir));
            report.python = Some(PythonInfo {
                executable: None,
                version: None,
                site_packages: vec![absolute(dir).display().to_string()],
            });
        }
        PythonSource::Interpreter(py) => {
            let info = python::ask_interpreter(py)?;
            sites.extend(info.site_packages.iter().map(PathBuf::from));
            report.python = Some(info);
        }
        PythonSource::Auto => match python::default_interpreter() {
            None => report.notes.push(
                "no Python interpreter found (python3 is not on PATH): name one with --python or --site-packages"
                    .into(),
            ),
            Some(py) => match python::ask_interpreter(&py) {
                Ok(info) => {
                    sites.extend(info.site_packages.iter().map(PathBuf::from));
                    report.python = Some(info);
                }
                Err(e) => report.notes.push(format!("failed to {e}")),
            },
        },
    }
    if report
        .python
        .as_ref()
        .is_some_and(|p| p.site_packages.is_empty())
    {
        report
            .notes
            .push("the interpreter lists no site-packages folder".into());
    }
    Ok(sites)
}

/// Folders whose RECORD files tell who owns a scanned file: the environment's, then the
/// site-packages folder above each scanned path.
fn record_sites(sites: &[PathBuf], scan: &[PathBuf]) -> Vec<PathBuf> {
    let mut owner_sites = sites.to_vec();
    for p in scan {
        let abs = absolute(p);
        if let Some(site) = abs.ancestors().find(|a| {
            a.file_name()
                .is_some_and(|n| n == "site-packages" || n == "dist-packages")
        }) {
            if !owner_sites.iter().any(|s| s == site) {
                owner_sites.push(site.to_path_buf());
            }
        }
    }
    owner_sites
}

/// What to scan: the paths given with `--scan` (which must be readable), else the
/// environment's site-packages folders.
fn roots_to_scan(opts: &Options, sites: &[PathBuf]) -> Vec<scan::Root> {
    if opts.scan.is_empty() {
        sites
            .iter()
            .map(|p| scan::Root {
                path: p.clone(),
                explicit: false,
            })
            .collect()
    } else {
        opts.scan
            .iter()
            .map(|p| scan::Root {
                path: absolute(p),
                explicit: true,
            })
            .collect()
    }
}

/// A site-packages folder with its distributions and the notes reading them gave.
type SiteDists = (PathBuf, (Vec<python::Dist>, Vec<String>));

/// Puts what was found into the report: the packages, torch's build, the libraries with
/// their owners, and the scan's figures and notes.
fn fill_found(
    report: &mut EnvReport,
    opts: &Options,
    sites: &[PathBuf],
    site_dists: &[SiteDists],
    scanned: scan::Scanned,
) {
    let mut owners = python::Owners::default();
    for (site, (dists, notes)) in site_dists {
        owners.add_site(site, dists);
        if sites.contains(site) {
            report
                .packages
                .extend(dists.iter().map(|d| d.package.clone()));
            report.notes.extend(notes.iter().cloned());
        }
    }
    let site_strings: Vec<String> = sites.iter().map(|p| p.display().to_string()).collect();
    if opts.scan.is_empty() {
        report.torch = python::torch_build(&site_strings, &report.packages);
    }
    report.libraries = scanned.libraries;
    for lib in &mut report.libraries {
        lib.package = owners.owner(Path::new(&lib.path));
    }
    report.notes.extend(scanned.notes);
    report.scan.shared_objects = scanned.shared_objects;
    report.scan.elf_files = scanned.elf_files;
    report.scan.libraries = report.libraries.len() as u64;
    report.scan.containers = scanned.figures.containers;
    report.scan.entries = scanned.figures.entries;
    report.scan.fatbin_bytes = report.libraries.iter().map(|l| l.fatbin_bytes).sum();
}

/// Fills a GPU's missing compute capability from its name, and notes each GPU still
/// without one.
fn fill_compute_capabilities(
    report: &mut EnvReport,
    cc_from_name: Option<fn(&str) -> Option<String>>,
) {
    if let Some(lookup) = cc_from_name {
        for g in &mut report.gpus {
            if g.compute_capability.is_empty() {
                if let Some(cc) = lookup(&g.name) {
                    g.compute_capability = cc;
                }
            }
        }
    }
    for g in &report.gpus {
        if g.arch().is_none() {
            report.notes.push(format!(
                "GPU {} has no known compute capability: not judged; name its arch with --gpu",
                g.name
            ));
        }
    }
}

/// Before calling a library short of code, look for code it embeds elsewhere (cuFFT
/// keeps its kernels in `.ldata`) and whether its `.nv_fatbin` is a kernel-free stub
/// (cuFFTW), then judge again: this reads whole sections, so only where `.nv_fatbin`
/// alone has no SASS for a target.
fn look_deeper_where_short(report: &mut EnvReport, threads: usize) {
    let short: Vec<usize> = (0..report.libraries.len())
        .filter(|&i| {
            report.libraries[i]
                .targets
                .values()
                .any(|v| *v != Verdict::Sass)
        })
        .collect();
    if !short.is_empty() {
        let paths: Vec<PathBuf> = short
            .iter()
            .map(|&i| PathBuf::from(&report.libraries[i].path))
            .collect();
        let outer = paths.len().min(4);
        let inner = (threads / outer).max(1);
        let found = par::map(&paths, outer, |p| scan::look_deeper(p, inner));
        for (i, d) in short.into_iter().zip(found) {
            report.libraries[i].embedded = d.embedded;
            report.libraries[i].stub = d.stub;
        }
        report.judge();
    }
}

/// The present GPUs' archs (each once), then the named ones not present.
fn targets(gpus: &[Gpu], named: &[NamedGpu]) -> Vec<Target> {
    let mut out: Vec<Target> = Vec::new();
    for g in gpus {
        if let Some(arch) = g.arch() {
            if !out.iter().any(|t| t.arch == arch) {
                out.push(Target {
                    arch,
                    source: TargetSource::Present,
                    name: Some(g.name.clone()),
                });
            }
        }
    }
    for n in named {
        let arch = n.cc.arch();
        if !out.iter().any(|t| t.arch == arch) {
            out.push(Target {
                arch,
                source: TargetSource::Named,
                name: n.name.clone(),
            });
        }
    }
    out
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
