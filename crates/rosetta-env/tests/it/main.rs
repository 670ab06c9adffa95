//! Integration tests of rosetta-env: the real nvcc 13 fixtures against their
//! cuobjdump listings, malformed files, property tests of the readers on
//! arbitrary bytes, a fake site-packages, and the JSON contract.

mod embedded;
mod fixtures;
mod malformed;
mod props;
mod site;

use std::collections::BTreeMap;
use std::path::PathBuf;

/// `crates/rosetta-env/tests/fixtures/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("fixtures")
        .join(name)
}

/// Per-arch counts from a `cuobjdump --list-elf --list-ptx` listing, keyed
/// the way rosetta labels them: `sm_90a` for cubins, `compute_100a` for PTX
/// (cuobjdump names PTX files by the SASS-style arch).
pub fn cuobjdump_counts(listing: &str) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let mut sass = BTreeMap::new();
    let mut ptx = BTreeMap::new();
    for line in listing.lines() {
        let (map, ext, prefix) = if line.starts_with("ELF file") {
            (&mut sass, ".cubin", "sm_")
        } else if line.starts_with("PTX file") {
            (&mut ptx, ".ptx", "compute_")
        } else {
            continue;
        };
        let name = line.rsplit(' ').next().unwrap().trim_end_matches(ext);
        let arch = name.rsplit('.').next().unwrap();
        let arch = arch.strip_prefix("sm_").unwrap();
        *map.entry(format!("{prefix}{arch}")).or_insert(0) += 1;
    }
    (sass, ptx)
}

/// A minimal ELF64 little-endian file holding the given sections.
pub fn elf_with(sections: &[(&str, &[u8])]) -> Vec<u8> {
    let mut names = vec![0u8];
    let mut name_at = Vec::new();
    for (n, _) in sections.iter().copied().chain([(".shstrtab", &[][..])]) {
        name_at.push(names.len() as u32);
        names.extend_from_slice(n.as_bytes());
        names.push(0);
    }
    let mut f = vec![0u8; 64];
    f[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    let mut placed = Vec::new();
    for (_, data) in sections {
        f.resize(f.len().next_multiple_of(8), 0);
        placed.push((f.len() as u64, data.len() as u64));
        f.extend_from_slice(data);
    }
    let names_off = f.len() as u64;
    f.extend_from_slice(&names);
    placed.push((names_off, names.len() as u64));
    f.resize(f.len().next_multiple_of(8), 0);
    let shoff = f.len() as u64;
    f.extend_from_slice(&[0u8; 64]);
    for (i, (off, len)) in placed.iter().enumerate() {
        let mut sh = [0u8; 64];
        sh[0..4].copy_from_slice(&name_at[i].to_le_bytes());
        sh[4..8].copy_from_slice(&1u32.to_le_bytes());
        sh[0x18..0x20].copy_from_slice(&off.to_le_bytes());
        sh[0x20..0x28].copy_from_slice(&len.to_le_bytes());
        f.extend_from_slice(&sh);
    }
    let n = placed.len() as u16 + 1;
    f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    f[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
    f[0x3C..0x3E].copy_from_slice(&n.to_le_bytes());
    f[0x3E..0x40].copy_from_slice(&(n - 1).to_le_bytes());
    f
}

/// The bytes of a fixture library's `.nv_fatbin`.
pub fn nv_fatbin_bytes(name: &str) -> Vec<u8> {
    let f = std::fs::read(fixture(name)).unwrap();
    let src = rosetta_env::source::Bytes(&f);
    let rosetta_env::elf::ElfProbe::Sections(s) =
        rosetta_env::elf::find_sections(&src, &[".nv_fatbin"]).unwrap()
    else {
        panic!("{name}: not ELF");
    };
    let (off, len) = (s[0].offset as usize, s[0].size as usize);
    f[off..off + len].to_vec()
}
