//! The journal's test suite, run against both stores: a SQLite file in a temp
//! dir, and a real PostgreSQL server whose URL is in `ROSETTA_TEST_POSTGRES`
//! (`.ci/run` starts one with `scripts/pg-throwaway`). Each PostgreSQL test
//! gets its own schema. Without the URL the PostgreSQL half is skipped with a
//! message, except under CI (`CI=true`), where that is a failure.

mod suite;

use rosetta_journal::Journal;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A place for one test's journal, openable several times (for concurrent writers).
pub enum Place {
    /// A SQLite file (the temp dir lives as long as the place).
    Sqlite(tempfile::TempDir),
    /// A PostgreSQL URL with the test's own schema.
    Postgres(String),
}

impl Place {
    /// Opens a connection to the test's journal.
    pub fn open(&self) -> Journal {
        match self {
            Place::Sqlite(d) => Journal::open(d.path().join("journal.sqlite").to_str().unwrap())
                .expect("open sqlite journal"),
            Place::Postgres(url) => Journal::open(url).expect("open postgres journal"),
        }
    }

    /// The spec a user would pass to `--journal`.
    pub fn spec(&self) -> String {
        match self {
            Place::Sqlite(d) => d.path().join("journal.sqlite").display().to_string(),
            Place::Postgres(url) => url.clone(),
        }
    }
}

pub fn sqlite_place() -> Option<Place> {
    Some(Place::Sqlite(tempfile::tempdir().unwrap()))
}

static SCHEMAS: AtomicUsize = AtomicUsize::new(0);

/// A fresh schema on the test server, or `None` (skip) when no server is configured outside CI.
pub fn postgres_place() -> Option<Place> {
    let base = match std::env::var("ROSETTA_TEST_POSTGRES") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("CI is set but ROSETTA_TEST_POSTGRES is not: .ci/run must start PostgreSQL (scripts/pg-throwaway)");
            }
            eprintln!("skipped: ROSETTA_TEST_POSTGRES is not set (eval \"$(scripts/pg-throwaway start)\")");
            return None;
        }
    };
    let schema = format!(
        "t_{}_{}",
        std::process::id(),
        SCHEMAS.fetch_add(1, Ordering::SeqCst)
    );
    let mut c =
        postgres::Client::connect(&base, postgres::NoTls).expect("connect to the test server");
    c.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {schema} CASCADE; CREATE SCHEMA {schema}"
    ))
    .unwrap();
    let sep = if base.contains('?') { '&' } else { '?' };
    Some(Place::Postgres(format!(
        "{base}{sep}options=-csearch_path%3D{schema}"
    )))
}

/// Runs each test of the suite on both stores.
macro_rules! on_both {
    ($($name:ident),* $(,)?) => {
        mod on_sqlite {
            $(#[test] fn $name() { if let Some(p) = crate::sqlite_place() { crate::suite::$name(p) } })*
        }
        mod on_postgres {
            $(#[test] fn $name() { if let Some(p) = crate::postgres_place() { crate::suite::$name(p) } })*
        }
    };
}

on_both!(
    migrations_are_versioned,
    an_attempt_reads_back,
    notes_attach_to_attempts,
    missing_attempt_is_a_clear_error,
    same_failure_after_the_change_rules_out,
    a_different_failure_supports,
    an_unexplained_difference_rules_nothing,
    ready_without_probe_says_nothing_about_decode,
    concurrent_writers_share_one_journal,
    findings_render_from_the_store,
    command_args_and_the_servers_own_values,
);

#[test]
fn a_file_that_is_not_a_database_is_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("notes.txt");
    std::fs::write(&p, "x".repeat(4096)).unwrap();
    let e = Journal::open(p.to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("notes.txt"), "{e}");
    assert!(e.contains("not a database"), "{e}");
    let e = Journal::open(d.path().to_str().unwrap())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("directory"), "{e}");
}

#[test]
fn an_unreachable_server_is_a_clear_error_without_the_password() {
    // Port 9 on loopback: nothing listens there.
    let e = Journal::open("postgres://team:hunter2@127.0.0.1:9/rosetta?connect_timeout=2")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("127.0.0.1:9"), "{e}");
    assert!(!e.contains("hunter2"), "{e}");
}

proptest::proptest! {
    #[test]
    fn redacted_urls_never_show_the_password(user in "[a-z]{1,8}", pass in "[A-Za-z0-9]{6,12}", host in "[a-z]{1,8}") {
        let url = format!("postgres://{user}:{pass}@{host}:5432/db");
        let r = rosetta_journal::redact_url(&url);
        let leaked = format!(":{pass}@");
        proptest::prop_assert!(!r.contains(&leaked));
        proptest::prop_assert!(r.contains(&host));
    }

    #[test]
    fn redact_url_takes_any_text(s in ".{0,80}") {
        let _ = rosetta_journal::redact_url(&s);
    }
}
