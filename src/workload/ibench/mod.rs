//! The Insert Benchmark (docs/workloads.md section 9), as mdcallag/mytools' iibench.py and
//! iq.sh run it: one table of purchases with an auto-increment primary key and three secondary
//! indexes; inserts of `--rows-per-commit` rows in one statement (autocommit), deletes of as
//! many of the oldest rows after each insert, range queries on one of the secondary indexes
//! (10 rows) and point queries of 10 ids on the primary key, while a background load inserts
//! and deletes (roles). The load (`prepare`) inserts `--table-size` rows 100 per statement
//! without the secondary indexes (l.i0); `ibench_index` creates them (l.x).
//!
//! Deletes follow inserts: a delete client deletes a batch of the oldest rows (`SELECT
//! MIN(transactionid)`, then the range of ids from it) once the inserts have put that many rows
//! beyond the table's size at the start, so that the table keeps its size, as iibench's one
//! delete per insert does: it waits for the inserts before each event, outside its latency (up
//! to 100 ms), and an event that finds no room (no insert came, or another delete client took
//! it) is not counted. The ibench workloads alive in one process at once (a run and its roles)
//! share these counts; several processes inserting into one table are not supported.

mod family;
pub mod options;
mod report;

pub use family::InsertBenchmark;

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

use super::options::WorkloadOptions;
use super::rand::Rand;
use super::shared::Shared;
use super::tables::TableSet;
use super::traits::{Client, Workload};
use crate::db::{Conn, DbError, Dialect, Param, QueryCounts, RowValue, StmtId, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;

/// The table, as the benchmark names it.
pub const TABLE: &str = "purchases_index";
/// The columns an insert gives (the key is the server's).
const COLUMNS: [&str; 6] = [
    "dateandtime",
    "cashregisterid",
    "customerid",
    "productid",
    "price",
    "data",
];
/// The secondary indexes, in the order iibench creates them: (name, columns).
const INDEXES: [(&str, &str); 3] = [
    (
        "purchases_index_marketsegment",
        "productid, customerid, price",
    ),
    (
        "purchases_index_registersegment",
        "cashregisterid, customerid, price",
    ),
    ("purchases_index_pdc", "price, dateandtime, customerid"),
];
const CASH_REGISTERS: u64 = 1000;
const CUSTOMERS: u64 = 100_000;
const PRODUCTS: u64 = 10_000;
/// Prices are whole numbers below this.
const MAX_PRICE: u64 = 500;
/// Rows a query asks for: a range query's LIMIT, a point query's ids.
const ROWS_PER_QUERY: usize = 10;
/// Characters of the `data` column, and how many of them are random (iibench's
/// data_length 10 and data_random_pct 50: three base64 characters after seven 'a').
const DATA_LEN: usize = 10;
const DATA_RANDOM: usize = 3;
/// Rows per statement of the load (iq.sh's l.i0).
const LOAD_ROWS_PER_COMMIT: usize = 100;
/// Point queries between two readings of the largest id, as iibench reads it.
const MAX_EVERY: u32 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Insert,
    Delete,
    Range,
    Point,
    Index,
}

/// Builds `name`, one of the family's workloads.
fn build(name: &'static str, o: &WorkloadOptions) -> Box<dyn Workload> {
    let kind = match name {
        "ibench_insert" => Kind::Insert,
        "ibench_delete" => Kind::Delete,
        "ibench_range" => Kind::Range,
        "ibench_point" => Kind::Point,
        "ibench_index" => Kind::Index,
        _ => unreachable!("{name} is not one of the Insert Benchmark's workloads"),
    };
    Box::new(Ibench {
        name,
        kind,
        opts: o.clone(),
        ids: Mutex::new(None),
    })
}

/// What the clients of the ibench workloads of a step share: rows inserted and deleted since
/// the first client started, and the smallest id the deletes left (point queries pick above it).
struct Ids {
    inserted: AtomicI64,
    deleted: AtomicI64,
    oldest: AtomicI64,
}

/// The counters of the ibench workloads alive in this process (one step's, with its roles).
static SHARED: Shared<Ids> = Shared::new();

/// The longest a delete client waits for room before an event (which then deletes nothing and
/// is not counted), and how often it looks.
const DELETE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);
const DELETE_POLL: std::time::Duration = std::time::Duration::from_millis(1);

struct Ibench {
    name: &'static str,
    kind: Kind,
    opts: WorkloadOptions,
    ids: Mutex<Option<std::sync::Arc<Ids>>>,
}

/// The table's statement, in the target's dialect: iibench's (PostgreSQL's bigserial,
/// MySQL's auto_increment; SQLite's rowid).
fn create_table(d: Dialect) -> String {
    let cols = "dateandtime {time}, cashregisterid INT NOT NULL, customerid INT NOT NULL, \
                productid INT NOT NULL, price INT NOT NULL, data VARCHAR(4000)";
    match d {
        Dialect::Postgres => format!(
            "CREATE TABLE {TABLE} (transactionid BIGSERIAL PRIMARY KEY, {})",
            cols.replace("{time}", "TIMESTAMP WITHOUT TIME ZONE")
        ),
        Dialect::Mysql => format!(
            "CREATE TABLE {TABLE} (transactionid BIGINT NOT NULL AUTO_INCREMENT, {}, \
             PRIMARY KEY (transactionid)) ENGINE=InnoDB",
            cols.replace("{time}", "DATETIME")
        ),
        Dialect::Sqlite | Dialect::Any => format!(
            "CREATE TABLE {TABLE} (transactionid INTEGER PRIMARY KEY, {})",
            cols.replace("{time}", "TEXT")
        ),
    }
}

/// The characters of iibench's random data (base64's).
const BASE64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// One row, stamped `now` (`YYYY-MM-DD HH:MM:SS`): its values in [`COLUMNS`]' order.
fn row(rand: &mut Rand, now: &str, out: &mut Vec<RowValue>) {
    let mut data = "a".repeat(DATA_LEN - DATA_RANDOM);
    for _ in 0..DATA_RANDOM {
        data.push(char::from(BASE64[rand.uniform(0, 63) as usize]));
    }
    out.extend([
        RowValue::Text(now.to_string()),
        RowValue::Int(rand.uniform(0, CASH_REGISTERS - 1) as i64),
        RowValue::Int(rand.uniform(0, CUSTOMERS - 1) as i64),
        RowValue::Int(rand.uniform(0, PRODUCTS - 1) as i64),
        RowValue::Int(rand.uniform(0, MAX_PRICE - 1) as i64),
        RowValue::Text(data),
    ]);
}

/// The time to stamp rows with, to the second, as iibench stamps a batch.
fn now_text() -> String {
    crate::results::utc_datetime(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// The insert of `rows` rows.
fn insert_sql(rows: usize) -> String {
    let one = format!("({})", vec!["?"; COLUMNS.len()].join(", "));
    format!(
        "INSERT INTO {TABLE} ({}) VALUES {}",
        COLUMNS.join(", "),
        vec![one; rows].join(", ")
    )
}

/// A range query of iibench's on one secondary index: (the index, its first column, the
/// values that column takes, the comparison).
const RANGES: [(&str, &str, u64, &str); 3] = [
    (
        "purchases_index_pdc",
        "price, dateandtime, customerid",
        MAX_PRICE,
        ">=",
    ),
    (
        "purchases_index_marketsegment",
        "productid, customerid, price",
        PRODUCTS,
        ">=",
    ),
    (
        "purchases_index_registersegment",
        "cashregisterid, customerid, price",
        CASH_REGISTERS,
        ">",
    ),
];

fn range_sql(d: Dialect, (index, columns, _, op): (&str, &str, u64, &str)) -> String {
    let first = columns.split(',').next().unwrap_or_default();
    // MySQL's is told the index, as iibench tells it.
    let force = if d == Dialect::Mysql {
        format!(" FORCE INDEX ({index})")
    } else {
        String::new()
    };
    format!(
        "SELECT {columns} FROM {TABLE}{force} WHERE {first} {op} ? ORDER BY {columns} \
         LIMIT {ROWS_PER_QUERY}"
    )
}

impl Ibench {
    /// The counts of this workload's clients, begun when the first one starts.
    fn ids(&self, conn: &mut dyn Conn) -> Result<std::sync::Arc<Ids>, DbError> {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = ids.as_ref() {
            return Ok(i.clone());
        }
        let made = SHARED.get_or_make(|| {
            let min = min_or_max(conn, "MIN")?.unwrap_or(1);
            Ok::<_, DbError>(Ids {
                inserted: AtomicI64::new(0),
                deleted: AtomicI64::new(0),
                oldest: AtomicI64::new(min),
            })
        })?;
        *ids = Some(made.clone());
        Ok(made)
    }
}

/// The table's smallest or largest id (`what`: MIN or MAX); None when it is empty.
fn min_or_max(conn: &mut dyn Conn, what: &str) -> Result<Option<i64>, DbError> {
    let rows = conn.query_rows(&format!("SELECT {what}(transactionid) FROM {TABLE}"), 1)?;
    Ok(rows
        .first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|v| v.trim().parse::<i64>().ok()))
}

impl Workload for Ibench {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        // Not an sbtest table: the load, the checks and cleanup below are the workload's own.
        TableSet::bulk(0)
    }

    fn accepts_empty_tables(&self) -> bool {
        matches!(self.kind, Kind::Insert | Kind::Index)
    }

    fn prepare(
        &self,
        target: &dyn Target,
        opts: &WorkloadOptions,
        force: bool,
        stop: &AtomicBool,
    ) -> Result<LoadReport, Error> {
        load(target, opts, force, stop)
    }

    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        let own = [crate::workload::tables::OwnTable {
            name: TABLE.to_string(),
            ddl: vec![create_table(target.dialect())],
            partitioned: false,
        }];
        let dropped = crate::workload::tables::drop_own(
            conn.as_mut(),
            &url,
            "the Insert Benchmark",
            &own,
            &|line| o.notes.progress(line),
        )?;
        Ok(dropped.len() as u32)
    }

    fn tables_missing(&self, conn: &mut dyn Conn) -> Result<bool, DbError> {
        Ok(!conn.table_exists(TABLE)?)
    }

    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        _: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        if !conn.table_exists(TABLE).map_err(|e| Error::db(url, e))? {
            return Err(Error::Usage(format!(
                "{url}: table {TABLE} does not exist; run `dbsweep prepare {}` first",
                self.name
            )));
        }
        Ok(())
    }

    fn client(&self, conn: &mut dyn Conn, _thread: u32) -> Result<Box<dyn Client>, DbError> {
        let ids = self.ids(conn)?;
        let batch = self.opts.families.ibench.rows_per_commit.max(1);
        let dialect = conn.dialect();
        let mut stmts = Vec::new();
        match self.kind {
            Kind::Insert => stmts.push(conn.prepare(&insert_sql(batch as usize))?),
            Kind::Delete => stmts.push(conn.prepare(&format!(
                "DELETE FROM {TABLE} WHERE transactionid >= ? AND transactionid < ?"
            ))?),
            Kind::Range => {
                for r in RANGES {
                    stmts.push(conn.prepare(&range_sql(dialect, r))?);
                }
            }
            Kind::Point => stmts.push(conn.prepare(&format!(
                "SELECT transactionid, productid, data FROM {TABLE} WHERE transactionid IN ({})",
                ["?"; ROWS_PER_QUERY].join(", ")
            ))?),
            Kind::Index => {}
        }
        let top = if self.kind == Kind::Point {
            min_or_max(conn, "MAX")?.unwrap_or(0)
        } else {
            0
        };
        Ok(Box::new(IbenchClient {
            kind: self.kind,
            stmts,
            batch: i64::from(batch),
            ids,
            dialect,
            top,
            since_top: 0,
            values: Vec::new(),
        }))
    }
}

struct IbenchClient {
    kind: Kind,
    stmts: Vec<StmtId>,
    batch: i64,
    ids: std::sync::Arc<Ids>,
    dialect: Dialect,
    /// Point queries: the largest id, read again every [`MAX_EVERY`] queries.
    top: i64,
    since_top: u32,
    values: Vec<RowValue>,
}

impl Client for IbenchClient {
    /// A delete client waits for the inserts to make room before its event, outside its
    /// latency: up to [`DELETE_WAIT`], looking every millisecond.
    fn pause(&mut self, _rand: &mut Rand) -> Option<std::time::Duration> {
        if self.kind == Kind::Delete {
            let waited = Instant::now();
            while !self.has_room() && waited.elapsed() < DELETE_WAIT {
                std::thread::sleep(DELETE_POLL);
            }
        }
        None
    }

    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        match self.kind {
            Kind::Insert => {
                // One statement in autocommit, as iibench's: its own transaction.
                let now = now_text();
                self.values.clear();
                for _ in 0..self.batch {
                    row(rand, &now, &mut self.values);
                }
                let params: Vec<Param> = self.values.iter().map(RowValue::as_param).collect();
                conn.execute(self.stmts[0], &params)?;
                self.ids.inserted.fetch_add(self.batch, Ordering::Relaxed);
                q.writes += 1;
            }
            Kind::Delete => {
                if !self.take_room() {
                    q.nothing_done = true;
                    return Ok(());
                }
                // iibench's delete: the oldest id read, then the batch from it.
                let Some(min) = min_or_max(conn, "MIN")? else {
                    return Ok(());
                };
                conn.execute(
                    self.stmts[0],
                    &[Param::Int(min), Param::Int(min + self.batch)],
                )?;
                self.ids.oldest.store(min + self.batch, Ordering::Relaxed);
                q.reads += 1;
                q.writes += 1;
            }
            Kind::Range => {
                // One of the three secondary indexes, chosen at random as iibench's query
                // thread chooses.
                let which = rand.uniform(0, RANGES.len() as u64 - 1) as usize;
                let from = rand.uniform(0, RANGES[which].2 - 1) as i64;
                q.rows += conn.query(self.stmts[which], &[Param::Int(from)])?;
                q.reads += 1;
            }
            Kind::Point => {
                if self.since_top >= MAX_EVERY {
                    self.top = min_or_max(conn, "MAX")?.unwrap_or(self.top);
                    self.since_top = 0;
                    q.reads += 1;
                }
                self.since_top += 1;
                let lo = self.ids.oldest.load(Ordering::Relaxed);
                let hi = self.top.max(lo);
                let ids: Vec<Param> = (0..ROWS_PER_QUERY)
                    .map(|_| Param::Int(lo + rand.uniform(0, (hi - lo) as u64) as i64))
                    .collect();
                q.rows += conn.query(self.stmts[0], &ids)?;
                q.reads += 1;
            }
            Kind::Index => {
                // l.x: MySQL adds the three in one statement (one pass over the table), the
                // others create them one by one, as iibench does.
                let sqls: Vec<String> = match self.dialect {
                    Dialect::Mysql => vec![format!(
                        "ALTER TABLE {TABLE} {}",
                        INDEXES
                            .iter()
                            .map(|(name, columns)| format!("ADD INDEX {name} ({columns})"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )],
                    _ => INDEXES
                        .iter()
                        .map(|(name, columns)| {
                            format!("CREATE INDEX {name} ON {TABLE} ({columns})")
                        })
                        .collect(),
                };
                for sql in sqls {
                    conn.batch(&sql)?;
                    q.others += 1;
                }
            }
        }
        Ok(())
    }
}

impl IbenchClient {
    /// Whether the inserts have put a batch of rows beyond the table's size at the start.
    fn has_room(&self) -> bool {
        let deleted = self.ids.deleted.load(Ordering::Relaxed);
        self.ids.inserted.load(Ordering::Relaxed) - deleted >= self.batch
    }

    /// Takes a batch of room to delete, if the inserts have made it.
    fn take_room(&self) -> bool {
        loop {
            let deleted = self.ids.deleted.load(Ordering::Relaxed);
            if self.ids.inserted.load(Ordering::Relaxed) - deleted < self.batch {
                return false;
            }
            if self
                .ids
                .deleted
                .compare_exchange(
                    deleted,
                    deleted + self.batch,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                return true;
            }
        }
    }
}

/// l.i0: the table without its secondary indexes, `--table-size` rows in key order. A table of
/// that name already there is refused unless `force` (then dropped first).
fn load(
    target: &dyn Target,
    o: &WorkloadOptions,
    force: bool,
    stop: &AtomicBool,
) -> Result<LoadReport, Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    super::tables::refuse_or_drop(
        conn.as_mut(),
        &url,
        &[TABLE],
        force,
        "dbsweep cleanup ibench_insert",
    )?;
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    o.notes.progress(&format!("Creating table '{TABLE}'..."));
    conn.batch(&create_table(target.dialect()))
        .map_err(|e| Error::db(format!("creating {TABLE}"), e))?;
    o.notes.progress(&format!(
        "Inserting {} records into '{TABLE}'",
        o.table_size
    ));
    // iq.sh's l.i0: multi-row inserts of 100 rows, each its own transaction.
    let mut rand = Rand::for_thread(o.rand.rand_seed, 0);
    let full = conn
        .prepare(&insert_sql(LOAD_ROWS_PER_COMMIT))
        .map_err(|e| Error::db(format!("loading {TABLE}"), e))?;
    let mut rows = 0u64;
    let mut values = Vec::new();
    let bar = super::loader::LoadBar::new(o.notes, o.table_size, 1, "tables");
    while rows < o.table_size && !stop.load(Ordering::Relaxed) {
        let n = (o.table_size - rows).min(LOAD_ROWS_PER_COMMIT as u64) as usize;
        let stmt = if n == LOAD_ROWS_PER_COMMIT {
            full
        } else {
            conn.prepare(&insert_sql(n))
                .map_err(|e| Error::db(format!("loading {TABLE}"), e))?
        };
        let now = now_text();
        values.clear();
        for _ in 0..n {
            row(&mut rand, &now, &mut values);
        }
        let params: Vec<Param> = values.iter().map(RowValue::as_param).collect();
        conn.execute(stmt, &params)
            .map_err(|e| Error::db(format!("loading {TABLE}"), e))?;
        rows += n as u64;
        bar.rows(n as u64);
    }
    bar.job_done();
    drop(bar);
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Run(format!(
            "interrupted during prepare: {TABLE} is partly loaded; run `dbsweep cleanup ibench_insert` before preparing again"
        )));
    }
    target
        .after_load(conn.as_mut())
        .map_err(|e| Error::db(&url, e))?;
    Ok(LoadReport::new(
        1,
        rows,
        start.elapsed().as_secs_f64(),
        crate::metrics::process_cpu_seconds() - cpu_start,
    ))
}
