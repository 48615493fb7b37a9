//! SQLite targets and connections: the URL's settings, the writer's turn, statements and the error classes of the measured path.

use super::own_file_table;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, OptionalExtension, Statement, ToSql};

use super::super::conn::{Conn, Dialect, Param, RowValue, StmtId, Target};
use super::super::url::query_pairs;
use super::busy::{BUSY_NS, BUSY_WAITS, LOCK_BOUND, busy_handler, sqlite_busy_timeout};
use super::exec::{RowText, classify, db_cache_counters, prepare_fresh, rows_as_text, run_simple};
use super::files::{closed, opening};
use super::turns::{LockWait, NoTurn, Turn, Turns, Writer, lock_writer};
use crate::error::Error;
use crate::error::{DbError, ErrorClass};

#[derive(Clone)]
pub struct SqliteTarget {
    url: String,
    path: PathBuf,
    pragmas: Vec<(String, String)>,
    create: bool,
    /// How writers wait for the write lock (`lock_wait=` in the URL).
    wait: LockWait,
}

impl SqliteTarget {
    /// Parses `sqlite://PATH[?pragma=value&...]`; `create` allows creating the file (prepare).
    pub fn from_url(url: &str, create: bool) -> Result<SqliteTarget, Error> {
        let rest = url.strip_prefix("sqlite://").unwrap_or_default();
        let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
        if path.is_empty() {
            return Err(Error::Usage(format!(
                "--target {url}: no database path; use sqlite://PATH (for example sqlite://dbsweep.db)"
            )));
        }
        let mut pragmas = query_pairs(query, url)?;
        // `lock_wait` is dbsweep's, not a PRAGMA: how writers wait for the write lock.
        let mut wait = LockWait::Writer;
        if let Some(at) = pragmas.iter().position(|(n, _)| n == "lock_wait") {
            let (_, value) = pragmas.remove(at);
            wait = LockWait::parse(&value).ok_or_else(|| {
                Error::Usage(format!(
                    "--target {url}: lock_wait={value}: use writer (the default), fifo, batch, poll or timeout"
                ))
            })?;
        }
        for (name, value) in &pragmas {
            let ok_name = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            let ok_value = value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-".contains(c));
            if !ok_name || !ok_value || value.is_empty() {
                return Err(Error::Usage(format!(
                    "--target {url}: '{name}={value}' is not a valid PRAGMA setting"
                )));
            }
        }
        if !pragmas
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("journal_mode"))
        {
            pragmas.insert(0, ("journal_mode".into(), "WAL".into()));
        }
        Ok(SqliteTarget {
            url: url.to_string(),
            path: PathBuf::from(path),
            pragmas,
            create,
            wait,
        })
    }

    /// Opens a connection, counted until its holder (`SqliteConn`, `Writer`) frees it; refused
    /// while another thread has a file table of its own ([`own_file_table`]).
    fn open_connection(&self) -> Result<Connection, DbError> {
        opening(&self.path)?;
        // One open at a time in this process: a connection's first read of a WAL database that
        // no connection has open rebuilds the WAL's index, and clients connecting at once
        // would find it busy and poll in the busy handler (counted as the run's lock waits,
        // though no one wrote). Held for the open and its PRAGMAs only; their waits for other
        // processes are bounded as every busy wait is.
        static OPEN: Mutex<()> = Mutex::new(());
        let one_at_a_time = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        let conn = self.open_counted();
        drop(one_at_a_time);
        if conn.is_err() {
            closed();
        }
        conn
    }

    fn open_counted(&self) -> Result<Connection, DbError> {
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        if self.create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        } else if !self.path.exists() {
            return Err(DbError::new(
                ErrorClass::Fatal,
                "missing",
                format!(
                    "database file {} does not exist (load it first: `dbsweep prepare`, or `dbsweep tpcc prepare` for TPC-C)",
                    self.path.display()
                ),
            ));
        }
        let mut conn = Connection::open_with_flags(&self.path, flags).map_err(classify)?;
        // With turns, writers of other processes (and of a deferred transaction that writes
        // later) still meet SQLite's lock, and the busy handler waits for them.
        let handler = if self.wait == LockWait::Timeout {
            sqlite_busy_timeout
        } else {
            busy_handler
        };
        conn.busy_handler(Some(handler)).map_err(classify)?;
        // Room for every statement of every table a workload prepares (rusqlite keeps 16).
        conn.set_prepared_statement_cache_capacity(1024);
        for (name, value) in &self.pragmas {
            // journal_mode returns a row, so read it rather than execute it.
            conn.query_row(&format!("PRAGMA {name}={value}"), [], |_| Ok(()))
                .optional()
                .map_err(classify)?;
        }
        Ok(conn)
    }
}

impl Target for SqliteTarget {
    /// Each connection has a page cache of its own: `cache_size` pages (negative: KiB; 2,000
    /// KiB by default), filled up to the size of the database, plus SQLite's own structures
    /// and the prepared statements (about 1 MiB, measured: 100 clients of oltp_point_select).
    fn client_memory(&self) -> u64 {
        let cache = self
            .pragmas
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("cache_size"))
            .and_then(|(_, v)| v.parse::<i64>().ok())
            .map_or(2_000 << 10, |v| {
                if v < 0 {
                    v.unsigned_abs().saturating_mul(1024)
                } else {
                    v.unsigned_abs().saturating_mul(4096)
                }
            });
        let file = std::fs::metadata(&self.path).map_or(0, |m| m.len());
        cache.min(file).saturating_add(1 << 20)
    }

    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn display_url(&self) -> String {
        self.url.clone()
    }

    fn shared(&self) -> std::sync::Arc<dyn Target> {
        std::sync::Arc::new(self.clone())
    }

    fn connect(&self) -> Result<Box<dyn Conn>, DbError> {
        let turns = Turns::of(&self.path, self.wait);
        if let Some(t) = &turns
            && self.wait == LockWait::Writer
            && t.writer.get().is_none()
        {
            // A connection opened at the same time may set it first: this one is then closed.
            let _ = t
                .writer
                .set(std::sync::Mutex::new(Writer::new(self.open_connection()?)));
        }
        Ok(Box::new(SqliteConn::new(self.open_connection()?, turns)))
    }

    fn version(&self, _conn: &mut dyn Conn) -> Result<String, DbError> {
        Ok(rusqlite::version().to_string())
    }

    fn max_writers(&self) -> usize {
        1
    }

    fn lone_client(&self) -> Option<Box<dyn std::any::Any>> {
        own_file_table().map(|t| Box::new(t) as Box<dyn std::any::Any>)
    }

    fn after_load(&self, conn: &mut dyn Conn) -> Result<(), DbError> {
        conn.query_i64("PRAGMA wal_checkpoint(TRUNCATE)")
            .map(|_| ())
    }
}

/// A connection and the statements prepared on it.
///
/// rusqlite's `Statement` borrows its `Connection`, so keeping both in one struct needs the
/// connection at a fixed heap address and the statements dropped before it. rusqlite's own
/// statement cache would avoid the unsafe code, but its lookup on every execution (hashing the
/// SQL, LRU bookkeeping) cost about 10% of a point select's client time in bench/sqlite_limit.
pub struct SqliteConn {
    /// Borrow `*conn`; cleared before `conn` is freed (see `Drop`).
    stmts: Vec<Statement<'static>>,
    sql: Vec<String>,
    /// Owned (from `Box::into_raw`); a raw pointer so that moving `SqliteConn` does not assert
    /// unique access to the connection while statements hold shared references to it.
    conn: NonNull<Connection>,
    /// Reused by `query_each`.
    row_text: RowText,
    /// Whether each prepared statement leaves the database as it is (a write outside a
    /// transaction takes a turn).
    readonly: Vec<bool>,
    /// Each prepared statement's index on the shared writer connection (`usize::MAX`: not
    /// prepared there yet).
    on_writer: Vec<usize>,
    /// The turns of this database's writers in this process (None: `lock_wait` poll or
    /// timeout), and this connection's turn while it writes. Dropped after the connection.
    turns: Option<Arc<Turns>>,
    turn: Option<Turn>,
}

// SAFETY: connections are opened with SQLITE_OPEN_NO_MUTEX (SQLite's multi-thread mode): a
// connection and its statements may move between threads as long as one thread at a time uses
// them, and they always move together inside this struct.
unsafe impl Send for SqliteConn {}

impl Drop for SqliteConn {
    fn drop(&mut self) {
        self.stmts.clear();
        // SAFETY: `conn` came from `Box::into_raw` in `new`, and no statement borrows it now.
        drop(unsafe { Box::from_raw(self.conn.as_ptr()) });
        closed();
    }
}

impl SqliteConn {
    fn new(conn: Connection, turns: Option<Arc<Turns>>) -> SqliteConn {
        let conn = NonNull::from(Box::leak(Box::new(conn)));
        SqliteConn {
            stmts: Vec::new(),
            sql: Vec::new(),
            conn,
            row_text: RowText::default(),
            readonly: Vec::new(),
            on_writer: Vec::new(),
            turns,
            turn: None,
        }
    }

    /// Waits for this connection's turn to write (nothing to do without turns, or with the
    /// turn held), counting the wait as a busy wait.
    fn take_turn(&mut self) -> Result<(), DbError> {
        let Some(turns) = self.turns.as_ref().filter(|_| self.turn.is_none()) else {
            return Ok(());
        };
        match turns.take(LOCK_BOUND) {
            Ok((turn, waited)) => {
                if let Some(w) = waited {
                    BUSY_WAITS.fetch_add(1, Ordering::Relaxed);
                    let ns = u64::try_from(w.as_nanos()).unwrap_or(u64::MAX);
                    BUSY_NS.fetch_add(ns, Ordering::Relaxed);
                }
                self.turn = Some(turn);
                Ok(())
            }
            Err(NoTurn::Interrupted) => Err(DbError::new(
                ErrorClass::Fatal,
                "interrupted",
                "interrupted while waiting for the database's write lock",
            )),
            Err(NoTurn::TimedOut) => Err(DbError::new(
                ErrorClass::Busy,
                "SQLite error 5",
                format!(
                    "database is locked: another writer of this process held it for {} s",
                    LOCK_BOUND.as_secs()
                ),
            )),
        }
    }

    /// Ends the turn once the connection is out of its transaction.
    fn end_turn_if_done(&mut self) {
        if self.turn.is_some() && self.with_conn(Connection::is_autocommit) {
            self.turn = None;
        }
    }

    /// Whether running a statement that is `readonly` or not needs a turn for its own time:
    /// a write outside a transaction (inside one, the turn was taken at BEGIN IMMEDIATE, or
    /// the transaction is deferred and SQLite's lock decides).
    fn solo_write(&self, readonly: bool) -> bool {
        !readonly && self.turns.is_some() && self.turn.is_none() && self.own().is_autocommit()
    }

    /// This client's own connection.
    fn own(&self) -> &Connection {
        // SAFETY: the connection lives as long as `self`.
        unsafe { self.conn.as_ref() }
    }

    /// Runs `f` on the connection statements go to now: the shared writer connection while
    /// this client holds a turn with `lock_wait=writer`, else its own.
    fn with_conn<R>(&self, f: impl FnOnce(&Connection) -> R) -> R {
        match self.turn.as_ref().and_then(Turn::writer) {
            Some(w) => f(lock_writer(w).conn()),
            None => f(self.own()),
        }
    }

    /// Runs `f` on prepared statement `stmt` where statements go now (see `with_conn`).
    fn with_stmt<R>(
        &mut self,
        stmt: StmtId,
        f: impl FnOnce(&mut Statement<'static>, &mut RowText) -> rusqlite::Result<R>,
    ) -> Result<R, DbError> {
        let sql = &self.sql[stmt.0];
        let r = match self.turn.as_ref().and_then(Turn::writer) {
            Some(w) => {
                let mut w = lock_writer(w);
                match w.statement(&mut self.on_writer[stmt.0], sql) {
                    Ok(i) => f(&mut w.stmts[i], &mut self.row_text),
                    Err(e) => Err(e),
                }
            }
            None => f(&mut self.stmts[stmt.0], &mut self.row_text),
        };
        r.map_err(|e| classify(e).in_statement(sql))
    }

    fn run(&mut self, sql: &str) -> Result<(), DbError> {
        self.with_conn(|c| c.prepare_cached(sql).and_then(|mut s| s.raw_execute()))
            .map_err(classify)?;
        Ok(())
    }
}

impl ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::Borrowed(match self {
            Param::Int(i) => ValueRef::Integer(*i),
            Param::Text(s) => ValueRef::Text(s.as_bytes()),
            Param::Null => ValueRef::Null,
        }))
    }
}

impl Conn for SqliteConn {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError> {
        // SAFETY: the statement is stored in `self.stmts`, which `drop` clears before it frees
        // the connection, so the borrow never outlives the connection.
        let conn: &'static Connection = unsafe { &*self.conn.as_ptr() };
        let st = prepare_fresh(conn, sql).map_err(|e| classify(e).in_statement(sql))?;
        self.readonly.push(st.readonly());
        self.on_writer.push(usize::MAX);
        self.stmts.push(st);
        self.sql.push(sql.to_string());
        Ok(StmtId(self.sql.len() - 1))
    }

    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        self.with_stmt(stmt, |st, _| {
            let columns = st.column_count();
            let mut rows = st.query(rusqlite::params_from_iter(params))?;
            let mut n = 0;
            while let Some(row) = rows.next()? {
                // Read every value, as a client that uses its results would.
                for i in 0..columns {
                    std::hint::black_box(row.get_ref(i)?);
                }
                n += 1;
            }
            Ok(n)
        })
    }

    fn query_each(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: &mut dyn FnMut(&dyn super::super::conn::TextRow),
    ) -> Result<u64, DbError> {
        self.with_stmt(stmt, |st, text| {
            let columns = st.column_count();
            let mut rows = st.query(rusqlite::params_from_iter(params))?;
            let mut n = 0;
            while let Some(row) = rows.next()? {
                text.fill(row, columns)?;
                on_row(&*text);
                n += 1;
            }
            Ok(n)
        })
    }

    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError> {
        let solo = self.solo_write(self.readonly[stmt.0]);
        if solo {
            self.take_turn()?;
        }
        let changed = self.with_stmt(stmt, |st, _| st.execute(rusqlite::params_from_iter(params)));
        if solo {
            self.turn = None;
        }
        Ok(changed? as u64)
    }

    fn begin(&mut self, write: bool) -> Result<(), DbError> {
        // A deferred transaction that later writes fails at once with SQLITE_BUSY when another
        // connection wrote meanwhile; taking the write lock up front makes writers queue instead.
        if write {
            self.take_turn()?;
        }
        let r = self.run(if write { "BEGIN IMMEDIATE" } else { "BEGIN" });
        self.end_turn_if_done();
        r
    }

    fn commit(&mut self) -> Result<(), DbError> {
        let r = self.run("COMMIT");
        self.end_turn_if_done();
        r
    }

    fn rollback(&mut self) -> Result<(), DbError> {
        let r = if self.with_conn(Connection::is_autocommit) {
            Ok(())
        } else {
            self.run("ROLLBACK")
        };
        self.end_turn_if_done();
        r
    }

    fn simple(
        &mut self,
        sql: &str,
        on_row: super::super::conn::OnRow,
    ) -> Result<super::super::conn::StmtOutcome, DbError> {
        // SAFETY: the statement is dropped within this call, while `self` (and so the
        // connection) lives; `take_turn` touches the turns, not the connection.
        let own: &Connection = unsafe { &*self.conn.as_ptr() };
        let mut st = Some(prepare_fresh(own, sql).map_err(|e| classify(e).in_statement(sql))?);
        if self.turns.is_some() && self.turn.is_none() {
            // A transaction that takes the write lock at its start takes a turn first; a
            // write outside a transaction takes one for its own time.
            let head: Vec<String> = sql
                .split_whitespace()
                .take(2)
                .map(str::to_ascii_uppercase)
                .collect();
            let locking = head.first().is_some_and(|w| w == "BEGIN")
                && head
                    .get(1)
                    .is_some_and(|w| w.starts_with("IMMEDIATE") || w.starts_with("EXCLUSIVE"));
            if locking || (st.as_ref().is_some_and(|s| !s.readonly()) && own.is_autocommit()) {
                self.take_turn()?;
            }
        }
        if self.turn.as_ref().and_then(Turn::writer).is_some() {
            // It runs on the shared writer connection.
            st = None;
        }
        let mut text = std::mem::take(&mut self.row_text);
        let out = match st {
            Some(st) => run_simple(st, own, &mut text, on_row),
            None => self.with_conn(|c| {
                c.prepare(sql)
                    .and_then(|st| run_simple(st, c, &mut text, on_row))
            }),
        };
        self.row_text = text;
        self.end_turn_if_done();
        out.map_err(|e| classify(e).in_statement(sql))
    }

    fn batch(&mut self, sql: &str) -> Result<(), DbError> {
        if self.own().is_autocommit() {
            self.take_turn()?;
        }
        let r = self.with_conn(|c| c.execute_batch(sql)).map_err(classify);
        self.end_turn_if_done();
        r
    }

    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError> {
        self.with_conn(|c| {
            c.query_row(sql, [], |r| r.get::<_, Option<i64>>(0))
                .optional()
        })
        .map(Option::flatten)
        .map_err(classify)
    }

    fn cache_counters(&mut self, reset: bool) -> Option<[u64; 3]> {
        let mut out = db_cache_counters(self.own(), reset)?;
        // The shared writer's are counted once: by every client at a reset, by the first
        // client that reads them after it.
        if let Some(w) = self.turns.as_ref().and_then(|t| t.writer.get()) {
            let mut w = lock_writer(w);
            if reset || !w.counted {
                let shared = db_cache_counters(w.conn(), reset)?;
                w.counted = !reset;
                if !reset {
                    for (o, s) in out.iter_mut().zip(shared) {
                        *o += s;
                    }
                }
            }
        }
        Some(out)
    }

    fn query_rows(
        &mut self,
        sql: &str,
        columns: usize,
    ) -> Result<Vec<Vec<Option<String>>>, DbError> {
        self.with_conn(|conn| rows_as_text(conn, sql, columns))
    }

    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        // One prepared INSERT inside large transactions: the fastest safe path for SQLite.
        const ROWS_PER_TRANSACTION: u64 = 200_000;
        let marks = vec!["?"; columns.len()].join(", ");
        let insert = self.prepare(&format!(
            "INSERT INTO {table} ({}) VALUES ({marks})",
            columns.join(", ")
        ))?;
        let mut row = Vec::with_capacity(columns.len());
        let mut loaded = 0u64;
        self.begin(true)?;
        while next_row(&mut row) {
            let params: Vec<Param> = row.iter().map(RowValue::as_param).collect();
            self.execute(insert, &params)?;
            loaded += 1;
            if loaded.is_multiple_of(ROWS_PER_TRANSACTION) {
                self.commit()?;
                self.begin(true)?;
            }
        }
        self.commit()?;
        Ok(loaded)
    }

    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        let mut out = BTreeMap::new();
        for pragma in [
            "journal_mode",
            "synchronous",
            "cache_size",
            "page_size",
            "mmap_size",
            "locking_mode",
        ] {
            let value: String = self
                .own()
                .query_row(&format!("PRAGMA {pragma}"), [], |r| {
                    r.get::<_, rusqlite::types::Value>(0)
                })
                .map(|v| match v {
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    rusqlite::types::Value::Text(t) => t,
                    other => format!("{other:?}"),
                })
                .map_err(classify)?;
            out.insert(pragma.to_string(), value);
        }
        Ok(out)
    }

    fn table_exists(&mut self, name: &str) -> Result<bool, DbError> {
        let n: i64 = self
            .with_conn(|c| {
                c.query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [name],
                    |r| r.get(0),
                )
            })
            .map_err(classify)?;
        Ok(n > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_scan_misses(wait: &str) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let url = format!(
            "sqlite://{}?lock_wait={wait}",
            dir.path().join("t.db").display()
        );
        let target = SqliteTarget::from_url(&url, true).unwrap();
        let mut a = target.connect().unwrap();
        a.batch("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, pad TEXT)")
            .unwrap();
        a.batch(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) \
             INSERT INTO t SELECT i, i, printf('%.200c', 'x') FROM n",
        )
        .unwrap();
        let mut b = target.connect().unwrap();
        // Prepared in another order on each client: each finds its own on the shared writer.
        let a_scan = a.prepare("SELECT sum(v), max(pad) FROM t").unwrap();
        let a_update = a.prepare("UPDATE t SET v = v + 1 WHERE id = ?").unwrap();
        let b_update = b.prepare("UPDATE t SET v = v + 1 WHERE id = ?").unwrap();
        let b_scan = b.prepare("SELECT sum(v), max(pad) FROM t").unwrap();
        let sum = |c: &mut Box<dyn Conn>, s: StmtId| {
            let mut total = 0i64;
            c.query_each(s, &[], &mut |row| {
                total = std::str::from_utf8(row.get(0).unwrap())
                    .unwrap()
                    .parse()
                    .unwrap();
            })
            .unwrap();
            total
        };
        for (c, scan) in [(&mut a, a_scan), (&mut b, b_scan)] {
            c.begin(true).unwrap();
            sum(c, scan);
            c.commit().unwrap();
            c.cache_counters(true);
        }
        // Writers take turns: each writes a row, then reads the table in its next turn.
        for round in 1..=3 {
            for (c, update, scan) in [(&mut a, a_update, a_scan), (&mut b, b_update, b_scan)] {
                c.begin(true).unwrap();
                c.execute(update, &[Param::Int(round)]).unwrap();
                c.commit().unwrap();
                c.begin(true).unwrap();
                assert!(sum(c, scan) > 3000 * 3001 / 2);
                c.commit().unwrap();
            }
        }
        let a_counts = a.cache_counters(false).unwrap();
        let b_counts = b.cache_counters(false).unwrap();
        a_counts[1] + b_counts[1]
    }

    #[test]
    fn writers_on_the_shared_connection_keep_its_page_cache() {
        // The table is about 180 pages; with a connection per writer, each turn after the
        // other writer's commit starts with an empty cache and reads them all again.
        let own = full_scan_misses("fifo");
        assert!(own >= 5 * 150, "fifo: {own} cache misses");
        let shared = full_scan_misses("writer");
        assert!(shared < 20, "writer: {shared} cache misses");
    }

    #[test]
    fn a_turn_given_up_inside_a_transaction_rolls_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("r.db").display());
        let target = SqliteTarget::from_url(&url, true).unwrap();
        let mut a = target.connect().unwrap();
        let mut b = target.connect().unwrap();
        a.batch("CREATE TABLE t (id INTEGER PRIMARY KEY)").unwrap();
        a.begin(true).unwrap();
        a.batch("INSERT INTO t VALUES (1)").unwrap();
        // A client that fails inside its transaction and is dropped.
        drop(a);
        b.begin(true).unwrap();
        assert_eq!(b.query_i64("SELECT count(*) FROM t").unwrap(), Some(0));
        b.batch("INSERT INTO t VALUES (2)").unwrap();
        b.commit().unwrap();
        assert_eq!(b.query_i64("SELECT count(*) FROM t").unwrap(), Some(1));
    }
}
