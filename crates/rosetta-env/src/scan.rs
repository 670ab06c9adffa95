//! Finds the shared libraries under the scan roots and reads, for each, which
//! CUDA code it carries: `.nv_fatbin` (what the runtime loads),
//! `__nv_relfatbin` (relocatable device code, reported apart) and the size of
//! `.hip_fatbin` (ROCm, not decoded). Files are read in parallel, largest
//! first, headers only. [`look_deeper`] is the second look, for a library
//! about to be called short of code: code embedded in other sections, and
//! kernel-free stubs.
//!
//! It does not decide who owns a file (`python.rs`) or judge the code
//! (`report.rs`). A malformed file becomes a note; only an explicit root that
//! cannot be read is an error.

use crate::elf::{self, ElfProbe, Section};
use crate::error::EnvError;
use crate::fatbin::{self, FatbinScan};
use crate::report::{CodeSummary, Library};
use crate::source::{FileSource, ReadAt};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The fat binary section the CUDA runtime registers.
pub const NV_FATBIN: &str = ".nv_fatbin";
/// Relocatable (`-rdc`) device code, pre-link.
pub const NV_RELFATBIN: &str = "__nv_relfatbin";
/// ROCm's offload bundle.
pub const HIP_FATBIN: &str = ".hip_fatbin";

/// What one file turned out to hold.
#[derive(Debug)]
pub enum FileOutcome {
    /// Not ELF (a linker script, text).
    NotElf,
    /// ELF this reader does not handle.
    Unsupported(&'static str),
    /// ELF without CUDA code.
    NoCuda,
    /// A library with CUDA code, and the fat binary figures.
    Library(Box<Library>, Figures),
    /// Could not be opened.
    Unreadable(std::io::Error),
    /// Malformed: the note.
    Bad(String),
}

/// Fat binary figures of one file.
#[derive(Debug, Default, Clone, Copy)]
pub struct Figures {
    /// Containers walked (both sections).
    pub containers: u64,
    /// Entries walked.
    pub entries: u64,
}

/// Reads the CUDA code of one file.
pub fn scan_file(path: &Path) -> FileOutcome {
    let src = match FileSource::open(path) {
        Ok(s) => s,
        Err(e) => return FileOutcome::Unreadable(e),
    };
    scan_source(&src, &path.display().to_string())
}

/// Reads the CUDA code of any byte source; `path` names it in the report.
pub fn scan_source(src: &dyn ReadAt, path: &str) -> FileOutcome {
    let sections = match elf::find_sections(src, &[NV_FATBIN, NV_RELFATBIN, HIP_FATBIN]) {
        Ok(ElfProbe::NotElf) => return FileOutcome::NotElf,
        Ok(ElfProbe::Unsupported(why)) => return FileOutcome::Unsupported(why),
        Ok(ElfProbe::Sections(s)) => s,
        Err(e) => return FileOutcome::Bad(format!("{path}: {e}")),
    };
    if sections.is_empty() {
        return FileOutcome::NoCuda;
    }
    let mut lib = Library {
        path: path.to_string(),
        ..Library::default()
    };
    let mut nv = FatbinScan::default();
    let mut rel = FatbinScan::default();
    let mut figures = Figures::default();
    let mut has_nv = false;
    for s in &sections {
        let len = clamp(src, s, &mut lib.notes);
        match s.name.as_str() {
            HIP_FATBIN => lib.hip_fatbin_bytes += len,
            name => {
                if len == 0 {
                    lib.notes.push(format!("section {name} is empty"));
                    continue;
                }
                let walked = fatbin::walk(src, s.offset, len);
                figures.containers += walked.containers;
                figures.entries += walked.entries;
                lib.notes
                    .extend(walked.notes.iter().map(|n| format!("{name}: {n}")));
                if name == NV_FATBIN {
                    has_nv = true;
                    lib.fatbin_bytes += len;
                    merge(&mut nv, walked);
                } else {
                    merge(&mut rel, walked);
                }
            }
        }
    }
    if has_nv {
        crate::report::fill_codes(&mut lib, &nv);
    }
    if rel.containers > 0 {
        lib.relocatable = Some(summary(&rel));
    }
    if !has_nv && lib.relocatable.is_none() && lib.hip_fatbin_bytes == 0 && lib.notes.is_empty() {
        return FileOutcome::NoCuda;
    }
    FileOutcome::Library(Box::new(lib), figures)
}

/// The section's length inside the file, with a note when it is cut short.
fn clamp(src: &dyn ReadAt, s: &Section, notes: &mut Vec<String>) -> u64 {
    let size = src.size();
    let avail = size.saturating_sub(s.offset);
    if s.size > avail {
        notes.push(format!(
            "section {} ({} bytes at {:#x}) runs past the end of the file ({size} bytes): truncated; read what is there",
            s.name, s.size, s.offset
        ));
        avail
    } else {
        s.size
    }
}

fn merge(into: &mut FatbinScan, from: FatbinScan) {
    fatbin::merge_into(into, from);
}

fn summary(scan: &FatbinScan) -> CodeSummary {
    let mut lib = Library::default();
    crate::report::fill_codes(&mut lib, scan);
    CodeSummary {
        sass: lib.sass,
        ptx: lib.ptx,
        ptx_isa: lib.ptx_isa,
        sass_counts: BTreeMap::new(),
        modules: scan.containers,
        sections: Vec::new(),
    }
}

/// Sections where libraries keep device code they load themselves.
pub const EMBEDDED_SECTIONS: &[&str] = &[
    ".rodata",
    ".lrodata",
    ".ldata",
    ".data",
    ".data.rel.ro",
    ".cask_resource",
];

/// What a second, deeper look at a library found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Deeper {
    /// Code embedded outside the fat binary sections.
    pub embedded: Option<CodeSummary>,
    /// Its `.nv_fatbin` holds only cubins without kernels.
    pub stub: bool,
}

/// Looks further at a library whose `.nv_fatbin` has no SASS for some
/// target: fat binary containers and raw cubins embedded outside the fat
/// binary sections (see [`fatbin::find_embedded`]), and whether its
/// `.nv_fatbin` is only a kernel-free stub (see [`fatbin::only_stubs`]).
pub fn look_deeper(path: &Path, threads: usize) -> Deeper {
    let mut out = Deeper::default();
    let Ok(src) = FileSource::open(path) else {
        return out;
    };
    let mut wanted: Vec<&str> = EMBEDDED_SECTIONS.to_vec();
    wanted.push(NV_FATBIN);
    let Ok(ElfProbe::Sections(sections)) = elf::find_sections(&src, &wanted) else {
        return out;
    };
    let mut all = FatbinScan::default();
    let mut found_in = Vec::new();
    let mut ignored = Vec::new();
    let mut stub = false;
    for s in &sections {
        let len = clamp(&src, s, &mut ignored);
        if s.name == NV_FATBIN {
            stub = fatbin::only_stubs(&src, s.offset, len);
            continue;
        }
        let one = fatbin::find_embedded(&src, s.offset, len, threads);
        if one.entries > 0 {
            found_in.push(s.name.clone());
            merge(&mut all, one);
        }
    }
    if all.entries == 0 {
        out.stub = stub;
        return out;
    }
    let mut lib = Library::default();
    crate::report::fill_codes(&mut lib, &all);
    out.embedded = Some(CodeSummary {
        sass: lib.sass,
        ptx: lib.ptx,
        ptx_isa: lib.ptx_isa,
        sass_counts: lib.sass_counts,
        modules: all.modules.values().sum(),
        sections: found_in,
    });
    out
}
/// A path to scan and whether the user named it (then it must be readable).
#[derive(Debug, Clone)]
pub struct Root {
    /// File or folder.
    pub path: PathBuf,
    /// Named on the command line.
    pub explicit: bool,
}

/// What scanning all roots gave.
#[derive(Debug, Default)]
pub struct Scanned {
    /// Libraries with CUDA code, by path.
    pub libraries: Vec<Library>,
    /// `*.so` files seen.
    pub shared_objects: u64,
    /// Of those, ELF files read.
    pub elf_files: u64,
    /// Containers and entries walked.
    pub figures: Figures,
    /// Per-file notes.
    pub notes: Vec<String>,
}

/// Finds and reads every shared library under `roots`.
pub fn scan_roots(roots: &[Root], threads: usize) -> Result<Scanned, EnvError> {
    let RootsFound {
        mut files,
        explicit_files,
        dirs,
        mut notes,
    } = stat_roots(roots)?;
    let walked = crate::par::walk(dirs, threads, &["__pycache__", ".git"], |name| {
        crate::python::is_shared_object_name(name)
    });
    notes.extend(walked.notes);
    files.extend(walked.files);
    // Largest first: one 450 MB library must not start last.
    files.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
    files.dedup_by(|a, b| a.path == b.path);
    let outcomes = crate::par::map(&files, threads, |f| scan_file(&f.path));
    let mut out = Scanned {
        shared_objects: files.len() as u64,
        ..Scanned::default()
    };
    for (f, o) in files.iter().zip(outcomes) {
        let explicit = explicit_files.contains(&f.path);
        add_outcome(&mut out, &mut notes, &f.path, o, explicit)?;
    }
    out.libraries.sort_by(|a, b| a.path.cmp(&b.path));
    out.notes = notes;
    Ok(out)
}

/// The roots sorted out: files to read (those named, apart), folders to walk, and notes.
struct RootsFound {
    files: Vec<crate::par::Found>,
    explicit_files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    notes: Vec<String>,
}

/// Sorts the roots into files and folders; a root the user named must be readable,
/// another that is not becomes a note.
fn stat_roots(roots: &[Root]) -> Result<RootsFound, EnvError> {
    let mut found = RootsFound {
        files: Vec::new(),
        explicit_files: Vec::new(),
        dirs: Vec::new(),
        notes: Vec::new(),
    };
    for r in roots {
        match fs::metadata(&r.path) {
            Ok(m) if m.is_dir() => found.dirs.push(r.path.clone()),
            Ok(m) => {
                if r.explicit {
                    found.explicit_files.push(r.path.clone());
                }
                found.files.push(crate::par::Found {
                    path: r.path.clone(),
                    size: m.len(),
                });
            }
            Err(source) if r.explicit => {
                return Err(EnvError::Read {
                    path: r.path.clone(),
                    source,
                })
            }
            Err(e) => found.notes.push(format!("read {}: {e}", r.path.display())),
        }
    }
    Ok(found)
}

/// Adds what one file held to the scan: a library, a count, or a note (on a file the
/// user named, also why it holds no library); a named file that cannot be read is an error.
fn add_outcome(
    out: &mut Scanned,
    notes: &mut Vec<String>,
    path: &Path,
    o: FileOutcome,
    explicit: bool,
) -> Result<(), EnvError> {
    match o {
        FileOutcome::NotElf => {
            if explicit {
                notes.push(format!("{}: not an ELF file", path.display()));
            }
        }
        FileOutcome::Unsupported(why) => {
            if explicit {
                notes.push(format!("{}: {why}, not read", path.display()));
            }
        }
        FileOutcome::NoCuda => {
            out.elf_files += 1;
            if explicit {
                notes.push(format!(
                    "{}: no CUDA code (no {NV_FATBIN} section)",
                    path.display()
                ));
            }
        }
        FileOutcome::Library(lib, fig) => {
            out.elf_files += 1;
            out.figures.containers += fig.containers;
            out.figures.entries += fig.entries;
            out.libraries.push(*lib);
        }
        FileOutcome::Unreadable(source) => {
            if explicit {
                return Err(EnvError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
            notes.push(format!("read {}: {source}", path.display()));
        }
        FileOutcome::Bad(note) => notes.push(note),
    }
    Ok(())
}
