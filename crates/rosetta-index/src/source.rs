//! Where the package index is and how to trust it, found the way the user's
//! own tools would: `--index-url`, then `PIP_INDEX_URL`, `UV_INDEX_URL`
//! (`UV_DEFAULT_INDEX`), then pip's configuration files, then the default of
//! the pip that is installed (asked, never written here). The CA bundle
//! follows the same habit (`SSL_CERT_FILE`, `PIP_CERT`, pip's `cert`, the
//! system bundle), because TLS-intercepting proxies are common on GPU hosts.
//!
//! The environment is passed in as a function so tests never read the real one.

use crate::error::IndexError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The index URL and where it came from, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSource {
    /// The simple API base URL (ends before the project name).
    pub url: String,
    /// Where it was found: `--index-url`, `PIP_INDEX_URL`, a config file path, `pip's default`.
    pub from: String,
}

/// Looks up one environment variable.
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Resolves the index URL. `ask_pip` is called only when nothing else names one.
pub fn resolve_index(
    explicit: Option<&str>,
    env: EnvLookup<'_>,
    ask_pip: &dyn Fn() -> Option<String>,
) -> Result<IndexSource, IndexError> {
    if let Some(u) = explicit.map(str::trim).filter(|u| !u.is_empty()) {
        return Ok(IndexSource {
            url: u.to_string(),
            from: "--index-url".into(),
        });
    }
    for var in ["PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX"] {
        if let Some(u) = env(var)
            .map(|u| u.trim().to_string())
            .filter(|u| !u.is_empty())
        {
            return Ok(IndexSource {
                url: u,
                from: var.into(),
            });
        }
    }
    if let Some((u, file)) = pip_config_value(env, "index-url") {
        return Ok(IndexSource {
            url: u,
            from: file.display().to_string(),
        });
    }
    if let Some(u) = ask_pip() {
        return Ok(IndexSource {
            url: u,
            from: "pip's default".into(),
        });
    }
    Err(IndexError::NoIndex(
        "no --index-url, PIP_INDEX_URL, UV_INDEX_URL or pip config names one, and no pip could be asked for its default"
            .into(),
    ))
}

/// pip's configuration files in the order pip loads them (later wins):
/// global, user, site, then `PIP_CONFIG_FILE`. `PIP_CONFIG_FILE=/dev/null`
/// turns the others off, as in pip.
pub fn pip_config_files(env: EnvLookup<'_>) -> Vec<PathBuf> {
    let env_file = env("PIP_CONFIG_FILE").filter(|s| !s.is_empty());
    if env_file.as_deref() == Some("/dev/null") {
        return Vec::new();
    }
    let mut files = Vec::new();
    let xdg_dirs = env("XDG_CONFIG_DIRS")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/etc/xdg".into());
    for d in xdg_dirs.split(':').filter(|d| !d.is_empty()) {
        files.push(Path::new(d).join("pip").join("pip.conf"));
    }
    files.push(PathBuf::from("/etc/pip.conf"));
    if let Some(home) = env("HOME").filter(|s| !s.is_empty()) {
        files.push(Path::new(&home).join(".pip").join("pip.conf"));
        let xdg_home = env("XDG_CONFIG_HOME")
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(&home).join(".config"));
        files.push(xdg_home.join("pip").join("pip.conf"));
    }
    if let Some(venv) = env("VIRTUAL_ENV").filter(|s| !s.is_empty()) {
        files.push(Path::new(&venv).join("pip.conf"));
    }
    if let Some(f) = env_file {
        files.push(PathBuf::from(f));
    }
    files
}

/// The value of `key` (e.g. `index-url`) in pip's config files: `[install]`
/// beats `[global]` within a file, later files beat earlier ones.
pub fn pip_config_value(env: EnvLookup<'_>, key: &str) -> Option<(String, PathBuf)> {
    let mut found = None;
    for file in pip_config_files(env) {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        let global = ini_value(&text, "global", key);
        let install = ini_value(&text, "install", key);
        if let Some(v) = install.or(global) {
            found = Some((v, file));
        }
    }
    found
}

/// Reads `key` from `[section]` of an INI text (pip accepts `-` and `_` alike).
pub fn ini_value(text: &str, section: &str, key: &str) -> Option<String> {
    let want = key.replace('_', "-").to_ascii_lowercase();
    let mut in_section = false;
    let mut value = None;
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t.starts_with(';') {
            continue;
        }
        if t.starts_with('[') && t.ends_with(']') {
            in_section = t[1..t.len() - 1].trim().eq_ignore_ascii_case(section);
            continue;
        }
        if !in_section || line.starts_with([' ', '\t']) {
            continue;
        }
        let Some((k, v)) = t.split_once(['=', ':']) else {
            continue;
        };
        if k.trim().replace('_', "-").to_ascii_lowercase() == want {
            // Multi-valued keys list one value a line; the first is the index.
            let v = v.split_whitespace().next().unwrap_or("").to_string();
            value = (!v.is_empty()).then_some(v);
        }
    }
    value
}

/// Asks the installed pip for its default index URL (`python3`, then `python`).
pub fn ask_pip_default() -> Option<String> {
    const PROBE: &str = "from pip._internal.models.index import PyPI; print(PyPI.simple_url)";
    for py in ["python3", "python"] {
        if let Ok(out) = Command::new(py).args(["-c", PROBE]).output() {
            if out.status.success() {
                let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
                if s.contains("://") {
                    return Some(s);
                }
            }
        }
        // pip's own help states its default when its internals move.
        if let Ok(out) = Command::new(py)
            .args(["-m", "pip", "download", "--help"])
            .output()
        {
            let help = String::from_utf8_lossy(&out.stdout);
            if let Some(u) = default_from_help(&help) {
                return Some(u);
            }
        }
    }
    None
}

/// `--index-url ... (default https://x/simple).` -> the URL.
fn default_from_help(help: &str) -> Option<String> {
    let at = help.find("--index-url")?;
    let rest = &help[at..];
    let d = rest.find("(default")?;
    let url = rest[d + 8..]
        .trim_start()
        .split([')', ' ', '\n'])
        .next()?
        .trim();
    url.contains("://").then(|| url.to_string())
}

/// The CA bundle to trust: `SSL_CERT_FILE`, `PIP_CERT`, `REQUESTS_CA_BUNDLE`,
/// pip's `cert`, then the usual system bundles. `None`: use built-in roots.
pub fn find_ca_bundle(env: EnvLookup<'_>) -> Option<PathBuf> {
    for var in [
        "SSL_CERT_FILE",
        "PIP_CERT",
        "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE",
    ] {
        if let Some(p) = env(var).filter(|s| !s.is_empty()) {
            let p = PathBuf::from(p);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    if let Some((p, _)) = pip_config_value(env, "cert") {
        let p = PathBuf::from(p);
        if p.is_file() {
            return Some(p);
        }
    }
    [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/ca-bundle.pem",
        "/etc/ssl/cert.pem",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    #[test]
    fn precedence_is_flag_env_config_pip() {
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("pip.conf");
        std::fs::write(
            &conf,
            "[global]\nindex-url = http://from-global/simple\n[install]\nindex_url=http://from-install/simple\n",
        )
        .unwrap();
        let conf_s = conf.to_str().unwrap();
        let pip = || Some("http://pip-default/simple".to_string());
        let none = || None;

        let env = env_of(&[
            ("PIP_INDEX_URL", "http://env/simple"),
            ("PIP_CONFIG_FILE", conf_s),
        ]);
        assert_eq!(
            resolve_index(Some("http://flag/simple"), &env, &pip)
                .unwrap()
                .from,
            "--index-url"
        );
        assert_eq!(
            resolve_index(None, &env, &pip).unwrap().url,
            "http://env/simple"
        );

        let env = env_of(&[
            ("UV_INDEX_URL", "http://uv/simple"),
            ("PIP_CONFIG_FILE", conf_s),
        ]);
        assert_eq!(
            resolve_index(None, &env, &pip).unwrap().from,
            "UV_INDEX_URL"
        );

        let env = env_of(&[
            ("PIP_CONFIG_FILE", conf_s),
            ("XDG_CONFIG_DIRS", "/nonexistent"),
        ]);
        let s = resolve_index(None, &env, &pip).unwrap();
        assert_eq!(s.url, "http://from-install/simple");
        assert_eq!(s.from, conf_s);

        let env = env_of(&[("PIP_CONFIG_FILE", "/dev/null")]);
        assert_eq!(
            resolve_index(None, &env, &pip).unwrap().from,
            "pip's default"
        );
        assert!(resolve_index(None, &env, &none).is_err());
    }

    #[test]
    fn ini_reading_ignores_comments_and_continuations() {
        let t = "# c\n[global]\n; x\nextra-index-url =\n    http://a\n    http://b\ncert=/x.pem\n";
        assert_eq!(ini_value(t, "global", "cert").as_deref(), Some("/x.pem"));
        assert_eq!(ini_value(t, "global", "index-url"), None);
    }

    #[test]
    fn pip_help_default_is_read() {
        let help = "  -i, --index-url <url>  Base URL of the Python Package Index (default\n   https://x.invalid/simple). This should point";
        assert_eq!(
            default_from_help(help).as_deref(),
            Some("https://x.invalid/simple")
        );
        let help = "  -i, --index-url <url>  Base URL (default https://x.invalid/simple). More";
        assert_eq!(
            default_from_help(help).as_deref(),
            Some("https://x.invalid/simple")
        );
    }
}
