//! Ctrl-C: the stop flag every blocking wait looks at, and the handler that sets it. The bottom
//! of the house: it imports only the error type, so that the lowest layers (sockets, server
//! builds, the profiler) can look at the flag without reaching up.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::Error;

/// Set by Ctrl-C (SIGINT, SIGTERM, SIGHUP): every blocking wait looks, the run stops and
/// writes what it measured.
pub(crate) static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C (or SIGTERM, SIGHUP) asked the process to stop: every blocking wait looks.
pub fn interrupted() -> bool {
    INTERRUPT.load(Ordering::Relaxed)
}

/// Signals after the first that still let the run write its summary and results file: `timeout
/// -s INT` signals the child and then its process group, so two come at once.
const SIGNALS_KEPT: u32 = 2;

/// How long after the first signal another one still waits for the files to be written.
const SIGNAL_GRACE: Duration = Duration::from_secs(5);

/// What a stop signal does, given how many came before it and how long ago the first came:
/// the first stops the run; a repeat within the grace keeps waiting for the summary and the
/// results file; a third, or one after the grace, abandons them.
fn abandon_on_signal(earlier: u32, since_first: Duration) -> bool {
    earlier >= SIGNALS_KEPT || (earlier > 0 && since_first > SIGNAL_GRACE)
}

/// When the first stop signal came.
static FIRST: OnceLock<Instant> = OnceLock::new();

/// What ends the process at once: stops the managed servers (set by `install_ctrl_c`).
static ON_ABANDON: OnceLock<fn()> = OnceLock::new();

/// How long ago Ctrl-C (or SIGTERM, SIGHUP) asked the process to stop; None if it did not.
pub fn interrupted_for() -> Option<Duration> {
    if !interrupted() {
        return None;
    }
    Some(FIRST.get_or_init(Instant::now).elapsed())
}

/// Installs the stop handler: the first signal sets the flag; one that abandons the run calls
/// `on_abandon` (which stops the managed servers) and exits at once.
pub(crate) fn install_ctrl_c(on_abandon: fn()) {
    static SIGNALS: AtomicU32 = AtomicU32::new(0);
    if ON_ABANDON.set(on_abandon).is_ok() {
        // A panic is a bug, and a thread that died may hold a wait of the others forever (a
        // barrier, a channel): after its message the process ends, managed servers stopped.
        let report = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            report(info);
            abandon(
                101,
                "dbsweep: stopped at once after an internal error (a bug: the message above says where)",
            );
        }));
    }
    // Failing to install (a handler already set, as in tests calling `run` twice) only costs
    // the clean stop.
    let _ = ctrlc::set_handler(move || {
        let earlier = SIGNALS.fetch_add(1, Ordering::SeqCst);
        let first = *FIRST.get_or_init(Instant::now);
        INTERRUPT.store(true, Ordering::SeqCst);
        if abandon_on_signal(earlier, first.elapsed()) {
            abandon(
                130,
                "dbsweep: stopped at once by a repeated signal: this run's summary and results file are not written",
            );
        }
    });
}

/// Ends the process at once with `code`, after stopping the managed servers and printing
/// `line`: for a thread that cannot be stopped (a signal repeated, a script's loop that no
/// hook reaches). Files written so far are whole (each is renamed into place).
pub fn abandon(code: i32, line: &str) -> ! {
    if let Some(f) = ON_ABANDON.get() {
        f();
    }
    eprintln!("{line}");
    std::process::exit(code);
}

/// The ends of the runs in progress (several groups of clients run side by side in one step,
/// each with its own): what `run_overrun` measures from.
static RUN_ENDS: RunEnds = RunEnds::new();

/// The instant the ends count from.
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// The ends of the runs in progress, in milliseconds after [`EPOCH`] (0: a run without a time
/// limit), each under the number its [`RunEnd`] holds.
struct RunEnds {
    live: Mutex<Vec<(u64, u64)>>,
    next: AtomicU64,
    /// The latest live end; 0 when none is live or one has no time limit (no overrun then).
    latest: AtomicU64,
}

impl RunEnds {
    const fn new() -> RunEnds {
        RunEnds {
            live: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
            latest: AtomicU64::new(0),
        }
    }

    /// Adds a run ending at `ms` (0: none); returns its number.
    fn add(&self, ms: u64) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.push((id, ms));
        self.latest.store(Self::latest_of(&live), Ordering::SeqCst);
        id
    }

    /// Removes run `id`: the others' ends stand.
    fn remove(&self, id: u64) {
        let mut live = self.live.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|&(i, _)| i != id);
        self.latest.store(Self::latest_of(&live), Ordering::SeqCst);
    }

    /// The latest end: a run is over its time only when every run beside it is (a group that
    /// ended early must not make a later one look stuck: the watch would end the process).
    fn latest_of(live: &[(u64, u64)]) -> u64 {
        if live.iter().any(|&(_, ms)| ms == 0) {
            return 0;
        }
        live.iter().map(|&(_, ms)| ms).max().unwrap_or(0)
    }
}

/// The end of a run in progress, published while it runs (for the watch on scripts that do not
/// return): withdrawn when dropped, once every client of its run has stopped.
pub struct RunEnd(u64);

impl RunEnd {
    pub fn publish(end: Option<Instant>) -> RunEnd {
        let epoch = *EPOCH.get_or_init(Instant::now);
        let ms = end.map_or(0, |e| {
            u64::try_from(e.saturating_duration_since(epoch).as_millis())
                .unwrap_or(u64::MAX)
                .max(1)
        });
        RunEnd(RUN_ENDS.add(ms))
    }
}

impl Drop for RunEnd {
    fn drop(&mut self) {
        RUN_ENDS.remove(self.0);
    }
}

/// The code of a client's error for an event cut short because the run ended (a script's
/// `\sleep` ended by Ctrl-C): the event is not counted.
pub const RUN_ENDED: &str = "run ended";

/// How far past its `--time` the run in progress is; None when no run with a time limit is
/// in progress or it has not reached its end.
pub fn run_overrun() -> Option<Duration> {
    let ms = RUN_ENDS.latest.load(Ordering::Relaxed);
    let epoch = EPOCH.get()?;
    if ms == 0 {
        return None;
    }
    epoch
        .elapsed()
        .checked_sub(Duration::from_millis(ms))
        .filter(|d| !d.is_zero())
}

/// `--target-stdin`: the first line of standard input is the target URL; a thread then reads
/// on, and standard input closing (the sweep that started this run over ssh went away: ssh's
/// session ended) stops the run as Ctrl-C does.
pub(crate) fn target_from_stdin() -> Result<String, Error> {
    use std::io::BufRead;
    /// How long the URL line may take to come (the sweep writes it as it starts ssh).
    const URL_BOUND: Duration = Duration::from_secs(60);
    // A URL is short: a line longer than this is not one (and is not read into memory whole).
    const MAX_URL: u64 = 64 << 10;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("stdin-watch".into())
        .spawn(move || {
            let mut input = std::io::stdin().lock();
            let mut line = String::new();
            let read = std::io::Read::take(&mut input, MAX_URL).read_line(&mut line);
            let _ = tx.send(read.map(|_| line));
            let mut sink = [0u8; 512];
            while matches!(std::io::Read::read(&mut input, &mut sink), Ok(n) if n > 0) {}
            if !interrupted() {
                eprintln!("dbsweep: standard input closed (the sweep went away): stopping");
                INTERRUPT.store(true, Ordering::SeqCst);
            }
        })
        .map_err(|e| Error::Run(format!("--target-stdin: {e}")))?;
    let until = Instant::now() + URL_BOUND;
    let line = loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(read) => break read.map_err(|e| Error::Usage(format!("--target-stdin: {e}")))?,
            Err(_) if interrupted() || Instant::now() >= until => {
                return Err(Error::Usage(format!(
                    "--target-stdin: no URL line on standard input within {} s",
                    URL_BOUND.as_secs()
                )));
            }
            Err(_) => {}
        }
    };
    let url = line.trim_end_matches(['\r', '\n']).to_string();
    if url.is_empty() || !line.ends_with('\n') {
        return Err(Error::Usage(
            "--target-stdin: standard input held no URL line".into(),
        ));
    }
    Ok(url)
}

/// A load that Ctrl-C stopped on a throwaway server: nothing to clean up, the server and its
/// data go with it (the loader's advice to run cleanup is for servers that stay).
pub(crate) fn interrupted_load(e: Error, managed: bool) -> Error {
    if managed && interrupted() {
        Error::Run(
            "interrupted during the load; the throwaway server and its data are removed".into(),
        )
    } else {
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_that_ends_leaves_the_ends_of_the_runs_beside_it() {
        let ends = RunEnds::new();
        let latest = || ends.latest.load(Ordering::SeqCst);
        let a = ends.add(100);
        let b = ends.add(250);
        assert_eq!(latest(), 250);
        ends.remove(b);
        assert_eq!(latest(), 100, "the run still going keeps its end");
        let c = ends.add(0);
        assert_eq!(
            latest(),
            0,
            "a run without a time limit beside it: no overrun"
        );
        ends.remove(c);
        assert_eq!(latest(), 100);
        ends.remove(a);
        assert_eq!(latest(), 0, "no run in progress");
    }

    #[test]
    fn a_second_signal_at_once_keeps_the_files_and_a_third_or_a_late_one_does_not() {
        let now = Duration::ZERO;
        assert!(!abandon_on_signal(0, now));
        assert!(!abandon_on_signal(1, Duration::from_millis(1)));
        assert!(abandon_on_signal(2, Duration::from_millis(1)));
        assert!(abandon_on_signal(
            1,
            SIGNAL_GRACE + Duration::from_millis(1)
        ));
    }
}
