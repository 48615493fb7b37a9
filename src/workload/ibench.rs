//! The Insert Benchmark (docs/workloads.md section 9), written from its public description: one
//! table of purchases with an increasing primary key and three secondary indexes; inserts in
//! key order, deletes from the tail (the oldest rows), and short range and point queries while
//! a background load inserts and deletes (roles). The load (`prepare`) inserts `--table-size`
//! rows in key order without the secondary indexes (l.i0); `ibench_index` creates them (l.x).
//!
//! Ids: an inserting client takes the next ids from a counter that starts after the table's
//! largest when the first client starts; a deleting client takes the oldest ids from one that
//! starts at its smallest, and deletes only rows beyond the table's size at that start, so that
//! deletes follow inserts at their rate and the table keeps its size: a delete client waits for
//! the inserts to make room before each event, outside its latency (up to 100 ms), and an event
//! that finds none (no insert came, or another delete client took it) is not counted. The ibench workloads alive in
//! one process at once (a run and its roles) share these counters; several processes inserting
//! into one table are not supported.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

use super::names::static_name;
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
const COLUMNS: [&str; 7] = [
    "transactionid",
    "dateandtime",
    "cashregisterid",
    "customerid",
    "productid",
    "price",
    "data",
];
/// The secondary indexes: (name, columns).
const INDEXES: [(&str, &str); 3] = [
    ("pi_pdc", "price, dateandtime, customerid"),
    ("pi_pcp", "productid, customerid, price"),
    ("pi_ccp", "cashregisterid, customerid, price"),
];
const CASH_REGISTERS: u64 = 1000;
const CUSTOMERS: u64 = 100_000;
const PRODUCTS: u64 = 10_000;
/// Prices from 0 to this, in cents.
const MAX_PRICE_CENTS: u64 = 50_000;
/// Rows a range query returns.
const RANGE_ROWS: u32 = 10;
/// Bytes of the `data` column.
const DATA_LEN: usize = 10;
/// The first row's time; each row after it one second later (key order is time order).
const FIRST_SECOND: u64 = 1_700_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Insert,
    Delete,
    Range,
    Point,
    Index,
}

pub fn build(name: &str, o: &WorkloadOptions) -> Option<Box<dyn Workload>> {
    let kind = match name {
        "ibench_insert" => Kind::Insert,
        "ibench_delete" => Kind::Delete,
        "ibench_range" => Kind::Range,
        "ibench_point" => Kind::Point,
        "ibench_index" => Kind::Index,
        _ => return None,
    };
    Some(Box::new(Ibench {
        name: static_name(name),
        kind,
        opts: o.clone(),
        ids: Mutex::new(None),
    }))
}

/// The ids the clients of the ibench workloads of a step share: the next to insert, the
/// oldest not yet deleted.
struct Ids {
    next: AtomicI64,
    oldest: AtomicI64,
    /// The largest id when the first client started (point queries pick below it).
    top: i64,
    /// The rows when the first client started: deletes keep the table at this size.
    keep: i64,
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

/// The table's statement, in the target's dialect.
fn create_table(d: Dialect) -> String {
    let (id, time, int, price, data, tail) = match d {
        Dialect::Postgres => (
            "BIGINT",
            "TIMESTAMP",
            "INTEGER",
            "NUMERIC(10,2)",
            "VARCHAR(4000)",
            "",
        ),
        Dialect::Mysql => (
            "BIGINT",
            "DATETIME",
            "INT",
            "DECIMAL(10,2)",
            "VARCHAR(4000)",
            " ENGINE=InnoDB",
        ),
        Dialect::Sqlite | Dialect::Any => ("INTEGER", "TEXT", "INTEGER", "REAL", "TEXT", ""),
    };
    format!(
        "CREATE TABLE {TABLE} (transactionid {id} NOT NULL PRIMARY KEY, dateandtime {time} NOT NULL, \
         cashregisterid {int} NOT NULL, customerid {int} NOT NULL, productid {int} NOT NULL, \
         price {price} NOT NULL, data {data} NOT NULL){tail}"
    )
}

/// One row of id `id`: its values in column order.
fn row(rand: &mut Rand, id: i64, out: &mut Vec<RowValue>) {
    out.clear();
    let at = FIRST_SECOND + id.max(0) as u64;
    let cents = rand.uniform(0, MAX_PRICE_CENTS);
    let data: String = (0..DATA_LEN)
        .map(|_| char::from(b'a' + rand.uniform(0, 25) as u8))
        .collect();
    out.extend([
        RowValue::Int(id),
        RowValue::Text(crate::results::utc_datetime(at)),
        RowValue::Int(rand.uniform(0, CASH_REGISTERS - 1) as i64),
        RowValue::Int(rand.uniform(0, CUSTOMERS - 1) as i64),
        RowValue::Int(rand.uniform(0, PRODUCTS - 1) as i64),
        RowValue::Text(format!("{}.{:02}", cents / 100, cents % 100)),
        RowValue::Text(data),
    ]);
}

impl Ibench {
    /// The ids of this workload's clients, read from the table when the first one starts.
    fn ids(&self, conn: &mut dyn Conn) -> Result<std::sync::Arc<Ids>, DbError> {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = ids.as_ref() {
            return Ok(i.clone());
        }
        let made = SHARED.get_or_make(|| {
            let rows = conn.query_rows(
                &format!("SELECT MIN(transactionid), MAX(transactionid) FROM {TABLE}"),
                2,
            )?;
            let col = |i: usize| {
                rows.first()
                    .and_then(|r| r.get(i).cloned().flatten())
                    .and_then(|v| v.trim().parse::<i64>().ok())
            };
            let (min, max) = (col(0).unwrap_or(1), col(1).unwrap_or(0));
            Ok::<_, DbError>(Ids {
                next: AtomicI64::new(max + 1),
                oldest: AtomicI64::new(min),
                top: max,
                keep: (max - min + 1).max(0),
            })
        })?;
        *ids = Some(made.clone());
        Ok(made)
    }
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
            &|line| o.style.progress(line),
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
        let batch = self.opts.rows_per_commit.max(1);
        let stmt = match self.kind {
            Kind::Insert => {
                let one = format!("({})", vec!["?"; COLUMNS.len()].join(", "));
                let rows = vec![one; batch as usize].join(", ");
                Some(conn.prepare(&format!(
                    "INSERT INTO {TABLE} ({}) VALUES {rows}",
                    COLUMNS.join(", ")
                ))?)
            }
            Kind::Delete => Some(conn.prepare(&format!(
                "DELETE FROM {TABLE} WHERE transactionid >= ? AND transactionid < ?"
            ))?),
            Kind::Range => Some(conn.prepare(&format!(
                "SELECT price, dateandtime, customerid FROM {TABLE} WHERE price >= ? \
                 ORDER BY price, dateandtime, customerid LIMIT {RANGE_ROWS}"
            ))?),
            Kind::Point => Some(conn.prepare(&format!(
                "SELECT {} FROM {TABLE} WHERE transactionid = ?",
                COLUMNS.join(", ")
            ))?),
            Kind::Index => None,
        };
        Ok(Box::new(IbenchClient {
            kind: self.kind,
            stmt,
            batch: i64::from(batch),
            ids,
            dialect: conn.dialect(),
            row: Vec::new(),
            values: Vec::new(),
        }))
    }
}

struct IbenchClient {
    kind: Kind,
    stmt: Option<StmtId>,
    batch: i64,
    ids: std::sync::Arc<Ids>,
    dialect: Dialect,
    row: Vec<RowValue>,
    values: Vec<RowValue>,
}

impl Client for IbenchClient {
    /// A delete client waits for the inserts to make room before its event, outside its
    /// latency: up to [`DELETE_WAIT`], looking every millisecond.
    fn pause(&mut self, _rand: &mut Rand) -> Option<std::time::Duration> {
        if self.kind == Kind::Delete {
            let waited = Instant::now();
            while self.has_room().is_none() && waited.elapsed() < DELETE_WAIT {
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
        match (self.kind, self.stmt) {
            (Kind::Insert, Some(stmt)) => {
                let first = self.ids.next.fetch_add(self.batch, Ordering::Relaxed);
                self.values.clear();
                for id in first..first + self.batch {
                    row(rand, id, &mut self.row);
                    self.values.append(&mut self.row);
                }
                let params: Vec<Param> = self.values.iter().map(RowValue::as_param).collect();
                conn.begin(true)?;
                conn.execute(stmt, &params)?;
                conn.commit()?;
                q.writes += 1;
                q.others += 2;
            }
            (Kind::Delete, Some(stmt)) => {
                let Some(from) = self.room() else {
                    q.nothing_done = true;
                    return Ok(());
                };
                conn.begin(true)?;
                conn.execute(stmt, &[Param::Int(from), Param::Int(from + self.batch)])?;
                conn.commit()?;
                q.writes += 1;
                q.others += 2;
            }
            (Kind::Range, Some(stmt)) => {
                let cents = rand.uniform(0, MAX_PRICE_CENTS);
                let price = format!("{}.{:02}", cents / 100, cents % 100);
                q.rows += conn.query(stmt, &[Param::Text(&price)])?;
                q.reads += 1;
            }
            (Kind::Point, Some(stmt)) => {
                let lo = self.ids.oldest.load(Ordering::Relaxed);
                let hi = self.ids.top.max(lo);
                let id = lo + rand.uniform(0, (hi - lo) as u64) as i64;
                q.rows += conn.query(stmt, &[Param::Int(id)])?;
                q.reads += 1;
            }
            _ => {
                // ibench_index: the three secondary indexes, one statement each (l.x).
                for (name, columns) in INDEXES {
                    let sql = match self.dialect {
                        Dialect::Mysql => {
                            format!("ALTER TABLE {TABLE} ADD INDEX {name} ({columns})")
                        }
                        _ => format!("CREATE INDEX {name} ON {TABLE} ({columns})"),
                    };
                    conn.batch(&sql)?;
                    q.others += 1;
                }
            }
        }
        Ok(())
    }
}

impl IbenchClient {
    /// Whether the inserts have put a batch of rows beyond the table's size, with the ids.
    fn has_room(&self) -> Option<(i64, i64)> {
        let oldest = self.ids.oldest.load(Ordering::Relaxed);
        let next = self.ids.next.load(Ordering::Relaxed);
        (next - (oldest + self.batch) >= self.ids.keep).then_some((oldest, next))
    }

    /// Takes the first of the `batch` oldest ids to delete, if the inserts have made room.
    fn room(&self) -> Option<i64> {
        while let Some((oldest, _)) = self.has_room() {
            if self
                .ids
                .oldest
                .compare_exchange(
                    oldest,
                    oldest + self.batch,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                return Some(oldest);
            }
        }
        None
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
    if conn.table_exists(TABLE).map_err(|e| Error::db(&url, e))? {
        if !force {
            return Err(Error::Usage(format!(
                "table {TABLE} already exists in {url}; run `dbsweep cleanup ibench_insert` first \
                 or add --force to drop and reload it"
            )));
        }
        conn.batch(&format!("DROP TABLE {TABLE}"))
            .map_err(|e| Error::db(format!("dropping {TABLE}"), e))?;
    }
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    o.style.progress(&format!("Creating table '{TABLE}'..."));
    conn.batch(&create_table(target.dialect()))
        .map_err(|e| Error::db(format!("creating {TABLE}"), e))?;
    o.style.progress(&format!(
        "Inserting {} records into '{TABLE}'",
        o.table_size
    ));
    let mut rand = Rand::for_thread(o.rand.rand_seed, 0);
    let mut id = 0i64;
    let total = o.table_size as i64;
    let rows = conn
        .bulk_load(TABLE, &COLUMNS, &mut |out| {
            if id >= total || stop.load(Ordering::Relaxed) {
                return false;
            }
            id += 1;
            row(&mut rand, id, out);
            true
        })
        .map_err(|e| Error::db(format!("loading {TABLE}"), e))?;
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
