//! Runs a workload: client threads with their own connections, warm-up, stop at `--time` or
//! `--events`, open-loop pacing under `--rate`, Ctrl-C; and one reporter (the calling thread)
//! that merges the clients' recorders every interval and hands each interval to a callback.

mod worker;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::Error;
use crate::metrics::{Recorder, Snapshot, ns_to_ms};
use crate::target::Target;
use crate::workload::Workload;
use worker::{Schedule, Shared, Worker};

/// The runner's resolved options.
#[derive(Clone, Debug, Serialize)]
pub struct RunnerOptions {
    pub threads: u32,
    /// Seconds to measure; 0 = no time limit.
    pub time: f64,
    /// Measured events to run in all; 0 = no limit.
    pub events: u64,
    pub warmup: f64,
    /// Events per second over all clients; 0 = closed loop.
    pub rate: f64,
    /// Seconds between interval lines; 0 = no lines (intervals of 1 s are still recorded).
    pub report_interval: f64,
    /// Reconnect every N events (sysbench's --reconnect); 0 = never.
    pub reconnect: u64,
    pub reconnect_timeout: f64,
    /// Saved with the workload's options; not repeated here.
    #[serde(skip)]
    pub rand_seed: u64,
    /// The percentile of each interval's `pct_ms` (sysbench's --percentile; 95 by default).
    #[serde(skip)]
    pub percentile: f64,
    /// `--start-at`: the wall-clock instant (seconds since the Unix epoch) at which the
    /// measured part begins, so that several client hosts measure the same seconds. The
    /// clients connect first; the warm-up ends at that instant. Not saved with the options
    /// (each run has its own; results keep `measured_from`).
    #[serde(skip)]
    pub start_at: Option<f64>,
}

/// Seconds since the Unix epoch, now.
pub fn epoch_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// When the warm-up begins: now, or under `--start-at` the instant `warmup` seconds before
/// it, waited for here (Ctrl-C ends the wait). A start already passed shortens the warm-up.
fn warmup_start(opts: &RunnerOptions, interrupt: &AtomicBool) -> Instant {
    let Some(at) = opts.start_at else {
        return Instant::now();
    };
    let lead = at - opts.warmup - epoch_now();
    let now = Instant::now();
    if lead <= 0.0 {
        return now
            .checked_sub(Duration::from_secs_f64(-lead))
            .unwrap_or(now);
    }
    let begin = now + Duration::from_secs_f64(lead);
    loop {
        let left = begin.saturating_duration_since(Instant::now());
        if left.is_zero() || interrupt.load(Ordering::Relaxed) {
            return begin.min(Instant::now());
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// One interval's figures, as the live line shows them and the results file stores them.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    /// Seconds from the start of measurement to the end of this interval.
    pub t: f64,
    pub seconds: f64,
    pub threads: u32,
    pub events: u64,
    pub tps: f64,
    pub qps: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub others_per_s: f64,
    pub rows_per_s: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub err_per_s: f64,
    pub reconn_per_s: f64,
    /// The latency at the run's `percentile`, for sysbench's interval line (not saved).
    #[serde(skip)]
    pub pct_ms: f64,
    /// TPC-C: committed New-Order transactions per minute, and New-Order's 95th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_order_p95_ms: Option<f64>,
}

impl Interval {
    /// `new_order`: the index of TPC-C's New-Order among the snapshot's transaction types.
    fn new(
        t: f64,
        seconds: f64,
        (threads, percentile): (u32, f64),
        s: &Snapshot,
        new_order: Option<usize>,
    ) -> Interval {
        let c = &s.counters;
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
            p50_ms: s.quantile_ms(0.5),
            p95_ms: s.quantile_ms(0.95),
            p99_ms: s.quantile_ms(0.99),
            max_ms: s.quantile_ms(1.0),
            err_per_s: per_s(c.errors()),
            reconn_per_s: per_s(c.reconnects),
            pct_ms: s.quantile_ms(percentile / 100.0),
            nopm: new_order
                .map(|k| s.kinds.get(k).map_or(0, |k| k.events - k.rollbacks))
                .map(|n| per_s(n) * 60.0),
            new_order_p95_ms: new_order.map(|k| {
                s.kinds
                    .get(k)
                    .filter(|k| !k.latency.is_empty())
                    .map_or(0.0, |k| ns_to_ms(k.latency.value_at_quantile(0.95)))
            }),
        }
    }
}

/// How a client ended: its page cache counters (SQLite), or the error that stopped it.
type Done = Result<Option<[u64; 3]>, String>;

/// Everything a run measured.
pub struct RunOutcome {
    /// Page cache hits, misses and writes of the clients' connections over the measured part
    /// (SQLite keeps them per connection); None where the server keeps them.
    pub cache_counters: Option<[u64; 3]>,
    pub total: Snapshot,
    /// The names of `total.statements`, from [`Workload::statements`].
    pub statement_names: &'static [&'static str],
    pub intervals: Vec<Interval>,
    /// Measured seconds: from the end of warm-up to the last client's stop.
    pub seconds: f64,
    /// When the measured part began, in seconds since the Unix epoch (this host's clock).
    pub measured_from: f64,
    pub thread_events: Vec<u64>,
    /// Seconds each client spent in its measured events.
    pub thread_seconds: Vec<f64>,
    pub interrupted: bool,
    /// The error that stopped the run early, if any.
    pub error: Option<String>,
}

/// Runs `workload` on `target`. `interrupt` is the Ctrl-C flag; `on_interval` sees each interval as
/// it closes (the live line). Connection or preparation failures of any client fail the run
/// before it starts; a fatal error during the run ends it with `error` set.
pub fn run(
    target: &dyn Target,
    workload: &dyn Workload,
    opts: &RunnerOptions,
    interrupt: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> Result<RunOutcome, Error> {
    let threads = opts.threads.max(1);
    let started = AtomicU64::new(0);
    let shared = Shared {
        target,
        workload,
        stop: AtomicBool::new(false),
        interrupt,
        started: &started,
        events_limit: opts.events,
        reconnect_every: opts.reconnect,
        reconnect_timeout: Duration::from_secs_f64(opts.reconnect_timeout),
    };
    let ready = Barrier::new(threads as usize + 1);
    let schedule: Mutex<Option<Instant>> = Mutex::new(None);
    let aborted = AtomicBool::new(false);
    let (setup_tx, setup_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel::<(u32, Done)>();
    std::thread::scope(|s| {
        for thread in 0..threads {
            let (setup_tx, done_tx) = (setup_tx.clone(), done_tx.clone());
            let (sh, ready, schedule, aborted) = (&shared, &ready, &schedule, &aborted);
            s.spawn(move || {
                let worker = Worker::connect(sh, thread, opts.rand_seed);
                let _ = setup_tx.send(
                    worker
                        .as_ref()
                        .map(|w| (thread, w.recorder.clone()))
                        .map_err(|e| e.to_string()),
                );
                ready.wait();
                let (Ok(worker), false) = (worker, aborted.load(Ordering::Relaxed)) else {
                    return;
                };
                let start = schedule
                    .lock()
                    .expect("schedule")
                    .expect("set before release");
                let sched = make_schedule(opts, start, thread, threads);
                let result = worker.run(sh, &sched);
                if result.is_err() {
                    sh.stop.store(true, Ordering::Relaxed);
                }
                let _ = done_tx.send((thread, result));
            });
        }
        drop((setup_tx, done_tx));
        let mut recorders = vec![None; threads as usize];
        let mut setup_error = None;
        for msg in setup_rx.iter().take(threads as usize) {
            match msg {
                Ok((t, rec)) => recorders[t as usize] = Some(rec),
                Err(e) => setup_error = setup_error.or(Some(e)),
            }
        }
        let begin = if setup_error.is_none() {
            warmup_start(opts, interrupt)
        } else {
            Instant::now()
        };
        *schedule.lock().expect("schedule") = Some(begin);
        if let Some(e) = setup_error {
            aborted.store(true, Ordering::Relaxed);
            ready.wait();
            return Err(Error::Run(format!(
                "could not start the clients on {}: {e}",
                target.display_url()
            )));
        }
        ready.wait();
        let start = schedule.lock().expect("schedule").expect("set");
        let recorders: Vec<Arc<Mutex<Recorder>>> = recorders
            .into_iter()
            .map(|r| r.expect("every client reported"))
            .collect();
        Ok(report_loop(
            workload,
            opts,
            start,
            &recorders,
            &done_rx,
            interrupt,
            on_interval,
        ))
    })
}

fn make_schedule(opts: &RunnerOptions, start: Instant, thread: u32, threads: u32) -> Schedule {
    let measure_start = start + Duration::from_secs_f64(opts.warmup);
    let deadline = (opts.time > 0.0).then(|| measure_start + Duration::from_secs_f64(opts.time));
    // Under --rate each client runs its share of the rate on its own fixed schedule, offset
    // from the others so that the clients' events interleave evenly.
    let pacing = (opts.rate > 0.0).then(|| {
        let gap = Duration::from_secs_f64(f64::from(threads) / opts.rate);
        (
            start + gap.mul_f64(f64::from(thread) / f64::from(threads)),
            gap,
        )
    });
    Schedule {
        measure_start,
        deadline,
        pacing,
    }
}

/// Collects an interval every tick until every client has stopped; the calling thread is the
/// reporter.
fn report_loop(
    workload: &dyn Workload,
    opts: &RunnerOptions,
    start: Instant,
    recorders: &[Arc<Mutex<Recorder>>],
    done_rx: &mpsc::Receiver<(u32, Done)>,
    interrupt: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
) -> RunOutcome {
    let threads = recorders.len() as u32;
    let tick = Duration::from_secs_f64(if opts.report_interval > 0.0 {
        opts.report_interval
    } else {
        1.0
    });
    let measure_start = start + Duration::from_secs_f64(opts.warmup);
    let kinds = workload.kinds();
    let new_order = kinds.iter().position(|k| *k == "new_order");
    let mut collector = Collector::new(recorders.len(), kinds.len(), workload.statements().len());
    let mut intervals = Vec::new();
    let mut last = measure_start;
    let mut next_tick = measure_start + tick;
    let mut running = threads;
    let mut error = None;
    let mut cache_counters: Option<[u64; 3]> = None;
    while running > 0 {
        match done_rx.recv_timeout(next_tick.saturating_duration_since(Instant::now())) {
            Ok((_, result)) => {
                running -= 1;
                match result {
                    Err(e) => error = error.or(Some(e)),
                    Ok(Some(c)) => {
                        let sum = cache_counters.get_or_insert([0; 3]);
                        for (s, v) in sum.iter_mut().zip(c) {
                            *s += v;
                        }
                    }
                    Ok(None) => {}
                }
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
        let snap = collector.collect(recorders);
        let iv = Interval::new(
            now.duration_since(measure_start).as_secs_f64(),
            now.duration_since(last).as_secs_f64(),
            (threads, opts.percentile),
            &snap,
            new_order,
        );
        if opts.report_interval > 0.0 {
            on_interval(&iv);
        }
        intervals.push(iv);
        last = now;
        next_tick += tick;
    }
    // Throughput is over the measured time: a client that overran the deadline (an answer in
    // flight, a reconnect) does not stretch it.
    let mut end = Instant::now().max(measure_start);
    if opts.time > 0.0 {
        end = end.min(measure_start + Duration::from_secs_f64(opts.time));
    }
    let snap = collector.collect(recorders);
    let tail = end.duration_since(last).as_secs_f64();
    if snap.counters.events > 0 && tail > 0.0 {
        intervals.push(Interval::new(
            end.duration_since(measure_start).as_secs_f64(),
            tail,
            (threads, opts.percentile),
            &snap,
            new_order,
        ));
    }
    // The wall clock of the measured part's start: now, less the time since.
    let measured_from = epoch_now() - Instant::now().duration_since(measure_start).as_secs_f64();
    RunOutcome {
        cache_counters,
        measured_from,
        seconds: end.duration_since(measure_start).as_secs_f64(),
        total: collector.total,
        statement_names: workload.statements(),
        intervals,
        thread_events: collector.thread_events,
        thread_seconds: collector
            .thread_busy_ns
            .iter()
            .map(|&ns| ns as f64 / 1e9)
            .collect(),
        interrupted: interrupt.load(Ordering::Relaxed),
        error,
    }
}

/// The reporter's side of merging: a spare recorder per client to swap in, and the totals.
struct Collector {
    spares: Vec<Recorder>,
    total: Snapshot,
    thread_events: Vec<u64>,
    thread_busy_ns: Vec<u64>,
}

impl Collector {
    fn new(clients: usize, kinds: usize, statements: usize) -> Collector {
        Collector {
            spares: (0..clients)
                .map(|_| Recorder::with_kinds(kinds, statements))
                .collect(),
            total: Snapshot::default(),
            thread_events: vec![0; clients],
            thread_busy_ns: vec![0; clients],
        }
    }

    /// Takes what each client recorded since the last call; returns it merged, and adds it to
    /// the run's total.
    fn collect(&mut self, recorders: &[Arc<Mutex<Recorder>>]) -> Snapshot {
        let mut snap = Snapshot::default();
        for (i, rec) in recorders.iter().enumerate() {
            let spare = &mut self.spares[i];
            rec.lock().expect("recorder lock").take_into(spare);
            snap.add_recorder(spare);
            self.thread_events[i] += spare.counters.events;
            self.thread_busy_ns[i] += spare.counters.busy_ns;
            spare.clear();
        }
        self.total.add(&snap);
        snap
    }
}
