//! Transaction logs in pgbench 15's formats (`-l`): a line per measured transaction, or with
//! an aggregate interval a line per interval, in one file per job (`PREFIX.PID` for the first,
//! `PREFIX.PID.N` for job N), the clients dealt to the jobs in contiguous blocks as pgbench
//! deals them to its threads.
//!
//! Per transaction: `client_id transaction_no time script_no time_epoch time_us
//! [schedule_lag] [retries]`, `time` the latency in microseconds (`failed` for a transaction
//! given up after its last try). Per interval, every column always (pgbench 15's; 16 made
//! them conditional): `interval_start num_transactions sum_latency sum_latency_2 min_latency
//! max_latency sum_lag sum_lag_2 min_lag max_lag skipped retried retries serialization_failures
//! deadlock_failures` (the failures are not told apart by class here: all counted the first).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::runner::txn_log::{Entry, TxnLogs};

/// What a run's transaction log is to hold.
#[derive(Clone, Debug)]
pub struct TxnLogOpts {
    /// File names begin with it (pgbench's `--log-prefix`, `pgbench_log` by default).
    pub prefix: String,
    /// Files: one per job (pgbench's `-j`).
    pub jobs: u32,
    /// The share of transactions logged (`--sampling-rate`), 1 for all.
    pub sampling: f64,
    /// Seconds per aggregated line (`--aggregate-interval`); 0: a line per transaction.
    pub aggregate: u32,
    /// The schedule lag's columns (`-R`).
    pub paced: bool,
    /// The retries' columns (`--max-tries` other than 1).
    pub retries: bool,
    /// A failed transaction's time names its error (`--failures-detailed`).
    pub failures_detailed: bool,
}

/// One job's file.
struct Job {
    out: BufWriter<File>,
    /// The interval being aggregated: its start (epoch seconds) and figures.
    agg: Option<(u64, Agg)>,
}

#[derive(Default)]
struct Agg {
    count: u64,
    lat: Stats,
    lag: Stats,
    failures: u64,
    skipped: u64,
    retried: u64,
    retries: u64,
}

#[derive(Default)]
struct Stats {
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
}

impl Stats {
    fn add(&mut self, v: f64, first: bool) {
        self.sum += v;
        self.sum2 += v * v;
        self.min = if first { v } else { self.min.min(v) };
        self.max = if first { v } else { self.max.max(v) };
    }
}

pub struct TxnLog {
    opts: TxnLogOpts,
    clients: u32,
    jobs: Vec<Mutex<Job>>,
    /// An instant and the wall clock then, for the lines' epoch times.
    clock: (Instant, f64),
}

impl TxnLog {
    /// Creates the files (an existing one is replaced, as pgbench replaces it). Err names the
    /// file that cannot be written.
    pub fn create(opts: &TxnLogOpts, clients: u32) -> Result<TxnLog, String> {
        let pid = std::process::id();
        let mut jobs = Vec::new();
        for j in 0..opts.jobs.max(1) {
            let name = if j == 0 {
                format!("{}.{pid}", opts.prefix)
            } else {
                format!("{}.{pid}.{j}", opts.prefix)
            };
            let f = File::create(&name)
                .map_err(|e| format!("could not open logfile \"{name}\": {e}"))?;
            jobs.push(Mutex::new(Job {
                out: BufWriter::new(f),
                agg: None,
            }));
        }
        let epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        Ok(TxnLog {
            opts: opts.clone(),
            clients: clients.max(1),
            jobs,
            clock: (Instant::now(), epoch),
        })
    }

    fn epoch_us(&self, at: Instant) -> u64 {
        let s = self.clock.1 + at.saturating_duration_since(self.clock.0).as_secs_f64()
            - self.clock.0.saturating_duration_since(at).as_secs_f64();
        (s * 1e6) as u64
    }

    /// Logs a transaction (or counts it in its interval); `sample` is a uniform draw in [0, 1).
    pub fn log(&self, e: &Entry, sample: f64) {
        let job = (u64::from(e.client) * self.jobs.len() as u64 / u64::from(self.clients)) as usize;
        let Some(job) = self.jobs.get(job) else {
            return;
        };
        let mut job = job.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.epoch_us(e.end);
        if self.opts.aggregate > 0 {
            self.aggregate(&mut job, now / 1_000_000, e);
            return;
        }
        if self.opts.sampling < 1.0 && sample >= self.opts.sampling {
            return;
        }
        let time = match e.failed {
            // Under --failures-detailed, the error's kind where pgbench names one.
            Some(crate::db::ErrorClass::SerializationFailure) if self.opts.failures_detailed => {
                "serialization".to_string()
            }
            Some(crate::db::ErrorClass::Deadlock) if self.opts.failures_detailed => {
                "deadlock".to_string()
            }
            Some(_) => "failed".to_string(),
            None => format!("{:.0}", e.latency_us),
        };
        let mut line = format!(
            "{} {} {time} {} {} {}",
            e.client,
            e.number,
            e.script,
            now / 1_000_000,
            now % 1_000_000
        );
        if self.opts.paced {
            line.push_str(&format!(" {:.0}", e.lag_us));
        }
        if self.opts.retries {
            line.push_str(&format!(" {}", e.retries));
        }
        line.push('\n');
        // A log that cannot be written loses its lines, not the run (as pgbench's fprintf).
        let _ = job.out.write_all(line.as_bytes());
    }

    /// Counts a skipped transaction of `client` in its interval (aggregated logs only: pgbench
    /// writes no line per skipped transaction unless asked per transaction, where it says
    /// `skipped`).
    pub fn skipped(&self, client: u32, number: u64, at: Instant) {
        let job = (u64::from(client) * self.jobs.len() as u64 / u64::from(self.clients)) as usize;
        let Some(job) = self.jobs.get(job) else {
            return;
        };
        let mut job = job.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.epoch_us(at);
        if self.opts.aggregate > 0 {
            let agg = self.advance(&mut job, now / 1_000_000);
            agg.skipped += 1;
            return;
        }
        let line = format!(
            "{client} {number} skipped 0 {} {}{}{}\n",
            now / 1_000_000,
            now % 1_000_000,
            if self.opts.paced { " 0" } else { "" },
            if self.opts.retries { " 0" } else { "" }
        );
        let _ = job.out.write_all(line.as_bytes());
    }

    /// The interval holding `second`, the ones before it written out.
    fn advance<'a>(&self, job: &'a mut Job, second: u64) -> &'a mut Agg {
        let step = u64::from(self.opts.aggregate);
        let start = match job.agg.as_ref() {
            Some((s, _)) => *s,
            None => second,
        };
        let mut start = start;
        while second >= start + step {
            if let Some((s, agg)) = job.agg.take() {
                let line = self.line(s, &agg);
                let _ = job.out.write_all(line.as_bytes());
            }
            start += step;
            job.agg = Some((start, Agg::default()));
        }
        &mut job.agg.get_or_insert_with(|| (start, Agg::default())).1
    }

    fn aggregate(&self, job: &mut Job, second: u64, e: &Entry) {
        let agg = self.advance(job, second);
        if e.failed.is_some() {
            agg.failures += 1;
            return;
        }
        let first = agg.count == 0;
        agg.count += 1;
        agg.lat.add(e.latency_us, first);
        agg.lag.add(e.lag_us, first);
        if e.retries > 0 {
            agg.retried += 1;
            agg.retries += e.retries;
        }
    }

    fn line(&self, start: u64, a: &Agg) -> String {
        let lag = if self.opts.paced {
            &a.lag
        } else {
            &Stats::default()
        };
        format!(
            "{start} {} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {:.0} {} {} {} {} 0\n",
            a.count,
            a.lat.sum,
            a.lat.sum2,
            a.lat.min,
            a.lat.max,
            lag.sum,
            lag.sum2,
            lag.min,
            lag.max,
            a.skipped,
            a.retried,
            a.retries,
            a.failures
        )
    }

    /// Writes the intervals still open and flushes every file.
    pub fn finish(&self) {
        for job in &self.jobs {
            let mut job = job.lock().unwrap_or_else(|p| p.into_inner());
            if let Some((s, agg)) = job.agg.take() {
                let line = self.line(s, &agg);
                let _ = job.out.write_all(line.as_bytes());
            }
            let _ = job.out.flush();
        }
    }
}

impl crate::runner::txn_log::TxnLog for TxnLog {
    fn log(&self, e: &Entry, sample: f64) {
        TxnLog::log(self, e, sample);
    }

    fn skipped(&self, client: u32, number: u64, at: Instant) {
        TxnLog::skipped(self, client, number, at);
    }

    fn finish(&self) {
        TxnLog::finish(self);
    }
}

impl TxnLogs for TxnLogOpts {
    fn open(&self, clients: u32) -> Result<Box<dyn crate::runner::txn_log::TxnLog>, String> {
        Ok(Box::new(TxnLog::create(self, clients)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(client: u32, number: u64, end: Instant, latency_us: f64) -> Entry {
        Entry {
            client,
            number,
            script: 0,
            latency_us,
            lag_us: 0.0,
            retries: 0,
            end,
            failed: None,
        }
    }

    #[test]
    fn lines_per_transaction_and_per_interval_in_pgbenchs_columns() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("log").to_string_lossy().into_owned();
        let mut o = TxnLogOpts {
            prefix: prefix.clone(),
            jobs: 2,
            sampling: 1.0,
            aggregate: 0,
            paced: true,
            retries: true,
            failures_detailed: false,
        };
        let log = TxnLog::create(&o, 4).unwrap();
        let t = Instant::now();
        log.log(&entry(0, 0, t, 1234.4), 0.5);
        log.log(&entry(3, 7, t, 99.0), 0.5);
        log.log(
            &Entry {
                failed: Some(crate::db::ErrorClass::SerializationFailure),
                ..entry(1, 1, t, 0.0)
            },
            0.5,
        );
        log.finish();
        let pid = std::process::id();
        let first = std::fs::read_to_string(format!("{prefix}.{pid}")).unwrap();
        let second = std::fs::read_to_string(format!("{prefix}.{pid}.1")).unwrap();
        let cols: Vec<Vec<&str>> = first.lines().map(|l| l.split(' ').collect()).collect();
        // Clients 0 and 1 are the first job's, 3 the second's.
        assert_eq!(cols.len(), 2, "{first}");
        assert_eq!(&cols[0][..4], ["0", "0", "1234", "0"]);
        assert_eq!(cols[0].len(), 8);
        assert_eq!(&cols[1][..3], ["1", "1", "failed"]);
        assert!(second.starts_with("3 7 99 0 "), "{second}");
        // Aggregated: two transactions in one interval, one failure.
        o.aggregate = 5;
        o.jobs = 1;
        o.paced = false;
        o.retries = false;
        let log = TxnLog::create(&o, 1).unwrap();
        log.log(&entry(0, 0, t, 100.0), 0.0);
        log.log(&entry(0, 1, t, 300.0), 0.0);
        log.log(
            &Entry {
                failed: Some(crate::db::ErrorClass::SerializationFailure),
                ..entry(0, 2, t, 0.0)
            },
            0.0,
        );
        log.finish();
        let text = std::fs::read_to_string(format!("{prefix}.{pid}")).unwrap();
        let cols: Vec<&str> = text.trim().split(' ').collect();
        assert_eq!(
            &cols[1..],
            [
                "2", "400", "100000", "100", "300", "0", "0", "0", "0", "0", "0", "0", "1", "0"
            ],
            "{text}"
        );
    }
}
