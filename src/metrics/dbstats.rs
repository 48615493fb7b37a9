//! The server's own counters, snapshotted before and after a step: their deltas, and what they
//! say per operation (buffer pool hit rate, pages read and written, log bytes).
//!
//! PostgreSQL: pg_stat_database (this database), pg_stat_bgwriter, pg_stat_checkpointer and
//! pg_stat_wal where the server has them, pg_statio_user_tables summed over the tables.
//! MySQL and MariaDB: SHOW GLOBAL STATUS (numeric values) and SHOW ENGINE INNODB STATUS.
//! SQLite: the page cache hits, misses and writes of the clients' connections (SQLite keeps
//! them per connection, so the runner collects them; see `RunOutcome::cache_counters`).

use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::db::{Conn, DbError, Dialect, Target};
use crate::results::figures::{Counters, ServerStats};

/// (query, columns): each query returns rows of (name, value).
const PG_QUERIES: [&str; 5] = [
    "SELECT 'pg_stat_database.' || j.key, j.value FROM pg_stat_database d, \
     json_each_text(row_to_json(d)) j WHERE d.datname = current_database()",
    "SELECT 'pg_stat_bgwriter.' || j.key, j.value FROM pg_stat_bgwriter d, \
     json_each_text(row_to_json(d)) j",
    "SELECT 'pg_stat_checkpointer.' || j.key, j.value FROM pg_stat_checkpointer d, \
     json_each_text(row_to_json(d)) j",
    "SELECT 'pg_stat_wal.' || j.key, j.value FROM pg_stat_wal d, json_each_text(row_to_json(d)) j",
    "SELECT 'pg_statio_user_tables.' || j.key, sum(j.value::numeric)::text \
     FROM pg_statio_user_tables t, json_each_text(row_to_json(t)) j \
     WHERE j.key NOT IN ('relid', 'schemaname', 'relname') GROUP BY j.key",
];

/// PostgreSQL's code for a relation that does not exist (a view of a newer or older version).
const PG_UNDEFINED_TABLE: &str = "42P01";

/// Reads the server's counters on `conn`; `kind` is the target's kind. Empty for SQLite and the
/// mock, whose counters come from the clients' connections.
pub fn snapshot(conn: &mut dyn Conn, dialect: Dialect) -> Result<Counters, DbError> {
    let mut out = Counters::new();
    let queries: &[&str] = match dialect {
        Dialect::Postgres => &PG_QUERIES,
        Dialect::Mysql => &["SHOW GLOBAL STATUS"],
        _ => &[],
    };
    for sql in queries {
        let rows = match conn.query_rows(sql, 2) {
            Ok(rows) => rows,
            Err(e) if e.code == PG_UNDEFINED_TABLE => continue,
            Err(e) => return Err(e),
        };
        for row in rows {
            let (Some(Some(name)), Some(Some(value))) = (row.first(), row.get(1)) else {
                continue;
            };
            if let Ok(v) = value.trim().parse::<f64>() {
                let name = if dialect == Dialect::Mysql {
                    format!("global_status.{name}")
                } else {
                    name.clone()
                };
                out.insert(name, v);
            }
        }
    }
    Ok(out)
}

/// The InnoDB monitor's text (MySQL and MariaDB), None elsewhere or when it is refused.
pub fn innodb_status(conn: &mut dyn Conn, dialect: Dialect) -> Option<String> {
    if dialect != Dialect::Mysql {
        return None;
    }
    let rows = conn.query_rows("SHOW ENGINE INNODB STATUS", 3).ok()?;
    rows.into_iter().next()?.into_iter().nth(2).flatten()
}

/// Deltas and derived figures of one step. `cache` is the clients' page cache counters (SQLite);
/// `ops` the step's operations (events).
pub fn figures(
    dialect: Dialect,
    before: &Counters,
    after: &Counters,
    cache: Option<[u64; 3]>,
    ops: u64,
    innodb_status: Option<String>,
) -> ServerStats {
    let mut deltas: Counters = after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).copied().unwrap_or(0.0)))
        .collect();
    if let Some([hit, miss, write]) = cache {
        deltas.insert("sqlite.cache_hit".into(), hit as f64);
        deltas.insert("sqlite.cache_miss".into(), miss as f64);
        deltas.insert("sqlite.cache_write".into(), write as f64);
    }
    let d = |name: &str| deltas.get(name).copied();
    let sum = |names: &[&str]| -> Option<f64> {
        let present: Vec<f64> = names.iter().filter_map(|n| d(n)).collect();
        (!present.is_empty()).then(|| present.iter().sum())
    };
    let per_op = |v: Option<f64>| v.filter(|_| ops > 0).map(|v| v / ops as f64);
    let ratio = |hits: Option<f64>, misses: Option<f64>| match (hits, misses) {
        (Some(h), Some(m)) if h + m > 0.0 => Some(h / (h + m)),
        _ => None,
    };
    let (hit_rate, read, written, log) = match dialect {
        Dialect::Postgres => (
            ratio(
                d("pg_stat_database.blks_hit"),
                d("pg_stat_database.blks_read"),
            ),
            d("pg_stat_database.blks_read"),
            // Up to PostgreSQL 16 the bgwriter view counts all three writers; from 17 the
            // checkpointer has its own view and the backends' writes moved to pg_stat_io.
            sum(&[
                "pg_stat_bgwriter.buffers_checkpoint",
                "pg_stat_bgwriter.buffers_clean",
                "pg_stat_bgwriter.buffers_backend",
                "pg_stat_checkpointer.buffers_written",
            ]),
            d("pg_stat_wal.wal_bytes"),
        ),
        Dialect::Mysql => {
            let requests = d("global_status.Innodb_buffer_pool_read_requests");
            let misses = d("global_status.Innodb_buffer_pool_reads");
            (
                requests
                    .zip(misses)
                    .filter(|(r, _)| *r > 0.0)
                    .map(|(r, m)| (1.0 - m / r).max(0.0)),
                d("global_status.Innodb_pages_read"),
                d("global_status.Innodb_pages_written"),
                d("global_status.Innodb_os_log_written")
                    .or_else(|| d("global_status.Innodb_lsn_current")),
            )
        }
        _ => (
            ratio(d("sqlite.cache_hit"), d("sqlite.cache_miss")),
            d("sqlite.cache_miss"),
            d("sqlite.cache_write"),
            None,
        ),
    };
    // The query cache's rates, where it took part (hits or inserts).
    let q = |n: &str| d(&format!("global_status.{n}"));
    let (mut qc_hit, mut qc_insert, mut qc_prune) = (None, None, None);
    if let (Some(hits), Some(inserts), Some(selects)) =
        (q("Qcache_hits"), q("Qcache_inserts"), q("Com_select"))
        && hits + inserts > 0.0
    {
        let lookups = hits + selects;
        if lookups > 0.0 {
            qc_hit = Some(hits / lookups);
            qc_insert = Some(inserts / lookups);
        }
        qc_prune = q("Qcache_lowmem_prunes")
            .filter(|_| inserts > 0.0)
            .map(|p| p / inserts);
    }
    let checkpoints = sum(&[
        "pg_stat_bgwriter.checkpoints_timed",
        "pg_stat_bgwriter.checkpoints_req",
        "pg_stat_checkpointer.num_timed",
        "pg_stat_checkpointer.num_requested",
    ])
    .filter(|_| dialect == Dialect::Postgres);
    ServerStats {
        qcache_hit_rate: qc_hit,
        qcache_insert_rate: qc_insert,
        qcache_prune_rate: qc_prune,
        checkpoints,
        hit_rate,
        pages_read_per_op: per_op(read),
        pages_written_per_op: per_op(written),
        log_bytes_per_op: per_op(log),
        deltas,
        innodb_status,
        db_size_mb: None,
    }
}

/// The database's size in MB (see [`ServerStats::db_size_mb`]); None where it cannot be read.
pub fn db_size_mb(conn: &mut dyn Conn, dialect: Dialect) -> Option<f64> {
    let bytes = match dialect {
        Dialect::Postgres => conn.query_i64("SELECT pg_database_size(current_database())"),
        // The files of the database's tables (file per table): MySQL's view, then MariaDB's;
        // else the tables' data and index lengths (InnoDB's estimate of its pages).
        Dialect::Mysql => ["INNODB_TABLESPACES", "INNODB_SYS_TABLESPACES"]
            .iter()
            .map(|view| {
                conn.query_i64(&format!(
                    "SELECT CAST(SUM(file_size) AS SIGNED) FROM information_schema.{view} \
                     WHERE name LIKE CONCAT(DATABASE(), '/%')"
                ))
            })
            .find(|r| matches!(r, Ok(Some(_))))
            .unwrap_or_else(|| {
                conn.query_i64(
                    "SELECT CAST(COALESCE(SUM(data_length + index_length), 0) AS SIGNED) \
                     FROM information_schema.tables WHERE table_schema = DATABASE()",
                )
            }),
        Dialect::Sqlite => conn.query_i64(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
        ),
        Dialect::Any => return None,
    };
    bytes.ok().flatten().map(|b| b as f64 / 1e6)
}

/// The probe's connection and the counters it read before the run.
type Before = (Option<Box<dyn Conn>>, Counters);

/// Takes the "before" snapshot on its own connection once warm-up is over, while the clients
/// run; `finish` takes the "after" one.
pub struct Probe {
    dialect: Dialect,
    /// Other client backends before the run (PostgreSQL).
    baseline: i64,
    stop: mpsc::Sender<()>,
    thread: JoinHandle<Result<Before, DbError>>,
}

impl Probe {
    /// Connects now (so that a server that refuses fails the step before it runs nothing), and
    /// snapshots at `from` (the measured part's start).
    pub fn start(target: &dyn Target, from: super::MeasureStart) -> Result<Probe, DbError> {
        let dialect = target.dialect();
        let mut conn = target.connect()?;
        let baseline = if dialect == Dialect::Postgres {
            conn.query_i64(PG_OTHER_BACKENDS)?.unwrap_or(0)
        } else {
            0
        };
        // SQLite has no counters to read while the run goes (its size is read after it): the
        // connection that showed the file opens is closed, so that the run's only client may
        // have the process's SQLite files to itself (`sqlite::own_file_table`).
        let mut conn = (dialect != Dialect::Sqlite).then_some(conn);
        let (stop, stopped) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            // Woken early when the run ends within its warm-up.
            let _ = from.wait(&stopped);
            let before = match conn.as_mut() {
                Some(c) => snapshot(c.as_mut(), dialect)?,
                None => Counters::new(),
            };
            Ok((conn, before))
        });
        Ok(Probe {
            dialect,
            baseline,
            stop,
            thread,
        })
    }

    /// The step's figures, read on `target` (the probe's); `cache` and `ops` as for
    /// [`figures`].
    pub fn finish(
        self,
        target: &dyn Target,
        cache: Option<[u64; 3]>,
        ops: u64,
    ) -> Result<ServerStats, DbError> {
        let _ = self.stop.send(());
        let (conn, before) = self.thread.join().unwrap_or_else(|_| {
            Err(DbError::new(
                crate::db::ErrorClass::Fatal,
                "probe",
                "the counter probe stopped",
            ))
        })?;
        let mut conn = match conn {
            Some(c) => c,
            None => target.connect()?,
        };
        if self.dialect == Dialect::Postgres {
            settle_pg_backends(conn.as_mut(), self.baseline);
        }
        let after = snapshot(conn.as_mut(), self.dialect)?;
        let status = innodb_status(conn.as_mut(), self.dialect);
        let mut stats = figures(self.dialect, &before, &after, cache, ops, status);
        stats.db_size_mb = db_size_mb(conn.as_mut(), self.dialect);
        Ok(stats)
    }
}

/// Client backends of this database other than the asking one.
const PG_OTHER_BACKENDS: &str = "SELECT count(*) FROM pg_stat_activity \
    WHERE datname = current_database() AND backend_type = 'client backend' \
    AND pid <> pg_backend_pid()";

/// PostgreSQL backends report their counters when they exit: wait (up to 2 s) for the clients'
/// backends to be gone so that the "after" snapshot holds what they did.
fn settle_pg_backends(conn: &mut dyn Conn, baseline: i64) {
    for _ in 0..40 {
        if conn
            .query_i64(PG_OTHER_BACKENDS)
            .ok()
            .flatten()
            .unwrap_or(0)
            <= baseline
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = conn.batch("SELECT pg_stat_clear_snapshot()");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(pairs: &[(&str, f64)]) -> Counters {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn postgres_figures_come_from_deltas() {
        let before = counters(&[
            ("pg_stat_database.blks_hit", 1000.0),
            ("pg_stat_database.blks_read", 10.0),
            ("pg_stat_bgwriter.buffers_clean", 5.0),
            ("pg_stat_bgwriter.buffers_checkpoint", 0.0),
            ("pg_stat_wal.wal_bytes", 1e6),
        ]);
        let after = counters(&[
            ("pg_stat_database.blks_hit", 1900.0),
            ("pg_stat_database.blks_read", 110.0),
            ("pg_stat_bgwriter.buffers_clean", 25.0),
            ("pg_stat_bgwriter.buffers_checkpoint", 30.0),
            ("pg_stat_wal.wal_bytes", 1.5e6),
        ]);
        let s = figures(Dialect::Postgres, &before, &after, None, 100, None);
        assert_eq!(s.deltas["pg_stat_database.blks_hit"], 900.0);
        assert_eq!(s.hit_rate, Some(0.9));
        assert_eq!(s.pages_read_per_op, Some(1.0));
        assert_eq!(s.pages_written_per_op, Some(0.5));
        assert_eq!(s.log_bytes_per_op, Some(5000.0));
    }

    #[test]
    fn mysql_hit_rate_is_one_minus_disk_reads_over_requests() {
        let before = counters(&[
            ("global_status.Innodb_buffer_pool_read_requests", 0.0),
            ("global_status.Innodb_buffer_pool_reads", 0.0),
            ("global_status.Innodb_pages_written", 7.0),
        ]);
        let after = counters(&[
            ("global_status.Innodb_buffer_pool_read_requests", 400.0),
            ("global_status.Innodb_buffer_pool_reads", 4.0),
            ("global_status.Innodb_pages_written", 27.0),
            ("global_status.Innodb_lsn_current", 2000.0),
        ]);
        let s = figures(Dialect::Mysql, &before, &after, None, 10, Some("x".into()));
        assert_eq!(s.hit_rate, Some(0.99));
        assert_eq!(s.pages_written_per_op, Some(2.0));
        // Innodb_os_log_written missing: the LSN's advance is the log written.
        assert_eq!(s.log_bytes_per_op, Some(200.0));
        assert_eq!(s.pages_read_per_op, None);
        assert_eq!(s.innodb_status.as_deref(), Some("x"));
    }

    #[test]
    fn sqlite_figures_come_from_the_connections() {
        let none = Counters::new();
        let s = figures(Dialect::Sqlite, &none, &none, Some([75, 25, 50]), 50, None);
        assert_eq!(s.hit_rate, Some(0.75));
        assert_eq!(s.pages_read_per_op, Some(0.5));
        assert_eq!(s.pages_written_per_op, Some(1.0));
        assert_eq!(s.log_bytes_per_op, None);
        // No operations: nothing per operation.
        let s = figures(Dialect::Sqlite, &none, &none, Some([1, 1, 1]), 0, None);
        assert_eq!(s.pages_read_per_op, None);
    }
}
