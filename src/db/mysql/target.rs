//! A MySQL or MariaDB target and its connections: the URL's settings, bulk loads in chunks, the error classes of the measured path.

use super::super::conn::{
    Conn, Dialect, Param, RowValue, StmtOutcome, Target, TextRow, write_tsv_row,
};
use super::super::server_conn::{Protocol, ServerConn};
use super::super::server_url::ServerUrl;
use super::super::url::redact_url;
use super::packet::{Prepared, WireError};
use super::wire::{Endpoint, Wire};
use crate::error::Error;
use crate::error::{DbError, ErrorClass};

#[derive(Clone)]
pub struct MysqlTarget {
    url: String,
    endpoint: Endpoint,
    text: bool,
}

impl MysqlTarget {
    pub fn from_url(
        url: &str,
        text: bool,
        timeouts: crate::db::Timeouts,
    ) -> Result<MysqlTarget, Error> {
        let url = &super::super::url::normalise(url);
        const MODES: &[&str] = &[
            "DISABLED",
            "PREFERRED",
            "REQUIRED",
            "VERIFY_CA",
            "VERIFY_IDENTITY",
        ];
        super::super::url::check_server_url(
            url,
            &[
                ("socket", None),
                ("ssl-mode", Some(MODES)),
                ("ssl_mode", Some(MODES)),
                ("ssl-ca", None),
                ("ssl_ca", None),
                ("ssl-cert", None),
                ("ssl_cert", None),
                ("ssl-key", None),
                ("ssl_key", None),
                ("server-public-key", None),
                ("server_public_key", None),
            ],
        )?;
        let bad = |e: String| Error::Usage(format!("--target {}: {e}", redact_url(url)));
        // The TLS parameters are dbsweep's to read; the URL parser does not know them.
        let (normalised, params) = super::super::tls::take_params(
            &url.replacen("mariadb://", "mysql://", 1),
            &["ssl-mode", "ssl-ca", "ssl-cert", "ssl-key"],
        );
        let tls_opts =
            super::super::tls::options_of(&params, "ssl_mode", ["ssl_ca", "ssl_cert", "ssl_key"])
                .map_err(bad)?;
        let tls = super::super::tls::Tls::new(&tls_opts).map_err(bad)?;
        // The server's RSA key for full authentication outside TLS, as the mysql client's
        // --server-public-key-path gives it.
        let (normalised, key_param) =
            super::super::tls::take_params(&normalised, &["server-public-key"]);
        let server_public_key = match key_param.first() {
            Some((_, path)) => Some(
                crate::input::read(std::path::Path::new(path), crate::input::SMALL)
                    .map_err(|e| bad(format!("server-public-key {path}: {e}")))?,
            ),
            None => None,
        };
        let parsed = ServerUrl::parse(&normalised).map_err(bad)?;
        let given = parsed.password.clone().unwrap_or_default();
        let endpoint = Endpoint {
            // The mysql client's default host, as the `mysql` crate read it too.
            host: if parsed.host.is_empty() {
                "127.0.0.1".into()
            } else {
                parsed.host.clone()
            },
            port: parsed.port.unwrap_or(3306),
            socket: parsed.param("socket").map(String::from),
            user: parsed.user.clone().unwrap_or_else(|| "root".into()),
            password: String::from_utf8_lossy(
                &super::super::url::password_from_env(
                    url,
                    parsed.password.as_deref(),
                    "MYSQL_PWD",
                )?
                .unwrap_or(given),
            )
            .into_owned(),
            database: parsed.database.clone(),
            tls,
            server_public_key,
            timeouts,
        };
        if endpoint.tls.is_some() && endpoint.socket.is_some() {
            return Err(bad(format!(
                "ssl-mode={}: a Unix socket has no TLS; connect over TCP, or leave ssl-mode out",
                tls_opts.mode.name()
            )));
        }
        Ok(MysqlTarget {
            url: redact_url(url),
            endpoint,
            text,
        })
    }
}

impl MysqlTarget {
    /// A connection whose every statement's wait is bounded by `bound` (a managed server's
    /// set-up and checks).
    pub fn connect_bounded(&self, bound: std::time::Duration) -> Result<Box<dyn Conn>, DbError> {
        let mut wire = Wire::connect(&self.endpoint).map_err(classify)?;
        wire.sock.bound_statements(bound);
        Ok(Box::new(ServerConn::new(My { wire }, self.text)))
    }
}

impl Target for MysqlTarget {
    fn dialect(&self) -> Dialect {
        Dialect::Mysql
    }

    fn display_url(&self) -> String {
        self.url.clone()
    }

    fn shared(&self) -> std::sync::Arc<dyn Target> {
        std::sync::Arc::new(self.clone())
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let wire = Wire::connect(&self.endpoint).map_err(classify)?;
        Ok(Box::new(ServerConn::new(My { wire }, self.text)))
    }

    fn version(&self, conn: &mut dyn Conn) -> Result<String, DbError> {
        conn.query_text("SELECT VERSION()")
            .map(|v| v.unwrap_or_default())
    }
}

struct My {
    wire: Wire,
}

/// Bytes of tab-separated rows per LOAD DATA statement.
const LOAD_CHUNK_BYTES: usize = 4 << 20;
/// Bytes per multi-row INSERT when the server refuses local files.
const INSERT_BYTES: usize = 64 << 10;

impl Protocol for My {
    type Stmt = Prepared;
    const DIALECT: Dialect = Dialect::Mysql;
    const BACKSLASH_ESCAPES: bool = true;
    // MySQL 8 removed information_schema.GLOBAL_VARIABLES; SHOW is in MariaDB and every MySQL.
    const SETTINGS_SQL: &'static str = "SHOW GLOBAL VARIABLES";

    fn tls(&self) -> Option<String> {
        self.wire.tls_info()
    }

    fn prepare(&mut self, _n: usize, sql: &str) -> Result<Prepared, DbError> {
        self.wire.prepare(sql).map_err(classify)
    }

    fn execute(
        &mut self,
        st: &mut Prepared,
        params: &[Param],
        on_row: Option<super::super::conn::OnRow<'_>>,
    ) -> Result<StmtOutcome, DbError> {
        self.wire.execute(st, params, on_row).map_err(classify)
    }

    fn simple(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<StmtOutcome, DbError> {
        self.wire.query(sql, |r| on_row(r)).map_err(classify)
    }

    fn ping(&mut self) -> Result<(), DbError> {
        self.wire.ping().map_err(classify)
    }

    fn table_count_sql(name: &str) -> String {
        format!(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = '{name}'"
        )
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
}

impl My {
    /// The load for servers that refuse local files: multi-row INSERTs. `pending` holds rows
    /// already taken from `next_row`, as tab-separated lines.
    fn insert_rows(
        &mut self,
        table: &str,
        columns: &[&str],
        pending: &[u8],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        let head = format!("INSERT INTO {table} ({}) VALUES ", columns.join(", "));
        let mut sql = String::with_capacity(INSERT_BYTES + 4096);
        let mut line = Vec::new();
        let mut row = Vec::with_capacity(columns.len());
        let mut pending = pending.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        let mut n = 0;
        loop {
            let values: &[u8] = match pending.next() {
                Some(l) => l,
                None if next_row(&mut row) => {
                    line.clear();
                    write_tsv_row(&mut line, &row);
                    line.pop(); // the newline
                    &line
                }
                None => break,
            };
            sql.push_str(if sql.is_empty() { &head } else { "," });
            // Values are integers and digits-and-dashes strings: quoting is enough.
            let quoted: Vec<String> = values
                .split(|b| *b == b'\t')
                .map(|v| {
                    if v == b"\\N" {
                        "NULL".to_string()
                    } else {
                        format!("'{}'", String::from_utf8_lossy(v))
                    }
                })
                .collect();
            sql.push('(');
            sql.push_str(&quoted.join(","));
            sql.push(')');
            n += 1;
            if sql.len() >= INSERT_BYTES {
                self.simple(&sql, &mut |_| {})
                    .map_err(|e| e.in_statement(&head))?;
                sql.clear();
            }
        }
        if !sql.is_empty() {
            self.simple(&sql, &mut |_| {})
                .map_err(|e| e.in_statement(&head))?;
        }
        Ok(n)
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
        WireError::Io(e) => super::super::conn::io_error(&e),
        WireError::Protocol(m) => DbError::new(ErrorClass::Fatal, "protocol", m),
    }
}
