//! Who speaks: dbsweep's own voice or a personality's (sysbench, pgbench), the header of a run, and
//! the printer of a command's lines.

use super::note::Said;
use super::summary::{interval_line, summary};
use crate::results::Results;
use crate::results::figures::Interval;

/// What sysbench's header says of a run (its threads, rate, interval lines and seed).
pub struct RunHeader {
    pub threads: u32,
    /// Events per second, when the run is paced.
    pub rate: Option<f64>,
    /// Seconds between interval lines, when there are any.
    pub report_interval: Option<f64>,
    pub rand_seed: u64,
}

/// Another tool's text, where dbsweep acts as that tool (sysbench, pgbench): each personality
/// says in its own folder how the lines of a command look. The measuring code hands it what
/// it has to say (progress, notes, intervals, the summary); it never prints itself.
pub trait Voice: Sync + std::fmt::Debug {
    /// A line of a command's progress ("Creating table 'sbtest1'...").
    fn progress(&self, line: &str) {
        eprintln!("{line}");
    }
    /// What measuring a run says of it (which database, where the results went, a warning):
    /// only its warnings by default, as other tools' drivers parse what they print.
    fn said(&self, s: Said<'_>) {
        if let Said::Warning(..) = s {
            eprintln!("{}", s.line());
        }
    }
    /// What a client says while the run goes on.
    fn client_note(&self, note: &super::note::ClientNote) {
        own_client_note(note);
    }
    /// The percentile the interval lines and the summary give (`--percentile`); None: 95.
    fn percentile(&self) -> Option<f64> {
        None
    }
    /// Seconds into the run at which the whole statistics are reported and start again
    /// (`--report-checkpoints`).
    fn checkpoints(&self) -> &'static [u32] {
        &[]
    }
    /// A checkpoint's report: the figures since the one before.
    fn checkpoint(&self, _cp: &crate::results::figures::Checkpoint, _sql_used: bool) {}
    /// What precedes a run's first line.
    fn run_header(&self, _run: &RunHeader) {}
    /// Every client has connected (and run its script's `thread_init`): the run begins.
    fn started(&self) {}
    /// One interval's line.
    fn interval(&self, iv: &Interval, sql_used: bool);
    /// A run's summary.
    fn summary(&self, r: &Results, sql_used: bool);
    /// Where the results file went.
    fn results_written(&self, path: &str) {
        self.said(Said::Remark(&format!("results written to {path}")));
    }
    /// The line that ends a run whose clients aborted (their figures are of the others).
    fn aborted(&self) -> Option<&'static str> {
        None
    }
    /// A prepare's last line, given what it did.
    fn loaded(&self, _load: &crate::results::figures::LoadReport) {}
    /// Whether a cleanup says what it dropped.
    fn says_dropped(&self) -> bool {
        true
    }
    /// Whether connecting many clients and a load show progress bars on a terminal.
    fn progress_bars(&self) -> bool {
        true
    }
}

/// How a command's text looks: dbsweep's own, or a personality's. The command's plan carries
/// it to whoever prints.
#[derive(Clone, Copy, Debug, Default)]
pub enum Style {
    #[default]
    Own,
    As(&'static dyn Voice),
}

/// A client's note as dbsweep says it, one line on stderr (a personality whose clients retry
/// aloud or abort alone words them its own way).
fn own_client_note(note: &super::note::ClientNote) {
    use super::note::ClientNote;
    match *note {
        ClientNote::Warning { message } => eprintln!("warning: {message}"),
        ClientNote::Retryable {
            client,
            message,
            tries,
            max_tries,
            last,
            ..
        } => {
            let max = max_tries.map_or(String::new(), |m| format!(" of {m}"));
            let then = if last { "its event fails" } else { "retried" };
            eprintln!("client {client}: {message} (try {tries}{max}; {then})");
        }
        ClientNote::Aborted {
            client, message, ..
        } => eprintln!("client {client} stopped: {message}"),
    }
}

impl Style {
    /// A line of a command's progress: on stderr, away from the summary (a personality may
    /// put it elsewhere).
    pub fn progress(self, line: &str) {
        match self {
            Style::As(v) => v.progress(line),
            Style::Own => eprintln!("{line}"),
        }
    }

    /// What a client says while the run goes on (a retried error under `--verbose-errors`,
    /// a client that aborted).
    pub fn client_note(self, note: &super::note::ClientNote) {
        match self {
            Style::As(v) => v.client_note(note),
            Style::Own => own_client_note(note),
        }
    }

    /// What measuring a run says of it (which database, where the results went, a warning):
    /// dbsweep's own voice prints it all on stderr.
    pub fn say(self, s: Said<'_>) {
        match self {
            Style::As(v) => v.said(s),
            Style::Own => eprintln!("{}", s.line()),
        }
    }

    /// Prints one interval: dbsweep's line on stderr, or the personality's.
    pub fn interval(self, iv: &Interval, sql_used: bool) {
        match self {
            Style::As(v) => v.interval(iv, sql_used),
            Style::Own => eprintln!("{}", interval_line(iv)),
        }
    }

    /// A checkpoint's report, where the personality has them.
    pub fn checkpoint(self, cp: &crate::results::figures::Checkpoint, sql_used: bool) {
        if let Style::As(v) = self {
            v.checkpoint(cp, sql_used);
        }
    }

    /// Prints a run's summary on stdout: dbsweep's, or the personality's.
    pub fn summary(self, r: &Results, sql_used: bool) {
        match self {
            Style::As(v) => v.summary(r, sql_used),
            Style::Own => print!("{}", summary(r)),
        }
    }

    /// The personality's voice, if any.
    pub fn voice(self) -> Option<&'static dyn Voice> {
        match self {
            Style::As(v) => Some(v),
            Style::Own => None,
        }
    }
}

/// Who prints a run's interval lines and summary: dbsweep itself (these defaults), or a
/// script's report hooks.
pub trait Printer {
    /// Prints one interval; false leaves it to dbsweep's own line.
    fn interval(&mut self, _iv: &Interval) -> bool {
        false
    }
    /// Prints a checkpoint's report; false leaves it to the personality's.
    fn checkpoint(&mut self, _cp: &crate::results::figures::Checkpoint) -> bool {
        false
    }
    /// Prints the run's summary; false leaves it to dbsweep's own.
    fn summary(&mut self, _r: &Results) -> bool {
        false
    }
    /// Whether the run used a database driver (sysbench's summary shows SQL statistics only
    /// then): dbsweep's workloads always do.
    fn sql_used(&self) -> bool {
        true
    }
}
