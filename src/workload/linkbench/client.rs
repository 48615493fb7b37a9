//! A LinkBench requester: the operations of the mix, each one transaction, with the
//! original's id choice, and the tails of long lists it reads history from.

use std::sync::atomic::{AtomicI64, Ordering};

use super::dist::{Degrees, LINK_TYPES, Picks, id2_for, id2s_for};
use super::{
    COUNTS, HISTORY_SHARE, LINK_COLUMNS, LINK_DATA_MAX, LINK_DATA_MEDIAN, LINKS, LIST_LIMIT,
    MULTIGET_MAX, MULTIGET_P, NEXT_NODE, NODE_COLUMNS, NODE_DATA_MAX, NODE_DATA_MEDIAN, NODE_TYPE,
    NODES, OP_ORDER, OPS, Op, P_ADD_EXIST, P_DELETE_EXIST, P_GET_EXIST, P_UPDATE_EXIST,
    READS_CORRELATED, TAILS_MAX, WRITES_CORRELATED, count_change_sql, link_type_id, now_ms,
    payload, upsert_link_sql,
};
use crate::clock::Stamp;
use crate::db::{Conn, DbError, Dialect, Param, QueryCounts, StmtId};
use crate::workload::rand::Rand;
use crate::workload::traits::Client;

/// A client of a LinkBench of `nodes` nodes on `conn`: its statements prepared, its
/// distributions made.
pub(super) fn client(
    conn: &mut dyn Conn,
    degrees: std::sync::Arc<Degrees>,
    picks: std::sync::Arc<Picks>,
) -> Result<Box<dyn Client>, DbError> {
    let next_node = NEXT_NODE.get_or_make(|| {
        let max = conn.query_i64(&format!("SELECT MAX(id) FROM {NODES}"))?;
        Ok::<_, DbError>(AtomicI64::new(max.unwrap_or(0) + 1))
    })?;
    let d = conn.dialect();
    let lock = if d == Dialect::Sqlite {
        ""
    } else {
        " FOR UPDATE"
    };
    let link_columns = LINK_COLUMNS.join(", ");
    // LinkBench's MySQL store tells MySQL the index of its list reads.
    let force = if d == Dialect::Mysql {
        " FORCE INDEX (id1_type)"
    } else {
        ""
    };

    let mut cumulative = [0u32; 10];
    let mut sum = 0;
    for (c, (_, share)) in cumulative.iter_mut().zip(OPS) {
        sum += share;
        *c = sum;
    }
    let s = Statements {
        get_node: conn.prepare(&format!(
            "SELECT {} FROM {NODES} WHERE id = ?",
            NODE_COLUMNS.join(", ")
        ))?,
        // LinkBench writes a new node's version as 1, an updated one's as 2.
        add_node: conn.prepare(&format!(
            "INSERT INTO {NODES} ({}) VALUES (?, ?, 1, ?, ?)",
            NODE_COLUMNS.join(", ")
        ))?,
        update_node: conn.prepare(&format!(
            "UPDATE {NODES} SET version = 2, time = ?, data = ? WHERE id = ? AND type = ?"
        ))?,
        delete_node: conn.prepare(&format!("DELETE FROM {NODES} WHERE id = ?"))?,
        list: conn.prepare(&format!(
            "SELECT {link_columns} FROM {LINKS}{force} WHERE id1 = ? AND link_type = ? AND \
             time >= 0 AND time <= ? AND visibility = 1 ORDER BY time DESC LIMIT {LIST_LIMIT}"
        ))?,
        // LinkBench's history read: the links at or before the last one read, less that
        // one (its offset 1).
        list_tail: conn.prepare(&format!(
            "SELECT {link_columns} FROM {LINKS}{force} WHERE id1 = ? AND link_type = ? AND \
             time >= 0 AND time <= ? AND visibility = 1 ORDER BY time DESC LIMIT {LIST_LIMIT} \
             OFFSET 1"
        ))?,
        last_of_list: conn.prepare(&format!(
            "SELECT time FROM {LINKS} WHERE id1 = ? AND link_type = ? AND visibility = 1 \
             AND time <= ? ORDER BY time DESC LIMIT 1 OFFSET {}",
            LIST_LIMIT - 1
        ))?,
        last_of_tail: conn.prepare(&format!(
            "SELECT time FROM {LINKS} WHERE id1 = ? AND link_type = ? AND visibility = 1 \
             AND time <= ? ORDER BY time DESC LIMIT 1 OFFSET {LIST_LIMIT}"
        ))?,
        count: conn.prepare(&format!(
            "SELECT count FROM {COUNTS} WHERE id = ? AND link_type = ?"
        ))?,
        visibility: conn.prepare(&format!(
            "SELECT visibility FROM {LINKS} WHERE id1 = ? AND id2 = ? AND link_type = ?{lock}"
        ))?,
        upsert_link: conn.prepare(&upsert_link_sql(d))?,
        count_up: conn.prepare(&count_change_sql(d, 1))?,
        count_down: conn.prepare(&count_change_sql(d, -1))?,
        update_data: conn.prepare(&format!(
            "UPDATE {LINKS} SET visibility = 1, data = ?, time = ?, version = 0 \
             WHERE id1 = ? AND id2 = ? AND link_type = ?"
        ))?,
        hide: conn.prepare(&format!(
            "UPDATE {LINKS} SET visibility = 0 WHERE id1 = ? AND id2 = ? AND link_type = ?"
        ))?,
        multiget: vec![None; MULTIGET_MAX + 1],
    };
    Ok(Box::new(LinkClient {
        s,
        dialect: d,
        cumulative,
        degrees,
        picks,
        id2s: Vec::with_capacity(MULTIGET_MAX),
        next_node,
        data: String::new(),
        laps: Vec::with_capacity(1),
        tails: Tails::default(),
    }))
}

/// A client's prepared statements.
struct Statements {
    get_node: StmtId,
    add_node: StmtId,
    update_node: StmtId,
    delete_node: StmtId,
    list: StmtId,
    list_tail: StmtId,
    last_of_list: StmtId,
    last_of_tail: StmtId,
    count: StmtId,
    visibility: StmtId,
    upsert_link: StmtId,
    count_up: StmtId,
    count_down: StmtId,
    update_data: StmtId,
    hide: StmtId,
    /// get_link of n ids, prepared when first used.
    multiget: Vec<Option<StmtId>>,
}

struct LinkClient {
    s: Statements,
    dialect: Dialect,
    /// The operations' cumulative shares, out of 10,000.
    cumulative: [u32; 10],
    degrees: std::sync::Arc<Degrees>,
    picks: std::sync::Arc<Picks>,
    /// A multiget's id2s.
    id2s: Vec<u64>,
    next_node: std::sync::Arc<AtomicI64>,
    data: String,
    /// The operation that ran and its time, as the runner reads statement times.
    laps: Vec<(u16, u64)>,
    /// Lists that filled the limit, for history reads.
    tails: Tails,
}

/// A client's cache of list tails, as LinkBench's requester keeps it: (id1, link type, time of
/// the last link read) of each list read that returned the limit's rows, at most
/// [`TAILS_MAX`], one per (id1, type); when full, a new tail replaces one chosen at random.
#[derive(Default)]
pub(super) struct Tails {
    pub(super) entries: Vec<(i64, i64, i64)>,
}

impl Tails {
    pub(super) fn add(&mut self, tail: (i64, i64, i64), rand: &mut Rand) {
        if self.entries.iter().any(|e| (e.0, e.1) == (tail.0, tail.1)) {
            return;
        }
        if self.entries.len() < TAILS_MAX {
            self.entries.push(tail);
        } else {
            let k = rand.uniform(0, self.entries.len() as u64 - 1) as usize;
            self.entries[k] = tail;
        }
    }

    /// One tail chosen at random, and its place.
    pub(super) fn choose(&self, rand: &mut Rand) -> Option<(usize, (i64, i64, i64))> {
        if self.entries.is_empty() {
            return None;
        }
        let k = rand.uniform(0, self.entries.len() as u64 - 1) as usize;
        Some((k, self.entries[k]))
    }

    /// After a history read of tail `k`: moved to its new last link when the read filled the
    /// limit again (more history may be there), else gone.
    pub(super) fn after_read(&mut self, k: usize, filled: Option<i64>) {
        match filled {
            Some(time) => self.entries[k].2 = time,
            None => {
                self.entries.swap_remove(k);
            }
        }
    }
}

impl LinkClient {
    /// A link read's id1 (get_link_list, count_link, get_link).
    fn link_read(&self, rand: &mut Rand) -> u64 {
        let p = &self.picks;
        p.link_id(&p.link_reads, READS_CORRELATED, &self.degrees, rand)
    }

    /// A link write's id1 (add_link, update_link, delete_link).
    fn link_write(&self, rand: &mut Rand) -> u64 {
        let p = &self.picks;
        p.link_id(&p.link_writes, WRITES_CORRELATED, &self.degrees, rand)
    }

    fn op(&self, rand: &mut Rand) -> usize {
        let x = rand.uniform(1, 10_000) as u32;
        self.cumulative.iter().position(|&c| x <= c).unwrap_or(0)
    }

    /// The links of (id1, t) up to `before`, newest first.
    fn list(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        // A history read, as LinkBench's: 0.3% of list reads, when a list filled the limit
        // before; it reads on from that list's last link.
        let tail = if rand.unit() < HISTORY_SHARE {
            self.tails.choose(rand)
        } else {
            None
        };
        let (stmt, id1, t, before) = match tail {
            Some((_, (id1, t, time))) => (self.s.list_tail, id1, t, time),
            None => {
                let id1 = self.link_read(rand) as i64;
                let t = link_type_id(rand.uniform(1, LINK_TYPES));
                (self.s.list, id1, t, i64::MAX)
            }
        };
        let params = [Param::Int(id1), Param::Int(t), Param::Int(before)];
        let rows = conn.query(stmt, &params)?;
        q.rows += rows;
        q.reads += 1;
        // A list that filled the limit: its last link's time, for a history read later. The
        // original takes it from the rows it fetched; here a statement asks for it, only for
        // such a list (rare: 10,000 visible links of one type), so that every other list read
        // costs what it costs the original.
        let filled = if rows >= u64::from(LIST_LIMIT) {
            let last = if tail.is_some() {
                self.s.last_of_tail
            } else {
                self.s.last_of_list
            };
            let mut time = None;
            q.read(conn.query_each(last, &params, &mut |r| {
                time = r
                    .get(0)
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|v| v.trim().parse::<i64>().ok());
            })?);
            time
        } else {
            None
        };
        match (tail, filled) {
            (Some((k, _)), filled) => self.tails.after_read(k, filled),
            (None, Some(time)) => self.tails.add((id1, t, time), rand),
            (None, None) => {}
        }
        Ok(())
    }

    /// get_link: the links of (id1, t) to 1 to 128 of id1's loaded ends, in one statement.
    fn multiget(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let id1 = self.link_read(rand);
        let t = rand.uniform(1, LINK_TYPES);
        let n = (1.0 + ((1.0 - rand.unit()).ln() / (1.0 - MULTIGET_P).ln()).floor())
            .clamp(1.0, MULTIGET_MAX as f64) as usize;
        let stmt = match self.s.multiget[n] {
            Some(s) => s,
            None => {
                let marks = vec!["?"; n].join(", ");
                let s = conn.prepare(&format!(
                    "SELECT {} FROM {LINKS} WHERE id1 = ? AND link_type = ? AND id2 IN ({marks})",
                    LINK_COLUMNS.join(", ")
                ))?;
                self.s.multiget[n] = Some(s);
                s
            }
        };
        let mut id2s = std::mem::take(&mut self.id2s);
        id2s_for(&self.degrees, (id1, t), n, P_GET_EXIST, rand, &mut id2s);
        let mut params = Vec::with_capacity(n + 2);
        params.extend([Param::Int(id1 as i64), Param::Int(link_type_id(t))]);
        params.extend(id2s.iter().map(|&id2| Param::Int(id2 as i64)));
        self.id2s = id2s;
        q.rows += conn.query(stmt, &params)?;
        q.reads += 1;
        Ok(())
    }

    /// add_link and update_link, as LinkBench's MySQL store writes a link: the link inserted,
    /// or found and made visible (`ON DUPLICATE KEY UPDATE visibility`, which locks its row);
    /// then the count of (id1, t) up by one when it was inserted or its visibility changed; then
    /// the found link's payload, time and version; one transaction.
    fn put_link(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
        (id1, id2, t): (u64, u64, u64),
    ) -> Result<(), DbError> {
        payload(rand, LINK_DATA_MEDIAN, LINK_DATA_MAX, &mut self.data);
        let now = now_ms();
        let (id1, id2, t) = (id1 as i64, id2 as i64, link_type_id(t));
        let key = [Param::Int(id1), Param::Int(id2), Param::Int(t)];
        conn.begin(true)?;
        let link = [
            Param::Int(id1),
            Param::Int(id2),
            Param::Int(t),
            Param::Text(&self.data),
            Param::Int(now),
        ];
        // (inserted, visibility changed): MySQL's affected rows say 1, 2 or 0 (found and
        // unchanged); PostgreSQL's upsert returns a row when it inserted (xmax 0) or changed
        // the visibility; SQLite (one writer at a time) reads the visibility first.
        let (inserted, changed) = match self.dialect {
            Dialect::Mysql => {
                let n = conn.execute(self.s.upsert_link, &link)?;
                q.dml(n);
                (n == 1, n == 2)
            }
            Dialect::Postgres => {
                let mut fresh = None;
                let rows = conn.query_each(self.s.upsert_link, &link, &mut |r| {
                    fresh = r.get(0).map(|v| v == b"t");
                })?;
                q.dml(rows);
                (fresh == Some(true), fresh == Some(false))
            }
            _ => match self.visibility(conn, q, id1, id2, t)? {
                None => {
                    q.dml(conn.execute(self.s.upsert_link, &link)?);
                    (true, false)
                }
                Some(v) => (false, v != 1),
            },
        };
        if inserted || changed {
            self.change_count(conn, q, self.s.count_up, (id1, t, now))?;
        }
        if !inserted {
            let p = [
                Param::Text(&self.data),
                Param::Int(now),
                key[0],
                key[1],
                key[2],
            ];
            q.dml(conn.execute(self.s.update_data, &p)?);
        }
        conn.commit()?;
        q.others += 2;
        Ok(())
    }

    /// delete_link, as LinkBench's MySQL store hides a link: its visibility read with a lock
    /// (`FOR UPDATE`); when visible, it is hidden (LinkBench's default delete keeps the row)
    /// and the count of (id1, t) goes down by one, never below 0 (`IF(count = 0, 0,
    /// count - 1)`); one transaction.
    fn delete_link(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let id1 = self.link_write(rand);
        let t = rand.uniform(1, LINK_TYPES);
        let id2 = id2_for(&self.degrees, (id1, t), P_DELETE_EXIST, rand);
        let (id1, id2, t) = (id1 as i64, id2 as i64, link_type_id(t));
        let now = now_ms();
        conn.begin(true)?;
        if self.visibility(conn, q, id1, id2, t)? == Some(1) {
            let key = [Param::Int(id1), Param::Int(id2), Param::Int(t)];
            q.dml(conn.execute(self.s.hide, &key)?);
            self.change_count(conn, q, self.s.count_down, (id1, t, now))?;
        }
        conn.commit()?;
        q.others += 2;
        Ok(())
    }

    /// A count's change by `stmt` ([`count_change_sql`]): MySQL's statement takes the time
    /// twice (its insert and its update), the others once.
    fn change_count(
        &self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        stmt: StmtId,
        (id1, t, now): (i64, i64, i64),
    ) -> Result<(), DbError> {
        let p = [
            Param::Int(id1),
            Param::Int(t),
            Param::Int(now),
            Param::Int(now),
        ];
        let n = if self.dialect == Dialect::Mysql { 4 } else { 3 };
        q.dml(conn.execute(stmt, &p[..n])?);
        Ok(())
    }

    /// The visibility of link (id1, id2, t), None when there is no such row.
    fn visibility(
        &self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        id1: i64,
        id2: i64,
        t: i64,
    ) -> Result<Option<i64>, DbError> {
        let mut was = None;
        let rows = conn.query_each(
            self.s.visibility,
            &[Param::Int(id1), Param::Int(id2), Param::Int(t)],
            &mut |r| {
                was = r
                    .get(0)
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .and_then(|v| v.trim().parse::<i64>().ok());
            },
        )?;
        q.read(rows);
        Ok(was)
    }

    fn node_write(
        &mut self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        stmt: StmtId,
        params: &[Param],
    ) -> Result<(), DbError> {
        conn.begin(true)?;
        q.dml(conn.execute(stmt, params)?);
        conn.commit()?;
        q.others += 2;
        Ok(())
    }

    fn run(
        &mut self,
        op: Op,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        match op {
            Op::GetLinkList => self.list(conn, rand, q),
            Op::GetLink => self.multiget(conn, rand, q),
            Op::CountLink => {
                let id1 = self.link_read(rand) as i64;
                let t = link_type_id(rand.uniform(1, LINK_TYPES));
                q.read(conn.query(self.s.count, &[Param::Int(id1), Param::Int(t)])?);
                Ok(())
            }
            Op::AddLink | Op::UpdateLink => {
                let id1 = self.link_write(rand);
                let t = rand.uniform(1, LINK_TYPES);
                let p = if op == Op::AddLink {
                    P_ADD_EXIST
                } else {
                    P_UPDATE_EXIST
                };
                let id2 = id2_for(&self.degrees, (id1, t), p, rand);
                self.put_link(conn, rand, q, (id1, id2, t))
            }
            Op::DeleteLink => self.delete_link(conn, rand, q),
            Op::GetNode => {
                let id = self.picks.node_id(&self.picks.node_reads, rand) as i64;
                q.read(conn.query(self.s.get_node, &[Param::Int(id)])?);
                Ok(())
            }
            Op::UpdateNode => {
                let id = self.picks.node_id(&self.picks.node_updates, rand) as i64;
                payload(rand, NODE_DATA_MEDIAN, NODE_DATA_MAX, &mut self.data);
                let data = std::mem::take(&mut self.data);
                let p = [
                    Param::Int(now_ms() / 1000),
                    Param::Text(&data),
                    Param::Int(id),
                    Param::Int(NODE_TYPE),
                ];
                let r = self.node_write(conn, q, self.s.update_node, &p);
                self.data = data;
                r
            }
            Op::AddNode => {
                let id = self.next_node.fetch_add(1, Ordering::Relaxed);
                payload(rand, NODE_DATA_MEDIAN, NODE_DATA_MAX, &mut self.data);
                let data = std::mem::take(&mut self.data);
                let p = [
                    Param::Int(id),
                    Param::Int(NODE_TYPE),
                    Param::Int(now_ms() / 1000),
                    Param::Text(&data),
                ];
                let r = self.node_write(conn, q, self.s.add_node, &p);
                self.data = data;
                r
            }
            Op::DeleteNode => {
                let id = rand.uniform(1, self.degrees.nodes()) as i64;
                self.node_write(conn, q, self.s.delete_node, &[Param::Int(id)])
            }
        }
    }
}

impl Client for LinkClient {
    fn event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        self.timed_event(conn, rand, q, crate::clock::now())
            .map(|_| ())
    }

    fn timed_event(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
        start: Stamp,
    ) -> Result<Option<Stamp>, DbError> {
        self.laps.clear();
        let i = self.op(rand);
        self.run(OP_ORDER[i], conn, rand, q)?;
        let end = crate::clock::now();
        self.laps.push((i as u16, end.nanos_since(start)));
        Ok(Some(end))
    }

    fn statement_times(&self) -> &[(u16, u64)] {
        &self.laps
    }
}
