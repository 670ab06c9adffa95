//! The two databases behind one small interface: a write or read
//! transaction that executes SQL with typed parameters and returns rows of
//! typed values. SQL is written once with `?` placeholders (rewritten to `$n`
//! for PostgreSQL) and DDL with `{ID}`, `{INT}`, `{REAL}` for the few type
//! names the dialects spell differently. SQLite runs in WAL mode with a busy
//! timeout and takes the write lock at the start of a write transaction
//! (`BEGIN IMMEDIATE`); PostgreSQL serialises writers on an advisory lock, so
//! that two runs sharing a journal never compute rulings from a stale view.

use std::time::Duration;

/// A parameter or a column value. Nulls carry their type so that PostgreSQL
/// can bind them.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// An integer (SQLite INTEGER, PostgreSQL BIGINT).
    Int(Option<i64>),
    /// A float (SQLite REAL, PostgreSQL DOUBLE PRECISION).
    Real(Option<f64>),
    /// Text.
    Text(Option<String>),
}

impl Value {
    /// The integer, if it is one and not null.
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => *v,
            Value::Real(v) => v.map(|x| x as i64),
            Value::Text(_) => None,
        }
    }
    /// The float, if it is a number and not null.
    pub fn real(&self) -> Option<f64> {
        match self {
            Value::Real(v) => *v,
            Value::Int(v) => v.map(|x| x as f64),
            Value::Text(_) => None,
        }
    }
    /// The text, if it is text and not null.
    pub fn text(&self) -> Option<&str> {
        match self {
            Value::Text(v) => v.as_deref(),
            _ => None,
        }
    }
}

impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::Int(Some(v))
    }
}
impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Value {
        Value::Int(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::Real(Some(v))
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(Some(v.to_string()))
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Text(Some(v))
    }
}
impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Value {
        Value::Text(v)
    }
}

/// A row.
pub type Row = Vec<Value>;

/// What a transaction can do, on either database.
pub trait Exec {
    /// Runs a statement; returns the rows it changed.
    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, String>;
    /// Runs a query; returns its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, String>;
    /// The dialect, for DDL.
    fn dialect(&self) -> Dialect;
}

/// Which SQL dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

impl Dialect {
    /// Fills the type placeholders of a DDL statement.
    pub fn ddl(self, sql: &str) -> String {
        let (id, int, real) = match self {
            Dialect::Sqlite => ("INTEGER PRIMARY KEY AUTOINCREMENT", "INTEGER", "REAL"),
            Dialect::Postgres => ("BIGSERIAL PRIMARY KEY", "BIGINT", "DOUBLE PRECISION"),
        };
        sql.replace("{ID}", id)
            .replace("{INT}", int)
            .replace("{REAL}", real)
    }
}

/// An open connection.
pub enum Conn {
    /// A SQLite file.
    Sqlite(rusqlite::Connection),
    /// A PostgreSQL server.
    Postgres(Box<postgres::Client>),
}

/// How long a writer waits for another writer.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The advisory lock key that serialises PostgreSQL writers of the journal.
const PG_LOCK: i64 = 0x0072_6f73_6574_7461; // "rosetta"

impl Conn {
    /// Opens a SQLite file (created if absent) in WAL mode with a busy timeout.
    pub fn sqlite(path: &std::path::Path) -> Result<Conn, String> {
        let c = rusqlite::Connection::open(path).map_err(|e| e.to_string())?;
        c.busy_timeout(BUSY_TIMEOUT).map_err(|e| e.to_string())?;
        // Reading the mode back checks that the file is a database at all.
        let mode: String = c
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(|e| e.to_string())?;
        if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
            return Err(format!(
                "cannot switch the file to WAL mode (it is in {mode} mode)"
            ));
        }
        c.execute_batch("PRAGMA foreign_keys=ON; PRAGMA synchronous=NORMAL;")
            .map_err(|e| e.to_string())?;
        Ok(Conn::Sqlite(c))
    }

    /// Connects to PostgreSQL.
    pub fn postgres(url: &str) -> Result<Conn, String> {
        let mut config: postgres::Config =
            url.parse().map_err(|e: postgres::Error| e.to_string())?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(10));
        }
        if config.get_application_name().is_none() {
            config.application_name("rosetta");
        }
        let client = config
            .connect(postgres::NoTls)
            .map_err(|e| pg_message(&e))?;
        Ok(Conn::Postgres(Box::new(client)))
    }

    /// Runs `f` in a transaction and commits it; `write` takes the writer's lock first.
    pub fn tx<T>(
        &mut self,
        write: bool,
        f: impl FnOnce(&mut dyn Exec) -> Result<T, String>,
    ) -> Result<T, String> {
        match self {
            Conn::Sqlite(c) => {
                let behavior = if write {
                    rusqlite::TransactionBehavior::Immediate
                } else {
                    rusqlite::TransactionBehavior::Deferred
                };
                let tx = c
                    .transaction_with_behavior(behavior)
                    .map_err(|e| e.to_string())?;
                let mut x = SqliteTx(tx);
                let out = f(&mut x)?;
                x.0.commit().map_err(|e| e.to_string())?;
                Ok(out)
            }
            Conn::Postgres(c) => {
                let mut tx = c.transaction().map_err(|e| pg_message(&e))?;
                if write {
                    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&PG_LOCK])
                        .map_err(|e| pg_message(&e))?;
                }
                let mut x = PgTx(tx);
                let out = f(&mut x)?;
                x.0.commit().map_err(|e| pg_message(&e))?;
                Ok(out)
            }
        }
    }
}

fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{}: {}", db.severity(), db.message()),
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(x) = src {
                s.push_str(": ");
                s.push_str(&x.to_string());
                src = x.source();
            }
            s
        }
    }
}

struct SqliteTx<'a>(rusqlite::Transaction<'a>);

fn sqlite_params(params: &[Value]) -> Vec<rusqlite::types::Value> {
    use rusqlite::types::Value as V;
    params
        .iter()
        .map(|p| match p {
            Value::Int(Some(i)) => V::Integer(*i),
            Value::Real(Some(f)) => V::Real(*f),
            Value::Text(Some(t)) => V::Text(t.clone()),
            _ => V::Null,
        })
        .collect()
}

impl Exec for SqliteTx<'_> {
    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        let mut st = self.0.prepare_cached(sql).map_err(|e| e.to_string())?;
        let n = st
            .execute(rusqlite::params_from_iter(sqlite_params(params)))
            .map_err(|e| e.to_string())?;
        Ok(n as u64)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, String> {
        use rusqlite::types::ValueRef;
        let mut st = self.0.prepare_cached(sql).map_err(|e| e.to_string())?;
        let n = st.column_count();
        let mut rows = st
            .query(rusqlite::params_from_iter(sqlite_params(params)))
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(|e| e.to_string())? {
            let mut row = Vec::with_capacity(n);
            for i in 0..n {
                row.push(match r.get_ref(i).map_err(|e| e.to_string())? {
                    ValueRef::Null => Value::Text(None),
                    ValueRef::Integer(v) => Value::Int(Some(v)),
                    ValueRef::Real(v) => Value::Real(Some(v)),
                    ValueRef::Text(t) => Value::Text(Some(String::from_utf8_lossy(t).into_owned())),
                    ValueRef::Blob(b) => Value::Text(Some(String::from_utf8_lossy(b).into_owned())),
                });
            }
            out.push(row);
        }
        Ok(out)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }
}

struct PgTx<'a>(postgres::Transaction<'a>);

/// `?` placeholders to `$1, $2, ...` (the journal's SQL has no `?` in literals).
fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for c in sql.chars() {
        if c == '?' {
            n += 1;
            out.push('$');
            out.push_str(&n.to_string());
        } else {
            out.push(c);
        }
    }
    out
}

fn pg_params(params: &[Value]) -> Vec<Box<dyn postgres::types::ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn postgres::types::ToSql + Sync> {
            match p {
                Value::Int(v) => Box::new(*v),
                Value::Real(v) => Box::new(*v),
                Value::Text(v) => Box::new(v.clone()),
            }
        })
        .collect()
}

impl Exec for PgTx<'_> {
    fn exec(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        let ps = pg_params(params);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            ps.iter().map(|b| b.as_ref()).collect();
        self.0
            .execute(numbered(sql).as_str(), &refs)
            .map_err(|e| pg_message(&e))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, String> {
        use postgres::types::Type;
        let ps = pg_params(params);
        let refs: Vec<&(dyn postgres::types::ToSql + Sync)> =
            ps.iter().map(|b| b.as_ref()).collect();
        let rows = self
            .0
            .query(numbered(sql).as_str(), &refs)
            .map_err(|e| pg_message(&e))?;
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            let mut row = Vec::with_capacity(r.len());
            for (i, col) in r.columns().iter().enumerate() {
                let t = col.type_();
                let v = if *t == Type::INT8 {
                    Value::Int(r.try_get::<_, Option<i64>>(i).map_err(|e| e.to_string())?)
                } else if *t == Type::INT4 {
                    Value::Int(
                        r.try_get::<_, Option<i32>>(i)
                            .map_err(|e| e.to_string())?
                            .map(i64::from),
                    )
                } else if *t == Type::FLOAT8 {
                    Value::Real(r.try_get::<_, Option<f64>>(i).map_err(|e| e.to_string())?)
                } else {
                    Value::Text(
                        r.try_get::<_, Option<String>>(i)
                            .map_err(|e| e.to_string())?,
                    )
                };
                row.push(v);
            }
            out.push(row);
        }
        Ok(out)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_numbered() {
        assert_eq!(
            numbered("UPDATE t SET a = ?, b = ? WHERE id = ?"),
            "UPDATE t SET a = $1, b = $2 WHERE id = $3"
        );
    }

    #[test]
    fn ddl_types_per_dialect() {
        let s = "CREATE TABLE t (id {ID}, n {INT}, x {REAL})";
        assert!(Dialect::Sqlite.ddl(s).contains("AUTOINCREMENT"));
        assert!(Dialect::Postgres.ddl(s).contains("BIGSERIAL"));
        assert!(Dialect::Postgres.ddl(s).contains("DOUBLE PRECISION"));
    }
}
