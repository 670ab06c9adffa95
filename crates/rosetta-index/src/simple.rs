//! The simple repository API as data: project name normalisation (PEP 503),
//! project pages in PEP 691 JSON and PEP 503 HTML parsed into one list of
//! files (with PEP 592 yanks, PEP 700 sizes and upload times), versions read
//! from file names, and relative links resolved against the page's URL.
//!
//! Pure functions over bytes: no I/O, no panics on any input (a property test
//! feeds arbitrary bytes). Ordering by PEP 440 and choosing a wheel per
//! release happen in `archaeology`.

use serde::Deserialize;
use std::collections::BTreeMap;

/// What kind of distribution a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistKind {
    /// A `.whl`.
    Wheel,
    /// A source distribution (`.tar.gz`, `.zip`, ...).
    Sdist,
    /// Anything else (`.egg`, `.exe`, ...).
    Other,
}

/// One file listed on a project page.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DistFile {
    /// The file name.
    pub filename: String,
    /// Absolute URL (resolved against the page), without the hash fragment.
    pub url: String,
    /// SHA-256 from `hashes` or the URL fragment, lowercase hex.
    pub sha256: Option<String>,
    /// Size in bytes (PEP 700), when the index says.
    pub size: Option<u64>,
    /// Whether the file is yanked (PEP 592).
    pub yanked: bool,
    /// The yank reason, when one was given.
    pub yanked_reason: Option<String>,
    /// `Requires-Python`, when given.
    pub requires_python: Option<String>,
    /// Upload time (PEP 700), ISO 8601.
    pub upload_time: Option<String>,
    /// Wheel, sdist or other.
    pub kind: DistKind,
    /// The version string read from the file name.
    pub version: Option<String>,
}

/// A project page, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPage {
    /// The project name the page gives (or the one asked for).
    pub name: String,
    /// Its files, in page order.
    pub files: Vec<DistFile>,
    /// Whether the page came as JSON (PEP 691) rather than HTML.
    pub json: bool,
}

/// Project names compare as the schema normalises them (PEP 503).
pub use rosetta_schema::normalize_name;

/// The project page URL under an index base (`…/simple`).
pub fn project_url(index: &str, name: &str) -> String {
    format!("{}/{}/", index.trim_end_matches('/'), normalize_name(name))
}

/// Parses a project page. `content_type` picks the parser; a body that is
/// plainly the other format gives a clear error rather than a guess.
pub fn parse_page(
    body: &[u8],
    content_type: &str,
    page_url: &str,
    project: &str,
) -> Result<ProjectPage, String> {
    let text = String::from_utf8_lossy(body);
    let trimmed = text.trim_start();
    let says_json = content_type.ends_with("json");
    let says_html = content_type.contains("html") || content_type.is_empty();
    if says_json {
        if trimmed.starts_with('<') {
            return Err(format!(
                "the server said `{content_type}` but sent HTML (starts with `{}`)",
                snippet(trimmed)
            ));
        }
        return parse_json(&text, page_url, project);
    }
    if says_html {
        if trimmed.starts_with('{') {
            // Some servers label JSON as HTML; the body decides.
            return parse_json(&text, page_url, project);
        }
        return parse_html(&text, page_url, project);
    }
    Err(format!(
        "unexpected content type `{content_type}` (starts with `{}`)",
        snippet(trimmed)
    ))
}

fn snippet(s: &str) -> String {
    s.chars()
        .take(40)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[derive(Deserialize)]
struct JsonPage {
    name: Option<String>,
    files: Option<Vec<JsonFile>>,
}

#[derive(Deserialize)]
struct JsonFile {
    filename: String,
    url: String,
    #[serde(default)]
    hashes: BTreeMap<String, serde_json::Value>,
    #[serde(rename = "requires-python", default)]
    requires_python: Option<String>,
    #[serde(default)]
    yanked: serde_json::Value,
    #[serde(default)]
    size: Option<u64>,
    #[serde(rename = "upload-time", default)]
    upload_time: Option<String>,
}

/// Parses a PEP 691 JSON page.
pub fn parse_json(text: &str, page_url: &str, project: &str) -> Result<ProjectPage, String> {
    let page: JsonPage = serde_json::from_str(text).map_err(|e| {
        format!(
            "not a PEP 691 JSON page ({e}; starts with `{}`)",
            snippet(text.trim_start())
        )
    })?;
    let Some(files) = page.files else {
        return Err("not a PEP 691 JSON page (no `files` list)".to_string());
    };
    let norm = normalize_name(project);
    let files = files
        .into_iter()
        .map(|f| {
            let (url, frag_hash) = split_fragment(&join_url(page_url, &f.url));
            let sha256 = f
                .hashes
                .get("sha256")
                .and_then(|v| v.as_str())
                .map(str::to_ascii_lowercase)
                .or(frag_hash);
            let (yanked, yanked_reason) = match &f.yanked {
                serde_json::Value::Bool(b) => (*b, None),
                serde_json::Value::String(s) => (true, Some(s.clone()).filter(|s| !s.is_empty())),
                _ => (false, None),
            };
            let kind = kind_of(&f.filename);
            DistFile {
                version: version_from_filename(&f.filename, &norm, kind),
                filename: f.filename,
                url,
                sha256,
                size: f.size,
                yanked,
                yanked_reason,
                requires_python: f.requires_python,
                upload_time: f.upload_time,
                kind,
            }
        })
        .collect();
    Ok(ProjectPage {
        name: page.name.unwrap_or_else(|| project.to_string()),
        files,
        json: true,
    })
}

/// Parses a PEP 503 HTML page: every `<a href>` is a file.
pub fn parse_html(text: &str, page_url: &str, project: &str) -> Result<ProjectPage, String> {
    let norm = normalize_name(project);
    let lower = text.to_ascii_lowercase();
    let mut files = Vec::new();
    let mut from = 0usize;
    while let Some(pos) = lower[from..].find("<a") {
        let start = from + pos;
        let after = start + 2;
        // `<abbr>` and friends are not anchors.
        match lower.as_bytes().get(after) {
            Some(c) if c.is_ascii_whitespace() => {}
            _ => {
                from = after;
                continue;
            }
        }
        let Some(tag_end) = find_tag_end(text, after) else {
            break;
        };
        let attrs = parse_attrs(&text[after..tag_end]);
        let close = lower[tag_end..]
            .find("</a")
            .map(|p| tag_end + p)
            .unwrap_or(text.len());
        let inner = decode_entities(text.get(tag_end + 1..close).unwrap_or("").trim());
        from = close.max(tag_end + 1);
        let Some(href) = attrs.get("href") else {
            continue;
        };
        let (url, sha256) = split_fragment(&join_url(page_url, href));
        let filename = if inner.is_empty() {
            url.rsplit('/').next().unwrap_or("").to_string()
        } else {
            inner
        };
        if filename.is_empty() {
            continue;
        }
        let kind = kind_of(&filename);
        let yanked_attr = attrs.get("data-yanked");
        files.push(DistFile {
            version: version_from_filename(&filename, &norm, kind),
            filename,
            url,
            sha256,
            size: None,
            yanked: yanked_attr.is_some(),
            yanked_reason: yanked_attr.filter(|s| !s.is_empty()).cloned(),
            requires_python: attrs.get("data-requires-python").cloned(),
            upload_time: None,
            kind,
        });
    }
    if files.is_empty() && !lower.contains("<html") && !lower.contains("<!doctype") {
        return Err(format!(
            "not a PEP 503 HTML page (no links; starts with `{}`)",
            snippet(text.trim_start())
        ));
    }
    Ok(ProjectPage {
        name: project.to_string(),
        files,
        json: false,
    })
}

/// The index of the `>` closing a tag whose attributes start at `from`, skipping quoted values.
fn find_tag_end(text: &str, from: usize) -> Option<usize> {
    let mut quote: Option<u8> = None;
    for (i, &b) in text.as_bytes().iter().enumerate().skip(from) {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'"' || b == b'\'' => quote = Some(b),
            None if b == b'>' => return Some(i),
            None => {}
        }
    }
    None
}

/// `href="x" data-yanked data-requires-python="&gt;=3.8"` -> map (names lowercased, values decoded).
fn parse_attrs(s: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let ns = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'/' {
            i += 1;
        }
        if ns == i {
            i += 1;
            continue;
        }
        let name = s[ns..i].to_ascii_lowercase();
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            let value = if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let vs = i + 1;
                let ve = s[vs..]
                    .bytes()
                    .position(|c| c == q)
                    .map_or(s.len(), |p| vs + p);
                i = (ve + 1).min(s.len());
                &s[vs..ve]
            } else {
                let vs = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                &s[vs..i]
            };
            out.insert(name, decode_entities(value));
        } else {
            out.insert(name, String::new());
        }
    }
    out
}

/// Decodes the HTML entities an index page uses (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`, `&#x..;`).
pub fn decode_entities(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        out.push_str(&rest[..p]);
        rest = &rest[p..];
        let end = rest.find(';').filter(|&e| e <= 10);
        let decoded = end.and_then(|e| {
            let ent = &rest[1..e];
            let c = match ent {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    if let Some(hex) = ent.strip_prefix("#x").or_else(|| ent.strip_prefix("#X")) {
                        u32::from_str_radix(hex, 16).ok().and_then(char::from_u32)
                    } else if let Some(dec) = ent.strip_prefix('#') {
                        dec.parse::<u32>().ok().and_then(char::from_u32)
                    } else {
                        None
                    }
                }
            };
            c.map(|c| (c, e))
        });
        match decoded {
            Some((c, e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Splits `url#sha256=abc` into the URL and the hash.
fn split_fragment(url: &str) -> (String, Option<String>) {
    match url.split_once('#') {
        Some((u, frag)) => {
            let hash = frag
                .strip_prefix("sha256=")
                .map(|h| h.to_ascii_lowercase())
                .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
            (u.to_string(), hash)
        }
        None => (url.to_string(), None),
    }
}

fn kind_of(filename: &str) -> DistKind {
    let f = filename.to_ascii_lowercase();
    if f.ends_with(".whl") {
        DistKind::Wheel
    } else if [".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar.xz", ".tar"]
        .iter()
        .any(|e| f.ends_with(e))
    {
        DistKind::Sdist
    } else {
        DistKind::Other
    }
}

/// The version in a distribution's file name.
pub fn version_from_filename(filename: &str, project_norm: &str, kind: DistKind) -> Option<String> {
    match kind {
        DistKind::Wheel => {
            let stem = filename.get(..filename.len().checked_sub(4)?)?;
            let parts: Vec<&str> = stem.split('-').collect();
            if (parts.len() == 5 || parts.len() == 6) && !parts[1].is_empty() {
                Some(parts[1].to_string())
            } else {
                None
            }
        }
        DistKind::Sdist | DistKind::Other => {
            let lower = filename.to_ascii_lowercase();
            let stem_len = [
                ".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".zip", ".tar", ".egg", ".exe",
            ]
            .iter()
            .find(|e| lower.ends_with(*e))
            .map(|e| filename.len() - e.len())?;
            let stem = filename.get(..stem_len)?;
            // The name may itself contain dashes: split where the prefix normalises to the project.
            for (i, c) in stem.char_indices() {
                if c == '-' && normalize_name(&stem[..i]) == project_norm {
                    let v = &stem[i + 1..];
                    let v = v.split('-').next().unwrap_or(v);
                    return (!v.is_empty()).then(|| v.to_string());
                }
            }
            None
        }
    }
}

/// Resolves `href` against `base` the way a browser does for the forms index
/// pages use: absolute, scheme-relative, absolute-path and relative (with `..`).
pub fn join_url(base: &str, href: &str) -> String {
    let href = href.trim();
    if has_scheme(href) {
        return href.to_string();
    }
    let base = base.split(['#', '?']).next().unwrap_or(base);
    let (scheme, rest) = match base.split_once("://") {
        Some((s, r)) => (s, r),
        None => return href.to_string(),
    };
    if let Some(h) = href.strip_prefix("//") {
        return format!("{scheme}://{h}");
    }
    let (authority, path) = match rest.find('/') {
        Some(p) => (&rest[..p], &rest[p..]),
        None => (rest, "/"),
    };
    let (href_path, suffix) = match href.find(['?', '#']) {
        Some(p) => (&href[..p], &href[p..]),
        None => (href, ""),
    };
    let joined = if href_path.starts_with('/') {
        href_path.to_string()
    } else if href_path.is_empty() {
        path.to_string()
    } else {
        let dir = &path[..path.rfind('/').map_or(0, |p| p + 1)];
        format!("{dir}{href_path}")
    };
    format!(
        "{scheme}://{authority}{}{suffix}",
        remove_dot_segments(&joined)
    )
}

fn has_scheme(s: &str) -> bool {
    match s.find(':') {
        Some(p) if p > 0 => {
            s[..p]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'-' || b == b'.')
                && s[p..].starts_with("://")
        }
        _ => false,
    }
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let trailing = path.ends_with('/') || path.ends_with("/.") || path.ends_with("/..");
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    let mut s = String::from("/");
    s.push_str(&out.join("/"));
    if trailing && !s.ends_with('/') {
        s.push('/');
    }
    s
}

/// Hides the password of `https://user:pass@host/...` for display.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let auth_end = rest.find('/').unwrap_or(rest.len());
    match rest[..auth_end].rfind('@') {
        Some(at) => format!("{scheme}://***@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_normalise() {
        assert_eq!(normalize_name("Foo.Bar__baz"), "foo-bar-baz");
        assert_eq!(normalize_name("sglang"), "sglang");
        assert_eq!(
            project_url("http://x/simple/", "Flash_Attn"),
            "http://x/simple/flash-attn/"
        );
    }

    #[test]
    fn urls_join() {
        let base = "https://idx.example/simple/transformers/";
        assert_eq!(
            join_url(base, "../../packages/a/b.whl#sha256=00"),
            "https://idx.example/packages/a/b.whl#sha256=00"
        );
        assert_eq!(join_url(base, "/p/x.whl"), "https://idx.example/p/x.whl");
        assert_eq!(
            join_url(base, "//cdn.example/x.whl"),
            "https://cdn.example/x.whl"
        );
        assert_eq!(
            join_url(base, "x.whl"),
            "https://idx.example/simple/transformers/x.whl"
        );
        assert_eq!(join_url(base, "http://o/x.whl"), "http://o/x.whl");
    }

    #[test]
    fn versions_from_filenames() {
        let w = DistKind::Wheel;
        assert_eq!(
            version_from_filename("transformers-4.57.1-py3-none-any.whl", "transformers", w)
                .as_deref(),
            Some("4.57.1")
        );
        assert_eq!(
            version_from_filename(
                "sglang-0.5.12-1-cp312-cp312-manylinux_2_34_x86_64.whl",
                "sglang",
                w
            )
            .as_deref(),
            Some("0.5.12")
        );
        assert_eq!(
            version_from_filename("flash-attn-2.6.3.tar.gz", "flash-attn", DistKind::Sdist)
                .as_deref(),
            Some("2.6.3")
        );
        assert_eq!(version_from_filename("x.whl", "x", w), None);
    }

    #[test]
    fn html_page_parses_with_yanks_and_hashes() {
        let html = r#"<!DOCTYPE html><html><body>
<a href="../../p/demo-1.0-py3-none-any.whl#sha256=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" data-requires-python="&gt;=3.8">demo-1.0-py3-none-any.whl</a><br/>
<a href='/p/demo-1.1-py3-none-any.whl' data-yanked="broken &amp; bad">demo-1.1-py3-none-any.whl</a>
<a href="/p/demo-0.9.tar.gz" data-yanked>demo-0.9.tar.gz</a>
<abbr>not a link</abbr>
</body></html>"#;
        let p = parse_page(
            html.as_bytes(),
            "text/html",
            "http://h/simple/demo/",
            "demo",
        )
        .unwrap();
        assert_eq!(p.files.len(), 3);
        assert_eq!(p.files[0].url, "http://h/p/demo-1.0-py3-none-any.whl");
        assert_eq!(p.files[0].sha256.as_deref().map(str::len), Some(64));
        assert_eq!(p.files[0].requires_python.as_deref(), Some(">=3.8"));
        assert!(p.files[1].yanked);
        assert_eq!(p.files[1].yanked_reason.as_deref(), Some("broken & bad"));
        assert!(p.files[2].yanked && p.files[2].yanked_reason.is_none());
        assert_eq!(p.files[2].version.as_deref(), Some("0.9"));
    }

    #[test]
    fn json_page_parses() {
        let json = r#"{"meta":{"api-version":"1.1"},"name":"demo","files":[
            {"filename":"demo-1.0-py3-none-any.whl","url":"../../p/demo-1.0-py3-none-any.whl","hashes":{"sha256":"AB"},"yanked":"bad build","size":123,"upload-time":"2025-01-01T00:00:00Z"},
            {"filename":"demo-1.1-py3-none-any.whl","url":"http://o/demo-1.1-py3-none-any.whl","hashes":{},"yanked":false}
        ],"versions":["1.0","1.1"]}"#;
        let p = parse_page(
            json.as_bytes(),
            "application/vnd.pypi.simple.v1+json",
            "http://h/simple/demo/",
            "demo",
        )
        .unwrap();
        assert!(p.json);
        assert_eq!(p.files[0].url, "http://h/p/demo-1.0-py3-none-any.whl");
        assert_eq!(p.files[0].sha256.as_deref(), Some("ab"));
        assert_eq!(p.files[0].yanked_reason.as_deref(), Some("bad build"));
        assert_eq!(p.files[0].size, Some(123));
        assert!(!p.files[1].yanked);
    }

    #[test]
    fn html_where_json_was_promised_is_a_clear_error() {
        let err = parse_page(
            b"<html><body>login</body></html>",
            "application/vnd.pypi.simple.v1+json",
            "http://h/",
            "x",
        )
        .unwrap_err();
        assert!(err.contains("sent HTML"), "{err}");
        let err = parse_page(b"{\"info\":{}}", "application/json", "http://h/", "x").unwrap_err();
        assert!(err.contains("no `files`"), "{err}");
        let err = parse_page(b"hello", "text/plain", "http://h/", "x").unwrap_err();
        assert!(err.contains("unexpected content type"), "{err}");
    }

    #[test]
    fn credentials_are_redacted() {
        assert_eq!(redact_url("https://u:p@h/simple"), "https://***@h/simple");
        assert_eq!(redact_url("https://h/simple"), "https://h/simple");
    }

    proptest! {
        #[test]
        fn page_parsers_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048), ct in 0usize..4) {
            let ct = ["text/html", "application/vnd.pypi.simple.v1+json", "", "application/octet-stream"][ct];
            let _ = parse_page(&bytes, ct, "http://h/simple/x/", "x");
        }

        #[test]
        fn html_like_input_never_panics(s in r#"(<a( href=("[^"]*"|'[^']*'|[^ >]*))?( data-yanked(="[^"]*")?)?>[^<]*(</a>)?|&#?[a-zA-Z0-9]{0,8};?|[^<&]{0,20}){0,20}"#) {
            let _ = parse_html(&s, "http://h/simple/x/", "x");
        }

        #[test]
        fn url_join_never_panics(base in ".{0,40}", href in ".{0,40}") {
            let _ = join_url(&base, &href);
            let _ = redact_url(&base);
            let _ = decode_entities(&href);
        }

        #[test]
        fn filenames_never_panic(f in ".{0,60}") {
            for k in [DistKind::Wheel, DistKind::Sdist, DistKind::Other] {
                let _ = version_from_filename(&f, "x", k);
            }
        }
    }
}
