//! Small parallel helpers on `std::thread::scope`: an order-keeping parallel
//! map with a shared work index, and a parallel directory walk made of maps.
//! No thread pool, hand-written or crate: the work here is a few thousand
//! files, and scoped threads borrow the caller's data as they are.
//!
//! Knows nothing about ELF or Python; callers pass closures.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads to use: the available parallelism, at least 16 (with a cold page
/// cache the threads wait on the disk, not the CPU: on 2 cores a cold walk of
/// 46k files took 0.48 s with 4 threads, 0.33 s with 16), at most 64.
pub fn default_threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(16)
        .clamp(16, 64)
}

/// Maps `f` over `items` on `threads` threads; results keep the input order.
pub fn map<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads.max(1).min(items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut parts: Vec<Vec<(usize, R)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        got.push((i, f(item)));
                    }
                    got
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    let mut all: Vec<(usize, R)> = parts.iter_mut().flat_map(std::mem::take).collect();
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, r)| r).collect()
}

/// A file the walk kept.
#[derive(Debug, Clone)]
pub struct Found {
    /// Its path.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walked {
    /// Files `keep` accepted.
    pub files: Vec<Found>,
    /// Folders that could not be read, one line each.
    pub notes: Vec<String>,
}

/// Walks `roots` on `threads` threads, keeping regular files whose name
/// `keep` accepts. Symbolic links are not followed (a `libfoo.so` link to
/// `libfoo.so.1` would count the library twice; a link to a folder can loop);
/// folders named in `skip_dirs` are not entered.
///
/// Breadth first, one [`map`] per depth: the folders of one depth are read in
/// parallel, their subfolders make the next depth. A site-packages tree is a
/// dozen levels deep, so the pause at each level costs less than a shared
/// work queue would in code.
pub fn walk(
    roots: Vec<PathBuf>,
    threads: usize,
    skip_dirs: &[&str],
    keep: impl Fn(&str) -> bool + Sync,
) -> Walked {
    let mut all = Walked::default();
    let mut level = roots;
    while !level.is_empty() {
        let read = map(&level, threads, |dir| read_folder(dir, skip_dirs, &keep));
        level = Vec::new();
        for (subdirs, w) in read {
            level.extend(subdirs);
            all.files.extend(w.files);
            all.notes.extend(w.notes);
        }
    }
    all.files.sort_by(|a, b| a.path.cmp(&b.path));
    all.notes.sort();
    all
}

/// One folder: its subfolders to enter and the files `keep` accepts.
fn read_folder(
    dir: &Path,
    skip_dirs: &[&str],
    keep: &(impl Fn(&str) -> bool + Sync),
) -> (Vec<PathBuf>, Walked) {
    let mut subdirs = Vec::new();
    let mut out = Walked::default();
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(err) => {
            out.notes
                .push(format!("read folder {}: {err}", dir.display()));
            return (subdirs, out);
        }
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let name = e.file_name();
        let name = name.to_string_lossy();
        if ft.is_dir() {
            if !skip_dirs.contains(&name.as_ref()) {
                subdirs.push(e.path());
            }
        } else if ft.is_file() && keep(&name) {
            let size = e.metadata().map(|m| m.len()).unwrap_or(0);
            out.files.push(Found {
                path: e.path(),
                size,
            });
        }
    }
    (subdirs, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_keeps_order() {
        let v: Vec<u32> = (0..1000).collect();
        let out = map(&v, 8, |x| x * 2);
        assert_eq!(out, v.iter().map(|x| x * 2).collect::<Vec<_>>());
        assert!(map(&Vec::<u32>::new(), 8, |x| *x).is_empty());
    }

    #[test]
    fn walks_a_tree() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for sub in ["a/b/c", "a/__pycache__", "d"] {
            fs::create_dir_all(root.join(sub)).unwrap();
        }
        for f in [
            "a/x.so",
            "a/b/c/y.so.1",
            "a/__pycache__/z.so",
            "d/readme.txt",
        ] {
            fs::write(root.join(f), b"data").unwrap();
        }
        let w = walk(vec![root.to_path_buf()], 3, &["__pycache__"], |n| {
            n.contains(".so")
        });
        let names: Vec<String> = w
            .files
            .iter()
            .map(|f| f.path.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(names, vec!["a/b/c/y.so.1", "a/x.so"]);
        assert_eq!(w.files[0].size, 4);
        assert!(w.notes.is_empty());
        let gone = walk(vec![root.join("missing")], 2, &[], |_| true);
        assert!(gone.files.is_empty());
        assert_eq!(gone.notes.len(), 1, "{:?}", gone.notes);
    }
}
