//! LinkBench's social graph: its three tables, its ten operations in their shares, and the workload that loads and runs them.

use super::Degrees;
use std::sync::atomic::{AtomicBool, AtomicI64};

use super::super::options::WorkloadOptions;
use super::super::rand::Rand;
use super::super::shared::Shared;
use super::super::tables::TableSet;
use super::super::traits::{Client, Workload};
use crate::db::{Conn, DbError, Dialect, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;

use super::dist::{Picks, payload_len};
use super::load::{check, load};

pub const NODES: &str = "nodetable";
pub const LINKS: &str = "linktable";
pub const COUNTS: &str = "counttable";
/// The tables, as LinkBench names them.
pub const TABLES: [&str; 3] = [NODES, LINKS, COUNTS];
pub use super::options::MAX_NODES;

/// The operations and their shares of the mix in hundredths of a percent (LinkBench's
/// defaults), in the order of [`Workload::statements`].
pub(super) const OPS: [(&str, u32); 10] = [
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
pub(super) enum Op {
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
pub(super) const OP_ORDER: [Op; 10] = [
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

/// LinkBench's first link type: its types are 123456789, 123456790 ... (type `t` of dbsweep's
/// 1-based count is written as [`link_type_id`]).
const LINK_TYPE_BASE: i64 = 123_456_789;
/// LinkBench's node type (LinkStore.DEFAULT_NODE_TYPE).
pub(super) const NODE_TYPE: i64 = 2048;

/// The link type `t` (1-based) as LinkBench writes it.
pub(super) fn link_type_id(t: u64) -> i64 {
    LINK_TYPE_BASE + t as i64 - 1
}
/// Rows a list read returns at most.
pub(super) const LIST_LIMIT: u32 = 10_000;
/// The share of list reads that read further back in time: LinkBench's
/// `getlinklist_history = 0.3` is a percentage (its request loop divides it by 100).
pub(super) const HISTORY_SHARE: f64 = 0.3 / 100.0;
/// The most list tails a client keeps for history reads (LinkBench's hard-coded limit).
pub(super) const TAILS_MAX: usize = 2048;
/// Multiget size: geometric with this success probability, from 1 to [`MULTIGET_MAX`].
pub(super) const MULTIGET_P: f64 = 0.382;
pub(super) const MULTIGET_MAX: usize = 128;
/// Zipf shapes of the ids each kind of operation picks (FBWorkload.properties).
const LINK_READ_SHAPE: f64 = 0.8;
const LINK_WRITE_SHAPE: f64 = 0.741;
const NODE_READ_SHAPE: f64 = 0.625;
const NODE_UPDATE_SHAPE: f64 = 0.606;
/// The shares of link reads and writes whose ids follow the out-degree (the rest follow a
/// shuffle of their own): `read_uncorr_blend = 99.5`, `write_uncorr_blend = 95`.
pub(super) const READS_CORRELATED: f64 = 0.005;
pub(super) const WRITES_CORRELATED: f64 = 0.05;
/// ID2Chooser's chances that an operation's id2 is a loaded link: add, update and delete,
/// get (multiget).
pub(super) const P_ADD_EXIST: f64 = 0.05;
pub(super) const P_UPDATE_EXIST: f64 = 0.9;
pub(super) const P_DELETE_EXIST: f64 = 0.9;
pub(super) const P_GET_EXIST: f64 = 0.5;
/// Payload medians (log-normal, sigma 1) and the lengths they stay below, in bytes: links'
/// `MAX_LINK_DATA`, nodes' `MAX_NODE_DATA` (1 MB).
pub(super) const LINK_DATA_MEDIAN: f64 = 8.0;
pub(super) const LINK_DATA_MAX: u64 = 255;
pub(super) const NODE_DATA_MEDIAN: f64 = 128.0;
pub(super) const NODE_DATA_MAX: u64 = 1 << 20;
/// Loaded links' times: from 2^32 ms (about 50 days) before the load up to it, as the
/// original draws them (now - 2^31 + a random 32-bit int).
pub(super) const LINK_TIME_HALF_SPAN: i64 = 1 << 31;
/// Nodes per loading job.
pub(super) const LOAD_CHUNK: u64 = 10_000;

pub(super) const NODE_COLUMNS: [&str; 5] = ["id", "type", "version", "time", "data"];
pub(super) const LINK_COLUMNS: [&str; 7] = [
    "id1",
    "id2",
    "link_type",
    "visibility",
    "data",
    "time",
    "version",
];
pub(super) const COUNT_COLUMNS: [&str; 5] = ["id", "link_type", "count", "time", "version"];

pub fn build(name: &'static str, o: &WorkloadOptions) -> Option<Box<dyn Workload>> {
    let degrees = match name {
        "linkbench" => data_file(o).and_then(|f| Degrees::measured(&f, o.families.linkbench.nodes)),
        "linkbench_synthetic" => Ok(Degrees::synthetic(o.families.linkbench.nodes)),
        _ => return None,
    };
    Some(Box::new(LinkBench {
        name,
        opts: o.clone(),
        degrees: degrees.map(std::sync::Arc::new),
        picks: std::sync::OnceLock::new(),
    }))
}

/// The `Distribution.dat` of `linkbench`'s out-degrees: `--linkbench-data`, else the one of
/// the LinkBench checkout `$LINKBENCH_HOME` names (where the original looks for it).
pub fn data_file(o: &WorkloadOptions) -> Result<std::path::PathBuf, String> {
    if let Some(f) = &o.families.linkbench.linkbench_data {
        return Ok(f.into());
    }
    match std::env::var_os("LINKBENCH_HOME") {
        Some(home) => Ok(std::path::Path::new(&home).join("config/Distribution.dat")),
        None => Err(
            "linkbench: its out-degrees are LinkBench's measured ones, in its checkout's \
             config/Distribution.dat: give --linkbench-data FILE (or --option linkbench_data=FILE, \
             or LINKBENCH_HOME); `linkbench_synthetic` runs without it, a power law in their place"
                .into(),
        ),
    }
}

struct LinkBench {
    name: &'static str,
    opts: WorkloadOptions,
    /// Its out-degrees, or why they could not be read.
    degrees: Result<std::sync::Arc<Degrees>, String>,
    /// How its requests pick ids, made for the first client.
    picks: std::sync::OnceLock<std::sync::Arc<Picks>>,
}

impl LinkBench {
    fn degrees(&self) -> Result<&std::sync::Arc<Degrees>, Error> {
        self.degrees.as_ref().map_err(|e| Error::Usage(e.clone()))
    }
}

/// The next id `add_node` gives, shared by the linkbench clients alive in this process.
pub(super) static NEXT_NODE: Shared<AtomicI64> = Shared::new();

/// The shares of the operations in the mix, in hundredths of a percent.
pub fn shares() -> impl Iterator<Item = (&'static str, u32)> {
    OPS.into_iter()
}

/// A payload of LinkBench's log-normal length for `median`, below `max` bytes.
pub(super) fn payload(rand: &mut Rand, median: f64, max: u64, out: &mut String) {
    out.clear();
    let len = payload_len(rand, median, max);
    out.extend((0..len).map(|_| char::from(b'a' + rand.uniform(0, 25) as u8)));
}

/// Milliseconds since the Unix epoch: LinkBench's times (Java's currentTimeMillis).
pub(super) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The three tables and the links' secondary index, in the target's dialect.
pub(super) fn schema(d: Dialect) -> [String; 4] {
    // The node's data is MEDIUMTEXT in the original's DDL (its payloads reach 1 MB).
    let node_data = match d {
        Dialect::Mysql => "MEDIUMTEXT",
        _ => "TEXT",
    };
    schema_with(d, node_data)
}

/// As [`schema`], with the node's data of type `node_data` (earlier dbsweeps made it
/// VARCHAR(1024): cleanup knows those tables as its own too).
fn schema_with(d: Dialect, node_data: &str) -> [String; 4] {
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
    // LinkBench's README: the links partitioned by id1 in 16 (MySQL's partitioning).
    let parts = if d == Dialect::Mysql {
        " PARTITION BY KEY(id1) PARTITIONS 16"
    } else {
        ""
    };
    [
        format!(
            "CREATE TABLE {NODES} (id {int} NOT NULL PRIMARY KEY, type {int} NOT NULL, \
             version {int} NOT NULL, time {int} NOT NULL, data {node_data} NOT NULL){tail}"
        ),
        format!(
            "CREATE TABLE {LINKS} (id1 {int} NOT NULL, id2 {int} NOT NULL, link_type {int} NOT NULL, \
             visibility {small} NOT NULL, data {text}({LINK_DATA_MAX}) NOT NULL, time {int} NOT NULL, \
             version {int} NOT NULL, PRIMARY KEY (link_type, id1, id2)){tail}{rowid}{parts}"
        ),
        format!(
            "CREATE TABLE {COUNTS} (id {int} NOT NULL, link_type {int} NOT NULL, count {int} NOT NULL, \
             time {int} NOT NULL, version {int} NOT NULL, PRIMARY KEY (id, link_type)){tail}{rowid}"
        ),
        format!(
            "CREATE INDEX id1_type ON {LINKS} (id1, link_type, visibility, time, id2, version, data)"
        ),
    ]
}

/// LinkBench's write of a link: inserted visible, or its visibility set to visible where it is
/// there (MySQL: `ON DUPLICATE KEY UPDATE visibility`, whose affected rows tell inserted, changed
/// and unchanged apart; PostgreSQL: the same upsert, returning whether it inserted, and no row
/// when the visibility was already 1; SQLite: a plain insert, after a read of the visibility).
/// Parameters: id1, id2, link_type, data, time.
pub(super) fn upsert_link_sql(d: Dialect) -> String {
    let insert = format!(
        "INSERT INTO {LINKS} ({}) VALUES (?, ?, ?, 1, ?, ?, 0)",
        LINK_COLUMNS.join(", ")
    );
    match d {
        Dialect::Mysql => format!("{insert} ON DUPLICATE KEY UPDATE visibility = 1"),
        Dialect::Postgres => format!(
            "{insert} ON CONFLICT (link_type, id1, id2) DO UPDATE SET visibility = 1 \
             WHERE {LINKS}.visibility <> 1 RETURNING (xmax = 0)"
        ),
        _ => insert,
    }
}

/// LinkBench's change of a count by `delta` (+1 or -1), the row made when missing (with 1, or
/// 0), never below 0. Parameters: id, link_type, time (and time again on MySQL).
pub(super) fn count_change_sql(d: Dialect, delta: i64) -> String {
    let first = if delta > 0 { 1 } else { 0 };
    let insert = format!(
        "INSERT INTO {COUNTS} (id, link_type, count, time, version) VALUES (?, ?, {first}, ?, 0)"
    );
    match d {
        Dialect::Mysql => {
            let count = if delta > 0 {
                "count + 1".to_string()
            } else {
                "IF(count = 0, 0, count - 1)".to_string()
            };
            format!(
                "{insert} ON DUPLICATE KEY UPDATE count = {count}, version = version + 1, time = ?"
            )
        }
        _ => {
            let count = if delta > 0 {
                format!("{COUNTS}.count + 1")
            } else {
                format!("CASE WHEN {COUNTS}.count = 0 THEN 0 ELSE {COUNTS}.count - 1 END")
            };
            format!(
                "{insert} ON CONFLICT (id, link_type) DO UPDATE SET count = {count}, \
                 version = {COUNTS}.version + 1, time = excluded.time"
            )
        }
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
        load(target, opts, self.degrees()?, force, stop)
    }

    fn verify(&self, target: &dyn Target) -> Result<(), Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        if conn.dialect() != Dialect::Any {
            super::load::check_graph(conn.as_mut(), self.degrees()?, &url)?;
        }
        check(conn.as_mut()).map_err(|e| Error::db(format!("checking {url}"), e))?
    }

    fn checks(&self) -> bool {
        true
    }

    fn cleanup(&self, target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
        let url = target.display_url();
        let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
        let mut ddl = schema(target.dialect()).to_vec();
        ddl.push(schema_with(target.dialect(), "VARCHAR(1024)")[0].clone());
        let own: Vec<_> = TABLES
            .iter()
            .map(|t| crate::workload::tables::OwnTable {
                name: t.to_string(),
                ddl: ddl
                    .iter()
                    .filter(|d| d.starts_with(&format!("CREATE TABLE {t} ")))
                    .cloned()
                    .collect(),
                // MySQL's links are partitioned by id1 (LinkBench's README).
                partitioned: *t == LINKS && target.dialect() == Dialect::Mysql,
            })
            .collect();
        let dropped =
            crate::workload::tables::drop_own(conn.as_mut(), &url, "LinkBench", &own, &|line| {
                o.notes.progress(line)
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

    fn inputs(&self) -> Result<(), Error> {
        self.degrees().map(|_| ())
    }

    fn check_ready(
        &self,
        conn: &mut dyn Conn,
        o: &WorkloadOptions,
        url: &str,
    ) -> Result<(), Error> {
        for table in TABLES {
            if !conn.table_exists(table).map_err(|e| Error::db(url, e))? {
                return Err(Error::Usage(format!(
                    "{url}: table {table} does not exist; run `dbsweep prepare {} --nodes N` first",
                    self.name
                )));
            }
        }
        // The requests pick ids and loaded links by --nodes: on a graph of another size, or
        // one whose load was cut short, they would measure other work. (The mock target holds
        // no graph.)
        let degrees = self.degrees()?;
        if conn.dialect() == Dialect::Any {
            return Ok(());
        }
        let _ = o;
        super::load::check_graph(conn, degrees, url)
    }

    fn statements(&self) -> &'static [&'static str] {
        &OP_NAMES
    }

    fn client(&self, conn: &mut dyn Conn, _thread: u32) -> Result<Box<dyn Client>, DbError> {
        let degrees = self
            .degrees
            .as_ref()
            .map_err(|e| DbError::new(crate::db::ErrorClass::Fatal, "linkbench", e.clone()))?;
        let picks = self.picks.get_or_init(|| {
            std::sync::Arc::new(Picks::new(
                self.opts.families.linkbench.nodes,
                [
                    LINK_READ_SHAPE,
                    LINK_WRITE_SHAPE,
                    NODE_READ_SHAPE,
                    NODE_UPDATE_SHAPE,
                ],
            ))
        });
        super::client::client(
            conn,
            std::sync::Arc::clone(degrees),
            std::sync::Arc::clone(picks),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::client::Tails;
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
    fn the_synthetic_out_degree_is_heavy_tailed_with_the_documented_mean() {
        let n = 200_000;
        let degrees = Degrees::synthetic(n);
        let d: Vec<u64> = (1..=n).map(|id| degrees.total(id)).collect();
        let mean = d.iter().sum::<u64>() as f64 / n as f64;
        let zero = d.iter().filter(|&&x| x == 0).count() as f64 / n as f64;
        let big = d.iter().filter(|&&x| x >= 100).count();
        assert!((3.0..4.6).contains(&mean), "mean {mean}");
        assert!((0.3..0.36).contains(&zero), "share without links {zero}");
        assert!(big > 100, "{big} nodes of 100 links or more");
        assert_eq!(d.iter().max(), Some(&10_000));
    }
}
