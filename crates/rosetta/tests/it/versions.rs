//! `rosetta versions` against a 127.0.0.1 index serving wheels built here.

#[path = "../../../rosetta-index/tests/it/server.rs"]
#[allow(dead_code)]
pub(crate) mod server;

use super::{rosetta, stderr, stdout};
use server::{filler, start, zip, File, PageMode};
use std::sync::Arc;

fn wheel(version: &str, members: &[(&str, &str)], yanked: Option<&str>) -> File {
    let mut all: Vec<(&str, Vec<u8>)> = vec![("blob.bin", filler(1_000_000, 11))];
    for (n, t) in members {
        all.push((n, t.as_bytes().to_vec()));
    }
    File {
        name: format!("transformers-{version}-py3-none-any.whl"),
        bytes: Arc::new(zip(&all, version == "5.2.0")),
        yanked: yanked.map(str::to_string),
    }
}

fn mapping(types: &[&str]) -> String {
    let rows: String = types
        .iter()
        .map(|t| format!("        (\"{t}\", \"C\"),\n"))
        .collect();
    format!("CONFIG_MAPPING_NAMES = OrderedDict(\n    [\n{rows}    ]\n)\n")
}

fn index(mode: PageMode, ranges: bool) -> server::Index {
    let cfg = "transformers/models/auto/configuration_auto.py";
    start(
        "transformers",
        vec![
            wheel(
                "4.57.0",
                &[(cfg, &mapping(&["llama", "qwen3_next"]))],
                Some("setup error"),
            ),
            wheel("4.57.1", &[(cfg, &mapping(&["llama", "qwen3_next"]))], None),
            wheel("5.1.0", &[(cfg, &mapping(&["llama", "qwen3_next"]))], None),
            wheel(
                "5.2.0",
                &[(cfg, &mapping(&["llama", "qwen3_next", "glm_moe_dsa"]))],
                None,
            ),
        ],
        mode,
        ranges,
    )
}

/// An index of four transformers releases on 127.0.0.1, for other tests.
pub(crate) fn serve() -> server::Index {
    index(PageMode::Json, true)
}

#[test]
fn has_model_type_answers_with_bytes_and_windows() {
    let home = tempfile::tempdir().unwrap();
    let idx = index(PageMode::Json, true);
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-model-type",
            "glm_moe_dsa",
            "--index-url",
            &idx.base,
            "--format",
            "json",
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["first_with"], "5.2.0");
    assert_eq!(j["last_without"], "5.1.0");
    assert_eq!(j["yanked"], serde_json::json!(["4.57.0"]));
    let read = j["bytes_read"].as_u64().unwrap();
    let total = j["bytes_total"].as_u64().unwrap();
    assert!(read > 0 && read * 20 < total, "{read} of {total}");
    let releases = j["releases"].as_array().unwrap();
    assert_eq!(releases.len(), 4);
    assert_eq!(releases[3]["answer"], true);
    assert!(
        releases[3]["bytes_read"].as_u64().unwrap() < releases[3]["bytes_total"].as_u64().unwrap()
    );
    // The knowledge base's windows are shown beside the releases they cover.
    let windows = j["windows"].as_array().unwrap();
    assert!(windows
        .iter()
        .any(|w| w["what"].as_str().unwrap_or("").contains("vLLM")));
    assert!(!releases[3]["windows"].as_array().unwrap().is_empty());

    // Text, from the cache this time (the default cache lives under HOME).
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-model-type",
            "qwen3_next",
            "--index-url",
            &idx.base,
        ],
        home.path(),
        &[],
    );
    let text = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(text.contains("first with    4.57.1"), "{text}");
    assert!(text.contains("yanked"), "{text}");
    assert!(text.contains("4 of 4 releases from the cache"), "{text}");

    // Offline: same answer, no network.
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-model-type",
            "glm_moe_dsa",
            "--index-url",
            &idx.base,
            "--offline",
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("first with    5.2.0"));
}

#[test]
fn index_url_comes_from_the_environment_and_pip_config() {
    let home = tempfile::tempdir().unwrap();
    let idx = index(PageMode::Html, true);
    let args = [
        "versions",
        "transformers",
        "--has-path",
        "transformers/models/auto",
        "--format",
        "json",
    ];
    let o = rosetta(&args, home.path(), &[("PIP_INDEX_URL", &idx.base)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["index_from"], "PIP_INDEX_URL");
    assert_eq!(j["page_format"], "html");

    let conf = home.path().join("pip.conf");
    std::fs::write(&conf, format!("[global]\nindex-url = {}\n", idx.base)).unwrap();
    let o = rosetta(
        &args,
        home.path(),
        &[("PIP_CONFIG_FILE", conf.to_str().unwrap())],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["index_from"], conf.to_str().unwrap());
}

#[test]
fn model_types_regenerate_the_table_format() {
    let home = tempfile::tempdir().unwrap();
    let idx = index(PageMode::Json, false);
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--model-types",
            "--format",
            "json",
            "--index-url",
            &idx.base,
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let table = rosetta_kb::tables::ModelTypeTable::from_json(&stdout(&o)).unwrap();
    assert_eq!(table.releases.len(), 4);
    assert_eq!(table.yanked, ["4.57.0"]);
    assert_eq!(table.first_release("glm_moe_dsa"), Some("5.2.0"));
    assert_eq!(table.first_release("qwen3_next"), Some("4.57.1"));
    assert_eq!(
        table.knows("glm_moe_dsa", "5.1.0"),
        rosetta_kb::tables::Known::NotYet {
            first: "5.2.0".into()
        }
    );
}

/// Long because it walks every exit code of `versions` in turn against one index, each
/// case a few lines; the table of codes reads best in one place.
#[test]
fn exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let idx = index(PageMode::Json, true);
    // No release answers: 1.
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-model-type",
            "no_such_type",
            "--index-url",
            &idx.base,
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("first with    none"));
    // No question: 2.
    let o = rosetta(
        &["versions", "transformers", "--index-url", &idx.base],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ask one question"), "{}", stderr(&o));
    // A 404 page: 2, naming the status.
    let gone = index(PageMode::NotFound, true);
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-path",
            "x",
            "--index-url",
            &gone.base,
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("404"), "{}", stderr(&o));
    // HTML where JSON was promised: 2, said plainly.
    let liar = index(PageMode::HtmlLabelledJson, true);
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-path",
            "x",
            "--index-url",
            &liar.base,
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("sent HTML"), "{}", stderr(&o));
    // Nothing listening: 3.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-path",
            "x",
            "--index-url",
            &format!("http://127.0.0.1:{port}/simple"),
        ],
        home.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    // Offline with nothing cached: 2, saying what is missing.
    let empty = tempfile::tempdir().unwrap();
    let o = rosetta(
        &[
            "versions",
            "transformers",
            "--has-path",
            "x",
            "--index-url",
            &idx.base,
            "--offline",
        ],
        empty.path(),
        &[],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("not in the cache"), "{}", stderr(&o));
}

/// The newcomer's pass (issue 12, section 11): Markdown dropped the note that explains a
/// `?` row ("no model type mapping … in this wheel") that text shows.
/// `rosetta versions transformers --has-model-type glm_moe_dsa` against `index` in `format`.
fn glm5_release(
    index: &str,
    format: &str,
    home: &std::path::Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    rosetta(
        &[
            "versions",
            "transformers",
            "--has-model-type",
            "glm_moe_dsa",
            "--index-url",
            index,
            "--format",
            format,
        ],
        home,
        env,
    )
}

#[test]
fn markdown_keeps_the_note_that_explains_a_question_mark() {
    let home = tempfile::tempdir().unwrap();
    let cfg = "transformers/models/auto/configuration_auto.py";
    let idx = start(
        "transformers",
        vec![
            wheel("4.0.0", &[("transformers/__init__.py", "")], None),
            wheel("5.2.0", &[(cfg, &mapping(&["glm_moe_dsa"]))], None),
        ],
        PageMode::Json,
        true,
    );
    for format in ["text", "markdown"] {
        let o = glm5_release(&idx.base, format, home.path(), &[]);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let row = out
            .lines()
            .find(|l| l.contains("4.0.0"))
            .unwrap_or_else(|| panic!("{format}: no 4.0.0 row: {out}"));
        assert!(row.contains('?'), "{format}: {row}");
        assert!(row.contains("no model type mapping"), "{format}: {row}");
    }
}

/// The answer to "which release first has this model type" in every format, as a person or a
/// program reads it. The index is the test's own; its URL reads `<index>`.
#[test]
fn has_model_type_report_snapshots() {
    let idx = index(PageMode::Json, true);
    // The time a read took is the machine's, not the report's.
    let timing = regex::Regex::new(r"\d+\.\d+ s;|\x22elapsed_ms\x22: \d+").unwrap();
    for format in ["text", "markdown", "json"] {
        // A fresh cache each time: every format reads the same bytes from the index.
        let home = tempfile::tempdir().unwrap();
        let o = glm5_release(
            &idx.base,
            format,
            home.path(),
            &[("NO_COLOR", "1"), ("COLUMNS", "100")],
        );
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        let text = stdout(&o).replace(&idx.base, "<index>");
        assert!(text.contains("5.2.0"), "{format}: {text}");
        let text = timing
            .replace_all(&text, |c: &regex::Captures| {
                if c[0].ends_with(';') {
                    "<t> s;".to_string()
                } else {
                    "\"elapsed_ms\": <t>".to_string()
                }
            })
            .into_owned();
        insta::assert_snapshot!(format!("versions_has_model_type_{format}"), text);
    }
}
