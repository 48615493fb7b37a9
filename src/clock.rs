//! The clock of the per-event path: [`now`], a [`Stamp`] (nanoseconds after a base instant)
//! read from the CPU's time-stamp counter where the kernel keeps its own clock on it, else from
//! `Instant::now()`.
//!
//! Every event reads the clock at its start and at the end of each statement. Through the
//! vDSO a reading costs 18 ns in a loop and more after the client slept in a receive (the
//! clock's data page is cold): perf put two readings per event at 12% of dbsweep's user time
//! on a MariaDB point select. A `rdtsc` is 8 ns and touches no shared page. The counter is
//! turned into time with each thread's own anchor, a reading of the OS clock paired with the
//! counter's value, and the rate measured between the thread's first anchor and its latest:
//! a reading more than 10 ms of counts past the anchor, or behind it (a counter that jumped,
//! or another CPU's that lags), reads the OS clock again (between two counter readings, so
//! that a preemption cannot come between the pair) and becomes the new anchor. So a
//! reading is never more than 10 ms of extrapolation from the OS clock, with a rate measured
//! over at least 10 ms (to a few parts per million, then better as the span grows).
//!
//! The counter is used only when the kernel's clocksource is `tsc`: the kernel then vouches
//! that it runs at a constant rate and in step on every CPU (it switches away from a counter
//! it finds unstable). Elsewhere, and on other architectures, [`now`] is `Instant::now()`.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How far a reading may run past its thread's anchor before the OS clock is read again.
const ANCHOR_SPAN: Duration = Duration::from_millis(10);

/// The most counts between the two counter readings around an OS clock reading for the pair
/// to anchor (under 1 us at 2 GHz and more; a reading takes some 70 counts here).
const TIGHT_PAIR: u64 = 2_000;

/// The clock's base, an instant a year before the clock was first read (so that every instant
/// of the process comes after it), and whether the counter is used.
struct Base {
    at: Instant,
    counter: bool,
}

fn base() -> &'static Base {
    static BASE: OnceLock<Base> = OnceLock::new();
    BASE.get_or_init(|| {
        let now = Instant::now();
        Base {
            at: now.checked_sub(BEFORE).unwrap_or(now),
            counter: counter_usable(),
        }
    })
}

/// How long before its first reading the clock's base lies.
const BEFORE: Duration = Duration::from_secs(365 * 86_400);

fn counter_usable() -> bool {
    cfg!(target_arch = "x86_64")
        && std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .is_ok_and(|s| s.trim() == "tsc")
}

/// Where [`now`] reads the time: "tsc" or "os".
pub fn source() -> &'static str {
    if base().counter { "tsc" } else { "os" }
}

/// A reading of the event clock: nanoseconds after the clock's base. Where events are timed,
/// two readings are subtracted as integers: an `Instant` would be made from seconds and
/// nanoseconds and taken apart again on every reading and difference (perf put that at 6% of
/// the runner's own time on the mock target).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Stamp(u64);

impl Stamp {
    /// The reading of `i` (the base for an instant before it, which no instant of the process is).
    pub fn of(i: Instant) -> Stamp {
        let base = base().at;
        Stamp(u64::try_from(i.saturating_duration_since(base).as_nanos()).unwrap_or(u64::MAX))
    }

    /// The instant of this reading.
    pub fn instant(self) -> Instant {
        base().at + Duration::from_nanos(self.0)
    }

    /// Nanoseconds from `earlier` to this reading; 0 when `earlier` is later.
    #[inline]
    pub fn nanos_since(self, earlier: Stamp) -> u64 {
        self.0.saturating_sub(earlier.0)
    }
}

/// A thread's pairing of counter and OS clock.
#[derive(Clone, Copy)]
struct Anchor {
    /// The counter and the time (ns after [`base`]) at the latest OS reading.
    tsc: u64,
    ns: u64,
    /// The thread's first OS reading: the rate is measured from it.
    first_tsc: u64,
    first_ns: u64,
    /// Nanoseconds per count, 32.32 fixed point; 0 until measured.
    mult: u64,
    /// Counts after `tsc` that a reading may extrapolate (0: none yet).
    span: u64,
}

thread_local! {
    static ANCHOR: Cell<Anchor> = const {
        Cell::new(Anchor { tsc: 0, ns: 0, first_tsc: 0, first_ns: 0, mult: 0, span: 0 })
    };
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn counter() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64; `counter_usable` checked the kernel runs
    // its clock on it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn counter() -> u64 {
    0
}

/// The current reading (see the module's text).
#[inline]
pub fn now() -> Stamp {
    let base = base();
    if !base.counter {
        return Stamp::of(Instant::now());
    }
    let tsc = counter();
    let a = ANCHOR.get();
    let d = tsc.wrapping_sub(a.tsc);
    if d < a.span {
        return Stamp(a.ns + ((u128::from(d) * u128::from(a.mult)) >> 32) as u64);
    }
    reanchor(base.at, a)
}

/// Reads the OS clock, makes it the thread's anchor, and measures the counter's rate once the
/// thread's readings span at least [`ANCHOR_SPAN`].
#[cold]
fn reanchor(base: Instant, mut a: Anchor) -> Stamp {
    // A pair of readings counts only when nothing came between them (a preemption or an
    // interrupt would put microseconds between the clock and the counter, and a pair that
    // far apart would skew the rate): the counter is read before and after the clock.
    let mut tries = 0;
    let (now, tsc) = loop {
        let before = counter();
        let now = Instant::now();
        let after = counter();
        let gap = after.wrapping_sub(before);
        if gap <= TIGHT_PAIR {
            break (now, before + gap / 2);
        }
        tries += 1;
        if tries == 3 {
            // The anchor stays as it was: the next reading tries again.
            return Stamp::of(now);
        }
    };
    let ns = u64::try_from((now - base).as_nanos()).unwrap_or(u64::MAX);
    if a.first_tsc == 0 || tsc <= a.first_tsc || ns <= a.first_ns {
        // The first reading, or a counter gone backwards: start the measurement afresh.
        a = Anchor {
            tsc,
            ns,
            first_tsc: tsc,
            first_ns: ns,
            mult: 0,
            span: 0,
        };
    } else {
        let (elapsed, counts) = (ns - a.first_ns, tsc - a.first_tsc);
        let span_ns = ANCHOR_SPAN.as_nanos() as u64;
        if elapsed >= span_ns {
            let mult = (u128::from(elapsed) << 32) / u128::from(counts);
            // A rate outside 0.05..20 ns per count (20 GHz..50 MHz) is no counter to trust.
            a.mult = u64::try_from(mult).unwrap_or(0);
            a.span = if (1u64 << 32) / 20 <= a.mult && a.mult <= 20u64 << 32 {
                u64::try_from((u128::from(span_ns) << 32) / u128::from(a.mult)).unwrap_or(0)
            } else {
                0
            };
        }
        a.tsc = tsc;
        a.ns = ns;
    }
    ANCHOR.set(a);
    Stamp(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Over 60 ms of readings (six anchors and more), each of [`now`] lies between the OS
    /// clock's readings around it, give or take 2 us, and none goes back by more than that.
    #[test]
    fn the_counter_clock_keeps_to_the_os_clock() {
        let tolerance = 2_000;
        let end = Instant::now() + Duration::from_millis(60);
        let mut last = now();
        let mut readings = 0u64;
        loop {
            let before = Stamp::of(Instant::now());
            let t = now();
            let after = Stamp::of(Instant::now());
            assert!(
                before.nanos_since(t) <= tolerance && t.nanos_since(after) <= tolerance,
                "reading {readings}: {t:?} outside {before:?}..{after:?} ({})",
                source()
            );
            assert!(
                last.nanos_since(t) <= tolerance,
                "went back: {t:?} after {last:?}"
            );
            last = t;
            readings += 1;
            if after.instant() >= end {
                break;
            }
        }
        // On a machine whose kernel clock runs on the counter, the counter is the source.
        let kernel = std::fs::read_to_string(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource",
        )
        .unwrap_or_default();
        if cfg!(target_arch = "x86_64") && kernel.trim() == "tsc" {
            assert_eq!(source(), "tsc");
            let a = ANCHOR.get();
            assert!(a.span > 0 && a.mult > 0, "no rate measured after 60 ms");
        } else {
            assert_eq!(source(), "os");
        }
    }

    /// A reading turns into its instant and back, to the nanosecond, and lies after the base
    /// by about the year the base keeps in hand; differences never go below zero.
    #[test]
    fn a_stamp_is_the_instant_it_was_read_at() {
        let i = Instant::now();
        let s = Stamp::of(i);
        assert_eq!(s.instant(), i);
        assert_eq!(Stamp::of(s.instant()), s);
        // The base was set by the first reading of this process, at most the tests' time ago.
        let floor = (BEFORE - Duration::from_secs(600)).as_nanos() as u64;
        assert!(s.0 >= floor, "{s:?}: base not a year back");
        let later = Stamp::of(i + Duration::from_micros(1500));
        assert_eq!(later.nanos_since(s), 1_500_000);
        assert_eq!(s.nanos_since(later), 0);
        let early = i.checked_sub(BEFORE * 2).map(Stamp::of);
        assert!(early.is_none_or(|e| e == Stamp(0)), "{early:?}");
    }
}
