//! Reading a remote wheel without downloading it: the tail (end record), the
//! central directory, and single members, each by an HTTP range request, with
//! the bytes already fetched reused. When the server ignores ranges the
//! whole file comes back once and everything is answered from it (a note
//! says so). Counts the bytes and requests spent, for the report.
//!
//! Zip layouts are parsed in `zip`; this module only decides which bytes to
//! ask for.

use crate::error::IndexError;
use crate::http::{Client, RangeRead};
use crate::zip::{self, EndRecord, EndSearch, Entry};

/// How much of the tail to read first. Holds the whole directory of wheels
/// up to a few megabytes; for large ones the directory's missing head is one
/// more request.
pub const TAIL: u64 = 64 * 1024;
/// The first read of a wheel under [`SMALL_WHEEL`] bytes, whose directory is small too.
pub const SMALL_TAIL: u64 = 16 * 1024;
/// See [`SMALL_TAIL`].
pub const SMALL_WHEEL: u64 = 2 * 1024 * 1024;

/// A wheel on an index, read lazily.
#[derive(Debug)]
pub struct RemoteWheel<'a> {
    client: &'a Client,
    url: String,
    /// The size, once known (from the index or from `Content-Range`).
    total: Option<u64>,
    /// Fetched byte ranges: (absolute offset, bytes).
    segments: Vec<(u64, Vec<u8>)>,
    /// Whether the whole file is in `segments`.
    whole: bool,
    /// Bytes received.
    pub bytes_read: u64,
    /// Requests made.
    pub requests: u32,
    /// Things the reader had to do that the user should know.
    pub notes: Vec<String>,
}

/// A parsed central directory.
#[derive(Debug, Clone)]
pub struct Directory {
    /// The archive's size.
    pub total: u64,
    /// Where the directory was.
    pub end: EndRecord,
    /// The raw bytes (for the cache).
    pub raw: Vec<u8>,
    /// The entries.
    pub entries: Vec<Entry>,
}

impl<'a> RemoteWheel<'a> {
    /// A reader for `url`, whose size the index may have given.
    pub fn new(client: &'a Client, url: &str, size: Option<u64>) -> RemoteWheel<'a> {
        RemoteWheel {
            client,
            url: url.to_string(),
            total: size,
            segments: Vec::new(),
            whole: false,
            bytes_read: 0,
            requests: 0,
            notes: Vec::new(),
        }
    }

    /// The file's size, once known.
    pub fn total(&self) -> Option<u64> {
        self.total
    }

    fn zip_err(&self, source: zip::ZipError) -> IndexError {
        IndexError::Zip {
            url: self.url.clone(),
            source,
        }
    }

    fn take(&mut self, r: RangeRead) {
        self.requests += 1;
        self.bytes_read += r.len();
        match r {
            RangeRead::Partial {
                offset,
                bytes,
                total,
            } => {
                self.total = Some(total);
                self.segments.push((offset, bytes));
            }
            RangeRead::Whole { bytes } => {
                self.total = Some(bytes.len() as u64);
                self.segments = vec![(0, bytes)];
                self.whole = true;
                self.notes.push(
                    "the server ignored range requests: the whole file was downloaded".into(),
                );
            }
        }
    }

    /// Bytes `start..end`, fetching whatever part is not here yet.
    fn bytes(&mut self, start: u64, end: u64) -> Result<Vec<u8>, IndexError> {
        if end <= start {
            return Ok(Vec::new());
        }
        // Fetch the gaps (usually none or one) in one request spanning them.
        if let Some((gs, ge)) = self.gap_span(start, end) {
            let r = self
                .client
                .read_range(&self.url, Some(gs), ge, self.total)?;
            self.take(r);
        }
        self.assemble(start, end)
            .ok_or_else(|| IndexError::BadRange {
                url: self.url.clone(),
                what: format!("bytes {start}..{end} are still missing after reading them"),
            })
    }

    /// The smallest range covering every byte of `start..end` not yet fetched.
    fn gap_span(&self, start: u64, end: u64) -> Option<(u64, u64)> {
        if self.whole {
            return None;
        }
        let mut lo = None;
        let mut hi = start;
        let mut pos = start;
        while pos < end {
            let covering = self
                .segments
                .iter()
                .filter(|(o, b)| *o <= pos && pos < *o + b.len() as u64)
                .map(|(o, b)| *o + b.len() as u64)
                .max();
            match covering {
                Some(seg_end) => pos = seg_end.min(end),
                None => {
                    let next = self
                        .segments
                        .iter()
                        .map(|(o, _)| *o)
                        .filter(|&o| o > pos && o < end)
                        .min()
                        .unwrap_or(end);
                    lo.get_or_insert(pos);
                    hi = next;
                    pos = next;
                }
            }
        }
        lo.map(|l| (l, hi))
    }

    fn assemble(&self, start: u64, end: u64) -> Option<Vec<u8>> {
        let len = usize::try_from(end - start).ok()?;
        let mut out = vec![0u8; len];
        let mut filled = vec![false; len];
        for (o, b) in &self.segments {
            let s = start.max(*o);
            let e = end.min(*o + b.len() as u64);
            if s >= e {
                continue;
            }
            let (ds, de) = ((s - start) as usize, (e - start) as usize);
            let (ss, se) = ((s - o) as usize, (e - o) as usize);
            out[ds..de].copy_from_slice(&b[ss..se]);
            filled[ds..de].iter_mut().for_each(|f| *f = true);
        }
        filled.iter().all(|&f| f).then_some(out)
    }

    /// Reads the end record and the central directory.
    pub fn directory(&mut self) -> Result<Directory, IndexError> {
        // The tail: an explicit range when the size is known, else a suffix range.
        let (tail_off, tail) = match self.total {
            Some(total) => {
                let tail = if total < SMALL_WHEEL {
                    SMALL_TAIL
                } else {
                    TAIL
                };
                let off = total.saturating_sub(tail);
                (off, self.bytes(off, total)?)
            }
            None => {
                let r = self.client.read_range(&self.url, None, TAIL, None)?;
                self.take(r);
                let total = self.total.unwrap_or(0);
                let off = total.saturating_sub(TAIL);
                (off, self.bytes(off, total)?)
            }
        };
        let total = self.total.unwrap_or(tail.len() as u64);
        let mut search = zip::find_end_record(&tail, tail_off, total);
        if matches!(search, Err(zip::ZipError::NoEndRecord { .. })) && tail_off > 0 {
            // A long archive comment can push the record further back.
            let off = total.saturating_sub(zip::MAX_EOCD_SEARCH);
            if off < tail_off {
                let wider = self.bytes(off, total)?;
                search = zip::find_end_record(&wider, off, total);
            }
        }
        let end = match search.map_err(|e| self.zip_err(e))? {
            EndSearch::Found(end) => end,
            EndSearch::NeedZip64Record {
                offset,
                eocd_offset,
            } => {
                let rec = self.bytes(offset, offset + zip::ZIP64_EOCD_LEN)?;
                zip::parse_zip64_record(&rec, offset, eocd_offset, total)
                    .map_err(|e| self.zip_err(e))?
            }
        };
        let raw = self.bytes(end.cd_offset, end.cd_offset + end.cd_size)?;
        let entries = zip::parse_central_directory(&raw, total).map_err(|e| self.zip_err(e))?;
        Ok(Directory {
            total,
            end,
            raw,
            entries,
        })
    }

    /// Reads and decompresses several members, in one request when they lie
    /// close together (as files of one folder do in a wheel).
    pub fn members(
        &mut self,
        entries: &[&Entry],
        cd_offset: u64,
    ) -> Result<Vec<Vec<u8>>, IndexError> {
        if entries.len() > 1 {
            let start = entries
                .iter()
                .map(|e| e.local_header_offset)
                .min()
                .unwrap_or(0);
            let end = entries
                .iter()
                .map(|e| {
                    e.local_header_offset
                        .saturating_add(zip::member_read_len(e))
                })
                .max()
                .unwrap_or(0)
                .min(cd_offset)
                .min(self.total.unwrap_or(u64::MAX));
            let wanted: u64 = entries.iter().map(|e| zip::member_read_len(e)).sum();
            // Worth one request when little in between would be read for nothing.
            if end > start && end - start <= wanted.saturating_mul(2) + 64 * 1024 {
                self.bytes(start, end)?;
            }
        }
        entries.iter().map(|e| self.member(e, cd_offset)).collect()
    }

    /// Reads and decompresses one member.
    pub fn member(&mut self, entry: &Entry, cd_offset: u64) -> Result<Vec<u8>, IndexError> {
        let start = entry.local_header_offset;
        let guess_end = start
            .saturating_add(zip::member_read_len(entry))
            .min(cd_offset.max(start + zip::LOCAL_HEADER_LEN))
            .min(self.total.unwrap_or(u64::MAX));
        let head = self.bytes(start, guess_end)?;
        let (ds, de) = zip::member_data_range(&head, entry).map_err(|e| self.zip_err(e))?;
        if de > self.total.unwrap_or(u64::MAX) {
            return Err(self.zip_err(zip::ZipError::BadLocalHeader {
                name: entry.name.clone(),
                what: "data runs past the end of the archive".into(),
            }));
        }
        let data = self.bytes(ds, de)?;
        zip::inflate(entry, &data).map_err(|e| self.zip_err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader_with(segments: Vec<(u64, Vec<u8>)>) -> (Client, Vec<(u64, Vec<u8>)>) {
        (
            Client::new(&crate::http::ClientOptions::default()).unwrap(),
            segments,
        )
    }

    #[test]
    fn gaps_are_computed_over_fetched_segments() {
        let (client, segs) = reader_with(vec![(10, vec![0; 10]), (30, vec![0; 10])]);
        let mut w = RemoteWheel::new(&client, "http://x", Some(100));
        w.segments = segs;
        assert_eq!(w.gap_span(10, 20), None);
        assert_eq!(w.gap_span(0, 15), Some((0, 10)));
        assert_eq!(w.gap_span(15, 35), Some((20, 30)));
        assert_eq!(w.gap_span(5, 50), Some((5, 50)));
        assert_eq!(w.assemble(12, 18).map(|v| v.len()), Some(6));
        assert_eq!(w.assemble(12, 25), None);
    }
}
