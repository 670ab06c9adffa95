//! Finds named sections (`.nv_fatbin`, `__nv_relfatbin`, `.hip_fatbin`) in a
//! 64-bit little-endian ELF file with the `object` crate, reading only the
//! file header, the section header table and the section name table (through
//! `object`'s `ReadCache`, so a 1 GB library costs a few kilobytes of reads).
//!
//! It does not walk program headers, symbols or relocations, and it does not
//! look inside the sections it finds: `fatbin.rs` does, by hand, because no
//! crate reads NVIDIA's fat binary container (its header, entry kinds, `a`/`f`
//! flags and compressed payloads are documented only by `cuobjdump`'s output
//! and by reading real files). A malformed file is an [`ElfError`], never a
//! panic; `object` bounds-checks every offset against the file size.

use crate::error::ElfError;
use crate::source::ReadAt;
use object::elf::FileHeader64;
use object::read::elf::{FileHeader, SectionHeader};
use object::read::ReadCache;
use object::LittleEndian;
use std::io::{self, Read, Seek, SeekFrom};

/// The ELF magic.
const MAGIC: &[u8; 4] = b"\x7fELF";
/// Section counts above this are treated as corrupt: `object` would read
/// the whole table, up to the file's size, into memory (real shared
/// libraries have tens of sections; extended numbering allows 2^32).
const MAX_SECTIONS: u32 = 1 << 18;

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
    let mut ident = [0u8; 6];
    if size < 4 || src.read_exact_at(&mut ident[..4], 0).is_err() || &ident[..4] != MAGIC {
        return Ok(ElfProbe::NotElf);
    }
    if size < 64 {
        return Err(ElfError::Truncated {
            what: "the ELF header",
            size,
        });
    }
    src.read_exact_at(&mut ident, 0).map_err(ElfError::Io)?;
    // Class and byte order sort "not for us" from "broken" before `object` reads.
    match (ident[4], ident[5]) {
        (2, 1) => {}
        (1, _) => return Ok(ElfProbe::Unsupported("a 32-bit ELF file")),
        (2, 2) => return Ok(ElfProbe::Unsupported("a big-endian ELF file")),
        _ => return Err(ElfError::BadHeader("unknown ELF class or byte order")),
    }
    let cache = ReadCache::new(Cursor { src, pos: 0 });
    let data = &cache;
    let malformed = |what| move |source| ElfError::Malformed { what, source };
    let header = FileHeader64::<LittleEndian>::parse(data).map_err(malformed("ELF header"))?;
    let endian = LittleEndian;
    let shnum = header
        .shnum(endian, data)
        .map_err(malformed("section table"))?;
    if shnum > MAX_SECTIONS {
        return Err(ElfError::BadHeader("implausibly many sections"));
    }
    let table = header
        .sections(endian, data)
        .map_err(malformed("section table"))?;
    let mut found = Vec::new();
    for h in table.iter() {
        // A nameless section (name offset outside the table) is not one we want.
        let Ok(name) = table.section_name(endian, h) else {
            continue;
        };
        if !wanted(name) {
            continue;
        }
        // `None` for `SHT_NOBITS`: no bytes in the file.
        let Some((offset, size)) = h.file_range(endian) else {
            continue;
        };
        found.push(Section {
            name: String::from_utf8_lossy(name).into_owned(),
            offset,
            size,
        });
    }
    Ok(ElfProbe::Sections(found))
}

/// A [`ReadAt`] as the `Read + Seek` stream `object`'s `ReadCache` reads.
struct Cursor<'a> {
    src: &'a dyn ReadAt,
    pos: u64,
}

impl Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.src.size().saturating_sub(self.pos);
        let n = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        self.src.read_exact_at(&mut buf[..n], self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Cursor<'_> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let to = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.src.size().checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos =
            to.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek out of range"))?;
        Ok(self.pos)
    }
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
        f[6] = 1;
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
        let e = find_sections(&Bytes(&f), &[".nv_fatbin"]).unwrap_err();
        assert!(
            matches!(
                e,
                ElfError::Malformed {
                    what: "section table",
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("section header"), "{e}");
    }

    #[test]
    fn skips_nobits_and_reads_extended_numbering() {
        let mut f = tiny_elf(b"12345678");
        let shoff = u64::from_le_bytes(f[0x28..0x30].try_into().unwrap()) as usize;
        f[shoff + 128 + 4..shoff + 128 + 8].copy_from_slice(&8u32.to_le_bytes());
        assert_eq!(
            find_sections(&Bytes(&f), &[".nv_fatbin"]).unwrap(),
            ElfProbe::Sections(vec![])
        );
        // e_shnum 0: the count is section 0's sh_size.
        let mut f = tiny_elf(b"12345678");
        f[0x3C..0x3E].copy_from_slice(&0u16.to_le_bytes());
        f[shoff + 0x20..shoff + 0x28].copy_from_slice(&3u64.to_le_bytes());
        let ElfProbe::Sections(s) = find_sections(&Bytes(&f), &[".nv_fatbin"]).unwrap() else {
            panic!("not sections");
        };
        assert_eq!(s.len(), 1);
        f[shoff + 0x20..shoff + 0x28].copy_from_slice(&(1u64 << 30).to_le_bytes());
        assert!(matches!(
            find_sections(&Bytes(&f), &[]),
            Err(ElfError::BadHeader("implausibly many sections"))
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
