//! Malformed libraries: truncated files, zero-size sections, entry sizes
//! pointing past the end, garbage. Each gives a note, never a panic.

use super::fixture;
use rosetta_env::scan::{scan_file, scan_source, FileOutcome};
use rosetta_env::source::Bytes;

fn bytes(name: &str) -> Vec<u8> {
    std::fs::read(fixture(name)).unwrap()
}

/// The file offset and size of `.nv_fatbin` and the offset of its section header.
fn nv_fatbin(f: &[u8]) -> (usize, usize, usize) {
    let u16_at = |at: usize| u16::from_le_bytes([f[at], f[at + 1]]) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(f[at..at + 4].try_into().unwrap()) as usize;
    let u64_at = |at: usize| u64::from_le_bytes(f[at..at + 8].try_into().unwrap()) as usize;
    let shoff = u64_at(0x28);
    let (num, strndx) = (u16_at(0x3C), u16_at(0x3E));
    let str_off = u64_at(shoff + strndx * 64 + 0x18);
    for i in 0..num {
        let h = shoff + i * 64;
        let name_at = str_off + u32_at(h);
        if f[name_at..].starts_with(b".nv_fatbin\0") {
            return (u64_at(h + 0x18), u64_at(h + 0x20), h);
        }
    }
    panic!("no .nv_fatbin");
}

fn outcome(f: &[u8]) -> FileOutcome {
    scan_source(&Bytes(f), "test.so")
}

#[test]
fn truncated_anywhere_never_panics() {
    let f = bytes("libk_multi.so");
    let (off, size, _) = nv_fatbin(&f);
    // Cut at every 8th byte through the section and at a few other places.
    let cuts = (0..f.len()).step_by(97).chain((off..off + size).step_by(8));
    for cut in cuts {
        let _ = outcome(&f[..cut]);
    }
}

#[test]
fn truncated_inside_the_fat_binary_is_a_note() {
    // A file cut in the middle of .nv_fatbin still has its section table only
    // if the table comes first; build that case by moving nothing: instead
    // shrink the section's recorded file by pointing its offset near the end.
    let mut f = bytes("libk_multi.so");
    let (off, size, h) = nv_fatbin(&f);
    // Claim the section is 1 MiB: it runs past the end of the file.
    f[h + 0x20..h + 0x28].copy_from_slice(&(1u64 << 20).to_le_bytes());
    let FileOutcome::Library(lib, _) = outcome(&f) else {
        panic!()
    };
    assert!(
        lib.notes
            .iter()
            .any(|n| n.contains("runs past the end of the file")),
        "{:?}",
        lib.notes
    );
    // What is there was still read.
    assert!(lib.sass.contains(&"sm_90a".to_string()));
    let _ = (off, size);
}

#[test]
fn zero_size_section_is_a_note() {
    let mut f = bytes("libk_sm90.so");
    let (_, _, h) = nv_fatbin(&f);
    f[h + 0x20..h + 0x28].copy_from_slice(&0u64.to_le_bytes());
    let FileOutcome::Library(lib, _) = outcome(&f) else {
        panic!()
    };
    assert_eq!(lib.notes, ["section .nv_fatbin is empty"]);
    assert!(lib.sass.is_empty());
}

#[test]
fn entry_size_past_the_end_is_a_note() {
    let mut f = bytes("libk_sm90.so");
    let (off, _, _) = nv_fatbin(&f);
    // First entry of the first container: payload size at entry + 8.
    let entry = off + 16;
    f[entry + 8..entry + 16].copy_from_slice(&(u64::MAX - 3).to_le_bytes());
    let FileOutcome::Library(lib, _) = outcome(&f) else {
        panic!()
    };
    assert!(
        lib.notes
            .iter()
            .any(|n| n.contains("past the end of its container")),
        "{:?}",
        lib.notes
    );
    // Container size past the end.
    let mut f = bytes("libk_sm90.so");
    f[off + 8..off + 16].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    let FileOutcome::Library(lib, _) = outcome(&f) else {
        panic!()
    };
    assert!(
        lib.notes.iter().any(|n| n.contains("claims")),
        "{:?}",
        lib.notes
    );
}

#[test]
fn garbage_in_the_section_is_a_note() {
    let mut f = bytes("libk_sm90.so");
    let (off, _, _) = nv_fatbin(&f);
    f[off..off + 4].copy_from_slice(b"JUNK");
    let FileOutcome::Library(lib, _) = outcome(&f) else {
        panic!()
    };
    assert!(lib.notes[0].contains("unexpected bytes"), "{:?}", lib.notes);
}

#[test]
fn broken_elf_headers_are_notes() {
    let mut f = bytes("libk_sm90.so");
    // Section table offset past the end.
    f[0x28..0x30].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let FileOutcome::Bad(note) = outcome(&f) else {
        panic!()
    };
    assert!(note.starts_with("test.so: read section table"), "{note}");
    // Just the magic.
    let FileOutcome::Bad(note) = outcome(b"\x7fELF\x02\x01\x01") else {
        panic!()
    };
    assert!(note.contains("only 7 bytes"), "{note}");
    assert!(matches!(outcome(b"not elf at all"), FileOutcome::NotElf));
    assert!(matches!(outcome(b""), FileOutcome::NotElf));
}

#[test]
fn a_directory_scan_notes_bad_files_and_goes_on() {
    let d = tempfile::tempdir().unwrap();
    let mut f = bytes("libk_multi.so");
    f.truncate(100);
    std::fs::write(d.path().join("libbroken.so"), &f).unwrap();
    std::fs::copy(fixture("libk_sm90.so"), d.path().join("libgood.so")).unwrap();
    std::fs::write(
        d.path().join("libc.so"),
        "/* GNU ld script */ INPUT(libc.so.6)",
    )
    .unwrap();
    let r = rosetta_env::probe(&rosetta_env::Options {
        python: rosetta_env::PythonSource::Skip,
        scan: vec![d.path().to_path_buf()],
        gpus: rosetta_env::GpuSource::Skip,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(r.libraries.len(), 1);
    assert_eq!(r.scan.shared_objects, 3);
    assert!(
        r.notes.iter().any(|n| n.contains("libbroken.so")),
        "{:?}",
        r.notes
    );
    assert!(
        !r.notes.iter().any(|n| n.contains("libc.so:")),
        "{:?}",
        r.notes
    );
}

#[test]
fn unreadable_explicit_path_is_an_error_naming_it() {
    let err = rosetta_env::probe(&rosetta_env::Options {
        python: rosetta_env::PythonSource::Skip,
        scan: vec!["/nonexistent/libx.so".into()],
        gpus: rosetta_env::GpuSource::Skip,
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "read /nonexistent/libx.so");
    let _ = scan_file(&fixture("libk_sm90.so"));
}
