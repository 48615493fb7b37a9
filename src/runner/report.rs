//! The reporter: an interval every tick until every client has stopped, the run's end and
//! its last interval, and the recorders merged into the run's totals.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::worker;
use super::{Done, Mode, RunOutcome, RunnerOptions, epoch_now, paced_queue};
use crate::metrics::{Recorder, Snapshot};
use crate::results::figures::Interval;
use crate::workload::Workload;

/// What the reporter says as a run goes: an interval closed, or a checkpoint reached (its
/// figures since the one before).
#[derive(Clone, Copy, Debug)]
pub enum Report<'a> {
    Interval(&'a Interval),
    Checkpoint(&'a crate::results::figures::Checkpoint),
}

/// Collects an interval every tick until every client has stopped; the calling thread is the
/// reporter.
pub(super) fn report_loop(
    workload: &dyn Workload,
    opts: &RunnerOptions,
    start: Instant,
    (recorders, paced): (&[Arc<Mutex<Recorder>>], Option<&worker::PacedLoad>),
    done_rx: &mpsc::Receiver<(u32, Done)>,
    interrupt: &AtomicBool,
    on_report: &mut dyn FnMut(Report<'_>),
) -> RunOutcome {
    let threads = opts.clients();
    let tick = Duration::from_secs_f64(opts.report_interval.unwrap_or(1.0));
    let measure_start = start + Duration::from_secs_f64(opts.warmup);
    let kinds = workload.kinds();
    let new_order = workload.headline_kind();
    let spare = Recorder::with_kinds(kinds.len(), workload.statements().len());
    let mut collector = Collector::new(if opts.mode() == Mode::Threads {
        spare
    } else {
        spare.with_queue()
    });
    let mut checkpoints = Checkpoints::new(&opts.checkpoints, measure_start);
    // What was collected at a checkpoint, for the interval it fell in.
    let mut pending: Option<Snapshot> = None;
    let mut intervals = Vec::new();
    let mut last = measure_start;
    let mut next_tick = measure_start + tick;
    let mut running = recorders.len();
    let mut error = None;
    let mut cache_counters: Option<[u64; 3]> = None;
    let mut ended_clients = Vec::with_capacity(threads as usize);
    let mut tally = Tally::new(opts, kinds, measure_start);
    while running > 0 {
        let wake = checkpoints.next.map_or(next_tick, |c| c.min(next_tick));
        let wake = tally.next_boundary.map_or(wake, |b| b.min(wake));
        match done_rx.recv_timeout(wake.saturating_duration_since(Instant::now())) {
            Ok((_, (ended, failed))) => {
                running -= 1;
                error = error.or(failed);
                if let Some(c) = ended.cache {
                    let sum = cache_counters.get_or_insert([0; 3]);
                    for (s, v) in sum.iter_mut().zip(c) {
                        *s += v;
                    }
                }
                ended_clients.extend(ended.clients);
                continue;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        if now < measure_start {
            next_tick = measure_start + tick;
            continue;
        }
        // Past --time, the clients finishing their last events make no interval of their
        // own: they go into the last one, below (else a tick after the end would leave the
        // final events out of every interval).
        if opts
            .time
            .is_some_and(|t| now >= measure_start + Duration::from_secs_f64(t))
        {
            next_tick += tick;
            // A checkpoint at or past the end is never reached (as sysbench's).
            checkpoints.next = None;
            continue;
        }
        // A phase ends: what its clients did is its own, whatever the report interval.
        if tally.next_boundary.is_some_and(|b| now >= b) {
            let snap = collector.collect(recorders);
            checkpoints.add(&snap);
            tally.collected(&snap, now.duration_since(measure_start).as_secs_f64());
            tally.passed(now);
            pending.get_or_insert_with(Snapshot::default).add(&snap);
        }
        if checkpoints.next.is_some_and(|c| now >= c) {
            let snap = collector.collect(recorders);
            let t = now.duration_since(measure_start).as_secs_f64();
            tally.collected(&snap, t);
            let cp = checkpoints.reached(
                &snap,
                t,
                (threads - ended_clients.len() as u32, opts.percentile),
                &collector.per_worker(),
            );
            collector.reset_per_worker();
            on_report(Report::Checkpoint(&cp));
            pending.get_or_insert_with(Snapshot::default).add(&snap);
        }
        if now < next_tick {
            continue;
        }
        let mut snap = collector.collect(recorders);
        checkpoints.add(&snap);
        tally.collected(&snap, now.duration_since(measure_start).as_secs_f64());
        if let Some(p) = pending.take() {
            snap.add(&p);
        }
        let mut iv = snap.interval(
            now.duration_since(measure_start).as_secs_f64(),
            now.duration_since(last).as_secs_f64(),
            (threads, opts.percentile),
            new_order,
        );
        iv.queue = paced.map(|p| paced_queue(opts, start, now, p));
        tally.interval(&snap, &mut iv);
        if opts.report_interval.is_some() {
            on_report(Report::Interval(&iv));
        }
        intervals.push(iv);
        last = now;
        next_tick += tick;
    }
    // Throughput is over the measured time: a client that overran the deadline by an answer
    // in flight or a reconnect does not stretch it. One held far past it (a lock of another
    // process) does: its events took that long, and the overrun is said.
    let (end, overran_s) = measured_end(opts, measure_start);
    let mut snap = collector.collect(recorders);
    checkpoints.add(&snap);
    tally.collected(&snap, end.duration_since(measure_start).as_secs_f64());
    if let Some(p) = pending.take() {
        snap.add(&p);
    }
    // Never zero when there are events to put in it: they count in the total.
    let tail = end.duration_since(last).as_secs_f64().max(1e-9);
    if snap.counters.events > 0 {
        let mut iv = snap.interval(
            end.duration_since(measure_start).as_secs_f64(),
            tail,
            (threads, opts.percentile),
            new_order,
        );
        tally.interval(&snap, &mut iv);
        if progress_at_the_end(opts, end.duration_since(measure_start).as_secs_f64()) {
            on_report(Report::Interval(&iv));
        }
        intervals.push(iv);
    }
    // The wall clock of the measured part's start: now, less the time since.
    let measured_from = epoch_now() - Instant::now().duration_since(measure_start).as_secs_f64();
    ended_clients.sort_unstable_by_key(|c| c.0);
    let since_checkpoint = checkpoints.last.map(|last| {
        let t = end.duration_since(measure_start).as_secs_f64();
        checkpoint_of(
            &checkpoints.since,
            (t, t - last),
            (0, opts.percentile),
            &collector.per_worker(),
        )
    });
    RunOutcome {
        since_checkpoint,
        cache_counters,
        measured_from,
        seconds: end.duration_since(measure_start).as_secs_f64(),
        total: collector.total,
        statement_names: workload.statements(),
        kind_names: workload.kinds(),
        intervals,
        phases: tally.ended(),
        thread_events: ended_clients.iter().map(|c| c.1).collect(),
        thread_seconds: ended_clients.iter().map(|c| c.2 as f64 / 1e9).collect(),
        behind: Some(ended_clients.iter().filter(|c| c.3).count() as u64),
        connect_seconds: 0.0,
        overran_s,
        aborted_clients: 0,
        interrupted: interrupt.load(Ordering::Relaxed),
        error,
    }
}

/// What the reporter keeps beside the intervals: each phase's (`--phases`) and the live
/// figures (`--metrics-listen`).
struct Tally<'a> {
    live: Option<&'a crate::metrics::live::Live>,
    kinds: &'static [&'static str],
    phases: Option<&'a super::phases::Phases>,
    by_phase: Vec<(Snapshot, f64)>,
    /// The ends of the phases still ahead but the last (the run's own end), in order.
    boundaries: std::vec::IntoIter<Instant>,
    /// The next of them: the reporter collects there, so that every event counts in the
    /// phase it ran in, not in the phase of its interval's middle.
    next_boundary: Option<Instant>,
    /// Seconds into the measured part up to which the collected figures are a phase's.
    attributed: f64,
}

impl<'a> Tally<'a> {
    fn new(
        opts: &'a RunnerOptions,
        kinds: &'static [&'static str],
        measure_start: Instant,
    ) -> Tally<'a> {
        let live = opts.live.as_deref();
        if let Some(l) = live {
            l.clients(opts.clients());
        }
        let phases = opts.phases.as_deref();
        let mut boundaries: Vec<Instant> = phases
            .map(|p| {
                (1..p.list().len())
                    .filter_map(|i| {
                        measure_start.checked_add(Duration::from_secs_f64(p.start_of(i)))
                    })
                    .collect()
            })
            .unwrap_or_default();
        boundaries.dedup();
        let mut boundaries = boundaries.into_iter();
        Tally {
            live,
            kinds,
            phases,
            next_boundary: boundaries.next(),
            boundaries,
            attributed: 0.0,
            by_phase: phases
                .map(|p| {
                    p.list()
                        .iter()
                        .map(|_| (Snapshot::default(), 0.0))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Figures collected `t` seconds into the measured part, the events since the last
    /// collection: the phase they ran in has them (the reporter collects at every phase's
    /// end, so they lie in one phase but for the reporter's wake-up latency).
    fn collected(&mut self, snap: &Snapshot, t: f64) {
        if let Some(p) = self.phases {
            let t = t.max(self.attributed);
            let (i, _) = p.at((self.attributed + t) / 2.0);
            self.by_phase[i].0.add(snap);
            self.by_phase[i].1 += t - self.attributed;
            self.attributed = t;
        }
    }

    /// The reporter collected at `now`: the phase ends up to it are behind.
    fn passed(&mut self, now: Instant) {
        while self.next_boundary.is_some_and(|b| b <= now) {
            self.next_boundary = self.boundaries.next();
        }
    }

    /// An interval collected (`snap`, as `iv`): live, it is added at once (every count a
    /// scrape reads is a sum of the results file's intervals); it is labelled with the phase
    /// its middle falls in.
    fn interval(&mut self, snap: &Snapshot, iv: &mut Interval) {
        if let Some(l) = self.live {
            l.add(snap, self.kinds, iv.t);
        }
        if let Some(p) = self.phases {
            let (i, _) = p.at(iv.t - iv.seconds / 2.0);
            iv.phase = Some(i as u32 + 1);
        }
    }

    /// The run is over: its clients are gone; each phase's figures.
    fn ended(self) -> Vec<(Snapshot, f64)> {
        if let Some(l) = self.live {
            l.clients(0);
        }
        self.by_phase
    }
}

/// The measured part's end, and how far the clients overran `--time` where that is said.
fn measured_end(opts: &RunnerOptions, measure_start: Instant) -> (Instant, f64) {
    let mut end = Instant::now().max(measure_start);
    let mut overran_s = 0.0;
    // Clients that end alone: the run's time is up to the last one's end, whatever it was
    // doing at the end of --time.
    if let Some(t) = opts.time.filter(|_| !opts.clients_alone) {
        let deadline = measure_start + Duration::from_secs_f64(t);
        let over = end.saturating_duration_since(deadline).as_secs_f64();
        if over > OVERRUN_SAID_S.max(t * 0.1) {
            overran_s = over;
        } else {
            end = end.min(deadline);
        }
    }
    (end, overran_s)
}

/// The overrun of `--time` past which a run's seconds count it (and it is said): more than
/// any answer in flight or reconnect takes, less than a lock wait that changes the figures.
pub(super) const OVERRUN_SAID_S: f64 = 1.0;

/// Whether the interval ending with the run gets its line, where clients end alone: when the
/// end of `--time` falls on a tick of a closed-loop run (its clients are still running there;
/// paced clients have stopped before their next schedule passes the end, and the line with
/// them). Otherwise the lines stop before `--time`.
pub(super) fn progress_at_the_end(opts: &RunnerOptions, ran: f64) -> bool {
    let (Some(tick), Some(time)) = (opts.report_interval, opts.time) else {
        return false;
    };
    let ticks = time / tick;
    opts.clients_alone && opts.rate.is_none() && ran >= time && (ticks - ticks.round()).abs() < 1e-9
}

/// What `snap` says as a checkpoint `t` seconds into the measured part, `seconds` after the
/// one before, with `threads` clients running; `per_worker`: each worker's events and busy
/// nanoseconds.
fn checkpoint_of(
    snap: &Snapshot,
    (t, seconds): (f64, f64),
    (threads, percentile): (u32, f64),
    per_worker: &[(u64, u64)],
) -> crate::results::figures::Checkpoint {
    let c = &snap.counters;
    let latency = snap.latency.to_hdr();
    crate::results::figures::Checkpoint {
        t,
        seconds,
        threads,
        events: c.events,
        queries: c.query_totals(),
        errors: c.errors(),
        reconnects: c.reconnects,
        latency_ms: crate::results::Latency::from_histogram(&latency),
        pct_ms: crate::metrics::quantile_ms(&latency, percentile / 100.0),
        thread_events: per_worker.iter().map(|w| w.0).collect(),
        thread_time_s: per_worker.iter().map(|w| w.1 as f64 / 1e9).collect(),
    }
}

/// `--report-checkpoints`: when the next is due, and what was collected since the last.
struct Checkpoints {
    /// The instants still ahead, in order (the next first).
    ahead: std::vec::IntoIter<Instant>,
    next: Option<Instant>,
    /// The measured part's start, and the second of the last checkpoint reached.
    start: Instant,
    last: Option<f64>,
    since: Snapshot,
}

impl Checkpoints {
    /// `at`: seconds into the measured part (from `start`); 0 is the start itself, and
    /// reports nothing.
    fn new(at: &[u32], start: Instant) -> Checkpoints {
        let mut ahead: Vec<Instant> = at
            .iter()
            .filter(|&&s| s > 0)
            .filter_map(|&s| start.checked_add(Duration::from_secs(u64::from(s))))
            .collect();
        ahead.sort_unstable();
        ahead.dedup();
        let mut ahead = ahead.into_iter();
        Checkpoints {
            next: ahead.next(),
            ahead,
            start,
            last: None,
            since: Snapshot::default(),
        }
    }

    /// Collected since the last checkpoint.
    fn add(&mut self, snap: &Snapshot) {
        if self.next.is_some() || self.last.is_some() {
            self.since.add(snap);
        }
    }

    /// The checkpoint due, reached `t` seconds in, with `snap` just collected: its figures;
    /// the next one's begin.
    fn reached(
        &mut self,
        snap: &Snapshot,
        t: f64,
        (threads, percentile): (u32, f64),
        per_worker: &[(u64, u64)],
    ) -> crate::results::figures::Checkpoint {
        let mut since = std::mem::take(&mut self.since);
        since.add(snap);
        let last = self.last.unwrap_or(0.0);
        // Past several at once (a stall of the reporter): one report, and the rest skipped.
        let now = self.start + Duration::from_secs_f64(t);
        self.next = self.ahead.find(|&c| c > now);
        self.last = Some(t);
        checkpoint_of(&since, (t, t - last), (threads, percentile), per_worker)
    }
}

/// The reporter's side of merging: one spare recorder to swap in (each worker's recorder,
/// taken, is emptied and becomes the spare for the next), and the totals.
pub(super) struct Collector {
    spare: Recorder,
    total: Snapshot,
    /// Each worker's events and busy nanoseconds since the last checkpoint.
    per_worker: Vec<(u64, u64)>,
}

impl Collector {
    /// `spare`: an empty recorder of the workers' shape.
    pub(super) fn new(spare: Recorder) -> Collector {
        Collector {
            spare,
            total: Snapshot::default(),
            per_worker: Vec::new(),
        }
    }

    /// Takes what each worker recorded since the last call; returns it merged, and adds it to
    /// the run's total.
    pub(super) fn collect(&mut self, recorders: &[Arc<Mutex<Recorder>>]) -> Snapshot {
        let mut snap = Snapshot::default();
        self.per_worker.resize(recorders.len(), (0, 0));
        for (rec, w) in recorders.iter().zip(&mut self.per_worker) {
            rec.lock()
                .expect("recorder lock")
                .take_into(&mut self.spare);
            snap.add_recorder(&self.spare);
            w.0 += self.spare.counters.events;
            w.1 += self.spare.counters.busy_ns;
            self.spare.clear();
        }
        self.total.add(&snap);
        snap
    }

    /// Each worker's events and busy nanoseconds since the last [`Collector::reset_per_worker`].
    pub(super) fn per_worker(&self) -> Vec<(u64, u64)> {
        self.per_worker.clone()
    }

    pub(super) fn reset_per_worker(&mut self) {
        self.per_worker.iter_mut().for_each(|w| *w = (0, 0));
    }
}
