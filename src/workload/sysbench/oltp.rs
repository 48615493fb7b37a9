//! The sysbench OLTP family, natively: the statements and per-event counts of sysbench 1.0's
//! oltp_*.lua, select_random_*.lua and bulk_insert.lua scripts, on prepared statements.

use super::super::options::WorkloadOptions;
use super::super::rand::{Dist, Rand};
use super::super::tables::TableSet;
use super::super::tables::{C_GROUPS, PAD_GROUPS};
use super::super::traits::{Client, Workload};
use crate::clock::Stamp;
use crate::db::QueryCounts;
use crate::db::{Conn, Count, DbError, Param, StmtId};

/// How many statements of each kind one event runs, and whether inside BEGIN/COMMIT.
#[derive(Clone, Copy, Debug, Default)]
struct Mix {
    trx: bool,
    point_selects: u32,
    simple_ranges: u32,
    sum_ranges: u32,
    order_ranges: u32,
    distinct_ranges: u32,
    index_updates: u32,
    non_index_updates: u32,
    delete_inserts: u32,
    deletes: u32,
    inserts: u32,
}

impl Mix {
    fn reads(o: &WorkloadOptions) -> Mix {
        let r = |n| if o.families.sysbench.range_selects { n } else { 0 };
        Mix {
            trx: !o.families.sysbench.skip_trx,
            point_selects: o.families.sysbench.point_selects,
            simple_ranges: r(o.families.sysbench.simple_ranges),
            sum_ranges: r(o.families.sysbench.sum_ranges),
            order_ranges: r(o.families.sysbench.order_ranges),
            distinct_ranges: r(o.families.sysbench.distinct_ranges),
            ..Mix::default()
        }
    }

    fn writes(o: &WorkloadOptions) -> Mix {
        Mix {
            trx: !o.families.sysbench.skip_trx,
            index_updates: o.families.sysbench.index_updates,
            non_index_updates: o.families.sysbench.non_index_updates,
            delete_inserts: o.families.sysbench.delete_inserts,
            ..Mix::default()
        }
    }

    fn writes_anything(&self) -> bool {
        self.index_updates
            + self.non_index_updates
            + self.delete_inserts
            + self.deletes
            + self.inserts
            > 0
    }
}

/// Builds one of the sysbench workloads, or None for an unknown name.
pub fn build(name: &'static str, o: &WorkloadOptions) -> Option<Box<dyn Workload>> {
    let single = Mix::default();
    let mix = match name {
        "oltp_point_select" => Mix {
            point_selects: 1,
            ..single
        },
        "oltp_read_only" => Mix::reads(o),
        "oltp_read_write" => {
            let w = Mix::writes(o);
            Mix {
                index_updates: w.index_updates,
                non_index_updates: w.non_index_updates,
                delete_inserts: w.delete_inserts,
                ..Mix::reads(o)
            }
        }
        "oltp_write_only" => Mix::writes(o),
        "oltp_update_index" => Mix {
            index_updates: 1,
            ..single
        },
        "oltp_update_non_index" => Mix {
            non_index_updates: 1,
            ..single
        },
        "oltp_delete" => Mix {
            deletes: 1,
            ..single
        },
        "oltp_insert" => Mix {
            inserts: 1,
            ..single
        },
        "select_random_points" | "select_random_ranges" => {
            return Some(Box::new(KeySelect {
                name,
                opts: o.clone(),
            }));
        }
        "bulk_insert" => return Some(Box::new(BulkInsert { threads: o.threads })),
        _ => return None,
    };
    Some(Box::new(Oltp {
        name,
        mix,
        opts: o.clone(),
    }))
}

struct Oltp {
    name: &'static str,
    mix: Mix,
    opts: WorkloadOptions,
}

/// The statement kinds of an oltp event, each timed apart (as `pgbench -r` times each command).
const STATEMENTS: &[&str] = &[
    "begin",
    "point_select",
    "simple_range",
    "sum_range",
    "order_range",
    "distinct_range",
    "index_update",
    "non_index_update",
    "delete",
    "insert",
    "commit",
];

/// Indexes into [`STATEMENTS`].
mod stmt {
    pub const BEGIN: u16 = 0;
    pub const POINT: u16 = 1;
    pub const SIMPLE: u16 = 2;
    pub const SUM: u16 = 3;
    pub const ORDER: u16 = 4;
    pub const DISTINCT: u16 = 5;
    pub const INDEX_UPDATE: u16 = 6;
    pub const NON_INDEX_UPDATE: u16 = 7;
    pub const DELETE: u16 = 8;
    pub const INSERT: u16 = 9;
    pub const COMMIT: u16 = 10;
}

/// The times of one event's statements. A statement's time runs from the end of the one
/// before it (from the event's start for the first), so it includes the client's work on its
/// parameters: the statements' times add up to the event's. One clock read per statement.
#[derive(Default)]
struct Laps {
    /// When the last statement ended; None when statements are not timed.
    last: Option<Stamp>,
    times: Vec<(u16, u64)>,
}

impl Laps {
    #[inline]
    fn start(&mut self, on: bool, at: Option<Stamp>) {
        self.times.clear();
        self.last = on.then(|| at.unwrap_or_else(crate::clock::now));
    }

    #[inline]
    fn lap(&mut self, kind: u16) {
        if let Some(last) = self.last {
            let now = crate::clock::now();
            self.times.push((kind, now.nanos_since(last)));
            self.last = Some(now);
        }
    }
}

/// One table's prepared statements; None where the mix never runs that statement.
struct TableStmts {
    point: Option<StmtId>,
    simple: Option<StmtId>,
    sum: Option<StmtId>,
    order: Option<StmtId>,
    distinct: Option<StmtId>,
    index_update: Option<StmtId>,
    non_index_update: Option<StmtId>,
    delete: Option<StmtId>,
    insert: Option<StmtId>,
}

impl Workload for Oltp {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        TableSet::sysbench(self.opts.tables)
    }

    fn accepts_empty_tables(&self) -> bool {
        self.mix.inserts > 0
    }

    fn pipelines(&self) -> bool {
        true
    }

    fn statements(&self) -> &'static [&'static str] {
        // Pipelined statements are only queued: their answers arrive together at the end.
        if self.opts.pipeline || !self.opts.statement_times {
            &[]
        } else {
            STATEMENTS
        }
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let m = &self.mix;
        let mut stmts = Vec::with_capacity(self.opts.tables as usize);
        let mut next_ids = Vec::new();
        for t in 1..=self.opts.tables {
            let mut prep = |n: u32, sql: &str| -> Result<Option<StmtId>, DbError> {
                if n == 0 {
                    Ok(None)
                } else {
                    conn.prepare(&sql.replace("{t}", &t.to_string())).map(Some)
                }
            };
            let range = "FROM sbtest{t} WHERE id BETWEEN ? AND ?";
            let explicit_insert =
                m.delete_inserts + u32::from(!self.opts.families.sysbench.auto_inc) * m.inserts;
            stmts.push(TableStmts {
                point: prep(m.point_selects, "SELECT c FROM sbtest{t} WHERE id=?")?,
                simple: prep(m.simple_ranges, &format!("SELECT c {range}"))?,
                sum: prep(m.sum_ranges, &format!("SELECT SUM(k) {range}"))?,
                order: prep(m.order_ranges, &format!("SELECT c {range} ORDER BY c"))?,
                distinct: prep(
                    m.distinct_ranges,
                    &format!("SELECT DISTINCT c {range} ORDER BY c"),
                )?,
                index_update: prep(m.index_updates, "UPDATE sbtest{t} SET k=k+1 WHERE id=?")?,
                non_index_update: prep(m.non_index_updates, "UPDATE sbtest{t} SET c=? WHERE id=?")?,
                delete: prep(
                    m.delete_inserts + m.deletes,
                    "DELETE FROM sbtest{t} WHERE id=?",
                )?,
                insert: if explicit_insert > 0 {
                    prep(
                        1,
                        "INSERT INTO sbtest{t} (id, k, c, pad) VALUES (?, ?, ?, ?)",
                    )?
                } else {
                    prep(
                        m.inserts,
                        "INSERT INTO sbtest{t} (k, c, pad) VALUES (?, ?, ?)",
                    )?
                },
            });
            if m.inserts > 0 && !self.opts.families.sysbench.auto_inc {
                // Client-chosen ids: above the table's current maximum, interleaved by thread.
                let max = conn
                    .query_i64(&format!("SELECT max(id) FROM sbtest{t}"))?
                    .unwrap_or(0);
                next_ids.push(max + 1 + i64::from(thread));
            }
        }
        Ok(Box::new(OltpClient {
            mix: self.mix,
            write: self.mix.writes_anything(),
            stmts,
            next_ids,
            id_step: i64::from(self.opts.threads),
            dist: Dist::new(&self.opts.rand, self.opts.table_size),
            table_size: self.opts.table_size,
            range: self.opts.families.sysbench.range_size,
            c: String::with_capacity(128),
            pad: String::with_capacity(64),
            timed: !self.opts.pipeline && self.opts.statement_times,
            laps: Laps {
                last: None,
                times: Vec::with_capacity(32),
            },
        }))
    }
}

struct OltpClient {
    mix: Mix,
    write: bool,
    stmts: Vec<TableStmts>,
    next_ids: Vec<i64>,
    id_step: i64,
    dist: Dist,
    table_size: u64,
    range: u64,
    c: String,
    pad: String,
    /// Whether statements are timed (not under `--pipeline`).
    timed: bool,
    laps: Laps,
}

impl OltpClient {
    /// Draws the table for the next group of statements, uniformly (as sysbench does).
    #[inline]
    fn table(&self, r: &mut Rand) -> usize {
        r.uniform(0, self.stmts.len() as u64 - 1) as usize
    }

    #[inline]
    fn id(&self, r: &mut Rand) -> i64 {
        r.draw(&self.dist, 1, self.table_size) as i64
    }

    /// The range selects of the mix, out of line: a point select's event runs none of them.
    #[inline(never)]
    fn all_ranges(
        &self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
        laps: &mut Laps,
    ) -> Result<(), DbError> {
        let m = self.mix;
        self.ranges(
            m.simple_ranges,
            (|t| t.simple, stmt::SIMPLE),
            conn,
            r,
            q,
            laps,
        )?;
        self.ranges(m.sum_ranges, (|t| t.sum, stmt::SUM), conn, r, q, laps)?;
        self.ranges(m.order_ranges, (|t| t.order, stmt::ORDER), conn, r, q, laps)?;
        self.ranges(
            m.distinct_ranges,
            (|t| t.distinct, stmt::DISTINCT),
            conn,
            r,
            q,
            laps,
        )
    }

    fn ranges(
        &self,
        count: u32,
        (pick, kind): (fn(&TableStmts) -> Option<StmtId>, u16),
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
        laps: &mut Laps,
    ) -> Result<(), DbError> {
        if count == 0 {
            return Ok(());
        }
        let stmt = pick(&self.stmts[self.table(r)]).expect("prepared when count > 0");
        for _ in 0..count {
            let lo = self.id(r);
            let hi = lo + self.range as i64 - 1;
            conn.counted(stmt, &[Param::Int(lo), Param::Int(hi)], Count::Read, q)?;
            laps.lap(kind);
        }
        Ok(())
    }

    #[inline(never)]
    fn writes(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
        laps: &mut Laps,
    ) -> Result<(), DbError> {
        let m = self.mix;
        if m.index_updates > 0 {
            let s = self.stmts[self.table(r)].index_update.expect("prepared");
            for _ in 0..m.index_updates {
                conn.counted(s, &[Param::Int(self.id(r))], Count::Write, q)?;
                laps.lap(stmt::INDEX_UPDATE);
            }
        }
        if m.non_index_updates > 0 {
            let s = self.stmts[self.table(r)]
                .non_index_update
                .expect("prepared");
            for _ in 0..m.non_index_updates {
                r.fill_digit_groups(C_GROUPS, &mut self.c);
                let id = self.id(r);
                conn.counted(s, &[Param::Text(&self.c), Param::Int(id)], Count::Write, q)?;
                laps.lap(stmt::NON_INDEX_UPDATE);
            }
        }
        if m.delete_inserts > 0 {
            let t = &self.stmts[self.table(r)];
            let (del, ins) = (t.delete.expect("prepared"), t.insert.expect("prepared"));
            for _ in 0..m.delete_inserts {
                let (id, k) = (self.id(r), self.id(r));
                r.fill_digit_groups(C_GROUPS, &mut self.c);
                r.fill_digit_groups(PAD_GROUPS, &mut self.pad);
                conn.counted(del, &[Param::Int(id)], Count::Write, q)?;
                laps.lap(stmt::DELETE);
                let row = [
                    Param::Int(id),
                    Param::Int(k),
                    Param::Text(&self.c),
                    Param::Text(&self.pad),
                ];
                conn.counted(ins, &row, Count::Write, q)?;
                laps.lap(stmt::INSERT);
            }
        }
        if m.deletes > 0 {
            let s = self.stmts[self.table(r)].delete.expect("prepared");
            conn.counted(s, &[Param::Int(self.id(r))], Count::Write, q)?;
            laps.lap(stmt::DELETE);
        }
        if m.inserts > 0 {
            self.insert(conn, r, q)?;
            laps.lap(stmt::INSERT);
        }
        Ok(())
    }

    fn insert(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let t = self.table(r);
        let k = self.id(r);
        r.fill_digit_groups(C_GROUPS, &mut self.c);
        r.fill_digit_groups(PAD_GROUPS, &mut self.pad);
        let s = self.stmts[t].insert.expect("prepared");
        if let Some(next) = self.next_ids.get_mut(t) {
            let id = *next;
            *next += self.id_step;
            let row = [
                Param::Int(id),
                Param::Int(k),
                Param::Text(&self.c),
                Param::Text(&self.pad),
            ];
            conn.counted(s, &row, Count::Write, q)
        } else {
            let row = [Param::Int(k), Param::Text(&self.c), Param::Text(&self.pad)];
            conn.counted(s, &row, Count::Write, q)
        }
    }
}

impl OltpClient {
    fn run_event(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
        laps: &mut Laps,
    ) -> Result<(), DbError> {
        let m = self.mix;
        if m.trx {
            conn.begin(self.write)?;
            q.others += 1;
            laps.lap(stmt::BEGIN);
        }
        if m.point_selects > 0 {
            let s = self.stmts[self.table(r)].point.expect("prepared");
            for _ in 0..m.point_selects {
                conn.counted(s, &[Param::Int(self.id(r))], Count::Read, q)?;
                laps.lap(stmt::POINT);
            }
        }
        if m.simple_ranges + m.sum_ranges + m.order_ranges + m.distinct_ranges > 0 {
            self.all_ranges(conn, r, q, laps)?;
        }
        if self.write {
            self.writes(conn, r, q, laps)?;
        }
        if m.trx {
            conn.commit()?;
            q.others += 1;
            laps.lap(stmt::COMMIT);
        }
        conn.sync(q)
    }
}

impl OltpClient {
    /// Runs an event with its statements timed from `start` (now when None); the end of its
    /// last statement when timed.
    fn timed_run(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
        start: Option<Stamp>,
    ) -> Result<Option<Stamp>, DbError> {
        // The laps leave `self` for the event, so that the statements' helpers can borrow
        // both; a failed attempt's laps are dropped by the next attempt's start.
        let mut laps = std::mem::take(&mut self.laps);
        laps.start(self.timed, start);
        let result = self.run_event(conn, r, q, &mut laps);
        let end = laps.last;
        self.laps = laps;
        result.map(|()| end)
    }
}

impl Client for OltpClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        self.timed_run(conn, r, q, None).map(|_| ())
    }

    fn timed_event(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
        start: Stamp,
    ) -> Result<Option<Stamp>, DbError> {
        self.timed_run(conn, r, q, Some(start))
    }

    fn statement_times(&self) -> &[(u16, u64)] {
        &self.laps.times
    }
}

/// select_random_points and select_random_ranges: lookups by the secondary key `k` of
/// sbtest1, each client in its own segment of the key space so that clients do not overlap.
struct KeySelect {
    name: &'static str,
    opts: WorkloadOptions,
}

impl Workload for KeySelect {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        TableSet::sysbench(1)
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let o = &self.opts;
        let ranges = self.name == "select_random_ranges";
        let (sql, values) = if ranges {
            let n = o.families.sysbench.number_of_ranges.max(1) as usize;
            let pred = vec!["k BETWEEN ? AND ?"; n].join(" OR ");
            (format!("SELECT count(k) FROM sbtest1 WHERE {pred}"), n)
        } else {
            let n = o.families.sysbench.random_points.unwrap_or(10).max(1) as usize;
            (
                format!(
                    "SELECT id, k, c, pad FROM sbtest1 WHERE k IN ({})",
                    vec!["?"; n].join(", ")
                ),
                n,
            )
        };
        let seg_len = o.table_size / u64::from(o.threads.max(1));
        let seg_start = seg_len * u64::from(thread % o.threads.max(1));
        Ok(Box::new(KeySelectClient {
            stmt: conn.prepare(&sql)?,
            values,
            delta: if ranges {
                Some(o.families.sysbench.delta as i64)
            } else {
                None
            },
            seg: (seg_start, seg_start + seg_len),
            dist: Dist::new(&o.rand, seg_len + 1),
            params: Vec::with_capacity(values * 2),
        }))
    }
}

struct KeySelectClient {
    stmt: StmtId,
    values: usize,
    /// Some(width) for ranges `k BETWEEN v AND v+width`, None for IN lists.
    delta: Option<i64>,
    seg: (u64, u64),
    dist: Dist,
    /// Reused every event: integers only, so no borrow ties it to the event.
    params: Vec<Param<'static>>,
}

impl Client for KeySelectClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        r: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        self.params.clear();
        for _ in 0..self.values {
            let v = r.draw(&self.dist, self.seg.0, self.seg.1) as i64;
            self.params.push(Param::Int(v));
            if let Some(d) = self.delta {
                self.params.push(Param::Int(v + d));
            }
        }
        q.read(conn.query(self.stmt, &self.params)?);
        Ok(())
    }
}

/// bulk_insert: client i appends rows (id, k) to table sbtest{i+1}, one row per event, in
/// transactions of [`BULK_ROWS_PER_COMMIT`] rows.
struct BulkInsert {
    threads: u32,
}

/// Rows per transaction of bulk_insert.
const BULK_ROWS_PER_COMMIT: u64 = 1000;

impl Workload for BulkInsert {
    fn name(&self) -> &'static str {
        "bulk_insert"
    }

    fn tables(&self) -> TableSet {
        TableSet::bulk(self.threads)
    }

    fn accepts_empty_tables(&self) -> bool {
        true
    }

    /// A batch's transaction stays open across events.
    fn shares_connections(&self) -> bool {
        false
    }

    fn client(&self, conn: &mut dyn Conn, thread: u32) -> Result<Box<dyn Client>, DbError> {
        let table = format!("sbtest{}", thread + 1);
        let next = conn
            .query_i64(&format!("SELECT max(id) FROM {table}"))?
            .unwrap_or(0)
            + 1;
        let stmt = conn.prepare(&format!("INSERT INTO {table} (id, k) VALUES (?, ?)"))?;
        Ok(Box::new(BulkInsertClient {
            stmt,
            next,
            in_batch: 0,
        }))
    }
}

struct BulkInsertClient {
    stmt: StmtId,
    next: i64,
    in_batch: u64,
}

impl Client for BulkInsertClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        _r: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        if self.in_batch == 0 {
            conn.begin(true)?;
            q.others += 1;
        }
        q.dml(conn.execute(self.stmt, &[Param::Int(self.next), Param::Int(self.next)])?);
        self.next += 1;
        self.in_batch += 1;
        if self.in_batch == BULK_ROWS_PER_COMMIT {
            conn.commit()?;
            q.others += 1;
            self.in_batch = 0;
        }
        Ok(())
    }

    fn rolled_back(&mut self) {
        self.in_batch = 0;
    }

    fn finish(&mut self, conn: &mut dyn Conn, _q: &mut QueryCounts) -> Result<(), DbError> {
        if self.in_batch > 0 {
            self.in_batch = 0;
            conn.commit()?;
        }
        Ok(())
    }
}
