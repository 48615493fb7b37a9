//! A client's counters and latency histograms, the recorder that keeps them per interval, and the snapshot a report reads.

use super::Hist;
use hdrhistogram::Histogram;

use crate::db::{ErrorClass, QueryCounts};
use crate::results::figures::Interval;
pub use crate::results::{HIST_MAX_NS, new_histogram};
use crate::results::{HistogramData, Latency, StatementFigures};

/// Number of retryable error classes, each counted apart.
pub const RETRY_CLASSES: usize = ErrorClass::RETRYABLE.len();

/// Counters of a thread or a merged interval.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Counters {
    pub events: u64,
    pub queries: QueryCounts,
    /// Retried events by error class, in [`ErrorClass::RETRYABLE`] order.
    pub retries: [u64; RETRY_CLASSES],
    pub reconnects: u64,
    /// Errors a script counted itself (`SB_CNT_ERROR`).
    pub script_errors: u64,
    /// Events that lost their connection and were not retried because the run ended first.
    pub lost_events: u64,
    /// Under `--rate`: the sum and maximum of how late events started against their schedule.
    pub lag_sum_ns: u64,
    pub lag_max_ns: u64,
    /// The events' latencies added up: the time the thread spent in events (sysbench's
    /// "execution time").
    pub busy_ns: u64,
    /// Under `--max-tries`: events given up after their last try failed (pgbench's failed
    /// transactions), and events that succeeded after a retry.
    pub failed_events: u64,
    /// Of the failed events, those whose last try met a deadlock, and a serialization
    /// failure (pgbench's `--failures-detailed`).
    pub failed_deadlocks: u64,
    pub failed_serialization: u64,
    pub retried_events: u64,
    /// Under `--latency-limit`: events that took longer, and (with `--rate`) events skipped
    /// because they were already that late when due.
    pub late_events: u64,
    pub skipped_events: u64,
    /// Time spent in `--reconnect`'s reconnections (pgbench's `-C`).
    pub reconnect_ns: u64,
}

impl Counters {
    pub fn add(&mut self, o: &Counters) {
        self.events += o.events;
        self.queries.reads += o.queries.reads;
        self.queries.writes += o.queries.writes;
        self.queries.others += o.queries.others;
        self.queries.rows += o.queries.rows;
        for (a, b) in self.retries.iter_mut().zip(o.retries) {
            *a += b;
        }
        self.reconnects += o.reconnects;
        self.script_errors += o.script_errors;
        self.lost_events += o.lost_events;
        self.lag_sum_ns += o.lag_sum_ns;
        self.lag_max_ns = self.lag_max_ns.max(o.lag_max_ns);
        self.busy_ns += o.busy_ns;
        self.failed_events += o.failed_events;
        self.failed_deadlocks += o.failed_deadlocks;
        self.failed_serialization += o.failed_serialization;
        self.retried_events += o.retried_events;
        self.late_events += o.late_events;
        self.skipped_events += o.skipped_events;
        self.reconnect_ns += o.reconnect_ns;
    }

    /// Events retried after an error.
    pub fn retried(&self) -> u64 {
        self.retries.iter().sum()
    }

    /// Errors as sysbench reports them (`err/s`, ignored errors): the retried events and the
    /// errors a script counted itself.
    pub fn errors(&self) -> u64 {
        self.retried() + self.script_errors
    }

    /// The queries, as the results file counts them.
    pub fn query_totals(&self) -> crate::results::Queries {
        crate::results::Queries {
            read: self.queries.reads,
            write: self.queries.writes,
            other: self.queries.others,
            total: self.queries.total(),
            rows: self.queries.rows,
        }
    }
}

/// One transaction type's figures, for workloads that mix several (TPC-C).
#[derive(Clone)]
pub struct KindStats {
    pub latency: Hist,
    pub events: u64,
    /// Events retried after a retryable error (each retry counted).
    pub retries: u64,
    /// Events that ended in a rollback the workload expects (TPC-C's 1% of New-Orders).
    pub rollbacks: u64,
    /// Events given up after their last try failed (`--max-tries`): of this type, or after
    /// this statement's error; of them, those whose last error was a serialization failure,
    /// and a deadlock (types only).
    pub failures: u64,
    pub failed_serialization: u64,
    pub failed_deadlocks: u64,
    /// Events retried at least once, done or failed (types only; pgbench's "retried").
    pub retried: u64,
}

impl Default for KindStats {
    fn default() -> Self {
        KindStats {
            latency: Hist::new(),
            events: 0,
            retries: 0,
            rollbacks: 0,
            failures: 0,
            failed_serialization: 0,
            failed_deadlocks: 0,
            retried: 0,
        }
    }
}

impl KindStats {
    fn add(&mut self, o: &KindStats) {
        self.latency.add(&o.latency);
        self.events += o.events;
        self.retries += o.retries;
        self.rollbacks += o.rollbacks;
        self.failures += o.failures;
        self.failed_serialization += o.failed_serialization;
        self.failed_deadlocks += o.failed_deadlocks;
        self.retried += o.retried;
    }

    /// Adds `events` events whose latencies are `latency` (a one-statement recorder's copy).
    fn add_copy(&mut self, latency: &Hist, events: u64) {
        self.latency.add(latency);
        self.events += events;
    }

    fn reset(&mut self) {
        self.latency.reset();
        self.events = 0;
        self.retries = 0;
        self.rollbacks = 0;
        self.failures = 0;
        self.failed_serialization = 0;
        self.failed_deadlocks = 0;
        self.retried = 0;
    }
}

/// Adds `from` into `into` kind by kind, growing `into` as needed.
fn add_kinds(into: &mut Vec<KindStats>, from: &[KindStats]) {
    if into.len() < from.len() {
        into.resize_with(from.len(), KindStats::default);
    }
    for (a, b) in into.iter_mut().zip(from) {
        // An empty histogram costs a walk over its buckets; most kinds are empty in most
        // intervals of a client.
        if b.events > 0 || b.retries > 0 || b.failures > 0 {
            a.add(b);
        }
    }
}

/// One client thread's measurements since the reporter last took them.
pub struct Recorder {
    pub latency: Hist,
    pub counters: Counters,
    /// Per transaction type, for workloads that have types; empty otherwise.
    pub kinds: Vec<KindStats>,
    /// Per statement kind of the event (the oltp workloads' point select, COMMIT, ...), for
    /// workloads that time their statements; empty otherwise.
    pub statements: Vec<KindStats>,
    /// Where clients queue (for a worker or a shared connection): the time from an event's
    /// due instant to its start, per transaction type (one for workloads without types);
    /// empty otherwise.
    pub queue: Vec<KindStats>,
    /// A statement histogram that `latency` stands for, not yet written out.
    solo: Solo,
}

/// While every event recorded since the recorder was emptied ran one statement, always of the
/// same kind, timed exactly as long as the event (a point select), that statement's histogram
/// is a copy of the events' one: the recorder keeps only the count and writes the copy when an
/// event breaks the pattern or the recorder is read. Each such event then costs one histogram
/// record rather than two; a record's count is a cache line, usually cold
/// after the client slept in its receive.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Solo {
    /// No event recorded yet.
    Empty,
    /// `events` events so far, each one statement of kind `statement` as long as itself.
    Same { statement: u16, events: u64 },
    /// Statements are recorded one by one.
    Off,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::with_kinds(0, 0)
    }
}

impl Recorder {
    pub fn with_kinds(kinds: usize, statements: usize) -> Recorder {
        let stats = |n| (0..n).map(|_| KindStats::default()).collect();
        Recorder {
            latency: Hist::new(),
            counters: Counters::default(),
            kinds: stats(kinds),
            statements: stats(statements),
            queue: Vec::new(),
            solo: Solo::Empty,
        }
    }

    /// The bytes its histograms will hold, about: each a directory and the pages of a few
    /// octaves of latencies (8 KB; 1,000 SQLite clients of oltp_point_select took 4-6 pages
    /// a histogram).
    pub fn expected_bytes(&self) -> u64 {
        let histograms = 1 + self.kinds.len() + self.statements.len() + self.queue.len();
        histograms as u64 * super::hist::EXPECTED_BYTES
    }

    /// With queue times recorded per transaction type (one for a workload without types).
    pub fn with_queue(mut self) -> Recorder {
        let n = self.kinds.len().max(1);
        self.queue = (0..n).map(|_| KindStats::default()).collect();
        self
    }

    /// Records how long an event of type `kind` (0 without types) queued before it started.
    #[inline]
    pub fn record_queue(&mut self, kind: usize, ns: u64) {
        if let Some(k) = self.queue.get_mut(kind) {
            k.latency.saturating_record(ns.max(1));
            k.events += 1;
        }
    }

    /// Records the statements of one finished event: (kind, nanoseconds) pairs, the kind an
    /// index into the workload's statement kinds.
    #[inline]
    fn record_statements(&mut self, times: &[(u16, u64)]) {
        for &(kind, ns) in times {
            if let Some(k) = self.statements.get_mut(usize::from(kind)) {
                k.latency.saturating_record(ns.max(1));
                k.events += 1;
            }
        }
    }

    /// Records a retryable error of `statement` (an index into the workload's statements):
    /// retried, or the event's last try (`failed`).
    pub fn record_statement_error(&mut self, statement: usize, failed: bool) {
        if let Some(k) = self.statements.get_mut(statement) {
            if failed {
                k.failures += 1;
            } else {
                k.retries += 1;
            }
        }
    }

    /// Records one finished event of type `kind` (its latency, retries, and whether it ended
    /// in an expected rollback), besides [`record_event`](Self::record_event).
    pub fn record_kind(&mut self, kind: usize, latency_ns: u64, retries: u64, rolled_back: bool) {
        if let Some(k) = self.kinds.get_mut(kind) {
            k.latency.saturating_record(latency_ns.max(1));
            k.events += 1;
            k.retries += retries;
            k.retried += u64::from(retries > 0);
            k.rollbacks += u64::from(rolled_back);
        }
    }

    /// Records an event of type `kind` given up after its last try (`--max-tries`) failed
    /// with an error of `class`, after `retries` retries: counted, not measured.
    pub fn record_kind_failed(&mut self, kind: usize, class: ErrorClass, retries: u64) {
        if let Some(k) = self.kinds.get_mut(kind) {
            k.failures += 1;
            k.failed_serialization += u64::from(class == ErrorClass::SerializationFailure);
            k.failed_deadlocks += u64::from(class == ErrorClass::Deadlock);
            k.retries += retries;
            k.retried += u64::from(retries > 0);
        }
    }

    /// Empties this recorder for reuse, keeping its allocations.
    pub fn clear(&mut self) {
        self.solo = Solo::Empty;
        self.latency.reset();
        self.counters = Counters::default();
        for k in self
            .kinds
            .iter_mut()
            .chain(&mut self.statements)
            .chain(&mut self.queue)
        {
            k.reset();
        }
    }

    /// Records one finished event, and its statements: (kind, nanoseconds) pairs, the kind an
    /// index into the workload's statement kinds (none for a workload that does not time
    /// them).
    #[inline]
    pub fn record_event(
        &mut self,
        latency_ns: u64,
        q: &QueryCounts,
        lag_ns: u64,
        statements: &[(u16, u64)],
    ) {
        let latency_ns = latency_ns.max(1);
        let solo = match (self.solo, statements) {
            (Solo::Empty, &[(statement, ns)])
                if ns.max(1) == latency_ns && usize::from(statement) < self.statements.len() =>
            {
                Some(Solo::Same {
                    statement,
                    events: 1,
                })
            }
            (Solo::Same { statement, events }, &[(kind, ns)])
                if kind == statement && ns.max(1) == latency_ns =>
            {
                Some(Solo::Same {
                    statement,
                    events: events + 1,
                })
            }
            _ => None,
        };
        match solo {
            Some(s) => self.solo = s,
            None => {
                self.write_solo();
                self.record_statements(statements);
            }
        }
        self.latency.saturating_record(latency_ns);
        let c = &mut self.counters;
        c.events += 1 + q.script_events;
        c.script_errors += q.script_errors;
        c.reconnects += q.script_reconnects;
        c.queries.reads += q.reads;
        c.queries.writes += q.writes;
        c.queries.others += q.others;
        c.queries.rows += q.rows;
        c.lag_sum_ns += lag_ns;
        c.lag_max_ns = c.lag_max_ns.max(lag_ns);
        c.busy_ns += latency_ns;
    }

    /// Ends the copy that `latency` stands for: writes it into its statement's histogram, and
    /// records statements one by one from here on.
    fn write_solo(&mut self) {
        if let Solo::Same { statement, events } = self.solo
            && let Some(k) = self.statements.get_mut(usize::from(statement))
        {
            k.add_copy(&self.latency, events);
        }
        self.solo = Solo::Off;
    }

    /// Moves this recorder's content into `into` (which must be empty) and leaves it empty;
    /// swapping keeps the time spent under the lock to a few pointer moves.
    pub fn take_into(&mut self, into: &mut Recorder) {
        std::mem::swap(self, into);
    }
}

/// Merged measurements over some span of time.
#[derive(Clone)]
pub struct Snapshot {
    pub latency: Hist,
    pub counters: Counters,
    pub kinds: Vec<KindStats>,
    pub statements: Vec<KindStats>,
    /// Queue times, as [`Recorder::queue`].
    pub queue: Vec<KindStats>,
}

impl Default for Snapshot {
    fn default() -> Self {
        Snapshot {
            latency: Hist::new(),
            counters: Counters::default(),
            kinds: Vec::new(),
            statements: Vec::new(),
            queue: Vec::new(),
        }
    }
}

impl Snapshot {
    pub fn add(&mut self, o: &Snapshot) {
        self.latency.add(&o.latency);
        self.counters.add(&o.counters);
        add_kinds(&mut self.kinds, &o.kinds);
        add_kinds(&mut self.statements, &o.statements);
        add_kinds(&mut self.queue, &o.queue);
    }

    pub fn add_recorder(&mut self, r: &Recorder) {
        self.latency.add(&r.latency);
        self.counters.add(&r.counters);
        add_kinds(&mut self.kinds, &r.kinds);
        add_kinds(&mut self.statements, &r.statements);
        add_kinds(&mut self.queue, &r.queue);
        if let Solo::Same { statement, events } = r.solo {
            let at = usize::from(statement);
            if self.statements.len() <= at {
                self.statements.resize_with(at + 1, KindStats::default);
            }
            self.statements[at].add_copy(&r.latency, events);
        }
    }

    /// A latency quantile in milliseconds (0 when nothing was recorded).
    pub fn quantile_ms(&self, q: f64) -> f64 {
        quantile_ms(&self.latency.to_hdr(), q)
    }

    /// What the snapshot says of one interval: `t` seconds into the measured part, `seconds`
    /// long, of `threads` clients, its `percentile` as `pct_ms`. `new_order`: the index of the
    /// workload's headline type (TPC-C's New-Order) among the snapshot's transaction types.
    pub fn interval(
        &self,
        t: f64,
        seconds: f64,
        (threads, percentile): (u32, f64),
        new_order: Option<usize>,
    ) -> Interval {
        let s = self;
        let c = &s.counters;
        let latency = s.latency.to_hdr();
        let new_order_quantile = |q: f64| {
            new_order.map(|k| {
                s.kinds
                    .get(k)
                    .map_or(0.0, |k| quantile_ms(&k.latency.to_hdr(), q))
            })
        };
        let per_s = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        Interval {
            t,
            seconds,
            threads,
            events: c.events,
            tps: per_s(c.events),
            qps: per_s(c.queries.total()),
            reads_per_s: per_s(c.queries.reads),
            writes_per_s: per_s(c.queries.writes),
            others_per_s: per_s(c.queries.others),
            rows_per_s: per_s(c.queries.rows),
            p50_ms: quantile_ms(&latency, 0.5),
            p95_ms: quantile_ms(&latency, 0.95),
            p99_ms: quantile_ms(&latency, 0.99),
            max_ms: quantile_ms(&latency, 1.0),
            err_per_s: per_s(c.errors()),
            reconn_per_s: per_s(c.reconnects),
            pct_ms: quantile_ms(&latency, percentile / 100.0),
            avg_ms: if latency.is_empty() {
                0.0
            } else {
                latency.mean() / 1e6
            },
            stddev_ms: if latency.is_empty() {
                0.0
            } else {
                latency.stdev() / 1e6
            },
            queue: None,
            progress: crate::results::figures::ProgressCounts {
                failed: c.failed_events,
                skipped: c.skipped_events,
                retried: c.retried_events,
                retries: c.retried(),
                lag_ms: if c.events > 0 {
                    c.lag_sum_ns as f64 / c.events as f64 / 1e6
                } else {
                    0.0
                },
            },
            nopm: new_order
                .map(|k| s.kinds.get(k).map_or(0, |k| k.events - k.rollbacks))
                .map(|n| per_s(n) * 60.0),
            new_order_p95_ms: new_order_quantile(0.95),
            new_order_p90_ms: new_order_quantile(0.90),
            phase: None,
        }
    }
}

/// CPU seconds (user + system) this process has used so far.
pub fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage only fills the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(ru.ru_utime) + secs(ru.ru_stime)
}

/// A quantile of `h` in milliseconds (0 when nothing was recorded).
pub fn quantile_ms(h: &Histogram<u64>, q: f64) -> f64 {
    if h.is_empty() {
        return 0.0;
    }
    ns_to_ms(h.value_at_quantile(q))
}

pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Bytes free for an unprivileged writer on the file system of `dir`, if it can be asked.
pub fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is a valid out-parameter; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; statvfs only writes into `st`.
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail * st.f_frsize)
}

impl StatementFigures {
    /// The kinds that ran, in the workload's order.
    pub fn of(names: &[&str], stats: &[KindStats], events: u64) -> Vec<Self> {
        names
            .iter()
            .zip(stats)
            .filter(|(_, s)| s.events > 0 || s.failures > 0)
            .map(|(name, s)| StatementFigures {
                name: (*name).to_string(),
                count: s.events,
                per_event: if events > 0 {
                    s.events as f64 / events as f64
                } else {
                    0.0
                },
                latency_ms: Latency::from_histogram(&s.latency.to_hdr()),
                histogram: Some(HistogramData::encode(&s.latency.to_hdr())),
                retries: (s.retries > 0).then_some(s.retries),
                failures: (s.failures > 0).then_some(s.failures),
                retried: (s.retried > 0).then_some(s.retried),
                failed_serialization: (s.failed_serialization > 0)
                    .then_some(s.failed_serialization),
                failed_deadlocks: (s.failed_deadlocks > 0).then_some(s.failed_deadlocks),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_of_statements_follows_sysbench() {
        let mut q = QueryCounts::default();
        q.read(0); // a result set with no row is still a read
        q.read(3);
        q.dml(1); // changed a row: write
        q.dml(0); // matched nothing: other
        q.others += 1; // BEGIN
        assert_eq!((q.reads, q.writes, q.others, q.rows), (2, 1, 2, 3));
        assert_eq!(q.total(), 5);
    }

    #[test]
    fn recorders_merge_into_snapshots_exactly() {
        let mut a = Recorder::default();
        let mut b = Recorder::default();
        let q = QueryCounts {
            reads: 2,
            writes: 1,
            others: 1,
            rows: 5,
            ..QueryCounts::default()
        };
        for i in 1..=100u64 {
            a.record_event(i * 1_000_000, &q, 0, &[]);
        }
        b.record_event(500_000_000, &q, 7, &[]);
        b.counters.retries[0] = 3;
        let mut s = Snapshot::default();
        for r in [&mut a, &mut b] {
            let mut taken = Recorder::default();
            r.take_into(&mut taken);
            assert!(r.latency.is_empty() && r.counters.events == 0);
            s.add_recorder(&taken);
        }
        assert_eq!(s.counters.events, 101);
        assert_eq!(s.counters.queries.reads, 202);
        assert_eq!(s.counters.queries.rows, 505);
        assert_eq!(s.counters.errors(), 3);
        assert_eq!(s.counters.lag_max_ns, 7);
        assert!(
            (s.quantile_ms(0.5) - 51.0).abs() < 0.06,
            "{}",
            s.quantile_ms(0.5)
        );
        assert!((s.quantile_ms(1.0) - 500.0).abs() < 0.5);
    }

    /// A point select's statement histogram is written once per read of the recorder rather
    /// than once per event: what the snapshot holds must be what recording each statement gives.
    #[test]
    fn one_statement_events_give_their_statement_the_events_histogram() {
        let q = QueryCounts::default();
        let mut r = Recorder::with_kinds(0, 2);
        let mut expected = new_histogram();
        for i in 1..=50u64 {
            r.record_event(i * 1_000, &q, 0, &[(1, i * 1_000)]);
            expected.record(i * 1_000).unwrap();
        }
        let mut s = Snapshot::default();
        s.add_recorder(&r);
        assert_eq!(s.statements.len(), 2);
        assert_eq!((s.statements[0].events, s.statements[1].events), (0, 50));
        assert!(s.statements[0].latency.is_empty());
        assert_eq!(s.statements[1].latency.to_hdr(), expected);

        // An event of two statements, then one whose statement began after the event did:
        // each statement is its own from here on.
        r.record_event(9_000, &q, 0, &[(0, 4_000), (1, 5_000)]);
        r.record_event(8_000, &q, 0, &[(1, 7_000)]);
        r.record_event(6_000, &q, 0, &[(1, 6_000)]);
        for v in [5_000, 7_000, 6_000] {
            expected.record(v).unwrap();
        }
        let mut s = Snapshot::default();
        s.add_recorder(&r);
        assert_eq!((s.statements[0].events, s.statements[1].events), (1, 53));
        assert_eq!(s.statements[1].latency.to_hdr(), expected);
        assert_eq!(s.latency.len(), 53);

        // Emptied, the next events start a copy again; a script's own loop times none.
        let mut taken = Recorder::with_kinds(0, 2);
        r.take_into(&mut taken);
        r.clear();
        r.record_event(2_000, &q, 0, &[(0, 2_000)]);
        r.record_event(3_000, &q, 0, &[]);
        let mut s = Snapshot::default();
        s.add_recorder(&r);
        assert_eq!((s.statements[0].events, s.statements[1].events), (1, 0));
        let h = s.statements[0].latency.to_hdr();
        assert_eq!(h.max(), h.min());
        assert_eq!(s.latency.len(), 2);
    }
}
