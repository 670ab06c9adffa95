//! A package index on 127.0.0.1 for tests: a simple-API page (JSON or HTML)
//! and wheel files, with or without range support, counting what it serves.
//! Wheels are built here by a small zip writer (stored members, optional
//! ZIP64 records), independent of the crate's own parser.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// How the project page is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageMode {
    /// PEP 691 JSON when asked for.
    Json,
    /// PEP 503 HTML only (an old index).
    Html,
    /// Says JSON, sends an HTML login page.
    HtmlLabelledJson,
    /// 404 for the page.
    NotFound,
}

/// One file on the index.
#[derive(Clone)]
pub struct File {
    pub name: String,
    pub bytes: Arc<Vec<u8>>,
    pub yanked: Option<String>,
}

#[derive(Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub file_requests: AtomicU64,
    pub file_bytes: AtomicU64,
}

pub struct Index {
    pub base: String,
    pub counters: Arc<Counters>,
}

impl Index {
    pub fn file_bytes(&self) -> u64 {
        self.counters.file_bytes.load(Ordering::SeqCst)
    }
    pub fn file_requests(&self) -> u64 {
        self.counters.file_requests.load(Ordering::SeqCst)
    }
}

/// Starts a server in a thread. It lives until the test process ends.
pub fn start(project: &str, files: Vec<File>, mode: PageMode, ranges: bool) -> Index {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let base = format!("http://{addr}/simple");
    let counters = Arc::new(Counters::default());
    let files = Arc::new(Mutex::new(files));
    let project = project.to_string();
    {
        let counters = counters.clone();
        let files = files.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let counters = counters.clone();
                let files = files.clone();
                let project = project.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &project, &files, &counters, mode, ranges);
                });
            }
        });
    }
    Index { base, counters }
}

/// Long because it is the whole of one connection of the fake index: the request line, the
/// headers, the page in each format and the file with or without a range, in a real
/// server's order.
fn serve(
    mut stream: TcpStream,
    project: &str,
    files: &Mutex<Vec<File>>,
    counters: &Counters,
    mode: PageMode,
    ranges: bool,
) -> std::io::Result<()> {
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
        let mut headers = HashMap::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        counters.requests.fetch_add(1, Ordering::SeqCst);
        let files = files.lock().unwrap().clone();
        let page_path = format!("/simple/{project}/");
        if path == page_path {
            let accept = headers.get("accept").cloned().unwrap_or_default();
            let (ct, body) = match mode {
                PageMode::NotFound => {
                    respond(
                        &mut stream,
                        "404 Not Found",
                        "text/plain",
                        b"not found",
                        &[],
                    )?;
                    continue;
                }
                PageMode::HtmlLabelledJson => (
                    "application/vnd.pypi.simple.v1+json",
                    b"<!DOCTYPE html><html><body>Please log in</body></html>".to_vec(),
                ),
                PageMode::Json if accept.contains("vnd.pypi.simple.v1+json") => (
                    "application/vnd.pypi.simple.v1+json",
                    json_page(project, &files),
                ),
                _ => ("text/html", html_page(&files)),
            };
            respond(&mut stream, "200 OK", ct, &body, &[])?;
            continue;
        }
        let Some(name) = path.strip_prefix("/files/") else {
            respond(&mut stream, "404 Not Found", "text/plain", b"no", &[])?;
            continue;
        };
        let Some(f) = files.iter().find(|f| f.name == name) else {
            respond(&mut stream, "404 Not Found", "text/plain", b"no", &[])?;
            continue;
        };
        counters.file_requests.fetch_add(1, Ordering::SeqCst);
        let total = f.bytes.len() as u64;
        let range = headers
            .get("range")
            .filter(|_| ranges)
            .and_then(|r| parse_range(r, total));
        match range {
            Some((a, b)) => {
                let body = &f.bytes[a as usize..=b as usize];
                counters
                    .file_bytes
                    .fetch_add(body.len() as u64, Ordering::SeqCst);
                let cr = format!("bytes {a}-{b}/{total}");
                respond(
                    &mut stream,
                    "206 Partial Content",
                    "application/octet-stream",
                    body,
                    &[("Content-Range", &cr)],
                )?;
            }
            None => {
                counters.file_bytes.fetch_add(total, Ordering::SeqCst);
                respond(
                    &mut stream,
                    "200 OK",
                    "application/octet-stream",
                    &f.bytes,
                    &[],
                )?;
            }
        }
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    ct: &str,
    body: &[u8],
    extra: &[(&str, &str)],
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ct}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    stream.flush()
}

fn parse_range(h: &str, total: u64) -> Option<(u64, u64)> {
    let r = h.strip_prefix("bytes=")?;
    let (a, b) = r.split_once('-')?;
    if a.is_empty() {
        let n: u64 = b.parse().ok()?;
        let n = n.min(total);
        return Some((total - n, total - 1));
    }
    let a: u64 = a.parse().ok()?;
    let b: u64 = if b.is_empty() {
        total - 1
    } else {
        b.parse().ok()?
    };
    (a <= b && a < total).then(|| (a, b.min(total - 1)))
}

fn sha256_hex(i: usize) -> String {
    // Not a real hash: the cache only needs a stable, unique, hash-shaped key per file.
    format!("{:064x}", 0xabcdef_u64.wrapping_mul(i as u64 + 1))
}

fn json_page(project: &str, files: &[File]) -> Vec<u8> {
    let list: Vec<serde_json::Value> = files
        .iter()
        .enumerate()
        .map(|(i, f)| {
            serde_json::json!({
                "filename": f.name,
                "url": format!("../../files/{}", f.name),
                "hashes": {"sha256": sha256_hex(i)},
                "size": f.bytes.len(),
                "upload-time": format!("2025-01-{:02}T00:00:00Z", i + 1),
                "yanked": match &f.yanked { Some(r) => serde_json::json!(r), None => serde_json::json!(false) },
            })
        })
        .collect();
    serde_json::to_vec(&serde_json::json!({
        "meta": {"api-version": "1.1"},
        "name": project,
        "files": list,
    }))
    .unwrap()
}

fn html_page(files: &[File]) -> Vec<u8> {
    let mut s = String::from("<!DOCTYPE html>\n<html><body>\n");
    for (i, f) in files.iter().enumerate() {
        let y = match &f.yanked {
            Some(r) => format!(" data-yanked=\"{r}\""),
            None => String::new(),
        };
        s.push_str(&format!(
            "<a href=\"/files/{}#sha256={}\"{y}>{}</a><br/>\n",
            f.name,
            sha256_hex(i + 100),
            f.name
        ));
    }
    s.push_str("</body></html>\n");
    s.into_bytes()
}

/// Deterministic incompressible filler, so wheels have a realistic size.
pub fn filler(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Writes a zip (stored members) with an optional ZIP64 end record and ZIP64 extras.
pub fn zip(members: &[(&str, Vec<u8>)], zip64: bool) -> Vec<u8> {
    let mut out = Vec::new();
    let mut cd = Vec::new();
    for (name, data) in members {
        let off = out.len() as u64;
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&20u16.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes()); // flags
        out.extend_from_slice(&0u16.to_le_bytes()); // stored
        out.extend_from_slice(&[0; 8]); // time, date, crc
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u16).to_le_bytes());
        // a local extra field the central one does not have
        out.extend_from_slice(&8u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&[0xfe, 0xca, 4, 0, 1, 2, 3, 4]);
        out.extend_from_slice(data);

        let mut extra = Vec::new();
        let (size32, off32) = if zip64 {
            extra.extend_from_slice(&1u16.to_le_bytes());
            extra.extend_from_slice(&24u16.to_le_bytes());
            extra.extend_from_slice(&(data.len() as u64).to_le_bytes());
            extra.extend_from_slice(&(data.len() as u64).to_le_bytes());
            extra.extend_from_slice(&off.to_le_bytes());
            (u32::MAX, u32::MAX)
        } else {
            (data.len() as u32, off as u32)
        };
        cd.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        cd.extend_from_slice(&45u16.to_le_bytes());
        cd.extend_from_slice(&20u16.to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes());
        cd.extend_from_slice(&0u16.to_le_bytes());
        cd.extend_from_slice(&[0; 8]);
        cd.extend_from_slice(&size32.to_le_bytes());
        cd.extend_from_slice(&size32.to_le_bytes());
        cd.extend_from_slice(&(name.len() as u16).to_le_bytes());
        cd.extend_from_slice(&(extra.len() as u16).to_le_bytes());
        cd.extend_from_slice(&[0; 10]);
        cd.extend_from_slice(&off32.to_le_bytes());
        cd.extend_from_slice(name.as_bytes());
        cd.extend_from_slice(&extra);
    }
    let cd_off = out.len() as u64;
    out.extend_from_slice(&cd);
    if zip64 {
        let rec = out.len() as u64;
        out.extend_from_slice(&0x0606_4b50u32.to_le_bytes());
        out.extend_from_slice(&44u64.to_le_bytes());
        out.extend_from_slice(&[45, 0, 45, 0]);
        out.extend_from_slice(&[0; 8]);
        out.extend_from_slice(&(members.len() as u64).to_le_bytes());
        out.extend_from_slice(&(members.len() as u64).to_le_bytes());
        out.extend_from_slice(&(cd.len() as u64).to_le_bytes());
        out.extend_from_slice(&cd_off.to_le_bytes());
        out.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&rec.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
    }
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    let n = if zip64 { 0xFFFF } else { members.len() as u16 };
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&n.to_le_bytes());
    let (s, o) = if zip64 {
        (u32::MAX, u32::MAX)
    } else {
        (cd.len() as u32, cd_off as u32)
    };
    out.extend_from_slice(&s.to_le_bytes());
    out.extend_from_slice(&o.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}
