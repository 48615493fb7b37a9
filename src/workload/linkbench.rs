//! LinkBench (docs/workloads.md section 10), written from its public description (the SIGMOD
//! 2013 paper and its published configuration): a social graph of nodes, links between them
//! and a count of each node's links per type, and the mix of ten operations its requesters
//! send. Each event is one operation; each operation's time (its transaction whole) is kept
//! apart as a statement kind, so that the results have ops/s and latency per operation.
//!
//! Stand-ins where the original uses measured data (documented in docs/workloads.md):
//! - out-degree: a discrete Pareto, `floor(1.5 * U^(-1/1.4)) - 1`, capped at 10,000: 0 for
//!   about a third of the nodes, a mean of about 3.8 links, a heavy tail (the original's is
//!   an empirical distribution measured at Facebook);
//! - payloads: exponential lengths with the original's medians (8 bytes for links, 128 for
//!   nodes), capped at 255 and 1,024.
//!
//! History reads are LinkBench's: 0.3% of list reads, each reading on from the last link of a
//! list that filled the limit before (a cache of such tails per client, as its requester's).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Instant;

use super::names::static_name;
use super::options::WorkloadOptions;
use super::rand::{Rand, Zipf};
use super::shared::Shared;
use super::tables::TableSet;
use super::traits::{Client, Workload};
use crate::clock::Stamp;
use crate::db::{Conn, DbError, Dialect, Param, QueryCounts, RowValue, StmtId, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;

pub const NODES: &str = "nodetable";
pub const LINKS: &str = "linktable";
pub const COUNTS: &str = "counttable";
/// The tables, as LinkBench names them.
pub const TABLES: [&str; 3] = [NODES, LINKS, COUNTS];
/// The most nodes `--nodes` takes (ids and their products stay within 64 bits).
pub const MAX_NODES: u64 = 1_000_000_000;

/// The operations and their shares of the mix in hundredths of a percent (LinkBench's
/// defaults), in the order of [`Workload::statements`].
const OPS: [(&str, u32); 10] = [
    ("get_link_list", 5071),
    ("get_node", 1293),
    ("add_link", 899),
    ("update_link", 801),
    ("update_node", 737),
    ("count_link", 489),
    ("delete_link", 299),
    ("add_node", 257),
    ("delete_node", 101),
    ("get_link", 53),
];
const OP_NAMES: [&str; 10] = [
    OPS[0].0, OPS[1].0, OPS[2].0, OPS[3].0, OPS[4].0, OPS[5].0, OPS[6].0, OPS[7].0, OPS[8].0,
    OPS[9].0,
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    GetLinkList,
    GetNode,
    AddLink,
    UpdateLink,
    UpdateNode,
    CountLink,
    DeleteLink,
    AddNode,
    DeleteNode,
    GetLink,
}
const OP_ORDER: [Op; 10] = [
    Op::GetLinkList,
    Op::GetNode,
    Op::AddLink,
    Op::UpdateLink,
    Op::UpdateNode,
    Op::CountLink,
    Op::DeleteLink,
    Op::AddNode,
    Op::DeleteNode,
    Op::GetLink,
];

/// Link types: each node's links are of these, alternately.
const LINK_TYPES: u64 = 2;
/// Rows a list read returns at most.
const LIST_LIMIT: u32 = 10_000;
/// The share of list reads that read further back in time: LinkBench's
/// `getlinklist_history = 0.3` is a percentage (its request loop divides it by 100).
const HISTORY_SHARE: f64 = 0.3 / 100.0;
/// The most list tails a client keeps for history reads (LinkBench's hard-coded limit).
const TAILS_MAX: usize = 2048;
/// Multiget size: geometric with this success probability, from 1 to [`MULTIGET_MAX`].
const MULTIGET_P: f64 = 0.382;
const MULTIGET_MAX: usize = 128;
/// Zipf shapes of the ids each kind of operation picks.
const LINK_READ_SHAPE: f64 = 0.8;
const LINK_WRITE_SHAPE: f64 = 0.74;
const NODE_READ_SHAPE: f64 = 0.63;
const NODE_UPDATE_SHAPE: f64 = 0.61;
/// Out-degree: `floor(DEGREE_SCALE * U^(-1/DEGREE_TAIL)) - 1`, at most [`DEGREE_MAX`].
const DEGREE_SCALE: f64 = 1.5;
const DEGREE_TAIL: f64 = 1.4;
const DEGREE_MAX: u64 = 10_000;
/// Payload medians and caps, in bytes.
const LINK_DATA_MEDIAN: f64 = 8.0;
const LINK_DATA_MAX: usize = 255;
const NODE_DATA_MEDIAN: f64 = 128.0;
const NODE_DATA_MAX: usize = 1024;
/// Loaded links' and nodes' times spread over this many seconds before the load.
const TIME_SPREAD: u64 = 30 * 86_400;
/// A prime above [`MAX_NODES`]: rank r of a Zipf draw is node `(r - 1) * PERMUTE mod n + 1`,
/// so that the popular ids are scattered over the table rather than its first pages.
const PERMUTE: u64 = 1_000_000_007;
/// Nodes per loading job.
const LOAD_CHUNK: u64 = 10_000;

const NODE_COLUMNS: [&str; 5] = ["id", "type", "version", "time", "data"];
const LINK_COLUMNS: [&str; 7] = [
    "id1",
    "id2",
    "link_type",
    "visibility",
    "data",
    "time",
    "version",
];
const COUNT_COLUMNS: [&str; 5] = ["id", "link_type", "count", "time", "version"];

pub fn build(name: &str, o: &WorkloadOptions) -> Option<Box<dyn Workload>> {
    (name == "linkbench").then(|| {
        Box::new(LinkBench {
            name: static_name(name),
            opts: o.clone(),
        }) as Box<dyn Workload>
    })
}

struct LinkBench {
    name: &'static str,
    opts: WorkloadOptions,
}

/// The next id `add_node` gives, shared by the linkbench clients alive in this process.
static NEXT_NODE: Shared<AtomicI64> = Shared::new();

/// A 64-bit mix of `x` (splitmix64's finaliser).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The loaded out-degree of node `id` of `nodes`: the same at load and when the requests
/// pick a loaded link.
fn degree(id: u64, nodes: u64) -> u64 {
    // In (0, 1]: 53 bits of the mix.
    let u = ((mix(id) >> 11) + 1) as f64 / (1u64 << 53) as f64;
    let d = (DEGREE_SCALE * u.powf(-1.0 / DEGREE_TAIL)).floor() as u64;
    d.saturating_sub(1)
        .min(DEGREE_MAX)
        .min(nodes.saturating_sub(1))
}

/// The links a load of `nodes` nodes writes (all of them visible).
pub fn loaded_links(nodes: u64) -> u64 {
    (1..=nodes).map(|id| degree(id, nodes)).sum()
}

/// The shares of the operations in the mix, in hundredths of a percent.
pub fn shares() -> impl Iterator<Item = (&'static str, u32)> {
    OPS.into_iter()
}

/// Loaded link `k` of node `id1`: its other end and its type.
fn loaded_link(id1: u64, k: u64, nodes: u64) -> (u64, u64) {
    ((id1 + k) % nodes + 1, 1 + k % LINK_TYPES)
}

/// A payload of exponential length with median `median`, at most `max` bytes.
fn payload(rand: &mut Rand, median: f64, max: usize, out: &mut String) {
    out.clear();
    let len = (-(1.0 - rand.unit()).ln() * median / std::f64::consts::LN_2) as usize;
    out.extend((0..len.min(max)).map(|_| char::from(b'a' + rand.uniform(0, 25) as u8)));
}

/// Seconds since the Unix epoch.
fn now_s() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// The three tables and the links' secondary index, in the target's dialect.
fn schema(d: Dialect) -> [String; 4] {
    let (int, small, text, tail, rowid) = match d {
        Dialect::Postgres => ("BIGINT", "SMALLINT", "VARCHAR", "", ""),
        // latin1: the links' index holds their data; 255 bytes of it, not 1,020.
        Dialect::Mysql => (
            "BIGINT",
            "TINYINT",
            "VARCHAR",
            " ENGINE=InnoDB DEFAULT CHARSET=latin1",
            "",
        ),
        Dialect::Sqlite | Dialect::Any => ("INTEGER", "INTEGER", "VARCHAR", "", " WITHOUT ROWID"),
    };
    [
        format!(
            "CREATE TABLE {NODES} (id {int} NOT NULL PRIMARY KEY, type {int} NOT NULL, \
             version {int} NOT NULL, time {int} NOT NULL, data {text}({NODE_DATA_MAX}) NOT NULL){tail}"
        ),
        format!(
            "CREATE TABLE {LINKS} (id1 {int} NOT NULL, id2 {int} NOT NULL, link_type {int} NOT NULL, \
             visibility {small} NOT NULL, data {text}({LINK_DATA_MAX}) NOT NULL, time {int} NOT NULL, \
             version {int} NOT NULL, PRIMARY KEY (id1, id2, link_type)){tail}{rowid}"
        ),
        format!(
            "CREATE TABLE {COUNTS} (id {int} NOT NULL, link_type {int} NOT NULL, count {int} NOT NULL, \
             time {int} NOT NULL, version {int} NOT NULL, PRIMARY KEY (id, link_type)){tail}{rowid}"
        ),
        format!(
            "CREATE INDEX id1_type ON {LINKS} (id1, link_type, visibility, time, version, data)"
        ),
    ]
}

/// The statement that makes sure the count row of (id, link_type) is there and locks it (every
/// change to a node's links of a type takes this lock first, so that they are serialised and
/// the count stays exact); parameters: id, link_type, time (and time again on MySQL).
fn lock_count_sql(d: Dialect) -> String {
    let insert = format!(
        "INSERT INTO {COUNTS} (id, link_type, count, time, version) VALUES (?, ?, 0, ?, 0)"
    );
    match d {
        Dialect::Mysql => {
            format!("{insert} ON DUPLICATE KEY UPDATE version = version + 1, time = ?")
        }
        _ => format!(
            "{insert} ON CONFLICT (id, link_type) DO UPDATE SET version = {COUNTS}.version + 1, \
             time = excluded.time"
        ),
    }
}

impl Workload for LinkBench {
    fn name(&self) -> &'static str {
        self.name
    }

    fn tables(&self) -> TableSet {
        // Not sbtest tables: the load, the checks and cleanup below are the workload's own.
        TableSet::bulk(0)
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

    fn verify(&self, target: &dyn Target) -> Result<(), Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        check(conn.as_mut()).map_err(|e| Error::db(format!("checking {url}"), e))?
    }

    fn checks(&self) -> bool {
        true
    }

    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        let ddl = schema(target.dialect());
        let own: Vec<_> = TABLES
            .iter()
            .map(|t| crate::workload::tables::OwnTable {
                name: t.to_string(),
                ddl: ddl
                    .iter()
                    .filter(|d| d.starts_with(&format!("CREATE TABLE {t} ")))
                    .cloned()
                    .collect(),
                partitioned: false,
            })
            .collect();
        let dropped =
            crate::workload::tables::drop_own(conn.as_mut(), &url, "LinkBench", &own, &|line| {
                o.style.progress(line)
            })?;
        Ok(dropped.len() as u32)
    }

    fn tables_missing(&self, conn: &mut dyn Conn) -> Result<bool, DbError> {
        for table in TABLES {
            if !conn.table_exists(table)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        _: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        for table in TABLES {
            if !conn.table_exists(table).map_err(|e| Error::db(url, e))? {
                return Err(Error::Usage(format!(
                    "{url}: table {table} does not exist; run `dbsweep prepare linkbench --nodes N` first"
                )));
            }
        }
        Ok(())
    }

    fn statements(&self) -> &'static [&'static str] {
        &OP_NAMES
    }

    fn client(&self, conn: &mut dyn Conn, _thread: u32) -> Result<Box<dyn Client>, DbError> {
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
        let nodes = self.opts.nodes;
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
            add_node: conn.prepare(&format!(
                "INSERT INTO {NODES} ({}) VALUES (?, ?, 0, ?, ?)",
                NODE_COLUMNS.join(", ")
            ))?,
            update_node: conn.prepare(&format!(
                "UPDATE {NODES} SET version = version + 1, time = ?, data = ? WHERE id = ?"
            ))?,
            delete_node: conn.prepare(&format!("DELETE FROM {NODES} WHERE id = ?"))?,
            list: conn.prepare(&format!(
                "SELECT {link_columns} FROM {LINKS} WHERE id1 = ? AND link_type = ? AND \
                 visibility = 1 AND time <= ? ORDER BY time DESC LIMIT {LIST_LIMIT}"
            ))?,
            // LinkBench's history read: the links at or before the last one read, less that
            // one (its offset 1).
            list_tail: conn.prepare(&format!(
                "SELECT {link_columns} FROM {LINKS} WHERE id1 = ? AND link_type = ? AND \
                 visibility = 1 AND time <= ? ORDER BY time DESC LIMIT {LIST_LIMIT} OFFSET 1"
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
            lock_count: conn.prepare(&lock_count_sql(d))?,
            lock_count_if_any: conn.prepare(&format!(
                "UPDATE {COUNTS} SET version = version + 1, time = ? WHERE id = ? AND link_type = ?"
            ))?,
            visibility: conn.prepare(&format!(
                "SELECT visibility FROM {LINKS} WHERE id1 = ? AND id2 = ? AND link_type = ?{lock}"
            ))?,
            insert_link: conn.prepare(&format!(
                "INSERT INTO {LINKS} ({link_columns}) VALUES (?, ?, ?, 1, ?, ?, 0)"
            ))?,
            update_link: conn.prepare(&format!(
                "UPDATE {LINKS} SET visibility = ?, data = ?, time = ?, version = version + 1 \
                 WHERE id1 = ? AND id2 = ? AND link_type = ?"
            ))?,
            add_count: conn.prepare(&format!(
                "UPDATE {COUNTS} SET count = count + ? WHERE id = ? AND link_type = ?"
            ))?,
            multiget: vec![None; MULTIGET_MAX + 1],
        };
        Ok(Box::new(LinkClient {
            s,
            mysql: d == Dialect::Mysql,
            nodes,
            cumulative,
            link_reads: Zipf::new(nodes, LINK_READ_SHAPE),
            link_writes: Zipf::new(nodes, LINK_WRITE_SHAPE),
            node_reads: Zipf::new(nodes, NODE_READ_SHAPE),
            node_updates: Zipf::new(nodes, NODE_UPDATE_SHAPE),
            next_node,
            data: String::new(),
            laps: Vec::with_capacity(1),
            tails: Tails::default(),
        }))
    }
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
    lock_count: StmtId,
    lock_count_if_any: StmtId,
    visibility: StmtId,
    insert_link: StmtId,
    update_link: StmtId,
    add_count: StmtId,
    /// get_link of n ids, prepared when first used.
    multiget: Vec<Option<StmtId>>,
}

struct LinkClient {
    s: Statements,
    mysql: bool,
    nodes: u64,
    /// The operations' cumulative shares, out of 10,000.
    cumulative: [u32; 10],
    link_reads: Zipf,
    link_writes: Zipf,
    node_reads: Zipf,
    node_updates: Zipf,
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
struct Tails {
    entries: Vec<(i64, i64, i64)>,
}

impl Tails {
    fn add(&mut self, tail: (i64, i64, i64), rand: &mut Rand) {
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
    fn choose(&self, rand: &mut Rand) -> Option<(usize, (i64, i64, i64))> {
        if self.entries.is_empty() {
            return None;
        }
        let k = rand.uniform(0, self.entries.len() as u64 - 1) as usize;
        Some((k, self.entries[k]))
    }

    /// After a history read of tail `k`: moved to its new last link when the read filled the
    /// limit again (more history may be there), else gone.
    fn after_read(&mut self, k: usize, filled: Option<i64>) {
        match filled {
            Some(time) => self.entries[k].2 = time,
            None => {
                self.entries.swap_remove(k);
            }
        }
    }
}

impl LinkClient {
    /// A node id by the Zipf draw `z`, scattered over the loaded nodes.
    fn pick(&self, z: &Zipf, rand: &mut Rand) -> u64 {
        (z.sample(rand) - 1) * PERMUTE % self.nodes + 1
    }

    /// One of `id1`'s loaded links: its other end and type (a link that may since have been
    /// hidden, or that does not exist when `id1` has none).
    fn loaded(&self, id1: u64, rand: &mut Rand) -> (u64, u64) {
        let k = rand.uniform(0, degree(id1, self.nodes).max(1) - 1);
        loaded_link(id1, k, self.nodes)
    }

    /// The other end of one of `id1`'s loaded links of type `t` (loaded links alternate types).
    fn loaded_of_type(&self, id1: u64, t: u64, rand: &mut Rand) -> u64 {
        let of_type = degree(id1, self.nodes).saturating_sub(t) / LINK_TYPES;
        let k = t - 1 + LINK_TYPES * rand.uniform(0, of_type);
        loaded_link(id1, k, self.nodes).0
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
                let id1 = self.pick(&self.link_reads, rand) as i64;
                let t = rand.uniform(1, LINK_TYPES) as i64;
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
        let id1 = self.pick(&self.link_reads, rand);
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
        let t = rand.uniform(1, LINK_TYPES);
        let mut params = Vec::with_capacity(n + 2);
        params.extend([Param::Int(id1 as i64), Param::Int(t as i64)]);
        while params.len() < n + 2 {
            params.push(Param::Int(self.loaded_of_type(id1, t, rand) as i64));
        }
        q.rows += conn.query(stmt, &params)?;
        q.reads += 1;
        Ok(())
    }

    /// add_link and update_link: the link (id1, id2, t) made visible with a new payload; the
    /// count of (id1, t) goes up when it was not visible.
    fn put_link(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
        (id1, id2, t): (u64, u64, u64),
    ) -> Result<(), DbError> {
        payload(rand, LINK_DATA_MEDIAN, LINK_DATA_MAX, &mut self.data);
        let now = now_s();
        let (id1, id2, t) = (id1 as i64, id2 as i64, t as i64);
        conn.begin(true)?;
        self.lock_count(conn, q, id1, t, now)?;
        let was = self.visibility(conn, q, id1, id2, t)?;
        if was.is_none() {
            let p = [
                Param::Int(id1),
                Param::Int(id2),
                Param::Int(t),
                Param::Text(&self.data),
                Param::Int(now),
            ];
            q.dml(conn.execute(self.s.insert_link, &p)?);
        } else {
            let p = [
                Param::Int(1),
                Param::Text(&self.data),
                Param::Int(now),
                Param::Int(id1),
                Param::Int(id2),
                Param::Int(t),
            ];
            q.dml(conn.execute(self.s.update_link, &p)?);
        }
        if was != Some(1) {
            let p = [Param::Int(1), Param::Int(id1), Param::Int(t)];
            q.dml(conn.execute(self.s.add_count, &p)?);
        }
        conn.commit()?;
        q.others += 2;
        Ok(())
    }

    /// delete_link: one of id1's loaded links hidden (LinkBench's default delete keeps the
    /// row), its count down by one when it was visible.
    fn delete_link(
        &mut self,
        conn: &mut dyn Conn,
        rand: &mut Rand,
        q: &mut QueryCounts,
    ) -> Result<(), DbError> {
        let id1 = self.pick(&self.link_writes, rand);
        let (id2, t) = self.loaded(id1, rand);
        let (id1, id2, t) = (id1 as i64, id2 as i64, t as i64);
        let now = now_s();
        conn.begin(true)?;
        // No count row: the node has no links of this type to hide.
        let locked = conn.execute(
            self.s.lock_count_if_any,
            &[Param::Int(now), Param::Int(id1), Param::Int(t)],
        )?;
        q.dml(locked);
        if locked > 0 && self.visibility(conn, q, id1, id2, t)? == Some(1) {
            let p = [
                Param::Int(0),
                Param::Text(""),
                Param::Int(now),
                Param::Int(id1),
                Param::Int(id2),
                Param::Int(t),
            ];
            q.dml(conn.execute(self.s.update_link, &p)?);
            let p = [Param::Int(-1), Param::Int(id1), Param::Int(t)];
            q.dml(conn.execute(self.s.add_count, &p)?);
        }
        conn.commit()?;
        q.others += 2;
        Ok(())
    }

    fn lock_count(
        &self,
        conn: &mut dyn Conn,
        q: &mut QueryCounts,
        id1: i64,
        t: i64,
        now: i64,
    ) -> Result<(), DbError> {
        let mut p = vec![Param::Int(id1), Param::Int(t), Param::Int(now)];
        if self.mysql {
            p.push(Param::Int(now));
        }
        q.dml(conn.execute(self.s.lock_count, &p)?);
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
                let id1 = self.pick(&self.link_reads, rand) as i64;
                let t = rand.uniform(1, LINK_TYPES) as i64;
                q.read(conn.query(self.s.count, &[Param::Int(id1), Param::Int(t)])?);
                Ok(())
            }
            Op::AddLink => {
                let id1 = self.pick(&self.link_writes, rand);
                let id2 = rand.uniform(1, self.nodes);
                let t = rand.uniform(1, LINK_TYPES);
                self.put_link(conn, rand, q, (id1, id2, t))
            }
            Op::UpdateLink => {
                let id1 = self.pick(&self.link_writes, rand);
                let (id2, t) = self.loaded(id1, rand);
                self.put_link(conn, rand, q, (id1, id2, t))
            }
            Op::DeleteLink => self.delete_link(conn, rand, q),
            Op::GetNode => {
                let id = self.pick(&self.node_reads, rand) as i64;
                q.read(conn.query(self.s.get_node, &[Param::Int(id)])?);
                Ok(())
            }
            Op::UpdateNode => {
                let id = self.pick(&self.node_updates, rand) as i64;
                payload(rand, NODE_DATA_MEDIAN, NODE_DATA_MAX, &mut self.data);
                let data = std::mem::take(&mut self.data);
                let p = [Param::Int(now_s()), Param::Text(&data), Param::Int(id)];
                let r = self.node_write(conn, q, self.s.update_node, &p);
                self.data = data;
                r
            }
            Op::AddNode => {
                let id = self.next_node.fetch_add(1, Ordering::Relaxed);
                payload(rand, NODE_DATA_MEDIAN, NODE_DATA_MAX, &mut self.data);
                let data = std::mem::take(&mut self.data);
                let t = rand.uniform(1, LINK_TYPES) as i64;
                let p = [
                    Param::Int(id),
                    Param::Int(t),
                    Param::Int(now_s()),
                    Param::Text(&data),
                ];
                let r = self.node_write(conn, q, self.s.add_node, &p);
                self.data = data;
                r
            }
            Op::DeleteNode => {
                let id = rand.uniform(1, self.nodes) as i64;
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

/// The load: `--nodes` nodes, each with its loaded links and the counts of them per type,
/// in parallel jobs of [`LOAD_CHUNK`] nodes; then the links' secondary index.
fn load(
    target: &dyn Target,
    o: &WorkloadOptions,
    force: bool,
    stop: &AtomicBool,
) -> Result<LoadReport, Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    for table in TABLES {
        if conn.table_exists(table).map_err(|e| Error::db(&url, e))? {
            if !force {
                return Err(Error::Usage(format!(
                    "table {table} already exists in {url}; run `dbsweep cleanup linkbench` first \
                     or add --force to drop and reload it"
                )));
            }
            conn.batch(&format!("DROP TABLE {table}"))
                .map_err(|e| Error::db(format!("dropping {table}"), e))?;
        }
    }
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    let [nodes_sql, links_sql, counts_sql, index_sql] = schema(target.dialect());
    for (table, sql) in [(NODES, nodes_sql), (LINKS, links_sql), (COUNTS, counts_sql)] {
        o.style.progress(&format!("Creating table '{table}'..."));
        conn.batch(&sql)
            .map_err(|e| Error::db(format!("creating {table}"), e))?;
    }
    let n = o.nodes;
    o.style
        .progress(&format!("Inserting {n} nodes with their links and counts"));
    let jobs = 1..=n.div_ceil(LOAD_CHUNK) as u32;
    let writers = super::loader::writers(target, o.threads.max(1), &jobs);
    let now = now_s();
    let seed = o.rand.rand_seed;
    let rows = super::loader::run(target, jobs, writers, stop, |c, job| {
        let first = u64::from(job - 1) * LOAD_CHUNK + 1;
        let ids = first..=(first + LOAD_CHUNK - 1).min(n);
        load_chunk(c, ids, n, now, Rand::for_thread(seed, job), stop)
    })?;
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Run(
            "interrupted during prepare: the LinkBench tables are partly loaded; run `dbsweep cleanup linkbench` before preparing again".into(),
        ));
    }
    o.style
        .progress(&format!("Creating the secondary index on '{LINKS}'..."));
    conn.batch(&index_sql)
        .map_err(|e| Error::db(format!("indexing {LINKS}"), e))?;
    target
        .after_load(conn.as_mut())
        .map_err(|e| Error::db(&url, e))?;
    Ok(LoadReport::new(
        3,
        rows,
        start.elapsed().as_secs_f64(),
        crate::metrics::process_cpu_seconds() - cpu_start,
    ))
}

/// The nodes `ids` of `n`, their links and their counts; the rows loaded.
fn load_chunk(
    conn: &mut dyn Conn,
    ids: std::ops::RangeInclusive<u64>,
    n: u64,
    now: i64,
    mut rand: Rand,
    stop: &AtomicBool,
) -> Result<u64, Error> {
    let err = |table: &'static str| move |e| Error::db(format!("loading {table}"), e);
    let mut data = String::new();
    let time = |rand: &mut Rand| RowValue::Int(now - rand.uniform(0, TIME_SPREAD) as i64);
    let mut id = *ids.start();
    let mut rows = conn
        .bulk_load(NODES, &NODE_COLUMNS, &mut |out| {
            if id > *ids.end() || stop.load(Ordering::Relaxed) {
                return false;
            }
            payload(&mut rand, NODE_DATA_MEDIAN, NODE_DATA_MAX, &mut data);
            out.clear();
            out.extend([
                RowValue::Int(id as i64),
                RowValue::Int(rand.uniform(1, LINK_TYPES) as i64),
                RowValue::Int(0),
                time(&mut rand),
                RowValue::Text(data.clone()),
            ]);
            id += 1;
            true
        })
        .map_err(err(NODES))?;
    let (mut id1, mut k) = (*ids.start(), 0);
    rows += conn
        .bulk_load(LINKS, &LINK_COLUMNS, &mut |out| {
            while id1 <= *ids.end() && k >= degree(id1, n) {
                (id1, k) = (id1 + 1, 0);
            }
            if id1 > *ids.end() || stop.load(Ordering::Relaxed) {
                return false;
            }
            let (id2, t) = loaded_link(id1, k, n);
            payload(&mut rand, LINK_DATA_MEDIAN, LINK_DATA_MAX, &mut data);
            out.clear();
            out.extend([
                RowValue::Int(id1 as i64),
                RowValue::Int(id2 as i64),
                RowValue::Int(t as i64),
                RowValue::Int(1),
                RowValue::Text(data.clone()),
                time(&mut rand),
                RowValue::Int(0),
            ]);
            k += 1;
            true
        })
        .map_err(err(LINKS))?;
    // A count row per node and type it has links of.
    let (mut id, mut t) = (*ids.start(), 1);
    rows += conn
        .bulk_load(COUNTS, &COUNT_COLUMNS, &mut |out| {
            loop {
                if id > *ids.end() || stop.load(Ordering::Relaxed) {
                    return false;
                }
                let d = degree(id, n);
                // Links k = t-1, t-1+TYPES, ... are of type t.
                let of_type = if d >= t { (d - t) / LINK_TYPES + 1 } else { 0 };
                let this = (id, t);
                (id, t) = if t == LINK_TYPES {
                    (id + 1, 1)
                } else {
                    (id, t + 1)
                };
                if of_type > 0 {
                    out.clear();
                    out.extend([
                        RowValue::Int(this.0 as i64),
                        RowValue::Int(this.1 as i64),
                        RowValue::Int(of_type as i64),
                        time(&mut rand),
                        RowValue::Int(0),
                    ]);
                    return true;
                }
            }
        })
        .map_err(err(COUNTS))?;
    Ok(rows)
}

/// The check after a load or a run: every (node, type)'s count is its visible links, and no
/// count row counts links that are not there.
fn check(conn: &mut dyn Conn) -> Result<Result<(), Error>, DbError> {
    let wrong = conn
        .query_i64(&format!(
            "SELECT COUNT(*) FROM (SELECT id1, link_type, COUNT(*) AS n FROM {LINKS} \
             WHERE visibility = 1 GROUP BY id1, link_type) l LEFT JOIN {COUNTS} c \
             ON c.id = l.id1 AND c.link_type = l.link_type WHERE c.count IS NULL OR c.count <> l.n"
        ))?
        .unwrap_or(0);
    let phantom = conn
        .query_i64(&format!(
            "SELECT COUNT(*) FROM {COUNTS} c WHERE c.count <> 0 AND NOT EXISTS (SELECT 1 FROM \
             {LINKS} l WHERE l.id1 = c.id AND l.link_type = c.link_type AND l.visibility = 1)"
        ))?
        .unwrap_or(0);
    if wrong == 0 && phantom == 0 {
        return Ok(Ok(()));
    }
    Ok(Err(Error::Run(format!(
        "LinkBench check failed: {wrong} (node, link type) pair(s) whose count in {COUNTS} is not \
         their visible links in {LINKS}, {phantom} count row(s) above zero without a visible link"
    ))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_make_the_whole_mix() {
        assert_eq!(OPS.iter().map(|(_, s)| s).sum::<u32>(), 10_000);
    }

    #[test]
    fn history_reads_are_three_in_a_thousand_list_reads_and_follow_the_tails() {
        // FBWorkload.properties: getlinklist_history = 0.3, a percentage.
        assert!((HISTORY_SHARE - 0.003).abs() < 1e-12);
        let mut rand = Rand::for_thread(7, 0);
        let mut tails = Tails::default();
        assert!(
            tails.choose(&mut rand).is_none(),
            "no history before a list filled"
        );
        // One tail per (id1, type); the cache holds at most 2,048.
        tails.add((1, 1, 500), &mut rand);
        tails.add((1, 1, 400), &mut rand);
        assert_eq!(tails.entries, vec![(1, 1, 500)]);
        for i in 2..3000 {
            tails.add((i, 1, 10), &mut rand);
        }
        assert_eq!(tails.entries.len(), TAILS_MAX);
        // A history read that filled the limit again moves on; one that did not ends the tail.
        let (k, (id1, t, _)) = tails.choose(&mut rand).unwrap();
        tails.after_read(k, Some(3));
        assert_eq!(tails.entries[k], (id1, t, 3));
        tails.after_read(k, None);
        assert_eq!(tails.entries.len(), TAILS_MAX - 1);
        assert!(!tails.entries.contains(&(id1, t, 3)));
    }

    #[test]
    fn out_degree_is_heavy_tailed_with_the_documented_mean() {
        let n = 200_000;
        let d: Vec<u64> = (1..=n).map(|id| degree(id, n)).collect();
        let mean = d.iter().sum::<u64>() as f64 / n as f64;
        let zero = d.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        let big = d.iter().filter(|&&x| x >= 100).count();
        assert!((3.0..4.6).contains(&mean), "mean {mean}");
        assert!((0.25..0.4).contains(&zero), "share without links {zero}");
        assert!(big > 100, "{big} nodes of 100 links or more");
        assert!(d.iter().all(|&x| x <= DEGREE_MAX));
    }

    #[test]
    fn payload_lengths_have_the_medians() {
        let mut r = Rand::for_thread(7, 0);
        let mut s = String::new();
        let mut lens: Vec<usize> = (0..20_001)
            .map(|_| {
                payload(&mut r, LINK_DATA_MEDIAN, LINK_DATA_MAX, &mut s);
                s.len()
            })
            .collect();
        lens.sort_unstable();
        assert!((7..=9).contains(&lens[10_000]), "median {}", lens[10_000]);
        assert!(*lens.last().unwrap() <= LINK_DATA_MAX);
    }

    #[test]
    fn the_permuted_ids_stay_within_the_nodes_and_the_hottest_is_not_the_first() {
        let n = 1000;
        let ids: std::collections::BTreeSet<u64> =
            (1..=n).map(|r| (r - 1) * PERMUTE % n + 1).collect();
        assert_eq!(ids.len() as u64, n, "a permutation");
        assert_eq!(*ids.first().unwrap(), 1);
        assert_eq!(*ids.last().unwrap(), n);
        assert_ne!(PERMUTE % n + 1, 2, "rank 2 is not node 2");
    }
}
