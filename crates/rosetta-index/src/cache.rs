//! The on-disk cache. Files on an index never change, so what was read from
//! a wheel is kept under its SHA-256: the raw central directory, and derived
//! answers (the model types a release registers). The last project page of
//! each index is kept too, so that `--offline` can answer; it is the one
//! entry that can go stale, and the report says when it was used.
//!
//! Writes go to a temporary file and are renamed into place, so parallel
//! workers and interrupted runs never leave half a file. A cache that cannot
//! be written is not an error for the caller: the answer is still right.

use crate::error::IndexError;
use crate::http::Page;
use crate::zip::EndRecord;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Bumped when a derived answer's parser changes, so old answers are not reused.
pub const ANSWER_VERSION: u32 = 1;

/// A cache folder.
#[derive(Debug, Clone)]
pub struct Cache {
    dir: PathBuf,
}

/// A central directory as cached: where it was and its raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedDirectory {
    /// The archive's size.
    pub total: u64,
    /// The end record that located it.
    pub end: EndRecord,
    /// The raw central directory.
    pub raw: Vec<u8>,
}

impl Cache {
    /// A cache in `dir` (created on first write).
    pub fn new(dir: impl Into<PathBuf>) -> Cache {
        Cache { dir: dir.into() }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The default folder: `$XDG_CACHE_HOME/rosetta`, else `~/.cache/rosetta`.
    pub fn default_dir(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        if let Some(x) = env("XDG_CACHE_HOME").filter(|s| !s.is_empty()) {
            return Some(Path::new(&x).join("rosetta"));
        }
        env("HOME")
            .filter(|s| !s.is_empty())
            .map(|h| Path::new(&h).join(".cache").join("rosetta"))
    }

    fn wheel_dir(&self, sha256: &str) -> Option<PathBuf> {
        // The key names a folder: accept only what a SHA-256 looks like.
        if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.dir.join("wheels").join(&sha256[..2]).join(sha256))
    }

    fn page_file(&self, index: &str, project: &str) -> PathBuf {
        self.dir
            .join("pages")
            .join(format!("{:016x}", fnv1a(index.as_bytes())))
            .join(format!("{:016x}.page", fnv1a(project.as_bytes())))
    }

    /// The last project page fetched from `index` for `project`.
    pub fn load_page(&self, index: &str, project: &str) -> Option<Page> {
        let bytes = std::fs::read(self.page_file(index, project)).ok()?;
        // Layout: url \n content-type \n body.
        let nl1 = bytes.iter().position(|&b| b == b'\n')?;
        let nl2 = nl1 + 1 + bytes[nl1 + 1..].iter().position(|&b| b == b'\n')?;
        Some(Page {
            url: String::from_utf8_lossy(&bytes[..nl1]).into_owned(),
            content_type: String::from_utf8_lossy(&bytes[nl1 + 1..nl2]).into_owned(),
            body: bytes[nl2 + 1..].to_vec(),
        })
    }

    /// Keeps a project page.
    pub fn save_page(&self, index: &str, project: &str, page: &Page) -> Result<(), IndexError> {
        let mut data = Vec::with_capacity(page.body.len() + 256);
        data.extend_from_slice(page.url.replace('\n', "").as_bytes());
        data.push(b'\n');
        data.extend_from_slice(page.content_type.replace('\n', "").as_bytes());
        data.push(b'\n');
        data.extend_from_slice(&page.body);
        write_atomic(&self.page_file(index, project), &data)
    }

    /// The cached central directory of the wheel with this SHA-256.
    pub fn load_directory(&self, sha256: &str) -> Option<CachedDirectory> {
        let bytes = std::fs::read(self.wheel_dir(sha256)?.join("cd.bin")).ok()?;
        // Layout: magic, total, eocd_offset, cd_offset, cd_size, entries, zip64 (u64 each), raw.
        let head = bytes.get(..8 * 7)?;
        if &head[..8] != b"RZCD0001" {
            return None;
        }
        let n = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&head[i * 8..i * 8 + 8]);
            u64::from_le_bytes(a)
        };
        let end = EndRecord {
            eocd_offset: n(2),
            cd_offset: n(3),
            cd_size: n(4),
            entries: n(5),
            zip64: n(6) != 0,
        };
        let raw = bytes[8 * 7..].to_vec();
        if raw.len() as u64 != end.cd_size {
            return None;
        }
        Some(CachedDirectory {
            total: n(1),
            end,
            raw,
        })
    }

    /// Keeps a central directory.
    pub fn save_directory(&self, sha256: &str, cd: &CachedDirectory) -> Result<(), IndexError> {
        let Some(dir) = self.wheel_dir(sha256) else {
            return Ok(());
        };
        let mut data = Vec::with_capacity(cd.raw.len() + 56);
        data.extend_from_slice(b"RZCD0001");
        for v in [
            cd.total,
            cd.end.eocd_offset,
            cd.end.cd_offset,
            cd.end.cd_size,
            cd.end.entries,
            u64::from(cd.end.zip64),
        ] {
            data.extend_from_slice(&v.to_le_bytes());
        }
        data.extend_from_slice(&cd.raw);
        write_atomic(&dir.join("cd.bin"), &data)
    }

    /// A derived answer kept for this wheel under `key` (e.g. `model-types`).
    pub fn load_answer(&self, sha256: &str, key: &str) -> Option<String> {
        let path = self
            .wheel_dir(sha256)?
            .join(format!("{key}.v{ANSWER_VERSION}.txt"));
        std::fs::read_to_string(path).ok()
    }

    /// Keeps a derived answer.
    pub fn save_answer(&self, sha256: &str, key: &str, text: &str) -> Result<(), IndexError> {
        let Some(dir) = self.wheel_dir(sha256) else {
            return Ok(());
        };
        write_atomic(
            &dir.join(format!("{key}.v{ANSWER_VERSION}.txt")),
            text.as_bytes(),
        )
    }
}

fn write_atomic(path: &Path, data: &[u8]) -> Result<(), IndexError> {
    let err = |e: std::io::Error| IndexError::Cache {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let tmp = dir.join(format!(
        ".tmp-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let mut f = std::fs::File::create(&tmp).map_err(err)?;
    f.write_all(data).map_err(err)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(err)
}

/// FNV-1a, 64 bits: short stable file names for URLs.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::new(dir.path());
        let sha = "ab".repeat(32);
        let cd = CachedDirectory {
            total: 100,
            end: EndRecord {
                eocd_offset: 90,
                cd_offset: 80,
                cd_size: 3,
                entries: 1,
                zip64: true,
            },
            raw: vec![1, 2, 3],
        };
        c.save_directory(&sha, &cd).unwrap();
        assert_eq!(c.load_directory(&sha), Some(cd));
        c.save_answer(&sha, "model-types", "a\nb\n").unwrap();
        assert_eq!(
            c.load_answer(&sha, "model-types").as_deref(),
            Some("a\nb\n")
        );
        let page = Page {
            url: "http://h/simple/x/".into(),
            content_type: "text/html".into(),
            body: b"<html>\n</html>".to_vec(),
        };
        c.save_page("http://h/simple", "x", &page).unwrap();
        let back = c.load_page("http://h/simple", "x").unwrap();
        assert_eq!(back.body, page.body);
        assert_eq!(back.content_type, "text/html");
        // Keys that are not hashes never name a path.
        assert!(c.load_answer("../../etc", "x").is_none());
        c.save_answer("../../etc", "x", "y").unwrap();
    }
}
