//! The postwrite pause (docs/workloads.md section 4): let write-back and compaction catch up so the
//! next phase starts from a comparable state, then sleep out the rest of the pause.
//!
//! PostgreSQL: VACUUM (ANALYZE) every table, then CHECKPOINT. InnoDB: the dirty-page limits at
//! their minimum until the dirty pages are near zero or the time is up, then restored; ANALYZE
//! TABLE every table. SQLite: `PRAGMA wal_checkpoint(TRUNCATE)` and ANALYZE.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::db::{Conn, DbError, Dialect, Target};
use crate::results::PauseReport;

/// Dirty pages at or below this count as flushed.
const DIRTY_NEAR_ZERO: i64 = 16;

/// Runs the postwrite maintenance for the workloads' tables on `target` (`tables` sbtest tables
/// at most, the workload families' own, TPC-C's: those it holds), then sleeps until
/// `seconds` have passed since the start (or Ctrl-C).
pub fn postwrite(
    target: &dyn Target,
    tables: u32,
    seconds: f64,
    interrupt: &AtomicBool,
) -> Result<PauseReport, DbError> {
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(seconds);
    let mut report = PauseReport {
        planned_s: seconds,
        ..PauseReport::default()
    };
    let mut conn = target.connect()?;
    let names = tables_here(conn.as_mut(), tables)?;
    match target.dialect() {
        Dialect::Postgres => {
            for t in &names {
                run(conn.as_mut(), &format!("VACUUM (ANALYZE) {t}"), &mut report)?;
            }
            // CHECKPOINT needs superuser (or pg_checkpoint): a server dbsweep did not start may
            // refuse it, which leaves a warning, not a failed step.
            if let Err(e) = conn.batch("CHECKPOINT") {
                report.warnings.push(format!("CHECKPOINT: {e}"));
            } else {
                report.actions.push("CHECKPOINT".into());
            }
        }
        Dialect::Mysql => {
            flush_innodb(conn.as_mut(), end, interrupt, &mut report)?;
            for t in &names {
                run(conn.as_mut(), &format!("ANALYZE TABLE {t}"), &mut report)?;
            }
        }
        Dialect::Sqlite => {
            run(
                conn.as_mut(),
                "PRAGMA wal_checkpoint(TRUNCATE)",
                &mut report,
            )?;
            run(conn.as_mut(), "ANALYZE", &mut report)?;
        }
        _ => {}
    }
    drop(conn);
    while !interrupt.load(Ordering::Relaxed) {
        let now = Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(100)));
    }
    Ok(report)
}

/// The tables of dbsweep's workloads that the database holds: the plan's sbtest tables and
/// the workload families' own.
fn tables_here(conn: &mut dyn Conn, tables: u32) -> Result<Vec<String>, DbError> {
    let candidates = (1..=tables)
        .map(|n| format!("sbtest{n}"))
        .chain(crate::workload::families::tables().map(str::to_string));
    let mut here = Vec::new();
    for name in candidates {
        if conn.table_exists(&name)? {
            here.push(name);
        }
    }
    Ok(here)
}

fn run(conn: &mut dyn Conn, sql: &str, report: &mut PauseReport) -> Result<(), DbError> {
    // ANALYZE TABLE and wal_checkpoint return a result set: read it as rows.
    conn.query_rows(sql, 1)?;
    report.actions.push(sql.to_string());
    Ok(())
}

fn dirty_pages(conn: &mut dyn Conn) -> Result<Option<i64>, DbError> {
    let rows = conn.query_rows(
        "SHOW GLOBAL STATUS LIKE 'Innodb_buffer_pool_pages_dirty'",
        2,
    )?;
    Ok(rows
        .first()
        .and_then(|r| r.get(1).cloned().flatten())
        .and_then(|v| v.parse().ok()))
}

/// Sets the dirty-page limits to 0 until InnoDB has flushed (or `end`), then restores them.
fn flush_innodb(
    conn: &mut dyn Conn,
    end: Instant,
    interrupt: &AtomicBool,
    report: &mut PauseReport,
) -> Result<(), DbError> {
    let pct = conn.query_text("SELECT @@GLOBAL.innodb_max_dirty_pages_pct")?;
    let lwm = conn.query_text("SELECT @@GLOBAL.innodb_max_dirty_pages_pct_lwm")?;
    let (Some(pct), Some(lwm)) = (pct, lwm) else {
        report
            .warnings
            .push("no InnoDB dirty-page settings: nothing flushed".into());
        return Ok(());
    };
    let set = |conn: &mut dyn Conn, p: &str, l: &str| -> Result<(), DbError> {
        // The low-water mark may not exceed the limit: lower it first, raise it last.
        conn.batch(&format!("SET GLOBAL innodb_max_dirty_pages_pct_lwm = {l}"))?;
        conn.batch(&format!("SET GLOBAL innodb_max_dirty_pages_pct = {p}"))
    };
    if let Err(e) = set(conn, "0", "0") {
        report
            .warnings
            .push(format!("cannot lower the dirty-page limits: {e}"));
        return Ok(());
    }
    let before = dirty_pages(conn)?.unwrap_or(0);
    let mut now_dirty = before;
    while Instant::now() < end && !interrupt.load(Ordering::Relaxed) {
        now_dirty = dirty_pages(conn)?.unwrap_or(0);
        if now_dirty <= DIRTY_NEAR_ZERO {
            break;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    conn.batch(&format!("SET GLOBAL innodb_max_dirty_pages_pct = {pct}"))?;
    conn.batch(&format!(
        "SET GLOBAL innodb_max_dirty_pages_pct_lwm = {lwm}"
    ))?;
    report.actions.push(format!(
        "InnoDB dirty pages flushed from {before} to {now_dirty} (limits 0, then restored to {pct} and {lwm})"
    ));
    Ok(())
}
