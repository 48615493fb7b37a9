//! One client: its connection, its workload client, its random generator, and the steps that
//! time, retry and record an event. A client runs on a thread of its own (the loop here) or
//! among many on a few workers ([`super::multiplex`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::pool::{Pooled, Registry};
use crate::clock::Stamp;
use crate::db::QueryCounts;
use crate::db::{Conn, DbError, Detached, ErrorClass, Target};
use crate::metrics::{RETRY_CLASSES, Recorder};
use crate::output::note::{Aborted, ClientNote};
use crate::workload::rand::Rand;
use crate::workload::{Client, EventLoop, Next, Workload};
use errors::Backoff;

mod errors;
mod pacing;

pub use pacing::ConnectRate;
use pacing::Pacing;

/// When a worker starts, stops measuring and stops, shared by all workers of a run.
#[derive(Clone)]
pub struct Schedule {
    pub measure_start: Instant,
    pub deadline: Option<Instant>,
    /// Under `--rate`: this thread's first scheduled start and the gap between its events.
    pub pacing: Option<(Instant, Duration)>,
    /// `--phases`: the rate or the active clients over time, for client `client` of `clients`.
    pub phases: Option<Arc<super::phases::Phases>>,
    pub client: u32,
    pub clients: u32,
    /// `--arrivals poisson`: the gaps between a client's events are drawn (exponential, of
    /// the schedule's mean) from this seed's generator, else even.
    pub poisson: Option<u64>,
}

/// What every worker shares.
pub struct Shared<'a> {
    pub target: &'a dyn Target,
    pub workload: &'a dyn Workload,
    /// Set by a fatal error in any worker (of any group of the step), or when the measured
    /// groups beside this one are done.
    pub stop: &'a AtomicBool,
    /// Set by Ctrl-C.
    pub interrupt: &'a AtomicBool,
    /// Measured events started so far, for `--events`.
    pub started: &'a AtomicU64,
    /// Measured events to run in all, when limited.
    pub events_limit: Option<std::num::NonZeroU64>,
    /// Measured events each client runs, when limited.
    pub events_per_client: Option<std::num::NonZeroU64>,
    /// Tries of an event before it fails, when limited.
    pub max_tries: Option<std::num::NonZeroU32>,
    /// Each retryable error said (pgbench's `--verbose-errors`).
    pub verbose_errors: bool,
    /// Who prints what a client says ([`ClientNote`]): the runner never prints itself.
    pub notes: &'a crate::output::Events,
    /// pgbench's rule for an error that is not retried (a lost connection too): the client
    /// aborts alone and the run goes on without it, rather than the run stopping.
    pub abort_alone: bool,
    /// Clients aborted so far under `abort_alone`.
    pub aborted_clients: &'a AtomicU64,
    /// Latency over which an event is late (and, paced, skipped when due that late).
    pub latency_limit: Option<Duration>,
    /// pgbench's transaction log, when asked.
    pub txn_log: Option<&'a dyn super::txn_log::TxnLog>,
    /// Reconnect every N events, when asked.
    pub reconnect_every: Option<std::num::NonZeroU64>,
    pub reconnect_timeout: Duration,
    /// Paces the clients' first connections (`--connect-rate`).
    pub connects: ConnectRate,
    /// Clients connected so far, for the progress bar.
    pub connected: AtomicU64,
    /// Under `--connections`: the run's statements; connections open wrapped as
    /// [`Pooled`], so that every client's statements run on each of them.
    pub registry: Option<Arc<Registry>>,
    /// Under `--rate` with a client per thread: events begun and running, for the queue
    /// line of the interval reports.
    pub paced: Option<&'a PacedLoad>,
}

/// Events of a paced run begun so far (warm-up too) and running now.
#[derive(Default)]
pub struct PacedLoad {
    pub begun: AtomicU64,
    pub running: AtomicU64,
}

impl PacedLoad {
    fn begin(&self) {
        self.begun.fetch_add(1, Ordering::Relaxed);
        self.running.fetch_add(1, Ordering::Relaxed);
    }

    fn end(&self) {
        self.running.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Shared<'_> {
    #[inline]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.interrupt.load(Ordering::Relaxed)
    }

    /// Whether a client that has started `started` measured events may start another under
    /// the limits (`--events` over all, `--events-per-client` its own); counts it if so.
    #[inline]
    pub fn may_start(&self, started: &mut u64) -> bool {
        if let Some(n) = self.events_per_client {
            if *started >= n.get() {
                return false;
            }
            *started += 1;
        }
        self.events_limit
            .is_none_or(|limit| self.started.fetch_add(1, Ordering::Relaxed) < limit.get())
    }
}

/// A connected client, ready to run.
pub struct Worker {
    pub thread: u32,
    pub(super) conn: Box<dyn Conn>,
    pub(super) client: Box<dyn Client>,
    pub(super) rand: Rand,
    /// Its measured events and the time spent in them.
    pub(super) events: u64,
    pub(super) busy_ns: u64,
    since_reconnect: u64,
    /// Events ended, done or failed (`--events-per-client` counts both, as pgbench's -t).
    ended: u64,
    /// The current event's retryable errors: each one's statement (in the workload's
    /// statements) and whether it ended the event as failed.
    errors_at: Vec<(usize, bool)>,
}

impl Worker {
    /// Connects (at the run's connect rate) and prepares the client's statements.
    pub fn connect(sh: &Shared, thread: u32, seed: u64) -> Result<Worker, DbError> {
        sh.connects.wait(&|| sh.stopped());
        let mut conn = open_conn(sh)?;
        sh.connected.fetch_add(1, Ordering::Relaxed);
        let client = sh.workload.client_on(conn.as_mut(), thread, sh.target)?;
        Ok(Worker::with(thread, conn, client, seed))
    }

    /// A client on a connection (or placeholder) and a client state made elsewhere.
    pub(super) fn with(
        thread: u32,
        conn: Box<dyn Conn>,
        client: Box<dyn Client>,
        seed: u64,
    ) -> Worker {
        Worker {
            thread,
            conn,
            client,
            rand: Rand::for_thread(seed, thread),
            events: 0,
            busy_ns: 0,
            since_reconnect: 0,
            ended: 0,
            errors_at: Vec::new(),
        }
    }

    /// Runs events until the schedule, the event limit or the stop flag ends it. Returns the
    /// connection's page cache counters over the measured part (SQLite), if it keeps them.
    pub fn run(
        &mut self,
        sh: &Shared,
        sched: &Schedule,
        rec: &Mutex<Recorder>,
    ) -> Result<Option<[u64; 3]>, String> {
        let mut pace = Pacing::new(sched);
        let mut ctl = OwnLoop {
            sh,
            pace: &mut pace,
            recorder: rec,
            event: None,
            counts: (0, 0),
        };
        let own = self.client.own_loop(&mut ctl);
        let (events, busy_ns) = ctl.counts;
        match own {
            Some(r) => {
                (self.events, self.busy_ns) = (events, busy_ns);
                r.map_err(|e| self.describe(&e))?
            }
            None => self.event_loop(sh, &mut pace, rec)?,
        }
        self.finish(pace.measuring, rec, sh.notes)
    }

    /// Ends the client: the workload's last words (bulk_insert's open batch), counted when the
    /// client measured. Returns its connection's page cache counters over the measured part.
    pub(super) fn finish(
        &mut self,
        measured: bool,
        rec: &Mutex<Recorder>,
        notes: &crate::output::Events,
    ) -> Result<Option<[u64; 3]>, String> {
        for message in self.client.warnings() {
            notes.client_note(&ClientNote::Warning { message: &message });
        }
        let cache = if measured {
            self.cache_counters(false)
        } else {
            None
        };
        let mut q = QueryCounts::default();
        self.client
            .finish(self.conn.as_mut(), &mut q)
            .map_err(|e| self.describe(&e))?;
        if measured {
            let mut rec = rec.lock().expect("recorder lock");
            let c = &mut rec.counters.queries;
            c.reads += q.reads;
            c.writes += q.writes;
            c.others += q.others;
            c.rows += q.rows;
        }
        Ok(cache)
    }

    /// The runner's own loop: one `Client::event` per event, with retries and reconnects. Out
    /// of line, so that the loop is not spread through the code that starts a client.
    #[inline(never)]
    fn event_loop(
        &mut self,
        sh: &Shared,
        pace: &mut Pacing,
        rec: &Mutex<Recorder>,
    ) -> Result<(), String> {
        loop {
            let pause = self.client.pause(&mut self.rand);
            let next = pace.next(sh, pause);
            if pace.skipped > 0 {
                self.record_skipped(sh, pace, rec);
            }
            let Some(slot) = next else {
                break;
            };
            let paced = sh.paced.filter(|_| pace.next_due.is_some());
            if let Some(p) = paced {
                p.begin();
            }
            let r = self.step(sh, pace.sched.deadline, &slot, None, rec);
            if let Some(p) = paced {
                p.end();
            }
            if !r? {
                break;
            }
        }
        Ok(())
    }

    /// Turns skipped under `--latency-limit`, counted (and logged).
    #[cold]
    #[inline(never)]
    fn record_skipped(&self, sh: &Shared, pace: &mut Pacing, rec: &Mutex<Recorder>) {
        let n = std::mem::take(&mut pace.skipped);
        if let Some(log) = sh.txn_log {
            for _ in 0..n {
                log.skipped(self.thread, self.events, Instant::now());
            }
        }
        rec.lock().expect("recorder lock").counters.skipped_events += n;
    }

    /// Runs the event of `slot` with retries and reconnects, and records it when measured
    /// (with the time it queued, from its due instant to its start, where the run has queues).
    /// Ok(false) when the client is done: stopped while retrying, or stopped on its own.
    ///
    /// Only what every event does is written here; retries, failures, the transaction log and
    /// scheduled reconnects are functions of their own, out of line, so that the instructions
    /// an event runs lie together: perf put SQLite's and the kernel's own time per point select
    /// 3.5% higher under the runner than in a bare loop, the share of the caches and branch
    /// predictors the runner's code takes from them.
    pub(super) fn step(
        &mut self,
        sh: &Shared,
        deadline: Option<Instant>,
        slot: &Slot,
        queued: Option<u64>,
        rec: &Mutex<Recorder>,
    ) -> Result<bool, String> {
        if slot.first_measured {
            // Warm-up's cache traffic is left out, as everything else of it.
            self.cache_counters(true);
        }
        let mut q = QueryCounts::default();
        let mut tally = Tally::default();
        let mut end = None;
        let ended =
            match self
                .client
                .timed_event(self.conn.as_mut(), &mut self.rand, &mut q, slot.start)
            {
                Ok(at) => {
                    end = at;
                    Ended::Done
                }
                Err(err) => self.after_error(sh, deadline, err, (&mut q, &mut end), &mut tally)?,
            };
        if !self.errors_at.is_empty() {
            self.record_statement_errors(slot.measuring, rec);
        }
        if ended != Ended::Done {
            return self.unfinished(sh, deadline, slot, (ended, &tally), rec);
        }
        if self.client.stopped() {
            return Ok(false); // as sysbench: the event that asked to stop is not counted
        }
        if q.nothing_done {
            return Ok(true);
        }
        if slot.measuring {
            let end = end.unwrap_or_else(crate::clock::now);
            let latency = end.nanos_since(slot.from);
            if sh.txn_log.is_some() {
                self.log_event(sh, slot, end, latency, &tally);
            }
            self.events += 1 + q.script_events;
            self.busy_ns += latency;
            let mut rec = rec.lock().expect("recorder lock");
            slot.record(&mut rec, end, &q, self.client.statement_times());
            if sh
                .latency_limit
                .is_some_and(|l| latency > l.as_nanos() as u64)
            {
                rec.counters.late_events += 1;
            }
            let kind = self.client.last_kind();
            if let Some((kind, rolled_back)) = kind {
                rec.record_kind(kind, latency, tally.retried(), rolled_back);
            }
            if let Some(ns) = queued {
                rec.record_queue(kind.map_or(0, |k| k.0), ns);
            }
            if tally.any() {
                rec.counters.retried_events += u64::from(tally.retried() > 0);
                tally.add_to(&mut rec.counters);
            }
        }
        if let Some(err) = self.client.abort_after() {
            self.abort(sh, &err, Aborted::InCommand);
            return Ok(false);
        }
        self.scheduled_reconnect(sh, deadline, slot.measuring, rec)
    }

    /// The errors of the event's statements, counted per statement when measured.
    #[cold]
    #[inline(never)]
    fn record_statement_errors(&mut self, measuring: bool, rec: &Mutex<Recorder>) {
        if measuring {
            let mut rec = rec.lock().expect("recorder lock");
            for &(statement, failed) in &self.errors_at {
                rec.record_statement_error(statement, failed);
            }
        }
        self.errors_at.clear();
    }

    /// A measured event done, in the transaction log (`--log`).
    #[inline(never)]
    fn log_event(&self, sh: &Shared, slot: &Slot, end: Stamp, latency: u64, tally: &Tally) {
        if let Some(log) = sh.txn_log {
            log.log(
                &super::txn_log::Entry {
                    client: self.thread,
                    number: self.events,
                    script: self.client.last_kind().map_or(0, |k| k.0),
                    latency_us: latency as f64 / 1000.0,
                    lag_us: slot.start.nanos_since(slot.from) as f64 / 1000.0,
                    retries: tally.retried(),
                    end: end.instant(),
                    failed: None,
                },
                sample(self.thread, self.events),
            );
        }
    }

    /// An event that did not end done: failed after its last try (`--max-tries`), or stopped
    /// while retrying or reconnecting.
    #[cold]
    #[inline(never)]
    fn unfinished(
        &mut self,
        sh: &Shared,
        deadline: Option<Instant>,
        slot: &Slot,
        (ended, tally): (Ended, &Tally),
        rec: &Mutex<Recorder>,
    ) -> Result<bool, String> {
        if let Ended::Failed(class) = ended {
            // Given up after its last try (--max-tries): failed, not measured; the client goes
            // on with its next event.
            if slot.measuring
                && let Some(log) = sh.txn_log
            {
                log.log(
                    &super::txn_log::Entry {
                        client: self.thread,
                        number: self.events,
                        script: self.client.last_kind().map_or(0, |k| k.0),
                        latency_us: 0.0,
                        lag_us: 0.0,
                        retries: tally.retried(),
                        end: Instant::now(),
                        failed: Some(class),
                    },
                    sample(self.thread, self.events),
                );
            }
            if slot.measuring {
                let mut rec = rec.lock().expect("recorder lock");
                if let Some((kind, _)) = self.client.last_kind() {
                    rec.record_kind_failed(kind, class, tally.retried());
                }
                rec.counters.failed_events += 1;
                // pgbench counts a transaction retried whether its last try failed or not.
                rec.counters.retried_events += u64::from(tally.retried() > 0);
                if class == ErrorClass::Deadlock {
                    rec.counters.failed_deadlocks += 1;
                } else if class == ErrorClass::SerializationFailure {
                    rec.counters.failed_serialization += 1;
                }
                tally.add_to(&mut rec.counters);
            }
            return self.scheduled_reconnect(sh, deadline, slot.measuring, rec);
        }
        // Stopped while retrying or reconnecting: an event that lost its connection is
        // counted as lost, and the errors it retried count, not dropped unseen.
        if slot.measuring {
            let mut rec = rec.lock().expect("recorder lock");
            rec.counters.lost_events += u64::from(ended == Ended::Lost);
            tally.add_to(&mut rec.counters);
        }
        Ok(false)
    }

    /// `--reconnect N` (pgbench's -C): a new connection after every N events that ended, done
    /// or failed, but not after the client's last one (`--events-per-client`). The time it
    /// takes counts apart (`reconnect_ns`), as pgbench's connection time. Ok(false) when the
    /// deadline or a stop came first.
    #[inline]
    fn scheduled_reconnect(
        &mut self,
        sh: &Shared,
        deadline: Option<Instant>,
        measuring: bool,
        rec: &Mutex<Recorder>,
    ) -> Result<bool, String> {
        self.ended += 1;
        self.since_reconnect += 1;
        match sh.reconnect_every {
            Some(every) if self.since_reconnect >= every.get() => {
                self.reconnect_now(sh, deadline, measuring, rec)
            }
            _ => Ok(true),
        }
    }

    /// The reconnect [`Worker::scheduled_reconnect`] found due, out of line.
    #[inline(never)]
    fn reconnect_now(
        &mut self,
        sh: &Shared,
        deadline: Option<Instant>,
        measuring: bool,
        rec: &Mutex<Recorder>,
    ) -> Result<bool, String> {
        if sh.events_per_client.is_some_and(|n| self.ended >= n.get()) {
            return Ok(true);
        }
        self.since_reconnect = 0;
        let from = Instant::now();
        let reconnected = match self.reconnect(sh, deadline, &mut Backoff::new()) {
            Ok(r) => r,
            Err(e) if sh.abort_alone => {
                self.abort(sh, &e, Aborted::Connecting);
                return Ok(false);
            }
            Err(e) => return Err(self.describe(&e)),
        };
        if !reconnected {
            return Ok(false);
        }
        if measuring {
            let mut rec = rec.lock().expect("recorder lock");
            rec.counters.reconnects += 1;
            rec.counters.reconnect_ns += nanos(from.elapsed());
        }
        Ok(true)
    }

    /// The page cache counters of the connections the client's queries run on.
    fn cache_counters(&mut self, reset: bool) -> Option<[u64; 3]> {
        match self.client.own_cache_counters(reset) {
            Some(own) => own,
            None => self.conn.cache_counters(reset),
        }
    }

    fn describe(&self, e: &DbError) -> String {
        format!("client thread {}: {e}", self.thread)
    }
}

#[inline]
/// A uniform draw in [0, 1) for the transaction log's sampling, from the client and its event
/// (splitmix64): the workload's own random sequence is left as it is.
fn sample(client: u32, event: u64) -> f64 {
    let mut z = (u64::from(client) << 40 ^ event).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

pub(super) fn nanos(d: Duration) -> u64 {
    d.as_nanos().min(u128::from(u64::MAX)) as u64
}

/// How an event's attempts ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ended {
    Done,
    /// The run was stopped before the event succeeded.
    Stopped,
    /// The run was stopped, or ended, while the event waited for its lost connection.
    Lost,
    /// The client aborted after an error not retried (pgbench's rule, [`Shared::abort_alone`]).
    Aborted,
    /// Its last try (`--max-tries`) failed with a serialization failure or deadlock (or
    /// another retryable error: its class).
    Failed(ErrorClass),
}

/// An event's retries (per class) and reconnects.
#[derive(Default)]
struct Tally {
    retries: [u64; RETRY_CLASSES],
    reconnects: u64,
}

impl Tally {
    fn retried(&self) -> u64 {
        self.retries.iter().sum()
    }

    fn any(&self) -> bool {
        self.reconnects > 0 || self.retries.iter().any(|&r| r > 0)
    }

    /// Adds the retries and reconnects to the run's counters.
    fn add_to(&self, c: &mut crate::metrics::Counters) {
        for (total, r) in c.retries.iter_mut().zip(self.retries) {
            *total += r;
        }
        c.reconnects += self.reconnects;
    }
}

/// Sleeps until `when` or until the run is stopped, waking at least every 100 ms to look.
pub(super) fn wait_until(when: Instant, sh: &Shared) {
    loop {
        let now = Instant::now();
        if now >= when || sh.stopped() {
            return;
        }
        std::thread::sleep((when - now).min(Duration::from_millis(100)));
    }
}

/// The runner's connection for a client: none for a workload whose clients open their own; a
/// pool's under `--connections`.
pub(super) fn open_conn(sh: &Shared) -> Result<Box<dyn Conn>, DbError> {
    if sh.workload.own_connections() {
        return Ok(Box::new(Detached(sh.target.dialect())));
    }
    let conn = sh.target.connect()?;
    Ok(match &sh.registry {
        Some(r) => Box::new(Pooled::new(conn, r.clone())),
        None => conn,
    })
}

/// One event's place in the schedule.
pub(super) struct Slot {
    /// When its latency counts from: its scheduled time under `--rate`, its due instant among
    /// multiplexed clients, else its start.
    pub from: Stamp,
    /// When it started.
    pub start: Stamp,
    pub measuring: bool,
    /// The first measured event of this client.
    pub first_measured: bool,
}

impl Slot {
    fn record(&self, rec: &mut Recorder, end: Stamp, q: &QueryCounts, statements: &[(u16, u64)]) {
        rec.record_event(
            end.nanos_since(self.from),
            q,
            self.start.nanos_since(self.from),
            statements,
        );
    }
}

/// The runner's side of a client's own loop (a script's `thread_run`).
struct OwnLoop<'a, 'b> {
    sh: &'a Shared<'a>,
    pace: &'a mut Pacing<'b>,
    recorder: &'a Mutex<Recorder>,
    /// The event that `next` let through, until it stops.
    event: Option<Slot>,
    /// Measured events and the nanoseconds spent in them.
    counts: (u64, u64),
}

impl EventLoop for OwnLoop<'_, '_> {
    fn next(&mut self) -> Next {
        match self.pace.next(self.sh, None) {
            None => Next::Done,
            Some(slot) => {
                let first = slot.first_measured;
                self.event = Some(slot);
                if first {
                    Next::RunFirstMeasured
                } else {
                    Next::Run
                }
            }
        }
    }

    fn start(&mut self) {
        if let Some(slot) = &mut self.event {
            let now = crate::clock::now();
            if slot.from == slot.start {
                slot.from = now;
            }
            slot.start = now;
        }
    }

    fn stop(&mut self, q: &QueryCounts) {
        if let Some(slot) = self.event.take()
            && slot.measuring
        {
            let end = crate::clock::now();
            self.counts.0 += 1 + q.script_events;
            self.counts.1 += end.nanos_since(slot.from);
            slot.record(
                &mut self.recorder.lock().expect("recorder lock"),
                end,
                q,
                &[],
            );
        }
    }
}
