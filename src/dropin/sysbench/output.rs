//! sysbench 1.0.20's text, line for line, for `dbsweep sysbench` (and a link named `sysbench`):
//! the header, the interval lines and the summary that drivers parse with grep and awk. The
//! figures are dbsweep's; the shapes (headings, widths, decimals) are sysbench's.

use std::fmt::Write as _;

use hdrhistogram::Histogram;

use crate::output::log_histogram::LogHistogram;
use crate::output::shape::{line, queries_performed};
use crate::output::{RunHeader, Voice};
use crate::results::Results;
use crate::results::figures::{Checkpoint, Interval};

/// The version whose output this module reproduces.
pub const VERSION: &str = "1.0.20";

/// The first line of every command: sysbench's, naming what really runs.
pub fn banner() -> String {
    format!(
        "sysbench {VERSION} (dbsweep {}, sysbench-compatible)\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// What sysbench prints between the banner and the first interval line of a run: `r` holds the
/// run's threads, rate, report interval and seed.
pub fn run_header(r: &RunHeader, style: &SysbenchStyle) -> String {
    run_mode(r, style) + "Initializing worker threads...\n\n"
}

/// sysbench's "Running the test with following options" lines, up to where a test says what
/// it does (its mode), and the blank lines after them.
pub fn run_mode(r: &RunHeader, style: &SysbenchStyle) -> String {
    let mut s = String::from("Running the test with following options:\n");
    let _ = writeln!(s, "Number of threads: {}", r.threads);
    if let Some(rate) = r.rate {
        let _ = writeln!(s, "Target transaction rate: {}/sec", rate.round());
    }
    if let Some(every) = r.report_interval {
        let _ = writeln!(s, "Report intermediate results every {every} second(s)");
    }
    if !style.checkpoints.is_empty() {
        let list: Vec<String> = style.checkpoints.iter().map(u32::to_string).collect();
        let _ = writeln!(s, "Report checkpoint(s) at {} seconds", list.join(", "));
    }
    if style.validate {
        s.push_str("Validation checks: on.\n\n");
    }
    if style.seed_given {
        let _ = writeln!(
            s,
            "Initializing random number generator from seed ({}).",
            r.rand_seed
        );
    } else {
        s.push_str("Initializing random number generator from current time\n");
    }
    s.push_str("\n\n");
    s
}

/// sysbench's log levels: a line of level L is printed under `--verbosity` L or above.
pub const NOTICE: u8 = 3;

/// How sysbench's text looks in this process, when it runs as sysbench (`dbsweep sysbench`).
#[derive(Clone, Copy, Debug)]
pub struct SysbenchStyle {
    /// `--percentile` (0 turns the percentile off).
    pub percentile: u32,
    /// `--histogram`: the latency histogram before the summary.
    pub histogram: bool,
    /// Whether `--rand-seed` was given (the header says where the generator's seed came from).
    pub seed_given: bool,
    /// `--verbosity`: below NOTICE, no header, interval lines or summary.
    pub verbosity: u8,
    /// `--validate`: the header says so (fileio checks what it reads).
    pub validate: bool,
    /// `--report-checkpoints`: the seconds into the run, in order, at which the whole
    /// statistics are printed and their counters start again.
    pub checkpoints: &'static [u32],
}

impl SysbenchStyle {
    pub fn notice(&self) -> bool {
        self.verbosity >= NOTICE
    }
}

impl Voice for SysbenchStyle {
    /// dbsweep's remarks and warnings (a busy machine, which database) add nothing to
    /// sysbench's text: its warnings go to the results file's notes (errors end the command,
    /// and are said there).
    fn said(&self, _s: crate::output::Said<'_>) {}

    /// On stdout, as sysbench has it ("Creating table 'sbtest1'...").
    fn progress(&self, line: &str) {
        println!("{line}");
    }

    fn run_header(&self, run: &RunHeader) {
        if self.notice() {
            print!("{}", run_header(run, self));
        }
    }

    fn percentile(&self) -> Option<f64> {
        (self.percentile > 0).then_some(f64::from(self.percentile))
    }

    fn checkpoints(&self) -> &'static [u32] {
        self.checkpoints
    }

    /// "[ Ns ] Checkpoint report:" and the statistics since the last one.
    fn checkpoint(&self, cp: &Checkpoint, sql_used: bool) {
        if self.notice() {
            print!(
                "[ {:.0}s ] Checkpoint report:\n{}",
                cp.t,
                checkpoint_summary(cp, self.percentile, sql_used)
            );
        }
    }

    /// Once every thread has connected and run its `thread_init`.
    fn started(&self) {
        if self.notice() {
            print!("Threads started!\n\n");
        }
    }

    /// Its SQL drivers' line when the run used one, else its generic events-per-second line;
    /// under --rate, the queue's line.
    fn interval(&self, iv: &Interval, sql_used: bool) {
        if !self.notice() {
            return;
        }
        if sql_used {
            println!("{}", interval_line(iv, self.percentile));
        } else {
            println!("{}", events_line(iv, self.percentile));
        }
        if let Some(line) = queue_line(iv, sql_used) {
            println!("{line}");
        }
    }

    /// With its histogram when asked, and its SQL statistics when the run used a database
    /// driver (a built-in test always does, a script when it calls `sysbench.sql.driver()`).
    fn summary(&self, r: &Results, sql_used: bool) {
        if !self.notice() {
            return;
        }
        if self.histogram
            && let Ok(h) = r.histogram.decode()
        {
            print!("{}", histogram(&h));
        }
        match &r.since_checkpoint {
            // After a checkpoint, the figures since the last (the total time is the run's).
            Some(cp) => print!(
                "{}",
                checkpoint_summary(
                    &Checkpoint {
                        t: r.time_s,
                        ..(**cp).clone()
                    },
                    self.percentile,
                    sql_used
                )
            ),
            None => print!("{}", summary(r, self.percentile, sql_used)),
        }
    }

    /// sysbench's prepare ends without a line of its own.
    fn says_dropped(&self) -> bool {
        false
    }

    /// Nothing on a terminal but sysbench's own lines.
    fn progress_bars(&self) -> bool {
        false
    }
}

/// An interval line, as sysbench's SQL drivers print it; `percentile` 0 leaves the
/// percentile at 0, as sysbench does.
pub fn interval_line(iv: &Interval, percentile: u32) -> String {
    let pct = if percentile == 0 { 0.0 } else { iv.pct_ms };
    line(iv, percentile, pct)
}

/// sysbench's interval line for a script that uses no database driver: events per second and
/// the latency at `percentile`.
pub fn events_line(iv: &Interval, percentile: u32) -> String {
    let pct = if percentile == 0 { 0.0 } else { iv.pct_ms };
    format!(
        "[ {}s ] thds: {} eps: {:.2} lat (ms,{percentile}%): {pct:.2}",
        iv.t.round() as u64,
        iv.threads,
        iv.tps
    )
}

/// sysbench's second interval line under `--rate`: events queued (due, not begun) and
/// running; its SQL drivers' line has a comma that its generic one has not.
pub fn queue_line(iv: &Interval, sql_used: bool) -> Option<String> {
    let (queued, running) = iv.queue?;
    let comma = if sql_used { "," } else { "" };
    Some(format!(
        "[ {}s ] queue length: {queued}{comma} concurrency: {running}",
        iv.t.round() as u64
    ))
}

/// sysbench's latency histogram: 1024 buckets spaced evenly on a log scale from 1 µs to
/// 100 s.
const BUCKETS: usize = 1024;
const RANGE_MS: (f64, f64) = (0.001, 100_000.0);

/// The histogram section of `--histogram`, from the run's latencies in nanoseconds.
pub fn histogram(h: &Histogram<u64>) -> String {
    let mut log = LogHistogram::new(BUCKETS, RANGE_MS.0, RANGE_MS.1).expect("static range");
    for v in h.iter_recorded() {
        let ms = h.highest_equivalent(v.value_iterated_to()) as f64 / 1e6;
        log.add(ms.max(RANGE_MS.0), v.count_at_value());
    }
    format!(
        "Latency histogram (values are in milliseconds)\n{} \n",
        log.text()
    )
}

/// The summary of a run, as sysbench 1.0.20 prints it after the interval lines; `sql`: the
/// SQL statistics come first (a run without a database driver has none).
pub fn summary(r: &Results, percentile: u32, sql: bool) -> String {
    checkpoint_summary(
        &Checkpoint {
            t: r.time_s,
            seconds: r.time_s,
            threads: 0,
            events: r.events,
            queries: r.queries.clone(),
            errors: r.errors.values().sum(),
            reconnects: r.reconnects,
            latency_ms: r.latency_ms.clone(),
            pct_ms: percentile_ms(r, percentile),
            thread_events: r.thread_events.clone(),
            thread_time_s: r.thread_time_s.clone(),
        },
        percentile,
        sql,
    )
}

/// sysbench's statistics of the events since the last checkpoint, `cp.t` seconds into the run:
/// the rates are over the seconds since that checkpoint.
pub fn checkpoint_summary(cp: &Checkpoint, percentile: u32, sql: bool) -> String {
    let mut s = String::new();
    let per_s = |n: u64| {
        if cp.seconds > 0.0 {
            n as f64 / cp.seconds
        } else {
            0.0
        }
    };
    if sql {
        s.push_str(&queries_performed(&cp.queries));
        for (name, n) in [
            ("transactions", cp.events),
            ("queries", cp.queries.total),
            ("ignored errors", cp.errors),
            ("reconnects", cp.reconnects),
        ] {
            let _ = writeln!(
                s,
                "    {:<37}{n:<6} ({:.2} per sec.)",
                format!("{name}:"),
                per_s(n)
            );
        }
    }
    let l = &cp.latency_ms;
    s.push_str(&general_statistics(&General {
        time_s: cp.t,
        events: cp.events,
        latency_ms: [l.min, l.avg, l.max, l.sum],
        percentile,
        pct_ms: cp.pct_ms,
        thread_events: &cp.thread_events,
        thread_time_s: &cp.thread_time_s,
    }));
    s
}

/// What sysbench's closing statistics say of any test's run, a database's or one of its tests
/// written in C.
pub struct General<'a> {
    pub time_s: f64,
    pub events: u64,
    /// min, avg, max and sum of the events' latencies, in milliseconds.
    pub latency_ms: [f64; 4],
    /// `--percentile` (0: off) and the latency there.
    pub percentile: u32,
    pub pct_ms: f64,
    /// Each thread's events and busy seconds.
    pub thread_events: &'a [u64],
    pub thread_time_s: &'a [f64],
}

/// sysbench's "General statistics", "Latency (ms)" and "Threads fairness" sections.
pub fn general_statistics(g: &General) -> String {
    let mut s = String::from("\nGeneral statistics:\n");
    let _ = writeln!(s, "    {:<37}{:.4}s", "total time:", g.time_s);
    let _ = writeln!(s, "    {:<37}{}", "total number of events:", g.events);
    let line = |s: &mut String, label: &str, v: f64| {
        let _ = writeln!(s, "{label:<43}{v:>10.2}");
    };
    let [min, avg, max, sum] = g.latency_ms;
    s.push_str("\nLatency (ms):\n");
    line(&mut s, "         min:", min);
    line(&mut s, "         avg:", avg);
    line(&mut s, "         max:", max);
    if g.percentile == 0 {
        s.push_str("         percentile stats:               disabled\n");
    } else {
        let label = format!("        {:>3}th percentile:", g.percentile);
        line(&mut s, &label, g.pct_ms);
    }
    line(&mut s, "         sum:", sum);
    let (ev_avg, ev_sd) = mean_sd(g.thread_events.iter().map(|&e| e as f64));
    let (t_avg, t_sd) = mean_sd(g.thread_time_s.iter().copied());
    let _ = writeln!(
        s,
        "\nThreads fairness:\n    events (avg/stddev):           {ev_avg:.4}/{ev_sd:.2}\n    execution time (avg/stddev):   {t_avg:.4}/{t_sd:.2}\n"
    );
    s
}

/// The run's latency at `percentile`, in milliseconds, from its histogram (the saved
/// percentiles where the histogram cannot be read).
fn percentile_ms(r: &Results, percentile: u32) -> f64 {
    let l = &r.latency_ms;
    match r.histogram.decode() {
        Ok(h) if !h.is_empty() => h.value_at_quantile(f64::from(percentile) / 100.0) as f64 / 1e6,
        Ok(_) => 0.0,
        Err(_) => match percentile {
            50 => l.p50,
            90 => l.p90,
            99 => l.p99,
            100 => l.max,
            _ => l.p95,
        },
    }
}

/// The mean and the population standard deviation, as sysbench's fairness lines give them.
fn mean_sd(values: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = values.clone().count();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = values.clone().sum::<f64>() / n as f64;
    let var = values.map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_sysbench_log_buckets_with_stars_against_the_fullest() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for _ in 0..10 {
            h.record(1_000_000).unwrap(); // 1 ms
        }
        h.record(10_000_000).unwrap(); // 10 ms
        let text = histogram(&h);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        // 1 ms is bucket 307.0 of 1023 over ln(0.001)..ln(100000): printed as 1.000 (or its
        // neighbour's value, within one bucket's width of 1.8%).
        let first: Vec<&str> = lines[2].split_whitespace().collect();
        let v: f64 = first[0].parse().unwrap();
        assert!((v - 1.0).abs() < 0.02, "{}", lines[2]);
        assert_eq!(first[1], format!("|{}", "*".repeat(40)));
        assert_eq!(first[2], "10");
        assert!(
            lines[3].contains("|****") && lines[3].ends_with(" 1"),
            "{}",
            lines[3]
        );
        assert_eq!(lines[4], " ");
    }

    #[test]
    fn fairness_is_the_population_deviation() {
        let (m, sd) = mean_sd([1.0, 3.0].into_iter());
        assert_eq!((m, sd), (2.0, 1.0));
        assert_eq!(mean_sd(std::iter::empty()), (0.0, 0.0));
    }
}

#[cfg(test)]
mod queue_tests {
    use super::*;

    #[test]
    fn the_queue_line_has_a_comma_only_for_sql_drivers() {
        let mut iv = Interval {
            t: 2.0,
            queue: Some((7, 2)),
            ..Default::default()
        };
        assert_eq!(
            queue_line(&iv, true).unwrap(),
            "[ 2s ] queue length: 7, concurrency: 2"
        );
        assert_eq!(
            queue_line(&iv, false).unwrap(),
            "[ 2s ] queue length: 7 concurrency: 2"
        );
        iv.queue = None;
        assert_eq!(queue_line(&iv, true), None);
    }
}
