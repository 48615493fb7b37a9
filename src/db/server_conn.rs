//! What PostgreSQL and MySQL connections share: prepared or text statements, transactions,
//! and the small queries dbsweep asks itself, over a [`Protocol`] that each wire client
//! implements.

use std::collections::BTreeMap;

use super::conn::QueryCounts;
use super::conn::{Conn, Count, Param, RowValue, StmtId, StmtOutcome, TextRow};
use super::url::interpolate;
use crate::error::{DbError, ErrorClass};

/// One database's protocol client, as [`ServerConn`] drives it.
pub trait Protocol: Send {
    /// A statement prepared on the server.
    type Stmt: Send;
    const DIALECT: super::conn::Dialect;
    /// Whether backslashes escape in string literals (MySQL: yes; PostgreSQL: no).
    const BACKSLASH_ESCAPES: bool;
    /// Prepares `sql` (with `?` placeholders) as the `n`th statement of the connection.
    fn prepare(&mut self, n: usize, sql: &str) -> Result<Self::Stmt, DbError>;
    /// Runs a prepared statement; `on_row`, if given, sees each row's values as text.
    fn execute(
        &mut self,
        st: &mut Self::Stmt,
        params: &[Param],
        on_row: Option<super::conn::OnRow<'_>>,
    ) -> Result<StmtOutcome, DbError>;
    /// Runs a text statement; `on_row` sees each row.
    fn simple(
        &mut self,
        sql: &str,
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<StmtOutcome, DbError>;
    /// A query counting the tables called `name` in the current schema or database.
    fn table_count_sql(name: &str) -> String;
    /// A query returning one row per server setting worth saving: `name, value`, or one
    /// `name=value` column.
    const SETTINGS_SQL: &'static str;
    /// The negotiated TLS protocol and cipher; None on a plain connection.
    fn tls(&self) -> Option<String> {
        None
    }
    /// See [`Conn::in_transaction`].
    fn in_transaction(&self) -> Option<bool> {
        None
    }
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError>;
    /// See [`Conn::bulk_load_frozen`].
    fn bulk_load_frozen(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.bulk_load(table, columns, next_row)
    }

    // Pipelining (`--pipeline`), for the protocols that have it; the targets of the others
    // refuse --pipeline when they open, so that these are never called there.

    /// See [`Conn::ping`].
    fn ping(&mut self) -> Result<(), DbError>;

    /// Queues a prepared statement without sending it.
    fn queue(&mut self, _st: &Self::Stmt, _params: &[Param]) {}
    /// Queues a text statement (with its own Sync) without sending it.
    fn queue_text(&mut self, _sql: &str) {}
    /// Queues the end of a group of statements (a Sync).
    fn queue_sync(&mut self) {}
    /// Forgets what was queued.
    fn discard_queued(&mut self) {}
    /// Sends the queue and reads up to its `syncs`th Sync; `done` sees each completed
    /// statement's outcome. Returns whether a transaction is open, or the first error and the
    /// number of statements that completed before it.
    fn send_queued(
        &mut self,
        _syncs: usize,
        _done: &mut dyn FnMut(StmtOutcome),
    ) -> Result<bool, (usize, DbError)> {
        Err((
            0,
            DbError::new(
                ErrorClass::Fatal,
                "pipeline",
                "this protocol does not pipeline statements",
            ),
        ))
    }
}

/// A statement queued under `--pipeline`: how it counts (None: BEGIN, COMMIT), and its SQL for
/// error messages.
struct Queued {
    count: Option<Count>,
    stmt: Option<StmtId>,
    fixed: &'static str,
}

/// The queue of `--pipeline`.
#[derive(Default)]
struct Pipeline {
    queued: Vec<Queued>,
    /// Syncs queued (a text statement carries its own).
    syncs: usize,
    /// Statements queued since the last Sync.
    open: bool,
    /// Prepared BEGIN and COMMIT (prepared statements pipeline; text ones carry a Sync).
    txn: Option<(StmtId, StmtId)>,
}

pub struct ServerConn<P: Protocol> {
    proto: P,
    /// Prepared statements (none under --ps-mode disable) and their SQL with `?` marks.
    stmts: Vec<P::Stmt>,
    sql: Vec<String>,
    text: bool,
    in_txn: bool,
    pipeline: Option<Pipeline>,
}

impl<P: Protocol> ServerConn<P> {
    pub fn new(proto: P, text: bool) -> ServerConn<P> {
        ServerConn {
            proto,
            stmts: Vec::new(),
            sql: Vec::new(),
            text,
            in_txn: false,
            pipeline: None,
        }
    }

    /// Queues the statements of each event and sends them in one round trip at `sync`.
    pub fn pipelined(mut self, on: bool) -> ServerConn<P> {
        self.pipeline = on.then(Pipeline::default);
        self
    }

    /// Queues statement `stmt` (or, with `stmt` None, the fixed text `fixed`: BEGIN, COMMIT).
    /// Outside a transaction each statement gets its own Sync, so that it commits on its own
    /// as it would without the pipeline.
    fn enqueue(
        &mut self,
        stmt: Option<StmtId>,
        fixed: &'static str,
        params: &[Param],
        count: Option<Count>,
    ) {
        let Some(pl) = self.pipeline.as_mut() else {
            return;
        };
        if self.text {
            match stmt {
                Some(s) => self.proto.queue_text(&interpolate(
                    &self.sql[s.0],
                    params,
                    P::BACKSLASH_ESCAPES,
                )),
                None => self.proto.queue_text(fixed),
            }
            pl.syncs += 1;
        } else {
            let s = stmt.expect("prepared statements pipeline as prepared statements");
            self.proto.queue(&self.stmts[s.0], params);
            pl.open = true;
            if !self.in_txn {
                self.proto.queue_sync();
                pl.syncs += 1;
                pl.open = false;
            }
        }
        pl.queued.push(Queued { count, stmt, fixed });
    }

    /// The prepared BEGIN and COMMIT of a pipelining connection (prepared on first use, before
    /// anything is queued: preparing is a round trip of its own).
    fn txn_stmts(&mut self) -> Result<Option<(StmtId, StmtId)>, DbError> {
        if self.text {
            return Ok(None);
        }
        if let Some(t) = self.pipeline.as_ref().and_then(|p| p.txn) {
            return Ok(Some(t));
        }
        if self.pipeline.as_ref().is_some_and(|p| !p.queued.is_empty()) {
            return Err(DbError::new(
                ErrorClass::Fatal,
                "pipeline",
                "BEGIN or COMMIT first queued after other statements",
            ));
        }
        let t = (self.prepare("BEGIN")?, self.prepare("COMMIT")?);
        if let Some(p) = self.pipeline.as_mut() {
            p.txn = Some(t);
        }
        Ok(Some(t))
    }

    fn simple(&mut self, sql: &str) -> Result<StmtOutcome, DbError> {
        self.proto
            .simple(sql, &mut |_| {})
            .map_err(|e| e.in_statement(sql))
    }

    fn run(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: Option<super::conn::OnRow<'_>>,
    ) -> Result<StmtOutcome, DbError> {
        if self.text {
            let sql = interpolate(&self.sql[stmt.0], params, P::BACKSLASH_ESCAPES);
            return match on_row {
                None => self.simple(&sql),
                Some(f) => self.proto.simple(&sql, f).map_err(|e| e.in_statement(&sql)),
            };
        }
        self.proto
            .execute(&mut self.stmts[stmt.0], params, on_row)
            .map_err(|e| e.in_statement(&self.sql[stmt.0]))
    }
}

impl<P: Protocol> Conn for ServerConn<P> {
    fn dialect(&self) -> super::conn::Dialect {
        P::DIALECT
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        if !self.text {
            let st = self
                .proto
                .prepare(self.stmts.len(), sql)
                .map_err(|e| e.in_statement(sql))?;
            self.stmts.push(st);
        }
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.run(stmt, params, None).map(|o| o.rows)
    }

    fn query_each(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<u64, DbError> {
        self.run(stmt, params, Some(on_row)).map(|o| o.rows)
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.run(stmt, params, None).map(|o| o.changed)
    }

    fn counted(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        count: Count,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        if self.pipeline.is_some() {
            self.enqueue(Some(stmt), "", params, Some(count));
            return Ok(());
        }
        let o = self.run(stmt, params, None)?;
        count.add(q, o);
        Ok(())
    }

    fn pipeline_queue(&mut self, stmt: StmtId, params: &[Param]) -> Result<(), DbError> {
        match self.stmts.get(stmt.0) {
            Some(st)
                if !self.text
                    && self.pipeline.is_none()
                    && P::DIALECT == super::conn::Dialect::Postgres =>
            {
                self.proto.queue(st, params);
                Ok(())
            }
            _ => Err(DbError::new(
                ErrorClass::Fatal,
                "pipeline",
                "pipelines need PostgreSQL's prepared statements (-M extended or prepared)",
            )),
        }
    }

    fn pipeline_sync(&mut self) {
        self.proto.queue_sync();
    }

    fn pipeline_send(
        &mut self,
        syncs: usize,
        done: &mut dyn FnMut(StmtOutcome),
    ) -> Result<(), (usize, DbError)> {
        let sent = self.proto.send_queued(syncs, done);
        match sent {
            Ok(in_txn) => {
                self.in_txn = in_txn;
                Ok(())
            }
            Err((at, e)) => {
                // Whether a transaction is still open is not known here: a ROLLBACK where
                // none is open is only a warning.
                self.in_txn = true;
                Err((at, e))
            }
        }
    }

    fn pipeline_discard(&mut self) {
        self.proto.discard_queued();
    }

    fn ping(&mut self) -> Result<(), DbError> {
        self.proto.ping()
    }

    fn sync(&mut self, q: &mut QueryCounts) -> Result<(), DbError> {
        let Some(pl) = self.pipeline.as_mut() else {
            return Ok(());
        };
        if pl.queued.is_empty() {
            return Ok(());
        }
        if pl.open {
            self.proto.queue_sync();
            pl.syncs += 1;
            pl.open = false;
        }
        let queued = std::mem::take(&mut pl.queued);
        let syncs = std::mem::take(&mut pl.syncs);
        let mut i = 0;
        let sent = self.proto.send_queued(syncs, &mut |o| {
            if let Some(c) = queued.get(i).and_then(|s| s.count) {
                c.add(q, o);
            }
            i += 1;
        });
        let result = match sent {
            Ok(in_txn) => {
                self.in_txn = in_txn;
                Ok(())
            }
            Err((at, e)) => {
                // ROLLBACK where no transaction is open is only a warning: always send it.
                self.in_txn = true;
                let sql = match queued.get(at) {
                    Some(Queued { stmt: Some(s), .. }) => self.sql[s.0].as_str(),
                    Some(Queued { fixed, .. }) => fixed,
                    None => "the pipeline",
                };
                Err(e.in_statement(sql))
            }
        };
        if let Some(pl) = self.pipeline.as_mut() {
            pl.queued = queued;
            pl.queued.clear();
        }
        result
    }

    fn begin(&mut self, _write: bool) -> Result<(), DbError> {
        if self.pipeline.is_some() {
            let begin = self.txn_stmts()?.map(|t| t.0);
            // In the transaction already: no Sync after BEGIN.
            self.in_txn = true;
            self.enqueue(begin, "BEGIN", &[], None);
            return Ok(());
        }
        self.simple("BEGIN")?;
        self.in_txn = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), DbError> {
        if self.pipeline.is_some() {
            let commit = self.txn_stmts()?.map(|t| t.1);
            self.enqueue(commit, "COMMIT", &[], None);
            if let Some(pl) = self.pipeline.as_mut().filter(|p| p.open) {
                self.proto.queue_sync();
                pl.syncs += 1;
                pl.open = false;
            }
            self.in_txn = false;
            return Ok(());
        }
        self.in_txn = false;
        self.simple("COMMIT").map(drop)
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        if let Some(pl) = self.pipeline.as_mut() {
            self.proto.discard_queued();
            pl.queued.clear();
            pl.syncs = 0;
            pl.open = false;
        }
        if std::mem::take(&mut self.in_txn) {
            self.simple("ROLLBACK").map(drop)
        } else {
            Ok(())
        }
    }

    fn simple(&mut self, sql: &str, on_row: super::conn::OnRow) -> Result<StmtOutcome, DbError> {
        self.proto
            .simple(sql, on_row)
            .map_err(|e| e.in_statement(sql))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        self.simple(sql).map(drop)
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        Ok(self.query_text(sql)?.and_then(|v| v.parse().ok()))
    }

    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        let mut first: Option<Option<String>> = None;
        self.proto
            .simple(sql, &mut |row| {
                if first.is_none() {
                    first = Some(row.get(0).map(|b| String::from_utf8_lossy(b).into_owned()));
                }
            })
            .map_err(|e| e.in_statement(sql))?;
        Ok(first.flatten())
    }

    fn query_rows(
        &mut self,
        sql: &str,
        columns: usize,
    ) -> Result<Vec<Vec<Option<String>>>, DbError> {
        let mut rows = Vec::new();
        self.proto
            .simple(sql, &mut |row| {
                rows.push(
                    (0..columns)
                        .map(|i| row.get(i).map(|b| String::from_utf8_lossy(b).into_owned()))
                        .collect(),
                );
            })
            .map_err(|e| e.in_statement(sql))?;
        Ok(rows)
    }

    fn table_exists(&mut self, name: &str) -> Result<bool, DbError> {
        Ok(self
            .query_i64(&P::table_count_sql(&name.replace('\'', "''")))?
            .unwrap_or(0)
            > 0)
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.proto.bulk_load(table, columns, next_row)
    }

    fn bulk_load_frozen(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.proto.bulk_load_frozen(table, columns, next_row)
    }

    fn tls(&self) -> Option<String> {
        self.proto.tls()
    }

    fn in_transaction(&self) -> Option<bool> {
        self.proto.in_transaction()
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let mut out = BTreeMap::new();
        self.proto
            .simple(P::SETTINGS_SQL, &mut |row| {
                let text = |i| row.get(i).map(String::from_utf8_lossy);
                // Two columns (name, value), or one `name=value`.
                let pair = match (text(0), text(1)) {
                    (Some(k), Some(v)) => Some((k.into_owned(), v.into_owned())),
                    (Some(t), None) => t
                        .split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string())),
                    _ => None,
                };
                if let Some((k, v)) = pair {
                    out.insert(k.to_ascii_lowercase(), v);
                }
            })
            .map_err(|e| e.in_statement(P::SETTINGS_SQL))?;
        Ok(out)
    }
}
