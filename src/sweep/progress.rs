//! The progress line of a sweep: steps done, time spent, time left by the plan's estimate.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// One progress bar for the whole sweep, in estimated seconds; lines go above it.
pub(super) struct Progress {
    pub(super) bar: ProgressBar,
    /// Estimated seconds of the steps already done or skipped.
    pub(super) done: f64,
}

impl Progress {
    pub(super) fn new(total: f64) -> Progress {
        let bar = ProgressBar::with_draw_target(
            Some(total.ceil().max(1.0) as u64),
            ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{bar:30}] {percent:>3}% ETA {eta_precise}  {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(500));
        Progress { bar, done: 0.0 }
    }

    /// Prints a line above the bar (also when stderr is not a terminal and the bar is hidden).
    pub(super) fn say(&self, line: &str) {
        self.bar.suspend(|| eprintln!("{line}"));
    }

    pub(super) fn within_step(&self, elapsed: f64, estimate: f64) {
        self.bar
            .set_position((self.done + elapsed.min(estimate)).round() as u64);
    }

    /// Adds `seconds` to the total (a round that `detect` adds).
    pub(super) fn add(&self, seconds: f64) {
        self.bar.inc_length(seconds.ceil().max(0.0) as u64);
    }

    pub(super) fn advance(&mut self, estimate: f64) {
        self.done += estimate;
        self.bar.set_position(self.done.round() as u64);
    }
}
