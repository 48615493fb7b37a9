//! The instant a step's measured part begins, shared by its runner and its samplers.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// When a step's measured part begins, as its runner decides it once the clients have
/// connected (and waited for `--start-at`): the warm-up's end. The step's samplers (hardware,
/// server counters, waits, profile, node exporter) measure from it, so that none of them
/// counts the clients' connecting, which the runner's own figures leave out too (a thousand
/// terminals may take seconds to connect, and a server forks a backend for each). Clones
/// share the instant.
#[derive(Clone, Debug, Default)]
pub struct MeasureStart(Arc<OnceLock<Instant>>);

/// How often a sampler looks whether the clients have connected: its first reading comes at
/// most this late (a wake-up a millisecond while the clients connect, outside any figure).
const START_POLL: Duration = Duration::from_millis(1);

impl MeasureStart {
    /// Not known yet: the runner sets it.
    pub fn new() -> MeasureStart {
        MeasureStart::default()
    }

    /// Already known: `at`.
    pub fn at(at: Instant) -> MeasureStart {
        let start = MeasureStart::new();
        start.set(at);
        start
    }

    /// Sets the instant (the first call wins: groups of clients beside each other begin
    /// together).
    pub fn set(&self, at: Instant) {
        let _ = self.0.set(at);
    }

    pub fn get(&self) -> Option<Instant> {
        self.0.get().copied()
    }

    /// Waits until the measured part begins: true then; false when the run ended first
    /// (`stopped` got its message or lost its sender), as it does when the clients cannot
    /// connect or the run ends within its warm-up.
    pub fn wait(&self, stopped: &Receiver<()>) -> bool {
        loop {
            let left = match self.get() {
                Some(at) => at.saturating_duration_since(Instant::now()),
                None => START_POLL,
            };
            match stopped.recv_timeout(left) {
                Err(RecvTimeoutError::Timeout) => {
                    if self.get().is_some_and(|at| Instant::now() >= at) {
                        return true;
                    }
                }
                _ => return false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sampler_waits_for_the_measured_part_and_not_past_the_run() {
        // Set by the runner's thread while the sampler waits: it wakes at the instant, not
        // before.
        let start = MeasureStart::new();
        let (_stop, stopped) = std::sync::mpsc::channel::<()>();
        let runner = {
            let start = start.clone();
            std::thread::spawn(move || {
                let at = Instant::now() + Duration::from_millis(30);
                start.set(at);
                at
            })
        };
        assert!(start.wait(&stopped));
        let at = runner.join().unwrap();
        assert!(Instant::now() >= at);
        // The run ends before its clients connected: nothing to measure.
        let never = MeasureStart::new();
        let (stop, stopped) = std::sync::mpsc::channel::<()>();
        stop.send(()).unwrap();
        assert!(!never.wait(&stopped));
        drop(stop);
        assert!(!never.wait(&stopped));
        // Known already and passed: at once.
        let (_stop, stopped) = std::sync::mpsc::channel::<()>();
        assert!(MeasureStart::at(Instant::now()).wait(&stopped));
    }
}
