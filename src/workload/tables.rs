//! The sysbench tables: their definition for each dialect, the parallel loader behind
//! `prepare`, `cleanup`, and the check that a run's tables are there before it starts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::time::Instant;

use super::options::WorkloadOptions;
use super::rand::{Dist, Rand};
use crate::db::{Conn, Dialect, RowValue, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;

/// Digit groups of the `c` and `pad` columns (119 and 59 characters).
pub const C_GROUPS: usize = 10;
pub const PAD_GROUPS: usize = 5;

/// Which table layout a workload uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    /// `sbtestN(id, k, c, pad)` with `table_size` rows and the index `k_N`.
    Sysbench,
    /// bulk_insert's `sbtestN(id, k)`, created empty.
    Bulk,
}

/// The tables `sbtest1..sbtest{count}` of one kind.
#[derive(Clone, Copy, Debug)]
pub struct TableSet {
    pub kind: TableKind,
    pub count: u32,
}

impl TableSet {
    pub fn sysbench(count: u32) -> TableSet {
        TableSet {
            kind: TableKind::Sysbench,
            count,
        }
    }

    pub fn bulk(count: u32) -> TableSet {
        TableSet {
            kind: TableKind::Bulk,
            count,
        }
    }

    pub fn names(&self) -> impl Iterator<Item = (u32, String)> {
        (1..=self.count).map(|n| (n, format!("sbtest{n}")))
    }
}

/// What of the options shapes the `CREATE TABLE` of the sysbench tables.
#[derive(Clone, Copy, Debug)]
pub struct TableDdl<'a> {
    pub auto_inc: bool,
    pub secondary: bool,
    pub mysql_storage_engine: &'a str,
}

impl TableDdl<'_> {
    /// sysbench's defaults: what the safety check compares a table with (the options change
    /// no column's type).
    pub const DEFAULT: TableDdl<'static> = TableDdl {
        auto_inc: true,
        secondary: false,
        mysql_storage_engine: "innodb",
    };

    pub fn of(o: &WorkloadOptions) -> TableDdl<'_> {
        TableDdl {
            auto_inc: o.families.sysbench.auto_inc,
            secondary: o.families.sysbench.secondary,
            mysql_storage_engine: &o.families.sysbench.mysql_storage_engine,
        }
    }
}

/// `CREATE TABLE` for table `n`, as sysbench 1.0 writes it for each dialect. PostgreSQL gets
/// its primary key after the load (see [`after_rows_sql`]): one sorted index build is much
/// faster than maintaining the index row by row, and the result is the same table.
pub fn create_table_sql(dialect: Dialect, kind: TableKind, n: u32, o: &TableDdl) -> String {
    if kind == TableKind::Bulk {
        return format!(
            "CREATE TABLE sbtest{n} (id INTEGER NOT NULL, k INTEGER DEFAULT '0' NOT NULL, PRIMARY KEY (id))"
        );
    }
    let (id, key, suffix) = match dialect {
        Dialect::Postgres => (
            if o.auto_inc {
                "SERIAL"
            } else {
                "INTEGER NOT NULL"
            },
            String::new(),
            String::new(),
        ),
        Dialect::Mysql => (
            if o.auto_inc {
                "INTEGER NOT NULL AUTO_INCREMENT"
            } else {
                "INTEGER NOT NULL"
            },
            format!(
                ",\n  {} (id)",
                if o.secondary {
                    "KEY xid"
                } else {
                    "PRIMARY KEY"
                }
            ),
            format!(" /*! ENGINE = {} */", o.mysql_storage_engine),
        ),
        Dialect::Sqlite | Dialect::Any => (
            if o.secondary {
                "INTEGER NOT NULL"
            } else {
                "INTEGER PRIMARY KEY"
            },
            String::new(),
            String::new(),
        ),
    };
    format!(
        "CREATE TABLE sbtest{n} (\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL{key}){suffix}"
    )
}

/// Statements that finish table `n` once its rows are in: keys, the secondary index, and for
/// PostgreSQL the id sequence moved past the loaded ids.
fn after_rows_sql(dialect: Dialect, n: u32, o: &WorkloadOptions) -> Vec<String> {
    let mut sql = Vec::new();
    let name = format!("sbtest{n}");
    match (dialect, o.families.sysbench.secondary) {
        (Dialect::Postgres, false) => sql.push(format!("ALTER TABLE {name} ADD PRIMARY KEY (id)")),
        (Dialect::Postgres | Dialect::Sqlite | Dialect::Any, true) => {
            sql.push(format!("CREATE INDEX xid_{n} ON {name}(id)"))
        }
        _ => {}
    }
    if dialect == Dialect::Postgres && o.families.sysbench.auto_inc {
        sql.push(format!("SELECT setval(pg_get_serial_sequence('{name}', 'id'), (SELECT coalesce(max(id), 1) FROM {name}))"));
    }
    if o.families.sysbench.create_secondary {
        sql.push(format!("CREATE INDEX k_{n} ON {name}(k)"));
    }
    sql
}

/// A workload's own tables that are there already (its `prepare` run before): refused, naming
/// the command that removes them, unless `force`; dropped with it.
pub fn refuse_or_drop(
    conn: &mut dyn Conn,
    url: &str,
    tables: &[&str],
    force: bool,
    cleanup: &str,
) -> Result<(), Error> {
    for table in tables {
        if !conn.table_exists(table).map_err(|e| Error::db(url, e))? {
            continue;
        }
        if !force {
            return Err(already_there(table, url, cleanup));
        }
        conn.batch(&format!("DROP TABLE {table}"))
            .map_err(|e| Error::db(format!("dropping {table}"), e))?;
    }
    Ok(())
}

/// The refusal of a prepare that finds `table` there: what removes it, or --force.
pub fn already_there(table: &str, url: &str, cleanup: &str) -> Error {
    Error::Usage(format!(
        "table {table} already exists in {url}; run `{cleanup}` first or add --force to drop and reload it"
    ))
}

/// Whether table `name` holds at least one row.
fn has_rows(conn: &mut dyn Conn, name: &str) -> Result<bool, Error> {
    let probe = format!("SELECT 1 FROM {name} LIMIT 1");
    Ok(conn
        .query_i64(&probe)
        .map_err(|e| Error::db(format!("reading {name}"), e))?
        .is_some())
}

/// Creates and loads the tables of `set`. Refuses (before touching anything) when one of them
/// already holds rows, unless `force`. Loads up to `--threads` tables at once where the
/// database allows concurrent writers; each writer is fed by its own row-generating thread.
pub fn prepare(
    target: &dyn Target,
    set: &TableSet,
    o: &WorkloadOptions,
    force: bool,
    stop: &AtomicBool,
) -> Result<LoadReport, Error> {
    let mut conn = target
        .connect()
        .map_err(|e| Error::db(target.display_url(), e))?;
    // Every existing table is checked before any is dropped, and a foreign one is named even
    // without --force.
    for name in check_ours(conn.as_mut(), set)? {
        if !force && has_rows(conn.as_mut(), &name)? {
            return Err(Error::Usage(format!(
                "table {name} in {} already holds rows; run `dbsweep cleanup` first or add \
                 --force to drop and reload it",
                target.display_url()
            )));
        }
    }
    drop(conn);
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    let tables = 1..=set.count;
    let writers = super::loader::writers(target, o.threads, &tables);
    let expected = match set.kind {
        TableKind::Bulk => 0,
        _ => u64::from(set.count) * o.table_size,
    };
    let bar = super::loader::LoadBar::new(o.notes, expected, set.count, "tables");
    let rows = super::loader::run(target, tables, writers, stop, |conn, n| {
        let rows = load_table(target, conn, set, o, n, stop, &bar)?;
        bar.job_done();
        Ok(rows)
    })?;
    drop(bar);
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Run(
            "interrupted during prepare: the tables are partly loaded; \
                               run `dbsweep cleanup` before preparing again"
                .into(),
        ));
    }
    // Fresh statistics (ANALYZE), as a DBA would have them before benchmarking, unless
    // `--analyze=off` (as sysbench's prepare, which leaves them to autovacuum: PostgreSQL's
    // plans for the select_random_* tests on the skewed `k` differ by 5x with and without).
    if o.analyze {
        let mut conn = target
            .connect()
            .map_err(|e| Error::db(target.display_url(), e))?;
        target
            .after_load(conn.as_mut())
            .map_err(|e| Error::db("after load", e))?;
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(LoadReport {
        tables: set.count,
        rows,
        seconds,
        rows_per_s: rows as f64 / seconds.max(1e-9),
        client_cpu_s: crate::metrics::process_cpu_seconds() - cpu_start,
        steps: Vec::new(),
    })
}

/// Creates and loads table `sbtest{n}` of `set` on `c`; the rows loaded.
fn load_table(
    target: &dyn Target,
    c: &mut dyn Conn,
    set: &TableSet,
    o: &WorkloadOptions,
    n: u32,
    stop: &AtomicBool,
    bar: &super::loader::LoadBar,
) -> Result<u64, Error> {
    let name = format!("sbtest{n}");
    let ctx = |what: &str| format!("{what} {name}");
    bar.say(&format!("Creating table '{name}'..."));
    if c.table_exists(&name)
        .map_err(|e| Error::db(ctx("looking up"), e))?
    {
        // prepare checked every table's shape before any loader started.
        c.batch(&format!("DROP TABLE {name}"))
            .map_err(|e| Error::db(ctx("dropping"), e))?;
    }
    let ddl = create_table_sql(target.dialect(), set.kind, n, &TableDdl::of(o));
    c.batch(&ddl).map_err(|e| Error::db(ctx("creating"), e))?;
    if set.kind == TableKind::Bulk {
        return Ok(0);
    }
    bar.say(&format!("Inserting {} records into '{name}'", o.table_size));
    let rows = load_rows(c, n, o, stop, bar).map_err(|e| Error::db(ctx("loading"), e))?;
    if o.families.sysbench.create_secondary {
        bar.say(&format!("Creating a secondary index on '{name}'..."));
    }
    for sql in after_rows_sql(target.dialect(), n, o) {
        c.batch(&sql).map_err(|e| Error::db(ctx("indexing"), e))?;
    }
    Ok(rows)
}

/// Rows per message from the generating thread to the writer.
const LOAD_BATCH: usize = 1024;

/// Loads `table_size` rows into table `n`: a helper thread generates the random values while
/// this one writes, so that generation does not slow the writer down.
fn load_rows(
    conn: &mut dyn Conn,
    n: u32,
    o: &WorkloadOptions,
    stop: &AtomicBool,
    bar: &super::loader::LoadBar,
) -> Result<u64, crate::db::DbError> {
    let (tx, rx) = sync_channel::<Vec<[RowValue; 4]>>(8);
    let size = o.table_size;
    let dist = Dist::new(&o.rand, size);
    let mut rand = Rand::for_thread(o.rand.rand_seed, 1_000_000 + n);
    std::thread::scope(|s| {
        s.spawn(move || {
            let (mut c, mut pad) = (String::new(), String::new());
            let mut id = 1;
            while id <= size && !stop.load(Ordering::Relaxed) {
                let mut batch = Vec::with_capacity(LOAD_BATCH);
                while batch.len() < LOAD_BATCH && id <= size {
                    rand.fill_digit_groups(C_GROUPS, &mut c);
                    rand.fill_digit_groups(PAD_GROUPS, &mut pad);
                    let k = rand.draw(&dist, 1, size) as i64;
                    batch.push([
                        RowValue::Int(id as i64),
                        RowValue::Int(k),
                        RowValue::Text(c.clone()),
                        RowValue::Text(pad.clone()),
                    ]);
                    id += 1;
                }
                if tx.send(batch).is_err() {
                    return; // the writer failed and hung up
                }
            }
        });
        let mut pending = Vec::new().into_iter();
        // Owns the receiver: dropped when the load ends, even by an error (a full disk), so
        // that the generator's send fails and the scope can end instead of waiting forever.
        let mut next_row = move |row: &mut Vec<RowValue>| loop {
            if let Some(values) = pending.next() {
                row.clear();
                row.extend::<[RowValue; 4]>(values);
                return true;
            }
            match rx.recv() {
                Ok(batch) => pending = batch.into_iter(),
                Err(_) => return false,
            }
        };
        let loaded = conn.bulk_load(
            &format!("sbtest{n}"),
            &["id", "k", "c", "pad"],
            &mut bar.counting(&mut next_row),
        );
        drop(next_row);
        loaded
    })
}

/// The tables of `set` that exist, after checking that every one of them is a table dbsweep
/// creates: a plain table (not a view, a partitioned table or a partition) with exactly the
/// columns and types of a sysbench table (id, k, c, pad) or of bulk_insert's (id, k). All are
/// checked before any is dropped; the refusal names each foreign table and why.
pub fn check_ours(conn: &mut dyn Conn, set: &TableSet) -> Result<Vec<String>, Error> {
    let dialect = conn.dialect();
    let own = [TableKind::Sysbench, TableKind::Bulk]
        .map(|k| crate::db::declared_columns(&create_table_sql(dialect, k, 1, &TableDdl::DEFAULT)));
    let mut existing = Vec::new();
    let mut foreign = Vec::new();
    for (_, name) in set.names() {
        let Some(shape) = crate::db::table_shape(conn, &name)
            .map_err(|e| Error::db(format!("looking up {name}"), e))?
        else {
            continue;
        };
        match foreign_reason(&shape, &own) {
            Some(why) => foreign.push(format!("{} {why}", shape.describe(&name))),
            None => existing.push(name),
        }
    }
    if foreign.is_empty() {
        return Ok(existing);
    }
    let (c, p, s) = (&own[0], &own[1], |cols: &[(String, String)]| {
        cols.iter()
            .map(|(c, t)| format!("{c} {t}"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    Err(Error::Usage(format!(
        "not dropping any table: {}; dbsweep drops only the tables it creates (sbtestN({}) or \
         sbtestN({})); rename or drop them yourself",
        foreign.join("; "),
        s(c),
        s(p),
    )))
}

/// Why a table of this shape is not one dbsweep made; `None` when it is.
pub fn foreign_reason(
    shape: &crate::db::TableShape,
    own: &[Vec<(String, String)>],
) -> Option<String> {
    if shape.kind != "table" {
        return Some(format!("is a {}, not a plain table", shape.kind));
    }
    if shape.columns.is_empty() {
        return Some("shows no columns to this user (no privilege to read its definition?)".into());
    }
    (!own.contains(&shape.columns)).then(|| "has other columns or types".into())
}

/// A table a workload makes: its name and the `CREATE TABLE` statements it may have been made
/// with (one per variant: pgbench's 32- or 64-bit account ids).
pub struct OwnTable {
    pub name: String,
    pub ddl: Vec<String>,
    /// Whether dbsweep may have made it partitioned (pgbench's `--partitions`).
    pub partitioned: bool,
}

/// Drops the tables among `own` that exist, in order, and returns their names: only when every
/// one of them is a plain table (or one dbsweep partitions) with exactly the columns and types
/// of one of its statements. A user's own table of the same name, a view, a table of other
/// columns: nothing is dropped (exit 2), and the message names each and why. `what` names the
/// workload's tables in it.
pub fn drop_own(
    conn: &mut dyn Conn,
    url: &str,
    what: &str,
    own: &[OwnTable],
    progress: &dyn Fn(&str),
) -> Result<Vec<String>, Error> {
    let mut existing = Vec::new();
    let mut foreign = Vec::new();
    for t in own {
        let Some(mut shape) =
            crate::db::table_shape(conn, &t.name).map_err(|e| Error::db(url, e))?
        else {
            continue;
        };
        if t.partitioned && shape.kind == "partitioned table" {
            shape.kind = "table".into();
        }
        let shapes: Vec<_> = t
            .ddl
            .iter()
            .map(|d| crate::db::declared_columns(d))
            .collect();
        match foreign_reason(&shape, &shapes) {
            Some(why) => foreign.push(format!("{} {why}", shape.describe(&t.name))),
            None => existing.push(t.name.clone()),
        }
    }
    if !foreign.is_empty() {
        return Err(Error::Usage(format!(
            "{url}: not dropping any of {what}'s tables: {} (a table of your own?); dbsweep drops \
             only tables of the shape it creates: rename or drop {} yourself",
            foreign.join("; "),
            if foreign.len() == 1 { "it" } else { "them" },
        )));
    }
    for t in &existing {
        progress(&format!("Dropping table '{t}'..."));
        conn.batch(&format!("DROP TABLE {t}"))
            .map_err(|e| Error::db(format!("{url}: dropping {t}"), e))?;
    }
    Ok(existing)
}

/// Drops the tables of `set` that exist; returns how many it dropped. Only sbtest tables of
/// dbsweep's shape, and none unless all are.
pub fn cleanup(target: &dyn Target, set: &TableSet, o: &WorkloadOptions) -> Result<u32, Error> {
    let mut conn = target
        .connect()
        .map_err(|e| Error::db(target.display_url(), e))?;
    let existing = check_ours(conn.as_mut(), set)?;
    for name in &existing {
        o.notes.progress(&format!("Dropping table '{name}'..."));
        conn.batch(&format!("DROP TABLE {name}"))
            .map_err(|e| Error::db(format!("dropping {name}"), e))?;
    }
    Ok(existing.len() as u32)
}

/// Checks, before a run, that every table exists and (unless the workload inserts into empty
/// tables) holds rows. Warns when a table holds fewer ids than `--table-size` says.
pub fn check_ready(
    conn: &mut dyn Conn,
    set: &TableSet,
    o: &WorkloadOptions,
    accepts_empty: bool,
    url: &str,
) -> Result<(), Error> {
    let hint = "run `dbsweep prepare` (or `dbsweep run --prepare`) with the same --tables and --table-size";
    for (_, name) in set.names() {
        if !conn
            .table_exists(&name)
            .map_err(|e| Error::db(name.clone(), e))?
        {
            return Err(Error::Usage(format!(
                "table {name} does not exist in {url}: {hint}"
            )));
        }
        if accepts_empty || set.kind == TableKind::Bulk {
            continue;
        }
        let max = conn
            .query_i64(&format!("SELECT max(id) FROM {name}"))
            .map_err(|e| Error::db(format!("reading {name}"), e))?;
        match max {
            None => {
                return Err(Error::Usage(format!(
                    "table {name} in {url} is empty: {hint}"
                )));
            }
            Some(m) if (m as u64) < o.table_size / 2 => {
                o.notes
                    .client_note(&crate::output::note::ClientNote::Warning {
                        message: &format!(
                            "table {name} holds ids up to {m} but --table-size is {}; most lookups \
                         will find no row",
                            o.table_size
                        ),
                    })
            }
            Some(_) => {}
        }
    }
    Ok(())
}
