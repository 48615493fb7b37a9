//! The extended microbenchmarks of the small-server suite (docs/workloads.md section 3): IN-list
//! point lookups (random or hot, covered or not, by id or by k), covered and uncovered ranges,
//! full scans, IN-list updates, range counts, and the one-hot-row and zipfian updates. All run
//! in autocommit.

use super::super::options::WorkloadOptions;
use super::super::rand::{Dist, Rand, RandOptions, RandType};
use super::super::tables::C_GROUPS;
use super::super::tables::TableSet;
use super::super::traits::{Client, Workload};
use crate::db::QueryCounts;
use crate::db::{Conn, DbError, Param, StmtId};

/// Default IN-list length and covered-range width of these workloads.
const DEFAULT_POINTS: u32 = 100;
/// Rows counted by oltp_read_only_count.
const COUNT_RANGE: i64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    InlistSelect,
    PointsCovered,
    RangeCovered,
    Scan,
    InlistUpdate,
    ReadOnlyCount,
    UpdateOne,
    UpdateZipf,
}

pub fn build(name: &'static str, o: &WorkloadOptions) -> Option<Box<dyn Workload>> {
    let kind = match name {
        "oltp_inlist_select" => Kind::InlistSelect,
        "oltp_points_covered" => Kind::PointsCovered,
        "oltp_range_covered" => Kind::RangeCovered,
        "oltp_scan" => Kind::Scan,
        "oltp_inlist_update" => Kind::InlistUpdate,
        "oltp_read_only_count" => Kind::ReadOnlyCount,
        "update-one" => Kind::UpdateOne,
        "update-zipf" => Kind::UpdateZipf,
        _ => return None,
    };
    Some(Box::new(Micro {
        name,
        kind,
        opts: o.clone(),
    }))
}

struct Micro {
    name: &'static str,
    kind: Kind,
    opts: WorkloadOptions,
}

impl Micro {
    /// The statement of this workload for table `t`, and how many ids or values it binds.
    fn statement(&self, t: u32) -> (String, usize) {
        let o = &self.opts;
        let n = o.families.sysbench.random_points.unwrap_or(DEFAULT_POINTS).max(1) as usize;
        let list = vec!["?"; n].join(", ");
        let key = if o.families.sysbench.on_id { "id" } else { "k" };
        let cols = if o.families.sysbench.covered {
            key.to_string()
        } else {
            format!("{key}, c")
        };
        match self.kind {
            Kind::InlistSelect => (format!("SELECT c FROM sbtest{t} WHERE id IN ({list})"), n),
            Kind::PointsCovered => (
                format!("SELECT {cols} FROM sbtest{t} WHERE {key} IN ({list})"),
                n,
            ),
            Kind::RangeCovered => (
                format!("SELECT {cols} FROM sbtest{t} WHERE {key} BETWEEN ? AND ?"),
                2,
            ),
            Kind::Scan => (format!("SELECT * FROM sbtest{t} WHERE LENGTH(c) < 0"), 0),
            Kind::InlistUpdate => (format!("UPDATE sbtest{t} SET c=? WHERE id IN ({list})"), n),
            Kind::ReadOnlyCount => (
                format!("SELECT count(c) FROM sbtest{t} WHERE id BETWEEN ? AND ?"),
                2,
            ),
            Kind::UpdateOne | Kind::UpdateZipf => {
                (format!("UPDATE sbtest{t} SET c=? WHERE id=?"), 1)
            }
        }
    }
}

impl Workload for Micro {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        TableSet::sysbench(self.opts.tables)
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let o = &self.opts;
        let mut stmts = Vec::with_capacity(o.tables as usize);
        let mut values = 0;
        for t in 1..=o.tables {
            let (sql, n) = self.statement(t);
            stmts.push(conn.prepare(&sql)?);
            values = n;
        }
        let rand = if self.kind == Kind::UpdateZipf {
            RandOptions {
                rand_type: RandType::Zipfian,
                ..o.rand.clone()
            }
        } else {
            o.rand.clone()
        };
        Ok(Box::new(MicroClient {
            kind: self.kind,
            stmts,
            values,
            width: i64::from(o.families.sysbench.random_points.unwrap_or(DEFAULT_POINTS).max(1)),
            hot: o.families.sysbench.hot_points,
            scan_table: (thread % o.tables) as usize,
            dist: Dist::new(&rand, o.table_size),
            table_size: o.table_size,
            c: String::with_capacity(128),
            params: Vec::with_capacity(values + 1),
        }))
    }
}

struct MicroClient {
    kind: Kind,
    stmts: Vec<StmtId>,
    /// Ids or values an IN list binds.
    values: usize,
    /// Rows of a covered range.
    width: i64,
    hot: bool,
    scan_table: usize,
    dist: Dist,
    table_size: u64,
    c: String,
    /// Reused every event (emptied, so no borrow outlives an event).
    params: Vec<Param<'static>>,
}

impl MicroClient {
    fn id(&self, r: &mut Rand) -> i64 {
        r.draw(&self.dist, 1, self.table_size) as i64
    }

    /// Fills `params` with the IN-list ids: random, or the hot ones from table_size/2+1.
    fn fill_ids(&self, r: &mut Rand, params: &mut Vec<Param<'_>>) {
        let hot_start = (self.table_size / 2 + 1) as i64;
        for i in 0..self.values {
            params.push(Param::Int(if self.hot {
                hot_start + i as i64
            } else {
                self.id(r)
            }));
        }
    }
}

/// Gives back the reused parameter buffer, empty, with the lifetime that lets it be stored.
fn recycle(mut v: Vec<Param<'_>>) -> Vec<Param<'static>> {
    v.clear();
    // In-place: the same allocation comes back (both element types have one layout).
    v.into_iter().map(|_| Param::Null).collect()
}

impl Client for MicroClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let table = if self.kind == Kind::Scan {
            self.scan_table
        } else {
            r.uniform(0, self.stmts.len() as u64 - 1) as usize
        };
        let stmt = self.stmts[table];
        let mut params: Vec<Param> = std::mem::take(&mut self.params);
        let result = match self.kind {
            Kind::InlistSelect | Kind::PointsCovered => {
                self.fill_ids(r, &mut params);
                conn.query(stmt, &params).map(|rows| q.read(rows))
            }
            Kind::RangeCovered | Kind::ReadOnlyCount => {
                let width = if self.kind == Kind::ReadOnlyCount {
                    COUNT_RANGE
                } else {
                    self.width
                };
                let lo = self.id(r);
                params.extend([Param::Int(lo), Param::Int(lo + width - 1)]);
                conn.query(stmt, &params).map(|rows| q.read(rows))
            }
            Kind::Scan => conn.query(stmt, &[]).map(|rows| {
                q.read(rows);
                // The scan's work is the rows it examined, not the none it returned.
                q.rows += self.table_size;
            }),
            Kind::InlistUpdate | Kind::UpdateOne | Kind::UpdateZipf => {
                r.fill_digit_groups(C_GROUPS, &mut self.c);
                params.push(Param::Text(&self.c));
                match self.kind {
                    Kind::InlistUpdate => self.fill_ids(r, &mut params),
                    Kind::UpdateOne => params.push(Param::Int(1)),
                    _ => params.push(Param::Int(self.id(r))),
                }
                conn.execute(stmt, &params).map(|changed| q.dml(changed))
            }
        };
        self.params = recycle(params);
        result
    }
}
