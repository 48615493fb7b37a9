//! Groups of clients side by side in one step (roles): each with its workload and options
//! (clients, rate), run on the same target at the same time. Every group connects first; all
//! begin their warm-up at one instant; a fatal error in any ends them all, and once the
//! measured groups are done the others (a background load) stop.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use super::Report;
use super::{RunOutcome, RunnerOptions};
use crate::db::Target;
use crate::error::Error;
use crate::workload::Workload;

/// One group of a step's clients.
pub struct Group<'a> {
    pub workload: &'a dyn Workload,
    pub opts: &'a RunnerOptions,
    /// Whether its figures are what the step measures; the others run beside it.
    pub measured: bool,
}

/// What a group shares with the groups running beside it.
#[derive(Clone, Copy)]
pub(super) struct Beside<'a> {
    /// Set when the step ends for every group: a fatal error in one, the measured ones done.
    pub stop: &'a AtomicBool,
    /// Where the groups wait for each other's clients before the warm-up; None for a group
    /// alone.
    pub meet: Option<&'a Meet>,
}

/// Where the groups of a step meet once their clients are connected (or failed to).
pub(super) struct Meet {
    groups: usize,
    /// Groups arrived, and whether every one of them was ready.
    arrived: Mutex<(usize, bool)>,
    all_in: Condvar,
}

impl Meet {
    fn new(groups: usize) -> Meet {
        Meet {
            groups,
            arrived: Mutex::new((0, true)),
            all_in: Condvar::new(),
        }
    }

    /// Arrives (`ready`: its clients connected) and waits for the other groups; whether every
    /// group is ready. Ctrl-C (`interrupt`) or `stop` ends the wait: not ready.
    pub(super) fn arrive(&self, ready: bool, interrupt: &AtomicBool, stop: &AtomicBool) -> bool {
        let mut a = self.arrived.lock().unwrap_or_else(|e| e.into_inner());
        a.0 += 1;
        a.1 &= ready;
        self.all_in.notify_all();
        while a.0 < self.groups {
            if interrupt.load(Ordering::Relaxed) || stop.load(Ordering::Relaxed) {
                return false;
            }
            a = self
                .all_in
                .wait_timeout(a, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        a.1
    }
}

/// A group's place at the meeting, left as not ready if the group ends before it arrives (an
/// error before its clients connected), so that the others do not wait for it.
pub(super) struct Seat<'a> {
    meet: Option<&'a Meet>,
    arrived: bool,
}

impl<'a> Seat<'a> {
    pub(super) fn new(meet: Option<&'a Meet>) -> Seat<'a> {
        Seat {
            meet,
            arrived: false,
        }
    }

    /// Arrives; whether every group is ready (true for a group alone when it is).
    pub(super) fn arrive(
        &mut self,
        ready: bool,
        interrupt: &AtomicBool,
        stop: &AtomicBool,
    ) -> bool {
        self.arrived = true;
        match self.meet {
            Some(m) => m.arrive(ready, interrupt, stop),
            None => ready,
        }
    }
}

impl Drop for Seat<'_> {
    fn drop(&mut self) {
        if let (Some(m), false) = (self.meet, self.arrived) {
            let mut a = m.arrived.lock().unwrap_or_else(|e| e.into_inner());
            a.0 += 1;
            a.1 = false;
            m.all_in.notify_all();
        }
    }
}

/// Runs the groups of a step side by side on `target`; each group's outcome, in order. The
/// first group runs on the calling thread, and `on_report` sees its intervals as they close
/// (the live lines); the others' are kept in their outcomes.
pub fn run_groups(
    target: &dyn Target,
    groups: &[Group],
    interrupt: &AtomicBool,
    on_report: &mut dyn FnMut(Report<'_>),
) -> Vec<Result<RunOutcome, Error>> {
    let Some(first) = groups.first() else {
        return Vec::new();
    };
    let stop = AtomicBool::new(false);
    let meet = Meet::new(groups.len());
    let measured_left = AtomicUsize::new(groups.iter().filter(|g| g.measured).count());
    let beside = Beside {
        stop: &stop,
        meet: Some(&meet),
    };
    let one = |g: &Group, on_report: &mut dyn FnMut(Report<'_>)| {
        let r = super::run_group(target, g.workload, g.opts, interrupt, on_report, beside);
        let last_measured = g.measured && measured_left.fetch_sub(1, Ordering::Relaxed) == 1;
        if r.is_err() || last_measured {
            stop.store(true, Ordering::Relaxed);
        }
        r
    };
    std::thread::scope(|s| {
        let others: Vec<_> = groups[1..]
            .iter()
            .map(|g| s.spawn(|| one(g, &mut |_| {})))
            .collect();
        let mut out = vec![one(first, on_report)];
        out.extend(
            others
                .into_iter()
                .map(|h| h.join().expect("a group's thread panicked")),
        );
        out
    })
}
