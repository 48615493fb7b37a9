//! Crash-recovery steps (`crash = true`): the managed server is killed with SIGKILL, every
//! process of it, while the step's workload runs at full throughput; then it is started again
//! on the same data directory and timed until it accepts a connection and answers a query.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::cell::CellDb;
use crate::db::{Conn, Dialect, Target};
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
    match target.dialect() {
        Dialect::Postgres => conn
            .query_i64("SELECT (pg_current_wal_lsn() - (pg_control_checkpoint()).redo_lsn)::bigint")
            .ok()?
            .and_then(|v| u64::try_from(v).ok()),
        Dialect::Mysql => {
            let status = crate::metrics::dbstats::innodb_status(conn.as_mut(), Dialect::Mysql)?;
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
    let rollback = if db.db.target.dialect() == Dialect::Mysql {
        Some(recovered_rollback(
            conn.as_mut(),
            &url,
            ROLLBACK_WAIT,
            ROLLBACK_STALL,
        )?)
    } else {
        None
    };
    drop(conn);
    let checks = match workload.verify_after_crash(db.db.target.as_ref()) {
        None => None,
        Some(checked) => {
            checked.map_err(|e| {
                let log = server_log_about_recovery(db);
                Error::Run(format!(
                    "{e}{}",
                    if log.is_empty() {
                        String::new()
                    } else {
                        format!(" (the server's recovery log: {})", log.join(" | "))
                    }
                ))
            })?;
            Some("passed".to_string())
        }
    };
    Ok(Recovery {
        crash_after_s: crash.at_s,
        redo_bytes: crash.redo_bytes,
        seconds,
        recovered_txns: rollback.as_ref().map(|r| r.txns),
        rollback_s: rollback.as_ref().map(|r| r.seconds),
        rollback_left: rollback.as_ref().map(|r| r.left).filter(|&n| n > 0),
        checks,
    })
}

/// The longest wait for InnoDB to roll back what a crash left open, and the longest it may
/// show no progress (a rollback that stopped: the checks then go on, and the record says so).
const ROLLBACK_WAIT: Duration = Duration::from_secs(600);
const ROLLBACK_STALL: Duration = Duration::from_secs(10);

/// What the wait for InnoDB's rollback of the crash's open transactions saw.
struct Rollback {
    /// Recovered transactions at the first look.
    txns: u64,
    seconds: f64,
    /// Recovered transactions still listed when the wait stopped on a stall.
    left: u64,
}

/// InnoDB accepts connections before it has rolled back the transactions a crash left open
/// (a background thread undoes them). Reads are consistent meanwhile (the recovered
/// transactions are active to every read view), but the recovery is not over: waits until no
/// recovered transaction (one without a session) is left in INNODB_TRX, while their undo goes
/// on (at most `stall` without a change of their rows, `bound` in all; Ctrl-C ends it).
fn recovered_rollback(
    conn: &mut dyn Conn,
    url: &str,
    bound: Duration,
    stall: Duration,
) -> Result<Rollback, Error> {
    const LEFT: &str = "SELECT COUNT(*), COALESCE(SUM(trx_rows_modified), 0) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = 0";
    let start = Instant::now();
    let look = |conn: &mut dyn Conn| -> Result<(u64, u64), Error> {
        let rows = conn.query_rows(LEFT, 2).map_err(|e| Error::db(url, e))?;
        let int = |i: usize| {
            rows.first()
                .and_then(|r| r.get(i).cloned().flatten())
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Ok((int(0), int(1)))
    };
    let first = look(conn)?;
    let (mut left, mut rows) = first;
    let mut moved = Instant::now();
    while left > 0 {
        if INTERRUPT.load(Ordering::Relaxed) {
            return Err(Error::Run(
                "interrupted while the server rolled back what the crash left open".into(),
            ));
        }
        if start.elapsed() >= bound || moved.elapsed() >= stall {
            break;
        }
        // InnoDB refreshes what INNODB_TRX shows only when nobody has read it for 100 ms:
        // polled faster, it shows the first look's transactions for good.
        std::thread::sleep(Duration::from_millis(250));
        let now = look(conn)?;
        if now != (left, rows) {
            moved = Instant::now();
        }
        (left, rows) = now;
    }
    let seconds = if left > 0 {
        // Stalled: the rollback's time is up to its last progress.
        moved.duration_since(start).as_secs_f64()
    } else {
        start.elapsed().as_secs_f64()
    };
    Ok(Rollback {
        txns: first.0,
        seconds,
        left,
    })
}

/// What the managed server's log says since the restart about recovery (InnoDB's lines on
/// transactions rolled back, PostgreSQL's on redo), at most eight lines: evidence beside a
/// failed check.
fn server_log_about_recovery(db: &CellDb) -> Vec<String> {
    let Some(server) = db.db.server.as_ref() else {
        return Vec::new();
    };
    let words = ["roll", "transaction", "recover", "redo", "corrupt"];
    let lines: Vec<String> = server
        .log_tail(200)
        .lines()
        .filter(|l| {
            let l = l.to_ascii_lowercase();
            words.iter().any(|w| l.contains(w))
        })
        .map(|l| l.trim().to_string())
        .collect();
    lines[lines.len().saturating_sub(8)..].to_vec()
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
