//! Waiting for SQLite's write lock: dbsweep's busy handlers (fine-grained, or SQLite's own
//! timeout step for step), every wait bounded and ended by Ctrl-C, and the process's counts of
//! them for the wait profile.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Busy-handler calls that sleep briefly before it backs off to 1 ms sleeps. SQLite's own busy
/// timeout sleeps in steps of up to 100 ms, which quantises lock waits far more coarsely than
/// the latencies being measured; this handler keeps waits fine-grained.
pub(super) const SHORT_SLEEPS: i32 = 200;
/// Busy-handler calls (about 30 s in all) after which the statement fails with SQLITE_BUSY.
pub(super) const MAX_BUSY_CALLS: i32 = SHORT_SLEEPS + 30_000;
/// The longest wait for the write lock, in every way of waiting.
pub(super) const LOCK_BOUND: Duration = Duration::from_secs(30);

/// Busy waits of every SQLite connection of this process: statements that found the database
/// locked, and nanoseconds slept waiting for it (the wait profile's figures for SQLite).
pub(super) static BUSY_WAITS: AtomicU64 = AtomicU64::new(0);
pub(super) static BUSY_NS: AtomicU64 = AtomicU64::new(0);
/// Busy-handler calls: each a retry of a statement that found the lock taken.
static BUSY_RETRIES: AtomicU64 = AtomicU64::new(0);

/// (busy waits, nanoseconds waited, busy-handler retries) of this process's SQLite
/// connections so far.
pub fn busy_counters() -> (u64, u64, u64) {
    (
        BUSY_WAITS.load(Ordering::Relaxed),
        BUSY_NS.load(Ordering::Relaxed),
        BUSY_RETRIES.load(Ordering::Relaxed),
    )
}

/// Starts a new high-water mark of the heap this process's SQLite holds (its page caches,
/// lookaside buffers, schemas and statements).
pub fn reset_heap_peak() {
    // SAFETY: sqlite3_memory_highwater only reads and resets SQLite's own statistics.
    unsafe { rusqlite::ffi::sqlite3_memory_highwater(1) };
}

/// The most heap this process's SQLite held since [`reset_heap_peak`], in KB.
pub fn heap_peak_kb() -> u64 {
    // SAFETY: as above, without resetting.
    let bytes = unsafe { rusqlite::ffi::sqlite3_memory_highwater(0) };
    u64::try_from(bytes).unwrap_or(0) / 1024
}

pub(super) fn busy_handler(calls: i32) -> bool {
    if calls >= MAX_BUSY_CALLS {
        return false;
    }
    let pause = if calls < SHORT_SLEEPS {
        Duration::from_micros(20)
    } else {
        Duration::from_millis(1)
    };
    busy_sleep(calls, pause)
}

/// SQLite's own busy timeout (`lock_wait=timeout`), step for step: its default build's sleeps
/// (sqlite3DefaultBusyCallback: 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 ms, then 100 ms) up to
/// 30 s in all, here so that its waits are counted as the others' are.
pub(super) fn sqlite_busy_timeout(calls: i32) -> bool {
    const DELAYS_MS: [u64; 12] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100];
    const TOTALS_MS: [u64; 12] = [0, 1, 3, 8, 18, 33, 53, 78, 103, 128, 178, 228];
    let n = usize::try_from(calls).unwrap_or(0);
    let (delay, prior) = if n < DELAYS_MS.len() {
        (DELAYS_MS[n], TOTALS_MS[n])
    } else {
        (100, TOTALS_MS[11] + 100 * (n as u64 - 11))
    };
    let bound = LOCK_BOUND.as_millis() as u64;
    if prior >= bound {
        return false;
    }
    busy_sleep(calls, Duration::from_millis(delay.min(bound - prior)))
}

/// One sleep of a busy handler, counted; none after Ctrl-C (the statement then fails, as
/// interrupted: see `classify`).
pub(super) fn busy_sleep(calls: i32, pause: Duration) -> bool {
    if crate::interrupt::INTERRUPT.load(Ordering::Relaxed) {
        return false;
    }
    if calls == 0 {
        BUSY_WAITS.fetch_add(1, Ordering::Relaxed);
    }
    BUSY_RETRIES.fetch_add(1, Ordering::Relaxed);
    let start = std::time::Instant::now();
    std::thread::sleep(pause);
    let slept = start.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64;
    BUSY_NS.fetch_add(slept, Ordering::Relaxed);
    true
}
