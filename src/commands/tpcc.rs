//! `dbsweep tpcc prepare | check | cleanup`: TPC-C's load, its twelve consistency checks and
//! its tables dropped, on the database opened as any command's (`tpcc run` is `run`'s).

use crate::cli::TpccOpts;
use crate::db::{OpenOptions, Target};
use crate::error::{Error, Outcome};
use crate::interrupt::INTERRUPT;
use crate::measure::Db;
use crate::workload::tpcc::{check, load, schema};

fn open(o: &TpccOpts, create: bool) -> Result<Db, Error> {
    if o.warehouses == 0 {
        return Err(Error::Usage("--warehouses: must be at least 1".into()));
    }
    let server = crate::plan::server_spec(&o.db)?;
    let options = OpenOptions {
        create,
        text_statements: false,
        pipeline: false,
        timeouts: o.db.timeouts,
    };
    Db::open_target(&o.db.target, server.as_ref(), options)
}

fn outcome(ok: bool) -> Outcome {
    if ok { Outcome::Done } else { Outcome::Failed }
}

/// Loads the tables, then checks them.
pub(super) fn prepare(o: &TpccOpts) -> Result<Outcome, Error> {
    check_fits(o)?;
    let db = open(o, true)?;
    let seed = if o.rand_seed == 0 {
        rand::random::<u64>() | 1
    } else {
        o.rand_seed
    };
    let r = load::prepare(
        db.target.as_ref(),
        o.warehouses,
        o.threads.max(1),
        seed,
        o.force,
        &INTERRUPT,
        crate::output::Events::default(),
    )
    .map_err(|e| crate::interrupt::interrupted_load(e, db.server.is_some()))?;
    println!(
        "Loaded {} warehouse(s): {} rows in {:.2}s, {:.0} rows/s (dbsweep used {:.2} CPU s)",
        r.warehouses, r.rows, r.seconds, r.rows_per_s, r.client_cpu_s
    );
    check_db(db.target.as_ref(), o.warehouses, false).map(outcome)
}

/// Runs the consistency checks; Failed when one fails.
pub(super) fn check(o: &TpccOpts) -> Result<Outcome, Error> {
    let db = open(o, false)?;
    check_db(db.target.as_ref(), o.warehouses, o.after_run).map(outcome)
}

/// Drops the TPC-C tables.
pub(super) fn cleanup(o: &TpccOpts) -> Result<Outcome, Error> {
    let db = open(o, false)?;
    let url = db.target.display_url();
    let mut conn = db.target.connect().map_err(|e| Error::db(&url, e))?;
    let dropped = load::drop_tables(conn.as_mut(), &url)?;
    println!("Dropped {} TPC-C table(s) from {url}", dropped.len());
    Ok(Outcome::Done)
}

/// What one warehouse takes on disk, tables and indexes, about (PostgreSQL and InnoDB both
/// come near 100 MB; SQLite a little less).
const BYTES_PER_WAREHOUSE: u64 = 100 << 20;
/// Above this many warehouses (about a terabyte) a database whose disk dbsweep cannot see
/// needs --force.
const UNSEEN_DISK_WAREHOUSES: u32 = 10_000;

/// Refuses, before anything is created, a load that cannot fit: on the disk of a SQLite file or
/// of a managed server's data directory, what is free there; elsewhere, a terabyte.
fn check_fits(o: &TpccOpts) -> Result<(), Error> {
    if o.force {
        return Ok(());
    }
    let need = u64::from(o.warehouses) * BYTES_PER_WAREHOUSE;
    let dir = match crate::plan::server_spec(&o.db)? {
        Some(spec) => Some(spec.datadir_in.unwrap_or_else(std::env::temp_dir)),
        None => crate::db::sqlite_dir(&o.db.target),
    };
    let gb = |b: u64| b as f64 / f64::from(1u32 << 30);
    match dir.and_then(|d| crate::metrics::free_bytes(&d).map(|f| (d, f))) {
        Some((d, free)) if need > free => Err(Error::Usage(format!(
            "--warehouses {}: about {:.1} GB to load, and {} has {:.1} GB free; \
             use fewer warehouses, or --force to try anyway",
            o.warehouses,
            gb(need),
            d.display(),
            gb(free)
        ))),
        None if o.warehouses > UNSEEN_DISK_WAREHOUSES => Err(Error::Usage(format!(
            "--warehouses {}: about {:.0} GB to load onto a disk dbsweep cannot see; \
             add --force if the server has the room",
            o.warehouses,
            gb(need)
        ))),
        _ => Ok(()),
    }
}

fn check_db(target: &dyn Target, warehouses: u32, after_run: bool) -> Result<bool, Error> {
    let url = target.display_url();
    let mut conn = target.connect().map_err(|e| Error::db(&url, e))?;
    let existing = load::existing_tables(conn.as_mut()).map_err(|e| Error::db(&url, e))?;
    if existing.len() < schema::TABLES.len() {
        let missing: Vec<&str> = schema::TABLES
            .iter()
            .filter(|t| !existing.contains(t))
            .copied()
            .collect();
        return Err(Error::Usage(format!(
            "{url}: the TPC-C table(s) {} do not exist; run `dbsweep tpcc prepare` first",
            missing.join(", ")
        )));
    }
    let loaded = conn
        .query_i64("SELECT COUNT(*) FROM warehouse")
        .map_err(|e| Error::db(&url, e))?
        .unwrap_or(0);
    if loaded != i64::from(warehouses) {
        return Err(Error::Usage(format!(
            "{url}: {loaded} warehouse(s) are loaded, not --warehouses {warehouses}"
        )));
    }
    let mut ok = true;
    for c in &check::CONDITIONS {
        if after_run && c.number == 11 {
            println!(
                "{:>2}. {:<80} skipped (deliveries end it)",
                c.number, c.text
            );
            continue;
        }
        match check::run(conn.as_mut(), c).map_err(|e| Error::db(&url, e))? {
            None => println!("{:>2}. {:<80} pass", c.number, c.text),
            Some(row) => {
                ok = false;
                println!("{:>2}. {:<80} FAIL: {row}", c.number, c.text);
            }
        }
    }
    Ok(ok)
}
