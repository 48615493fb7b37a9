//! sysbench's event loop for its tests written in C: each thread takes the test's next event
//! until `--events`, `--time`, the test itself or Ctrl-C ends it, each event timed; interval
//! lines every `--report-interval`; the closing statistics as sysbench prints them.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

pub use super::values::Limits;
use crate::dropin::sysbench::output::{self, General, SysbenchStyle};
use crate::output::RunHeader;
use crate::results::figures::Interval;

/// A test written in C: a thread's state, its next event and the event itself.
pub trait Test: Sync {
    /// What one thread keeps between its events.
    type Local: Send;
    /// The state of thread `thread`.
    fn local(&self, thread: u32) -> Self::Local;
    /// Whether the thread has another event (sysbench's `next_event`; not timed).
    fn next(&self, local: &mut Self::Local) -> bool;
    /// The event (timed); an error ends the run (sysbench's FATAL line).
    fn execute(&self, local: &mut Self::Local) -> Result<(), String>;
    /// What a thread does once its events are over (not timed; fileio's closing fsyncs).
    fn thread_done(&self, _local: &mut Self::Local) -> Result<(), String> {
        Ok(())
    }
    /// An interval line; by default sysbench's generic one (events per second and the
    /// latency at the percentile).
    fn interval_line(&self, iv: &Interval, percentile: u32) -> String {
        output::events_line(iv, percentile)
    }
    /// The test's own lines before the closing statistics (at a checkpoint too), of the events
    /// in `m`; counters of its own start again after it, as sysbench's do.
    fn report(&self, _m: &Measured) -> String {
        String::new()
    }
}

/// What a run measured.
pub struct Measured {
    /// The error that ended the run, in sysbench's words.
    pub error: Option<String>,
    /// Under `--rate`, the arrivals outran the threads: the queue filled (sysbench's FATAL).
    pub overrun: bool,
    /// Seconds since the run began, and since the last checkpoint (the whole run without
    /// one): the rates are of the second, the events and latencies since that checkpoint.
    pub time_s: f64,
    pub interval_s: f64,
    pub events: u64,
    /// Latencies in nanoseconds.
    pub hist: Histogram<u64>,
    pub min_ns: u64,
    pub max_ns: u64,
    pub sum_ns: u64,
    pub thread_events: Vec<u64>,
    pub thread_time_s: Vec<f64>,
}

impl Measured {
    /// sysbench's closing statistics of this run.
    pub fn general(&self, percentile: u32) -> String {
        let ms = |ns: u64| ns as f64 / 1e6;
        let avg = if self.events > 0 {
            ms(self.sum_ns) / self.events as f64
        } else {
            0.0
        };
        let pct_ms = if percentile == 0 || self.hist.is_empty() {
            0.0
        } else {
            ms(self
                .hist
                .value_at_quantile(f64::from(percentile.min(100)) / 100.0))
        };
        output::general_statistics(&General {
            time_s: self.time_s,
            events: self.events,
            latency_ms: [ms(self.min_ns), avg, ms(self.max_ns), ms(self.sum_ns)],
            percentile,
            pct_ms,
            thread_events: &self.thread_events,
            thread_time_s: &self.thread_time_s,
        })
    }

    /// Per second since the last checkpoint (over the run without one).
    pub fn per_second(&self, n: f64) -> f64 {
        if self.interval_s > 0.0 {
            n / self.interval_s
        } else {
            0.0
        }
    }
}

use crate::results::new_histogram;

/// sysbench's header of a run, then the test's mode (`mode`, its own lines).
pub fn header(limits: &Limits, style: &SysbenchStyle, mode: &str) {
    if !style.notice() {
        return;
    }
    let r = RunHeader {
        threads: limits.threads,
        rate: None,
        report_interval: (limits.report_interval > 0.0).then_some(limits.report_interval),
        rand_seed: limits.rand_seed,
    };
    print!(
        "{}{mode}",
        output::run_mode(
            &r,
            &SysbenchStyle {
                seed_given: limits.rand_seed != 0,
                ..*style
            }
        )
    );
}

/// One thread's figures, shared with the interval lines and the checkpoints.
struct Slot {
    events: AtomicU64,
    window: Mutex<Window>,
}

/// What a thread measured since the last interval line (`interval`) and since the last
/// checkpoint (the rest).
struct Window {
    interval: Histogram<u64>,
    since: Histogram<u64>,
    events: u64,
    busy_ns: u64,
    min_ns: u64,
    max_ns: u64,
}

impl Window {
    fn new() -> Window {
        Window {
            interval: new_histogram(),
            since: new_histogram(),
            events: 0,
            busy_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }

    fn record(&mut self, ns: u64) {
        let _ = self.interval.record(ns);
        let _ = self.since.record(ns);
        self.events += 1;
        self.busy_ns += ns;
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }
}

/// The threads' figures since the last checkpoint, `time_s` into the run and `interval_s`
/// after that checkpoint; each thread's start again (`reset`).
fn measured(slots: &[Slot], time_s: f64, interval_s: f64, reset: bool) -> Measured {
    let mut m = Measured {
        error: None,
        overrun: false,
        time_s,
        interval_s,
        events: 0,
        hist: new_histogram(),
        min_ns: u64::MAX,
        max_ns: 0,
        sum_ns: 0,
        thread_events: Vec::with_capacity(slots.len()),
        thread_time_s: Vec::with_capacity(slots.len()),
    };
    for slot in slots {
        let Ok(mut w) = slot.window.lock() else {
            continue;
        };
        let _ = m.hist.add(&w.since);
        m.events += w.events;
        m.sum_ns += w.busy_ns;
        m.min_ns = m.min_ns.min(w.min_ns);
        m.max_ns = m.max_ns.max(w.max_ns);
        m.thread_events.push(w.events);
        m.thread_time_s.push(w.busy_ns as f64 / 1e9);
        if reset {
            let interval = std::mem::replace(&mut w.interval, new_histogram());
            *w = Window {
                interval,
                ..Window::new()
            };
        }
    }
    if m.events == 0 {
        m.min_ns = 0;
    }
    m
}

/// Runs `test` within `limits` (the header already printed): "Threads started!", the interval
/// lines, and what was measured.
pub fn run<T: Test>(test: &T, limits: &Limits, style: &SysbenchStyle) -> Measured {
    let threads = limits.threads.max(1);
    let slots: Vec<Slot> = (0..threads)
        .map(|_| Slot {
            events: AtomicU64::new(0),
            window: Mutex::new(Window::new()),
        })
        .collect();
    let taken = AtomicU64::new(0);
    let running = AtomicU32::new(threads);
    let stop = AtomicBool::new(false);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let overrun = AtomicBool::new(false);
    // Under --rate, events arrive at random times into a bounded queue the threads take from.
    let (arrive_tx, arrive_rx) = mpsc::sync_channel::<()>(QUEUE);
    let arrivals = Mutex::new(arrive_rx);
    let failure: Mutex<Option<String>> = Mutex::new(None);
    if style.notice() {
        print!("Initializing worker threads...\n\n");
    }
    let locals: Vec<T::Local> = (0..threads).map(|t| test.local(t)).collect();
    if style.notice() {
        print!("Threads started!\n\n");
    }
    let start = Instant::now();
    let deadline = (limits.time > 0.0)
        .then(|| Duration::try_from_secs_f64(limits.time).ok())
        .flatten()
        .and_then(|d| start.checked_add(d));
    let last_checkpoint = std::thread::scope(|s| {
        let handles: Vec<_> = locals
            .into_iter()
            .zip(&slots)
            .map(|(mut local, slot)| {
                let (done_tx, taken, running, stop) = (done_tx.clone(), &taken, &running, &stop);
                let (arrivals, failure) = (&arrivals, &failure);
                let fail = move |e: String| {
                    if let Ok(mut f) = failure.lock() {
                        f.get_or_insert(e);
                    }
                    stop.store(true, Ordering::Relaxed);
                };
                s.spawn(move || {
                    loop {
                        if stop.load(Ordering::Relaxed) || crate::interrupt::interrupted() {
                            break;
                        }
                        if deadline.is_some_and(|d| Instant::now() >= d) {
                            break;
                        }
                        if limits.events > 0
                            && taken.fetch_add(1, Ordering::Relaxed) >= limits.events
                        {
                            break;
                        }
                        if limits.rate > 0.0 && !arrived(arrivals, stop, deadline) {
                            break;
                        }
                        if !test.next(&mut local) {
                            break;
                        }
                        let t0 = Instant::now();
                        if let Err(e) = test.execute(&mut local) {
                            fail(e);
                            break;
                        }
                        let ns = (t0.elapsed().as_nanos() as u64).max(1);
                        if let Ok(mut w) = slot.window.lock() {
                            w.record(ns);
                        }
                        slot.events.fetch_add(1, Ordering::Relaxed);
                    }
                    if let Err(e) = test.thread_done(&mut local) {
                        fail(e);
                    }
                    running.fetch_sub(1, Ordering::Relaxed);
                    drop(done_tx);
                })
            })
            .collect();
        drop(done_tx);
        if limits.rate > 0.0 {
            let (stop, overrun) = (&stop, &overrun);
            s.spawn(move || arrive(limits.rate, &arrive_tx, stop, overrun, deadline));
        } else {
            drop(arrive_tx);
        }
        let last_checkpoint =
            report_intervals(test, limits, style, &slots, &running, &done_rx, start);
        stop.store(true, Ordering::Relaxed);
        for h in handles {
            h.join().expect("a test thread panicked");
        }
        last_checkpoint
    });
    let time_s = start.elapsed().as_secs_f64();
    let mut m = measured(&slots, time_s, time_s - last_checkpoint, false);
    m.error = failure.into_inner().ok().flatten();
    m.overrun = overrun.load(Ordering::Relaxed);
    m
}

/// The events that may wait for a thread under `--rate`.
const QUEUE: usize = 100_000;

/// Puts events into the queue at `rate` per second, at random (exponential) intervals, until
/// the run stops; a full queue stops the run (`overrun`).
fn arrive(
    rate: f64,
    queue: &mpsc::SyncSender<()>,
    stop: &AtomicBool,
    overrun: &AtomicBool,
    deadline: Option<Instant>,
) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::SmallRng::from_os_rng();
    let start = Instant::now();
    let mut at = 0.0f64;
    while !stop.load(Ordering::Relaxed) && !crate::interrupt::interrupted() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return;
        }
        at += -(1.0 - rng.random::<f64>()).ln() / rate;
        let due = start + Duration::from_secs_f64(at.min(1e9));
        // Each sleep bounded, so that the end of the run and Ctrl-C are seen.
        loop {
            let now = Instant::now();
            if due <= now {
                break;
            }
            if stop.load(Ordering::Relaxed) || crate::interrupt::interrupted() {
                return;
            }
            std::thread::sleep((due - now).min(Duration::from_millis(100)));
        }
        match queue.try_send(()) {
            Ok(()) => {}
            Err(mpsc::TrySendError::Full(())) => {
                overrun.store(true, Ordering::Relaxed);
                stop.store(true, Ordering::Relaxed);
                return;
            }
            Err(mpsc::TrySendError::Disconnected(())) => return,
        }
    }
}

/// Waits for the next arrival under `--rate`; false once the run stops.
fn arrived(
    queue: &Mutex<mpsc::Receiver<()>>,
    stop: &AtomicBool,
    deadline: Option<Instant>,
) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) || crate::interrupt::interrupted() {
            return false;
        }
        if deadline.is_some_and(|d| Instant::now() >= d) {
            return false;
        }
        let Ok(q) = queue.lock() else {
            return false;
        };
        match q.recv_timeout(Duration::from_millis(100)) {
            Ok(()) => return true,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return false,
        }
    }
}

/// Waits for the threads to finish (every wait bounded by the interval or a second, so that
/// Ctrl-C is seen), printing an interval line every `--report-interval` and the whole
/// statistics at each of `--report-checkpoints`; returns the last checkpoint's second (0 when
/// none was reached).
fn report_intervals<T: Test>(
    test: &T,
    limits: &Limits,
    style: &SysbenchStyle,
    slots: &[Slot],
    running: &AtomicU32,
    done: &mpsc::Receiver<()>,
    start: Instant,
) -> f64 {
    let every = (limits.report_interval > 0.0)
        .then(|| Duration::try_from_secs_f64(limits.report_interval).ok())
        .flatten();
    let mut next = every.and_then(|e| start.checked_add(e));
    let mut checkpoints = style
        .checkpoints
        .iter()
        .filter(|&&c| c > 0)
        .filter_map(|&c| start.checked_add(Duration::from_secs(u64::from(c))))
        .peekable();
    let mut last_checkpoint = 0.0;
    let mut last_events = 0u64;
    let mut last_t = 0.0;
    loop {
        let due = match (next, checkpoints.peek()) {
            (Some(n), Some(&c)) => Some(n.min(c)),
            (n, c) => n.or(c.copied()),
        };
        let wait = due.map_or(Duration::from_secs(1), |n| {
            n.saturating_duration_since(Instant::now())
                .min(Duration::from_secs(1))
        });
        match done.recv_timeout(wait) {
            Err(mpsc::RecvTimeoutError::Disconnected) => return last_checkpoint,
            Ok(()) => continue,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if crate::interrupt::interrupted() {
            return last_checkpoint;
        }
        let now = Instant::now();
        if let Some(at) = next.filter(|&at| now >= at)
            && let Some(every) = every
        {
            next = at.checked_add(every);
            let t = at.duration_since(start).as_secs_f64();
            let iv = interval(slots, running, style, (t, last_t), last_events);
            if style.notice() {
                println!("{}", test.interval_line(&iv, style.percentile));
            }
            last_events += iv.events;
            last_t = t;
        }
        if checkpoints.next_if(|&c| now >= c).is_some() {
            let t = now.duration_since(start).as_secs_f64();
            let m = measured(slots, t, t - last_checkpoint, true);
            last_checkpoint = t;
            if style.notice() {
                print!(
                    "[ {t:.0}s ] Checkpoint report:\n{}{}",
                    test.report(&m),
                    m.general(style.percentile)
                );
            }
        }
    }
}

/// The interval line's figures from `t_last` to `t` seconds: the events after `last_events`,
/// the latencies recorded since the last line.
fn interval(
    slots: &[Slot],
    running: &AtomicU32,
    style: &SysbenchStyle,
    (t, t_last): (f64, f64),
    last_events: u64,
) -> Interval {
    let events: u64 = slots.iter().map(|s| s.events.load(Ordering::Relaxed)).sum();
    let mut h = new_histogram();
    for s in slots {
        if let Ok(mut w) = s.window.lock() {
            let _ = h.add(&w.interval);
            w.interval.reset();
        }
    }
    let seconds = (t - t_last).max(1e-9);
    let pct = if h.is_empty() || style.percentile == 0 {
        0.0
    } else {
        h.value_at_quantile(f64::from(style.percentile.min(100)) / 100.0) as f64 / 1e6
    };
    Interval {
        t,
        seconds,
        threads: running.load(Ordering::Relaxed),
        events: events - last_events,
        tps: (events - last_events) as f64 / seconds,
        pct_ms: pct,
        ..Default::default()
    }
}

/// sysbench's end of a run whose arrivals under `--rate` outran its threads.
pub fn overrun() -> Result<crate::error::Outcome, crate::error::Error> {
    super::fatal(
        "The event queue is full. This means the worker threads are unable to keep up with the specified event generation rate",
    )
}

/// A thread's generator: from `--rand-seed` (and the thread) where given, else the system's.
pub fn thread_rng(seed: u64, thread: u32) -> rand::rngs::SmallRng {
    use rand::SeedableRng;
    if seed == 0 {
        rand::rngs::SmallRng::from_os_rng()
    } else {
        rand::rngs::SmallRng::seed_from_u64(seed.wrapping_add(u64::from(thread)))
    }
}

/// How a run ends: sysbench's FATAL line where the queue filled or an event failed, else the
/// test's own report before the closing statistics, at NOTICE.
pub fn finish<T: Test>(
    test: &T,
    m: &Measured,
    style: &SysbenchStyle,
) -> Result<crate::error::Outcome, crate::error::Error> {
    if m.overrun {
        return overrun();
    }
    if let Some(e) = &m.error {
        return super::fatal(e);
    }
    if style.notice() {
        print!("{}{}", test.report(m), m.general(style.percentile));
    }
    Ok(crate::error::Outcome::Done)
}
