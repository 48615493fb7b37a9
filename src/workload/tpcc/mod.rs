//! TPC-C (docs/workloads.md section 7): the nine tables, the loader, and the twelve consistency
//! checks. `dbsweep tpcc prepare | check | cleanup`.

pub mod check;
mod client;
mod input;
pub mod load;
mod mix;
pub mod run;
pub mod schema;
mod stmts;
mod txns;

pub use mix::Tpcc;
pub use txns::verify_conditions;

use std::sync::atomic::AtomicBool;

use crate::db::{self, OpenOptions, Target};
use crate::error::Error;
use crate::server::{ManagedServer, ServerSpec};

/// What `dbsweep tpcc` was asked.
#[derive(Clone, Debug)]
pub struct TpccArgs {
    pub warehouses: u32,
    pub target: String,
    pub server: Option<ServerSpec>,
    /// Loaders at once (prepare).
    pub threads: u32,
    pub force: bool,
    pub rand_seed: u64,
    /// check: leave out condition 11, which deliveries end.
    pub after_run: bool,
}

/// The database a TPC-C command works on; the target drops before the server stops.
struct TpccDb {
    target: Box<dyn Target>,
    _server: Option<ManagedServer>,
}

fn open(a: &TpccArgs, create: bool) -> Result<TpccDb, Error> {
    if a.warehouses == 0 {
        return Err(Error::Usage("--warehouses: must be at least 1".into()));
    }
    let options = OpenOptions {
        create,
        text_statements: false,
        pipeline: false,
    };
    match &a.server {
        None => Ok(TpccDb {
            target: db::open(&a.target, options)?,
            _server: None,
        }),
        Some(spec) => {
            let server = crate::server::start(spec)?;
            Ok(TpccDb {
                target: db::open(&server.url, options)?,
                _server: Some(server),
            })
        }
    }
}

/// What one warehouse takes on disk, tables and indexes, about (PostgreSQL and InnoDB both
/// come near 100 MB; SQLite a little less).
const BYTES_PER_WAREHOUSE: u64 = 100 << 20;
/// Above this many warehouses (about a terabyte) a database whose disk dbsweep cannot see
/// needs --force.
const UNSEEN_DISK_WAREHOUSES: u32 = 10_000;

/// Refuses, before anything is created, a load that cannot fit: on the disk of a SQLite file or
/// of a managed server's data directory, what is free there; elsewhere, a terabyte.
fn check_fits(a: &TpccArgs) -> Result<(), Error> {
    if a.force {
        return Ok(());
    }
    let need = u64::from(a.warehouses) * BYTES_PER_WAREHOUSE;
    let dir = match (&a.server, a.target.strip_prefix("sqlite://")) {
        (Some(spec), _) => Some(spec.datadir_in.clone().unwrap_or_else(std::env::temp_dir)),
        (None, Some(path)) => {
            let file = std::path::Path::new(path.split('?').next().unwrap_or(path));
            Some(match file.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => std::path::PathBuf::from("."),
            })
        }
        (None, None) => None,
    };
    let gb = |b: u64| b as f64 / f64::from(1u32 << 30);
    match dir.and_then(|d| crate::metrics::free_bytes(&d).map(|f| (d, f))) {
        Some((d, free)) if need > free => Err(Error::Usage(format!(
            "--warehouses {}: about {:.1} GB to load, and {} has {:.1} GB free; \
             use fewer warehouses, or --force to try anyway",
            a.warehouses,
            gb(need),
            d.display(),
            gb(free)
        ))),
        None if a.warehouses > UNSEEN_DISK_WAREHOUSES => Err(Error::Usage(format!(
            "--warehouses {}: about {:.0} GB to load onto a disk dbsweep cannot see; \
             add --force if the server has the room",
            a.warehouses,
            gb(need)
        ))),
        _ => Ok(()),
    }
}

/// Loads the tables, then checks them.
pub fn prepare(a: &TpccArgs, stop: &AtomicBool) -> Result<bool, Error> {
    check_fits(a)?;
    let db = open(a, true)?;
    let seed = if a.rand_seed == 0 {
        rand::random::<u64>() | 1
    } else {
        a.rand_seed
    };
    let r = load::prepare(
        db.target.as_ref(),
        a.warehouses,
        a.threads,
        seed,
        a.force,
        stop,
    )
    .map_err(|e| crate::interrupt::interrupted_load(e, a.server.is_some()))?;
    println!(
        "Loaded {} warehouse(s): {} rows in {:.2}s, {:.0} rows/s (dbsweep used {:.2} CPU s)",
        r.warehouses, r.rows, r.seconds, r.rows_per_s, r.client_cpu_s
    );
    check_db(db.target.as_ref(), a.warehouses, false)
}

/// Runs the consistency checks; Ok(false) when one fails.
pub fn check(a: &TpccArgs) -> Result<bool, Error> {
    let db = open(a, false)?;
    check_db(db.target.as_ref(), a.warehouses, a.after_run)
}

/// Drops the TPC-C tables.
pub fn cleanup(a: &TpccArgs) -> Result<(), Error> {
    let db = open(a, false)?;
    let url = db.target.display_url();
    let mut conn = db.target.connect().map_err(|e| Error::db(&url, e))?;
    let dropped = load::drop_tables(conn.as_mut(), &url)?;
    println!("Dropped {} TPC-C table(s) from {url}", dropped.len());
    Ok(())
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
