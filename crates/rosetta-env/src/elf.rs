//! Finds named sections (`.nv_fatbin`, `__nv_relfatbin`, `.hip_fatbin`) in a
//! 64-bit little-endian ELF file, reading only the file header, the section
//! header table and the section name table.
//!
//! It does not walk program headers, symbols or relocations, and it does not
//! look inside the sections it finds (`fatbin.rs` does). Every offset read
//! from the file is bounds-checked; a malformed file is an [`ElfError`], never
//! a panic.

use crate::error::ElfError;
use crate::source::{u16_at, u32_at, u64_at, ReadAt};

/// The ELF magic.
const MAGIC: &[u8; 4] = b"\x7fELF";
/// `SHT_NOBITS`: occupies no file space.
const SHT_NOBITS: u32 = 8;
/// Section counts above this are treated as corrupt (the table would be
/// megabytes; real shared libraries have tens of sections).
const MAX_SECTIONS: u64 = 1 << 18;
/// Section name tables above this are treated as corrupt.
const MAX_SHSTRTAB: u64 = 16 << 20;

/// A section found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// Its name.
    pub name: String,
    /// File offset of its bytes.
    pub offset: u64,
    /// Its size in bytes, as the section header says.
    pub size: u64,
}

/// What a file turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElfProbe {
    /// Not an ELF file (no `\x7fELF`): a linker script, a text file.
    NotElf,
    /// An ELF file this reader does not handle (32-bit, big-endian), with why.
    Unsupported(&'static str),
    /// A 64-bit little-endian ELF file and the wanted sections it has, in
    /// section-table order (empty when it has none).
    Sections(Vec<Section>),
}

/// Reads the section table of `src` and returns the sections named in `wanted`.
pub fn find_sections(src: &dyn ReadAt, wanted: &[&str]) -> Result<ElfProbe, ElfError> {
    find_sections_by(src, &|name| wanted.iter().any(|w| w.as_bytes() == name))
}

/// Whether an ELF file (a cubin) has a kernel: a `.text.<kernel>` section.
/// `None` if it is not ELF or cannot be read.
pub fn has_kernel_code(src: &dyn ReadAt) -> Option<bool> {
    match find_sections_by(src, &|name| name.starts_with(b".text.")) {
        Ok(ElfProbe::Sections(s)) => Some(!s.is_empty()),
        _ => None,
    }
}

/// Like [`find_sections`], with any test of the name.
pub fn find_sections_by(
    src: &dyn ReadAt,
    wanted: &dyn Fn(&[u8]) -> bool,
) -> Result<ElfProbe, ElfError> {
    let size = src.size();
    let mut ident = [0u8; 4];
    if size < 4 || src.read_exact_at(&mut ident, 0).is_err() || &ident != MAGIC {
        return Ok(ElfProbe::NotElf);
    }
    if size < 64 {
        return Err(ElfError::Truncated {
            what: "the ELF header",
            size,
        });
    }
    let mut eh = [0u8; 64];
    src.read_exact_at(&mut eh, 0).map_err(ElfError::Io)?;
    match (eh[4], eh[5]) {
        (2, 1) => {}
        (1, _) => return Ok(ElfProbe::Unsupported("a 32-bit ELF file")),
        (2, 2) => return Ok(ElfProbe::Unsupported("a big-endian ELF file")),
        _ => return Err(ElfError::BadHeader("unknown ELF class or byte order")),
    }
    let shoff = u64_at(&eh, 0x28);
    let shentsize = u64::from(u16_at(&eh, 0x3A));
    let mut shnum = u64::from(u16_at(&eh, 0x3C));
    let mut shstrndx = u64::from(u16_at(&eh, 0x3E));
    if shoff == 0 {
        // No section table (stripped to program headers only).
        return Ok(ElfProbe::Sections(Vec::new()));
    }
    if shentsize < 64 {
        return Err(ElfError::BadHeader(
            "section header entries are smaller than 64 bytes",
        ));
    }
    if shoff >= size || size - shoff < shentsize {
        return Err(ElfError::SectionTablePastEnd {
            offset: shoff,
            size,
        });
    }
    if shnum == 0 || shstrndx == 0xFFFF {
        // Extended numbering: the real values live in section 0.
        let mut s0 = [0u8; 64];
        src.read_exact_at(&mut s0, shoff).map_err(ElfError::Io)?;
        if shnum == 0 {
            shnum = u64_at(&s0, 0x20);
        }
        if shstrndx == 0xFFFF {
            shstrndx = u64::from(u32_at(&s0, 0x28));
        }
    }
    if shnum == 0 {
        return Ok(ElfProbe::Sections(Vec::new()));
    }
    if shnum > MAX_SECTIONS {
        return Err(ElfError::BadHeader("implausibly many sections"));
    }
    let table_len = shnum * shentsize;
    if table_len > size - shoff {
        return Err(ElfError::SectionTablePastEnd {
            offset: shoff,
            size,
        });
    }
    if shstrndx >= shnum {
        return Err(ElfError::BadHeader(
            "the section name table index is out of range",
        ));
    }
    let mut table = vec![0u8; to_usize(table_len)?];
    src.read_exact_at(&mut table, shoff).map_err(ElfError::Io)?;
    let ent = to_usize(shentsize)?;
    let header = |i: u64| -> &[u8] {
        // In range: i < shnum and the table holds shnum entries.
        let at = (i as usize) * ent;
        &table[at..at + 64]
    };

    let names = header(shstrndx);
    let (str_off, str_size) = (u64_at(names, 0x18), u64_at(names, 0x20));
    if str_size > MAX_SHSTRTAB {
        return Err(ElfError::BadHeader("implausibly large section name table"));
    }
    if str_off > size || str_size > size - str_off {
        return Err(ElfError::SectionPastEnd {
            name: ".shstrtab".into(),
            offset: str_off,
            len: str_size,
            size,
        });
    }
    let mut strtab = vec![0u8; to_usize(str_size)?];
    src.read_exact_at(&mut strtab, str_off)
        .map_err(ElfError::Io)?;

    let mut found = Vec::new();
    for i in 0..shnum {
        let h = header(i);
        let Some(name) = name_at(&strtab, u32_at(h, 0) as usize) else {
            continue;
        };
        if !wanted(name) {
            continue;
        }
        if u32_at(h, 4) == SHT_NOBITS {
            continue;
        }
        found.push(Section {
            name: String::from_utf8_lossy(name).into_owned(),
            offset: u64_at(h, 0x18),
            size: u64_at(h, 0x20),
        });
    }
    Ok(ElfProbe::Sections(found))
}

/// The NUL-terminated name at `at`, if it is inside the table.
fn name_at(strtab: &[u8], at: usize) -> Option<&[u8]> {
    let rest = strtab.get(at..)?;
    let end = rest.iter().position(|&b| b == 0)?;
    Some(&rest[..end])
}

fn to_usize(n: u64) -> Result<usize, ElfError> {
    usize::try_from(n).map_err(|_| ElfError::BadHeader("a size does not fit in memory"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Bytes;

    /// A minimal ELF64 LE file with a name table and one `.nv_fatbin` section.
    pub(crate) fn tiny_elf(payload: &[u8]) -> Vec<u8> {
        let names = b"\0.shstrtab\0.nv_fatbin\0";
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(MAGIC);
        f[4] = 2;
        f[5] = 1;
        let names_off = f.len() as u64;
        f.extend_from_slice(names);
        f.resize(f.len().next_multiple_of(8), 0);
        let data_off = f.len() as u64;
        f.extend_from_slice(payload);
        f.resize(f.len().next_multiple_of(8), 0);
        let shoff = f.len() as u64;
        // Section 0: null. 1: .shstrtab. 2: .nv_fatbin.
        f.extend_from_slice(&[0u8; 64]);
        let mut sh = [0u8; 64];
        sh[0..4].copy_from_slice(&1u32.to_le_bytes());
        sh[4..8].copy_from_slice(&3u32.to_le_bytes());
        sh[0x18..0x20].copy_from_slice(&names_off.to_le_bytes());
        sh[0x20..0x28].copy_from_slice(&(names.len() as u64).to_le_bytes());
        f.extend_from_slice(&sh);
        let mut sh = [0u8; 64];
        sh[0..4].copy_from_slice(&11u32.to_le_bytes());
        sh[4..8].copy_from_slice(&1u32.to_le_bytes());
        sh[0x18..0x20].copy_from_slice(&data_off.to_le_bytes());
        sh[0x20..0x28].copy_from_slice(&(payload.len() as u64).to_le_bytes());
        f.extend_from_slice(&sh);
        f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        f[0x3A..0x3C].copy_from_slice(&64u16.to_le_bytes());
        f[0x3C..0x3E].copy_from_slice(&3u16.to_le_bytes());
        f[0x3E..0x40].copy_from_slice(&1u16.to_le_bytes());
        f
    }

    #[test]
    fn finds_the_section() {
        let f = tiny_elf(b"12345678");
        let ElfProbe::Sections(s) = find_sections(&Bytes(&f), &[".nv_fatbin"]).unwrap() else {
            panic!("not sections");
        };
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].name, ".nv_fatbin");
        assert_eq!(s[0].size, 8);
        let at = s[0].offset as usize;
        assert_eq!(&f[at..at + 8], b"12345678");
    }

    #[test]
    fn not_elf_and_truncated() {
        assert_eq!(
            find_sections(&Bytes(b"INPUT(libc.so.6)"), &[]).unwrap(),
            ElfProbe::NotElf
        );
        assert!(matches!(
            find_sections(&Bytes(b"\x7fELF\x02\x01"), &[]),
            Err(ElfError::Truncated { .. })
        ));
        let mut f = tiny_elf(b"");
        let n = f.len();
        f.truncate(n - 10);
        assert!(matches!(
            find_sections(&Bytes(&f), &[".nv_fatbin"]),
            Err(ElfError::SectionTablePastEnd { .. })
        ));
    }

    #[test]
    fn thirty_two_bit_is_unsupported() {
        let mut f = tiny_elf(b"");
        f[4] = 1;
        assert!(matches!(
            find_sections(&Bytes(&f), &[]).unwrap(),
            ElfProbe::Unsupported(_)
        ));
    }
}
