//! Wait profiles: what the benchmark's server sessions are doing, sampled from one extra
//! connection during the measured part of a run. PostgreSQL: `pg_stat_activity`'s wait event
//! of each client backend of the database ("CPU" for an active one without a wait).
//! MariaDB/MySQL: the process list, with InnoDB's `LOCK WAIT` transactions as row-lock waits.
//! A profile is the share of samples per event: where the sessions' time goes.

use std::collections::BTreeMap;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::db::{DbError, Dialect, ErrorClass, Target};
use crate::results::diagnosis::{InstrumentWait, WaitEvent, WaitProfile};

/// Instruments kept per profile.
pub const TOP_INSTRUMENTS: usize = 10;

/// Waits by instrument: (count, picoseconds).
type InstrumentTotals = BTreeMap<String, (u64, u64)>;

/// performance_schema's waits by instrument, when it is on.
fn instrument_waits(conn: &mut dyn crate::db::Conn) -> Result<Option<InstrumentTotals>, DbError> {
    if conn.query_i64("SELECT @@performance_schema")? != Some(1) {
        return Ok(None);
    }
    let mut out = BTreeMap::new();
    conn.simple(
        "SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT \
         FROM performance_schema.events_waits_summary_global_by_event_name \
         WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'",
        &mut |row| {
            let text = |i: usize| row.get(i).and_then(|b| std::str::from_utf8(b).ok());
            let num = |i: usize| text(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
            if let Some(name) = text(0) {
                out.insert(name.to_string(), (num(1), num(2)));
            }
        },
    )?;
    Ok(Some(out))
}

/// The client backends of the database that connected after the sampler: the run's clients
/// (dbsweep's own counter probe connects before, other users' sessions long before). Counted
/// by the server per distinct state: a thousand paced terminals are a few rows a round, not a
/// thousand for the client to read and classify 20 times a second.
const PG_SAMPLE: &str = "SELECT state, wait_event_type, wait_event, count(*) FROM pg_stat_activity \
    WHERE datname = current_database() AND backend_type = 'client backend' \
    AND backend_start > (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()) \
    GROUP BY 1, 2, 3";

/// The sessions on the database that connected after the sampler (ids only grow), with their
/// InnoDB transaction's state, counted per distinct state as PostgreSQL's.
const MYSQL_SAMPLE: &str = "SELECT p.COMMAND, p.STATE, t.trx_state, COUNT(*) \
    FROM information_schema.PROCESSLIST p \
    LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID \
    WHERE p.DB = DATABASE() AND p.ID > CONNECTION_ID() AND p.COMMAND <> 'Daemon' \
    GROUP BY p.COMMAND, p.STATE, t.trx_state";

/// InnoDB's row lock counters: waits and their total time in ms.
fn row_lock_counters(conn: &mut dyn crate::db::Conn) -> Result<[u64; 2], DbError> {
    let mut out = [0u64; 2];
    conn.simple(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_row_lock_waits', 'Innodb_row_lock_time')",
        &mut |row| {
            let name = row.get(0).map(String::from_utf8_lossy).unwrap_or_default();
            let value: u64 = row
                .get(1)
                .and_then(|b| std::str::from_utf8(b).ok())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            match name.as_ref() {
                "Innodb_row_lock_waits" => out[0] = value,
                "Innodb_row_lock_time" => out[1] = value,
                _ => {}
            }
        },
    )?;
    Ok(out)
}

/// The event of one sampled session: the query's three columns.
fn classify(dialect: Dialect, cols: [Option<&str>; 3]) -> String {
    let [a, b, c] = cols.map(|v| v.filter(|s| !s.is_empty()));
    if dialect == Dialect::Postgres {
        // state, wait_event_type, wait_event
        return match (b, c, a) {
            (Some(t), Some(e), _) => format!("{t}:{e}"),
            (_, _, Some("active")) => "CPU".into(),
            (_, _, Some(state)) => state.to_string(),
            _ => "unknown".into(),
        };
    }
    // COMMAND, STATE, trx_state
    match (a, b, c) {
        (_, _, Some("LOCK WAIT")) => "Lock:row lock wait".into(),
        (Some("Sleep"), _, _) => "Client:Sleep".into(),
        (_, Some(state), _) => format!("Query:{state}"),
        (Some(command), None, _) => format!("Query:{command}"),
        _ => "unknown".into(),
    }
}

/// Samples a run's sessions on a thread of its own until `finish`.
pub struct WaitSampler {
    stop: mpsc::Sender<()>,
    done: mpsc::Receiver<Result<WaitProfile, DbError>>,
}

/// How long `finish` waits for the sampler's last round and closing counters: a server that
/// stopped answering costs the step its profile, not a hang.
const FINISH_BOUND: Duration = Duration::from_secs(10);

impl WaitSampler {
    /// Connects now and samples `hz` times a second from `from` (the measured part's start); None for a
    /// target without sessions to sample (SQLite, the mock).
    pub fn start(
        target: &dyn Target,
        from: super::MeasureStart,
        hz: f64,
    ) -> Result<Option<WaitSampler>, DbError> {
        let dialect = target.dialect();
        if hz.is_nan() || hz <= 0.0 {
            return Ok(None);
        }
        let (query, source) = match dialect {
            Dialect::Postgres => (PG_SAMPLE, "pg_stat_activity"),
            Dialect::Mysql => (MYSQL_SAMPLE, "processlist"),
            Dialect::Sqlite => return Ok(Some(Self::sqlite_busy(from, hz))),
            Dialect::Any => return Ok(None),
        };
        let mut conn = target.connect()?;
        let (stop, stopped) = mpsc::channel::<()>();
        let (done_tx, done) = mpsc::channel();
        let mut sample = move || -> Result<WaitProfile, DbError> {
            let mut counts: BTreeMap<String, u64> = BTreeMap::new();
            let (mut rounds, mut samples) = (0u64, 0u64);
            // The run ended within its warm-up: nothing measured, nothing sampled.
            let measured = from.wait(&stopped);
            let period = Duration::from_secs_f64(1.0 / hz);
            let (locks_before, instruments_before, innodb_before) =
                if measured && dialect == Dialect::Mysql {
                    (
                        Some(row_lock_counters(conn.as_mut())?),
                        // A server that will not show them (no privilege) has none: no failure.
                        instrument_waits(conn.as_mut()).unwrap_or(None),
                        crate::metrics::innodb::read(conn.as_mut()).ok(),
                    )
                } else {
                    (None, None, None)
                };
            let mut next = Instant::now();
            let mut sampling = measured;
            while sampling {
                conn.simple(query, &mut |row| {
                    let col = |i: usize| row.get(i).and_then(|b| std::str::from_utf8(b).ok());
                    let n: u64 = col(3).and_then(|v| v.parse().ok()).unwrap_or(0);
                    *counts
                        .entry(classify(dialect, [col(0), col(1), col(2)]))
                        .or_default() += n;
                    samples += n;
                })?;
                rounds += 1;
                next += period;
                let now = Instant::now();
                if next < now {
                    // A slow round: the next one now, not a burst to catch up.
                    next = now;
                }
                sampling = matches!(
                    stopped.recv_timeout(next - now),
                    Err(RecvTimeoutError::Timeout)
                );
            }
            let locks = match locks_before {
                Some(before) => {
                    let after = row_lock_counters(conn.as_mut())?;
                    Some([
                        after[0].saturating_sub(before[0]),
                        after[1].saturating_sub(before[1]),
                    ])
                }
                None => None,
            };
            let innodb = innodb_before.and_then(|before| {
                let after = crate::metrics::innodb::read(conn.as_mut()).ok()?;
                Some(crate::metrics::innodb::delta(&before, &after))
            });
            let mut instruments = Vec::new();
            if let Some(before) = instruments_before
                && let Some(after) = instrument_waits(conn.as_mut()).unwrap_or(None)
            {
                for (event, (n, ps)) in after {
                    let (n0, ps0) = before.get(&event).copied().unwrap_or((0, 0));
                    if n > n0 {
                        instruments.push(InstrumentWait {
                            event,
                            count: n - n0,
                            ms: ps.saturating_sub(ps0) as f64 / 1e9,
                        });
                    }
                }
                instruments.sort_by(|a, b| b.ms.total_cmp(&a.ms));
                instruments.truncate(TOP_INSTRUMENTS);
            }
            let mut events: Vec<WaitEvent> = counts
                .into_iter()
                .map(|(event, n)| WaitEvent {
                    event,
                    samples: n,
                    share: n as f64 / samples.max(1) as f64,
                })
                .collect();
            events.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.event.cmp(&b.event)));
            Ok(WaitProfile {
                source: source.into(),
                hz,
                rounds,
                samples,
                events,
                row_lock_waits: locks.map(|l| l[0]),
                row_lock_ms: locks.map(|l| l[1]),
                instruments,
                innodb,
                busy_waits: None,
                busy_ms: None,
                busy_retries: None,
            })
        };
        // Detached: `finish` takes its result with a bound.
        std::thread::spawn(move || {
            let _ = done_tx.send(sample());
        });
        Ok(Some(WaitSampler { stop, done }))
    }

    /// Embedded SQLite has no sessions to sample: its busy handler counts every wait for a
    /// lock exactly; the profile is the counters' change over the measured part.
    fn sqlite_busy(from: super::MeasureStart, hz: f64) -> WaitSampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let (done_tx, done) = mpsc::channel();
        std::thread::spawn(move || {
            let measured = from.wait(&stopped);
            let before = crate::db::sqlite::busy_counters();
            if measured {
                let _ = stopped.recv();
            }
            let after = crate::db::sqlite::busy_counters();
            let (waits, ns, retries) = if measured {
                (after.0 - before.0, after.1 - before.1, after.2 - before.2)
            } else {
                (0, 0, 0)
            };
            let _ = done_tx.send(Ok(WaitProfile {
                source: "SQLite busy handler".into(),
                hz,
                rounds: 0,
                samples: 0,
                events: Vec::new(),
                row_lock_waits: None,
                row_lock_ms: None,
                instruments: Vec::new(),
                innodb: None,
                busy_waits: Some(waits),
                busy_ms: Some(ns as f64 / 1e6),
                busy_retries: Some(retries),
            }));
        });
        WaitSampler { stop, done }
    }

    /// Stops sampling and returns the profile.
    pub fn finish(self) -> Result<WaitProfile, DbError> {
        let _ = self.stop.send(());
        let gone = |why: &str| Err(DbError::new(ErrorClass::Fatal, "waits", why));
        match self.done.recv_timeout(FINISH_BOUND) {
            Ok(profile) => profile,
            Err(RecvTimeoutError::Timeout) => gone(&format!(
                "the wait sampler's server did not answer within {} s",
                FINISH_BOUND.as_secs()
            )),
            Err(RecvTimeoutError::Disconnected) => gone("the wait sampler stopped"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_classified_by_their_wait_or_cpu() {
        let pg = |a, b, c| classify(Dialect::Postgres, [a, b, c]);
        assert_eq!(pg(Some("active"), None, None), "CPU");
        assert_eq!(
            pg(Some("active"), Some("Lock"), Some("transactionid")),
            "Lock:transactionid"
        );
        assert_eq!(
            pg(Some("idle"), Some("Client"), Some("ClientRead")),
            "Client:ClientRead"
        );
        let my = |a, b, c| classify(Dialect::Mysql, [a, b, c]);
        assert_eq!(
            my(Some("Query"), Some("Updating"), Some("LOCK WAIT")),
            "Lock:row lock wait"
        );
        assert_eq!(my(Some("Sleep"), Some(""), None), "Client:Sleep");
        assert_eq!(
            my(Some("Query"), Some("Sending data"), Some("RUNNING")),
            "Query:Sending data"
        );
    }
}
