//! Many clients on a few worker threads (`--workers W` below the clients, or
//! `--connections M`): a client is its state and its connection, not a thread.
//!
//! The clients wait in one queue ordered by their due instant: the end of their keying and
//! think time (TPC-C `--wait`), their next slot under `--rate`, or the end of their last event
//! in a closed loop. A worker takes the client due first once it is due, runs one event on it
//! with the blocking wire clients, computes when it is due next and puts it back. A waiting
//! client holds no thread and costs nothing. An event's latency runs from its due instant, so
//! the time a due client waits for a worker (or, pooled, for a connection) is in it; that wait
//! is also recorded apart, per transaction type, as queue time. Why blocking workers rather
//! than an event loop: docs/terminals.md.

use std::cmp::Ordering as Order;
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use super::pool::ConnPool;
use super::worker::{Schedule, Shared, Slot, Worker, nanos};
use crate::clock::Stamp;
use crate::db::Detached;
use crate::metrics::Recorder;

/// A client counts as behind its schedule when one of its measured events started later than
/// due by more than the wait before it (its keying and think time, or its --rate gap), but at
/// least this much...
const BEHIND_FLOOR: Duration = Duration::from_millis(10);
/// ...and at most this much.
const BEHIND_CAP: Duration = Duration::from_secs(1);

/// One client among many: its connection and state, and its place in the schedule.
pub struct Term {
    pub w: Worker,
    due: Instant,
    /// How late its next event may start before the client counts as behind.
    slack: Duration,
    /// Under `--rate`: its next slot and the gap between its slots.
    paced: Option<(Instant, Duration)>,
    /// Its own place in the run's schedule (`--phases`, `--arrivals`), and the generator of
    /// its Poisson gaps.
    sched: Schedule,
    arrivals: Option<crate::workload::rand::Rand>,
    measuring: bool,
    behind: bool,
    /// Measured events it started.
    started: u64,
}

impl Term {
    /// The client's first due instant: its first slot under `--rate`, else `begin` plus its
    /// first keying time (TPC-C `--wait`).
    pub fn new(mut w: Worker, begin: Instant, sched: Schedule) -> Term {
        let paced = sched.pacing;
        let (due, slack) = match paced {
            Some((first, gap)) => (first, gap),
            None => {
                let pause = w.client.pause(&mut w.rand).unwrap_or_default();
                (begin + pause, pause)
            }
        };
        let arrivals = sched.arrivals();
        let mut t = Term {
            w,
            due,
            slack: slack.clamp(BEHIND_FLOOR, BEHIND_CAP),
            paced,
            sched,
            arrivals,
            measuring: false,
            behind: false,
            started: 0,
        };
        t.due = t.active_due(t.due);
        t
    }

    /// Closed-loop `--phases`: `due`, or the start of the next phase that has this client
    /// (the deadline, or far away, when none has: it waits there to be ended).
    fn active_due(&self, due: Instant) -> Instant {
        self.sched.active_from(due).unwrap_or_else(|| {
            self.sched
                .deadline
                .unwrap_or(due + Duration::from_secs(3600 * 24 * 365))
        })
    }

    /// After an event: when the client is due next.
    fn reschedule(&mut self) {
        let (due, wait) = match &mut self.paced {
            Some((next, gap)) => {
                *next = self.sched.next_slot(*next, &mut self.arrivals);
                (*next, *gap)
            }
            None => {
                let pause = self.w.client.pause(&mut self.w.rand).unwrap_or_default();
                (self.active_due(Instant::now() + pause), pause)
            }
        };
        self.due = due;
        self.slack = wait.clamp(BEHIND_FLOOR, BEHIND_CAP);
    }
}

/// A client in the queue, ordered so that the heap's top is the one due first.
struct Queued(Box<Term>);

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Order::Equal
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<Order> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Self) -> Order {
        (o.0.due, o.0.w.thread).cmp(&(self.0.due, self.0.w.thread))
    }
}

/// The run's clients: waiting in the queue, or out with a worker.
///
/// Idle workers wait as one leader and followers: only the leader sleeps until the first
/// client is due (`timer`); the others sleep until the leader hands over (`idle`). All of them
/// sleeping until the same instant woke every idle worker for each due client, only one of
/// which found work (futex wake-ups were a tenth of the client's CPU at 1,000 paced terminals).
pub struct Clients {
    state: Mutex<Queue>,
    timer: Condvar,
    idle: Condvar,
}

struct Queue {
    waiting: BinaryHeap<Queued>,
    /// Clients out with a worker.
    out: usize,
    /// Whether an idle worker watches the first client's due time.
    leader: bool,
}

/// How long an idle worker sleeps at most before it looks at the stop flag itself (the leader;
/// a follower is woken by a leader that stops).
const LOOK_AT_STOP: Duration = Duration::from_millis(100);
/// A follower's bound, should no leader wake it.
const FOLLOWER_BOUND: Duration = Duration::from_secs(1);

impl Clients {
    pub fn new(terms: Vec<Term>) -> Clients {
        Clients {
            state: Mutex::new(Queue {
                waiting: terms.into_iter().map(|t| Queued(Box::new(t))).collect(),
                out: 0,
                leader: false,
            }),
            timer: Condvar::new(),
            idle: Condvar::new(),
        }
    }

    /// The client due first, once it is due; None when the run is over for this worker: it
    /// was stopped, the next client is due at or after the deadline, or no client is left.
    /// Looks at the stop flag at least every 100 ms.
    fn next(&self, sh: &Shared, deadline: Option<Instant>) -> Option<Box<Term>> {
        let mut g = self.state.lock().expect("clients lock");
        let mut leading = false;
        loop {
            let now = Instant::now();
            let wait = match g.waiting.peek() {
                _ if sh.stopped() => None,
                None if g.out == 0 => None,
                None => Some(LOOK_AT_STOP),
                Some(q) if deadline.is_some_and(|d| q.0.due >= d) => None,
                Some(q) if q.0.due <= now => {
                    let Queued(t) = g.waiting.pop().expect("peeked");
                    g.out += 1;
                    if leading {
                        // A follower watches the next one.
                        g.leader = false;
                        self.idle.notify_one();
                    }
                    return Some(t);
                }
                Some(q) => Some((q.0.due - now).min(LOOK_AT_STOP)),
            };
            let Some(wait) = wait else {
                // Over for this worker, and for the followers too: they look for themselves.
                if leading {
                    g.leader = false;
                }
                self.idle.notify_all();
                return None;
            };
            if leading || !g.leader {
                g.leader = true;
                leading = true;
                g = self.timer.wait_timeout(g, wait).expect("clients lock").0;
            } else {
                g = self
                    .idle
                    .wait_timeout(g, FOLLOWER_BOUND)
                    .expect("clients lock")
                    .0;
            }
        }
    }

    /// A client back from its event, due again; the leader is woken only if it is now the
    /// first due.
    fn put(&self, t: Box<Term>) {
        let mut g = self.state.lock().expect("clients lock");
        let due = t.due;
        g.waiting.push(Queued(t));
        g.out -= 1;
        let first = g.waiting.peek().is_some_and(|q| q.0.due >= due);
        drop(g);
        if first {
            self.timer.notify_one();
        }
    }

    /// A client that is done, back from its worker.
    fn retire(&self) {
        self.state.lock().expect("clients lock").out -= 1;
        self.timer.notify_all();
        self.idle.notify_all();
    }

    /// Any waiting client, for ending it.
    fn any(&self) -> Option<Box<Term>> {
        self.state
            .lock()
            .expect("clients lock")
            .waiting
            .pop()
            .map(|q| q.0)
    }
}

/// What a worker's clients did, for the run's figures.
#[derive(Default)]
pub struct Ended {
    /// Page cache counters of the clients' connections over the measured part (SQLite).
    pub cache: Option<[u64; 3]>,
    /// Per client: its number, measured events, nanoseconds in them, whether it fell behind.
    pub clients: Vec<(u32, u64, u64, bool)>,
}

impl Ended {
    /// Ends a client: its last words, its counters; its connection closes here.
    pub fn finish(
        &mut self,
        mut t: Term,
        rec: &Mutex<Recorder>,
        pooled: bool,
        notes: &crate::output::Events,
    ) -> Result<(), String> {
        // A pooled client holds no connection between events: the workloads that share
        // connections have nothing to say at the end (see Workload::shares_connections).
        let cache = t.w.finish(t.measuring && !pooled, rec, notes)?;
        if let Some(c) = cache {
            let sum = self.cache.get_or_insert([0; 3]);
            for (s, v) in sum.iter_mut().zip(c) {
                *s += v;
            }
        }
        self.clients
            .push((t.w.thread, t.w.events, t.w.busy_ns, t.behind));
        Ok(())
    }
}

/// A worker: takes due clients and runs one event on each until the run is over, then ends the
/// clients still waiting (with the other workers). Returns what its clients did, and the error
/// that stopped it, if one did.
pub fn serve(
    sh: &Shared,
    clients: &Clients,
    sched: &Schedule,
    pool: Option<&ConnPool>,
    rec: &Mutex<Recorder>,
) -> (Ended, Option<String>) {
    let mut ended = Ended::default();
    let mut error = None;
    while let Some(mut t) = clients.next(sh, sched.deadline) {
        match one_event(sh, &mut t, sched, pool, rec) {
            Ok(true) => clients.put(t),
            Ok(false) => {
                let r = ended.finish(*t, rec, pool.is_some(), sh.notes);
                clients.retire();
                if let Err(e) = r {
                    sh.stop.store(true, Ordering::Relaxed);
                    error = Some(e);
                    break;
                }
            }
            Err(e) => {
                sh.stop.store(true, Ordering::Relaxed);
                let _ = ended.finish(*t, rec, pool.is_some(), sh.notes);
                clients.retire();
                error = Some(e);
                break;
            }
        }
    }
    while let Some(t) = clients.any() {
        if let Err(e) = ended.finish(*t, rec, pool.is_some(), sh.notes) {
            error = error.or(Some(e));
        }
    }
    (ended, error)
}

/// Runs the due client's next event. Ok(false) when the client is done.
fn one_event(
    sh: &Shared,
    t: &mut Term,
    sched: &Schedule,
    pool: Option<&ConnPool>,
    rec: &Mutex<Recorder>,
) -> Result<bool, String> {
    // Under --latency-limit and --rate, turns already later than the limit are skipped.
    if let (Some(limit), Some(_)) = (sh.latency_limit, t.paced) {
        let now = Instant::now();
        let mut skipped = 0;
        let mut go_on = true;
        while now.saturating_duration_since(t.due) > limit
            && sched.deadline.is_none_or(|d| t.due < d)
        {
            if t.due >= sched.measure_start {
                if !sh.may_start(&mut t.started) {
                    go_on = false;
                    break;
                }
                skipped += 1;
            }
            t.due = t.sched.next_slot(t.due, &mut t.arrivals);
            if let Some((next, _)) = &mut t.paced {
                *next = t.due;
            }
        }
        if skipped > 0 {
            if let Some(log) = sh.txn_log {
                for _ in 0..skipped {
                    log.skipped(t.w.thread, t.w.events, now);
                }
            }
            rec.lock().expect("recorder lock").counters.skipped_events += skipped;
        }
        if !go_on || sched.deadline.is_some_and(|d| t.due >= d) {
            return Ok(false);
        }
        if skipped > 0 {
            // Back in the queue until its next turn is due.
            return Ok(true);
        }
    }
    let measuring = t.due >= sched.measure_start;
    let first_measured = measuring && !t.measuring;
    t.measuring |= measuring;
    if measuring && !sh.may_start(&mut t.started) {
        return Ok(false);
    }
    if let Some(pool) = pool {
        let Some(conn) = pool.take(sched.deadline, &|| sh.stopped()) else {
            return Ok(false);
        };
        t.w.conn = conn;
        if measuring {
            // Starts this connection's measured page cache count, if not started yet.
            t.w.conn.cache_counters(true);
        }
    }
    let start = crate::clock::now();
    let result = if sched.deadline.is_some_and(|d| start >= Stamp::of(d)) {
        Ok(false)
    } else {
        let from = Stamp::of(t.due);
        let queued = start.nanos_since(from);
        if measuring && queued > nanos(t.slack) {
            t.behind = true;
        }
        let slot = Slot {
            from,
            start,
            measuring,
            first_measured,
        };
        t.w.step(sh, sched.deadline, &slot, Some(queued), rec)
    };
    if let Some(pool) = pool {
        let dialect = t.w.conn.dialect();
        pool.put(std::mem::replace(
            &mut t.w.conn,
            Box::new(Detached(dialect)),
        ));
    }
    if result.as_ref().is_ok_and(|&go| go) {
        t.reschedule();
    }
    result
}
