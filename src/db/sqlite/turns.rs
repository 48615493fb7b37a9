//! How writers of one SQLite database in this process wait for its write lock.
//!
//! SQLite has one writer at a time per database, and a connection that finds the lock taken
//! can only retry: its busy handler sleeps and tries again. A benchmark's writers in one
//! process then spend their time polling (CPU, wake-ups) or sleeping past the moment the lock
//! came free (throughput), and the figures show the client's way of waiting rather than
//! SQLite. Here they take turns instead, before they ask SQLite for the lock (`BEGIN
//! IMMEDIATE`, or a write outside a transaction), and a writer that waits sleeps until a turn
//! is handed to it: no polling, and the lock is never idle while a writer waits.
//!
//! A turn is handed over when its holder ends its transaction. `writer` (the default) and
//! `fifo` hand it to the next writer at every end (first come, first served): every client
//! gets its share, and the holder's work after its commit overlaps the next writer's
//! transaction. With `writer` the turn also carries the connection written on: one per
//! database and process, so that SQLite's one writer keeps one warm page cache (a connection
//! empties its cache when it finds another connection's commit). `batch` does what
//! eventually fair locks do (parking_lot's): the holder may take its turn again until the
//! first waiter has waited its patience (a few turns' length, as measured), then the turn goes
//! to that waiter; fewer wake-ups, but no overlap. bench/sqlite_writers.sh compares them (the
//! README has the figures). Writers
//! of other processes still meet SQLite's lock, and the busy handler waits for them.
//!
//! Written here rather than taken from a crate: a turn spans calls (from BEGIN to COMMIT, on
//! whichever thread holds the connection) and its wait must end on Ctrl-C and be counted in
//! the wait profile, which a lock guard does not allow.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::thread::Thread;
use std::time::{Duration, Instant};

use rusqlite::{Connection, Statement};

use crate::interrupt::INTERRUPT;

/// How a waiting writer is woken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockWait {
    /// Fifo's turns, and with the turn one connection that every writer of this process
    /// writes on: SQLite's one writer is one connection, whose page cache stays warm (the
    /// default).
    Writer,
    /// Turns in this process, handed to the next writer at every end: first come, first
    /// served; each writer writes on its own connection.
    Fifo,
    /// Turns in this process that the holder may take again until a waiter has waited a few
    /// turns' length: fewer hand-overs, in batches.
    Batch,
    /// No turns: the busy handler retries, every 20 us for its first 200 calls, then every ms.
    Poll,
    /// No turns: SQLite's own busy timeout, which sleeps in growing steps of up to 100 ms.
    Timeout,
}

impl LockWait {
    pub fn parse(value: &str) -> Option<LockWait> {
        Some(match value {
            "batch" => LockWait::Batch,
            "fifo" => LockWait::Fifo,
            "writer" => LockWait::Writer,
            "poll" => LockWait::Poll,
            "timeout" => LockWait::Timeout,
            _ => return None,
        })
    }
}

/// The patience of a waiter: a few of the holder's transactions (measured, as a moving
/// average of how long turns are held), within these bounds, so that a hand-over (one
/// wake-up) comes every few transactions rather than at each, and no writer waits long past
/// its share.
const PATIENCE_MIN: Duration = Duration::from_micros(300);
const PATIENCE_MAX: Duration = Duration::from_millis(3);
/// Turns a waiter lets the holder take before it is due.
const PATIENCE_TURNS: u64 = 6;

/// The turns of one database file.
pub struct Turns {
    state: Mutex<State>,
    /// First come, first served: every end hands the turn to the first waiter.
    fifo: bool,
    /// With `lock_wait=writer`, the connection every turn writes on (set by the first
    /// connection opened).
    pub writer: OnceLock<Mutex<Writer>>,
}

struct State {
    held: bool,
    /// When the turn held now was taken, and the moving average of how long turns are held.
    since: Instant,
    hold_ns: u64,
    queue: VecDeque<Entry>,
}

struct Entry {
    waiter: Arc<Waiter>,
    since: Instant,
}

struct Waiter {
    thread: Thread,
    granted: AtomicBool,
}

impl State {
    fn patience(&self, fifo: bool) -> Duration {
        if fifo {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.hold_ns.saturating_mul(PATIENCE_TURNS))
            .clamp(PATIENCE_MIN, PATIENCE_MAX)
    }

    /// Whether the first waiter has waited its patience: the turn must go to it next.
    fn due(&self, fifo: bool, now: Instant) -> bool {
        self.queue
            .front()
            .is_some_and(|e| now.duration_since(e.since) >= self.patience(fifo))
    }
}

/// A writer's turn; dropping it ends the turn.
pub struct Turn(Arc<Turns>);

impl Turn {
    /// The shared writer connection this turn writes on, with `lock_wait=writer`.
    pub fn writer(&self) -> Option<&Mutex<Writer>> {
        self.0.writer.get()
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // A turn given up inside a transaction on the shared connection (its client failed or
        // was dropped) rolls that transaction back, as closing a connection of its own would.
        if let Some(w) = self.writer() {
            lock_writer(w).rollback_if_open();
        }
        self.0.release();
    }
}

/// The shared writer connection; a panic while it was held leaves at worst an open
/// transaction, which the turn's end rolls back.
pub fn lock_writer(w: &Mutex<Writer>) -> MutexGuard<'_, Writer> {
    w.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Why a wait for a turn ended without one.
pub enum NoTurn {
    Interrupted,
    TimedOut,
}

impl Turns {
    /// The turns of the database at `path` in this process, shared by every connection to it
    /// opened with the same `wait`; None when `wait` takes no turns.
    pub fn of(path: &Path, wait: LockWait) -> Option<Arc<Turns>> {
        type Registry = Vec<(PathBuf, LockWait, Weak<Turns>)>;
        static REGISTRY: Mutex<Registry> = Mutex::new(Vec::new());
        let fifo = match wait {
            LockWait::Batch => false,
            LockWait::Fifo | LockWait::Writer => true,
            LockWait::Poll | LockWait::Timeout => return None,
        };
        // The same file under two spellings is one database; a file not made yet is its name.
        let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let mut registry = REGISTRY
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        registry.retain(|(_, _, w)| w.strong_count() > 0);
        if let Some(turns) = registry
            .iter()
            .find(|(k, w, _)| *k == key && *w == wait)
            .and_then(|(_, _, t)| t.upgrade())
        {
            return Some(turns);
        }
        let turns = Arc::new(Turns {
            state: Mutex::new(State {
                held: false,
                since: Instant::now(),
                hold_ns: 0,
                queue: VecDeque::new(),
            }),
            fifo,
            writer: OnceLock::new(),
        });
        registry.push((key, wait, Arc::downgrade(&turns)));
        Some(turns)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this mutex leaves the state whole (every change is one
        // assignment), so a poisoned lock is used as it is.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Waits for a turn, at most `bound` (Ctrl-C ends the wait). Returns the turn and how long
    /// it waited (None when it did not).
    pub fn take(self: &Arc<Self>, bound: Duration) -> Result<(Turn, Option<Duration>), NoTurn> {
        let fifo = self.fifo;
        let start = Instant::now();
        let waiter = {
            let mut st = self.lock();
            // Free, and no waiter is due: taken at once, even past waiters not yet due.
            if !st.held && !st.due(fifo, start) {
                st.held = true;
                st.since = start;
                return Ok((Turn(Arc::clone(self)), None));
            }
            let waiter = Arc::new(Waiter {
                thread: std::thread::current(),
                granted: AtomicBool::new(false),
            });
            st.queue.push_back(Entry {
                waiter: Arc::clone(&waiter),
                since: start,
            });
            waiter
        };
        loop {
            if waiter.granted.load(Ordering::Acquire) {
                return Ok((Turn(Arc::clone(self)), Some(start.elapsed())));
            }
            let waited = start.elapsed();
            let interrupted = INTERRUPT.load(Ordering::Relaxed);
            let mut st = self.lock();
            if waiter.granted.load(Ordering::Acquire) {
                return Ok((Turn(Arc::clone(self)), Some(start.elapsed())));
            }
            let at = st
                .queue
                .iter()
                .position(|e| Arc::ptr_eq(&e.waiter, &waiter));
            if !st.held && (at == Some(0) || !st.due(fifo, Instant::now())) {
                // Free and handed to no one (its holder ended it before this waiter was
                // due): this waiter takes it.
                if let Some(at) = at {
                    st.queue.remove(at);
                }
                st.held = true;
                st.since = Instant::now();
                return Ok((Turn(Arc::clone(self)), Some(start.elapsed())));
            }
            if interrupted || waited >= bound {
                if let Some(at) = at {
                    st.queue.remove(at);
                }
                return Err(if interrupted {
                    NoTurn::Interrupted
                } else {
                    NoTurn::TimedOut
                });
            }
            // Woken by a hand-over, mostly. The timeout brings a waiter back when the turn
            // was freed rather than handed over (twice its patience: a holder that goes on
            // writing hands it over at its next end before that), and to look at Ctrl-C.
            let nap = if fifo {
                Duration::from_millis(50)
            } else {
                (st.patience(fifo) * 2).min(Duration::from_millis(50))
            };
            drop(st);
            std::thread::park_timeout(nap.min(bound.saturating_sub(waited)));
        }
    }

    /// Ends a turn: hands it to the first waiter when it has waited its patience, else frees
    /// it for whoever asks first (the holder's next transaction, mostly).
    fn release(&self) {
        let fifo = self.fifo;
        let now = Instant::now();
        let mut st = self.lock();
        let held = u64::try_from(now.duration_since(st.since).as_nanos()).unwrap_or(u64::MAX);
        // A moving average over some 16 turns.
        st.hold_ns = if st.hold_ns == 0 {
            held
        } else {
            st.hold_ns - st.hold_ns / 16 + held / 16
        };
        if st.due(fifo, now)
            && let Some(entry) = st.queue.pop_front()
        {
            st.since = now;
            entry.waiter.granted.store(true, Ordering::Release);
            drop(st);
            entry.waiter.thread.unpark();
            return;
        }
        // Waiters not yet due sleep on: woken now, they would mostly find the turn taken
        // again. One that wakes (at twice its patience) to find it free takes it.
        st.held = false;
    }
}

/// The one connection that the writers of a database in this process write on
/// (`lock_wait=writer`), with the statements prepared on it, found by their SQL.
///
/// SQLite admits one writer at a time, and a connection that finds another connection's
/// commit since its last transaction empties its page cache: with a connection per writer,
/// every write transaction at 2 clients started cold (read-write read 12-40 pages per event
/// instead of 5). Writing on one connection, handed over with the turn, keeps its cache warm,
/// as an application with a writer connection does. Same layout and safety as `sqlite::SqliteConn`.
pub struct Writer {
    /// Borrow `*conn`; cleared before `conn` is freed (see `Drop`).
    pub(in crate::db) stmts: Vec<Statement<'static>>,
    by_sql: std::collections::HashMap<String, usize>,
    conn: NonNull<Connection>,
    /// Whether a client has read the cache counters since they were last reset (they are
    /// counted once, not by every client).
    pub(in crate::db) counted: bool,
}

// SAFETY: as for `sqlite::SqliteConn`: SQLite's multi-thread mode, one thread at a time (the holder of
// the turn, under the mutex), the statements moving with their connection.
unsafe impl Send for Writer {}

impl Drop for Writer {
    fn drop(&mut self) {
        self.stmts.clear();
        // SAFETY: `conn` came from `Box::into_raw` in `new`, and no statement borrows it now.
        drop(unsafe { Box::from_raw(self.conn.as_ptr()) });
        super::files::closed();
    }
}

impl Writer {
    pub(in crate::db) fn new(conn: Connection) -> Writer {
        Writer {
            stmts: Vec::new(),
            by_sql: std::collections::HashMap::new(),
            conn: NonNull::from(Box::leak(Box::new(conn))),
            counted: false,
        }
    }

    pub(in crate::db) fn conn(&self) -> &Connection {
        // SAFETY: the connection lives as long as `self`.
        unsafe { self.conn.as_ref() }
    }

    /// The index of `sql`'s statement here, prepared at its first use and remembered in the
    /// client's `slot`.
    pub(in crate::db) fn statement(
        &mut self,
        slot: &mut usize,
        sql: &str,
    ) -> rusqlite::Result<usize> {
        if *slot == usize::MAX {
            *slot = match self.by_sql.get(sql) {
                Some(&i) => i,
                None => {
                    // SAFETY: as in `sqlite::SqliteConn::prepare`: `drop` clears the statements first.
                    let conn: &'static Connection = unsafe { &*self.conn.as_ptr() };
                    self.stmts.push(conn.prepare(sql)?);
                    self.by_sql.insert(sql.to_string(), self.stmts.len() - 1);
                    self.stmts.len() - 1
                }
            };
        }
        Ok(*slot)
    }

    /// Rolls back a transaction left open by a turn that ended inside it.
    pub fn rollback_if_open(&mut self) {
        if !self.conn().is_autocommit() {
            // Nothing to do about a failed rollback: the connection is then out of it anyway
            // or SQLite ends it at the next BEGIN's error.
            let _ = self.conn().execute_batch("ROLLBACK");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_due_waiter_gets_the_next_turn() {
        let dir = tempfile::tempdir().unwrap();
        let turns = Turns::of(&dir.path().join("a.db"), LockWait::Batch).unwrap();
        let same = Turns::of(&dir.path().join("a.db"), LockWait::Batch).unwrap();
        assert!(Arc::ptr_eq(&turns, &same), "one database, one set of turns");
        assert!(Turns::of(&dir.path().join("a.db"), LockWait::Poll).is_none());
        let (first, waited) = turns.take(Duration::from_secs(5)).ok().unwrap();
        assert!(waited.is_none());
        let (tx, rx) = std::sync::mpsc::channel();
        let t2 = Arc::clone(&turns);
        let waiter = std::thread::spawn(move || {
            let (turn, waited) = t2.take(Duration::from_secs(5)).ok().unwrap();
            tx.send(waited).unwrap();
            drop(turn);
        });
        // Once the waiter is due, the holder's end hands the turn to it.
        while !turns.lock().due(false, Instant::now()) {
            std::thread::yield_now();
        }
        drop(first);
        let waited = rx.recv().unwrap().expect("it waited");
        assert!(waited >= PATIENCE_MIN, "{waited:?}");
        waiter.join().unwrap();
        let st = turns.lock();
        assert!(!st.held && st.queue.is_empty());
    }

    #[test]
    fn a_wait_ends_at_its_bound_without_a_turn() {
        let dir = tempfile::tempdir().unwrap();
        let turns = Turns::of(&dir.path().join("b.db"), LockWait::Fifo).unwrap();
        let held = turns.take(Duration::from_secs(1)).ok().unwrap();
        assert!(matches!(
            turns.take(Duration::from_millis(30)),
            Err(NoTurn::TimedOut)
        ));
        assert!(turns.lock().queue.is_empty(), "the waiter left the queue");
        drop(held);
        assert!(turns.take(Duration::from_millis(30)).is_ok());
    }
}
