//! The HTTP side of the index client: one blocking `ureq` agent shared by
//! the worker threads, project pages with PEP 691 content negotiation, and
//! byte-range reads with the fallbacks servers force on us (a 200 with the
//! whole body when ranges are ignored). Timeouts and retries live here.
//!
//! It does not parse pages or zips and it does not cache: it moves bytes and
//! checks that the bytes are the ones asked for (`Content-Range`).

use crate::error::IndexError;
use std::collections::HashMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Mutex};
use std::time::Duration;
use ureq::http::{header, Uri};
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};
use ureq::ResponseExt;

/// What the `Accept` header asks for: PEP 691 JSON first, HTML as the fallback.
pub const ACCEPT_SIMPLE: &str = "application/vnd.pypi.simple.v1+json, \
     application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01";

/// The largest project page we read.
const MAX_PAGE: u64 = 64 * 1024 * 1024;
/// The largest whole file we download when a server ignores ranges.
const MAX_WHOLE_FILE: u64 = 4 * 1024 * 1024 * 1024;

/// How to build a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// A PEM bundle of root certificates; `None` uses the built-in roots.
    pub ca_bundle: Option<PathBuf>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Timeout for each response (headers and body together).
    pub response_timeout: Duration,
    /// Attempts per request (1 = no retry).
    pub attempts: u32,
    /// Idle connections kept per host (match the number of workers).
    pub connections: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            ca_bundle: None,
            connect_timeout: Duration::from_secs(10),
            response_timeout: Duration::from_secs(60),
            attempts: 3,
            connections: 8,
        }
    }
}

/// A project page as fetched.
#[derive(Debug, Clone)]
pub struct Page {
    /// The URL after redirects: relative links resolve against it.
    pub url: String,
    /// The `Content-Type` (without parameters), lowercase.
    pub content_type: String,
    /// The body.
    pub body: Vec<u8>,
}

/// The answer to a range request.
#[derive(Debug, Clone)]
pub enum RangeRead {
    /// The bytes asked for (206).
    Partial {
        /// Absolute offset of the first byte.
        offset: u64,
        /// The bytes.
        bytes: Vec<u8>,
        /// The file's size from `Content-Range`.
        total: u64,
    },
    /// The server ignored the range and sent the whole file (200).
    Whole {
        /// The whole file.
        bytes: Vec<u8>,
    },
}

impl RangeRead {
    /// Bytes that came over the wire.
    pub fn len(&self) -> u64 {
        match self {
            RangeRead::Partial { bytes, .. } | RangeRead::Whole { bytes } => bytes.len() as u64,
        }
    }

    /// Whether nothing came.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A blocking HTTP client, cheap to share between threads.
#[derive(Debug, Clone)]
pub struct Client {
    agent: ureq::Agent,
    attempts: u32,
}

impl Client {
    /// Builds a client. A CA bundle that cannot be read is an error only when
    /// it was named; callers pass what they found.
    pub fn new(opts: &ClientOptions) -> Result<Client, IndexError> {
        let mut tls = ureq::tls::TlsConfig::builder();
        if let Some(path) = &opts.ca_bundle {
            let certs = load_pem_bundle(path)?;
            tls = tls.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .tls_config(tls.build())
            .timeout_connect(Some(opts.connect_timeout))
            .timeout_recv_response(Some(opts.response_timeout))
            .timeout_recv_body(Some(opts.response_timeout))
            .max_idle_connections(opts.connections.max(1) * 2)
            .max_idle_connections_per_host(opts.connections.max(1))
            .user_agent(concat!("rosetta/", env!("CARGO_PKG_VERSION")))
            .build();
        Ok(Client {
            agent: ureq::Agent::with_parts(
                config,
                DefaultConnector::default(),
                CachingResolver::new(opts.connect_timeout),
            ),
            attempts: opts.attempts.max(1),
        })
    }

    /// Fetches a project page, asking for PEP 691 JSON and accepting HTML.
    pub fn get_page(&self, url: &str) -> Result<Page, IndexError> {
        self.with_retries(|| {
            let mut resp = self
                .agent
                .get(url)
                .header(header::ACCEPT, ACCEPT_SIMPLE)
                .call()
                .map_err(|e| transport(url, e))?;
            check_status(url, resp.status().as_u16())?;
            let final_url = resp.get_uri().to_string();
            let content_type = resp
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            let body = resp
                .body_mut()
                .with_config()
                .limit(MAX_PAGE)
                .read_to_vec()
                .map_err(|e| transport(url, e))?;
            Ok(Page {
                url: final_url,
                content_type,
                body,
            })
        })
    }

    /// Reads bytes `start..end` (end exclusive) of the file at `url`, or the
    /// last `end - start` bytes when `start` is `None` (a suffix range, for
    /// files whose size the index did not say). `expected_total` is checked
    /// against `Content-Range` when known.
    pub fn read_range(
        &self,
        url: &str,
        start: Option<u64>,
        end: u64,
        expected_total: Option<u64>,
    ) -> Result<RangeRead, IndexError> {
        let range = match start {
            Some(s) => format!("bytes={}-{}", s, end.saturating_sub(1)),
            None => format!("bytes=-{end}"),
        };
        self.with_retries(|| {
            let mut resp = self
                .agent
                .get(url)
                .header(header::RANGE, &range)
                .header(header::ACCEPT_ENCODING, "identity")
                .call()
                .map_err(|e| transport(url, e))?;
            let status = resp.status().as_u16();
            if status == 200 {
                return read_whole(url, &mut resp, expected_total);
            }
            check_status(url, status)?;
            if status != 206 {
                return Err(IndexError::BadRange {
                    url: url.to_string(),
                    what: format!("asked for `{range}`, the server answered {status}"),
                });
            }
            let want = RangeWanted {
                range: &range,
                start,
                end,
                expected_total,
            };
            read_partial(url, &mut resp, &want)
        })
    }

    fn with_retries<T>(
        &self,
        mut f: impl FnMut() -> Result<T, IndexError>,
    ) -> Result<T, IndexError> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            match f() {
                Ok(v) => return Ok(v),
                Err(e) if e.is_service() && attempt < self.attempts => {
                    std::thread::sleep(Duration::from_millis(150 * 4u64.pow(attempt - 1)));
                }
                Err(IndexError::Unreachable { url: u, message }) if attempt > 1 => {
                    return Err(IndexError::Unreachable {
                        url: u,
                        message: format!("{message} (after {attempt} attempts)"),
                    })
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Resolves each host once per client, with a hedged second lookup.
///
/// ureq resolves the host on every request, pooled connection or not. Where
/// the resolver drops one of glibc's parallel A/AAAA queries (a well-known
/// container and Kubernetes failure), every lookup risks a 5 s stall; with
/// hundreds of requests per sweep that turned seconds into minutes. Caching
/// the answer for the client's life makes it one lookup per host, and a
/// second lookup started after a short wait wins the race when the first one
/// lost its packet.
#[derive(Debug)]
struct CachingResolver {
    cache: Mutex<HashMap<String, Vec<SocketAddr>>>,
    /// Serialises lookups so parallel workers wait for one answer.
    lookup: Mutex<()>,
    timeout: Duration,
}

impl CachingResolver {
    fn new(timeout: Duration) -> CachingResolver {
        CachingResolver {
            cache: Mutex::new(HashMap::new()),
            lookup: Mutex::new(()),
            timeout,
        }
    }

    fn cached(&self, key: &str) -> Option<Vec<SocketAddr>> {
        self.cache.lock().ok()?.get(key).cloned()
    }

    fn hedged_lookup(&self, key: &str) -> Result<Vec<SocketAddr>, ureq::Error> {
        const HEDGE_AFTER: Duration = Duration::from_millis(400);
        let (tx, rx) = mpsc::channel();
        let spawn = |tx: mpsc::Sender<std::io::Result<Vec<SocketAddr>>>| {
            let k = key.to_string();
            std::thread::spawn(move || {
                let r = k.to_socket_addrs().map(|it| it.collect::<Vec<_>>());
                let _ = tx.send(r);
            });
        };
        spawn(tx.clone());
        let first = match rx.recv_timeout(HEDGE_AFTER) {
            Ok(r) => Some(r),
            Err(_) => {
                spawn(tx);
                rx.recv_timeout(self.timeout).ok()
            }
        };
        match first {
            Some(Ok(addrs)) if !addrs.is_empty() => Ok(addrs),
            Some(Ok(_)) => Err(ureq::Error::HostNotFound),
            Some(Err(e)) => Err(ureq::Error::Io(e)),
            None => Err(ureq::Error::HostNotFound),
        }
    }
}

impl Resolver for CachingResolver {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri.host().ok_or(ureq::Error::HostNotFound)?;
        let port = uri.port_u16().unwrap_or(match uri.scheme_str() {
            Some("http") => 80,
            _ => 443,
        });
        // IPv6 literals come bracketed in URIs; `to_socket_addrs` wants them bracketed too.
        let key = format!("{host}:{port}");
        let addrs = match self.cached(&key) {
            Some(a) => a,
            None => {
                let _guard = self.lookup.lock();
                match self.cached(&key) {
                    Some(a) => a,
                    None => {
                        let a = self.hedged_lookup(&key)?;
                        if let Ok(mut c) = self.cache.lock() {
                            c.insert(key, a.clone());
                        }
                        a
                    }
                }
            }
        };
        let mut out = self.empty();
        for a in config.ip_family().keep_wanted(addrs.into_iter()).take(16) {
            out.push(a);
        }
        if out.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(out)
    }
}

/// The range a [`Client::read_range`] call asked for, to check a 206 against.
struct RangeWanted<'a> {
    /// The `Range` header as sent.
    range: &'a str,
    /// The first byte asked for; `None` for a suffix range.
    start: Option<u64>,
    /// The end (exclusive), or the suffix length when `start` is `None`.
    end: u64,
    /// The file's size as the index gives it.
    expected_total: Option<u64>,
}

/// Reads a 200 answer to a range request: the whole file, checked against the index's size.
fn read_whole(
    url: &str,
    resp: &mut ureq::http::Response<ureq::Body>,
    expected_total: Option<u64>,
) -> Result<RangeRead, IndexError> {
    let limit = expected_total.unwrap_or(MAX_WHOLE_FILE).min(MAX_WHOLE_FILE);
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(limit)
        .read_to_vec()
        .map_err(|e| transport(url, e))?;
    if let Some(t) = expected_total {
        if bytes.len() as u64 != t {
            return Err(IndexError::BadRange {
                url: url.to_string(),
                what: format!(
                    "the whole file came back as {} bytes, the index says {t}",
                    bytes.len()
                ),
            });
        }
    }
    Ok(RangeRead::Whole { bytes })
}

/// Reads a 206 answer: its `Content-Range` checked against what was asked, then its bytes.
fn read_partial(
    url: &str,
    resp: &mut ureq::http::Response<ureq::Body>,
    want: &RangeWanted,
) -> Result<RangeRead, IndexError> {
    let cr = resp
        .headers()
        .get(header::CONTENT_RANGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let (first, last, total) = checked_content_range(url, &cr, want)?;
    let len = last - first + 1;
    let bytes = resp
        .body_mut()
        .with_config()
        .limit(len)
        .read_to_vec()
        .map_err(|e| transport(url, e))?;
    if bytes.len() as u64 != len {
        return Err(IndexError::BadRange {
            url: url.to_string(),
            what: format!(
                "Content-Range `{cr}` promised {len} bytes, {} came",
                bytes.len()
            ),
        });
    }
    Ok(RangeRead::Partial {
        offset: first,
        bytes,
        total,
    })
}

/// Parses `Content-Range` into (first, last, total) and checks it covers the range asked for
/// in a file of the size the index gives.
fn checked_content_range(
    url: &str,
    cr: &str,
    want: &RangeWanted,
) -> Result<(u64, u64, u64), IndexError> {
    let range = want.range;
    let (first, last, total) = parse_content_range(cr).ok_or_else(|| IndexError::BadRange {
        url: url.to_string(),
        what: format!("asked for `{range}`, got Content-Range `{cr}`"),
    })?;
    if let Some(t) = want.expected_total {
        if t != total {
            return Err(IndexError::BadRange {
                url: url.to_string(),
                what: format!("the file is {total} bytes, the index says {t}"),
            });
        }
    }
    let want_first = match want.start {
        Some(s) => s,
        None => total.saturating_sub(want.end),
    };
    if first != want_first || last < first {
        return Err(IndexError::BadRange {
            url: url.to_string(),
            what: format!("asked for `{range}`, got Content-Range `{cr}`"),
        });
    }
    Ok((first, last, total))
}

fn transport(url: &str, e: ureq::Error) -> IndexError {
    let message = match &e {
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::HostNotFound => "host not found".to_string(),
        ureq::Error::ConnectionFailed => "connection failed".to_string(),
        ureq::Error::BodyExceedsLimit(n) => format!("the answer is larger than {n} bytes"),
        other => other.to_string(),
    };
    IndexError::Unreachable {
        url: url.to_string(),
        message,
    }
}

fn check_status(url: &str, status: u16) -> Result<(), IndexError> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(IndexError::Status {
            url: url.to_string(),
            status,
        })
    }
}

/// `bytes 10-19/100` -> (10, 19, 100).
pub fn parse_content_range(v: &str) -> Option<(u64, u64, u64)> {
    let rest = v.trim().strip_prefix("bytes")?.trim_start();
    let (range, total) = rest.split_once('/')?;
    let (a, b) = range.trim().split_once('-')?;
    Some((
        a.trim().parse().ok()?,
        b.trim().parse().ok()?,
        total.trim().parse().ok()?,
    ))
}

/// Reads the certificates of a PEM bundle.
pub fn load_pem_bundle(path: &Path) -> Result<Vec<ureq::tls::Certificate<'static>>, IndexError> {
    let cache_err = |message: String| IndexError::CaBundle {
        path: path.to_path_buf(),
        message,
    };
    let pem = std::fs::read(path).map_err(|e| cache_err(format!("{e}")))?;
    let certs: Vec<_> = ureq::tls::parse_pem(&pem)
        .filter_map(|item| match item {
            Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
            _ => None,
        })
        .collect();
    if certs.is_empty() {
        return Err(cache_err("no certificate in it".into()));
    }
    Ok(certs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_range_parses() {
        assert_eq!(
            parse_content_range("bytes 13484354-13549889/13549890"),
            Some((13484354, 13549889, 13549890))
        );
        assert_eq!(parse_content_range("bytes */100"), None);
        assert_eq!(parse_content_range("junk"), None);
    }
}
