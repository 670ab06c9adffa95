//! Integration tests of the index client against a package index on
//! 127.0.0.1 that serves wheels built here: answers, bytes read, the
//! no-range fallback, ZIP64, the cache and `--offline`, and broken answers
//! (404, HTML labelled JSON, a wheel that is not a zip, a directory past the
//! end). No test touches the internet.

mod server;

use rosetta_index::archaeology::{model_type_history, Progress, Question, Sweeper};
use rosetta_index::cache::Cache;
use rosetta_index::http::{Client, ClientOptions};
use rosetta_index::IndexError;
use server::{filler, start, zip, File, PageMode};
use std::sync::Arc;
use std::time::Duration;

const PAD: usize = 1_500_000;

fn client() -> Client {
    Client::new(&ClientOptions {
        connect_timeout: Duration::from_secs(5),
        response_timeout: Duration::from_secs(20),
        attempts: 2,
        ..ClientOptions::default()
    })
    .unwrap()
}

fn sweeper(cache: Option<&std::path::Path>) -> Sweeper {
    Sweeper {
        client: Some(client()),
        cache: cache.map(Cache::new),
        jobs: 4,
    }
}

fn no_progress(_: Progress) {}

/// A wheel: a large incompressible blob first (as real wheels' bulk), then the members.
fn wheel(
    pkg: &str,
    version: &str,
    members: &[(&str, &str)],
    zip64: bool,
    yanked: Option<&str>,
) -> File {
    let mut all: Vec<(&str, Vec<u8>)> =
        vec![("blob/data.bin", filler(PAD, version.len() as u64 + 7))];
    for (n, t) in members {
        all.push((n, t.as_bytes().to_vec()));
    }
    all.push((
        "x.dist-info/METADATA",
        format!("Name: {pkg}\nVersion: {version}\n").into_bytes(),
    ));
    File {
        name: format!("{pkg}-{version}-py3-none-any.whl"),
        bytes: Arc::new(zip(&all, zip64)),
        yanked: yanked.map(str::to_string),
    }
}

fn demo_files() -> Vec<File> {
    vec![
        wheel("demo", "1.0", &[("demo/__init__.py", "")], false, None),
        wheel(
            "demo",
            "1.1",
            &[("demo/new/feature.py", "x = 1")],
            false,
            Some("broken build"),
        ),
        wheel(
            "demo",
            "1.2",
            &[("demo/new/feature.py", "x = 2")],
            false,
            None,
        ),
        // Listed out of order on purpose, and a ZIP64 one.
        wheel(
            "demo",
            "1.10",
            &[("demo/new/feature.py", "x = 3")],
            true,
            None,
        ),
        wheel(
            "demo",
            "1.3rc1",
            &[("demo/new/feature.py", "x = 2")],
            false,
            None,
        ),
    ]
}

fn mapping(types: &[&str]) -> String {
    let mut s = String::from(
        "from collections import OrderedDict\n\nCONFIG_MAPPING_NAMES = OrderedDict(\n    [\n",
    );
    for t in types {
        s.push_str(&format!("        (\"{t}\", \"{t}Config\"),\n"));
    }
    s.push_str("    ]\n)\n");
    s
}

fn tf_files() -> Vec<File> {
    let cfg = "tfake/models/auto/configuration_auto.py";
    let split_conf = "from .auto_mappings import CONFIG_MAPPING_NAMES\n\nCONFIG_MAPPING_NAMES.update({\"EvollaModel\": \"EvollaConfig\"})\n";
    vec![
        wheel(
            "tfake",
            "4.57.0",
            &[(cfg, &mapping(&["llama", "qwen3_next"]))],
            false,
            Some("setup error"),
        ),
        wheel(
            "tfake",
            "4.57.1",
            &[(cfg, &mapping(&["llama", "qwen3_next"]))],
            false,
            None,
        ),
        // A folder alone does not register a model type.
        wheel(
            "tfake",
            "5.1.0",
            &[
                (cfg, &mapping(&["llama", "qwen3_next"])),
                ("tfake/models/glm_moe_dsa/__init__.py", ""),
            ],
            false,
            None,
        ),
        wheel(
            "tfake",
            "5.2.0",
            &[(cfg, &mapping(&["llama", "qwen3_next", "glm_moe_dsa"]))],
            false,
            None,
        ),
        wheel(
            "tfake",
            "5.6.0",
            &[
                (
                    "tfake/models/auto/auto_mappings.py",
                    &mapping(&["llama", "qwen3_next", "glm_moe_dsa"]),
                ),
                (cfg, split_conf),
            ],
            true,
            None,
        ),
    ]
}

#[test]
fn has_path_answers_from_directories_only() {
    let files = demo_files();
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let idx = start("demo", files, PageMode::Json, true);
    let s = sweeper(None);
    let project = s.project(&idx.base, "demo").unwrap();
    assert!(project.json);
    let versions: Vec<&str> = project
        .releases
        .iter()
        .map(|r| r.version.as_str())
        .collect();
    assert_eq!(
        versions,
        ["1.0", "1.1", "1.2", "1.3rc1", "1.10"],
        "PEP 440 order"
    );

    let sweep = s.sweep(
        &project,
        &Question::HasPath("demo/new".into()),
        None,
        &no_progress,
    );
    let answers: Vec<Option<bool>> = sweep.releases.iter().map(|r| r.answer).collect();
    assert_eq!(
        answers,
        [Some(false), Some(true), Some(true), Some(true), Some(true)]
    );
    assert_eq!(
        sweep.summary.first_with.as_deref(),
        Some("1.2"),
        "1.1 is yanked"
    );
    assert_eq!(sweep.summary.first_with_any.as_deref(), Some("1.1"));
    assert_eq!(sweep.summary.last_without.as_deref(), Some("1.0"));
    assert_eq!(sweep.summary.yanked, ["1.1"]);
    assert!(
        sweep.releases.iter().all(|r| r.error.is_none()),
        "{:?}",
        sweep.releases
    );

    // Only tails were read: one request per wheel, a few percent of the bytes.
    assert_eq!(idx.file_requests(), 5);
    assert_eq!(sweep.bytes_read, idx.file_bytes());
    assert!(
        sweep.bytes_read * 20 < total,
        "{} of {}",
        sweep.bytes_read,
        total
    );
    assert_eq!(sweep.bytes_total, total);
    for r in &sweep.releases {
        assert!(r.bytes_read < r.bytes_total / 10, "{r:?}");
    }

    // A file path matches exactly; a prefix of a name is not a folder.
    let exact = s.sweep(
        &project,
        &Question::HasPath("demo/new/feature.py".into()),
        None,
        &no_progress,
    );
    assert_eq!(exact.summary.first_with.as_deref(), Some("1.2"));
    let partial = s.sweep(
        &project,
        &Question::HasPath("demo/ne".into()),
        None,
        &no_progress,
    );
    assert_eq!(partial.summary.yes, 0);
}

#[test]
fn model_types_come_from_the_registry_not_folders() {
    let files = tf_files();
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    // An HTML-only index: the JSON request falls back.
    let idx = start("tfake", files, PageMode::Html, true);
    let s = sweeper(None);
    let project = s.project(&idx.base, "tfake").unwrap();
    assert!(!project.json);
    let sweep = s.sweep(
        &project,
        &Question::HasModelType("glm_moe_dsa".into()),
        None,
        &no_progress,
    );
    let answers: Vec<(&str, Option<bool>)> = sweep
        .releases
        .iter()
        .map(|r| (r.version.as_str(), r.answer))
        .collect();
    assert_eq!(
        answers,
        [
            ("4.57.0", Some(false)),
            ("4.57.1", Some(false)),
            ("5.1.0", Some(false)),
            ("5.2.0", Some(true)),
            ("5.6.0", Some(true)),
        ]
    );
    assert_eq!(sweep.summary.first_with.as_deref(), Some("5.2.0"));
    assert_eq!(sweep.summary.last_without.as_deref(), Some("5.1.0"));
    assert!(sweep.bytes_read * 20 < total);
    // The tail, and one more read for the mapping member(s).
    for r in &sweep.releases {
        assert!(r.requests <= 2, "{r:?}");
    }

    let q = s.sweep(
        &project,
        &Question::HasModelType("qwen3_next".into()),
        None,
        &no_progress,
    );
    assert_eq!(
        q.summary.first_with.as_deref(),
        Some("4.57.1"),
        "4.57.0 is yanked"
    );

    let all = s.sweep(&project, &Question::ModelTypes, None, &no_progress);
    let h = model_type_history(&project, &all);
    assert_eq!(h.releases.len(), 5);
    assert_eq!(h.yanked, ["4.57.0"]);
    let g = &h.types["glm_moe_dsa"];
    assert_eq!(g.first_any.as_deref(), Some("5.2.0"));
    assert_eq!(g.last_seen, None);
    let q = &h.types["qwen3_next"];
    assert_eq!(
        (q.first_any.as_deref(), q.first_final_not_yanked.as_deref()),
        (Some("4.57.0"), Some("4.57.1"))
    );
    assert!(
        h.types.contains_key("EvollaModel"),
        "CONFIG_MAPPING_NAMES.update is read"
    );
}

#[test]
fn a_server_without_ranges_costs_whole_files_and_says_so() {
    let files = demo_files();
    let total: u64 = files.iter().map(|f| f.bytes.len() as u64).sum();
    let idx = start("demo", files, PageMode::Json, false);
    let s = sweeper(None);
    let project = s.project(&idx.base, "demo").unwrap();
    let sweep = s.sweep(
        &project,
        &Question::HasPath("demo/new".into()),
        None,
        &no_progress,
    );
    assert_eq!(sweep.summary.first_with.as_deref(), Some("1.2"));
    assert_eq!(sweep.bytes_read, total);
    assert_eq!(
        idx.file_requests(),
        5,
        "one whole download per wheel, never two"
    );
    for r in &sweep.releases {
        assert!(
            r.note
                .as_deref()
                .unwrap_or("")
                .contains("ignored range requests"),
            "{r:?}"
        );
    }
}

#[test]
fn the_cache_answers_warm_and_offline() {
    let dir = tempfile::tempdir().unwrap();
    let idx = start("tfake", tf_files(), PageMode::Json, true);
    let s = sweeper(Some(dir.path()));
    let project = s.project(&idx.base, "tfake").unwrap();
    let q = Question::HasModelType("glm_moe_dsa".into());
    let cold = s.sweep(&project, &q, None, &no_progress);
    let requests_after_cold = idx.file_requests();
    assert!(requests_after_cold > 0);

    let warm = s.sweep(&project, &q, None, &no_progress);
    assert_eq!(
        idx.file_requests(),
        requests_after_cold,
        "warm sweep makes no wheel request"
    );
    assert_eq!(warm.cached, 5);
    assert_eq!(warm.bytes_read, 0);
    assert_eq!(warm.summary.first_with, cold.summary.first_with);

    // A path question reuses the cached directories.
    let p = s.sweep(
        &project,
        &Question::HasPath("tfake/models/glm_moe_dsa".into()),
        None,
        &no_progress,
    );
    assert_eq!(idx.file_requests(), requests_after_cold);
    assert_eq!(p.summary.first_with.as_deref(), Some("5.1.0"));

    // Offline: no client at all, page and answers from the cache.
    let offline = Sweeper {
        client: None,
        cache: Some(Cache::new(dir.path())),
        jobs: 2,
    };
    let project = offline.project(&idx.base, "tfake").unwrap();
    assert!(project.from_cache);
    let o = offline.sweep(&project, &q, None, &no_progress);
    assert_eq!(o.summary.first_with.as_deref(), Some("5.2.0"));

    // Offline with an empty cache is a clear error, not a guess.
    let empty = tempfile::tempdir().unwrap();
    let none = Sweeper {
        client: None,
        cache: Some(Cache::new(empty.path())),
        jobs: 1,
    };
    let err = none.project(&idx.base, "tfake").unwrap_err();
    assert!(matches!(err, IndexError::NotCached { .. }), "{err}");
    assert!(err.to_string().contains("not in the cache"), "{err}");
}

#[test]
fn broken_pages_give_clear_errors() {
    let idx = start("demo", demo_files(), PageMode::NotFound, true);
    let err = sweeper(None).project(&idx.base, "demo").unwrap_err();
    assert!(
        matches!(err, IndexError::Status { status: 404, .. }),
        "{err}"
    );
    assert!(!err.is_service());
    assert!(err.to_string().contains("404"), "{err}");

    let idx = start("demo", demo_files(), PageMode::HtmlLabelledJson, true);
    let err = sweeper(None).project(&idx.base, "demo").unwrap_err();
    assert!(err.to_string().contains("sent HTML"), "{err}");

    // Nothing listens here: unreachable, a service error (exit 3).
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = sweeper(None)
        .project(&format!("http://127.0.0.1:{port}/simple"), "demo")
        .unwrap_err();
    assert!(err.is_service(), "{err}");
}

#[test]
fn broken_wheels_are_per_release_errors_not_panics() {
    let good = wheel("demo", "1.0", &[("demo/new/a.py", "")], false, None);
    let not_zip = File {
        name: "demo-1.1-py3-none-any.whl".into(),
        bytes: Arc::new(b"<html>this is not a wheel</html>".repeat(4000)),
        yanked: None,
    };
    let mut past_end = zip(&[("demo/new/a.py", filler(300_000, 3))], false);
    let n = past_end.len();
    past_end[n - 6..n - 2].copy_from_slice(&(n as u32 + 1000).to_le_bytes());
    let past_end = File {
        name: "demo-1.2-py3-none-any.whl".into(),
        bytes: Arc::new(past_end),
        yanked: None,
    };
    let mut bad_cd = zip(&[("demo/new/a.py", filler(300_000, 4))], false);
    // Corrupt the first central directory signature.
    let cd_at = bad_cd.len() - 22 - (46 + "demo/new/a.py".len());
    bad_cd[cd_at] = b'X';
    let bad_cd = File {
        name: "demo-1.3-py3-none-any.whl".into(),
        bytes: Arc::new(bad_cd),
        yanked: None,
    };
    let idx = start(
        "demo",
        vec![good, not_zip, past_end, bad_cd],
        PageMode::Json,
        true,
    );
    let s = sweeper(None);
    let project = s.project(&idx.base, "demo").unwrap();
    let sweep = s.sweep(
        &project,
        &Question::HasPath("demo/new".into()),
        None,
        &no_progress,
    );
    let r = &sweep.releases;
    assert_eq!(r[0].answer, Some(true));
    let e1 = r[1].error.as_deref().unwrap_or("");
    assert!(
        e1.contains("not a zip file") && e1.contains("demo-1.1"),
        "{e1}"
    );
    let e2 = r[2].error.as_deref().unwrap_or("");
    assert!(e2.contains("points past the end"), "{e2}");
    let e3 = r[3].error.as_deref().unwrap_or("");
    assert!(e3.contains("central directory"), "{e3}");
    assert!(r[1..].iter().all(|x| x.answer.is_none() && !x.unreachable));
    assert_eq!(sweep.summary.first_with.as_deref(), Some("1.0"));
}
