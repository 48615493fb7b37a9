//! The MySQL and MariaDB target: `mysql://user:password@host:port/db`, or
//! a Unix socket with `?socket=/path`. Server-side prepared statements by default;
//! `--ps-mode disable` sends text queries. The URL is parsed by the `mysql` crate; the
//! connection is dbsweep's own lean client (`mywire`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use mysql::Opts;

use super::mywire::{Endpoint, Outcome, Prepared, Wire, WireError};

use super::{
    Conn, DbError, Dialect, ErrorClass, Param, RowValue, StmtId, Target, interpolate, redact_url,
};
use crate::error::Error;

pub struct MysqlTarget {
    url: String,
    endpoint: Endpoint,
    text: bool,
}

impl MysqlTarget {
    pub fn from_url(url: &str, text: bool) -> Result<MysqlTarget, Error> {
        let normalised = url.replacen("mariadb://", "mysql://", 1);
        let opts = Opts::from_url(&normalised)
            .map_err(|e| Error::Usage(format!("--target {}: {e}", redact_url(url))))?;
        let endpoint = Endpoint {
            host: opts.get_ip_or_hostname().to_string(),
            port: opts.get_tcp_port(),
            socket: opts.get_socket().map(String::from),
            user: opts.get_user().unwrap_or("root").to_string(),
            password: opts.get_pass().unwrap_or_default().to_string(),
            database: opts.get_db_name().map(String::from),
        };
        Ok(MysqlTarget {
            url: redact_url(url),
            endpoint,
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
        let wire = Wire::connect(&self.endpoint).map_err(classify)?;
        Ok(Box::new(MysqlConn {
            wire,
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
    wire: Wire,
    stmts: Vec<Prepared>,
    sql: Vec<String>,
    text: bool,
    in_txn: bool,
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
    fn text_query(&mut self, sql: &str) -> Result<Outcome, DbError> {
        self.wire
            .query(sql, |_| {})
            .map_err(|e| classify(e).in_statement(sql))
    }

    fn run(&mut self, stmt: StmtId, params: &[Param]) -> Result<Outcome, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, true);
            return self.text_query(&sql);
        }
        self.wire
            .execute(self.stmts[stmt.0], params)
            .map_err(|e| classify(e).in_statement(&self.sql[stmt.0]))
    }

    /// The fallback load for servers that refuse local files: multi-row INSERTs of about
    /// 64 kB. `pending` holds rows already taken from `next_row`, as tab-separated lines.
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
        let mut lines: Vec<String> = String::from_utf8_lossy(pending)
            .lines()
            .map(String::from)
            .collect();
        let mut row = Vec::with_capacity(columns.len());
        loop {
            let line = if let Some(l) = (!lines.is_empty()).then(|| lines.remove(0)) {
                l
            } else if next_row(&mut row) {
                let mut b = Vec::new();
                write_tsv_row(&mut b, &row);
                String::from_utf8_lossy(&b).trim_end().to_string()
            } else {
                break;
            };
            sql.push_str(if sql.is_empty() { &head } else { "," });
            let values: Vec<String> = line.split('\t').map(|v| format!("'{v}'")).collect();
            let _ = write!(sql, "({})", values.join(","));
            n += 1;
            if sql.len() >= BATCH_BYTES {
                self.text_query(&sql)?;
                sql.clear();
            }
        }
        if !sql.is_empty() {
            self.text_query(&sql)?;
        }
        Ok(n)
    }
}

impl Conn for MysqlConn {
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        if !self.text {
            let st = self
                .wire
                .prepare(sql)
                .map_err(|e| classify(e).in_statement(sql))?;
            self.stmts.push(st);
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
        self.text_query(sql).map(drop)
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_text(sql)?.and_then(|v| v.parse().ok()))
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        let mut first: Option<Option<String>> = None;
        self.wire
            .query(sql, |v| {
                if first.is_none() {
                    first = Some(v.map(|b| String::from_utf8_lossy(b).into_owned()));
                }
            })
            .map_err(|e| classify(e).in_statement(sql))?;
        Ok(first.flatten())
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
        let mut chunk = Vec::with_capacity(LOAD_CHUNK_BYTES + 4096);
        let mut row = Vec::with_capacity(columns.len());
        let mut n = 0;
        loop {
            chunk.clear();
            let mut rows = 0;
            while chunk.len() < LOAD_CHUNK_BYTES && next_row(&mut row) {
                write_tsv_row(&mut chunk, &row);
                rows += 1;
            }
            if rows == 0 {
                return Ok(n);
            }
            match self.wire.load_local(&sql, &chunk) {
                Ok(_) => n += rows,
                Err(WireError::Server {
                    code: 1148 | 3948 | 4166,
                    ..
                }) if n == 0 => {
                    return self.insert_rows(table, columns, &chunk, next_row);
                }
                Err(e) => return Err(classify(e).in_statement(&sql)),
            }
        }
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let sql = "SELECT CONCAT(VARIABLE_NAME, '=', VARIABLE_VALUE) FROM information_schema.GLOBAL_VARIABLES";
        let mut out = BTreeMap::new();
        self.wire
            .query(sql, |v| {
                if let Some((k, v)) = v
                    .map(String::from_utf8_lossy)
                    .as_deref()
                    .and_then(|t| t.split_once('='))
                {
                    out.insert(k.to_ascii_lowercase(), v.to_string());
                }
            })
            .map_err(|e| classify(e).in_statement(sql))?;
        Ok(out)
    }
}

/// Maps a protocol error to what the runner does about it.
fn classify(e: WireError) -> DbError {
    match e {
        WireError::Server {
            code,
            state,
            message,
        } => {
            let class = match code {
                1213 => ErrorClass::Deadlock,
                1205 => ErrorClass::LockWaitTimeout,
                1020 => ErrorClass::SerializationFailure,
                1062 => ErrorClass::DuplicateKey,
                // Server shutdown, connection killed, server gone or lost.
                1053 | 1927 | 2006 | 2013 | 2055 => ErrorClass::ConnectionLost,
                _ => ErrorClass::Fatal,
            };
            DbError::new(class, format!("{code} ({state})"), message)
        }
        WireError::Io(e) => DbError::new(ErrorClass::ConnectionLost, "io", e.to_string()),
        WireError::Protocol(m) => DbError::new(ErrorClass::Fatal, "protocol", m),
    }
}
