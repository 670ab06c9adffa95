//! Code a library embeds outside `.nv_fatbin` (cuFFT's ~24,000 containers in
//! `.ldata`, seen on the H200; raw cubins in `.rodata`): found before a
//! library is called short of code, and only then.

use super::{elf_with, fixture, nv_fatbin_bytes};
use rosetta_env::scan::{look_deeper, EMBEDDED_SECTIONS};
use rosetta_env::{probe, ComputeCapability, GpuSource, NamedGpu, Options, PythonSource, Verdict};

/// A stub `.nv_fatbin` with only an sm_75 cubin, like cuFFT 12's.
fn sm75_stub() -> Vec<u8> {
    let mut fb = nv_fatbin_bytes("libk_sm90.so");
    // Keep the first container, relabel its entries as sm_75 cubins and drop PTX.
    let fat = u64::from_le_bytes(fb[8..16].try_into().unwrap()) as usize;
    fb.truncate(16 + fat);
    let mut p = 16;
    while p + 64 <= fb.len() {
        let hsize = u32::from_le_bytes(fb[p + 4..p + 8].try_into().unwrap()) as usize;
        let payload = u64::from_le_bytes(fb[p + 8..p + 16].try_into().unwrap()) as usize;
        fb[p..p + 2].copy_from_slice(&2u16.to_le_bytes());
        fb[p + 0x1C..p + 0x20].copy_from_slice(&75u32.to_le_bytes());
        p += hsize + payload;
    }
    fb
}

fn scan(dir: &std::path::Path, named: &[&str]) -> rosetta_env::EnvReport {
    probe(&Options {
        python: PythonSource::Skip,
        scan: vec![dir.to_path_buf()],
        gpus: GpuSource::Skip,
        named: named
            .iter()
            .map(|a| NamedGpu {
                cc: ComputeCapability::parse(a).unwrap(),
                name: None,
            })
            .collect(),
        ..Options::default()
    })
    .unwrap()
}

#[test]
fn containers_in_ldata_count_like_cufft() {
    let d = tempfile::tempdir().unwrap();
    // .ldata: junk, the containers of libk_multi, junk, a near miss.
    let mut ldata = vec![0x11u8; 1000];
    ldata.extend(nv_fatbin_bytes("libk_multi.so"));
    ldata.extend(vec![0x22u8; 333]);
    ldata.extend([
        0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0,
    ]);
    ldata.extend(vec![0u8; 64]);
    let stub = sm75_stub();
    let f = elf_with(&[(".nv_fatbin", &stub), (".ldata", &ldata)]);
    std::fs::write(d.path().join("libcufft.so.12"), &f).unwrap();

    let r = scan(d.path(), &["sm_90", "sm_120"]);
    let lib = &r.libraries[0];
    assert_eq!(lib.sass, ["sm_75"]);
    let e = lib.embedded.as_ref().expect("embedded code found");
    assert_eq!(e.sections, [".ldata"]);
    assert_eq!(e.sass, ["sm_80", "sm_90a", "sm_100a"]);
    assert_eq!(e.ptx, ["compute_100a"]);
    assert_eq!(e.modules, 2);
    assert_eq!(lib.targets["sm_90"], Verdict::Sass);
    assert_eq!(lib.targets["sm_120"], Verdict::None);
    // The problem for sm_120 names the embedded code too.
    let p = &r.problems[0];
    assert!(
        p.message.contains("embedded in .ldata: sm_80"),
        "{}",
        p.message
    );
}

#[test]
fn only_looked_for_when_needed() {
    let d = tempfile::tempdir().unwrap();
    let fb = nv_fatbin_bytes("libk_sm90.so");
    let ldata = nv_fatbin_bytes("libk_multi.so");
    let f = elf_with(&[(".nv_fatbin", &fb), (".ldata", &ldata)]);
    std::fs::write(d.path().join("libx.so"), &f).unwrap();
    // sm_90 SASS in .nv_fatbin: no need to read .ldata.
    let r = scan(d.path(), &["sm_90"]);
    assert!(r.libraries[0].embedded.is_none());
    // No target at all: nothing judged, nothing read.
    let r = scan(d.path(), &[]);
    assert!(r.libraries[0].embedded.is_none());
    // sm_100: PTX JIT only from .nv_fatbin, so look; sm_100a SASS is there.
    let r = scan(d.path(), &["sm_100"]);
    assert_eq!(r.libraries[0].targets["sm_100"], Verdict::Sass);
}

#[test]
fn raw_cubins_in_rodata() {
    // Cut the first raw cubin out of libk_sm90's fat binary (nvcc 13 leaves
    // small cubins uncompressed) and embed it in .rodata.
    let fb = nv_fatbin_bytes("libk_sm90.so");
    let at = fb
        .windows(7)
        .position(|w| w == b"\x7fELF\x02\x01\x01")
        .expect("a raw cubin");
    let eh = &fb[at..at + 64];
    assert_eq!(u16::from_le_bytes([eh[0x12], eh[0x13]]), 190);
    let shoff = u64::from_le_bytes(eh[0x28..0x30].try_into().unwrap()) as usize;
    let shsize = u16::from_le_bytes([eh[0x3A], eh[0x3B]]) as usize
        * u16::from_le_bytes([eh[0x3C], eh[0x3D]]) as usize;
    let cubin = fb[at..at + shoff + shsize].to_vec();
    let mut rodata = b"some strings\0".to_vec();
    rodata.extend(&cubin);
    rodata.extend(b"more\0");
    let stub = sm75_stub();
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("libraw.so");
    std::fs::write(
        &path,
        elf_with(&[(".nv_fatbin", &stub), (".rodata", &rodata)]),
    )
    .unwrap();
    let e = look_deeper(&path, 2).embedded.expect("found");
    assert_eq!(e.sass, ["sm_90"]);
    assert_eq!(e.modules, 1);
    assert_eq!(e.sections, [".rodata"]);
    assert!(EMBEDDED_SECTIONS.contains(&".cask_resource"));
    let _ = fixture("");
}

#[test]
fn search_crosses_range_borders() {
    // 40 MiB of .ldata with containers at and across the search ranges' borders.
    let c = nv_fatbin_bytes("libk_multi.so");
    let mut ldata = vec![0x33u8; 40 << 20];
    let mib = 1usize << 20;
    let spots = [
        0,
        16 * mib - 3,
        16 * mib - c.len() / 2,
        32 * mib - 7,
        40 * mib - c.len(),
    ];
    let mut placed = 0;
    let mut last_end = 0;
    for s in spots {
        if s < last_end {
            continue;
        }
        ldata[s..s + c.len()].copy_from_slice(&c);
        last_end = s + c.len();
        placed += 1;
    }
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("libbig.so");
    std::fs::write(
        &path,
        elf_with(&[(".nv_fatbin", &sm75_stub()), (".ldata", &ldata)]),
    )
    .unwrap();
    let e = look_deeper(&path, 4).embedded.expect("found");
    // Each copy of libk_multi's fat binary holds two containers.
    assert_eq!(e.modules, 2 * placed, "{e:?}");
    assert_eq!(e.sass_counts["sm_90a"], 2 * placed);
}

/// A fat binary with one raw sm_75 cubin holding the given sections.
fn one_cubin_fatbin(sections: &[(&str, &[u8])]) -> Vec<u8> {
    let mut cubin = elf_with(sections);
    cubin[0x12..0x14].copy_from_slice(&190u16.to_le_bytes());
    cubin.resize(cubin.len().next_multiple_of(8), 0);
    let mut e = vec![0u8; 64];
    e[0..2].copy_from_slice(&2u16.to_le_bytes());
    e[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
    e[4..8].copy_from_slice(&64u32.to_le_bytes());
    e[8..16].copy_from_slice(&(cubin.len() as u64).to_le_bytes());
    e[0x1C..0x20].copy_from_slice(&75u32.to_le_bytes());
    e[0x28..0x30].copy_from_slice(&0x11u64.to_le_bytes());
    e.extend(cubin);
    let mut c = vec![0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0];
    c.extend((e.len() as u64).to_le_bytes());
    c.extend(e);
    c
}

/// cuFFTW 12 on the H200: `.nv_fatbin` is one raw sm_75 cubin and nothing
/// is embedded; a cubin without a `.text.<kernel>` section launches nothing.
#[test]
fn kernel_free_stub_is_not_judged() {
    let d = tempfile::tempdir().unwrap();
    let stub = one_cubin_fatbin(&[(".nv.info", b"\x04\x2f\x08\x00"), (".nv.global", b"")]);
    std::fs::write(
        d.path().join("libcufftw.so.12"),
        elf_with(&[(".nv_fatbin", &stub)]),
    )
    .unwrap();
    let real = one_cubin_fatbin(&[(".text.kscale", &[0u8; 32]), (".nv.info.kscale", b"")]);
    std::fs::write(
        d.path().join("libreal.so"),
        elf_with(&[(".nv_fatbin", &real)]),
    )
    .unwrap();
    let r = scan(d.path(), &["sm_90"]);
    let lib = |name: &str| r.libraries.iter().find(|l| l.file_name() == name).unwrap();
    let stub = lib("libcufftw.so.12");
    assert!(stub.stub);
    assert!(stub.targets.is_empty());
    assert_eq!(stub.verdict_for("sm_90", None), None);
    assert!(lib("libreal.so").targets["sm_90"] == Verdict::None && !lib("libreal.so").stub);
    let blamed: Vec<&str> = r
        .libraries_without_code_for("sm_90")
        .iter()
        .map(|l| l.file_name())
        .collect();
    assert_eq!(blamed, ["libreal.so"]);
    assert_eq!(r.problems.len(), 1, "{:#?}", r.problems);
}
