//! A client's place in time: the run's connection pacing (`--connect-rate`) and each client's
//! schedule (`--rate`, warm-up, deadline, event limits).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Schedule, Shared, Slot, wait_until};
use crate::clock::Stamp;
use crate::workload::rand::Rand;

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
    /// `--arrivals poisson`'s generator.
    pub(super) arrivals: Option<Rand>,
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
            arrivals: sched.arrivals(),
        }
    }

    /// Waits for the next event's turn (and the client's `pause` before it); None when the
    /// stop flag, the deadline or the event limit ends the run.
    pub(super) fn next(&mut self, sh: &Shared, pause: Option<Duration>) -> Option<Slot> {
        if sh.stopped() {
            return None;
        }
        // Closed-loop phases: a client a phase leaves out waits for one that has it.
        if self.sched.phases.is_some() && self.next_due.is_none() {
            loop {
                let now = Instant::now();
                if sh.stopped() || self.sched.deadline.is_some_and(|d| now >= d) {
                    return None;
                }
                let from = self.sched.active_from(now)?;
                if from <= now {
                    break;
                }
                wait_until(self.sched.deadline.map_or(from, |d| from.min(d)), sh);
            }
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
                due = sched.next_slot(due, &mut self.arrivals);
            }
        }
        self.next_due = Some(sched.next_slot(due, &mut self.arrivals));
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

impl Schedule {
    /// Seconds from the start of the measured part to `at` (negative in the warm-up).
    fn seconds_at(&self, at: Instant) -> f64 {
        if at >= self.measure_start {
            (at - self.measure_start).as_secs_f64()
        } else {
            -(self.measure_start - at).as_secs_f64()
        }
    }

    fn instant_at(&self, t: f64) -> Instant {
        if t >= 0.0 {
            self.measure_start + Duration::from_secs_f64(t)
        } else {
            self.measure_start - Duration::from_secs_f64(-t)
        }
    }

    /// Under `--rate`: the client's slot after the one due at `due`. Evenly spaced at its share
    /// of the rate (the rate of `--phases` at `due`), or at gaps drawn exponentially of that
    /// mean (`--arrivals poisson`, from `arrivals`); across a phase of rate 0, the next phase
    /// with a rate; past the last, the deadline.
    pub fn next_slot(&self, due: Instant, arrivals: &mut Option<Rand>) -> Instant {
        let (_, mut gap) = self.pacing.expect("paced");
        if let Some(p) = &self.phases {
            let t = self.seconds_at(due);
            match p.rate_at(t) {
                Some(r) if r > 0.0 => gap = Duration::from_secs_f64(f64::from(self.clients) / r),
                _ => return self.resume(p, t),
            }
        }
        if let Some(r) = arrivals {
            gap = gap.mul_f64(-(1.0 - r.unit()).ln());
        }
        let next = due + gap;
        // A gap drawn at one phase's rate may end in a phase of rate 0 (a pause, a ramp
        // 0..0): no event is due there; the next is where a rate begins again.
        if let Some(p) = &self.phases {
            let t = self.seconds_at(next);
            if p.rate_at(t).is_some_and(|r| r <= 0.0) {
                return self.resume(p, t);
            }
        }
        next
    }

    /// The client's first slot where the rate of phases `p` is above 0 after `t`, at its
    /// offset among the clients; the deadline (or far away) when none is.
    fn resume(&self, p: &super::super::phases::Phases, t: f64) -> Instant {
        let end = self
            .deadline
            .unwrap_or(self.measure_start + Duration::from_secs(3600 * 24 * 365));
        let Some(from) = p.next_active(t.max(0.0), 0) else {
            return end;
        };
        // Where the phase's rate is above 0 at its start, or its ramp rises from 0.
        let rate = p.rate_at(from).filter(|r| *r > 0.0).unwrap_or(1.0);
        let offset = f64::from(self.client) / rate;
        let at = self.instant_at(from + offset.max(1e-6));
        at.min(end)
    }

    /// Closed-loop `--phases`: the first instant at or after `at` when this client is among a
    /// phase's active clients; None when no phase after `at` has it (it ends).
    pub fn active_from(&self, at: Instant) -> Option<Instant> {
        let Some(p) = self.phases.as_ref().filter(|p| p.closed_loop()) else {
            return Some(at);
        };
        let t = self.seconds_at(at);
        p.next_active(t.max(0.0), self.client)
            .map(|s| if t >= s { at } else { self.instant_at(s) })
    }

    /// The generator of `--arrivals poisson` for this client.
    pub fn arrivals(&self) -> Option<Rand> {
        self.poisson
            .map(|seed| Rand::for_thread(seed ^ 0x5eed_a441_7a15, self.client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::phases::Phases;

    /// One client at 1 event/s whose next slot would land in a pause (or a ramp 0..0) is
    /// due where the rate begins again, never inside the pause.
    #[test]
    fn no_slot_lands_in_a_phase_of_rate_zero() {
        for pause in ["1s@0", "1s@ramp:0..0"] {
            let start = Instant::now();
            let sched = Schedule {
                measure_start: start,
                deadline: Some(start + Duration::from_secs(3)),
                pacing: Some((start, Duration::from_secs(1))),
                phases: Some(std::sync::Arc::new(
                    Phases::parse(&format!("1.5s@1,{pause},0.5s@1")).unwrap(),
                )),
                client: 0,
                clients: 1,
                poisson: None,
            };
            let next = sched.next_slot(start + Duration::from_millis(1000), &mut None);
            let t = (next - start).as_secs_f64();
            assert!(
                t >= 2.5,
                "{pause}: the slot after 1.0s is at {t}s, in the pause"
            );
        }
    }
}
