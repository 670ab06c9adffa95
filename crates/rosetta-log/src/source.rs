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

/// Bytes sampled at the start of a decoded stream to tell text from binary.
pub const TEXT_SAMPLE: usize = 64 * 1024;

/// Share of a sample (in percent) that is not text: NUL and control bytes other than
/// tab, newline, carriage return, form feed, backspace and escape (colour codes), and
/// bytes of invalid UTF-8. A sequence cut at the sample's end is not counted.
pub fn non_text_percent(sample: &[u8]) -> u32 {
    if sample.is_empty() {
        return 0;
    }
    let mut bad = 0usize;
    let mut chunks = sample.utf8_chunks().peekable();
    while let Some(c) = chunks.next() {
        bad += c
            .valid()
            .bytes()
            .filter(|&b| {
                (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x08 | 0x1b)) || b == 0x7f
            })
            .count();
        let last = chunks.peek().is_none();
        if !(last && c.invalid().len() < 4 && sample.len() >= TEXT_SAMPLE) {
            bad += c.invalid().len();
        }
    }
    (bad * 100 / sample.len()) as u32
}

/// Reads the first bytes of a decoded stream and refuses it when it is not text (more
/// than a tenth of the sample); otherwise gives back a reader of the whole stream.
pub fn text_reader(
    name: &Path,
    mut reader: Box<dyn Read + Send>,
) -> Result<Box<dyn Read + Send>, LogError> {
    let mut head = Vec::with_capacity(TEXT_SAMPLE);
    // A stream that breaks inside the sample (a truncated .gz) still yields what it
    // decoded, and then its error, so the scan reports it as a note.
    let failed = (&mut reader)
        .take(TEXT_SAMPLE as u64)
        .read_to_end(&mut head)
        .err();
    let percent = non_text_percent(&head);
    if percent > 10 {
        return Err(LogError::NotText {
            path: name.to_path_buf(),
            percent,
            sampled: head.len(),
        });
    }
    match failed {
        None => Ok(Box::new(io::Cursor::new(head).chain(reader))),
        Some(e) => Ok(Box::new(io::Cursor::new(head).chain(Failed(Some(e))))),
    }
}

/// A reader that fails once with the error it holds, then ends.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
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
    fn logs_are_text_and_random_bytes_are_not() {
        let log = "[2026-02-24 10:11:06 TP2] \x1b[31mERROR\x1b[0m bad thing\r\n\tat x\n".repeat(50);
        assert_eq!(non_text_percent(log.as_bytes()), 0);
        // Non-ASCII text (CJK, Cyrillic, emoji) is text.
        assert_eq!(
            non_text_percent("模型加载失败 ошибка 🔥\n".repeat(20).as_bytes()),
            0
        );
        // A few stray bytes in a long log are read lossily, not refused.
        let mut mixed = log.clone().into_bytes();
        mixed.extend_from_slice(b"\xff\xfe\x00");
        assert!(non_text_percent(&mixed) <= 1);
        let mut x: u64 = 0x9E3779B97F4A7C15;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        assert!(
            non_text_percent(&noise) > 30,
            "{}",
            non_text_percent(&noise)
        );
        let err = match text_reader(Path::new("core.bin"), Box::new(io::Cursor::new(noise))) {
            Err(e) => e.to_string(),
            Ok(_) => panic!("random bytes accepted"),
        };
        assert!(
            err.starts_with("core.bin does not look like a log"),
            "{err}"
        );
        // What passes comes back whole.
        let mut r = text_reader(Path::new("x"), Box::new(io::Cursor::new(mixed.clone()))).unwrap();
        let mut back = Vec::new();
        r.read_to_end(&mut back).unwrap();
        assert_eq!(back, mixed);
    }

    #[test]
    fn a_directory_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = Source::open(dir.path()).unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
    }
}
