//! Property tests: the ELF and fat binary readers on arbitrary bytes and on
//! randomly damaged real libraries never panic, and their output stays
//! bounded by the input.

use super::fixture;
use proptest::prelude::*;
use rosetta_env::fatbin::{find_embedded, only_stubs, walk};
use rosetta_env::scan::{scan_source, FileOutcome};
use rosetta_env::source::Bytes;

fn sample() -> Vec<u8> {
    std::fs::read(fixture("libk_multi.so")).unwrap()
}

/// A fat binary prefix (container magic, version, header size) followed by
/// arbitrary bytes: gets past the magic check so the entry walk is exercised.
fn fatbin_like() -> impl Strategy<Value = Vec<u8>> {
    (
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 0..2048),
    )
        .prop_map(|(size, rest)| {
            let mut v = vec![0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0];
            v.extend_from_slice(&(size % 4096).to_le_bytes());
            v.extend(rest);
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn walk_takes_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..4096), off in 0u64..5000, len in 0u64..10000) {
        let s = walk(&Bytes(&bytes), off, len);
        prop_assert!(s.entries <= bytes.len() as u64 / 64 + 1);
        prop_assert!(s.codes.len() <= s.entries as usize);
    }

    #[test]
    fn walk_takes_fatbin_like_bytes(bytes in fatbin_like()) {
        let s = walk(&Bytes(&bytes), 0, bytes.len() as u64);
        prop_assert!(s.entries <= bytes.len() as u64 / 64);
        prop_assert!(s.containers >= 1);
    }

    #[test]
    fn scan_takes_any_bytes(mut bytes in proptest::collection::vec(any::<u8>(), 0..4096), elf in any::<bool>()) {
        if elf && bytes.len() >= 6 {
            bytes[..6].copy_from_slice(b"\x7fELF\x02\x01");
        }
        let _ = scan_source(&Bytes(&bytes), "x.so");
    }

    #[test]
    fn embedded_search_takes_any_bytes(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..8192),
        spots in proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 0..6),
    ) {
        // Plant container and cubin prefixes at random places.
        let n = bytes.len();
        for (at, container) in spots {
            if n < 8 { break; }
            let i = at.index(n - 7);
            let prefix: &[u8] = if container {
                &[0x50, 0xED, 0x55, 0xBA, 1, 0, 16, 0]
            } else {
                b"\x7fELF\x02\x01\x01"
            };
            bytes[i..i + prefix.len().min(n - i)].copy_from_slice(&prefix[..prefix.len().min(n - i)]);
        }
        let s = find_embedded(&Bytes(&bytes), 0, bytes.len() as u64, 3);
        prop_assert!(s.entries <= bytes.len() as u64 / 7 + 1);
        let _ = only_stubs(&Bytes(&bytes), 0, bytes.len() as u64);
    }

    #[test]
    fn damaged_real_library(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16)) {
        let mut f = sample();
        let n = f.len();
        for (at, b) in flips {
            f[at.index(n)] = b;
        }
        if let FileOutcome::Library(lib, fig) = scan_source(&Bytes(&f), "x.so") {
            prop_assert!(fig.entries <= n as u64 / 64);
            prop_assert!(lib.sass.len() + lib.ptx.len() <= fig.entries as usize);
        }
    }

    #[test]
    fn damaged_fat_binary_headers(flips in proptest::collection::vec((0usize..512, any::<u8>()), 1..8)) {
        // Damage concentrated on the container and entry headers.
        let mut f = sample();
        let start = 0x1000usize.min(f.len());
        let end = f.len();
        for (at, b) in flips {
            let i = start + at * 8 % (end - start);
            f[i] = b;
        }
        let _ = scan_source(&Bytes(&f), "x.so");
    }
}
