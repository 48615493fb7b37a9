//! The paced terminals' floor (bench/terminals): the least client that runs TPC-C's terminals
//! as `dbsweep tpcc run --wait` does, so that dbsweep's client CPU per transaction reads as a
//! ratio to what the kernel and the protocol alone cost on this machine.
//!
//! It runs the same statements (dbsweep's own SQL, `tpcc::stmts::Stmts::sql`), prepared once per
//! connection, each a Bind, an Execute and a Sync in one write and its answer read to
//! ReadyForQuery, with BEGIN and COMMIT as simple queries, as dbsweep's PostgreSQL client sends
//! them; the same inputs (the deck, NURand, the 1% rollback), the same keying and think times
//! drawn the same way, the same terminal count, worker threads and connections (one per
//! terminal, or a pool). Everything else a client does is left out: no histograms, no
//! counters but one, no checks of what comes back beyond the values the next statement needs,
//! parameters as text. It runs in a child process of its own, so that its CPU is its own, and
//! reports user and system time over the measured part from the kernel's accounting.

mod pg;
mod term;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use dbsweep::db::Dialect;
use dbsweep::workload::tpcc::stmts::Stmts;

use pg::Pg;
use term::Term;

/// Set in the child's environment: the run it is asked for ([`Spec::encode`]).
const ENV: &str = "DBSWEEP_TERMINALS_FLOOR";

/// What the floor runs: where the server is (`host:port`, or a Unix socket's path), as whom,
/// and the terminals as dbsweep ran them.
#[derive(Clone, Debug)]
pub struct Spec {
    pub addr: String,
    pub user: String,
    pub database: String,
    pub warehouses: u32,
    pub terminals: u32,
    pub workers: u32,
    /// Connections the terminals share; 0: one per terminal.
    pub connections: u32,
    pub warmup_s: f64,
    pub seconds: f64,
}

impl Spec {
    fn encode(&self) -> String {
        format!(
            "{}|{}|{}|{}|{}|{}|{}|{}|{}",
            self.addr,
            self.user,
            self.database,
            self.warehouses,
            self.terminals,
            self.workers,
            self.connections,
            self.warmup_s,
            self.seconds
        )
    }

    fn decode(s: &str) -> Spec {
        let f: Vec<&str> = s.split('|').collect();
        let n = |i: usize| f[i].parse::<u32>().expect("a count");
        let x = |i: usize| f[i].parse::<f64>().expect("seconds");
        Spec {
            addr: f[0].into(),
            user: f[1].into(),
            database: f[2].into(),
            warehouses: n(3),
            terminals: n(4),
            workers: n(5),
            connections: n(6),
            warmup_s: x(7),
            seconds: x(8),
        }
    }
}

/// What the floor did over the measured part.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    pub transactions: u64,
    pub user_s: f64,
    pub system_s: f64,
    /// Transactions retried after a server error (deadlocks).
    pub retries: u64,
    /// Transactions that started more than a second after they were due.
    pub late: u64,
}

impl Outcome {
    pub fn us_per_tx(&self) -> (f64, f64, f64) {
        let per = |s: f64| s * 1e6 / self.transactions.max(1) as f64;
        (
            per(self.user_s + self.system_s),
            per(self.user_s),
            per(self.system_s),
        )
    }
}

/// Runs the floor in a child process (this bench's own binary) and returns what it measured.
pub fn run(spec: &Spec) -> Outcome {
    let out = Command::new(std::env::current_exe().expect("own path"))
        .env(ENV, spec.encode())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .expect("the floor client starts");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "the floor client failed: {text}");
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("floor "))
        .unwrap_or_else(|| panic!("no outcome from the floor client: {text}"));
    let v: Vec<f64> = line
        .split_whitespace()
        .map(|x| x.parse().expect("a number"))
        .collect();
    Outcome {
        transactions: v[0] as u64,
        user_s: v[1],
        system_s: v[2],
        retries: v[3] as u64,
        late: v[4] as u64,
    }
}

/// When this process was started as the floor, runs it, prints its outcome and exits.
pub fn serve_if_asked() {
    let Ok(spec) = std::env::var(ENV) else {
        return;
    };
    let o = floor(&Spec::decode(&spec));
    println!(
        "floor {} {} {} {} {}",
        o.transactions, o.user_s, o.system_s, o.retries, o.late
    );
    std::process::exit(0);
}

/// User and system CPU seconds of the whole process so far.
fn process_cpu() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills the struct we own.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(ru.ru_utime), tv(ru.ru_stime))
}

fn floor(spec: &Spec) -> Outcome {
    let conns = if spec.connections == 0 {
        spec.terminals
    } else {
        spec.connections
    };
    let sql = Stmts::sql(Dialect::Postgres);
    let pool: Vec<Pg> = (0..conns).map(|_| Pg::connect(spec, &sql)).collect();
    let ids = {
        let mut n = 0u16;
        sql.try_map(|_| -> Result<u16, ()> {
            n += 1;
            Ok(n - 1)
        })
        .expect("numbered")
    };
    let begin = Instant::now();
    let measure_from = begin + Duration::from_secs_f64(spec.warmup_s);
    let end = measure_from + Duration::from_secs_f64(spec.seconds);
    let mut terms = Vec::new();
    let mut heap = BinaryHeap::new();
    for t in 0..spec.terminals {
        let mut term = Term::new(spec, t);
        let first = term.first_pause();
        heap.push(Reverse((begin + first, t)));
        terms.push(Mutex::new(term));
    }
    let shared = Shared {
        ids,
        terms,
        queue: Mutex::new(heap),
        due: Condvar::new(),
        pool: Mutex::new(pool),
        free: Condvar::new(),
        own: spec.connections == 0,
        end,
        measure_from,
        done: AtomicU64::new(0),
        retries: AtomicU64::new(0),
        late: AtomicU64::new(0),
        stop: AtomicBool::new(false),
    };
    let mut counted = (0, (0.0, 0.0), 0, 0);
    std::thread::scope(|s| {
        for _ in 0..spec.workers.max(1) {
            s.spawn(|| shared.work());
        }
        std::thread::sleep(measure_from.saturating_duration_since(Instant::now()));
        let at = |sh: &Shared| {
            (
                sh.done.load(Ordering::Relaxed),
                process_cpu(),
                sh.retries.load(Ordering::Relaxed),
                sh.late.load(Ordering::Relaxed),
            )
        };
        let a = at(&shared);
        std::thread::sleep(end.saturating_duration_since(Instant::now()));
        let b = at(&shared);
        counted = (
            b.0 - a.0,
            (b.1.0 - a.1.0, b.1.1 - a.1.1),
            b.2 - a.2,
            b.3 - a.3,
        );
        shared.stop.store(true, Ordering::Relaxed);
        shared.due.notify_all();
        shared.free.notify_all();
    });
    Outcome {
        transactions: counted.0,
        user_s: counted.1.0,
        system_s: counted.1.1,
        retries: counted.2,
        late: counted.3,
    }
}

struct Shared {
    ids: Stmts<u16>,
    terms: Vec<Mutex<Term>>,
    /// Terminals by due instant.
    queue: Mutex<BinaryHeap<Reverse<(Instant, u32)>>>,
    due: Condvar,
    /// Pooled: the idle connections; one per terminal: terminal t's is `pool[t]`, taken
    /// while it runs.
    pool: Mutex<Vec<Pg>>,
    free: Condvar,
    own: bool,
    end: Instant,
    measure_from: Instant,
    done: AtomicU64,
    retries: AtomicU64,
    late: AtomicU64,
    stop: AtomicBool,
}

impl Shared {
    /// A worker: takes the terminal due first once it is due, runs its transaction, puts it
    /// back with its next due instant.
    fn work(&self) {
        while let Some((due, t)) = self.next_due() {
            let Some(mut conn) = self.take_conn(t) else {
                return;
            };
            let mut term = self.terms[t as usize].lock().expect("terminal");
            if Instant::now().duration_since(due) > Duration::from_secs(1)
                && due >= self.measure_from
            {
                self.late.fetch_add(1, Ordering::Relaxed);
            }
            let retries = term.transaction(&mut conn, &self.ids);
            self.retries.fetch_add(retries, Ordering::Relaxed);
            self.done.fetch_add(1, Ordering::Relaxed);
            let next = Instant::now() + term.pause();
            drop(term);
            self.give_conn(t, conn);
            let mut q = self.queue.lock().expect("queue");
            let first = q.peek().is_none_or(|Reverse((d, _))| next < *d);
            q.push(Reverse((next, t)));
            drop(q);
            if first {
                self.due.notify_one();
            }
        }
    }

    fn next_due(&self) -> Option<(Instant, u32)> {
        let mut q = self.queue.lock().expect("queue");
        loop {
            let now = Instant::now();
            if now >= self.end || self.stop.load(Ordering::Relaxed) {
                return None;
            }
            let wake = match q.peek() {
                Some(Reverse((due, _))) if *due <= now => {
                    let Reverse(top) = q.pop().expect("peeked");
                    return Some(top);
                }
                Some(Reverse((due, _))) => (*due).min(self.end),
                None => self.end,
            };
            q = self
                .due
                .wait_timeout(q, wake.saturating_duration_since(now))
                .expect("queue")
                .0;
        }
    }

    /// The terminal's own connection, or an idle one of the pool (waiting for one).
    fn take_conn(&self, t: u32) -> Option<Pg> {
        let mut pool = self.pool.lock().expect("pool");
        if self.own {
            // Each terminal's connection sits at its index while the terminal waits.
            return Some(std::mem::replace(&mut pool[t as usize], Pg::placeholder()));
        }
        loop {
            if let Some(c) = pool.pop() {
                return Some(c);
            }
            if self.stop.load(Ordering::Relaxed) || Instant::now() >= self.end {
                return None;
            }
            pool = self
                .free
                .wait_timeout(pool, Duration::from_millis(100))
                .expect("pool")
                .0;
        }
    }

    fn give_conn(&self, t: u32, conn: Pg) {
        let mut pool = self.pool.lock().expect("pool");
        if self.own {
            pool[t as usize] = conn;
        } else {
            pool.push(conn);
            drop(pool);
            self.free.notify_one();
        }
    }
}
