//! The nvcc 13 fixtures of `shared/fixtures/fatbin` (copied here) against
//! their cuobjdump listings, and the verdicts the issue asks for.

use super::{cuobjdump_counts, fixture};
use rosetta_env::scan::{scan_file, scan_source, FileOutcome};
use rosetta_env::source::Bytes;
use rosetta_env::{
    probe, ComputeCapability, CudaVersion, GpuSource, Library, NamedGpu, Options, PythonSource,
    Verdict,
};
use std::collections::BTreeMap;

fn library(name: &str) -> Library {
    match scan_file(&fixture(name)) {
        FileOutcome::Library(lib, _) => *lib,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn archs_and_counts_match_cuobjdump() {
    for (so, listing) in [
        ("libk_sm90.so", "libk_sm90.cuobjdump.txt"),
        ("libk_multi.so", "libk_multi.cuobjdump.txt"),
        (
            "libk_multi_compressed.so",
            "libk_multi_compressed.cuobjdump.txt",
        ),
    ] {
        let lib = library(so);
        let text = std::fs::read_to_string(fixture(listing)).unwrap();
        let (sass, ptx) = cuobjdump_counts(&text);
        assert_eq!(lib.sass_counts, sass, "{so}");
        assert_eq!(lib.ptx_counts, ptx, "{so}");
        // Each arch once, in arch order.
        let want: Vec<String> = sass.keys().cloned().collect();
        let mut got = lib.sass.clone();
        got.sort();
        assert_eq!(got, want, "{so}");
        assert!(lib.notes.is_empty(), "{so}: {:?}", lib.notes);
        assert!(lib.relocatable.is_none());
    }
}

#[test]
fn multi_lists_each_arch_once() {
    let lib = library("libk_multi.so");
    assert_eq!(lib.sass, ["sm_80", "sm_90a", "sm_100a"]);
    assert_eq!(lib.ptx, ["compute_100a"]);
    assert_eq!(lib.ptx_isa["compute_100a"], "9.0");
    assert_eq!(lib.modules, 2);
    // nvcc 13's default: the PTX zstd-compressed, the small cubins raw.
    assert_eq!(
        (lib.encodings.raw, lib.encodings.lz4, lib.encodings.zstd),
        (6, 0, 1)
    );
    let sm90 = library("libk_sm90.so");
    assert_eq!(sm90.sass, ["sm_90"]);
    assert_eq!(sm90.ptx, ["compute_90"]);
    assert_eq!(sm90.ptx_isa["compute_90"], "9.0");
}

#[test]
fn compressed_build_lists_the_same_and_counts_zstd() {
    let plain = library("libk_multi.so");
    let packed = library("libk_multi_compressed.so");
    assert_eq!(plain.sass, packed.sass);
    assert_eq!(plain.ptx, packed.ptx);
    assert_eq!(plain.sass_counts, packed.sass_counts);
    // -Xfatbin -compress-all: every entry zstd (mechanics.md A.5).
    assert_eq!(packed.encodings.zstd, 7, "{:?}", packed.encodings);
    assert!(packed.fatbin_bytes < plain.fatbin_bytes);
}

#[test]
fn verdicts_for_sm90_sm100_sm120() {
    let opts = Options {
        python: PythonSource::Skip,
        scan: ["libk_sm90.so", "libk_multi.so", "libk_multi_compressed.so"]
            .iter()
            .map(|f| fixture(f))
            .collect(),
        gpus: GpuSource::Skip,
        named: ["sm_90", "sm_100", "sm_120"]
            .iter()
            .map(|a| NamedGpu {
                cc: rosetta_env::ComputeCapability::parse(a).unwrap(),
                name: None,
            })
            .collect(),
        ..Options::default()
    };
    let r = probe(&opts).unwrap();
    assert_eq!(r.libraries.len(), 3);
    let v = |file: &str, arch: &str| {
        r.libraries
            .iter()
            .find(|l| l.file_name() == file)
            .unwrap()
            .targets[arch]
    };
    for multi in ["libk_multi.so", "libk_multi_compressed.so"] {
        assert_eq!(v(multi, "sm_90"), Verdict::Sass);
        assert_eq!(v(multi, "sm_100"), Verdict::Sass);
        assert_eq!(v(multi, "sm_120"), Verdict::None);
    }
    assert_eq!(v("libk_sm90.so", "sm_90"), Verdict::Sass);
    assert_eq!(v("libk_sm90.so", "sm_100"), Verdict::PtxJit);
    assert_eq!(v("libk_sm90.so", "sm_120"), Verdict::PtxJit);
    // The helpers diagnose uses.
    let none: Vec<&str> = r
        .libraries_without_code_for("sm_120")
        .iter()
        .map(|l| l.file_name())
        .collect();
    assert_eq!(none, ["libk_multi.so", "libk_multi_compressed.so"]);
    assert!(r.libraries_without_code_for("sm_90").is_empty());
    // sm_103: sm_100a does not run there; compute_100a neither; sm_90 PTX does.
    let none: Vec<&str> = r
        .libraries_without_code_for("10.3")
        .iter()
        .map(|l| l.file_name())
        .collect();
    assert_eq!(none, ["libk_multi.so", "libk_multi_compressed.so"]);
    let problems = r.problems_of(rosetta_env::ProblemKind::NoCodeForGpu);
    assert_eq!(problems.len(), 2);
    assert!(
        problems[0].message.contains("sm_90a, sm_100a"),
        "{}",
        problems[0].message
    );
}

fn gunzip(name: &str) -> Vec<u8> {
    use std::io::Read;
    let f = std::fs::File::open(fixture(name)).unwrap();
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(f)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn skeleton(bytes: &[u8]) -> Library {
    match scan_source(&Bytes(bytes), "skeleton.so") {
        FileOutcome::Library(lib, _) => *lib,
        other => panic!("{other:?}"),
    }
}

/// cuobjdump prints an `sm_100f` cubin as `sm_100` (mechanics.md A.4).
fn as_cuobjdump(lib: &Library) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (k, v) in &lib.sass_counts {
        *out.entry(k.trim_end_matches('f').to_string()).or_insert(0) += v;
    }
    out
}

fn verdict(lib: &Library, arch: &str, driver: Option<&str>) -> Verdict {
    lib.judge(
        ComputeCapability::parse(arch).unwrap(),
        driver.and_then(CudaVersion::parse),
    )
}

/// torch 2.11.0+cu130's libtorch_cuda.so, from the H200: the header skeleton
/// gives exactly cuobjdump's 2,789 cubins per arch, and no PTX.
#[test]
fn h200_libtorch_cuda_skeleton_matches_cuobjdump() {
    let lib = skeleton(&gunzip("h200/libtorch_cuda.skeleton.so.gz"));
    let listing = String::from_utf8(gunzip("h200/libtorch_cuda.cuobjdump.txt.gz")).unwrap();
    let (sass, ptx) = cuobjdump_counts(&listing);
    assert_eq!(lib.sass_counts, sass);
    assert_eq!(lib.ptx_counts, ptx);
    assert_eq!(lib.sass_counts.values().sum::<u64>(), 2789);
    assert_eq!(lib.sass_counts["sm_90"], 444);
    assert_eq!(lib.sass_counts["sm_100a"], 59);
    assert_eq!(lib.modules, 444);
    assert!(lib.ptx.is_empty());
    assert!(lib.notes.is_empty(), "{:?}", lib.notes);
    // Payloads are zstd (CUDA 13 default for large libraries).
    assert_eq!(lib.encodings.zstd, 2789);
    for arch in [
        "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121",
    ] {
        assert_eq!(verdict(&lib, arch, Some("13.0")), Verdict::Sass, "{arch}");
    }
    // No PTX: nothing for Jetson Thor (11.0), Orin (8.7, integrated) or V100.
    for arch in ["sm_110", "sm_87", "sm_70"] {
        assert_eq!(verdict(&lib, arch, Some("13.0")), Verdict::None, "{arch}");
    }
}

/// cupy-cuda13x's cub module: family cubins and PTX of ISA 9.2.
#[test]
fn h200_cupy_family_cubins_and_new_ptx() {
    let lib = library("h200/cupy-cub.skeleton.so");
    let (sass, ptx) =
        cuobjdump_counts(&std::fs::read_to_string(fixture("h200/cupy-cub.cuobjdump.txt")).unwrap());
    assert_eq!(as_cuobjdump(&lib), sass);
    assert_eq!(lib.ptx_counts, ptx);
    assert_eq!(
        lib.sass,
        ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100f", "sm_120f"]
    );
    assert_eq!(lib.ptx_isa["compute_120"], "9.2");
    // sm_100f runs on 10.3, sm_120f on 12.1.
    assert_eq!(verdict(&lib, "sm_103", None), Verdict::Sass);
    assert_eq!(verdict(&lib, "sm_121", None), Verdict::Sass);
    // Thor (11.0): no SASS, and compute_120 PTX does not go backwards.
    assert_eq!(verdict(&lib, "sm_110", None), Verdict::None);
    // A later major would JIT the PTX, if the driver knows ISA 9.2 (CUDA 13.2).
    assert_eq!(verdict(&lib, "sm_130", None), Verdict::PtxJit);
    assert_eq!(verdict(&lib, "sm_130", Some("13.0")), Verdict::None);
    assert_eq!(verdict(&lib, "sm_130", Some("13.2")), Verdict::PtxJit);
}

/// cuFile: sm_75/80/86 and compute_86 PTX of ISA 7.1: PTX JIT on Hopper.
#[test]
fn h200_cufile_is_ptx_jit_on_hopper() {
    let lib = library("h200/libcufile.skeleton.so");
    let (sass, ptx) = cuobjdump_counts(
        &std::fs::read_to_string(fixture("h200/libcufile.cuobjdump.txt")).unwrap(),
    );
    assert_eq!(lib.sass_counts, sass);
    assert_eq!(lib.ptx_counts, ptx);
    assert_eq!(lib.ptx_isa["compute_86"], "7.1");
    assert_eq!(verdict(&lib, "sm_90", Some("13.0")), Verdict::PtxJit);
    assert_eq!(verdict(&lib, "sm_89", Some("13.0")), Verdict::Sass);
}
