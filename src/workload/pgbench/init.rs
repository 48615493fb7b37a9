//! pgbench's initialisation (`pgbench -i`), as its documentation describes it, step by step:
//! `d` drop the four tables, `t` create them, `g` generate the rows on the client (COPY),
//! `G` generate them on the server, `v` vacuum, `p` primary keys, `f` foreign keys. The tables
//! and rows are pgbench's own, so that pgbench and dbsweep run on each other's data.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use super::TABLES;
use crate::db::{Conn, Dialect, RowValue, Target};
use crate::error::Error;
use crate::results::figures::LoadReport;
use crate::workload::WorkloadOptions;
pub use super::options::TableOptions;

const BRANCHES: i64 = 1;
const TELLERS: i64 = 10;
const ACCOUNTS: i64 = 100_000;

/// What `-i` does.
#[derive(Clone, Debug)]
pub struct Init {
    pub scale: i64,
    pub fillfactor: u32,
    pub steps: String,
    pub unlogged: bool,
    /// pgbench_accounts's partitions (0: none), by hash rather than range.
    pub partitions: u32,
    pub hash: bool,
    /// `--tablespace`, `--index-tablespace` (PostgreSQL): where the tables and their primary
    /// keys go, as quoted identifiers.
    pub tablespace: Option<String>,
    pub index_tablespace: Option<String>,
    pub notes: crate::output::Events,
    /// Refuse to drop tables that are there (dbsweep's own `prepare` without --force);
    /// pgbench's `-i` drops them (step d), as pgbench does.
    pub keep_existing: bool,
}

impl Init {
    pub fn of(w: &WorkloadOptions) -> Init {
        let o = &w.families.pgbench.tables;
        let mut steps = o.init_steps.clone();
        if o.foreign_keys && !steps.contains('f') {
            steps.push('f');
        }
        Init {
            scale: i64::from(w.scale.max(1)),
            fillfactor: o.fillfactor,
            steps,
            unlogged: o.unlogged_tables,
            partitions: o.partitions,
            hash: o.partition_method == "hash",
            tablespace: o.tablespace.as_deref().map(quote_ident),
            index_tablespace: o.index_tablespace.as_deref().map(quote_ident),
            notes: w.notes,
            keep_existing: true,
        }
    }
}

/// An identifier quoted as PostgreSQL reads it (libpq's PQescapeIdentifier, as pgbench quotes
/// its tablespaces).
fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Checks `-I`'s letters.
pub fn check_steps(steps: &str) -> Result<(), String> {
    match steps.chars().find(|c| !"dtgGvpf ".contains(*c)) {
        Some(c) => Err(format!(
            "unrecognized initialization step \"{c}\"; allowed step characters are: \"d\" (drop), \"t\" (create tables), \"g\" (client-side generate), \"G\" (server-side generate), \"v\" (vacuum), \"p\" (primary keys), \"f\" (foreign keys)"
        )),
        None if steps.contains('g') && steps.contains('G') => {
            Err("-I: \"g\" and \"G\" cannot both be given".into())
        }
        None => Ok(()),
    }
}

/// Runs the steps of `init` on `target`.
pub fn run(
    target: &dyn Target,
    init: &Init,
    force: bool,
    stop: &AtomicBool,
) -> Result<LoadReport, Error> {
    check_steps(&init.steps).map_err(|why| Error::Option {
        option: "init-steps".into(),
        why,
    })?;
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    let d = target.dialect();
    let start = Instant::now();
    let cpu_start = crate::metrics::process_cpu_seconds();
    let mut rows = 0;
    let db = |what: &str| {
        let what = what.to_string();
        move |e| Error::db(what, e)
    };
    // Each step's seconds, named as pgbench's last line names them.
    let mut steps: Vec<(&'static str, f64)> = Vec::new();
    for step in init.steps.chars() {
        let step_start = Instant::now();
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Run(
                "interrupted during pgbench's initialisation".into(),
            ));
        }
        match step {
            'd' => {
                if init.keep_existing && !force {
                    for t in TABLES {
                        if conn.table_exists(t).map_err(db(&url))? {
                            return Err(crate::workload::tables::already_there(
                                t,
                                &url,
                                "dbsweep cleanup pgbench_tpcb_like",
                            ));
                        }
                    }
                }
                init.notes.progress("dropping old tables...");
                drop_all(conn.as_mut(), d, true).map_err(db("dropping pgbench's tables"))?;
            }
            't' => create(conn.as_mut(), d, init).map_err(db("creating pgbench's tables"))?,
            'g' => rows += generate_client(conn.as_mut(), init, stop)?,
            'G' => rows += generate_server(conn.as_mut(), init).map_err(db("generating data"))?,
            'v' => {
                init.notes.progress("vacuuming...");
                for t in [
                    "pgbench_branches",
                    "pgbench_tellers",
                    "pgbench_accounts",
                    "pgbench_history",
                ] {
                    let sql = match d {
                        Dialect::Postgres => format!("VACUUM ANALYZE {t}"),
                        Dialect::Mysql => format!("ANALYZE TABLE {t}"),
                        _ => format!("ANALYZE {t}"),
                    };
                    conn.batch(&sql).map_err(db("vacuuming"))?;
                }
            }
            'p' => {
                init.notes.progress("creating primary keys...");
                for (t, k) in [
                    ("pgbench_branches", "bid"),
                    ("pgbench_tellers", "tid"),
                    ("pgbench_accounts", "aid"),
                ] {
                    let sql = match (d, &init.index_tablespace) {
                        (Dialect::Sqlite, _) => {
                            format!("CREATE UNIQUE INDEX {t}_pkey ON {t} ({k})")
                        }
                        (Dialect::Postgres, Some(ts)) => {
                            format!(
                                "ALTER TABLE {t} ADD PRIMARY KEY ({k}) USING INDEX TABLESPACE {ts}"
                            )
                        }
                        _ => format!("ALTER TABLE {t} ADD PRIMARY KEY ({k})"),
                    };
                    conn.batch(&sql).map_err(db("creating primary keys"))?;
                }
            }
            'f' => {
                init.notes.progress("creating foreign keys...");
                for (t, c, r) in [
                    ("pgbench_tellers", "bid", "pgbench_branches"),
                    ("pgbench_accounts", "bid", "pgbench_branches"),
                    ("pgbench_history", "bid", "pgbench_branches"),
                    ("pgbench_history", "tid", "pgbench_tellers"),
                    ("pgbench_history", "aid", "pgbench_accounts"),
                ] {
                    conn.batch(&format!(
                        "ALTER TABLE {t} ADD CONSTRAINT {t}_{c}_fkey FOREIGN KEY ({c}) REFERENCES {r}"
                    ))
                    .map_err(db("creating foreign keys"))?;
                }
            }
            _ => {}
        }
        let name = match step {
            'd' => "drop tables",
            't' => "create tables",
            'g' => "client-side generate",
            'G' => "server-side generate",
            'v' => "vacuum",
            'p' => "primary keys",
            'f' => "foreign keys",
            _ => continue,
        };
        steps.push((name, step_start.elapsed().as_secs_f64()));
    }
    let mut report = LoadReport::new(
        4,
        rows,
        start.elapsed().as_secs_f64(),
        crate::metrics::process_cpu_seconds() - cpu_start,
    );
    report.steps = steps;
    Ok(report)
}

fn create(conn: &mut dyn Conn, d: Dialect, init: &Init) -> Result<(), crate::db::DbError> {
    if init.partitions > 0 && d != Dialect::Postgres {
        return Err(crate::db::DbError::new(
            crate::db::ErrorClass::Fatal,
            "partitions",
            "--partitions: pgbench's partitioned pgbench_accounts is PostgreSQL's",
        ));
    }
    if (init.tablespace.is_some() || init.index_tablespace.is_some()) && d != Dialect::Postgres {
        return Err(crate::db::DbError::new(
            crate::db::ErrorClass::Fatal,
            "tablespace",
            "--tablespace, --index-tablespace: tablespaces are PostgreSQL's",
        ));
    }
    init.notes.progress("creating tables...");
    let aid = if init.scale >= 20_000 {
        "bigint"
    } else {
        "int"
    };
    let with = if d == Dialect::Postgres && init.fillfactor != 100 {
        format!(" WITH (fillfactor={})", init.fillfactor)
    } else {
        String::new()
    };
    let unlogged = if init.unlogged && d == Dialect::Postgres {
        "UNLOGGED "
    } else {
        ""
    };
    for (t, cols, ff) in table_columns(aid) {
        let partitioned = t == "pgbench_accounts" && init.partitions > 0;
        let with = if partitioned {
            // The partitions take the fill factor; the parent holds no rows.
            format!(
                " PARTITION BY {} (aid)",
                if init.hash { "HASH" } else { "RANGE" }
            )
        } else if ff {
            with.clone()
        } else {
            String::new()
        };
        let ts = init
            .tablespace
            .as_ref()
            .map_or(String::new(), |ts| format!(" TABLESPACE {ts}"));
        conn.batch(&format!("CREATE {unlogged}TABLE {t}({cols}){with}{ts}"))?;
    }
    if init.partitions > 0 {
        create_partitions(conn, init, unlogged)?;
    }
    Ok(())
}

/// pgbench's four tables with their columns (account ids of type `aid`) and whether the fill
/// factor applies, in the order they are made and dropped (history first: it refers to the
/// others where foreign keys were added).
fn table_columns(aid: &str) -> [(&'static str, String, bool); 4] {
    [
        (
            "pgbench_history",
            format!("tid int,bid int,aid {aid},delta int,mtime timestamp,filler char(22)"),
            false,
        ),
        (
            "pgbench_accounts",
            format!("aid {aid} not null,bid int,abalance int,filler char(84)"),
            true,
        ),
        (
            "pgbench_tellers",
            "tid int not null,bid int,tbalance int,filler char(84)".to_string(),
            true,
        ),
        (
            "pgbench_branches",
            "bid int not null,bbalance int,filler char(88)".to_string(),
            true,
        ),
    ]
}

/// pgbench_accounts's partitions as pgbench makes them: by range, equal ranges of aid with
/// the first and last open-ended; by hash, one per remainder.
fn create_partitions(
    conn: &mut dyn Conn,
    init: &Init,
    unlogged: &str,
) -> Result<(), crate::db::DbError> {
    let n = i64::from(init.partitions);
    init.notes.progress(&format!("creating {n} partitions..."));
    let size = (ACCOUNTS * init.scale + n - 1) / n;
    for p in 1..=n {
        // Thousands of quick statements: none waits long enough to see Ctrl-C itself.
        if crate::interrupt::interrupted() {
            return Err(crate::db::DbError::new(
                crate::db::ErrorClass::Fatal,
                "interrupted",
                "interrupted while creating pgbench_accounts's partitions",
            ));
        }
        let bounds = if init.hash {
            format!("WITH (MODULUS {n}, REMAINDER {})", p - 1)
        } else {
            let from = if p == 1 {
                "MINVALUE".to_string()
            } else {
                ((p - 1) * size + 1).to_string()
            };
            let to = if p < n {
                (p * size + 1).to_string()
            } else {
                "MAXVALUE".to_string()
            };
            format!("FROM ({from}) TO ({to})")
        };
        conn.batch(&format!(
            "CREATE {unlogged}TABLE pgbench_accounts_{p} PARTITION OF pgbench_accounts FOR VALUES {bounds} WITH (fillfactor={})",
            init.fillfactor
        ))?;
    }
    Ok(())
}

fn generate_client(conn: &mut dyn Conn, init: &Init, stop: &AtomicBool) -> Result<u64, Error> {
    init.notes.progress("generating data (client-side)...");
    let err = |e| Error::db("generating data", e);
    // PostgreSQL: as pgbench 15, one transaction that truncates the tables and copies the rows
    // in frozen (but into a partitioned pgbench_accounts), so that the vacuum after finds
    // nothing to do.
    let pg = conn.dialect() == Dialect::Postgres;
    if pg {
        conn.batch("BEGIN").map_err(err)?;
        conn.batch(
            "TRUNCATE TABLE pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
        )
        .map_err(err)?;
    } else {
        for t in [
            "pgbench_accounts",
            "pgbench_branches",
            "pgbench_history",
            "pgbench_tellers",
        ] {
            conn.batch(&format!("DELETE FROM {t}")).map_err(err)?;
        }
    }
    let load = |conn: &mut dyn Conn,
                table: &str,
                columns: &[&str],
                frozen: bool,
                next: &mut dyn FnMut(&mut Vec<RowValue>) -> bool| {
        if frozen {
            conn.bulk_load_frozen(table, columns, next)
        } else {
            conn.bulk_load(table, columns, next)
        }
    };
    let s = init.scale;
    let (mut b, mut t) = (1, 1);
    let mut rows = load(
        conn,
        "pgbench_branches",
        &["bid", "bbalance"],
        pg,
        &mut |out| {
            if b > BRANCHES * s {
                return false;
            }
            out.clear();
            out.extend([RowValue::Int(b), RowValue::Int(0)]);
            b += 1;
            true
        },
    )
    .map_err(err)?;
    rows += load(
        conn,
        "pgbench_tellers",
        &["tid", "bid", "tbalance"],
        pg,
        &mut |out| {
            if t > TELLERS * s {
                return false;
            }
            out.clear();
            out.extend([
                RowValue::Int(t),
                RowValue::Int((t - 1) / TELLERS + 1),
                RowValue::Int(0),
            ]);
            t += 1;
            true
        },
    )
    .map_err(err)?;
    let total = ACCOUNTS * s;
    let mut a = 1;
    rows += load(
        conn,
        "pgbench_accounts",
        &["aid", "bid", "abalance", "filler"],
        pg && init.partitions == 0,
        &mut |out| {
            if a > total || stop.load(Ordering::Relaxed) {
                return false;
            }
            out.clear();
            out.extend([
                RowValue::Int(a),
                RowValue::Int((a - 1) / ACCOUNTS + 1),
                RowValue::Int(0),
                RowValue::Text(String::new()),
            ]);
            if a % ACCOUNTS == 0 {
                init.notes.progress(&format!(
                    "{a} of {total} tuples ({}%) done",
                    a * 100 / total
                ));
            }
            a += 1;
            true
        },
    )
    .map_err(err)?;
    if pg {
        conn.batch("COMMIT").map_err(err)?;
    }
    Ok(rows)
}

fn generate_server(conn: &mut dyn Conn, init: &Init) -> Result<u64, crate::db::DbError> {
    init.notes.progress("generating data (server-side)...");
    for t in [
        "pgbench_accounts",
        "pgbench_branches",
        "pgbench_history",
        "pgbench_tellers",
    ] {
        conn.batch(&format!("TRUNCATE TABLE {t}"))?;
    }
    let s = init.scale;
    conn.batch(&format!(
        "INSERT INTO pgbench_branches(bid,bbalance) SELECT bid, 0 FROM generate_series(1, {}) AS bid",
        BRANCHES * s
    ))?;
    conn.batch(&format!(
        "INSERT INTO pgbench_tellers(tid,bid,tbalance) SELECT tid, (tid - 1) / {TELLERS} + 1, 0 FROM generate_series(1, {}) AS tid",
        TELLERS * s
    ))?;
    conn.batch(&format!(
        "INSERT INTO pgbench_accounts(aid,bid,abalance,filler) SELECT aid, (aid - 1) / {ACCOUNTS} + 1, 0, '' FROM generate_series(1, {}) AS aid",
        ACCOUNTS * s
    ))?;
    Ok(((BRANCHES + TELLERS + ACCOUNTS) * s) as u64)
}

/// Drops the four tables (those there when `if_exists`): one statement where the database
/// takes several tables (their foreign keys between them), else history first.
fn drop_all(conn: &mut dyn Conn, d: Dialect, if_exists: bool) -> Result<(), crate::db::DbError> {
    let exists = if if_exists { "IF EXISTS " } else { "" };
    if d == Dialect::Sqlite {
        for t in [
            "pgbench_history",
            "pgbench_accounts",
            "pgbench_tellers",
            "pgbench_branches",
        ] {
            conn.batch(&format!("DROP TABLE {exists}{t}"))?;
        }
        return Ok(());
    }
    conn.batch(&format!("DROP TABLE {exists}{}", TABLES.join(", ")))
}

/// Drops pgbench's tables that are there (`cleanup`): only when each has the columns pgbench
/// makes it with (32- or 64-bit account ids; pgbench_accounts may be partitioned).
pub fn drop_tables(target: &dyn Target, o: &WorkloadOptions) -> Result<u32, Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    let (narrow, wide) = (table_columns("int"), table_columns("bigint"));
    let own: Vec<_> = narrow
        .iter()
        .zip(&wide)
        .map(|((t, a, _), (_, b, _))| crate::workload::tables::OwnTable {
            name: t.to_string(),
            ddl: vec![
                format!("CREATE TABLE {t}({a})"),
                format!("CREATE TABLE {t}({b})"),
            ],
            partitioned: *t == "pgbench_accounts",
        })
        .collect();
    let dropped =
        crate::workload::tables::drop_own(conn.as_mut(), &url, "pgbench", &own, &|line| {
            o.notes.progress(line)
        })?;
    Ok(dropped.len() as u32)
}
