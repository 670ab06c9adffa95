//! The few zip structures version archaeology needs, parsed from byte slices:
//! the end of central directory record (ZIP64 too), the central directory,
//! and one member's local header. Layouts follow PKWARE's APPNOTE.TXT (see
//! `research/mechanics.md` B.4).
//!
//! This module does no I/O: callers fetch byte ranges (by HTTP range
//! requests or from a whole file) and hand them here. Every length read from
//! the archive is checked against the bytes given and the archive's size, so
//! that any input, however broken, gives an error and never a panic or an
//! unbounded allocation. Decompressing a member lives here too (stored and
//! deflate, the two methods wheels use); nothing else of a zip is read.

use std::io::Read;

/// Signature of the end of central directory record.
const EOCD_SIG: u32 = 0x0605_4b50;
/// Signature of the ZIP64 end of central directory locator.
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// Signature of the ZIP64 end of central directory record.
const ZIP64_EOCD_SIG: u32 = 0x0606_4b50;
/// Signature of a central directory file header.
const CD_SIG: u32 = 0x0201_4b50;
/// Signature of a local file header.
const LOCAL_SIG: u32 = 0x0403_4b50;

/// Fixed size of the end of central directory record.
pub const EOCD_LEN: u64 = 22;
/// Fixed size of the ZIP64 locator.
pub const ZIP64_LOCATOR_LEN: u64 = 20;
/// Fixed size of the ZIP64 end record (without extensible data).
pub const ZIP64_EOCD_LEN: u64 = 56;
/// Fixed size of a local file header (without name and extra).
pub const LOCAL_HEADER_LEN: u64 = 30;
/// The longest tail that can hold an end record: the record plus the longest comment.
pub const MAX_EOCD_SEARCH: u64 = EOCD_LEN + 65_535;
/// The largest central directory we agree to hold in memory.
pub const MAX_CD_SIZE: u64 = 256 * 1024 * 1024;
/// The largest member we agree to decompress.
pub const MAX_MEMBER_SIZE: u64 = 64 * 1024 * 1024;

/// What can be wrong with the bytes of a zip.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZipError {
    /// No end record in the bytes searched.
    #[error("not a zip file (no end of central directory record in the last {searched} bytes)")]
    NoEndRecord {
        /// How many bytes were searched.
        searched: u64,
    },
    /// The end record or ZIP64 record is malformed.
    #[error("malformed end of central directory record: {0}")]
    BadEndRecord(String),
    /// The central directory lies outside the archive.
    #[error("the central directory ({offset}+{size} bytes) points past the end of the {total}-byte archive")]
    DirectoryPastEnd {
        /// Where the directory says it starts.
        offset: u64,
        /// How long it says it is.
        size: u64,
        /// The archive's size.
        total: u64,
    },
    /// The central directory is larger than we agree to read.
    #[error("the central directory is {size} bytes, more than the {max} this tool reads")]
    DirectoryTooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// A central directory header is malformed.
    #[error("malformed central directory entry {index} at byte {at}: {what}")]
    BadEntry {
        /// Which entry (0-based).
        index: usize,
        /// Offset inside the central directory.
        at: usize,
        /// What is wrong.
        what: String,
    },
    /// A local header is malformed.
    #[error("malformed local header of `{name}`: {what}")]
    BadLocalHeader {
        /// The member.
        name: String,
        /// What is wrong.
        what: String,
    },
    /// A member uses a compression method we do not read.
    #[error("member `{name}` uses compression method {method}; only stored (0) and deflate (8) are read")]
    UnsupportedMethod {
        /// The member.
        name: String,
        /// The method number.
        method: u16,
    },
    /// A member is too large to decompress.
    #[error("member `{name}` is {size} bytes, more than the {max} this tool decompresses")]
    MemberTooLarge {
        /// The member.
        name: String,
        /// Its uncompressed size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// Inflating a member failed.
    #[error("cannot inflate member `{name}`: {what}")]
    Inflate {
        /// The member.
        name: String,
        /// What went wrong.
        what: String,
    },
}

/// Where the central directory is, from the end record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndRecord {
    /// Absolute offset of the end of central directory record.
    pub eocd_offset: u64,
    /// Absolute offset of the central directory.
    pub cd_offset: u64,
    /// Size of the central directory in bytes.
    pub cd_size: u64,
    /// Number of entries, as the record states it.
    pub entries: u64,
    /// Whether the ZIP64 record was used.
    pub zip64: bool,
}

/// The result of looking for the end record in a tail of the archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndSearch {
    /// Found, and everything needed was in the tail.
    Found(EndRecord),
    /// A ZIP64 archive whose ZIP64 record lies before the tail: read
    /// `ZIP64_EOCD_LEN` bytes at `offset` and call [`parse_zip64_record`].
    NeedZip64Record {
        /// Absolute offset of the ZIP64 end record.
        offset: u64,
        /// Absolute offset of the classic end record.
        eocd_offset: u64,
    },
}

/// One file in the central directory.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// The member's path inside the archive (lossy UTF-8).
    pub name: String,
    /// Compression method (0 stored, 8 deflate).
    pub method: u16,
    /// Compressed size.
    pub compressed_size: u64,
    /// Uncompressed size.
    pub uncompressed_size: u64,
    /// Absolute offset of the member's local header.
    pub local_header_offset: u64,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}

/// Finds the end record in `tail`, the last bytes of an archive of `total`
/// bytes that start at absolute offset `tail_offset`.
///
/// The search goes backwards and takes the first signature whose record and
/// comment fit before the end of the archive, as zip readers do.
pub fn find_end_record(tail: &[u8], tail_offset: u64, total: u64) -> Result<EndSearch, ZipError> {
    let searched = tail.len() as u64;
    if tail.len() < EOCD_LEN as usize {
        return Err(ZipError::NoEndRecord { searched });
    }
    let tail_end = tail_offset.saturating_add(tail.len() as u64);
    if tail_end > total {
        return Err(ZipError::BadEndRecord(format!(
            "{} bytes given at offset {tail_offset} of a {total}-byte archive",
            tail.len()
        )));
    }
    let mut pos = tail.len() - EOCD_LEN as usize;
    loop {
        if u32_at(tail, pos) == Some(EOCD_SIG) {
            let comment_len = u64::from(u16_at(tail, pos + 20).unwrap_or(0));
            let abs = tail_offset + pos as u64;
            if abs + EOCD_LEN + comment_len <= total {
                return parse_eocd_at(tail, pos, tail_offset, total);
            }
        }
        if pos == 0 {
            break;
        }
        pos -= 1;
    }
    Err(ZipError::NoEndRecord { searched })
}

fn parse_eocd_at(
    tail: &[u8],
    pos: usize,
    tail_offset: u64,
    total: u64,
) -> Result<EndSearch, ZipError> {
    let short = || ZipError::BadEndRecord("record cut short".into());
    let disk = u16_at(tail, pos + 4).ok_or_else(short)?;
    let cd_disk = u16_at(tail, pos + 6).ok_or_else(short)?;
    let entries = u16_at(tail, pos + 10).ok_or_else(short)?;
    let cd_size = u32_at(tail, pos + 12).ok_or_else(short)?;
    let cd_offset = u32_at(tail, pos + 16).ok_or_else(short)?;
    let eocd_offset = tail_offset + pos as u64;

    // A ZIP64 locator sits right before the record whenever the writer made one.
    let has_locator = pos >= ZIP64_LOCATOR_LEN as usize
        && u32_at(tail, pos - ZIP64_LOCATOR_LEN as usize) == Some(ZIP64_LOCATOR_SIG);
    let saturated = entries == 0xFFFF || cd_size == 0xFFFF_FFFF || cd_offset == 0xFFFF_FFFF;
    if has_locator {
        let loc = pos - ZIP64_LOCATOR_LEN as usize;
        let rec_offset = u64_at(tail, loc + 8).ok_or_else(short)?;
        if rec_offset.saturating_add(ZIP64_EOCD_LEN) > eocd_offset {
            return Err(ZipError::BadEndRecord(format!(
                "ZIP64 locator points at byte {rec_offset}, past the end record at {eocd_offset}"
            )));
        }
        if rec_offset >= tail_offset {
            let rel = (rec_offset - tail_offset) as usize;
            let rec = tail.get(rel..).ok_or_else(short)?;
            return parse_zip64_record(rec, rec_offset, eocd_offset, total).map(EndSearch::Found);
        }
        return Ok(EndSearch::NeedZip64Record {
            offset: rec_offset,
            eocd_offset,
        });
    }
    if saturated {
        return Err(ZipError::BadEndRecord(
            "sizes say ZIP64 but there is no ZIP64 locator".into(),
        ));
    }
    if disk != 0 || cd_disk != 0 {
        return Err(ZipError::BadEndRecord(format!(
            "multi-disk archive (disk {disk}, directory on disk {cd_disk})"
        )));
    }
    let rec = EndRecord {
        eocd_offset,
        cd_offset: u64::from(cd_offset),
        cd_size: u64::from(cd_size),
        entries: u64::from(entries),
        zip64: false,
    };
    check_directory_bounds(&rec, total)?;
    Ok(EndSearch::Found(rec))
}

/// Parses the ZIP64 end record in `bytes` (which start at absolute `offset`).
pub fn parse_zip64_record(
    bytes: &[u8],
    offset: u64,
    eocd_offset: u64,
    total: u64,
) -> Result<EndRecord, ZipError> {
    let short = || ZipError::BadEndRecord("ZIP64 record cut short".into());
    if u32_at(bytes, 0) != Some(ZIP64_EOCD_SIG) {
        return Err(ZipError::BadEndRecord(format!(
            "no ZIP64 end record signature at byte {offset}"
        )));
    }
    let entries = u64_at(bytes, 32).ok_or_else(short)?;
    let cd_size = u64_at(bytes, 40).ok_or_else(short)?;
    let cd_offset = u64_at(bytes, 48).ok_or_else(short)?;
    let rec = EndRecord {
        eocd_offset,
        cd_offset,
        cd_size,
        entries,
        zip64: true,
    };
    // With ZIP64 the directory ends where the ZIP64 record starts.
    check_directory_bounds(
        &EndRecord {
            eocd_offset: offset.min(eocd_offset),
            ..rec
        },
        total,
    )?;
    Ok(rec)
}

fn check_directory_bounds(rec: &EndRecord, total: u64) -> Result<(), ZipError> {
    let end = rec.cd_offset.checked_add(rec.cd_size);
    match end {
        Some(end) if end <= rec.eocd_offset && end <= total => {}
        _ => {
            return Err(ZipError::DirectoryPastEnd {
                offset: rec.cd_offset,
                size: rec.cd_size,
                total,
            })
        }
    }
    if rec.cd_size > MAX_CD_SIZE {
        return Err(ZipError::DirectoryTooLarge {
            size: rec.cd_size,
            max: MAX_CD_SIZE,
        });
    }
    Ok(())
}

/// Parses a whole central directory. `total` bounds the offsets it may name.
pub fn parse_central_directory(cd: &[u8], total: u64) -> Result<Vec<Entry>, ZipError> {
    // A header is at least 46 bytes: this bounds the vector whatever the record claims.
    let mut entries = Vec::with_capacity(cd.len() / 46);
    let mut at = 0usize;
    while at < cd.len() {
        let index = entries.len();
        let bad = |what: &str| ZipError::BadEntry {
            index,
            at,
            what: what.to_string(),
        };
        if u32_at(cd, at) != Some(CD_SIG) {
            // Some writers pad; anything after the last header that is not one ends the list.
            if cd.len() - at < 46 && cd[at..].iter().all(|&b| b == 0) {
                break;
            }
            return Err(bad("no central directory signature"));
        }
        let method = u16_at(cd, at + 10).ok_or_else(|| bad("header cut short"))?;
        let mut compressed = u64::from(u32_at(cd, at + 20).ok_or_else(|| bad("header cut short"))?);
        let mut uncompressed =
            u64::from(u32_at(cd, at + 24).ok_or_else(|| bad("header cut short"))?);
        let name_len = usize::from(u16_at(cd, at + 28).ok_or_else(|| bad("header cut short"))?);
        let extra_len = usize::from(u16_at(cd, at + 30).ok_or_else(|| bad("header cut short"))?);
        let comment_len = usize::from(u16_at(cd, at + 32).ok_or_else(|| bad("header cut short"))?);
        let mut local = u64::from(u32_at(cd, at + 42).ok_or_else(|| bad("header cut short"))?);
        let name_start = at + 46;
        let name = cd
            .get(name_start..name_start + name_len)
            .ok_or_else(|| bad("name runs past the directory"))?;
        let extra_start = name_start + name_len;
        let extra = cd
            .get(extra_start..extra_start + extra_len)
            .ok_or_else(|| bad("extra field runs past the directory"))?;
        let next = extra_start + extra_len + comment_len;
        if next > cd.len() {
            return Err(bad("comment runs past the directory"));
        }
        // ZIP64 extra (id 1): only the fields that were saturated, in a fixed order.
        if compressed == 0xFFFF_FFFF || uncompressed == 0xFFFF_FFFF || local == 0xFFFF_FFFF {
            let z = zip64_extra(extra).ok_or_else(|| bad("ZIP64 sizes without a ZIP64 extra"))?;
            let mut i = 0;
            let mut take = |v: &mut u64| -> Result<(), ZipError> {
                if *v == 0xFFFF_FFFF {
                    *v = u64_at(z, i).ok_or_else(|| bad("ZIP64 extra cut short"))?;
                    i += 8;
                }
                Ok(())
            };
            take(&mut uncompressed)?;
            take(&mut compressed)?;
            take(&mut local)?;
        }
        if local >= total {
            return Err(bad("local header offset past the end of the archive"));
        }
        entries.push(Entry {
            name: String::from_utf8_lossy(name).into_owned(),
            method,
            compressed_size: compressed,
            uncompressed_size: uncompressed,
            local_header_offset: local,
        });
        at = next;
    }
    Ok(entries)
}

/// The payload of the ZIP64 extended information extra field, if present.
fn zip64_extra(extra: &[u8]) -> Option<&[u8]> {
    let mut at = 0usize;
    while at + 4 <= extra.len() {
        let id = u16_at(extra, at)?;
        let len = usize::from(u16_at(extra, at + 2)?);
        let data = extra.get(at + 4..at + 4 + len)?;
        if id == 0x0001 {
            return Some(data);
        }
        at += 4 + len;
    }
    None
}

/// How many bytes to read at `entry.local_header_offset` to be likely to
/// get the local header and the whole compressed member in one request.
/// The local extra field may differ from the central one; the slack covers
/// the usual cases and [`member_data_range`] says when it did not.
pub fn member_read_len(entry: &Entry) -> u64 {
    LOCAL_HEADER_LEN + entry.name.len() as u64 + entry.compressed_size + 1024
}

/// Given bytes read at the member's local header, the absolute range of its
/// compressed data (which may extend past the bytes given).
pub fn member_data_range(local: &[u8], entry: &Entry) -> Result<(u64, u64), ZipError> {
    let bad = |what: &str| ZipError::BadLocalHeader {
        name: entry.name.clone(),
        what: what.to_string(),
    };
    if u32_at(local, 0) != Some(LOCAL_SIG) {
        return Err(bad("no local header signature"));
    }
    let n = u64::from(u16_at(local, 26).ok_or_else(|| bad("cut short"))?);
    let m = u64::from(u16_at(local, 28).ok_or_else(|| bad("cut short"))?);
    let start = entry
        .local_header_offset
        .checked_add(LOCAL_HEADER_LEN + n + m)
        .ok_or_else(|| bad("offset overflows"))?;
    let end = start
        .checked_add(entry.compressed_size)
        .ok_or_else(|| bad("size overflows"))?;
    Ok((start, end))
}

/// Decompresses a member's data.
pub fn inflate(entry: &Entry, data: &[u8]) -> Result<Vec<u8>, ZipError> {
    if entry.uncompressed_size > MAX_MEMBER_SIZE {
        return Err(ZipError::MemberTooLarge {
            name: entry.name.clone(),
            size: entry.uncompressed_size,
            max: MAX_MEMBER_SIZE,
        });
    }
    match entry.method {
        0 => Ok(data.to_vec()),
        8 => {
            let mut out = Vec::with_capacity(entry.uncompressed_size as usize);
            let dec = flate2::read::DeflateDecoder::new(data);
            // Never trust the stated size: read at most one byte past it.
            dec.take(entry.uncompressed_size + 1)
                .read_to_end(&mut out)
                .map_err(|e| ZipError::Inflate {
                    name: entry.name.clone(),
                    what: e.to_string(),
                })?;
            if out.len() as u64 != entry.uncompressed_size {
                return Err(ZipError::Inflate {
                    name: entry.name.clone(),
                    what: format!(
                        "{} bytes out, the directory says {}",
                        out.len(),
                        entry.uncompressed_size
                    ),
                });
            }
            Ok(out)
        }
        method => Err(ZipError::UnsupportedMethod {
            name: entry.name.clone(),
            method,
        }),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A minimal zip writer for tests: stored or deflated members, optional ZIP64 records.
    pub fn build_zip(members: &[(&str, &[u8])], zip64: bool, deflate: bool) -> Vec<u8> {
        let mut out = Vec::new();
        let mut cd = Vec::new();
        for (name, data) in members {
            let (method, payload) = compressed(data, deflate);
            let offset = out.len() as u64;
            push_local_member(&mut out, name, method, data, &payload);
            push_cd_entry(&mut cd, name, method, data, &payload, offset, zip64);
        }
        let cd_offset = out.len() as u64;
        out.extend_from_slice(&cd);
        if zip64 {
            push_zip64_end(&mut out, members.len() as u64, cd.len() as u64, cd_offset);
        }
        push_end_record(&mut out, members.len(), cd.len(), cd_offset, zip64);
        out
    }

    /// A member's method and payload: deflated (8) or stored (0).
    fn compressed(data: &[u8], deflate: bool) -> (u16, Vec<u8>) {
        use std::io::Write;
        if deflate {
            let mut e =
                flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            (8u16, e.finish().unwrap())
        } else {
            (0u16, data.to_vec())
        }
    }

    /// Appends a member's local header and its payload.
    fn push_local_member(out: &mut Vec<u8>, name: &str, method: u16, data: &[u8], payload: &[u8]) {
        out.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0]);
        out.extend_from_slice(&method.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&[0; 4]); // crc (unchecked here)
        out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(payload);
    }

    /// Appends a member's central directory entry, its sizes and offset in a ZIP64 extra
    /// field when `zip64`.
    fn push_cd_entry(
        cd: &mut Vec<u8>,
        name: &str,
        method: u16,
        data: &[u8],
        payload: &[u8],
        offset: u64,
        zip64: bool,
    ) {
        cd.extend_from_slice(&CD_SIG.to_le_bytes());
        cd.extend_from_slice(&[20, 0, 20, 0, 0, 0]);
        cd.extend_from_slice(&method.to_le_bytes());
        cd.extend_from_slice(&[0; 8]);
        let (c, u, o, extra) = if zip64 {
            let mut x = Vec::new();
            x.extend_from_slice(&1u16.to_le_bytes());
            x.extend_from_slice(&24u16.to_le_bytes());
            x.extend_from_slice(&(data.len() as u64).to_le_bytes());
            x.extend_from_slice(&(payload.len() as u64).to_le_bytes());
            x.extend_from_slice(&offset.to_le_bytes());
            (0xFFFF_FFFFu32, 0xFFFF_FFFFu32, 0xFFFF_FFFFu32, x)
        } else {
            (
                payload.len() as u32,
                data.len() as u32,
                offset as u32,
                Vec::new(),
            )
        };
        cd.extend_from_slice(&c.to_le_bytes());
        cd.extend_from_slice(&u.to_le_bytes());
        cd.extend_from_slice(&(name.len() as u16).to_le_bytes());
        cd.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        // comment length, disk, internal and external attributes
        cd.extend_from_slice(&[0; 10]);
        cd.extend_from_slice(&o.to_le_bytes());
        cd.extend_from_slice(name.as_bytes());
        cd.extend_from_slice(&extra);
    }

    /// Appends the ZIP64 end of central directory record and its locator.
    fn push_zip64_end(out: &mut Vec<u8>, entries: u64, cd_len: u64, cd_offset: u64) {
        let rec = out.len() as u64;
        out.extend_from_slice(&ZIP64_EOCD_SIG.to_le_bytes());
        out.extend_from_slice(&44u64.to_le_bytes());
        out.extend_from_slice(&[45, 0, 45, 0]);
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&entries.to_le_bytes());
        out.extend_from_slice(&entries.to_le_bytes());
        out.extend_from_slice(&cd_len.to_le_bytes());
        out.extend_from_slice(&cd_offset.to_le_bytes());
        out.extend_from_slice(&ZIP64_LOCATOR_SIG.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&rec.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }

    /// Appends the classic end record; its counts and offsets all ones when `zip64`.
    fn push_end_record(
        out: &mut Vec<u8>,
        entries: usize,
        cd_len: usize,
        cd_offset: u64,
        zip64: bool,
    ) {
        out.extend_from_slice(&EOCD_SIG.to_le_bytes());
        out.extend_from_slice(&[0; 4]);
        let n = if zip64 { 0xFFFFu16 } else { entries as u16 };
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&n.to_le_bytes());
        let (s, o) = if zip64 {
            (0xFFFF_FFFFu32, 0xFFFF_FFFFu32)
        } else {
            (cd_len as u32, cd_offset as u32)
        };
        out.extend_from_slice(&s.to_le_bytes());
        out.extend_from_slice(&o.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
    }

    fn read_all(zip: &[u8]) -> Vec<(String, Vec<u8>)> {
        let total = zip.len() as u64;
        let EndSearch::Found(end) = find_end_record(zip, 0, total).unwrap() else {
            panic!("need zip64 record")
        };
        let cd = &zip[end.cd_offset as usize..(end.cd_offset + end.cd_size) as usize];
        let entries = parse_central_directory(cd, total).unwrap();
        assert_eq!(entries.len() as u64, end.entries);
        entries
            .iter()
            .map(|e| {
                let local = &zip[e.local_header_offset as usize..];
                let (s, t) = member_data_range(local, e).unwrap();
                (
                    e.name.clone(),
                    inflate(e, &zip[s as usize..t as usize]).unwrap(),
                )
            })
            .collect()
    }

    #[test]
    fn round_trips_plain_and_zip64_archives() {
        let members: &[(&str, &[u8])] = &[
            ("pkg/__init__.py", b"x = 1\n"),
            ("pkg/models/a.py", b"hello hello hello hello"),
        ];
        for zip64 in [false, true] {
            for deflate in [false, true] {
                let z = build_zip(members, zip64, deflate);
                let got = read_all(&z);
                assert_eq!(got.len(), 2);
                assert_eq!(got[1].0, "pkg/models/a.py");
                assert_eq!(got[1].1, b"hello hello hello hello");
            }
        }
    }

    #[test]
    fn zip64_record_before_the_tail_is_asked_for() {
        let z = build_zip(&[("a", b"1")], true, false);
        let total = z.len() as u64;
        // Give only the classic record and the locator.
        let tail_off = total - EOCD_LEN - ZIP64_LOCATOR_LEN;
        let r = find_end_record(&z[tail_off as usize..], tail_off, total).unwrap();
        let EndSearch::NeedZip64Record {
            offset,
            eocd_offset,
        } = r
        else {
            panic!("{r:?}")
        };
        let rec = parse_zip64_record(&z[offset as usize..], offset, eocd_offset, total).unwrap();
        assert!(rec.zip64);
        assert_eq!(rec.entries, 1);
    }

    #[test]
    fn directory_past_the_end_is_an_error() {
        let mut z = build_zip(&[("a", b"1")], false, false);
        let n = z.len();
        // cd offset field of the end record
        z[n - 6..n - 2].copy_from_slice(&1_000_000u32.to_le_bytes());
        let err = find_end_record(&z, 0, n as u64).unwrap_err();
        assert!(matches!(err, ZipError::DirectoryPastEnd { .. }), "{err}");
        assert!(err.to_string().contains("points past the end"));
    }

    #[test]
    fn not_a_zip_is_an_error() {
        let err = find_end_record(b"<html>hello</html> and some more bytes", 0, 38).unwrap_err();
        assert!(matches!(err, ZipError::NoEndRecord { .. }));
    }

    proptest! {
        #[test]
        fn end_record_search_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512), extra in 0u64..1_000_000) {
            let total = bytes.len() as u64 + extra;
            let _ = find_end_record(&bytes, extra, total);
            let _ = parse_zip64_record(&bytes, 0, total, total);
        }

        #[test]
        fn end_record_search_with_planted_signatures_never_panics(
            mut bytes in proptest::collection::vec(any::<u8>(), 22..256),
            at in 0usize..200,
            loc in any::<bool>(),
        ) {
            let at = at % (bytes.len() - 21);
            bytes[at..at + 4].copy_from_slice(&EOCD_SIG.to_le_bytes());
            if loc && at >= 20 {
                bytes[at - 20..at - 16].copy_from_slice(&ZIP64_LOCATOR_SIG.to_le_bytes());
            }
            let total = bytes.len() as u64;
            let _ = find_end_record(&bytes, 0, total);
        }

        #[test]
        fn central_directory_parser_never_panics(
            mut bytes in proptest::collection::vec(any::<u8>(), 0..1024),
            plant in any::<bool>(),
            total in any::<u64>(),
        ) {
            if plant && bytes.len() >= 4 {
                bytes[0..4].copy_from_slice(&CD_SIG.to_le_bytes());
            }
            if let Ok(entries) = parse_central_directory(&bytes, total) {
                prop_assert!(entries.len() <= bytes.len() / 46 + 1);
                for e in &entries {
                    let _ = member_data_range(&bytes, e);
                    let _ = inflate(e, &bytes);
                }
            }
        }

        #[test]
        fn truncated_real_archives_never_panic(cut in 0usize..400, zip64 in any::<bool>()) {
            let z = build_zip(&[("a/b.py", b"print(1)"), ("c", b"")], zip64, true);
            let cut = cut.min(z.len());
            let part = &z[cut..];
            let _ = find_end_record(part, cut as u64, z.len() as u64);
            let _ = parse_central_directory(part, z.len() as u64);
        }
    }
}
