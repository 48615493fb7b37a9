//! LinkBench's load (nodes, their links and counts, in parallel jobs, then the secondary
//! index) and the check that every count is its visible links.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::dist::{Degrees, LINK_TYPES};
use super::{
    COUNT_COLUMNS, COUNTS, LINK_COLUMNS, LINK_DATA_MAX, LINK_DATA_MEDIAN, LINK_TIME_HALF_SPAN,
    LINKS, LOAD_CHUNK, NODE_COLUMNS, NODE_DATA_MAX, NODE_DATA_MEDIAN, NODE_TYPE, NODES, TABLES,
    link_type_id, now_ms, payload, schema,
};
use crate::db::{Conn, DbError, Dialect, RowValue, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;
use crate::workload::loader::LoadBar;
use crate::workload::options::WorkloadOptions;
use crate::workload::rand::Rand;

/// The load: `--nodes` nodes, each with its loaded links and the counts of them per type,
/// in parallel jobs of [`LOAD_CHUNK`] nodes; then the links' secondary index.
pub(super) fn load(
    target: &dyn Target,
    o: &WorkloadOptions,
    degrees: &Degrees,
    force: bool,
    stop: &AtomicBool,
) -> Result<LoadReport, Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    crate::workload::tables::refuse_or_drop(
        conn.as_mut(),
        &url,
        &TABLES,
        force,
        "dbsweep cleanup linkbench",
    )?;
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    let [nodes_sql, links_sql, counts_sql, index_sql] = schema(target.dialect());
    let mut after = Vec::new();
    for (table, sql) in [(NODES, nodes_sql), (LINKS, links_sql), (COUNTS, counts_sql)] {
        o.notes.progress(&format!("Creating table '{table}'..."));
        let (sql, key) = crate::workload::loader::key_after_rows(target.dialect(), table, &sql);
        conn.batch(&sql)
            .map_err(|e| Error::db(format!("creating {table}"), e))?;
        let mut sqls: Vec<String> = key.into_iter().collect();
        if table == LINKS {
            sqls.push(index_sql.clone());
        }
        after.push((table.to_string(), sqls));
    }
    let n = o.families.linkbench.nodes;
    o.notes
        .progress(&format!("Inserting {n} nodes with their links and counts"));
    let jobs = 1..=n.div_ceil(LOAD_CHUNK) as u32;
    let writers = crate::workload::loader::writers(target, o.threads.max(1), &jobs);
    let now = now_ms();
    let seed = o.rand.rand_seed;
    let chunks = *jobs.end();
    let bar = LoadBar::new(o.notes, degrees.expected_rows(), chunks, "chunks of nodes");
    let rows = crate::workload::loader::run(target, jobs, writers, stop, |c, job| {
        let first = u64::from(job - 1) * LOAD_CHUNK + 1;
        let ids = first..=(first + LOAD_CHUNK - 1).min(n);
        let rand = Rand::for_thread(seed, job);
        let rows = load_chunk(c, ids, degrees, now, rand, stop, &bar)?;
        bar.job_done();
        Ok(rows)
    })?;
    drop(bar);
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Run(
            "interrupted during prepare: the LinkBench tables are partly loaded; run `dbsweep cleanup linkbench` before preparing again".into(),
        ));
    }
    o.notes
        .progress(&format!("Creating the secondary index on '{LINKS}'..."));
    crate::workload::loader::after_rows(target, &after, o.threads.max(1), stop)?;
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

/// A loaded link's time in milliseconds: the original's `now - 2^31 + nextInt()`, a draw
/// from a hash of the link so that its count's time (the latest of its type's links, as the
/// original writes it) can be found again.
fn link_time(now: i64, seed: u64, (id1, t, k): (u64, u64, u64)) -> i64 {
    let mut x = seed ^ id1.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (t << 56) ^ (k << 20);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^= x >> 31;
    now - LINK_TIME_HALF_SPAN + i64::from(x as u32 as i32)
}

/// The nodes `ids`, their links and their counts, as LinkBench's loaders write them: node
/// version 1 at the load's time; node `i`'s links of type `t` go to `i`, `i + 1`, ... (as
/// many as its out-degree gives the type); a count row per type with links, its time the
/// latest of theirs. The rows loaded.
fn load_chunk(
    conn: &mut dyn Conn,
    ids: std::ops::RangeInclusive<u64>,
    degrees: &Degrees,
    now: i64,
    mut rand: Rand,
    stop: &AtomicBool,
    bar: &LoadBar,
) -> Result<u64, Error> {
    let err = |table: &'static str| move |e| Error::db(format!("loading {table}"), e);
    let mut data = String::new();
    let seed = rand.uniform(0, u64::MAX - 1);
    let mut id = *ids.start();
    let mut rows = conn
        .bulk_load(
            NODES,
            &NODE_COLUMNS,
            &mut bar.counting(&mut |out| {
                if id > *ids.end() || stop.load(Ordering::Relaxed) {
                    return false;
                }
                payload(&mut rand, NODE_DATA_MEDIAN, NODE_DATA_MAX, &mut data);
                out.clear();
                out.extend([
                    RowValue::Int(id as i64),
                    RowValue::Int(NODE_TYPE),
                    RowValue::Int(1),
                    RowValue::Int(now / 1000),
                    RowValue::Text(data.clone()),
                ]);
                id += 1;
                true
            }),
        )
        .map_err(err(NODES))?;
    // (id1, type, k): the next link to write.
    let (mut id1, mut t, mut k) = (*ids.start(), 1, 0);
    rows += conn
        .bulk_load(
            LINKS,
            &LINK_COLUMNS,
            &mut bar.counting(&mut |out| {
                while id1 <= *ids.end() && k >= degrees.of_type(id1, t) {
                    (t, k) = (t + 1, 0);
                    if t > LINK_TYPES {
                        (id1, t) = (id1 + 1, 1);
                    }
                }
                if id1 > *ids.end() || stop.load(Ordering::Relaxed) {
                    return false;
                }
                payload(&mut rand, LINK_DATA_MEDIAN, LINK_DATA_MAX, &mut data);
                out.clear();
                out.extend([
                    RowValue::Int(id1 as i64),
                    RowValue::Int((id1 + k) as i64),
                    RowValue::Int(link_type_id(t)),
                    RowValue::Int(1),
                    RowValue::Text(data.clone()),
                    RowValue::Int(link_time(now, seed, (id1, t, k))),
                    RowValue::Int(0),
                ]);
                k += 1;
                true
            }),
        )
        .map_err(err(LINKS))?;
    // A count row per node and type it has links of.
    let (mut id, mut t) = (*ids.start(), 1);
    rows += conn
        .bulk_load(
            COUNTS,
            &COUNT_COLUMNS,
            &mut bar.counting(&mut |out| {
                loop {
                    if id > *ids.end() || stop.load(Ordering::Relaxed) {
                        return false;
                    }
                    let of_type = degrees.of_type(id, t);
                    let this = (id, t);
                    (id, t) = if t == LINK_TYPES {
                        (id + 1, 1)
                    } else {
                        (id, t + 1)
                    };
                    if of_type > 0 {
                        let latest = (0..of_type)
                            .map(|k| link_time(now, seed, (this.0, this.1, k)))
                            .max()
                            .unwrap_or(now);
                        out.clear();
                        out.extend([
                            RowValue::Int(this.0 as i64),
                            RowValue::Int(link_type_id(this.1)),
                            RowValue::Int(of_type as i64),
                            RowValue::Int(latest),
                            RowValue::Int(0),
                        ]);
                        return true;
                    }
                }
            }),
        )
        .map_err(err(COUNTS))?;
    Ok(rows)
}

/// The check after a load or a run: every (node, type)'s count is its visible links, and no
/// count row counts links that are not there.
pub(super) fn check(conn: &mut dyn Conn) -> Result<Result<(), Error>, DbError> {
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

/// Whether the tables hold the whole graph a load of these degrees writes: the load's last
/// work (the index id1_type) is there, and the most linked nodes have their last loaded link
/// of type 1 where a load of this size and out-degree distribution puts it (a graph of another
/// size, or of the other distribution, has other nodes most linked; a load cut short has
/// none). Links are never deleted (a delete hides them), so a graph that ran since still
/// answers.
pub(super) fn check_graph(conn: &mut dyn Conn, degrees: &Degrees, url: &str) -> Result<(), Error> {
    let db = |e| Error::db(url, e);
    let index = match conn.dialect() {
        Dialect::Postgres => format!(
            "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND \
             tablename = '{LINKS}' AND indexname = 'id1_type'"
        ),
        Dialect::Mysql => format!(
            "SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() \
             AND table_name = '{LINKS}' AND index_name = 'id1_type'"
        ),
        _ => "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'id1_type'"
            .to_string(),
    };
    if conn.query_i64(&index).map_err(db)?.unwrap_or(0) == 0 {
        return Err(Error::Usage(format!(
            "{url}: the LinkBench load did not finish (its last step, the index id1_type, is \
             missing): run `dbsweep cleanup linkbench` and prepare it again"
        )));
    }
    let nodes = degrees.nodes();
    let mut checked = 0;
    for id1 in degrees.most_linked(64) {
        if checked >= 8 {
            break;
        }
        let of_type = degrees.of_type(id1, 1);
        if of_type < 2 {
            continue;
        }
        let id2 = id1 + of_type - 1;
        let found = conn
            .query_i64(&format!(
                "SELECT COUNT(*) FROM {LINKS} WHERE link_type = {} AND id1 = {id1} AND id2 = {id2}",
                link_type_id(1)
            ))
            .map_err(db)?
            .unwrap_or(0);
        if found == 0 {
            return Err(Error::Usage(format!(
                "{url}: the LinkBench tables do not hold a graph of --nodes {nodes} with these \
                 out-degrees (node {id1}'s loaded link to node {id2} is not there): give the \
                 --nodes and workload of its load, or run `dbsweep cleanup linkbench` and \
                 prepare it with these"
            )));
        }
        checked += 1;
    }
    Ok(())
}
