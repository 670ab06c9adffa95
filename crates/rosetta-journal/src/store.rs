//! The journal as stored: one schema in SQLite (a file, the default) or
//! PostgreSQL (a team's shared journal), created and upgraded by versioned
//! migrations; attempts are begun when a launch starts and finished when it
//! ends, and finishing computes the attempt's rulings inside the same write
//! transaction, so two runs sharing a journal never judge from a stale view.

use crate::db::{Conn, Dialect, Exec, Row, Value};
use crate::error::JournalError;
use crate::model::{
    Attempt, FailureRef, Fingerprint, HypothesisRec, ModelRef, Note, Outcome, ProbeResult, Ruling,
    Source, Verdict,
};
use crate::rulings;
use std::path::{Path, PathBuf};

/// Versioned migrations: version, statements (with `{ID}`, `{INT}`, `{REAL}`).
/// Never edit a released one; add the next.
const MIGRATIONS: &[(i64, &[&str])] = &[(
    1,
    &[
        "CREATE TABLE rosetta_attempts (
            id {ID},
            source TEXT NOT NULL,
            started TEXT NOT NULL,
            ended TEXT,
            cwd TEXT,
            command TEXT NOT NULL,
            args TEXT NOT NULL,
            log_args TEXT NOT NULL,
            env TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            model_path TEXT,
            model_hash TEXT,
            outcome TEXT NOT NULL,
            exit_code {INT},
            failure_class TEXT,
            failure_phase TEXT,
            failure_rank {INT},
            probe TEXT,
            log_path TEXT,
            report TEXT
        )",
        "CREATE TABLE rosetta_hypotheses (
            attempt_id {INT} NOT NULL REFERENCES rosetta_attempts(id) ON DELETE CASCADE,
            position {INT} NOT NULL,
            cause TEXT NOT NULL,
            confidence {REAL} NOT NULL,
            rule TEXT NOT NULL,
            summary TEXT NOT NULL,
            tests TEXT NOT NULL,
            PRIMARY KEY (attempt_id, position)
        )",
        "CREATE TABLE rosetta_notes (
            id {ID},
            attempt_id {INT} NOT NULL REFERENCES rosetta_attempts(id) ON DELETE CASCADE,
            at TEXT NOT NULL,
            text TEXT NOT NULL
        )",
        "CREATE TABLE rosetta_rulings (
            id {ID},
            cause TEXT NOT NULL,
            verdict TEXT NOT NULL,
            by_attempt {INT} NOT NULL REFERENCES rosetta_attempts(id) ON DELETE CASCADE,
            against_attempt {INT} NOT NULL REFERENCES rosetta_attempts(id) ON DELETE CASCADE,
            failure_class TEXT NOT NULL,
            failure_phase TEXT NOT NULL,
            experiment TEXT NOT NULL,
            why TEXT NOT NULL
        )",
        "CREATE INDEX rosetta_rulings_by ON rosetta_rulings (by_attempt)",
        "CREATE INDEX rosetta_notes_attempt ON rosetta_notes (attempt_id)",
    ],
)];

/// The newest schema version this build writes.
pub const SCHEMA_VERSION: i64 = 1;

/// A journal, open.
pub struct Journal {
    conn: Conn,
    location: String,
    sqlite_path: Option<PathBuf>,
}

/// Where the default journal lives: `$XDG_STATE_HOME/rosetta/journal.sqlite`,
/// else `~/.local/state/rosetta/journal.sqlite`. `env` reads a variable.
pub fn default_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let state = env("XDG_STATE_HOME")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            env("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })?;
    Some(state.join("rosetta/journal.sqlite"))
}

/// A URL with its password replaced by `***`, for messages.
pub fn redact_url(url: &str) -> String {
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let Some(at) = rest.find('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end + 3],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

/// Whether a journal spec names a PostgreSQL server.
pub fn is_postgres_url(spec: &str) -> bool {
    spec.starts_with("postgres://") || spec.starts_with("postgresql://")
}

fn now() -> String {
    jiff::Timestamp::now().to_string()
}

fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

impl Journal {
    /// Opens a journal: a `postgres://` URL, else a SQLite file (created with its folder).
    pub fn open(spec: &str) -> Result<Journal, JournalError> {
        if is_postgres_url(spec) {
            Journal::open_postgres(spec)
        } else {
            Journal::open_sqlite(Path::new(spec))
        }
    }

    /// Opens (or creates) a SQLite journal file.
    pub fn open_sqlite(path: &Path) -> Result<Journal, JournalError> {
        let location = path.display().to_string();
        let err = |message: String| JournalError::Open {
            location: location.clone(),
            message,
        };
        if path.is_dir() {
            return Err(err("it is a directory; name a file".into()));
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| err(format!("cannot create {}: {e}", dir.display())))?;
        }
        let conn = Conn::sqlite(path).map_err(err)?;
        let mut j = Journal {
            conn,
            location,
            sqlite_path: Some(path.to_path_buf()),
        };
        j.migrate()?;
        Ok(j)
    }

    /// Connects to a PostgreSQL journal.
    pub fn open_postgres(url: &str) -> Result<Journal, JournalError> {
        let location = redact_url(url);
        let conn = Conn::postgres(url).map_err(|message| JournalError::Open {
            location: location.clone(),
            message,
        })?;
        let mut j = Journal {
            conn,
            location,
            sqlite_path: None,
        };
        j.migrate()?;
        Ok(j)
    }

    /// The file or URL (password removed).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Which database.
    pub fn dialect(&self) -> Dialect {
        match self.conn {
            Conn::Sqlite(_) => Dialect::Sqlite,
            Conn::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Where `rosetta run` keeps attempt logs: beside a SQLite journal
    /// (`journal-logs/`), else `state_dir/logs`.
    pub fn log_dir(&self, state_dir: Option<&Path>) -> Option<PathBuf> {
        match &self.sqlite_path {
            Some(p) => {
                let stem = p.file_stem()?.to_string_lossy().into_owned();
                Some(p.with_file_name(format!("{stem}-logs")))
            }
            None => state_dir.map(|d| d.join("logs")),
        }
    }

    fn query_err(&self, message: String) -> JournalError {
        JournalError::Query {
            location: self.location.clone(),
            message,
        }
    }

    fn migrate(&mut self) -> Result<(), JournalError> {
        let location = self.location.clone();
        let found = self
            .conn
            .tx(true, |x| {
                x.exec(
                    "CREATE TABLE IF NOT EXISTS rosetta_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
                    &[],
                )?;
                let rows = x.query(
                    "SELECT value FROM rosetta_meta WHERE key = 'schema_version'",
                    &[],
                )?;
                let current: i64 = rows
                    .first()
                    .and_then(|r| r[0].text())
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                if current > SCHEMA_VERSION {
                    return Ok(current);
                }
                for (version, statements) in MIGRATIONS {
                    if *version <= current {
                        continue;
                    }
                    for s in *statements {
                        let sql = x.dialect().ddl(s);
                        x.exec(&sql, &[])?;
                    }
                    x.exec(
                        "DELETE FROM rosetta_meta WHERE key = 'schema_version'",
                        &[],
                    )?;
                    x.exec(
                        "INSERT INTO rosetta_meta (key, value) VALUES ('schema_version', ?)",
                        &[version.to_string().into()],
                    )?;
                }
                Ok(current)
            })
            .map_err(|message| JournalError::Open {
                location: location.clone(),
                message,
            })?;
        if found > SCHEMA_VERSION {
            return Err(JournalError::TooNew {
                location,
                found,
                known: SCHEMA_VERSION,
            });
        }
        Ok(())
    }

    /// Records the start of an attempt (outcome `running`) with the notes it
    /// carries; returns its id.
    pub fn begin(&mut self, a: &Attempt) -> Result<i64, JournalError> {
        let r = self.conn.tx(true, |x| insert(x, a));
        r.map_err(|m| self.query_err(m))
    }

    /// Records where the attempt's log is kept.
    pub fn set_log_path(&mut self, id: i64, path: &str) -> Result<(), JournalError> {
        let r = self.conn.tx(true, |x| {
            x.exec(
                "UPDATE rosetta_attempts SET log_path = ? WHERE id = ?",
                &[path.into(), id.into()],
            )
        });
        r.map(|_| ()).map_err(|m| self.query_err(m))
    }

    /// Records how attempt `a.id` ended (outcome, failure, hypotheses, probe,
    /// report, args read from its log) and the rulings it makes against the
    /// attempts before it, in one write transaction. Returns those rulings.
    pub fn finish(&mut self, a: &Attempt) -> Result<Vec<Ruling>, JournalError> {
        let r = self.conn.tx(true, |x| finish_in(x, a));
        r.map_err(|m| self.query_err(m))
    }

    /// Records a whole attempt at once (an imported log); returns its id and rulings.
    pub fn record(&mut self, a: &Attempt) -> Result<(i64, Vec<Ruling>), JournalError> {
        let r = self.conn.tx(true, |x| {
            let id = insert(x, a)?;
            let mut a = a.clone();
            a.id = id;
            let rulings = finish_in(x, &a)?;
            Ok((id, rulings))
        });
        r.map_err(|m| self.query_err(m))
    }

    /// Adds a note to an attempt.
    pub fn add_note(&mut self, id: i64, text: &str) -> Result<(), JournalError> {
        self.attempt(id)?;
        let r = self.conn.tx(true, |x| {
            x.exec(
                "INSERT INTO rosetta_notes (attempt_id, at, text) VALUES (?, ?, ?)",
                &[id.into(), now().into(), text.into()],
            )
        });
        r.map(|_| ()).map_err(|m| self.query_err(m))
    }

    /// Every attempt, in id order.
    pub fn attempts(&mut self) -> Result<Vec<Attempt>, JournalError> {
        let location = self.location.clone();
        let r = self.conn.tx(false, |x| load(x, None, &location));
        r.map_err(|m| self.query_err(m))?
    }

    /// One attempt.
    pub fn attempt(&mut self, id: i64) -> Result<Attempt, JournalError> {
        let location = self.location.clone();
        let r = self.conn.tx(false, |x| {
            let found = load(x, Some(id), &location)?;
            let last = x.query("SELECT MAX(id) FROM rosetta_attempts", &[])?;
            Ok((found, last.first().and_then(|r| r[0].int()).unwrap_or(0)))
        });
        let (found, last) = r.map_err(|m| self.query_err(m))?;
        found?.into_iter().next().ok_or(JournalError::NoAttempt {
            id,
            last,
            location: self.location.clone(),
        })
    }

    /// Every ruling, in the order they were made.
    pub fn rulings(&mut self) -> Result<Vec<Ruling>, JournalError> {
        let location = self.location.clone();
        let r = self.conn.tx(false, |x| load_rulings(x, &location));
        r.map_err(|m| self.query_err(m))?
    }
}

fn insert(x: &mut dyn Exec, a: &Attempt) -> Result<i64, String> {
    let rows = x.query(
        "INSERT INTO rosetta_attempts (source, started, ended, cwd, command, args, log_args, env,
            fingerprint, model_path, model_hash, outcome, exit_code, failure_class, failure_phase,
            failure_rank, probe, log_path, report)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        &[
            a.source.as_str().into(),
            a.started.clone().into(),
            a.ended.clone().into(),
            a.cwd.clone().into(),
            json(&a.command).into(),
            json(&a.args).into(),
            json(&a.log_args).into(),
            json(&a.env).into(),
            json(&a.fingerprint).into(),
            a.model.as_ref().map(|m| m.path.clone()).into(),
            a.model.as_ref().and_then(|m| m.config_hash.clone()).into(),
            a.outcome.as_str().into(),
            a.exit_code.map(i64::from).into(),
            a.failure.map(|f| f.class.to_string()).into(),
            a.failure.map(|f| f.phase.to_string()).into(),
            a.failure.and_then(|f| f.rank).map(i64::from).into(),
            a.probe.as_ref().map(json).into(),
            a.log_path.clone().into(),
            a.report.as_ref().map(json).into(),
        ],
    )?;
    let id = rows
        .first()
        .and_then(|r| r[0].int())
        .ok_or("the insert returned no id")?;
    for n in &a.notes {
        x.exec(
            "INSERT INTO rosetta_notes (attempt_id, at, text) VALUES (?, ?, ?)",
            &[id.into(), n.at.clone().into(), n.text.clone().into()],
        )?;
    }
    Ok(id)
}

fn finish_in(x: &mut dyn Exec, a: &Attempt) -> Result<Vec<Ruling>, String> {
    let n = x.exec(
        "UPDATE rosetta_attempts SET ended = ?, outcome = ?, exit_code = ?, failure_class = ?,
            failure_phase = ?, failure_rank = ?, probe = ?, report = ?, log_args = ?,
            fingerprint = ?, model_path = ?, model_hash = ?, args = ?, log_path = COALESCE(?, log_path)
         WHERE id = ?",
        &[
            a.ended.clone().into(),
            a.outcome.as_str().into(),
            a.exit_code.map(i64::from).into(),
            a.failure.map(|f| f.class.to_string()).into(),
            a.failure.map(|f| f.phase.to_string()).into(),
            a.failure.and_then(|f| f.rank).map(i64::from).into(),
            a.probe.as_ref().map(json).into(),
            a.report.as_ref().map(json).into(),
            json(&a.log_args).into(),
            json(&a.fingerprint).into(),
            a.model.as_ref().map(|m| m.path.clone()).into(),
            a.model.as_ref().and_then(|m| m.config_hash.clone()).into(),
            json(&a.args).into(),
            a.log_path.clone().into(),
            a.id.into(),
        ],
    )?;
    if n != 1 {
        return Err(format!("attempt #{} is not in the journal", a.id));
    }
    x.exec(
        "DELETE FROM rosetta_hypotheses WHERE attempt_id = ?",
        &[a.id.into()],
    )?;
    for (i, h) in a.hypotheses.iter().enumerate() {
        x.exec(
            "INSERT INTO rosetta_hypotheses (attempt_id, position, cause, confidence, rule, summary, tests)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            &[
                a.id.into(),
                (i as i64).into(),
                h.cause.to_string().into(),
                h.confidence.into(),
                h.rule.clone().into(),
                h.summary.clone().into(),
                json(&h.tests).into(),
            ],
        )?;
    }
    // Judge against the attempts before it, as stored now (under the writer's lock).
    let earlier = load(x, None, "")?.map_err(|e| e.to_string())?;
    let earlier: Vec<Attempt> = earlier.into_iter().filter(|e| e.id < a.id).collect();
    let mut me = a.clone();
    me.notes.clear();
    let made = rulings::judge(&earlier, &me);
    x.exec(
        "DELETE FROM rosetta_rulings WHERE by_attempt = ?",
        &[a.id.into()],
    )?;
    for r in &made {
        x.exec(
            "INSERT INTO rosetta_rulings (cause, verdict, by_attempt, against_attempt, failure_class,
                failure_phase, experiment, why) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                r.cause.to_string().into(),
                r.verdict.as_str().into(),
                r.by_attempt.into(),
                r.against_attempt.into(),
                r.failure.class.to_string().into(),
                r.failure.phase.to_string().into(),
                r.experiment.clone().into(),
                r.why.clone().into(),
            ],
        )?;
    }
    Ok(made)
}

fn corrupt(location: &str, what: String) -> JournalError {
    JournalError::Corrupt {
        location: location.to_string(),
        message: what,
    }
}

fn parse_json<T: serde::de::DeserializeOwned>(
    v: &Value,
    what: &str,
    id: i64,
    location: &str,
) -> Result<Option<T>, JournalError> {
    match v.text() {
        None => Ok(None),
        Some(t) => serde_json::from_str(t)
            .map(Some)
            .map_err(|e| corrupt(location, format!("attempt #{id}: column {what}: {e}"))),
    }
}

fn word<T: std::str::FromStr>(
    v: &Value,
    what: &str,
    id: i64,
    location: &str,
) -> Result<Option<T>, JournalError>
where
    T::Err: std::fmt::Display,
{
    match v.text() {
        None => Ok(None),
        Some(t) => t
            .parse()
            .map(Some)
            .map_err(|e| corrupt(location, format!("attempt #{id}: column {what}: {e}"))),
    }
}

/// Loads attempts (one, or all) with their hypotheses and notes. The outer
/// error is the database's, the inner one a value that does not read back.
fn load(
    x: &mut dyn Exec,
    only: Option<i64>,
    location: &str,
) -> Result<Result<Vec<Attempt>, JournalError>, String> {
    let cols = "id, source, started, ended, cwd, command, args, log_args, env, fingerprint,
        model_path, model_hash, outcome, exit_code, failure_class, failure_phase, failure_rank,
        probe, log_path, report";
    let (rows, hyps, notes) = match only {
        Some(id) => (
            x.query(
                &format!("SELECT {cols} FROM rosetta_attempts WHERE id = ?"),
                &[id.into()],
            )?,
            x.query(
                "SELECT attempt_id, cause, confidence, rule, summary, tests FROM rosetta_hypotheses
                 WHERE attempt_id = ? ORDER BY attempt_id, position",
                &[id.into()],
            )?,
            x.query(
                "SELECT attempt_id, at, text FROM rosetta_notes WHERE attempt_id = ? ORDER BY id",
                &[id.into()],
            )?,
        ),
        None => (
            x.query(
                &format!("SELECT {cols} FROM rosetta_attempts ORDER BY id"),
                &[],
            )?,
            x.query(
                "SELECT attempt_id, cause, confidence, rule, summary, tests FROM rosetta_hypotheses
                 ORDER BY attempt_id, position",
                &[],
            )?,
            x.query(
                "SELECT attempt_id, at, text FROM rosetta_notes ORDER BY id",
                &[],
            )?,
        ),
    };
    Ok(build(rows, hyps, notes, location))
}

fn build(
    rows: Vec<Row>,
    hyps: Vec<Row>,
    notes: Vec<Row>,
    location: &str,
) -> Result<Vec<Attempt>, JournalError> {
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let id = r[0].int().unwrap_or(0);
        let source = match r[1].text() {
            Some("import") => Source::Import,
            _ => Source::Run,
        };
        let outcome: Outcome = word(&r[12], "outcome", id, location)?.unwrap_or(Outcome::Running);
        let failure = match (
            word(&r[14], "failure_class", id, location)?,
            word(&r[15], "failure_phase", id, location)?,
        ) {
            (Some(class), Some(phase)) => Some(FailureRef {
                class,
                phase,
                rank: r[16].int().and_then(|v| u32::try_from(v).ok()),
            }),
            _ => None,
        };
        out.push(Attempt {
            id,
            source,
            started: r[2].text().unwrap_or_default().to_string(),
            ended: r[3].text().map(String::from),
            cwd: r[4].text().map(String::from),
            command: parse_json(&r[5], "command", id, location)?.unwrap_or_default(),
            args: parse_json(&r[6], "args", id, location)?.unwrap_or_default(),
            log_args: parse_json(&r[7], "log_args", id, location)?.unwrap_or_default(),
            env: parse_json(&r[8], "env", id, location)?.unwrap_or_default(),
            fingerprint: parse_json::<Fingerprint>(&r[9], "fingerprint", id, location)?
                .unwrap_or_default(),
            model: r[10].text().map(|p| ModelRef {
                path: p.to_string(),
                config_hash: r[11].text().map(String::from),
            }),
            outcome,
            exit_code: r[13].int().and_then(|v| i32::try_from(v).ok()),
            failure,
            hypotheses: Vec::new(),
            probe: parse_json::<ProbeResult>(&r[17], "probe", id, location)?,
            log_path: r[18].text().map(String::from),
            report: parse_json(&r[19], "report", id, location)?,
            notes: Vec::new(),
        });
    }
    for h in hyps {
        let id = h[0].int().unwrap_or(0);
        let Some(a) = out.iter_mut().find(|a| a.id == id) else {
            continue;
        };
        a.hypotheses.push(HypothesisRec {
            cause: word(&h[1], "cause", id, location)?.ok_or_else(|| {
                corrupt(
                    location,
                    format!("attempt #{id}: a hypothesis has no cause"),
                )
            })?,
            confidence: h[2].real().unwrap_or(0.0),
            rule: h[3].text().unwrap_or_default().to_string(),
            summary: h[4].text().unwrap_or_default().to_string(),
            tests: parse_json(&h[5], "tests", id, location)?.unwrap_or_default(),
        });
    }
    for n in notes {
        let id = n[0].int().unwrap_or(0);
        if let Some(a) = out.iter_mut().find(|a| a.id == id) {
            a.notes.push(Note {
                at: n[1].text().unwrap_or_default().to_string(),
                text: n[2].text().unwrap_or_default().to_string(),
            });
        }
    }
    Ok(out)
}

fn load_rulings(
    x: &mut dyn Exec,
    location: &str,
) -> Result<Result<Vec<Ruling>, JournalError>, String> {
    let rows = x.query(
        "SELECT cause, verdict, by_attempt, against_attempt, failure_class, failure_phase,
            experiment, why FROM rosetta_rulings ORDER BY by_attempt, id",
        &[],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let by = r[2].int().unwrap_or(0);
        let parse = || -> Result<Ruling, JournalError> {
            Ok(Ruling {
                cause: word(&r[0], "cause", by, location)?
                    .ok_or_else(|| corrupt(location, "a ruling has no cause".into()))?,
                verdict: word::<Verdict>(&r[1], "verdict", by, location)?
                    .ok_or_else(|| corrupt(location, "a ruling has no verdict".into()))?,
                by_attempt: by,
                against_attempt: r[3].int().unwrap_or(0),
                failure: FailureRef {
                    class: word(&r[4], "failure_class", by, location)?
                        .ok_or_else(|| corrupt(location, "a ruling has no failure".into()))?,
                    phase: word(&r[5], "failure_phase", by, location)?
                        .ok_or_else(|| corrupt(location, "a ruling has no phase".into()))?,
                    rank: None,
                },
                experiment: r[6].text().unwrap_or_default().to_string(),
                why: r[7].text().unwrap_or_default().to_string(),
            })
        };
        match parse() {
            Ok(r) => out.push(r),
            Err(e) => return Ok(Err(e)),
        }
    }
    Ok(Ok(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_password() {
        assert_eq!(
            redact_url("postgres://team:s3cret@db.local:5432/rosetta"),
            "postgres://team:***@db.local:5432/rosetta"
        );
        assert_eq!(
            redact_url("postgres://db.local/rosetta"),
            "postgres://db.local/rosetta"
        );
    }

    #[test]
    fn default_path_follows_xdg() {
        let env = |k: &str| match k {
            "XDG_STATE_HOME" => Some("/s".to_string()),
            "HOME" => Some("/h".to_string()),
            _ => None,
        };
        assert_eq!(
            default_path(&env),
            Some(PathBuf::from("/s/rosetta/journal.sqlite"))
        );
        let env = |k: &str| (k == "HOME").then(|| "/h".to_string());
        assert_eq!(
            default_path(&env),
            Some(PathBuf::from("/h/.local/state/rosetta/journal.sqlite"))
        );
    }
}
