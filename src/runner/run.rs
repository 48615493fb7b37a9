//! The runner's run: options, starting the clients (threads or multiplexed), the warm-up, the report loop and the outcome.

use std::num::{NonZeroU32, NonZeroU64};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::connect::{Progress, check_memory, connect_share, open_pool, start_hint};
use super::report::{Report, report_loop};
use super::worker::{ConnectRate, Schedule, Shared, Worker};
use super::zero_for_none;
use crate::db::Target;
use crate::error::Error;
use crate::metrics::{Recorder, Snapshot};
use crate::results::figures::Interval;
use crate::workload::Workload;

/// The runner's resolved options.
#[derive(Clone, Debug, Serialize)]
pub struct RunnerOptions {
    /// `--metrics-listen`'s figures: the reporter adds each interval to them.
    #[serde(skip)]
    pub live: Option<std::sync::Arc<crate::metrics::live::Live>>,
    /// `--phases`: the load over time (its open-loop mean rate is `rate`).
    #[serde(skip)]
    pub phases: Option<std::sync::Arc<super::phases::Phases>>,
    /// `--arrivals poisson`: paced events at exponential gaps, else even.
    #[serde(skip)]
    pub poisson: bool,
    /// Where its clients' notes go: the command's voice, which prints them (and says whether
    /// connecting shows a progress bar).
    #[serde(skip)]
    pub notes: crate::output::Events,
    /// Clients (terminals, sessions).
    pub threads: u32,
    /// Worker threads serving the clients (`--workers`); None: one per client. (The results
    /// file writes 0 for None here and below, as the command line says it.)
    #[serde(serialize_with = "zero_for_none::u32")]
    pub workers: Option<NonZeroU32>,
    /// Connections the clients share (`--connections`); None: one per client.
    #[serde(serialize_with = "zero_for_none::u32")]
    pub connections: Option<NonZeroU32>,
    /// Connections opened a second at most while the clients connect; None: no limit.
    #[serde(serialize_with = "zero_for_none::f64")]
    pub connect_rate: Option<f64>,
    /// Seconds to measure; None: no time limit.
    #[serde(serialize_with = "zero_for_none::f64")]
    pub time: Option<f64>,
    /// Measured events to run in all; None: no limit.
    #[serde(serialize_with = "zero_for_none::u64")]
    pub events: Option<NonZeroU64>,
    /// Measured events each client runs before it stops (pgbench's `-t`); None: no limit.
    #[serde(serialize_with = "zero_for_none::u64")]
    pub events_per_client: Option<NonZeroU64>,
    /// Tries of an event before it is given up as failed (pgbench's `--max-tries`); None:
    /// retried until the run ends.
    #[serde(serialize_with = "zero_for_none::u32")]
    pub max_tries: Option<NonZeroU32>,
    /// Each retryable error said as it happens (a client's note; the personality that asks
    /// for it words it).
    #[serde(skip)]
    pub verbose_errors: bool,
    /// Clients that end alone (a personality's policy): a client that meets an error that is
    /// not retried aborts while the others go on; the run's time is up to its last client's
    /// end; the progress line at the end of `--time` is printed when it falls on a tick.
    pub clients_alone: bool,
    /// Milliseconds over which an event counts as late; under `--rate`, an event already that
    /// late when due is skipped (pgbench's `--latency-limit`). None: no limit.
    #[serde(serialize_with = "zero_for_none::f64")]
    pub latency_limit: Option<f64>,
    /// The transaction log a personality asks for (pgbench's `-l`); written beside, not in
    /// the results.
    #[serde(skip)]
    pub txn_log: Option<std::sync::Arc<dyn super::txn_log::TxnLogs>>,
    pub warmup: f64,
    /// Events per second over all clients; None: closed loop.
    #[serde(serialize_with = "zero_for_none::f64")]
    pub rate: Option<f64>,
    /// Seconds between interval lines; None: no lines (intervals of 1 s are still recorded).
    #[serde(serialize_with = "zero_for_none::f64")]
    pub report_interval: Option<f64>,
    /// Reconnect every N events (sysbench's --reconnect); None: never.
    #[serde(serialize_with = "zero_for_none::u64")]
    pub reconnect: Option<NonZeroU64>,
    pub reconnect_timeout: f64,
    /// Saved with the workload's options; not repeated here.
    #[serde(skip)]
    pub rand_seed: u64,
    /// The percentile of each interval's `pct_ms` (sysbench's --percentile; 95 by default).
    #[serde(skip)]
    pub percentile: f64,
    /// Seconds into the measured part of sysbench's `--report-checkpoints`, in order.
    #[serde(skip)]
    pub checkpoints: Vec<u32>,
    /// `--start-at`: the wall-clock instant (seconds since the Unix epoch) at which the
    /// measured part begins, so that several client hosts measure the same seconds. The
    /// clients connect first; the warm-up ends at that instant. Not saved with the options
    /// (each run has its own; results keep `measured_from`).
    #[serde(skip)]
    pub start_at: Option<f64>,
    /// Set when the measured part begins (the clients connected, the warm-up over), for the
    /// step's samplers to measure from.
    #[serde(skip)]
    pub measure_start: crate::metrics::MeasureStart,
}

/// A positive figure of the command line, where 0 says "none".
pub fn positive(v: f64) -> Option<f64> {
    (v > 0.0).then_some(v)
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

/// How a worker thread ended: its clients' figures (kept when an error stopped it: what they
/// measured before it counts), and the error, if one did.
pub(super) type Done = (super::multiplex::Ended, Option<String>);

/// Everything a run measured.
pub struct RunOutcome {
    /// Page cache hits, misses and writes of the clients' connections over the measured part
    /// (SQLite keeps them per connection); None where the server keeps them.
    pub cache_counters: Option<[u64; 3]>,
    pub total: Snapshot,
    /// The names of `total.statements`, from [`Workload::statements`].
    pub statement_names: &'static [&'static str],
    /// The names of `total.kinds`, from [`Workload::kinds`].
    pub kind_names: &'static [&'static str],
    pub intervals: Vec<Interval>,
    /// `--phases`: each phase's intervals added up, and the seconds they cover.
    pub phases: Vec<(Snapshot, f64)>,
    /// Measured seconds: from the end of warm-up to the last client's stop.
    pub seconds: f64,
    /// When the measured part began, in seconds since the Unix epoch (this host's clock).
    pub measured_from: f64,
    /// Measured events of each client, in client order.
    pub thread_events: Vec<u64>,
    /// Seconds each client spent in its measured events.
    pub thread_seconds: Vec<f64>,
    /// Clients served by fewer workers (or sharing connections): how many fell behind their
    /// schedule (see [`multiplex`]); None when every client had a thread of its own.
    pub behind: Option<u64>,
    /// Seconds the clients took to connect.
    pub connect_seconds: f64,
    /// Seconds the clients went on past `--time` when that is more than an answer in flight
    /// (a wait the run could not cut short: another process's lock); `seconds` then counts
    /// them, so that per-second figures are over the time the events took.
    pub overran_s: f64,
    /// Clients that aborted after an error and left the run to the others (pgbench's rule).
    pub aborted_clients: u64,
    pub interrupted: bool,
    /// The error that stopped the run early, if any.
    pub error: Option<String>,
    /// Once a checkpoint was reached: the figures since the last.
    pub since_checkpoint: Option<crate::results::figures::Checkpoint>,
}

/// How a run's clients are served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A thread and a connection per client (every closed-loop run by default, and scripts).
    Threads,
    /// Clients on fewer worker threads, each with its own connection.
    Workers,
    /// Clients on worker threads, sharing `--connections`.
    Pooled,
}

impl RunnerOptions {
    /// The clients: `threads`, at least one.
    pub fn clients(&self) -> u32 {
        self.threads.max(1)
    }

    /// The worker threads that serve the clients.
    pub fn worker_threads(&self) -> u32 {
        let clients = self.clients();
        self.workers.map_or(clients, |w| w.get().min(clients))
    }

    /// The connections the clients share (pooled mode), else 0.
    pub fn shared_connections(&self) -> u32 {
        self.connections.map_or(0, NonZeroU32::get)
    }

    pub fn mode(&self) -> Mode {
        if self.connections.is_some() {
            Mode::Pooled
        } else if self.worker_threads() < self.clients() {
            Mode::Workers
        } else {
            Mode::Threads
        }
    }
}

/// A worker thread's connected clients (before the schedule is known; Workers mode) and its
/// recorder.
type Setup = Result<(Vec<Worker>, Arc<Mutex<Recorder>>), String>;

/// Runs `workload` on `target`. `interrupt` is the Ctrl-C flag; `on_report` sees each interval (and checkpoint) as
/// it closes (the live line). Connection or preparation failures of any client fail the run
/// before it starts; a fatal error during the run ends it with `error` set.
pub fn run(
    target: &dyn Target,
    workload: &dyn Workload,
    opts: &RunnerOptions,
    interrupt: &AtomicBool,
    on_report: &mut dyn FnMut(Report<'_>),
) -> Result<RunOutcome, Error> {
    let stop = AtomicBool::new(false);
    let alone = super::groups::Beside {
        stop: &stop,
        meet: None,
    };
    run_group(target, workload, opts, interrupt, on_report, alone)
}

/// Runs one group of a step's clients, beside the others (`beside`; a run of one group has
/// none).
pub(super) fn run_group(
    target: &dyn Target,
    workload: &dyn Workload,
    opts: &RunnerOptions,
    interrupt: &AtomicBool,
    on_report: &mut dyn FnMut(Report<'_>),
    beside: super::groups::Beside,
) -> Result<RunOutcome, Error> {
    // Until its clients are connected, an error here leaves the group's seat empty: the
    // groups beside it do not wait for it.
    let mut seat = super::groups::Seat::new(beside.meet);
    let clients = opts.clients();
    let workers = opts.worker_threads();
    let mode = opts.mode();
    check_mode(workload, mode)?;
    let started = AtomicU64::new(0);
    let paced = super::worker::PacedLoad::default();
    let txn_log = match &opts.txn_log {
        Some(o) => Some(o.open(clients).map_err(Error::Usage)?),
        None => None,
    };
    let aborted_clients = AtomicU64::new(0);
    let shared = Shared {
        txn_log: txn_log.as_deref(),
        target,
        workload,
        stop: beside.stop,
        interrupt,
        started: &started,
        events_limit: opts.events,
        events_per_client: opts.events_per_client,
        max_tries: opts.max_tries,
        verbose_errors: opts.verbose_errors,
        notes: &opts.notes,
        abort_alone: opts.clients_alone,
        aborted_clients: &aborted_clients,
        latency_limit: opts
            .latency_limit
            .map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        reconnect_every: opts.reconnect,
        reconnect_timeout: Duration::from_secs_f64(opts.reconnect_timeout),
        connects: ConnectRate::new(opts.connect_rate),
        connected: AtomicU64::new(0),
        registry: (mode == Mode::Pooled).then(|| Arc::new(super::pool::Registry::default())),
        paced: (opts.rate.is_some() && mode == Mode::Threads).then_some(&paced),
    };
    let connections = connections_fitting(target, workload, opts, workers)?;
    let connecting = Instant::now();
    let progress = Progress::new(connections, opts.notes);
    let pool = super::pool::ConnPool::default();
    let pooled_clients = if mode == Mode::Pooled {
        open_pool(&shared, opts, &pool, &progress)?
    } else {
        Vec::new()
    };
    let st = Start {
        shared: &shared,
        opts,
        mode,
        clients,
        workers,
        ready: Barrier::new(workers as usize + 1),
        start_at: OnceLock::new(),
        queue: OnceLock::new(),
        aborted: AtomicBool::new(false),
        next_client: AtomicU32::new(0),
        pool: &pool,
        alone: beside.meet.is_none(),
    };
    let (setup_tx, setup_rx) = mpsc::channel::<Setup>();
    let (done_tx, done_rx) = mpsc::channel::<(u32, Done)>();
    std::thread::scope(|s| {
        for thread in 0..workers {
            let (setup_tx, done_tx, st) = (setup_tx.clone(), done_tx.clone(), &st);
            s.spawn(move || worker_thread(st, thread, &setup_tx, &done_tx));
        }
        drop((setup_tx, done_tx));
        let (recorders, connected, setup_error) =
            gather_setups(&st, &setup_rx, &progress, pooled_clients);
        if setup_error.is_none() {
            opts.notes.started();
        }
        let connect_seconds = connecting.elapsed().as_secs_f64();
        let begin = release(&st, connected, setup_error, interrupt, &mut seat)?;
        // Published for the watch on scripts whose code does not return (lua's hook).
        let _end = crate::interrupt::RunEnd::publish(
            opts.time
                .and_then(|t| Duration::try_from_secs_f64(opts.warmup + t).ok())
                .and_then(|d| begin.checked_add(d)),
        );
        let mut outcome = report_loop(
            workload,
            opts,
            begin,
            (&recorders, st.shared.paced),
            &done_rx,
            interrupt,
            on_report,
        );
        outcome.connect_seconds = connect_seconds;
        outcome.aborted_clients = aborted_clients.load(Ordering::Relaxed);
        if let Some(log) = &txn_log {
            log.finish();
        }
        outcome.behind = outcome.behind.filter(|_| mode != Mode::Threads);
        if mode == Mode::Pooled {
            outcome.cache_counters = pool.close();
        }
        Ok(outcome)
    })
}

/// The connections a run opens (its clients', or the pool's), refused where they and the
/// `workers` need more memory than the machine has available.
fn connections_fitting(
    target: &dyn Target,
    workload: &dyn Workload,
    opts: &RunnerOptions,
    workers: u32,
) -> Result<u32, Error> {
    let connections = if opts.mode() == Mode::Pooled {
        opts.shared_connections()
    } else {
        opts.clients()
    };
    let recorder_bytes =
        Recorder::with_kinds(workload.kinds().len(), workload.statements().len()).expected_bytes();
    check_memory(
        target,
        (connections, workers),
        recorder_bytes,
        crate::metrics::procfs::mem_available(),
    )?;
    Ok(connections)
}

/// What the worker threads and the run's own thread share while the clients start.
struct Start<'a> {
    shared: &'a Shared<'a>,
    opts: &'a RunnerOptions,
    mode: Mode,
    clients: u32,
    workers: u32,
    /// The workers and the run's thread meet here once every client is connected.
    ready: Barrier,
    /// When the warm-up begins, set before the workers are released.
    start_at: OnceLock<Instant>,
    /// The clients the workers serve (all but threads mode).
    queue: OnceLock<super::multiplex::Clients>,
    /// A client failed to start: the workers go home.
    aborted: AtomicBool,
    /// The next client to connect (workers mode).
    next_client: AtomicU32,
    pool: &'a super::pool::ConnPool,
    /// No other group of clients runs beside this one.
    alone: bool,
}

/// A client's figures: a recorder per worker thread (with a queue-time histogram when
/// clients wait for a worker).
fn new_recorder(workload: &dyn Workload, mode: Mode) -> Arc<Mutex<Recorder>> {
    let r = Recorder::with_kinds(workload.kinds().len(), workload.statements().len());
    Arc::new(Mutex::new(if mode == Mode::Threads {
        r
    } else {
        r.with_queue()
    }))
}

/// Worker thread `thread`: connects its client (threads mode) or its share of them (workers
/// mode), says so on `setup_tx`, waits for every other, runs until the end, and sends what its
/// clients measured on `done_tx`.
fn worker_thread(
    st: &Start,
    thread: u32,
    setup_tx: &mpsc::Sender<Setup>,
    done_tx: &mpsc::Sender<(u32, Done)>,
) {
    let rec = new_recorder(st.shared.workload, st.mode);
    // The run's only client: what its thread holds while it runs, let go once its
    // connections are closed (before it says it is done; the scope joins it before anything
    // after the run opens a connection).
    let lone = (st.mode == Mode::Threads && st.workers == 1 && st.alone)
        .then(|| st.shared.target.lone_client())
        .flatten();
    let (own, setup) = match st.mode {
        Mode::Threads => match Worker::connect(st.shared, thread, st.opts.rand_seed) {
            Ok(w) => (Some(w), Ok(Vec::new())),
            Err(e) => (None, Err(e)),
        },
        Mode::Workers => (
            None,
            connect_share(st.shared, &st.next_client, st.clients, st.opts.rand_seed),
        ),
        Mode::Pooled => (None, Ok(Vec::new())),
    };
    let failed = setup.is_err();
    let _ = setup_tx.send(setup.map(|w| (w, rec.clone())).map_err(|e| e.to_string()));
    st.ready.wait();
    if failed || st.aborted.load(Ordering::Relaxed) {
        return;
    }
    let begin = *st.start_at.get().expect("set before release");
    let result = match own {
        Some(mut w) => {
            let sched = make_schedule(st.opts, begin, thread, st.workers);
            let r = w.run(st.shared, &sched, &rec);
            let (cache, error) = match r {
                Ok(cache) => (cache, None),
                Err(e) => (None, Some(e)),
            };
            let clients = vec![(w.thread, w.events, w.busy_ns, false)];
            (super::multiplex::Ended { cache, clients }, error)
        }
        None => {
            let mut sched = make_schedule(st.opts, begin, 0, 1);
            sched.pacing = None;
            let q = st.queue.get().expect("set before release");
            let pool = (st.mode == Mode::Pooled).then_some(st.pool);
            super::multiplex::serve(st.shared, q, &sched, pool, &rec)
        }
    };
    drop(lone);
    if result.1.is_some() {
        st.shared.stop.store(true, Ordering::Relaxed);
    }
    let _ = done_tx.send((thread, result));
}

/// Refuses a script's clients on shared threads, and shared connections for a workload whose
/// clients keep a transaction open across events.
fn check_mode(workload: &dyn Workload, mode: Mode) -> Result<(), Error> {
    if mode != Mode::Threads && workload.own_connections() {
        return Err(Error::Usage(
            "a script's clients run on threads of their own (its thread_run blocks): leave out \
             --workers and --connections"
                .into(),
        ));
    }
    if mode == Mode::Pooled && !workload.shares_connections() {
        return Err(Error::Usage(format!(
            "--connections: {}'s clients keep a transaction open across events and cannot \
             share connections",
            workload.name()
        )));
    }
    Ok(())
}

/// Waits until every worker has said how its clients' setup went: their recorders, the
/// connected clients (after `connected`, the pool's), and the first error, which stops the
/// others connecting (one error, not a thousand).
fn gather_setups(
    st: &Start,
    setup_rx: &mpsc::Receiver<Setup>,
    progress: &Progress,
    mut connected: Vec<Worker>,
) -> (Vec<Arc<Mutex<Recorder>>>, Vec<Worker>, Option<String>) {
    let mut recorders = Vec::with_capacity(st.workers as usize);
    let mut setup_error = None;
    let mut reported = 0;
    while reported < st.workers {
        match setup_rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Ok((ws, rec))) => {
                reported += 1;
                recorders.push(rec);
                connected.extend(ws);
            }
            Ok(Err(e)) => {
                reported += 1;
                st.shared.stop.store(true, Ordering::Relaxed);
                setup_error = setup_error.or(Some(e));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if st.mode != Mode::Pooled {
            progress.set(st.shared.connected.load(Ordering::Relaxed));
        }
    }
    progress.finish();
    (recorders, connected, setup_error)
}

/// Releases the workers: on a failed setup, to go home (the error); else at the warm-up's
/// start, with the clients they serve queued (all modes but threads). The warm-up's start.
fn release(
    st: &Start,
    mut connected: Vec<Worker>,
    mut setup_error: Option<String>,
    interrupt: &AtomicBool,
    seat: &mut super::groups::Seat,
) -> Result<Instant, Error> {
    // Beside other groups: all begin together, and none when one could not start.
    let all_ready = seat.arrive(setup_error.is_none(), interrupt, st.shared.stop);
    if !all_ready && setup_error.is_none() && !interrupt.load(Ordering::Relaxed) {
        setup_error = Some("a group of clients beside these could not start".into());
    }
    let begin = if setup_error.is_none() {
        warmup_start(st.opts, interrupt)
    } else {
        Instant::now()
    };
    let _ = st.start_at.set(begin);
    if setup_error.is_none() {
        st.opts
            .measure_start
            .set(begin + Duration::from_secs_f64(st.opts.warmup));
    }
    if let Some(e) = setup_error {
        st.aborted.store(true, Ordering::Relaxed);
        st.ready.wait();
        return Err(Error::Run(format!(
            "could not start the clients on {}: {e}{}",
            st.shared.target.display_url(),
            start_hint(&e)
        )));
    }
    if st.mode != Mode::Threads {
        connected.sort_by_key(|w| w.thread);
        let terms = connected
            .into_iter()
            .map(|w| {
                let sched = make_schedule(st.opts, begin, w.thread, st.clients);
                super::multiplex::Term::new(w, begin, sched)
            })
            .collect();
        let _ = st.queue.set(super::multiplex::Clients::new(terms));
    }
    st.ready.wait();
    Ok(begin)
}

fn make_schedule(opts: &RunnerOptions, start: Instant, thread: u32, threads: u32) -> Schedule {
    let measure_start = start + Duration::from_secs_f64(opts.warmup);
    let deadline = opts
        .time
        .map(|t| measure_start + Duration::from_secs_f64(t));
    // Under --rate each client runs its share of the rate on its own fixed schedule, offset
    // from the others so that the clients' events interleave evenly (under --phases, at the
    // rate where the run begins).
    let open_phases = opts.phases.as_ref().filter(|p| !p.closed_loop());
    let first_rate = open_phases
        .and_then(|p| p.rate_at(-opts.warmup))
        .filter(|r| *r > 0.0);
    let pacing = opts.rate.map(|rate| {
        let gap = Duration::from_secs_f64(f64::from(threads) / first_rate.unwrap_or(rate));
        (
            start + gap.mul_f64(f64::from(thread) / f64::from(threads)),
            gap,
        )
    });
    let mut sched = Schedule {
        measure_start,
        deadline,
        pacing,
        phases: opts.phases.clone(),
        client: thread,
        clients: threads,
        poisson: opts.poisson.then_some(opts.rand_seed),
    };
    // Phases that begin at rate 0: the first slot is where a rate begins.
    if let (Some(_), None, Some((_, gap))) = (open_phases, first_rate, sched.pacing) {
        let resumed = sched.next_slot(start, &mut None);
        sched.pacing = Some((resumed, gap));
    }
    sched
}

/// Under `--rate`, at `now`: the events due by every client's schedule and not yet begun (a
/// client behind its schedule owes them), and the events running.
pub(super) fn paced_queue(
    opts: &RunnerOptions,
    start: Instant,
    now: Instant,
    paced: &super::worker::PacedLoad,
) -> (u64, u64) {
    let clients = opts.clients();
    if let Some(p) = opts.phases.as_ref().filter(|p| !p.closed_loop()) {
        // Due by the phases' rate, from the start of the run (the warm-up's at the first
        // phase's rate).
        let t = |at: Instant| {
            let m = start + Duration::from_secs_f64(opts.warmup);
            if at >= m {
                (at - m).as_secs_f64()
            } else {
                -(m - at).as_secs_f64()
            }
        };
        let due = (p.events_until(t(now)) - p.events_until(t(start))).max(0.0) as u64;
        let begun = paced.begun.load(Ordering::Relaxed);
        return (
            due.saturating_sub(begun),
            paced.running.load(Ordering::Relaxed),
        );
    }
    let due: u64 = (0..clients)
        .filter_map(|c| make_schedule(opts, start, c, clients).pacing)
        .filter(|(first, _)| now >= *first)
        .map(|(first, gap)| {
            let gaps = (now - first).as_secs_f64() / gap.as_secs_f64().max(1e-9);
            gaps as u64 + 1
        })
        .sum();
    let begun = paced.begun.load(Ordering::Relaxed);
    let running = paced.running.load(Ordering::Relaxed);
    (due.saturating_sub(begun), running)
}

#[cfg(test)]
mod tests {
    use super::start_hint;

    #[test]
    fn clients_refused_for_a_server_wide_limit_are_told_what_to_change() {
        // PostgreSQL's and MySQL's "too many connections", as the clients' errors print them.
        for e in [
            "sorry, too many clients already (53300)",
            "remaining connection slots are reserved for non-replication superuser connections (53300)",
            "Too many connections (1040 (08004))",
        ] {
            let hint = start_hint(e);
            assert!(
                hint.contains("max_connections") && hint.contains("--connections"),
                "{e}: {hint}"
            );
        }
        assert!(
            start_hint("Can't create more than max_prepared_stmt_count statements (1461)")
                .contains("--ps-mode disable")
        );
        assert_eq!(start_hint("password authentication failed (28P01)"), "");
    }
}
