//! Crash-recovery steps (`crash = true`): the managed server is killed with SIGKILL, every
//! process of it, while the step's workload runs at full throughput; then it is started again
//! on the same data directory and timed until it accepts a connection and answers a query.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cell::CellDb;
use crate::db::Target;
use crate::error::Error;
use crate::interrupt::INTERRUPT;
use crate::measure::Db;
use crate::results::Recovery;
use crate::workload::Workload;

/// What the crasher saw at the crash.
pub(super) struct Crash {
    redo_bytes: Option<u64>,
    /// Seconds into the measured part at the crash.
    at_s: f64,
}

/// Waits until the measured part has run `after` seconds (told by each interval's time in
/// `ticks`, once a second), then notes the redo since the last checkpoint, kills the server's
/// processes, and stops the run (`stop`). Gives up when the run ends first (`ticks` closes) or
/// on Ctrl-C.
pub(super) fn kill_at(
    db: &Db,
    after: f64,
    stop: &AtomicBool,
    ticks: &mpsc::Receiver<f64>,
) -> Result<Crash, String> {
    let at_s = loop {
        if INTERRUPT.load(Ordering::Relaxed) {
            stop.store(true, Ordering::Relaxed);
            return Err("interrupted before the crash".into());
        }
        // Looks at Ctrl-C every 50 ms.
        match ticks.recv_timeout(Duration::from_millis(50)) {
            Ok(t) if t >= after => break t,
            Ok(_) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(
                    "the run ended before the crash point: give the step a time longer than crash_after"
                        .into(),
                );
            }
        }
    };
    let Some(server) = db.server.as_ref() else {
        stop.store(true, Ordering::Relaxed);
        return Err("crash = true needs a managed server".into());
    };
    let redo_bytes = redo_since_checkpoint(db.target.as_ref());
    for pid in server.pids() {
        // SAFETY: kill(2) on the managed server's own processes.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
    }
    // After the kill: the clients' lost connections are the crash's, not errors of the run.
    stop.store(true, Ordering::Relaxed);
    Ok(Crash { redo_bytes, at_s })
}

/// Redo written since the last checkpoint, as the server tells it; None when it cannot.
/// InnoDB's from its monitor's LOG section (`Log sequence number`, `Last checkpoint at`),
/// which MariaDB and every MySQL print alike (MySQL 8 has no `Innodb_lsn_*` status).
fn redo_since_checkpoint(target: &dyn Target) -> Option<u64> {
    let mut conn = target.connect().ok()?;
    match target.kind() {
        "postgres" => conn
            .query_i64("SELECT (pg_current_wal_lsn() - (pg_control_checkpoint()).redo_lsn)::bigint")
            .ok()?
            .and_then(|v| u64::try_from(v).ok()),
        "mysql" => {
            let status = crate::metrics::dbstats::innodb_status(conn.as_mut(), "mysql")?;
            innodb_redo(&status)
        }
        _ => None,
    }
}

/// `Log sequence number` minus `Last checkpoint at` in an InnoDB monitor text.
fn innodb_redo(status: &str) -> Option<u64> {
    let number = |label: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.trim_start().starts_with(label))?;
        line.trim_start()[label.len()..]
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    number("Log sequence number")?.checked_sub(number("Last checkpoint at")?)
}

/// Starts the crashed server again on its data directory and times its recovery; runs
/// TPC-C's consistency checks on TPC-C data.
pub(super) fn recover(
    db: &mut CellDb,
    crash: &Crash,
    workload: &dyn Workload,
) -> Result<Recovery, Error> {
    let url = db.db.target.display_url();
    let server = db
        .db
        .server
        .as_mut()
        .ok_or_else(|| Error::Run("crash = true needs a managed server".into()))?;
    // Reaps the killed processes (and waits until they are gone) outside the timing.
    server.kill();
    let start = Instant::now();
    server
        .restart()
        .map_err(|e| Error::Run(format!("restarting the server after the crash: {e}")))?;
    let mut conn = db.db.target.connect().map_err(|e| Error::db(&url, e))?;
    conn.query_i64("SELECT 1").map_err(|e| Error::db(&url, e))?;
    let seconds = start.elapsed().as_secs_f64();
    drop(conn);
    let checks = if workload.name() == "tpcc" {
        crate::workload::tpcc::verify_conditions(db.db.target.as_ref(), true)
            .map_err(|e| Error::Run(format!("TPC-C's consistency checks after the crash: {e}")))?;
        Some("passed".to_string())
    } else {
        None
    };
    Ok(Recovery {
        crash_after_s: crash.at_s,
        redo_bytes: crash.redo_bytes,
        seconds,
        checks,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn redo_since_the_checkpoint_from_the_innodb_monitor() {
        let mysql = "---\nLOG\n---\nLog sequence number          34578262\nLog buffer assigned up to    34578262\nLast checkpoint at           34570000\n";
        assert_eq!(super::innodb_redo(mysql), Some(8262));
        let mariadb = "LOG\n---\nLog sequence number 50000\nLog flushed up to   50000\nLast checkpoint at  41000\n";
        assert_eq!(super::innodb_redo(mariadb), Some(9000));
        assert_eq!(super::innodb_redo("nothing"), None);
    }
}
