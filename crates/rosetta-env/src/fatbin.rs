//! Walks a CUDA fat binary section (`.nv_fatbin`, `__nv_relfatbin`) and
//! lists what code it carries: per entry the kind (SASS cubin, PTX, LTO-IR),
//! SM number, `a`/`f` variant, PTX ISA version and encoding (raw, LZ4, zstd).
//!
//! Reads only the 16-byte container headers and the 64-byte entry headers
//! (layout in `research/mechanics.md` A.2-A.4); never a payload, so it never
//! decompresses. It does not find the section in the ELF file (`elf.rs`) nor
//! judge the code against a GPU (`arch.rs`). Any bytes are accepted: offsets
//! are bounds-checked, sizes are never trusted, the work is linear in the
//! section's length and the memory bounded; anything odd becomes a note.
//!
//! Written by hand on purpose: no crate reads NVIDIA's fat binary container
//! (the format is undocumented; the layout comes from `cuobjdump` listings
//! checked against real libraries, the fixtures under `fatbin/`), and what
//! is needed is two fixed-size headers, not a general reader.

use crate::arch::Variant;
use crate::source::{u16_at, u32_at, u64_at, ReadAt};
use std::collections::BTreeMap;

/// Container magic, bytes `50 ED 55 BA`.
pub const CONTAINER_MAGIC: u32 = 0xBA55_ED50;
/// CUDA 3/4-era fat binary magic: reported, not read.
pub const LEGACY_MAGIC: u32 = 0x1EE5_5A01;

const CONTAINER_HEADER: u64 = 16;
const ENTRY_HEADER: u64 = 64;
const FLAG_LZ4: u64 = 0x2000;
const FLAG_ZSTD: u64 = 0x8000;
const FLAG_COMPRESSED_LEGACY: u64 = 0x1000;
const FLAG_ARCH_SPECIFIC: u64 = 0x10_0000;
const FLAG_FAMILY_SPECIFIC: u64 = 0x20_0000;
/// Distinct (kind, arch, variant, ISA) keys kept before the walk gives up:
/// real libraries have tens; more means garbage that happens to parse.
const MAX_CODES: usize = 1024;
/// Distinct per-container code sets kept (libtorch_cuda has a few dozen).
const MAX_MODULE_SETS: usize = 4096;
/// Bytes read at a time while skipping zero padding between containers.
const PAD_CHUNK: usize = 4096;

/// What an entry holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntryKind {
    /// A cubin (kind 2, or the old kind 4): machine code.
    Sass,
    /// PTX text (kind 1).
    Ptx,
    /// NVVM IR / LTO-IR (kind 8): needs a device link, not loadable as is.
    LtoIr,
    /// A kind this reader does not know.
    Other(u16),
}

/// One distinct piece of code: kind, SM number, variant and (PTX only) ISA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Code {
    /// What the entry holds.
    pub kind: EntryKind,
    /// SM number: 90, 100, 121.
    pub sm: u32,
    /// `a` / `f` / none, from the entry flags.
    pub variant: Variant,
    /// PTX ISA version (major, minor); `None` for cubins.
    pub isa: Option<(u16, u16)>,
}

/// How entry payloads are stored (counted, never decoded).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Encodings {
    /// Stored as is.
    pub raw: u64,
    /// Raw LZ4 block (flag 0x2000).
    pub lz4: u64,
    /// zstd frame (flag 0x8000).
    pub zstd: u64,
    /// The legacy "compressed" flag 0x1000 alone.
    pub other: u64,
}

/// The result of walking one fat binary section.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FatbinScan {
    /// Containers seen (roughly one per registered module).
    pub containers: u64,
    /// Entries seen.
    pub entries: u64,
    /// How many entries carry each distinct code.
    pub codes: BTreeMap<Code, u64>,
    /// Distinct code sets of the non-empty containers and how many
    /// containers have each: a GPU must be covered by every module, not only
    /// by the union.
    pub modules: BTreeMap<Vec<Code>, u64>,
    /// Payload encodings.
    pub encodings: Encodings,
    /// Anything odd, one line each, naming the file offset.
    pub notes: Vec<String>,
}

/// Walks the fat binary containers in `src[offset .. offset + len]`.
/// `len` is clamped to the source's size (the caller notes a truncated
/// section); nothing here fails.
pub fn walk(src: &dyn ReadAt, offset: u64, len: u64) -> FatbinScan {
    walk_visit(src, offset, len, &mut |_| {})
}

/// Where one entry lies, for a caller that must look at a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryRef {
    /// File offset of the entry header.
    pub offset: u64,
    /// Header size: the payload starts at `offset + header_size`.
    pub header_size: u64,
    /// Stored payload bytes.
    pub payload: u64,
    /// What it holds.
    pub code: Code,
    /// Stored compressed (LZ4, zstd or the legacy flag).
    pub compressed: bool,
}

/// [`walk`], calling `visit` for every entry it counts.
pub fn walk_visit(
    src: &dyn ReadAt,
    offset: u64,
    len: u64,
    visit: &mut dyn FnMut(&EntryRef),
) -> FatbinScan {
    let mut scan = FatbinScan::default();
    let size = src.size();
    let start = offset.min(size);
    let end = start.saturating_add(len).min(size);
    let mut pos = start;
    let mut hdr = [0u8; CONTAINER_HEADER as usize];
    while end - pos >= CONTAINER_HEADER {
        if src.read_exact_at(&mut hdr, pos).is_err() {
            scan.notes
                .push(format!("read fat binary header at {pos:#x}: I/O error"));
            break;
        }
        let magic = u32_at(&hdr, 0);
        if magic != CONTAINER_MAGIC {
            if magic == LEGACY_MAGIC {
                scan.notes.push(format!(
                    "legacy (CUDA 3/4 era) fat binary at {pos:#x}: not read"
                ));
                break;
            }
            match skip_zeros(src, pos, end) {
                Some(next) if next > pos => {
                    pos = next;
                    continue;
                }
                Some(_) => {
                    scan.notes.push(format!(
                        "unexpected bytes at {pos:#x}: not a fat binary container; stopped there"
                    ));
                }
                None => {} // zeros to the end: padding
            }
            break;
        }
        let header_size = u64::from(u16_at(&hdr, 6));
        let fat_size = u64_at(&hdr, 8);
        if header_size < CONTAINER_HEADER {
            scan.notes.push(format!(
                "fat binary container at {pos:#x}: header size {header_size} is below 16; stopped there"
            ));
            break;
        }
        scan.containers += 1;
        let body = pos.saturating_add(header_size).min(end);
        let body_end = match body.checked_add(fat_size) {
            Some(e) if e <= end => e,
            _ => {
                scan.notes.push(format!(
                    "fat binary container at {pos:#x} claims {fat_size} bytes, only {} are left in the section: truncated",
                    end - body
                ));
                end
            }
        };
        if !walk_entries(src, body, body_end, &mut scan, visit) {
            break;
        }
        if body_end <= pos {
            break; // cannot happen (header_size >= 16), but never loop in place
        }
        pos = body_end;
    }
    if pos < end && end - pos < CONTAINER_HEADER && scan.notes.is_empty() && !is_zero(src, pos, end)
    {
        scan.notes.push(format!(
            "{} stray bytes at the end of the fat binary section ({pos:#x})",
            end - pos
        ));
    }
    scan
}

/// Container prefix: magic, version 1, header size 16 (`research/mechanics.md` A.1).
const CONTAINER_PREFIX: [u8; 8] = [0x50, 0xED, 0x55, 0xBA, 0x01, 0x00, 0x10, 0x00];
/// ELF64, little-endian, version 1: a raw cubin when `e_machine` is 190.
const CUBIN_PREFIX: [u8; 7] = [0x7F, b'E', b'L', b'F', 2, 1, 1];
const EM_CUDA: u16 = 190;
/// Bytes searched per task when looking for embedded containers (one buffer
/// of this size per thread).
const SEARCH_RANGE: u64 = 4 << 20;

/// Finds fat binary containers and raw cubins embedded anywhere in
/// `src[offset .. offset + len]` (cuFFT keeps ~24,000 containers in `.ldata`,
/// CASK libraries in `.cask_resource`, TensorRT-LLM-style code raw cubins in
/// `.rodata`) and lists their code like [`walk`]. Unlike [`walk`] this reads
/// every byte of the range, in 4 MiB ranges on `threads` threads; a
/// candidate that does not parse cleanly is taken for a chance match and
/// skipped without a note.
pub fn find_embedded(
    src: &(dyn ReadAt + Sync),
    offset: u64,
    len: u64,
    threads: usize,
) -> FatbinScan {
    let size = src.size();
    let start = offset.min(size);
    let end = start.saturating_add(len).min(size);
    let ranges: Vec<(u64, u64)> = (0..)
        .map(|i: u64| start.saturating_add(i.saturating_mul(SEARCH_RANGE)))
        .take_while(|&a| a < end)
        .map(|a| (a, a.saturating_add(SEARCH_RANGE).min(end)))
        .collect();
    let parts = crate::par::map(&ranges, threads, |&(a, b)| search_range(src, a, b, end));
    // Ranges are searched apart; drop what lies inside something found
    // earlier (a raw cubin in the payload of a container that crosses a range
    // border).
    let mut scan = FatbinScan::default();
    let mut skip_until = start;
    for (at, next, one) in parts.into_iter().flatten() {
        if at >= skip_until {
            merge_into(&mut scan, one);
            skip_until = next;
        }
    }
    scan
}

/// Adds one walk's results to another.
pub fn merge_into(into: &mut FatbinScan, from: FatbinScan) {
    into.containers += from.containers;
    into.entries += from.entries;
    for (k, v) in from.codes {
        *into.codes.entry(k).or_insert(0) += v;
    }
    for (k, v) in from.modules {
        *into.modules.entry(k).or_insert(0) += v;
    }
    into.encodings.raw += from.encodings.raw;
    into.encodings.lz4 += from.encodings.lz4;
    into.encodings.zstd += from.encodings.zstd;
    into.encodings.other += from.encodings.other;
    into.notes.extend(from.notes);
}

/// Reads that fall inside a buffer already read are served from it.
struct Window<'a> {
    buf: &'a [u8],
    base: u64,
    file: &'a dyn ReadAt,
}

impl ReadAt for Window<'_> {
    fn size(&self) -> u64 {
        self.file.size()
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let inside = offset
            .checked_sub(self.base)
            .and_then(|rel| usize::try_from(rel).ok())
            .and_then(|rel| Some(rel..rel.checked_add(buf.len())?))
            .and_then(|r| self.buf.get(r));
        match inside {
            Some(b) => {
                buf.copy_from_slice(b);
                Ok(())
            }
            None => self.file.read_exact_at(buf, offset),
        }
    }
}

/// What was found at an offset: where it ends and its code.
type Found = (u64, u64, FatbinScan);

/// Finds the candidates that start in `[a, b)`, in offset order; containers
/// may run on to `end`.
fn search_range(src: &dyn ReadAt, a: u64, b: u64, end: u64) -> Vec<Found> {
    let mut out = Vec::new();
    // Read a little past `b` so that a prefix straddling the border is seen.
    let read_end = b.saturating_add(CONTAINER_PREFIX.len() as u64).min(end);
    let Ok(n) = usize::try_from(read_end - a) else {
        return out;
    };
    let mut buf = vec![0u8; n];
    if src.read_exact_at(&mut buf, a).is_err() {
        return out;
    }
    let mut hits: Vec<u64> = memchr::memmem::find_iter(&buf, &CONTAINER_PREFIX)
        .chain(memchr::memmem::find_iter(&buf, &CUBIN_PREFIX))
        .map(|i| a + i as u64)
        .filter(|&at| at < b)
        .collect();
    hits.sort_unstable();
    let win = Window {
        buf: &buf,
        base: a,
        file: src,
    };
    let mut skip_until = a;
    for at in hits {
        if at < skip_until {
            continue; // inside a container or cubin already found
        }
        let found = if buf[(at - a) as usize] == CONTAINER_PREFIX[0] {
            one_container(&win, at, end)
        } else {
            one_cubin(&win, at, end)
        };
        if let Some((one, next)) = found {
            out.push((at, next, one));
            skip_until = next;
        }
    }
    out
}

/// One container at `at`, if it parses without a note.
fn one_container(src: &dyn ReadAt, at: u64, end: u64) -> Option<(FatbinScan, u64)> {
    let mut hdr = [0u8; CONTAINER_HEADER as usize];
    src.read_exact_at(&mut hdr, at).ok()?;
    let fat_size = u64_at(&hdr, 8);
    let body = at + CONTAINER_HEADER;
    let body_end = body.checked_add(fat_size).filter(|&e| e <= end)?;
    let mut one = FatbinScan {
        containers: 1,
        ..FatbinScan::default()
    };
    walk_entries(src, body, body_end, &mut one, &mut |_| {});
    (one.notes.is_empty() && one.entries > 0).then_some((one, body_end))
}

/// A raw cubin (an ELF file for `EM_CUDA`) at `at`: its SM from `e_flags`
/// (ABI v7: bits 0-7, `a` = 0x800; ABI v8: bits 8-15, the `a` variant is not
/// recorded there, so it reads as plain; `research/mechanics.md` A.6).
fn one_cubin(src: &dyn ReadAt, at: u64, end: u64) -> Option<(FatbinScan, u64)> {
    let mut eh = [0u8; 64];
    src.read_exact_at(&mut eh, at).ok()?;
    if u16_at(&eh, 0x12) != EM_CUDA {
        return None;
    }
    let flags = u32_at(&eh, 0x30);
    let (sm, variant) = match eh[8] {
        7 => (
            flags & 0xFF,
            if flags & 0x800 != 0 {
                Variant::Arch
            } else {
                Variant::Plain
            },
        ),
        8 => ((flags >> 8) & 0xFF, Variant::Plain),
        _ => return None,
    };
    if !(10..=255).contains(&sm) {
        return None;
    }
    // The section header table ends the file.
    let shoff = u64_at(&eh, 0x28);
    let table = u64::from(u16_at(&eh, 0x3A)) * u64::from(u16_at(&eh, 0x3C));
    let extent = shoff.checked_add(table)?.max(64);
    let next = at.checked_add(extent).filter(|&e| e <= end)?;
    let code = Code {
        kind: EntryKind::Sass,
        sm,
        variant,
        isa: None,
    };
    let mut one = FatbinScan {
        entries: 1,
        ..FatbinScan::default()
    };
    one.codes.insert(code, 1);
    one.modules.insert(vec![code], 1);
    one.encodings.raw = 1;
    Some((one, next))
}

/// Walks the entries of one container body; false when the whole walk must stop.
fn walk_entries(
    src: &dyn ReadAt,
    start: u64,
    end: u64,
    scan: &mut FatbinScan,
    visit: &mut dyn FnMut(&EntryRef),
) -> bool {
    let mut pos = start;
    let mut module: Vec<Code> = Vec::new();
    let mut h = [0u8; ENTRY_HEADER as usize];
    let mut ok = true;
    while pos < end {
        let header_size = match read_entry_header(src, pos, end, &mut h, scan) {
            EntryHeader::Entry(n) => n,
            EntryHeader::End => break,
            EntryHeader::Failed => {
                ok = false;
                break;
            }
        };
        let payload = u64_at(&h, 8);
        let flags = u64_at(&h, 0x28);
        let code = entry_code(&h, flags);
        if !scan.codes.contains_key(&code) && scan.codes.len() >= MAX_CODES {
            scan.notes.push(format!(
                "fat binary entry at {pos:#x}: more than {MAX_CODES} distinct code targets, the section looks corrupt; stopped there"
            ));
            ok = false;
            break;
        }
        *scan.codes.entry(code).or_insert(0) += 1;
        scan.entries += 1;
        if !module.contains(&code) {
            module.push(code);
        }
        visit(&EntryRef {
            offset: pos,
            header_size,
            payload,
            code,
            compressed: flags & (FLAG_ZSTD | FLAG_LZ4 | FLAG_COMPRESSED_LEGACY) != 0,
        });
        count_encoding(&mut scan.encodings, flags);
        match pos
            .checked_add(header_size)
            .and_then(|p| p.checked_add(payload))
        {
            Some(next) if next <= end => pos = next,
            _ => {
                scan.notes.push(format!(
                    "fat binary entry at {pos:#x} ({}) claims {payload} payload bytes past the end of its container: truncated",
                    code_label(&code)
                ));
                break;
            }
        }
    }
    if !module.is_empty() && !add_module(scan, module) {
        ok = false;
    }
    ok
}

/// What reading an entry's header gave.
enum EntryHeader {
    /// An entry, with its header's size.
    Entry(u64),
    /// The container ends here (truncated, zero padding, a bad header size): walk on.
    End,
    /// The file could not be read: the whole walk stops.
    Failed,
}

/// Reads the entry header at `pos` into `h`, noting why the container ends when it does.
fn read_entry_header(
    src: &dyn ReadAt,
    pos: u64,
    end: u64,
    h: &mut [u8; ENTRY_HEADER as usize],
    scan: &mut FatbinScan,
) -> EntryHeader {
    if end - pos < ENTRY_HEADER {
        scan.notes.push(format!(
            "fat binary entry at {pos:#x}: only {} bytes left for a 64-byte header: truncated",
            end - pos
        ));
        return EntryHeader::End;
    }
    if src.read_exact_at(h, pos).is_err() {
        scan.notes
            .push(format!("read fat binary entry at {pos:#x}: I/O error"));
        return EntryHeader::Failed;
    }
    if h.iter().all(|&b| b == 0) {
        return EntryHeader::End; // zero padding to the end of the container
    }
    let header_size = u64::from(u32_at(h, 4));
    if header_size < ENTRY_HEADER {
        scan.notes.push(format!(
            "fat binary entry at {pos:#x}: header size {header_size} is below 64; rest of the container skipped"
        ));
        return EntryHeader::End;
    }
    EntryHeader::Entry(header_size)
}

/// The code an entry header names: kind, SM, variant (from `flags`) and PTX ISA.
fn entry_code(h: &[u8], flags: u64) -> Code {
    let kind = match u16_at(h, 0) {
        1 => EntryKind::Ptx,
        2 | 4 => EntryKind::Sass,
        8 => EntryKind::LtoIr,
        k => EntryKind::Other(k),
    };
    let variant = if flags & FLAG_ARCH_SPECIFIC != 0 {
        Variant::Arch
    } else if flags & FLAG_FAMILY_SPECIFIC != 0 {
        Variant::Family
    } else {
        Variant::Plain
    };
    let isa = (kind == EntryKind::Ptx).then(|| (u16_at(h, 0x1A), u16_at(h, 0x18)));
    Code {
        kind,
        sm: u32_at(h, 0x1C),
        variant,
        isa,
    }
}

/// Counts an entry under its encoding (zstd, LZ4, legacy compression, raw) by its `flags`.
fn count_encoding(enc: &mut Encodings, flags: u64) {
    if flags & FLAG_ZSTD != 0 {
        enc.zstd += 1;
    } else if flags & FLAG_LZ4 != 0 {
        enc.lz4 += 1;
    } else if flags & FLAG_COMPRESSED_LEGACY != 0 {
        enc.other += 1;
    } else {
        enc.raw += 1;
    }
}

/// Counts a container's set of codes as one module; false (with a note) when there are
/// too many distinct sets to tell apart.
fn add_module(scan: &mut FatbinScan, mut module: Vec<Code>) -> bool {
    module.sort();
    if scan.modules.contains_key(&module) || scan.modules.len() < MAX_MODULE_SETS {
        *scan.modules.entry(module).or_insert(0) += 1;
        true
    } else {
        scan.notes.push(format!(
            "more than {MAX_MODULE_SETS} distinct module code sets; the rest are not told apart"
        ));
        false
    }
}

/// Whether the fat binary in `src[offset .. offset + len]` holds only
/// registration stubs: no PTX, and every cubin stored raw and without a
/// `.text.<kernel>` section (cuFFTW's `.nv_fatbin` is one such sm_75 cubin).
/// A compressed cubin is not opened, so it counts as having kernels.
pub fn only_stubs(src: &dyn ReadAt, offset: u64, len: u64) -> bool {
    let mut entries = 0u64;
    let mut kernels = false;
    walk_visit(src, offset, len, &mut |e| {
        entries += 1;
        if kernels {
            return;
        }
        if e.code.kind != EntryKind::Sass || e.compressed {
            kernels = true;
            return;
        }
        let cubin = crate::source::Slice {
            inner: src,
            base: e.offset.saturating_add(e.header_size),
            len: e.payload,
        };
        kernels = crate::elf::has_kernel_code(&cubin) != Some(false);
    });
    entries > 0 && !kernels
}

/// A short label for notes: `sm_90a`, `compute_100 (PTX 9.0)`.
pub fn code_label(code: &Code) -> String {
    let v = code.variant.suffix();
    match code.kind {
        EntryKind::Sass => format!("sm_{}{v}", code.sm),
        EntryKind::Ptx => {
            let (a, b) = code.isa.unwrap_or((0, 0));
            format!("compute_{}{v} (PTX {a}.{b})", code.sm)
        }
        EntryKind::LtoIr => format!("lto_{}{v}", code.sm),
        EntryKind::Other(k) => format!("kind {k} sm_{}{v}", code.sm),
    }
}

/// The first 8-aligned offset at or after `pos` (relative to `pos`) that is
/// not zero, reading in chunks; `None` if only zeros remain.
fn skip_zeros(src: &dyn ReadAt, pos: u64, end: u64) -> Option<u64> {
    let mut at = pos;
    let mut buf = [0u8; PAD_CHUNK];
    while at < end {
        let n = usize::try_from((end - at).min(PAD_CHUNK as u64)).unwrap_or(PAD_CHUNK);
        if src.read_exact_at(&mut buf[..n], at).is_err() {
            return Some(at);
        }
        if let Some(i) = buf[..n].iter().position(|&b| b != 0) {
            let first = at + i as u64;
            // Back to the 8-byte boundary (relative to `pos`) holding that byte.
            return Some(first - (first - pos) % 8);
        }
        at += n as u64;
    }
    None
}

fn is_zero(src: &dyn ReadAt, pos: u64, end: u64) -> bool {
    skip_zeros(src, pos, end).is_none()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::source::Bytes;

    /// Builds an entry header + payload.
    pub(crate) fn entry(
        kind: u16,
        sm: u32,
        flags: u64,
        isa: (u16, u16),
        payload: usize,
    ) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[0..2].copy_from_slice(&kind.to_le_bytes());
        h[2..4].copy_from_slice(&0x0101u16.to_le_bytes());
        h[4..8].copy_from_slice(&64u32.to_le_bytes());
        h[8..16].copy_from_slice(&(payload as u64).to_le_bytes());
        h[0x18..0x1A].copy_from_slice(&isa.1.to_le_bytes());
        h[0x1A..0x1C].copy_from_slice(&isa.0.to_le_bytes());
        h[0x1C..0x20].copy_from_slice(&sm.to_le_bytes());
        h[0x28..0x30].copy_from_slice(&(flags | 0x11).to_le_bytes());
        h.extend(std::iter::repeat_n(0xAB, payload));
        h
    }

    /// Wraps entries in a container.
    pub(crate) fn container(entries: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = entries.concat();
        let mut c = Vec::new();
        c.extend_from_slice(&CONTAINER_MAGIC.to_le_bytes());
        c.extend_from_slice(&1u16.to_le_bytes());
        c.extend_from_slice(&16u16.to_le_bytes());
        c.extend_from_slice(&(body.len() as u64).to_le_bytes());
        c.extend_from_slice(&body);
        c
    }

    #[test]
    fn counts_codes_and_modules() {
        let a = container(&[
            entry(2, 80, 0, (1, 8), 16),
            entry(2, 90, FLAG_ARCH_SPECIFIC, (1, 8), 8),
            entry(1, 100, FLAG_ARCH_SPECIFIC | FLAG_ZSTD, (9, 0), 24),
        ]);
        let b = container(&[entry(2, 80, FLAG_LZ4, (1, 8), 8)]);
        let mut sec = a.clone();
        sec.extend_from_slice(&[0u8; 16]); // padding between containers
        sec.extend_from_slice(&b);
        let s = walk(&Bytes(&sec), 0, sec.len() as u64);
        assert!(s.notes.is_empty(), "{:?}", s.notes);
        assert_eq!(s.containers, 2);
        assert_eq!(s.entries, 4);
        let sm80 = Code {
            kind: EntryKind::Sass,
            sm: 80,
            variant: Variant::Plain,
            isa: None,
        };
        assert_eq!(s.codes[&sm80], 2);
        let ptx = Code {
            kind: EntryKind::Ptx,
            sm: 100,
            variant: Variant::Arch,
            isa: Some((9, 0)),
        };
        assert_eq!(s.codes[&ptx], 1);
        assert_eq!(s.modules.len(), 2);
        assert_eq!(
            s.encodings,
            Encodings {
                raw: 2,
                lz4: 1,
                zstd: 1,
                other: 0
            }
        );
    }

    #[test]
    fn truncated_and_garbage_give_notes() {
        let c = container(&[entry(2, 90, 0, (1, 8), 64)]);
        // Cut inside the payload.
        let s = walk(&Bytes(&c), 0, c.len() as u64 - 8);
        assert_eq!(s.entries, 1);
        assert!(
            s.notes.iter().any(|n| n.contains("truncated")),
            "{:?}",
            s.notes
        );
        // Garbage.
        let s = walk(&Bytes(b"hello, world, this is not a fat binary"), 0, 38);
        assert_eq!(s.entries, 0);
        assert!(s.notes[0].contains("unexpected bytes"));
        // Zero-size section.
        let s = walk(&Bytes(&c), 0, 0);
        assert_eq!(s, FatbinScan::default());
        // Offset past the end.
        let s = walk(&Bytes(&c), 10_000, 100);
        assert_eq!(s, FatbinScan::default());
    }

    #[test]
    fn entry_size_past_end() {
        let mut e = entry(2, 90, 0, (1, 8), 8);
        e[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let c = container(&[e]);
        let s = walk(&Bytes(&c), 0, c.len() as u64);
        assert_eq!(s.entries, 1);
        assert!(s.notes[0].contains("past the end"), "{:?}", s.notes);
        let mut c = container(&[entry(2, 90, 0, (1, 8), 8)]);
        c[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        let s = walk(&Bytes(&c), 0, c.len() as u64);
        assert!(s.notes[0].contains("claims"), "{:?}", s.notes);
    }
}
