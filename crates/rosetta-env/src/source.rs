//! Positioned reads: the one way the ELF and fat binary readers touch bytes.
//!
//! Headers are read with `pread` rather than through a memory map: a library
//! that pip rewrites while we read it cannot raise SIGBUS, no `unsafe` is
//! needed, and the cost is the same one page per header (measured in
//! `docs/env.md`). In-memory bytes ([`Bytes`]) implement the trait too, so the readers are
//! tested on arbitrary bytes. This module does not interpret bytes.

use std::fs::File;
use std::io;

/// Something with a length that can fill a buffer from an offset.
pub trait ReadAt {
    /// Total length in bytes.
    fn size(&self) -> u64;
    /// Fills `buf` from `offset`; an error if fewer bytes are there.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

/// Bytes in memory as a [`ReadAt`] source (tests, property tests).
#[derive(Debug, Clone, Copy)]
pub struct Bytes<'a>(pub &'a [u8]);

impl ReadAt for Bytes<'_> {
    fn size(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).map_err(|_| short())?;
        let end = start.checked_add(buf.len()).ok_or_else(short)?;
        let src = self.0.get(start..end).ok_or_else(short)?;
        buf.copy_from_slice(src);
        Ok(())
    }
}

fn short() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "read past the end")
}

/// A window `[base, base + len)` of another source, seen from offset 0:
/// a cubin inside a fat binary entry, read with the ELF reader.
#[derive(Clone, Copy)]
pub struct Slice<'a> {
    /// The whole source.
    pub inner: &'a dyn ReadAt,
    /// Where the window starts in it.
    pub base: u64,
    /// The window's length.
    pub len: u64,
}

impl ReadAt for Slice<'_> {
    fn size(&self) -> u64 {
        self.len
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let end = offset.checked_add(buf.len() as u64).ok_or_else(short)?;
        if end > self.len {
            return Err(short());
        }
        self.inner.read_exact_at(buf, self.base + offset)
    }
}

/// An open file and its length at open time.
#[derive(Debug)]
pub struct FileSource {
    file: File,
    len: u64,
}

impl FileSource {
    /// Opens `path` for positioned reads.
    pub fn open(path: &std::path::Path) -> io::Result<FileSource> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        Ok(FileSource { file, len })
    }
}

impl ReadAt for FileSource {
    fn size(&self) -> u64 {
        self.len
    }

    #[cfg(unix)]
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(&self.file, buf, offset)
    }

    #[cfg(windows)]
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        use std::os::windows::fs::FileExt;
        while !buf.is_empty() {
            let n = self.file.seek_read(buf, offset)?;
            if n == 0 {
                return Err(short());
            }
            buf = &mut buf[n..];
            offset += n as u64;
        }
        Ok(())
    }
}

/// Little-endian field readers over a header buffer whose length the caller
/// has already checked.
pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    let mut x = [0u8; 2];
    x.copy_from_slice(&b[at..at + 2]);
    u16::from_le_bytes(x)
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0u8; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_read_exactly() {
        let b: &[u8] = &[1, 2, 3, 4];
        let src = Bytes(b);
        let mut buf = [0u8; 2];
        src.read_exact_at(&mut buf, 2).unwrap();
        assert_eq!(buf, [3, 4]);
        assert!(src.read_exact_at(&mut buf, 3).is_err());
        assert!(src.read_exact_at(&mut buf, u64::MAX).is_err());
        assert_eq!(u16_at(b, 0), 0x0201);
        assert_eq!(u32_at(b, 0), 0x04030201);
    }
}
