//! The Python environment: which interpreter, its site-packages folders, the
//! installed distributions (name and version straight from
//! `*.dist-info/METADATA`, which shared libraries each installed from its
//! `RECORD`), and the torch build (`torch/version.py`).
//!
//! The interpreter is asked once, for its paths only; nothing is imported.
//! Packages are never imported either. A missing interpreter is a note, an
//! interpreter the user named that does not answer is an error. This module
//! does not look inside the libraries (`scan.rs`).

use crate::command::{self, RunError};
use crate::error::EnvError;
use crate::report::{normalize_name, Package, PythonInfo, TorchBuild};
use std::collections::HashMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the interpreter may take to print its paths.
const DEADLINE: Duration = Duration::from_secs(20);
/// METADATA headers sit at the top; the long description after them is not read.
const METADATA_HEAD: u64 = 64 * 1024;

/// What the interpreter is asked: its version and import path, as JSON.
const QUERY: &str = "import json, sys, sysconfig\n\
p = sysconfig.get_paths()\n\
print(json.dumps({'executable': sys.executable, 'version': '%d.%d.%d' % sys.version_info[:3], \
'purelib': p.get('purelib'), 'platlib': p.get('platlib'), 'path': sys.path}))";

/// The interpreter to ask when none is named: the active virtualenv's, the
/// active conda env's, else `python3` (then `python`) on `PATH`.
pub fn default_interpreter() -> Option<PathBuf> {
    for var in ["VIRTUAL_ENV", "CONDA_PREFIX"] {
        if let Some(prefix) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            for name in ["bin/python3", "bin/python"] {
                let p = Path::new(&prefix).join(name);
                if p.is_file() {
                    return Some(p);
                }
            }
        }
    }
    command::which("python3").or_else(|| command::which("python"))
}

/// Asks `python` for its version and site-packages folders.
pub fn ask_interpreter(python: &Path) -> Result<PythonInfo, EnvError> {
    let err = |reason: String| EnvError::Python {
        path: python.to_path_buf(),
        reason,
    };
    let out = command::run(python, &["-c", QUERY], DEADLINE).map_err(|e| match e {
        RunError::NotFound => err("not found".into()),
        e => err(e.to_string()),
    })?;
    let line = out.lines().rev().find(|l| l.trim_start().starts_with('{'));
    let v: serde_json::Value = line
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| err("it printed no JSON".into()))?;
    let s = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
    let mut dirs: Vec<String> = Vec::new();
    let from_path = v
        .get("path")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str())
        .filter(|p| p.ends_with("site-packages") || p.ends_with("dist-packages"))
        .map(str::to_string);
    for d in from_path.chain(s("purelib")).chain(s("platlib")) {
        if Path::new(&d).is_dir() && !dirs.contains(&d) {
            dirs.push(d);
        }
    }
    // The same folder under two spellings (a lib64 -> lib link) once.
    let mut seen = Vec::new();
    dirs.retain(|d| {
        let c = fs::canonicalize(d).unwrap_or_else(|_| PathBuf::from(d));
        let fresh = !seen.contains(&c);
        seen.push(c);
        fresh
    });
    Ok(PythonInfo {
        executable: s("executable").or_else(|| Some(python.display().to_string())),
        version: s("version"),
        site_packages: dirs,
    })
}

/// One installed distribution and the shared libraries its RECORD lists.
#[derive(Debug, Clone, Default)]
pub struct Dist {
    /// Name and version.
    pub package: Package,
    /// Absolute paths of the `.so` files it installed.
    pub libs: Vec<PathBuf>,
    /// First path components of what it installed (`torch`, `nvidia`).
    pub top_level: Vec<String>,
}

/// Reads every `*.dist-info` (and `*.egg-info`) in `site`, in name order.
pub fn read_site(site: &Path, threads: usize) -> (Vec<Dist>, Vec<String>) {
    let mut notes = Vec::new();
    let entries = match fs::read_dir(site) {
        Ok(rd) => rd,
        Err(e) => {
            notes.push(format!("read site-packages {}: {e}", site.display()));
            return (Vec::new(), notes);
        }
    };
    let mut infos: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|x| x == "dist-info" || x == "egg-info")
        })
        .collect();
    infos.sort();
    let read = crate::par::map(&infos, threads, |p| read_dist(site, p));
    let mut dists = Vec::new();
    for r in read {
        match r {
            Ok(d) => dists.push(d),
            Err(n) => notes.push(n),
        }
    }
    (dists, notes)
}

fn read_dist(site: &Path, info: &Path) -> Result<Dist, String> {
    let is_egg = info.extension().is_some_and(|x| x == "egg-info");
    let meta = if is_egg && info.is_file() {
        info.to_path_buf()
    } else if is_egg {
        info.join("PKG-INFO")
    } else {
        info.join("METADATA")
    };
    let head = read_head(&meta).map_err(|e| format!("read {}: {e}", meta.display()))?;
    let (name, version) = parse_metadata(&head)
        .ok_or_else(|| format!("read {}: no Name or Version header", meta.display()))?;
    let mut dist = Dist {
        package: Package { name, version },
        ..Dist::default()
    };
    if !is_egg {
        if let Ok(record) = fs::read_to_string(info.join("RECORD")) {
            let mut tops: Vec<String> = Vec::new();
            for rel in record.lines().filter_map(record_path) {
                if rel.starts_with("..") || rel.starts_with('/') {
                    continue;
                }
                if let Some(top) = rel.split('/').next() {
                    if !top.ends_with(".dist-info") && !tops.iter().any(|t| t == top) {
                        tops.push(top.to_string());
                    }
                }
                let file = rel.rsplit('/').next().unwrap_or(rel);
                if is_shared_object_name(file) {
                    dist.libs.push(site.join(rel));
                }
            }
            dist.top_level = tops;
        }
    }
    Ok(dist)
}

fn read_head(path: &Path) -> std::io::Result<String> {
    let mut buf = Vec::new();
    fs::File::open(path)?
        .take(METADATA_HEAD)
        .read_to_end(&mut buf)?;
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// `Name:` and `Version:` from the header block of METADATA / PKG-INFO.
pub fn parse_metadata(text: &str) -> Option<(String, String)> {
    let mut name = None;
    let mut version = None;
    for line in text.lines() {
        if line.trim().is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Name:") {
            name.get_or_insert_with(|| v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("Version:") {
            version.get_or_insert_with(|| v.trim().to_string());
        }
    }
    Some((name?, version?))
}

/// The path field of a RECORD line (CSV; a path with a comma is quoted).
fn record_path(line: &str) -> Option<&str> {
    if let Some(rest) = line.strip_prefix('"') {
        // Quoted: "a,b.so",sha256=...,123 (a doubled quote inside is rare; keep it simple).
        return rest.split_once('"').map(|(p, _)| p);
    }
    let p = line.split(',').next()?;
    (!p.is_empty()).then_some(p)
}

/// `libfoo.so`, `libfoo.so.12`, `_C.cpython-312-x86_64-linux-gnu.so`.
pub fn is_shared_object_name(name: &str) -> bool {
    name.ends_with(".so") || name.contains(".so.")
}

/// Who installed each library: its RECORD, else the only distribution that
/// installed into the same top-level folder.
#[derive(Debug, Default)]
pub struct Owners {
    by_path: HashMap<PathBuf, String>,
    by_top: HashMap<(PathBuf, String), Option<String>>,
}

impl Owners {
    /// Indexes the distributions of one site-packages folder.
    pub fn add_site(&mut self, site: &Path, dists: &[Dist]) {
        for d in dists {
            for lib in &d.libs {
                self.by_path
                    .entry(lib.clone())
                    .or_insert_with(|| d.package.name.clone());
            }
            for top in &d.top_level {
                let key = (site.to_path_buf(), top.clone());
                match self.by_top.get(&key) {
                    None => {
                        self.by_top.insert(key, Some(d.package.name.clone()));
                    }
                    Some(Some(other)) if other != &d.package.name => {
                        // Shared namespace (`nvidia/`): no single owner.
                        self.by_top.insert(key, None);
                    }
                    _ => {}
                }
            }
        }
    }

    /// The distribution that installed `path`, if known.
    pub fn owner(&self, path: &Path) -> Option<String> {
        if let Some(n) = self.by_path.get(path) {
            return Some(n.clone());
        }
        for ((site, top), owner) in &self.by_top {
            if let Ok(rel) = path.strip_prefix(site) {
                if rel
                    .components()
                    .next()
                    .is_some_and(|c| c.as_os_str() == top.as_str())
                {
                    return owner.clone();
                }
            }
        }
        None
    }
}

/// Reads `torch/version.py` from the first site-packages folder that has torch.
pub fn torch_build(sites: &[String], packages: &[Package]) -> Option<TorchBuild> {
    for site in sites {
        let path = Path::new(site).join("torch").join("version.py");
        let Ok(text) = fs::read_to_string(&path) else {
            continue;
        };
        let mut t = parse_torch_version(&text);
        if t.version.is_empty() {
            if let Some(p) = packages.iter().find(|p| normalize_name(&p.name) == "torch") {
                t.version = p.version.clone();
            }
        }
        t.path = path.display().to_string();
        return Some(t);
    }
    None
}

/// Parses `__version__ = '2.11.0+cu130'`, `cuda: Optional[str] = '13.0'`, `hip = None`.
pub fn parse_torch_version(text: &str) -> TorchBuild {
    let mut t = TorchBuild::default();
    for line in text.lines() {
        let Some((lhs, rhs)) = line.split_once('=') else {
            continue;
        };
        let key = lhs.split(':').next().unwrap_or("").trim();
        let value = rhs.trim();
        let quoted = value
            .strip_prefix('\'')
            .and_then(|v| v.split_once('\''))
            .or_else(|| value.strip_prefix('"').and_then(|v| v.split_once('"')))
            .map(|(v, _)| v.to_string());
        match key {
            "__version__" => t.version = quoted.unwrap_or_default(),
            "cuda" => t.cuda = quoted,
            "hip" => t.hip = quoted,
            _ => {}
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_headers() {
        let m = "Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\nSummary: x\n\nName: not-this\n";
        assert_eq!(
            parse_metadata(m),
            Some(("torch".to_string(), "2.11.0+cu130".to_string()))
        );
        assert_eq!(parse_metadata("Name: x\n"), None);
    }

    #[test]
    fn torch_version_py() {
        let t = parse_torch_version(
            "from typing import Optional\n__all__ = ['__version__']\n__version__ = '2.11.0+cu130'\ndebug = False\ncuda: Optional[str] = '13.0'\ngit_version = 'abc'\nhip: Optional[str] = None\n",
        );
        assert_eq!(t.version, "2.11.0+cu130");
        assert_eq!(t.cuda.as_deref(), Some("13.0"));
        assert_eq!(t.hip, None);
        let t = parse_torch_version("__version__ = \"2.3.0\"\ncuda = None\nhip = '6.0.32830'\n");
        assert_eq!(t.cuda, None);
        assert_eq!(t.hip.as_deref(), Some("6.0.32830"));
    }

    #[test]
    fn torch_version_py_of_the_h200() {
        let t = parse_torch_version(include_str!("../tests/fixtures/h200/torch-version.py"));
        assert_eq!(t.version, "2.11.0+cu130");
        assert_eq!(t.cuda.as_deref(), Some("13.0"));
        assert_eq!(t.hip, None);
    }

    #[test]
    fn record_lines() {
        assert_eq!(
            record_path("torch/lib/libc10.so,sha256=x,12"),
            Some("torch/lib/libc10.so")
        );
        assert_eq!(record_path("\"a,b.so\",sha256=x,1"), Some("a,b.so"));
        assert!(is_shared_object_name("libcublas.so.13"));
        assert!(is_shared_object_name("_C.cpython-312-x86_64-linux-gnu.so"));
        assert!(!is_shared_object_name("solver.py"));
    }

    #[test]
    fn reads_a_site() {
        let d = tempfile::tempdir().unwrap();
        let site = d.path();
        let info = site.join("nvidia_cublas-13.0.2.dist-info");
        fs::create_dir_all(&info).unwrap();
        fs::write(
            info.join("METADATA"),
            "Name: nvidia-cublas\nVersion: 13.0.2\n\nlong text",
        )
        .unwrap();
        fs::write(
            info.join("RECORD"),
            "nvidia/cublas/lib/libcublas.so.13,sha256=a,1\nnvidia_cublas-13.0.2.dist-info/RECORD,,\n../../bin/x,,\n",
        )
        .unwrap();
        let info = site.join("nvidia_nccl_cu13-2.28.dist-info");
        fs::create_dir_all(&info).unwrap();
        fs::write(
            info.join("METADATA"),
            "Name: nvidia-nccl-cu13\nVersion: 2.28\n",
        )
        .unwrap();
        fs::write(info.join("RECORD"), "nvidia/nccl/lib/libnccl.so.2,,\n").unwrap();
        let broken = site.join("broken-1.0.dist-info");
        fs::create_dir_all(&broken).unwrap();
        let (dists, notes) = read_site(site, 2);
        assert_eq!(dists.len(), 2);
        assert_eq!(notes.len(), 1, "{notes:?}");
        let mut owners = Owners::default();
        owners.add_site(site, &dists);
        assert_eq!(
            owners
                .owner(&site.join("nvidia/cublas/lib/libcublas.so.13"))
                .as_deref(),
            Some("nvidia-cublas")
        );
        // Not in any RECORD, under a shared namespace: unknown.
        assert_eq!(owners.owner(&site.join("nvidia/other/libx.so")), None);
    }
}
