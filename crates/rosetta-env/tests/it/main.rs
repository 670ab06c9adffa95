//! Integration tests of rosetta-env: the real nvcc 13 fixtures against their
//! cuobjdump listings, malformed files, property tests of the readers on
//! arbitrary bytes, a fake site-packages, and the JSON contract.

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
