//! Log sources: files, `-` / stdin, gzip and zstd (detected by magic bytes,
//! not by extension). A source is a byte stream; this module does not split
//! lines or look at content.

use crate::error::LogError;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// How the bytes of a source are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Plain text.
    Plain,
    /// gzip (`1f 8b`).
    Gzip,
    /// zstd (`28 b5 2f fd`).
    Zstd,
}

/// An opened log: its display name and a reader of its decoded bytes.
pub struct Source {
    /// What the user called it (`-` for stdin).
    pub name: PathBuf,
    /// How it was encoded.
    pub encoding: Encoding,
    /// The decoded bytes.
    pub reader: Box<dyn Read + Send>,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("name", &self.name)
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Source {
    /// Opens a path; `-` means stdin.
    pub fn open(path: &Path) -> Result<Source, LogError> {
        if path.as_os_str() == "-" {
            return Self::from_reader(PathBuf::from("-"), Box::new(io::stdin()));
        }
        let meta = std::fs::metadata(path).map_err(|source| LogError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        if meta.is_dir() {
            return Err(LogError::Directory {
                path: path.to_path_buf(),
            });
        }
        let file = File::open(path).map_err(|source| LogError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_reader(path.to_path_buf(), Box::new(file))
    }

    /// Wraps any reader, sniffing its compression from the first bytes.
    pub fn from_reader(name: PathBuf, reader: Box<dyn Read + Send>) -> Result<Source, LogError> {
        let mut buffered = BufReader::with_capacity(1 << 16, reader);
        let head = buffered.fill_buf().map_err(|source| LogError::Read {
            path: name.clone(),
            source,
        })?;
        let encoding = sniff(head);
        let reader: Box<dyn Read + Send> = match encoding {
            Encoding::Plain => Box::new(buffered),
            Encoding::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(buffered)),
            Encoding::Zstd => match ruzstd::decoding::StreamingDecoder::new(buffered) {
                Ok(d) => Box::new(d),
                Err(e) => {
                    return Err(LogError::Read {
                        path: name,
                        source: io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
                    })
                }
            },
        };
        Ok(Source {
            name,
            encoding,
            reader,
        })
    }
}

/// Recognises compressed streams by their magic bytes.
pub fn sniff(head: &[u8]) -> Encoding {
    if head.starts_with(&[0x1f, 0x8b]) {
        Encoding::Gzip
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Encoding::Zstd
    } else {
        Encoding::Plain
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn gzip_and_zstd_are_sniffed_and_decoded() {
        let text = b"line one\nline two\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text).unwrap();
        let gz = gz.finish().unwrap();
        let mut s = Source::from_reader("x.gz".into(), Box::new(io::Cursor::new(gz))).unwrap();
        assert_eq!(s.encoding, Encoding::Gzip);
        let mut out = Vec::new();
        s.reader.read_to_end(&mut out).unwrap();
        assert_eq!(out, text);

        let zst = ruzstd::encoding::compress_to_vec(
            &text[..],
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        let mut s = Source::from_reader("x.zst".into(), Box::new(io::Cursor::new(zst))).unwrap();
        assert_eq!(s.encoding, Encoding::Zstd);
        let mut out = Vec::new();
        s.reader.read_to_end(&mut out).unwrap();
        assert_eq!(out, text);
    }

    #[test]
    fn a_directory_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Source::open(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }
}
