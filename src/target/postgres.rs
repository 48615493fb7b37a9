//! The PostgreSQL target (the `postgres` crate): `postgres://user:password@host:port/db`, or a
//! Unix socket directory as host (`postgres://user@%2Fvar%2Frun%2Fpostgresql/db`).
//! Server-side prepared statements by default; `--ps-mode disable` sends text queries.

use std::collections::BTreeMap;
use std::error::Error as _;
use std::fmt::Write as _;
use std::io::Write as _;
use std::str::FromStr;

use bytes::BytesMut;
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, Config, NoTls, SimpleQueryMessage, Statement};

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
        let client = self.config.connect(NoTls).map_err(classify)?;
        Ok(Box::new(PgConn {
            client,
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

struct PgConn {
    client: Client,
    /// Prepared statements (empty under --ps-mode disable) and their SQL with `?` marks.
    stmts: Vec<Statement>,
    sql: Vec<String>,
    text: bool,
    in_txn: bool,
}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Param::Null => return Ok(IsNull::Yes),
            Param::Int(i) => match *ty {
                Type::INT2 => out.extend_from_slice(&(i as i16).to_be_bytes()),
                Type::INT4 => out.extend_from_slice(&(i as i32).to_be_bytes()),
                Type::INT8 => out.extend_from_slice(&i.to_be_bytes()),
                _ => write!(out.writer(), "{i}")?,
            },
            Param::Text(s) => out.extend_from_slice(s.as_bytes()),
        }
        Ok(IsNull::No)
    }

    fn accepts(_ty: &Type) -> bool {
        true
    }

    to_sql_checked!();
}

use bytes::BufMut as _;

/// Calls `f` with `params` as the trait objects the driver takes, without allocating for the
/// short parameter lists of the sysbench statements.
fn with_refs<R>(params: &[Param], f: impl FnOnce(&[&(dyn ToSql + Sync)]) -> R) -> R {
    const INLINE: usize = 8;
    const NULL: Param<'static> = Param::Null;
    if params.len() <= INLINE {
        let mut refs: [&(dyn ToSql + Sync); INLINE] = [&NULL; INLINE];
        for (r, p) in refs.iter_mut().zip(params) {
            *r = p;
        }
        f(&refs[..params.len()])
    } else {
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as _).collect();
        f(&refs)
    }
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
    fn simple(&mut self, sql: &str) -> Result<(u64, u64), DbError> {
        let mut rows = 0;
        let mut changed = 0;
        for m in self
            .client
            .simple_query(sql)
            .map_err(|e| classify(e).in_statement(sql))?
        {
            match m {
                SimpleQueryMessage::Row(_) => rows += 1,
                SimpleQueryMessage::CommandComplete(n) => changed += n,
                _ => {}
            }
        }
        Ok((rows, changed))
    }
}

impl Conn for PgConn {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        if !self.text {
            let st = self
                .client
                .prepare(&numbered_placeholders(sql))
                .map_err(|e| classify(e).in_statement(sql))?;
            self.stmts.push(st);
        }
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, false);
            return self.simple(&sql).map(|(rows, _)| rows);
        }
        let st = &self.stmts[stmt.0];
        let fail = |e| classify(e).in_statement(&self.sql[stmt.0]);
        let mut it = self
            .client
            .query_raw(st, params.iter().map(|p| p as &dyn ToSql))
            .map_err(fail)?;
        let mut n = 0;
        while let Some(row) =
            postgres::fallible_iterator::FallibleIterator::next(&mut it).map_err(fail)?
        {
            std::hint::black_box(&row);
            n += 1;
        }
        Ok(n)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, false);
            return self.simple(&sql).map(|(_, changed)| changed);
        }
        let st = &self.stmts[stmt.0];
        let client = &mut self.client;
        with_refs(params, |refs| client.execute(st, refs))
            .map_err(|e| classify(e).in_statement(&self.sql[stmt.0]))
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
        self.client
            .batch_execute(sql)
            .map_err(|e| classify(e).in_statement(sql))
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_text(sql)?.and_then(|v| v.parse().ok()))
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        for m in self
            .client
            .simple_query(sql)
            .map_err(|e| classify(e).in_statement(sql))?
        {
            if let SimpleQueryMessage::Row(row) = m {
                return Ok(row.get(0).map(String::from));
            }
        }
        Ok(None)
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
        // COPY in text format, in the load's own transaction with synchronous commit off (the
        // load is redone from scratch if the server crashes during it).
        let copy = format!("COPY {table} ({}) FROM STDIN", columns.join(", "));
        let fail = |e| classify(e).in_statement(&copy);
        self.client
            .batch_execute("SET synchronous_commit = off")
            .map_err(classify)?;
        let mut writer = self.client.copy_in(&copy).map_err(fail)?;
        let mut row = Vec::with_capacity(columns.len());
        let mut line = Vec::with_capacity(256);
        let mut n = 0;
        while next_row(&mut row) {
            line.clear();
            for (i, v) in row.iter().enumerate() {
                if i > 0 {
                    line.push(b'\t');
                }
                match v {
                    RowValue::Int(x) => {
                        let _ = write!(line, "{x}");
                    }
                    // The loader's values are digits and dashes: nothing to escape.
                    RowValue::Text(s) => line.extend_from_slice(s.as_bytes()),
                }
            }
            line.push(b'\n');
            writer.write_all(&line).map_err(|e| {
                DbError::new(ErrorClass::ConnectionLost, "io", e.to_string()).in_statement(&copy)
            })?;
            n += 1;
        }
        writer
            .finish()
            .map_err(|e| classify(e).in_statement(&copy))?;
        self.client
            .batch_execute("RESET synchronous_commit")
            .map_err(classify)?;
        Ok(n)
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let sql =
            "SELECT name, setting FROM pg_settings WHERE source NOT IN ('default', 'override')";
        let mut out = BTreeMap::new();
        for m in self
            .client
            .simple_query(sql)
            .map_err(|e| classify(e).in_statement(sql))?
        {
            if let SimpleQueryMessage::Row(row) = m {
                out.insert(
                    row.get(0).unwrap_or_default().to_string(),
                    row.get(1).unwrap_or_default().to_string(),
                );
            }
        }
        Ok(out)
    }
}

/// Maps a PostgreSQL error to what the runner does about it.
fn classify(e: postgres::Error) -> DbError {
    if let Some(db) = e.as_db_error() {
        let class = match *db.code() {
            SqlState::T_R_DEADLOCK_DETECTED => ErrorClass::Deadlock,
            SqlState::T_R_SERIALIZATION_FAILURE => ErrorClass::SerializationFailure,
            SqlState::UNIQUE_VIOLATION => ErrorClass::DuplicateKey,
            SqlState::LOCK_NOT_AVAILABLE => ErrorClass::LockWaitTimeout,
            SqlState::ADMIN_SHUTDOWN | SqlState::CRASH_SHUTDOWN | SqlState::CANNOT_CONNECT_NOW => {
                ErrorClass::ConnectionLost
            }
            _ => ErrorClass::Fatal,
        };
        return DbError::new(class, db.code().code(), db.message());
    }
    // No server error: the connection is gone, could not be made, or an IO error cut it.
    let lost = e.is_closed() || e.source().is_some_and(|s| s.is::<std::io::Error>());
    let class = if lost {
        ErrorClass::ConnectionLost
    } else {
        ErrorClass::Fatal
    };
    DbError::new(class, "client", e.to_string())
}
