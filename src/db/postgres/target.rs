//! A PostgreSQL target and its connections: the URL's settings, the prepared statements and the error classes of the measured path.

use std::fmt::Write as _;

use super::super::conn::{Conn, Dialect, Param, RowValue, StmtOutcome, Target, TextRow};
use super::super::server_conn::{Protocol, ServerConn};
use super::super::server_url::ServerUrl;
use super::super::url::redact_url;
use super::wire::{Wire, WireError};
use crate::error::Error;
use crate::error::{DbError, ErrorClass};

#[derive(Clone)]
pub struct PostgresTarget {
    url: String,
    config: ServerUrl,
    text: bool,
    pipeline: bool,
    tls: Option<super::super::tls::Tls>,
    timeouts: crate::db::Timeouts,
}

impl PostgresTarget {
    pub fn from_url(
        url: &str,
        text: bool,
        pipeline: bool,
        timeouts: crate::db::Timeouts,
    ) -> Result<PostgresTarget, Error> {
        let url = &super::super::url::normalise(url);
        super::super::url::check_server_url(
            url,
            &[
                ("host", None),
                ("port", None),
                ("user", None),
                ("password", None),
                ("dbname", None),
                (
                    "sslmode",
                    Some(&["disable", "prefer", "require", "verify-ca", "verify-full"]),
                ),
                ("sslrootcert", None),
                ("sslcert", None),
                ("sslkey", None),
                ("options", None),
            ],
        )?;
        let bad = |e: String| Error::Usage(format!("--target {}: {e}", redact_url(url)));
        let (plain, mut params) =
            super::super::tls::take_params(url, &["sslmode", "sslrootcert", "sslcert", "sslkey"]);
        let mode_in_url = params.iter().any(|(k, _)| k == "sslmode");
        // libpq's environment, for what the URL does not say (sysbench 1.0.20 has no TLS
        // options of its own for PostgreSQL: its users set PGSSLMODE).
        for (key, var) in [
            ("sslmode", "PGSSLMODE"),
            ("sslrootcert", "PGSSLROOTCERT"),
            ("sslcert", "PGSSLCERT"),
            ("sslkey", "PGSSLKEY"),
        ] {
            if !params.iter().any(|(k, _)| k == key)
                && let Ok(v) = std::env::var(var)
                && !v.is_empty()
            {
                params.push((key.to_string(), v));
            }
        }
        let opts =
            super::super::tls::options_of(&params, "sslmode", ["sslrootcert", "sslcert", "sslkey"])
                .map_err(bad)?;
        let mut tls = super::super::tls::Tls::new(&opts).map_err(bad)?;
        let mut config = ServerUrl::parse(&plain).map_err(bad)?;
        let unix = config.unix();
        if unix && !mode_in_url {
            // As libpq: PGSSLMODE does not apply to Unix sockets.
            tls = None;
        }
        if tls.is_some() && unix {
            return Err(bad(format!(
                "sslmode={}: a Unix socket has no TLS; connect over TCP, or leave sslmode out",
                opts.mode.name()
            )));
        }
        // As libpq: the session's command-line options (`-c name=value`), from the URL or
        // else PGOPTIONS (pgbench's and sysbench's users set it to run at an isolation level).
        if !config.params.iter().any(|(k, _)| k == "options")
            && let Ok(v) = std::env::var("PGOPTIONS")
            && !v.trim().is_empty()
        {
            config.params.push(("options".into(), v));
        }
        if let Some(p) =
            super::super::url::password_from_env(url, config.password.as_deref(), "PGPASSWORD")?
        {
            config.password = Some(p);
        }
        Ok(PostgresTarget {
            url: redact_url(url),
            config,
            text,
            pipeline,
            tls,
            timeouts,
        })
    }
}

impl PostgresTarget {
    /// A connection whose every statement's wait is bounded by `bound` (a managed server's
    /// set-up and checks).
    pub fn connect_bounded(&self, bound: std::time::Duration) -> Result<Box<dyn Conn>, DbError> {
        let mut wire =
            Wire::connect(&self.config, self.tls.as_ref(), self.timeouts).map_err(classify)?;
        wire.bound_statements(bound);
        Ok(Box::new(ServerConn::new(Pg { wire }, self.text)))
    }
}

impl Target for PostgresTarget {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn display_url(&self) -> String {
        self.url.clone()
    }

    fn shared(&self) -> std::sync::Arc<dyn Target> {
        std::sync::Arc::new(self.clone())
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let wire =
            Wire::connect(&self.config, self.tls.as_ref(), self.timeouts).map_err(classify)?;
        Ok(Box::new(
            ServerConn::new(Pg { wire }, self.text).pipelined(self.pipeline),
        ))
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

struct Pg {
    wire: Wire,
}

/// A prepared statement: its name on the server and its parameter types.
struct Prepared {
    name: String,
    types: Vec<u32>,
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

impl Protocol for Pg {
    type Stmt = Prepared;
    const DIALECT: Dialect = Dialect::Postgres;
    const BACKSLASH_ESCAPES: bool = false;
    // The non-default settings, and those that decide durability whatever their source
    // (server::durability::POSTGRES_SETTINGS).
    const SETTINGS_SQL: &'static str = "SELECT name || '=' || setting FROM pg_settings WHERE source NOT IN ('default', 'override') OR name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'data_checksums', 'server_encoding')";

    fn tls(&self) -> Option<String> {
        self.wire.tls_info()
    }

    fn in_transaction(&self) -> Option<bool> {
        Some(self.wire.status != b'I')
    }

    fn prepare(&mut self, n: usize, sql: &str) -> Result<Prepared, DbError> {
        let name = format!("s{n}");
        let types = self
            .wire
            .prepare(&name, &numbered_placeholders(sql))
            .map_err(classify)?;
        Ok(Prepared { name, types })
    }

    fn execute(
        &mut self,
        st: &mut Prepared,
        params: &[Param],
        on_row: Option<super::super::conn::OnRow<'_>>,
    ) -> Result<StmtOutcome, DbError> {
        match on_row {
            None => self.wire.execute(&st.name, &st.types, params, |_| {}),
            Some(f) => self.wire.execute(&st.name, &st.types, params, |r| f(r)),
        }
        .map_err(classify)
    }

    fn simple(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<StmtOutcome, DbError> {
        self.wire.simple(sql, |r| on_row(r)).map_err(classify)
    }

    fn ping(&mut self) -> Result<(), DbError> {
        // A Sync alone: the server answers ReadyForQuery and does nothing else.
        self.wire.queue_sync();
        match self.wire.send_queued(1, |_| {}).map_err(classify)? {
            (_, Some((_, e))) => Err(classify(e)),
            (_, None) => Ok(()),
        }
    }

    fn queue(&mut self, st: &Prepared, params: &[Param]) {
        self.wire.queue_execute(&st.name, &st.types, params);
    }

    fn queue_text(&mut self, sql: &str) {
        self.wire.queue_simple(sql);
    }

    fn queue_sync(&mut self) {
        self.wire.queue_sync();
    }

    fn discard_queued(&mut self) {
        self.wire.discard_queued();
    }

    fn send_queued(
        &mut self,
        syncs: usize,
        done: &mut dyn FnMut(StmtOutcome),
    ) -> Result<bool, (usize, DbError)> {
        match self.wire.send_queued(syncs, done) {
            Ok((in_txn, None)) => Ok(in_txn),
            Ok((_, Some((at, e)))) => Err((at, classify(e))),
            Err(e) => Err((0, classify(e))),
        }
    }

    fn table_count_sql(name: &str) -> String {
        format!(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = '{name}'"
        )
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.copy_in(table, columns, "", next_row)
    }

    fn bulk_load_frozen(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.copy_in(table, columns, " WITH (FREEZE ON)", next_row)
    }
}

impl Pg {
    /// COPY in text format, `with` after it, with synchronous commit off for the session (the
    /// load is redone from scratch if the server crashes during it).
    fn copy_in(
        &mut self,
        table: &str,
        columns: &[&str],
        with: &str,
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        let copy = format!("COPY {table} ({}) FROM STDIN{with}", columns.join(", "));
        self.simple("SET synchronous_commit = off", &mut |_| {})?;
        let mut row = Vec::with_capacity(columns.len());
        let copied = self
            .wire
            .copy_in(&copy, |buf| {
                if !next_row(&mut row) {
                    return false;
                }
                super::super::conn::write_tsv_row(buf, &row);
                true
            })
            .map_err(|e| classify(e).in_statement(&copy))?;
        self.simple("RESET synchronous_commit", &mut |_| {})?;
        Ok(copied)
    }
}

/// Maps a protocol error to what the runner does about it.
fn classify(e: WireError) -> DbError {
    match e {
        WireError::Server {
            code,
            message,
            notes,
        } => {
            let class = match code.as_str() {
                "40P01" => ErrorClass::Deadlock,
                "40001" => ErrorClass::SerializationFailure,
                "23505" => ErrorClass::DuplicateKey,
                "55P03" => ErrorClass::LockWaitTimeout,
                // Admin or crash shutdown, server starting up: the connection is gone.
                "57P01" | "57P02" | "57P03" => ErrorClass::ConnectionLost,
                _ => ErrorClass::Fatal,
            };
            DbError {
                notes,
                ..DbError::new(class, code, message)
            }
        }
        WireError::Io(e) => super::super::conn::io_error(&e),
        WireError::Protocol(m) => DbError::new(ErrorClass::Fatal, "protocol", m),
    }
}
