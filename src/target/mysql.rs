//! The MySQL and MariaDB target (the `mysql` crate): `mysql://user:password@host:port/db`, or
//! a Unix socket with `?socket=/path`. Server-side prepared statements by default;
//! `--ps-mode disable` sends text queries.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mysql::prelude::Queryable;
use std::sync::{Arc, Mutex};

use mysql::{Conn as MyConn, LocalInfileHandler, Opts, Statement, Value};

use super::{
    Conn, DbError, Dialect, ErrorClass, Param, RowValue, StmtId, Target, interpolate, redact_url,
};
use crate::error::Error;

pub struct MysqlTarget {
    url: String,
    opts: Opts,
    text: bool,
}

impl MysqlTarget {
    pub fn from_url(url: &str, text: bool) -> Result<MysqlTarget, Error> {
        let normalised = url.replacen("mariadb://", "mysql://", 1);
        let opts = Opts::from_url(&normalised)
            .map_err(|e| Error::Usage(format!("--target {}: {e}", redact_url(url))))?;
        Ok(MysqlTarget {
            url: redact_url(url),
            opts,
            text,
        })
    }
}

impl Target for MysqlTarget {
    fn kind(&self) -> &'static str {
        "mysql"
    }

    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn display_url(&self) -> String {
        self.url.clone()
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let conn = MyConn::new(self.opts.clone()).map_err(classify)?;
        Ok(Box::new(MysqlConn {
            conn,
            stmts: Vec::new(),
            sql: Vec::new(),
            text: self.text,
            in_txn: false,
        }))
    }

    fn version(&self, conn: &mut dyn Conn) -> Result<String, DbError> {
        conn.query_text("SELECT VERSION()")
            .map(|v| v.unwrap_or_default())
    }
}

struct MysqlConn {
    conn: MyConn,
    stmts: Vec<Statement>,
    sql: Vec<String>,
    text: bool,
    in_txn: bool,
}

fn values(params: &[Param]) -> Vec<Value> {
    params
        .iter()
        .map(|p| match *p {
            Param::Int(i) => Value::Int(i),
            Param::Text(s) => Value::Bytes(s.as_bytes().to_vec()),
            Param::Null => Value::NULL,
        })
        .collect()
}

impl MysqlConn {
    fn text_query(&mut self, sql: &str) -> Result<(u64, u64), DbError> {
        let fail = |e| classify(e).in_statement(sql);
        let mut result = self.conn.query_iter(sql).map_err(fail)?;
        // Read before the rows: once the result set is consumed the count is the next set's.
        let changed = result.affected_rows();
        let mut rows = 0;
        for row in result.by_ref() {
            row.map_err(fail)?;
            rows += 1;
        }
        Ok((rows, changed))
    }
}

/// Bytes of tab-separated rows per LOAD DATA statement.
const LOAD_CHUNK_BYTES: usize = 4 << 20;

/// Appends `row` as a line of tab-separated values (LOAD DATA's and COPY's default format).
/// The loader's values are integers and strings of digits and dashes: nothing to escape.
pub(crate) fn write_tsv_row(buf: &mut Vec<u8>, row: &[RowValue]) {
    use std::io::Write as _;
    for (i, v) in row.iter().enumerate() {
        if i > 0 {
            buf.push(b'\t');
        }
        match v {
            RowValue::Int(x) => {
                let _ = write!(buf, "{x}");
            }
            RowValue::Text(t) => buf.extend_from_slice(t.as_bytes()),
        }
    }
    buf.push(b'\n');
}

impl MysqlConn {
    /// The fallback load: multi-row INSERTs of about 64 kB. `pending` holds rows already taken
    /// from `next_row`, as tab-separated lines.
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        pending: &[u8],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        const BATCH_BYTES: usize = 64 << 10;
        let head = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut sql = String::with_capacity(BATCH_BYTES + 4096);
        let mut n = 0;
        let send = |sql: &mut String, conn: &mut MyConn| -> Result<(), DbError> {
            if sql.len() > head.len() {
                conn.query_drop(&*sql)
                    .map_err(|e| classify(e).in_statement(&head))?;
            }
            sql.clear();
            Ok(())
        };
        let add = |sql: &mut String, values: &mut dyn Iterator<Item = String>| {
            if sql.is_empty() {
                sql.push_str(&head);
            } else {
                sql.push(',');
            }
            sql.push('(');
            for (i, v) in values.enumerate() {
                if i > 0 {
                    sql.push(',');
                }
                let _ = write!(sql, "'{v}'");
            }
            sql.push(')');
        };
        let text = String::from_utf8_lossy(pending);
        for line in text.lines() {
            add(&mut sql, &mut line.split('\t').map(String::from));
            n += 1;
            if sql.len() >= BATCH_BYTES {
                send(&mut sql, &mut self.conn)?;
            }
        }
        let mut row = Vec::with_capacity(columns.len());
        while next_row(&mut row) {
            add(
                &mut sql,
                &mut row.iter().map(|v| match v {
                    RowValue::Int(x) => x.to_string(),
                    RowValue::Text(t) => t.clone(),
                }),
            );
            n += 1;
            if sql.len() >= BATCH_BYTES {
                send(&mut sql, &mut self.conn)?;
            }
        }
        send(&mut sql, &mut self.conn)?;
        Ok(n)
    }
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        if !self.text {
            let st = self
                .conn
                .prep(sql)
                .map_err(|e| classify(e).in_statement(sql))?;
            self.stmts.push(st);
        }
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, true);
            return self.text_query(&sql).map(|(rows, _)| rows);
        }
        let fail = |e| classify(e).in_statement(&self.sql[stmt.0]);
        let result = self
            .conn
            .exec_iter(&self.stmts[stmt.0], values(params))
            .map_err(fail)?;
        let mut n = 0;
        for row in result {
            std::hint::black_box(row.map_err(fail)?);
            n += 1;
        }
        Ok(n)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, true);
            return self.text_query(&sql).map(|(_, changed)| changed);
        }
        self.conn
            .exec_drop(&self.stmts[stmt.0], values(params))
            .map_err(|e| classify(e).in_statement(&self.sql[stmt.0]))?;
        Ok(self.conn.affected_rows())
    }

    fn begin(&mut self, _write: bool) -> Result<(), DbError> {
        self.text_query("BEGIN")?;
        self.in_txn = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        self.in_txn = false;
        self.text_query("COMMIT").map(drop)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if std::mem::take(&mut self.in_txn) {
            self.text_query("ROLLBACK").map(drop)
        } else {
            Ok(())
        }
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.conn
            .query_drop(sql)
            .map_err(|e| classify(e).in_statement(sql))
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_text(sql)?.and_then(|v| v.parse().ok()))
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        let row: Option<Option<String>> = self
            .conn
            .query_first(sql)
            .map_err(|e| classify(e).in_statement(sql))?;
        Ok(row.flatten())
    }

    fn table_exists(&mut self, name: &str) -> Result<bool, DbError> {
        let sql = format!(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{}'",
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
        // LOAD DATA LOCAL INFILE in chunks: the server parses tab-separated rows far faster
        // than INSERT statements. Servers that refuse local files get multi-row INSERTs.
        let sql = format!(
            "LOAD DATA LOCAL INFILE 'dbsweep-rows' INTO TABLE {table} ({})",
            columns.join(", ")
        );
        let chunk = Arc::new(Mutex::new(Vec::<u8>::with_capacity(
            LOAD_CHUNK_BYTES + 4096,
        )));
        let source = Arc::clone(&chunk);
        self.conn
            .set_local_infile_handler(Some(LocalInfileHandler::new(move |_, w| {
                std::io::Write::write_all(w, &source.lock().expect("load chunk"))
            })));
        let mut row = Vec::with_capacity(columns.len());
        let mut n = 0;
        loop {
            let rows = {
                let mut buf = chunk.lock().expect("load chunk");
                buf.clear();
                let mut rows = 0;
                while buf.len() < LOAD_CHUNK_BYTES && next_row(&mut row) {
                    write_tsv_row(&mut buf, &row);
                    rows += 1;
                }
                rows
            };
            if rows == 0 {
                break;
            }
            match self.conn.query_drop(&sql) {
                Ok(()) => n += rows,
                Err(mysql::Error::MySqlError(e))
                    if n == 0 && (e.code == 1148 || e.code == 3948) =>
                {
                    self.conn.set_local_infile_handler(None);
                    let pending = std::mem::take(&mut *chunk.lock().expect("load chunk"));
                    return self.insert_rows(table, columns, &pending, next_row);
                }
                Err(e) => return Err(classify(e).in_statement(&sql)),
            }
        }
        self.conn.set_local_infile_handler(None);
        Ok(n)
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let sql = "SHOW GLOBAL VARIABLES";
        let rows: Vec<(String, Option<String>)> = self
            .conn
            .query(sql)
            .map_err(|e| classify(e).in_statement(sql))?;
        Ok(rows
            .into_iter()
            .map(|(k, v)| (k, v.unwrap_or_default()))
            .collect())
    }
}

/// Maps a MySQL error to what the runner does about it.
fn classify(e: mysql::Error) -> DbError {
    match &e {
        mysql::Error::MySqlError(m) => {
            let class = match m.code {
                1213 => ErrorClass::Deadlock,
                1205 => ErrorClass::LockWaitTimeout,
                1020 => ErrorClass::SerializationFailure,
                1062 => ErrorClass::DuplicateKey,
                // Server shutdown, connection killed, server gone or lost.
                1053 | 1927 | 2006 | 2013 | 2055 => ErrorClass::ConnectionLost,
                _ => ErrorClass::Fatal,
            };
            DbError::new(
                class,
                format!("{} ({})", m.code, m.state),
                m.message.clone(),
            )
        }
        mysql::Error::IoError(_) | mysql::Error::CodecError(_) => {
            DbError::new(ErrorClass::ConnectionLost, "io", e.to_string())
        }
        mysql::Error::DriverError(d) => {
            let lost = matches!(
                d,
                mysql::DriverError::ConnectTimeout
                    | mysql::DriverError::CouldNotConnect(_)
                    | mysql::DriverError::PacketOutOfSync
                    | mysql::DriverError::UnexpectedPacket
            );
            DbError::new(
                if lost {
                    ErrorClass::ConnectionLost
                } else {
                    ErrorClass::Fatal
                },
                "driver",
                e.to_string(),
            )
        }
        _ => DbError::new(ErrorClass::Fatal, "client", e.to_string()),
    }
}
