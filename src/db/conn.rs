//! What a database connection is to the rest of dbsweep: the [`Target`] a run connects to, the
//! [`Conn`] each client holds, the statements' parameters and outcomes, and the query counts.

use std::collections::BTreeMap;

use super::socket;
use crate::error::{DbError, ErrorClass};

/// A statement parameter; borrowed so that binding allocates nothing.
#[derive(Clone, Copy, Debug)]
pub enum Param<'a> {
    Int(i64),
    Text(&'a str),
    Null,
}

/// What a statement did: rows it returned, rows it changed.
#[derive(Clone, Copy, Debug, Default)]
pub struct StmtOutcome {
    pub rows: u64,
    pub changed: u64,
}

/// A statement prepared on one connection; valid for that connection only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StmtId(pub usize);

/// The error of a failed read or write on a server connection: the connection is lost, unless
/// the wait was ended by Ctrl-C (then the run stops, not reconnects).
pub(crate) fn io_error(e: &std::io::Error) -> DbError {
    if socket::is_interrupted(e) {
        DbError::new(ErrorClass::Fatal, "interrupted", e.to_string())
    } else {
        DbError::new(ErrorClass::ConnectionLost, "io", e.to_string())
    }
}

/// Queries of one event, classified as sysbench does: a result set is a read, a statement that
/// changed at least one row is a write, everything else (BEGIN, COMMIT, a DML that matched no
/// row) is other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueryCounts {
    pub reads: u64,
    pub writes: u64,
    pub others: u64,
    /// Rows returned by reads (the throughput of scans).
    pub rows: u64,
    /// What a sysbench script counted itself through `ffi.C.sb_counter_inc`: transactions
    /// (`SB_CNT_TRX`), errors (`SB_CNT_ERROR`, such as TPC-C's deliberate New-Order
    /// rollbacks) and reconnects, which sysbench adds to its own counts.
    pub script_events: u64,
    pub script_errors: u64,
    pub script_reconnects: u64,
    /// The event found nothing to do and is not counted (a delete that found no rows yet).
    pub nothing_done: bool,
}

impl QueryCounts {
    pub fn total(&self) -> u64 {
        self.reads + self.writes + self.others
    }

    /// Counts a DML statement that changed `changed` rows.
    #[inline]
    pub fn dml(&mut self, changed: u64) {
        if changed > 0 {
            self.writes += 1;
        } else {
            self.others += 1;
        }
    }

    /// Counts a statement that returned `rows` rows.
    #[inline]
    pub fn read(&mut self, rows: u64) {
        self.reads += 1;
        self.rows += rows;
    }
}

/// One row of a text-protocol result set, read lazily: callers that ignore rows pay nothing.
pub trait TextRow {
    /// The `i`th value (None: NULL or no such column).
    fn get(&self, i: usize) -> Option<&[u8]>;
    /// The number of values.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The `i`th column's name, where the client keeps it (PostgreSQL's and SQLite's text
    /// results); None otherwise.
    fn name(&self, _i: usize) -> Option<&str> {
        None
    }
    /// Which result set of the statement's (0 for the first) the row is in: a query string
    /// holding several statements (PostgreSQL's) has one per statement.
    fn result_set(&self) -> usize {
        0
    }
}

/// What sees each row of a result set.
pub type OnRow<'a> = &'a mut dyn FnMut(&dyn TextRow);

/// How a statement counts in a run's queries: a read (with the rows it returned), or a write
/// (an "other" when it changed no row), as sysbench counts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Count {
    Read,
    Write,
}

impl Count {
    #[inline]
    pub fn add(self, q: &mut QueryCounts, o: StmtOutcome) {
        match self {
            Count::Read => q.read(o.rows),
            Count::Write => q.dml(o.changed),
        }
    }
}

/// A connection used by one client thread.
pub trait Conn: Send {
    /// The SQL dialect this connection speaks.
    fn dialect(&self) -> Dialect;
    /// Prepares `sql` (with `?` placeholders) for repeated execution on this connection.
    fn prepare(&mut self, sql: &str) -> Result<StmtId, DbError>;
    /// Runs a statement that returns a result set, reads every row, returns the row count.
    fn query(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError>;
    /// Runs a statement that returns a result set; `on_row` sees each row's values as text
    /// (numbers in decimal, timestamps as `YYYY-MM-DD HH:MM:SS`). Returns the row count.
    fn query_each(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        on_row: &mut dyn FnMut(&dyn TextRow),
    ) -> Result<u64, DbError>;
    /// Runs a statement that changes rows, returns how many it changed.
    fn execute(&mut self, stmt: StmtId, params: &[Param]) -> Result<u64, DbError>;
    /// Runs a statement whose result only counts, and counts it into `q`. Under `--pipeline`
    /// the statement (and `begin`, `commit`) is only queued: [`Conn::sync`] sends the queue in
    /// one round trip and counts the results.
    fn counted(
        &mut self,
        stmt: StmtId,
        params: &[Param],
        count: Count,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let o = match count {
            Count::Read => StmtOutcome {
                rows: self.query(stmt, params)?,
                changed: 0,
            },
            Count::Write => StmtOutcome {
                rows: 0,
                changed: self.execute(stmt, params)?,
            },
        };
        count.add(q, o);
        Ok(())
    }
    /// Sends what [`Conn::counted`], `begin` and `commit` queued under `--pipeline` and counts
    /// the results into `q`; nothing to do otherwise. The first error is returned, naming its
    /// statement.
    fn sync(&mut self, _q: &mut QueryCounts) -> Result<(), DbError> {
        Ok(())
    }
    /// An explicit pipeline (pgbench's `\startpipeline`): queues prepared statement `stmt`
    /// without sending it and with no Sync after it. Only PostgreSQL's prepared statements
    /// pipeline; elsewhere this refuses.
    fn pipeline_queue(&mut self, _stmt: StmtId, _params: &[Param]) -> Result<(), DbError> {
        Err(DbError::new(
            ErrorClass::Fatal,
            "pipeline",
            "pipelines need PostgreSQL's prepared statements (-M extended or prepared)",
        ))
    }
    /// Queues a Sync in the explicit pipeline: what was queued before it ends there.
    fn pipeline_sync(&mut self) {}
    /// Sends the explicit pipeline's queue and reads up to its `syncs`th Sync; `done` sees each
    /// completed statement's outcome. The first error comes with the number of statements
    /// that completed before it.
    fn pipeline_send(
        &mut self,
        _syncs: usize,
        _done: &mut dyn FnMut(StmtOutcome),
    ) -> Result<(), (usize, DbError)> {
        Err((
            0,
            DbError::new(ErrorClass::Fatal, "pipeline", "nothing pipelined"),
        ))
    }
    /// Forgets what the explicit pipeline queued and did not send.
    fn pipeline_discard(&mut self) {}
    /// The least request the protocol has, answered (PostgreSQL's Sync, MySQL's COM_PING):
    /// the connection's round trip floor. Embedded databases have no round trip.
    fn ping(&mut self) -> Result<(), DbError> {
        Err(DbError::new(
            ErrorClass::Fatal,
            "ping",
            "an embedded database has no round trip to measure",
        ))
    }
    /// Starts a transaction; `write` says it will write (SQLite takes the write lock up front).
    fn begin(&mut self, write: bool) -> Result<(), DbError>;
    fn commit(&mut self) -> Result<(), DbError>;
    /// Rolls back if a transaction is open; a no-op otherwise.
    fn rollback(&mut self) -> Result<(), DbError>;
    /// Runs a text statement (no parameters) of any kind; `on_row` sees each row of a result
    /// set. Returns the rows returned and the rows changed.
    fn simple(&mut self, sql: &str, on_row: OnRow) -> Result<StmtOutcome, DbError>;
    /// Runs one or more statements without parameters (DDL, maintenance).
    fn batch(&mut self, sql: &str) -> Result<(), DbError>;
    /// Runs a query returning one integer (NULL as None); `None` too when there is no row.
    fn query_i64(&mut self, sql: &str) -> Result<Option<i64>, DbError>;
    /// Runs a query returning one value as text (NULL or no row as None).
    fn query_text(&mut self, sql: &str) -> Result<Option<String>, DbError> {
        Ok(self.query_i64(sql)?.map(|v| v.to_string()))
    }
    /// Runs a query and returns every row's values as text (NULL as None), `columns` of them.
    /// For the small monitoring queries (server counters), never on the hot path.
    fn query_rows(
        &mut self,
        sql: &str,
        columns: usize,
    ) -> Result<Vec<Vec<Option<String>>>, DbError>;
    /// This connection's page cache hits, misses and writes since the last reset (SQLite, whose
    /// page cache is per connection); None where the server keeps the counters.
    fn cache_counters(&mut self, _reset: bool) -> Option<[u64; 3]> {
        None
    }
    /// Whether table `name` exists.
    fn table_exists(&mut self, name: &str) -> Result<bool, DbError>;
    /// Bulk-loads rows into `table` by the fastest safe path of this database: `columns` names
    /// the columns, `next_row` fills the values of the next row and returns false when done.
    fn bulk_load(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError>;
    /// As [`bulk_load`](Self::bulk_load) into a table this transaction created or truncated:
    /// PostgreSQL writes the rows frozen (`COPY ... WITH (FREEZE ON)`, pgbench's `-i` since
    /// 14), so that the VACUUM after has nothing to do; elsewhere the same as `bulk_load`.
    fn bulk_load_frozen(
        &mut self,
        table: &str,
        columns: &[&str],
        next_row: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.bulk_load(table, columns, next_row)
    }
    /// The negotiated TLS protocol and cipher of this connection; None when it is plain.
    fn tls(&self) -> Option<String> {
        None
    }
    /// Whether the session is inside a transaction block (as the server said at its last
    /// ReadyForQuery); None where the protocol does not say.
    fn in_transaction(&self) -> Option<bool> {
        None
    }
    /// The server's settings worth saving with results (non-default ones where the server
    /// tells them apart).
    fn server_settings(&mut self) -> Result<BTreeMap<String, String>, DbError> {
        Ok(BTreeMap::new())
    }
}

/// How the SQL of a target differs from the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
    Mysql,
    /// Accepts everything; used by the mock target.
    Any,
}

impl Dialect {
    /// The kind of database, as results files and messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Sqlite => "sqlite",
            Dialect::Postgres => "postgres",
            Dialect::Mysql => "mysql",
            Dialect::Any => "mock",
        }
    }
}

/// The connection of a client that opens its own (a sysbench script's): the runner opens none
/// for it, and every statement sent here is refused.
pub struct Detached(pub Dialect);

impl Detached {
    pub(crate) fn refuse<T>(&self) -> Result<T, DbError> {
        Err(DbError::new(
            ErrorClass::Fatal,
            "detached",
            "this client runs on connections of its own",
        ))
    }
}

impl Conn for Detached {
    fn dialect(&self) -> Dialect {
        self.0
    }
    fn prepare(&mut self, _: &str) -> Result<StmtId, DbError> {
        self.refuse()
    }
    fn query(&mut self, _: StmtId, _: &[Param]) -> Result<u64, DbError> {
        self.refuse()
    }
    fn query_each(&mut self, _: StmtId, _: &[Param], _: OnRow) -> Result<u64, DbError> {
        self.refuse()
    }
    fn execute(&mut self, _: StmtId, _: &[Param]) -> Result<u64, DbError> {
        self.refuse()
    }
    fn begin(&mut self, _: bool) -> Result<(), DbError> {
        self.refuse()
    }
    fn commit(&mut self) -> Result<(), DbError> {
        self.refuse()
    }
    /// No transaction is ever open here.
    fn rollback(&mut self) -> Result<(), DbError> {
        Ok(())
    }
    fn simple(&mut self, _: &str, _: OnRow) -> Result<StmtOutcome, DbError> {
        self.refuse()
    }
    fn batch(&mut self, _: &str) -> Result<(), DbError> {
        self.refuse()
    }
    fn query_i64(&mut self, _: &str) -> Result<Option<i64>, DbError> {
        self.refuse()
    }
    fn query_rows(&mut self, _: &str, _: usize) -> Result<Vec<Vec<Option<String>>>, DbError> {
        self.refuse()
    }
    fn table_exists(&mut self, _: &str) -> Result<bool, DbError> {
        self.refuse()
    }
    fn bulk_load(
        &mut self,
        _: &str,
        _: &[&str],
        _: &mut dyn FnMut(&mut Vec<RowValue>) -> bool,
    ) -> Result<u64, DbError> {
        self.refuse()
    }
}

/// A database to benchmark.
pub trait Target: Send + Sync {
    /// `sqlite`, `postgres`, `mysql`, `mock`: its dialect's name, for results and messages
    /// (compare `dialect()`, not this text).
    fn kind(&self) -> &'static str {
        self.dialect().name()
    }
    fn dialect(&self) -> Dialect;
    /// The URL with any password hidden, for output and results files.
    fn display_url(&self) -> String;
    fn connect(&self) -> Result<Box<dyn Conn>, DbError>;
    /// The same target, owned and shareable: for a client that opens connections itself
    /// during its events (sql-bench's connect test).
    fn shared(&self) -> std::sync::Arc<dyn Target>;
    /// The server's (or library's) version, asked on `conn`.
    fn version(&self, conn: &mut dyn Conn) -> Result<String, DbError>;
    /// What one client connection holds in this process, in bytes, at most (a library's page
    /// cache; a wire client's buffers): for refusing client counts the machine cannot hold.
    fn client_memory(&self) -> u64 {
        // A wire client: its read and write buffers and prepared statements.
        256 << 10
    }
    /// Called on the thread of a run's only client before it connects: what that thread
    /// holds until its connections are closed (embedded SQLite: a file table of its own,
    /// see `sqlite::own_file_table`). None: nothing to hold.
    fn lone_client(&self) -> Option<Box<dyn std::any::Any>> {
        None
    }
    /// How many tables may load at once (SQLite has one writer at a time).
    fn max_writers(&self) -> usize {
        usize::MAX
    }
    /// Brings the database to a steady state after a load (SQLite: checkpoint the WAL).
    fn after_load(&self, _conn: &mut dyn Conn) -> Result<(), DbError> {
        Ok(())
    }
}

/// One value of a bulk-loaded row (owned: rows cross threads when loading in parallel).
#[derive(Clone, Debug)]
pub enum RowValue {
    Int(i64),
    Text(String),
    Null,
}

/// How to open a target.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenOptions {
    /// Allow creating the database (SQLite files; prepare).
    pub create: bool,
    /// Send text statements instead of server-side prepared ones (`--ps-mode disable`).
    pub text_statements: bool,
    /// Send the statements of each event in one round trip (`--pipeline`; PostgreSQL only).
    pub pipeline: bool,
    /// The connections' bounds (`--connect-timeout`, `--query-timeout`).
    pub timeouts: super::Timeouts,
}

impl OpenOptions {
    /// A plain target's options (prepared statements, no pipeline, no creating) with these
    /// bounds.
    pub fn bounded(timeouts: super::Timeouts) -> OpenOptions {
        OpenOptions {
            timeouts,
            ..OpenOptions::default()
        }
    }
}

/// Appends `row` as a line of tab-separated values (the default format of PostgreSQL's COPY
/// and MySQL's LOAD DATA). The loader's values are integers and strings of digits and dashes:
/// nothing to escape.
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
            // COPY's and LOAD DATA's NULL (neither backslash-escapes text values elsewhere:
            // generated values never hold tabs, newlines or backslashes).
            RowValue::Null => buf.extend_from_slice(b"\\N"),
        }
    }
    buf.push(b'\n');
}

impl RowValue {
    pub fn as_param(&self) -> Param<'_> {
        match self {
            RowValue::Int(i) => Param::Int(*i),
            RowValue::Text(s) => Param::Text(s),
            RowValue::Null => Param::Null,
        }
    }
}
