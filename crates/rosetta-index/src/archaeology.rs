//! Version archaeology: group a project's files into releases ordered by
//! PEP 440, pick one wheel per release, and ask every release a question
//! (does it contain a path, does it register a model type, which model types
//! does it register) by reading only the wheels' zip directories and, when a
//! question needs text, one or two members. Requests run on a bounded pool of
//! threads; answers come from the cache when a wheel was read before.
//!
//! It returns values (per-release answers, a summary, byte counts); rendering
//! and exit codes are the binary's. Per-wheel failures (a wheel that is not a
//! zip, a directory past the end) become that release's error, not a panic
//! and not the end of the sweep.

use crate::cache::{Cache, CachedDirectory};
use crate::error::IndexError;
use crate::http::{Client, Page};
use crate::registry;
use crate::simple::{self, DistFile, DistKind, ProjectPage};
use crate::wheel::RemoteWheel;
use crate::zip::{self, Entry};
use pep440_rs::Version;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

/// What to ask every release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Question {
    /// Does the wheel contain this file, or a folder of this name?
    HasPath(String),
    /// Does the release register this transformers model type?
    HasModelType(String),
    /// Which model types does the release register?
    ModelTypes,
}

/// One release of a project.
#[derive(Debug, Clone, Serialize)]
pub struct Release {
    /// The version as the file names spell it.
    pub version: String,
    /// Parsed.
    #[serde(skip)]
    pub parsed: Version,
    /// A pre-release or development release.
    pub prerelease: bool,
    /// Every file of the release is yanked.
    pub yanked: bool,
    /// Why, when the index says.
    pub yanked_reason: Option<String>,
    /// The earliest upload date of its files (YYYY-MM-DD), when the index says.
    pub uploaded: Option<String>,
    /// The wheel read for this release, if it has one.
    pub wheel: Option<DistFile>,
}

/// A project as the index lists it.
#[derive(Debug, Clone)]
pub struct Project {
    /// The name asked for.
    pub name: String,
    /// The project page URL (credentials hidden).
    pub page_url: String,
    /// Whether the page came from the cache (`--offline`).
    pub from_cache: bool,
    /// Bytes of the page.
    pub page_bytes: u64,
    /// PEP 691 JSON (true) or PEP 503 HTML.
    pub json: bool,
    /// Releases in PEP 440 order.
    pub releases: Vec<Release>,
    /// File names whose version is not PEP 440 (skipped).
    pub skipped: Vec<String>,
}

/// The answer of one release.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseAnswer {
    /// The version.
    pub version: String,
    /// A pre-release or development release.
    pub prerelease: bool,
    /// Yanked (all files).
    pub yanked: bool,
    /// The yank reason.
    pub yanked_reason: Option<String>,
    /// Upload date.
    pub uploaded: Option<String>,
    /// The wheel read.
    pub file: Option<String>,
    /// Yes / no; `None` when it could not be told (no wheel, an error, no mapping).
    pub answer: Option<bool>,
    /// For [`Question::ModelTypes`]: the registered model types.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_types: Option<BTreeSet<String>>,
    /// Bytes read over the network for this release.
    pub bytes_read: u64,
    /// The wheel's size.
    pub bytes_total: u64,
    /// Requests made.
    pub requests: u32,
    /// Answered from the cache without a request.
    pub from_cache: bool,
    /// Something the user should know (fallbacks, no wheel).
    pub note: Option<String>,
    /// Why there is no answer, when something failed.
    pub error: Option<String>,
    /// Whether that failure was the index being unreachable (not a broken answer).
    #[serde(skip)]
    pub unreachable: bool,
}

/// The releases that bracket the answer.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Summary {
    /// First final, non-yanked release answering yes: what a resolver installs.
    pub first_with: Option<String>,
    /// First release answering yes at all (a pre-release or yanked one), when earlier.
    pub first_with_any: Option<String>,
    /// Last final, non-yanked release before `first_with` answering no.
    pub last_without: Option<String>,
    /// Last release answering yes.
    pub last_with: Option<String>,
    /// Non-yanked releases after `first_with` that answer no again.
    pub gaps: Vec<String>,
    /// Yanked releases (skipped for "first").
    pub yanked: Vec<String>,
    /// How many releases answered yes, no, or could not tell.
    pub yes: usize,
    /// See `yes`.
    pub no: usize,
    /// See `yes`.
    pub unknown: usize,
}

/// A finished sweep.
#[derive(Debug, Clone, Serialize)]
pub struct Sweep {
    /// Per release, in PEP 440 order.
    pub releases: Vec<ReleaseAnswer>,
    /// The bracket.
    pub summary: Summary,
    /// Bytes read over the network, wheels only.
    pub bytes_read: u64,
    /// Total size of the wheels read over the network.
    pub bytes_total_read_wheels: u64,
    /// Total size of all wheels asked about.
    pub bytes_total: u64,
    /// Requests made for wheels.
    pub requests: u64,
    /// Releases answered from the cache.
    pub cached: usize,
}

/// Progress, for a bar.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Releases done.
    pub done: usize,
    /// Releases to do.
    pub total: usize,
    /// Bytes read so far.
    pub bytes_read: u64,
}

/// Runs sweeps against one index with one client and one cache.
#[derive(Debug)]
pub struct Sweeper {
    /// The HTTP client; `None` means offline.
    pub client: Option<Client>,
    /// The cache; `None` means no cache.
    pub cache: Option<Cache>,
    /// Parallel requests.
    pub jobs: usize,
}

impl Sweeper {
    /// Fetches (or, offline, recalls) and parses a project page.
    pub fn project(&self, index: &str, package: &str) -> Result<Project, IndexError> {
        let url = simple::project_url(index, package);
        let shown = simple::redact_url(&url);
        let (page, from_cache) = match &self.client {
            Some(client) => {
                let page = client.get_page(&url)?;
                if let Some(c) = &self.cache {
                    // A cache that cannot be written costs the next --offline run, not this one.
                    let _ = c.save_page(index, &simple::normalize_name(package), &page);
                }
                (page, false)
            }
            None => {
                let cached: Option<Page> = self
                    .cache
                    .as_ref()
                    .and_then(|c| c.load_page(index, &simple::normalize_name(package)));
                match cached {
                    Some(p) => (p, true),
                    None => {
                        return Err(IndexError::NotCached {
                            what: format!("the project page {shown}"),
                            dir: self
                                .cache
                                .as_ref()
                                .map(|c| c.dir().to_path_buf())
                                .unwrap_or_default(),
                        })
                    }
                }
            }
        };
        let parsed = simple::parse_page(&page.body, &page.content_type, &page.url, package)
            .map_err(|what| IndexError::BadPage {
                url: shown.clone(),
                what,
            })?;
        if parsed.files.is_empty() {
            return Err(IndexError::BadPage {
                url: shown,
                what: "the page lists no files (is the index URL a simple repository, and the name right?)"
                    .into(),
            });
        }
        let (releases, skipped) = group_releases(&parsed);
        Ok(Project {
            name: package.to_string(),
            page_url: shown,
            from_cache,
            page_bytes: page.body.len() as u64,
            json: parsed.json,
            releases,
            skipped,
        })
    }

    /// Asks every release from `since` on (all when `None`) the question.
    pub fn sweep(
        &self,
        project: &Project,
        question: &Question,
        since: Option<&Version>,
        progress: &(dyn Fn(Progress) + Sync),
    ) -> Sweep {
        let todo: Vec<&Release> = project
            .releases
            .iter()
            .filter(|r| since.is_none_or(|s| &r.parsed >= s))
            .collect();
        let total = todo.len();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let bytes = AtomicU64::new(0);
        let results: Mutex<Vec<Option<ReleaseAnswer>>> = Mutex::new(vec![None; total]);
        let workers = self.jobs.clamp(1, 64).min(total.max(1));
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(rel) = todo.get(i) else { break };
                    let ans = self.answer(rel, question);
                    bytes.fetch_add(ans.bytes_read, Ordering::Relaxed);
                    if let Ok(mut r) = results.lock() {
                        r[i] = Some(ans);
                    }
                    let d = done.fetch_add(1, Ordering::Relaxed) + 1;
                    progress(Progress {
                        done: d,
                        total,
                        bytes_read: bytes.load(Ordering::Relaxed),
                    });
                });
            }
        });
        let releases: Vec<ReleaseAnswer> = results
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .zip(&todo)
            .map(|(a, r)| a.unwrap_or_else(|| blank(r)))
            .collect();
        let summary = summarize(&releases);
        let network: Vec<&ReleaseAnswer> = releases.iter().filter(|r| r.requests > 0).collect();
        Sweep {
            bytes_read: releases.iter().map(|r| r.bytes_read).sum(),
            bytes_total_read_wheels: network.iter().map(|r| r.bytes_total).sum(),
            bytes_total: releases.iter().map(|r| r.bytes_total).sum(),
            requests: releases.iter().map(|r| u64::from(r.requests)).sum(),
            cached: releases.iter().filter(|r| r.from_cache).count(),
            summary,
            releases,
        }
    }

    fn answer(&self, rel: &Release, question: &Question) -> ReleaseAnswer {
        let mut out = blank(rel);
        let Some(wheel) = &rel.wheel else {
            out.note = Some("no wheel (sdist only): not read".into());
            return out;
        };
        let mut job = WheelJob {
            sweeper: self,
            file: wheel,
            remote: None,
            dir: None,
            from_cache: true,
        };
        // (answer, model types, whether a mapping was looked for and not found)
        let result = match question {
            Question::HasPath(p) => job.entries().map(|(entries, _)| {
                let p = p.trim_matches('/');
                let yes = entries.iter().any(|e| {
                    e.name == p || e.name.strip_prefix(p).is_some_and(|r| r.starts_with('/'))
                });
                (Some(yes), None, false)
            }),
            Question::HasModelType(t) => job.model_types().map(|types| {
                let missing = types.is_none();
                (types.map(|s| s.contains(t.as_str())), None, missing)
            }),
            Question::ModelTypes => job.model_types().map(|types| {
                let missing = types.is_none();
                (None, types, missing)
            }),
        };
        out.bytes_total = wheel
            .size
            .or_else(|| job.remote.as_ref().and_then(|r| r.total()))
            .or(job.dir.as_ref().map(|d| d.total))
            .unwrap_or(0);
        if let Some(r) = &job.remote {
            out.bytes_read = r.bytes_read;
            out.requests = r.requests;
            if !r.notes.is_empty() {
                out.note = Some(r.notes.join("; "));
            }
        }
        out.from_cache = job.from_cache && out.requests == 0;
        match result {
            Ok((answer, types, missing)) => {
                out.answer = answer;
                out.model_types = types;
                if missing {
                    out.note =
                        Some("no model type mapping (CONFIG_MAPPING_NAMES) in this wheel".into());
                }
            }
            Err(e) => {
                out.unreachable = e.is_service();
                out.error = Some(e.to_string());
            }
        }
        out
    }
}

/// The work on one wheel: its directory and members, from cache or network.
struct WheelJob<'s> {
    sweeper: &'s Sweeper,
    file: &'s DistFile,
    remote: Option<RemoteWheel<'s>>,
    dir: Option<CachedDirectory>,
    from_cache: bool,
}

impl<'s> WheelJob<'s> {
    fn sha(&self) -> Option<&str> {
        self.file.sha256.as_deref()
    }

    fn remote(&mut self) -> Result<&mut RemoteWheel<'s>, IndexError> {
        if self.remote.is_none() {
            let Some(client) = &self.sweeper.client else {
                return Err(IndexError::NotCached {
                    what: format!("the directory of {}", self.file.filename),
                    dir: self
                        .sweeper
                        .cache
                        .as_ref()
                        .map(|c| c.dir().to_path_buf())
                        .unwrap_or_default(),
                });
            };
            let size = self.file.size.or(self.dir.as_ref().map(|d| d.total));
            self.remote = Some(RemoteWheel::new(client, &self.file.url, size));
            self.from_cache = false;
        }
        match self.remote.as_mut() {
            Some(r) => Ok(r),
            None => Err(IndexError::BadRange {
                url: self.file.url.clone(),
                what: "no reader".into(),
            }),
        }
    }

    /// The central directory's entries and the directory's offset.
    fn entries(&mut self) -> Result<(Vec<Entry>, u64), IndexError> {
        if self.dir.is_none() {
            if let (Some(c), Some(sha)) = (&self.sweeper.cache, self.sha()) {
                self.dir = c.load_directory(sha);
            }
        }
        if let Some(d) = &self.dir {
            let entries = zip::parse_central_directory(&d.raw, d.total).map_err(|source| {
                IndexError::Zip {
                    url: self.file.url.clone(),
                    source,
                }
            })?;
            return Ok((entries, d.end.cd_offset));
        }
        let d = self.remote()?.directory()?;
        let cached = CachedDirectory {
            total: d.total,
            end: d.end,
            raw: d.raw,
        };
        if let (Some(c), Some(sha)) = (&self.sweeper.cache, self.sha()) {
            let _ = c.save_directory(sha, &cached);
        }
        let off = cached.end.cd_offset;
        self.dir = Some(cached);
        Ok((d.entries, off))
    }

    /// The model types the release registers (`None`: no mapping found).
    fn model_types(&mut self) -> Result<Option<BTreeSet<String>>, IndexError> {
        const KEY: &str = "model-types";
        if let (Some(c), Some(sha)) = (&self.sweeper.cache, self.sha()) {
            if let Some(text) = c.load_answer(sha, KEY) {
                return Ok(decode_types(&text));
            }
        }
        let (entries, cd_offset) = self.entries()?;
        let members = registry::mapping_members(entries.iter().map(|e| e.name.as_str()));
        let wanted: Vec<&Entry> = members
            .iter()
            .filter_map(|m| entries.iter().find(|e| &e.name == m))
            .collect();
        let texts: Vec<String> = if wanted.is_empty() {
            Vec::new()
        } else {
            self.remote()?
                .members(&wanted, cd_offset)?
                .iter()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .collect()
        };
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let types = registry::registered_model_types(&refs);
        if let (Some(c), Some(sha)) = (&self.sweeper.cache, self.sha()) {
            let _ = c.save_answer(sha, KEY, &encode_types(types.as_ref()));
        }
        Ok(types)
    }
}

fn encode_types(types: Option<&BTreeSet<String>>) -> String {
    match types {
        None => "none\n".into(),
        Some(t) => {
            let mut s = String::from("found\n");
            for k in t {
                s.push_str(k);
                s.push('\n');
            }
            s
        }
    }
}

fn decode_types(text: &str) -> Option<BTreeSet<String>> {
    let mut lines = text.lines();
    match lines.next() {
        Some("found") => Some(
            lines
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

fn blank(rel: &Release) -> ReleaseAnswer {
    ReleaseAnswer {
        version: rel.version.clone(),
        prerelease: rel.prerelease,
        yanked: rel.yanked,
        yanked_reason: rel.yanked_reason.clone(),
        uploaded: rel.uploaded.clone(),
        file: rel.wheel.as_ref().map(|w| w.filename.clone()),
        answer: None,
        model_types: None,
        bytes_read: 0,
        bytes_total: rel.wheel.as_ref().and_then(|w| w.size).unwrap_or(0),
        requests: 0,
        from_cache: false,
        note: None,
        error: None,
        unreachable: false,
    }
}

/// Groups a page's files into releases in PEP 440 order and picks a wheel for each.
pub fn group_releases(page: &ProjectPage) -> (Vec<Release>, Vec<String>) {
    let mut by_version: BTreeMap<Version, (String, Vec<&DistFile>)> = BTreeMap::new();
    let mut skipped = Vec::new();
    for f in &page.files {
        let Some(v) = f.version.as_deref() else {
            if f.kind != DistKind::Other {
                skipped.push(f.filename.clone());
            }
            continue;
        };
        match Version::from_str(v) {
            Ok(parsed) => by_version
                .entry(parsed)
                .or_insert_with(|| (v.to_string(), Vec::new()))
                .1
                .push(f),
            Err(_) => skipped.push(f.filename.clone()),
        }
    }
    let releases = by_version
        .into_iter()
        .map(|(parsed, (version, files))| {
            let yanked = files.iter().all(|f| f.yanked);
            let yanked_reason = files.iter().find_map(|f| f.yanked_reason.clone());
            let uploaded = files
                .iter()
                .filter_map(|f| f.upload_time.as_deref())
                .min()
                .map(|t| t.chars().take(10).collect());
            let wheel = pick_wheel(&files).cloned();
            Release {
                prerelease: parsed.any_prerelease(),
                version,
                parsed,
                yanked,
                yanked_reason: if yanked { yanked_reason } else { None },
                uploaded,
                wheel,
            }
        })
        .collect();
    (releases, skipped)
}

/// One wheel per release: a pure-Python one if there is one, else a Linux
/// x86-64 one, else the first. Non-yanked files first.
fn pick_wheel<'a>(files: &[&'a DistFile]) -> Option<&'a DistFile> {
    let rank = |f: &DistFile| {
        let n = f.filename.to_ascii_lowercase();
        let kind = if n.ends_with("-none-any.whl") {
            0
        } else if n.contains("linux") && n.contains("x86_64") {
            1
        } else {
            2
        };
        (u8::from(f.yanked), kind)
    };
    files
        .iter()
        .filter(|f| f.kind == DistKind::Wheel)
        .min_by_key(|f| rank(f))
        .copied()
}

/// The bracket of a sweep's answers.
pub fn summarize(releases: &[ReleaseAnswer]) -> Summary {
    let mut s = Summary {
        yanked: releases
            .iter()
            .filter(|r| r.yanked)
            .map(|r| r.version.clone())
            .collect(),
        ..Summary::default()
    };
    for r in releases {
        match r.answer {
            Some(true) => s.yes += 1,
            Some(false) => s.no += 1,
            None => s.unknown += 1,
        }
    }
    let installable = |r: &&ReleaseAnswer| !r.yanked && !r.prerelease;
    let first = releases
        .iter()
        .position(|r| installable(&r) && r.answer == Some(true));
    let first_any = releases.iter().position(|r| r.answer == Some(true));
    if let Some(fi) = first {
        s.first_with = Some(releases[fi].version.clone());
        s.last_without = releases[..fi]
            .iter()
            .rev()
            .find(|r| installable(r) && r.answer == Some(false))
            .map(|r| r.version.clone());
        s.gaps = releases[fi..]
            .iter()
            .filter(|r| !r.yanked && r.answer == Some(false))
            .map(|r| r.version.clone())
            .collect();
    }
    if let Some(fa) = first_any {
        if first != Some(fa) {
            s.first_with_any = Some(releases[fa].version.clone());
        }
    }
    s.last_with = releases
        .iter()
        .rev()
        .find(|r| r.answer == Some(true))
        .map(|r| r.version.clone());
    s
}

/// When each model type entered and left, over the releases whose mapping was read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ModelTypeHistory {
    /// The releases whose mapping was read, in PEP 440 order: (version, uploaded, yanked).
    pub releases: Vec<(String, Option<String>, bool)>,
    /// Every yanked release of the project.
    pub yanked: Vec<String>,
    /// Per model type.
    pub types: BTreeMap<String, TypeSpan>,
}

/// When one model type entered and left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TypeSpan {
    /// First release registering it, pre-releases and yanked ones included.
    pub first_any: Option<String>,
    /// First final release registering it.
    pub first_final: Option<String>,
    /// First final, non-yanked release registering it.
    pub first_final_not_yanked: Option<String>,
    /// Last release registering it, when the newest release read no longer does.
    pub last_seen: Option<String>,
}

/// Builds the history from a [`Question::ModelTypes`] sweep.
pub fn model_type_history(project: &Project, sweep: &Sweep) -> ModelTypeHistory {
    let read: Vec<&ReleaseAnswer> = sweep
        .releases
        .iter()
        .filter(|r| r.model_types.is_some())
        .collect();
    let mut h = ModelTypeHistory {
        releases: read
            .iter()
            .map(|r| (r.version.clone(), r.uploaded.clone(), r.yanked))
            .collect(),
        yanked: project
            .releases
            .iter()
            .filter(|r| r.yanked)
            .map(|r| r.version.clone())
            .collect(),
        types: BTreeMap::new(),
    };
    let mut last_seen: BTreeMap<String, String> = BTreeMap::new();
    for r in &read {
        for t in r.model_types.iter().flatten() {
            let span = h.types.entry(t.clone()).or_default();
            span.first_any.get_or_insert_with(|| r.version.clone());
            if !r.prerelease {
                span.first_final.get_or_insert_with(|| r.version.clone());
                if !r.yanked {
                    span.first_final_not_yanked
                        .get_or_insert_with(|| r.version.clone());
                }
            }
            last_seen.insert(t.clone(), r.version.clone());
        }
    }
    let newest = read.last().map(|r| r.version.clone());
    for (t, span) in h.types.iter_mut() {
        let last = last_seen.get(t).cloned();
        if last != newest {
            span.last_seen = last;
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ans(v: &str, answer: Option<bool>, yanked: bool) -> ReleaseAnswer {
        ReleaseAnswer {
            version: v.into(),
            prerelease: Version::from_str(v).unwrap().any_prerelease(),
            yanked,
            yanked_reason: None,
            uploaded: None,
            file: None,
            answer,
            model_types: None,
            bytes_read: 0,
            bytes_total: 0,
            requests: 0,
            from_cache: false,
            note: None,
            error: None,
            unreachable: false,
        }
    }

    #[test]
    fn summary_skips_yanked_and_prereleases_for_first() {
        let rs = vec![
            ans("4.56.0", Some(false), false),
            ans("4.57.0", Some(true), true),
            ans("4.57.1", Some(true), false),
            ans("5.0.0rc0", Some(true), false),
            ans("5.0.0", Some(false), false),
            ans("5.1.0", None, false),
        ];
        let s = summarize(&rs);
        assert_eq!(s.first_with.as_deref(), Some("4.57.1"));
        assert_eq!(s.first_with_any.as_deref(), Some("4.57.0"));
        assert_eq!(s.last_without.as_deref(), Some("4.56.0"));
        assert_eq!(s.last_with.as_deref(), Some("5.0.0rc0"));
        assert_eq!(s.gaps, ["5.0.0"]);
        assert_eq!(s.yanked, ["4.57.0"]);
        assert_eq!((s.yes, s.no, s.unknown), (3, 2, 1));
    }

    #[test]
    fn releases_group_in_pep440_order_not_page_order() {
        let json = r#"{"files":[
          {"filename":"t-5.10.0-py3-none-any.whl","url":"a","yanked":"old main"},
          {"filename":"t-5.9.0-py3-none-any.whl","url":"b"},
          {"filename":"t-5.10.0.tar.gz","url":"c","yanked":true},
          {"filename":"t-5.2.0.tar.gz","url":"d"},
          {"filename":"t-5.2.0-cp312-cp312-macosx_11_0_arm64.whl","url":"e"},
          {"filename":"t-5.2.0-cp312-cp312-manylinux_2_34_x86_64.whl","url":"f"},
          {"filename":"t-nonsense.tar.gz","url":"g"}
        ]}"#;
        let page = simple::parse_json(json, "http://h/simple/t/", "t").unwrap();
        let (rs, skipped) = group_releases(&page);
        let vs: Vec<&str> = rs.iter().map(|r| r.version.as_str()).collect();
        assert_eq!(vs, ["5.2.0", "5.9.0", "5.10.0"]);
        assert!(rs[2].yanked);
        assert_eq!(rs[2].yanked_reason.as_deref(), Some("old main"));
        assert!(rs[0].wheel.as_ref().unwrap().filename.contains("manylinux"));
        assert_eq!(skipped, ["t-nonsense.tar.gz"]);
    }

    #[test]
    fn history_matches_the_table_format_semantics() {
        let mk = |v: &str, yanked: bool, types: &[&str]| {
            let mut a = ans(v, None, yanked);
            a.model_types = Some(types.iter().map(|s| s.to_string()).collect());
            a
        };
        let sweep = Sweep {
            releases: vec![
                mk("4.56.0", false, &["old", "llama"]),
                mk("4.57.0", true, &["old", "llama", "qwen3_next"]),
                mk("4.57.1", false, &["old", "llama", "qwen3_next"]),
                mk("5.0.0rc0", false, &["llama", "qwen3_next", "afmoe"]),
                mk("5.0.0", false, &["llama", "qwen3_next", "afmoe"]),
            ],
            summary: Summary::default(),
            bytes_read: 0,
            bytes_total_read_wheels: 0,
            bytes_total: 0,
            requests: 0,
            cached: 0,
        };
        let project = Project {
            name: "t".into(),
            page_url: String::new(),
            from_cache: false,
            page_bytes: 0,
            json: true,
            releases: Vec::new(),
            skipped: Vec::new(),
        };
        let h = model_type_history(&project, &sweep);
        let q = &h.types["qwen3_next"];
        assert_eq!(q.first_any.as_deref(), Some("4.57.0"));
        assert_eq!(q.first_final.as_deref(), Some("4.57.0"));
        assert_eq!(q.first_final_not_yanked.as_deref(), Some("4.57.1"));
        assert_eq!(q.last_seen, None);
        assert_eq!(h.types["old"].last_seen.as_deref(), Some("4.57.1"));
        let a = &h.types["afmoe"];
        assert_eq!(
            (a.first_any.as_deref(), a.first_final.as_deref()),
            (Some("5.0.0rc0"), Some("5.0.0"))
        );
    }
}
