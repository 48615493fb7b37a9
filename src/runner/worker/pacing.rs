//! A client's place in time: the run's connection pacing (`--connect-rate`) and each client's
//! schedule (`--rate`, warm-up, deadline, event limits).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Schedule, Shared, Slot, wait_until};
use crate::clock::Stamp;

/// `--connect-rate`: clients open their connections at most this many a second, after a burst
/// of half a second's worth, since thousands of simultaneous connects overload a listener.
pub struct ConnectRate {
    gap: Duration,
    next: Mutex<Instant>,
}

/// The burst of connections a run opens at once, in seconds of its rate.
const CONNECT_BURST: Duration = Duration::from_millis(500);

impl ConnectRate {
    /// `per_s`: None for no limit.
    pub fn new(per_s: Option<f64>) -> ConnectRate {
        ConnectRate {
            gap: per_s.map_or(Duration::ZERO, |r| Duration::from_secs_f64(1.0 / r)),
            // The first half second's worth go at once.
            next: Mutex::new({
                let now = Instant::now();
                now.checked_sub(CONNECT_BURST).unwrap_or(now)
            }),
        }
    }

    /// Waits for this connection's turn, or until `stopped` (looking every 100 ms).
    pub fn wait(&self, stopped: &dyn Fn() -> bool) {
        if self.gap.is_zero() {
            return;
        }
        let turn = {
            let mut next = self.next.lock().expect("connect rate lock");
            let now = Instant::now();
            let turn = (*next).max(now.checked_sub(CONNECT_BURST).unwrap_or(now));
            *next = turn + self.gap;
            turn
        };
        loop {
            let now = Instant::now();
            if now >= turn || stopped() {
                return;
            }
            std::thread::sleep((turn - now).min(Duration::from_millis(100)));
        }
    }
}

/// A client's place in the run's schedule: pacing under `--rate`, warm-up, deadline, events.
pub(super) struct Pacing<'a> {
    pub(super) sched: &'a Schedule,
    /// The schedule's deadline and start of measurement as readings of the event clock.
    pub(super) deadline: Option<Stamp>,
    pub(super) measure_start: Stamp,
    pub(super) next_due: Option<Instant>,
    /// The measured part has begun for this client.
    pub(super) measuring: bool,
    /// Measured events this client started.
    pub(super) started: u64,
    /// Measured events skipped since the last look (`--latency-limit` under `--rate`).
    pub(super) skipped: u64,
}

impl<'a> Pacing<'a> {
    pub(super) fn new(sched: &'a Schedule) -> Pacing<'a> {
        Pacing {
            sched,
            deadline: sched.deadline.map(Stamp::of),
            measure_start: Stamp::of(sched.measure_start),
            next_due: sched.pacing.map(|(first, _)| first),
            measuring: false,
            started: 0,
            skipped: 0,
        }
    }

    /// Waits for the next event's turn (and the client's `pause` before it); None when the
    /// stop flag, the deadline or the event limit ends the run.
    pub(super) fn next(&mut self, sh: &Shared, pause: Option<Duration>) -> Option<Slot> {
        if sh.stopped() {
            return None;
        }
        let scheduled = match self.next_due {
            Some(due) => Some(self.turn(sh, due)?),
            None => None,
        };
        // Keying and think time (TPC-C --wait) is the client's, not the database's: it
        // comes before the event's clock starts.
        if let Some(pause) = pause
            && !self.pause(sh, pause)
        {
            return None;
        }
        let start = crate::clock::now();
        let from = scheduled.map_or(start, Stamp::of);
        // The run ends at the deadline by the clock: under --rate, events still queued
        // then are not run (their lag is already in the figures).
        if self.deadline.is_some_and(|d| start >= d) {
            return None;
        }
        let measuring = from >= self.measure_start;
        let first_measured = measuring && !self.measuring;
        self.measuring |= measuring;
        if measuring && !sh.may_start(&mut self.started) {
            return None;
        }
        Some(Slot {
            from,
            start,
            measuring,
            first_measured,
        })
    }
}

impl Pacing<'_> {
    /// Under `--rate`: waits for the turn due at `due` (skipping those already later than
    /// `--latency-limit`); the turn's instant, or None when the limits end the run.
    #[inline(never)]
    pub(super) fn turn(&mut self, sh: &Shared, mut due: Instant) -> Option<Instant> {
        let sched = self.sched;
        let gap = sched.pacing.expect("paced").1;
        // Under --latency-limit, a turn already later than the limit is skipped (as
        // pgbench does): counted, not run, and counted against --events-per-client.
        if let Some(limit) = sh.latency_limit {
            let now = Instant::now();
            while now.saturating_duration_since(due) > limit
                && sched.deadline.is_none_or(|d| due < d)
            {
                if due >= sched.measure_start {
                    if !sh.may_start(&mut self.started) {
                        return None;
                    }
                    self.skipped += 1;
                }
                due += gap;
            }
        }
        self.next_due = Some(due + gap);
        // Never past the deadline: a slow rate's next turn may lie beyond the run.
        wait_until(sched.deadline.map_or(due, |d| due.min(d)), sh);
        Some(due)
    }

    /// Waits out the client's `pause` (never past the deadline); false when stopped meanwhile.
    #[inline(never)]
    pub(super) fn pause(&self, sh: &Shared, pause: Duration) -> bool {
        let until = Instant::now() + pause;
        wait_until(self.sched.deadline.map_or(until, |d| until.min(d)), sh);
        !sh.stopped()
    }
}
