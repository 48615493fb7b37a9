//! Runs a workload: client threads with their own connections, warm-up, stop at `--time` or
//! `--events`, open-loop pacing under `--rate`, Ctrl-C; and one reporter (the calling thread)
//! that merges the clients' recorders every interval and hands each interval to a callback.

mod groups;
mod multiplex;
mod pool;
pub mod txn_log;
mod worker;

pub use groups::{Group, run_groups};

use std::num::{NonZeroU32, NonZeroU64};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::db::Target;
use crate::error::Error;
use crate::metrics::{Recorder, Snapshot};
use crate::results::figures::Interval;
use crate::workload::Workload;
use worker::{ConnectRate, Schedule, Shared, Worker};

/// The runner's resolved options.
#[derive(Clone, Debug, Serialize)]
pub struct RunnerOptions {
    /// How its text looks (acting as sysbench: no progress bar).
    #[serde(skip)]
    pub style: crate::output::Style,
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
    /// Each retryable error printed on stderr as pgbench's `--verbose-errors` prints it.
    #[serde(skip)]
    pub verbose_errors: bool,
    /// Clients as pgbench's (its personality sets it): a client that meets an error that is
    /// not retried aborts alone while the others go on; the run's time is up to its last
    /// client's end; the progress line at `-T`'s end is printed when it falls on a tick.
    pub pgbench_clients: bool,
    /// Milliseconds over which an event counts as late; under `--rate`, an event already that
    /// late when due is skipped (pgbench's `--latency-limit`). None: no limit.
    #[serde(serialize_with = "zero_for_none::f64")]
    pub latency_limit: Option<f64>,
    /// pgbench's transaction log (`-l`), when asked; written beside, not in the results.
    #[serde(skip)]
    pub txn_log: Option<txn_log::TxnLogOpts>,
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

/// The options that are absent as the command line's 0, as the results file has them.
mod zero_for_none {
    use std::num::{NonZeroU32, NonZeroU64};

    use serde::Serializer;

    pub fn u32<S: Serializer>(v: &Option<NonZeroU32>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u32(v.map_or(0, NonZeroU32::get))
    }

    pub fn u64<S: Serializer>(v: &Option<NonZeroU64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(v.map_or(0, NonZeroU64::get))
    }

    pub fn f64<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(v.unwrap_or(0.0))
    }
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
type Done = (multiplex::Ended, Option<String>);

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
    let stop = AtomicBool::new(false);
    let alone = groups::Beside {
        stop: &stop,
        meet: None,
    };
    run_group(target, workload, opts, interrupt, on_interval, alone)
}

/// Runs one group of a step's clients, beside the others (`beside`; a run of one group has
/// none).
fn run_group(
    target: &dyn Target,
    workload: &dyn Workload,
    opts: &RunnerOptions,
    interrupt: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
    beside: groups::Beside,
) -> Result<RunOutcome, Error> {
    // Until its clients are connected, an error here leaves the group's seat empty: the
    // groups beside it do not wait for it.
    let mut seat = groups::Seat::new(beside.meet);
    let clients = opts.clients();
    let workers = opts.worker_threads();
    let mode = opts.mode();
    check_mode(workload, mode)?;
    let started = AtomicU64::new(0);
    let paced = worker::PacedLoad::default();
    let txn_log = match &opts.txn_log {
        Some(o) => Some(txn_log::TxnLog::create(o, clients).map_err(Error::Usage)?),
        None => None,
    };
    let aborted_clients = AtomicU64::new(0);
    let shared = Shared {
        txn_log: txn_log.as_ref(),
        target,
        workload,
        stop: beside.stop,
        interrupt,
        started: &started,
        events_limit: opts.events,
        events_per_client: opts.events_per_client,
        max_tries: opts.max_tries,
        verbose_errors: opts.verbose_errors,
        style: &opts.style,
        abort_alone: opts.pgbench_clients,
        aborted_clients: &aborted_clients,
        latency_limit: opts
            .latency_limit
            .map(|ms| Duration::from_secs_f64(ms / 1000.0)),
        reconnect_every: opts.reconnect,
        reconnect_timeout: Duration::from_secs_f64(opts.reconnect_timeout),
        connects: ConnectRate::new(opts.connect_rate),
        connected: AtomicU64::new(0),
        registry: (mode == Mode::Pooled).then(|| Arc::new(pool::Registry::default())),
        paced: (opts.rate.is_some() && mode == Mode::Threads).then_some(&paced),
    };
    let connections = if mode == Mode::Pooled {
        opts.shared_connections()
    } else {
        clients
    };
    let recorder_bytes =
        Recorder::with_kinds(workload.kinds().len(), workload.statements().len()).expected_bytes();
    check_memory(
        target,
        (connections, workers),
        recorder_bytes,
        crate::metrics::procfs::mem_available(),
    )?;
    let connecting = Instant::now();
    let progress = Progress::new(
        if mode == Mode::Pooled {
            opts.shared_connections()
        } else {
            clients
        },
        opts.style,
    );
    let pool = pool::ConnPool::default();
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
            on_interval,
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
    queue: OnceLock<multiplex::Clients>,
    /// A client failed to start: the workers go home.
    aborted: AtomicBool,
    /// The next client to connect (workers mode).
    next_client: AtomicU32,
    pool: &'a pool::ConnPool,
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
            (multiplex::Ended { cache, clients }, error)
        }
        None => {
            let mut sched = make_schedule(st.opts, begin, 0, 1);
            sched.pacing = None;
            let q = st.queue.get().expect("set before release");
            let pool = (st.mode == Mode::Pooled).then_some(st.pool);
            multiplex::serve(st.shared, q, &sched, pool, &rec)
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
    seat: &mut groups::Seat,
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
                let paced = make_schedule(st.opts, begin, w.thread, st.clients).pacing;
                multiplex::Term::new(w, begin, paced)
            })
            .collect();
        let _ = st.queue.set(multiplex::Clients::new(terms));
    }
    st.ready.wait();
    Ok(begin)
}

/// Workers mode: connects clients, taking the next client number from `next`, until every
/// client is connected or the run is stopped.
fn connect_share(
    sh: &Shared,
    next: &AtomicU32,
    clients: u32,
    seed: u64,
) -> Result<Vec<Worker>, crate::db::DbError> {
    let mut mine = Vec::new();
    while !sh.stopped() {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= clients {
            break;
        }
        mine.push(Worker::connect(sh, i, seed)?);
    }
    Ok(mine)
}

/// What to change when the clients could not start for a server-wide limit.
fn start_hint(e: &str) -> &'static str {
    if e.contains("max_prepared_stmt_count") {
        // MySQL's server-wide limit of prepared statements is met by many clients first.
        " (each client prepares its statements: raise the server's max_prepared_stmt_count, let the clients share fewer connections with --connections, or use text statements with --ps-mode disable)"
    } else if e.contains("(53300)") || e.contains("(1040 (") {
        // PostgreSQL's SQLSTATE; MySQL's error number with its SQLSTATE after it.
        // The check before the run found the connections free; others took them since.
        " (the server's max_connections was reached while the clients connected, though enough were free when dbsweep checked: other sessions connected meanwhile; raise max_connections or let the clients share fewer with --connections)"
    } else {
        ""
    }
}

/// Pooled mode: opens the `--connections` at the connect rate, makes every client on the first
/// of them (which only registers their statements) and prepares the statements on each.
fn open_pool(
    sh: &Shared,
    opts: &RunnerOptions,
    pool: &pool::ConnPool,
    progress: &Progress,
) -> Result<Vec<Worker>, Error> {
    let url = sh.target.display_url();
    let failed = |e: crate::db::DbError| {
        let e = e.to_string();
        Error::Run(format!(
            "could not start the clients on {url}: {e}{}",
            start_hint(&e)
        ))
    };
    let registry = sh.registry.clone().expect("a pooled run has a registry");
    let mut conns = Vec::with_capacity(opts.shared_connections() as usize);
    for _ in 0..opts.shared_connections() {
        if sh.stopped() {
            break;
        }
        sh.connects.wait(&|| sh.stopped());
        let conn = sh.target.connect().map_err(failed)?;
        conns.push(pool::Pooled::new(conn, registry.clone()));
        progress.set(conns.len() as u64);
    }
    let mut clients = Vec::new();
    if let Some(first) = conns.first_mut() {
        let dialect = crate::db::Conn::dialect(first);
        clients.reserve(opts.threads as usize);
        for i in 0..opts.clients() {
            let client = sh.workload.client_on(first, i, sh.target).map_err(failed)?;
            clients.push(Worker::with(
                i,
                Box::new(crate::db::Detached(dialect)),
                client,
                opts.rand_seed,
            ));
        }
    }
    for mut c in conns {
        c.prepare_registered().map_err(failed)?;
        pool.put(Box::new(c));
    }
    Ok(clients)
}

/// The progress bar of connecting many clients (on a terminal only; none for a few).
struct Progress(Option<indicatif::ProgressBar>);

impl Progress {
    fn new(total: u32, style: crate::output::Style) -> Progress {
        use std::io::IsTerminal;
        let show = total >= 100
            && std::io::stderr().is_terminal()
            && style.voice().is_none_or(|v| v.connect_bar());
        Progress(show.then(|| {
            let bar = indicatif::ProgressBar::new(u64::from(total));
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "connecting {pos}/{len} [{bar:30}] {per_sec} eta {eta}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        }))
    }

    fn set(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.set_position(n);
        }
    }

    fn finish(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

/// What a worker thread's stack holds once it runs (its 2 MiB are reserved, not touched).
const WORKER_STACK: u64 = 128 << 10;

/// Refuses a run whose `connections` and `workers` need more memory than `available` (the
/// machine's available memory, where known): 5,000 SQLite clients would take the machine's
/// memory and run nothing. Each connection holds what its target says; each worker a recorder
/// of `recorder_bytes` and its stack.
fn check_memory(
    target: &dyn Target,
    (connections, workers): (u32, u32),
    recorder_bytes: u64,
    available: Option<u64>,
) -> Result<(), Error> {
    let Some(available) = available else {
        return Ok(());
    };
    let per_connection = target.client_memory();
    // Two recorders a client (its own and the one the reporter swaps in).
    let per_worker = 2 * recorder_bytes + WORKER_STACK;
    let need = u64::from(connections)
        .saturating_mul(per_connection)
        .saturating_add(u64::from(workers).saturating_mul(per_worker));
    if need <= available {
        return Ok(());
    }
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    Err(Error::Usage(format!(
        "{connections} client connection(s) on {} need about {:.0} MiB ({:.1} MiB per connection, \
         {:.1} MiB per client thread for its histograms and stack), more than the {:.0} MiB this \
         machine has available: use fewer clients{}",
        target.kind(),
        mib(need),
        mib(per_connection),
        mib(per_worker),
        mib(available),
        if target.dialect() == crate::db::Dialect::Sqlite {
            ", or a smaller cache_size in the URL"
        } else {
            ", or --workers to share threads among them"
        }
    )))
}

fn make_schedule(opts: &RunnerOptions, start: Instant, thread: u32, threads: u32) -> Schedule {
    let measure_start = start + Duration::from_secs_f64(opts.warmup);
    let deadline = opts
        .time
        .map(|t| measure_start + Duration::from_secs_f64(t));
    // Under --rate each client runs its share of the rate on its own fixed schedule, offset
    // from the others so that the clients' events interleave evenly.
    let pacing = opts.rate.map(|rate| {
        let gap = Duration::from_secs_f64(f64::from(threads) / rate);
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

/// Under `--rate`, at `now`: the events due by every client's schedule and not yet begun (a
/// client behind its schedule owes them), and the events running.
fn paced_queue(
    opts: &RunnerOptions,
    start: Instant,
    now: Instant,
    paced: &worker::PacedLoad,
) -> (u64, u64) {
    let clients = opts.clients();
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

/// Collects an interval every tick until every client has stopped; the calling thread is the
/// reporter.
fn report_loop(
    workload: &dyn Workload,
    opts: &RunnerOptions,
    start: Instant,
    (recorders, paced): (&[Arc<Mutex<Recorder>>], Option<&worker::PacedLoad>),
    done_rx: &mpsc::Receiver<(u32, Done)>,
    interrupt: &AtomicBool,
    on_interval: &mut dyn FnMut(&Interval),
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
    let mut intervals = Vec::new();
    let mut last = measure_start;
    let mut next_tick = measure_start + tick;
    let mut running = recorders.len();
    let mut error = None;
    let mut cache_counters: Option<[u64; 3]> = None;
    let mut ended_clients = Vec::with_capacity(threads as usize);
    while running > 0 {
        match done_rx.recv_timeout(next_tick.saturating_duration_since(Instant::now())) {
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
            continue;
        }
        let snap = collector.collect(recorders);
        let mut iv = snap.interval(
            now.duration_since(measure_start).as_secs_f64(),
            now.duration_since(last).as_secs_f64(),
            (threads, opts.percentile),
            new_order,
        );
        iv.queue = paced.map(|p| paced_queue(opts, start, now, p));
        if opts.report_interval.is_some() {
            on_interval(&iv);
        }
        intervals.push(iv);
        last = now;
        next_tick += tick;
    }
    // Throughput is over the measured time: a client that overran the deadline by an answer
    // in flight or a reconnect does not stretch it. One held far past it (a lock of another
    // process) does: its events took that long, and the overrun is said.
    let mut end = Instant::now().max(measure_start);
    let mut overran_s = 0.0;
    // pgbench's run time is up to its last client's end, whatever it was doing at -T's.
    if let Some(t) = opts.time.filter(|_| !opts.pgbench_clients) {
        let deadline = measure_start + Duration::from_secs_f64(t);
        let over = end.saturating_duration_since(deadline).as_secs_f64();
        if over > OVERRUN_SAID_S.max(t * 0.1) {
            overran_s = over;
        } else {
            end = end.min(deadline);
        }
    }
    let snap = collector.collect(recorders);
    // Never zero when there are events to put in it: they count in the total.
    let tail = end.duration_since(last).as_secs_f64().max(1e-9);
    if snap.counters.events > 0 {
        let iv = snap.interval(
            end.duration_since(measure_start).as_secs_f64(),
            tail,
            (threads, opts.percentile),
            new_order,
        );
        if progress_at_the_end(opts, end.duration_since(measure_start).as_secs_f64()) {
            on_interval(&iv);
        }
        intervals.push(iv);
    }
    // The wall clock of the measured part's start: now, less the time since.
    let measured_from = epoch_now() - Instant::now().duration_since(measure_start).as_secs_f64();
    ended_clients.sort_unstable_by_key(|c| c.0);
    RunOutcome {
        cache_counters,
        measured_from,
        seconds: end.duration_since(measure_start).as_secs_f64(),
        total: collector.total,
        statement_names: workload.statements(),
        kind_names: workload.kinds(),
        intervals,
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

/// The overrun of `--time` past which a run's seconds count it (and it is said): more than
/// any answer in flight or reconnect takes, less than a lock wait that changes the figures.
const OVERRUN_SAID_S: f64 = 1.0;

/// Whether the interval ending with the run gets its line: as pgbench prints it, when `-T`'s
/// end falls on a `-P` tick of a closed-loop run (its clients are still running there; paced
/// clients have stopped before their next schedule passes the end, and pgbench's line with
/// them). sysbench and dbsweep's own lines stop before `--time`.
fn progress_at_the_end(opts: &RunnerOptions, ran: f64) -> bool {
    let (Some(tick), Some(time)) = (opts.report_interval, opts.time) else {
        return false;
    };
    let ticks = time / tick;
    opts.pgbench_clients
        && opts.rate.is_none()
        && ran >= time
        && (ticks - ticks.round()).abs() < 1e-9
}

/// The reporter's side of merging: one spare recorder to swap in (each worker's recorder,
/// taken, is emptied and becomes the spare for the next), and the totals.
struct Collector {
    spare: Recorder,
    total: Snapshot,
}

impl Collector {
    /// `spare`: an empty recorder of the workers' shape.
    fn new(spare: Recorder) -> Collector {
        Collector {
            spare,
            total: Snapshot::default(),
        }
    }

    /// Takes what each worker recorded since the last call; returns it merged, and adds it to
    /// the run's total.
    fn collect(&mut self, recorders: &[Arc<Mutex<Recorder>>]) -> Snapshot {
        let mut snap = Snapshot::default();
        for rec in recorders {
            rec.lock()
                .expect("recorder lock")
                .take_into(&mut self.spare);
            snap.add_recorder(&self.spare);
            self.spare.clear();
        }
        self.total.add(&snap);
        snap
    }
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
