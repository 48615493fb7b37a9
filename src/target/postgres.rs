//! The PostgreSQL target (the `postgres` crate): `postgres://user:password@host:port/db`, or a
//! Unix socket directory as host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`).
//! Server-side prepared statements by default; `--ps-mode disable` sends text queries. The URL
//! is parsed by the `postgres` crate; the connection is dbsweep's own lean client (`pgwire`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::str::FromStr;

use postgres::Config;

use super::pgwire::{Outcome, Wire, WireError};
use super::{
    Conn, DbError, Dialect, ErrorClass, Param, RowValue, StmtId, Target, interpolate, redact_url,
};
use crate::error::Error;

pub struct PostgresTarget {
    url: String,
    config: Config,
    text: bool,
}

impl PostgresTarget {
    pub fn from_url(url: &str, text: bool) -> Result<PostgresTarget, Error> {
        let config = Config::from_str(url)
            .map_err(|e| Error::Usage(format!("--target {}: {e}", redact_url(url))))?;
        Ok(PostgresTarget {
            url: redact_url(url),
            config,
            text,
        })
    }
}

impl Target for PostgresTarget {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn display_url(&self) -> String {
        self.url.clone()
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let wire = Wire::connect(&self.config).map_err(classify)?;
        Ok(Box::new(PgConn {
            wire,
            stmts: Vec::new(),
            sql: Vec::new(),
            text: self.text,
            in_txn: false,
        }))
    }

    fn version(&self, conn: &mut dyn Conn) -> Result<String, DbError> {
        conn.query_text("SHOW server_version")
            .map(|v| format!("PostgreSQL {}", v.unwrap_or_default()))
    }

    fn after_load(&self, conn: &mut dyn Conn) -> Result<(), DbError> {
        // Fresh statistics, as a DBA would have before benchmarking.
        conn.batch("ANALYZE")
    }
}

/// A prepared statement: its name on the server and its parameter types.
struct Prepared {
    name: String,
    types: Vec<u32>,
}

struct PgConn {
    wire: Wire,
    /// Prepared statements (empty under --ps-mode disable) and their SQL with `?` marks.
    stmts: Vec<Prepared>,
    sql: Vec<String>,
    text: bool,
    in_txn: bool,
}

/// Rewrites `?` placeholders as PostgreSQL's `$1, $2, ...`.
fn numbered_placeholders(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut n = 0;
    for ch in sql.chars() {
        if ch == '?' {
            n += 1;
            let _ = write!(out, "${n}");
        } else {
            out.push(ch);
        }
    }
    out
}

impl PgConn {
    fn simple(&mut self, sql: &str) -> Result<Outcome, DbError> {
        self.wire
            .simple(sql, |_| {})
            .map_err(|e| classify(e).in_statement(sql))
    }

    fn run(&mut self, stmt: StmtId, params: &[Param]) -> Result<Outcome, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, false);
            return self.simple(&sql);
        }
        let p = &self.stmts[stmt.0];
        self.wire
            .execute(&p.name, &p.types, params)
            .map_err(|e| classify(e).in_statement(&self.sql[stmt.0]))
    }
}

impl Conn for PgConn {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        if !self.text {
            let name = format!("s{}", self.stmts.len());
            let types = self
                .wire
                .prepare(&name, &numbered_placeholders(sql))
                .map_err(|e| classify(e).in_statement(sql))?;
            self.stmts.push(Prepared { name, types });
        }
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.run(stmt, params).map(|o| o.rows)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.run(stmt, params).map(|o| o.changed)
    }

    fn begin(&mut self, _write: bool) -> Result<(), DbError> {
        self.simple("BEGIN")?;
        self.in_txn = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.in_txn = false;
        self.simple("COMMIT").map(drop)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if std::mem::take(&mut self.in_txn) {
            self.simple("ROLLBACK").map(drop)
        } else {
            Ok(())
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.simple(sql).map(drop)
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_text(sql)?.and_then(|v| v.parse().ok()))
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        let mut first: Option<Option<String>> = None;
        self.wire
            .simple(sql, |v| {
                if first.is_none() {
                    first = Some(v.map(|b| String::from_utf8_lossy(b).into_owned()));
                }
            })
            .map_err(|e| classify(e).in_statement(sql))?;
        Ok(first.flatten())
    }

    fn table_exists(&mut self, name: &str) -> Result<bool, DbError> {
        let sql = format!(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '{}'",
            name.replace('\'', "''")
        );
        Ok(self.query_i64(&sql)?.unwrap_or(0) > 0)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        // COPY in text format with synchronous commit off for the session (the load is redone
        // from scratch if the server crashes during it).
        let copy = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
        self.simple("SET synchronous_commit = off")?;
        let mut row = Vec::with_capacity(columns.len());
        let copied = self
            .wire
            .copy_in(&copy, |buf| {
                if !next_row(&mut row) {
                    return false;
                }
                super::mysql::write_tsv_row(buf, &row);
                true
            })
            .map_err(|e| classify(e).in_statement(&copy))?;
        self.simple("RESET synchronous_commit")?;
        Ok(copied)
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let sql = "SELECT name || '=' || setting FROM pg_settings WHERE source NOT IN ('default', 'override')";
        let mut out = BTreeMap::new();
        self.wire
            .simple(sql, |v| {
                if let Some((k, v)) = v
                    .map(String::from_utf8_lossy)
                    .as_deref()
                    .and_then(|t| t.split_once('='))
                {
                    out.insert(k.to_string(), v.to_string());
                }
            })
            .map_err(|e| classify(e).in_statement(sql))?;
        Ok(out)
    }
}

/// Maps a protocol error to what the runner does about it.
fn classify(e: WireError) -> DbError {
    match e {
        WireError::Server { code, message } => {
            let class = match code.as_str() {
                "40P01" => ErrorClass::Deadlock,
                "40001" => ErrorClass::SerializationFailure,
                "23505" => ErrorClass::DuplicateKey,
                "55P03" => ErrorClass::LockWaitTimeout,
                // Admin or crash shutdown, server starting up: the connection is gone.
                "57P01" | "57P02" | "57P03" => ErrorClass::ConnectionLost,
                _ => ErrorClass::Fatal,
            };
            DbError::new(class, code, message)
        }
        WireError::Io(e) => DbError::new(ErrorClass::ConnectionLost, "io", e.to_string()),
        WireError::Protocol(m) => DbError::new(ErrorClass::Fatal, "protocol", m),
    }
}
