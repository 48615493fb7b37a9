//! pgbench 15's text, for dbsweep acting as pgbench: the progress lines of `-P` (stderr) and
//! the run's summary (stdout), line for line as pgbench prints them, so that the greps of
//! pgbench users still find their figures.

use std::fmt::Write as _;

use crate::output::Voice;
use crate::results::Results;
use crate::results::figures::Interval;

/// What the summary says that the results do not: the command line's choices.
#[derive(Clone, Copy, Debug)]
pub struct PgbenchStyle {
    /// "<builtin: TPC-B (sort of)>", a script's file name, or "multiple scripts".
    pub transaction_type: &'static str,
    pub scale: i64,
    pub query_mode: &'static str,
    pub clients: u32,
    pub threads: u32,
    /// `-t`: transactions per client; else `-T`'s duration.
    pub per_client: Option<u64>,
    pub duration: u64,
    /// The latency's standard deviation is printed under -P or -R, as pgbench does.
    pub stddev: bool,
    /// `-r`: each command's average latency.
    pub per_command: bool,
    /// `--max-tries` (0: no limit).
    pub max_tries: u32,
    /// `--latency-limit`, milliseconds.
    pub latency_limit: Option<f64>,
    /// `-C`: a new connection for every transaction.
    pub connect: bool,
    /// `--failures-detailed`: failed transactions by their error.
    pub failures_detailed: bool,
    /// `-R`: the progress line gives the lag behind the schedule.
    pub paced: bool,
    /// `--progress-timestamp`: progress lines say when, in Unix seconds, rather than how long
    /// since the start.
    pub progress_timestamp: bool,
    /// A partitioned pgbench_accounts (built-in scripts): its method and partitions.
    pub partitions: Option<(&'static str, u32)>,
    /// The scripts run, in the order of the command line.
    pub scripts: &'static [ScriptShape],
}

impl Voice for PgbenchStyle {
    /// `-P`'s lines, on stderr.
    fn interval(&self, iv: &Interval, _sql_used: bool) {
        eprintln!("{}", progress_line(iv, self));
    }

    fn summary(&self, r: &Results, _sql_used: bool) {
        print!("{}", summary(r, self));
    }

    /// Nothing: the file is written only where `DBSWEEP_RESULTS_DIR` asks, and pgbench's
    /// stderr stays pgbench's (drivers and pgbench's own tests check it is empty).
    fn results_written(&self, _path: &str) {}

    /// A retried error, a client that aborted alone: in pgbench's words.
    fn client_note(&self, note: &crate::output::note::ClientNote) {
        super::notes::say(note);
    }

    /// Nothing on a terminal but pgbench's own lines.
    fn progress_bars(&self) -> bool {
        false
    }

    fn aborted(&self) -> Option<&'static str> {
        Some("pgbench: error: Run was aborted; the above results are incomplete.")
    }

    /// `-i`'s last line, on stderr as its others.
    /// `done in 0.19 s (drop tables 0.00 s, create tables 0.01 s, ...).` as pgbench 15 says it.
    fn loaded(&self, load: &crate::results::figures::LoadReport) {
        let steps: Vec<String> = load
            .steps
            .iter()
            .map(|(name, s)| format!("{name} {s:.2} s"))
            .collect();
        eprintln!("done in {:.2} s ({}).", load.seconds, steps.join(", "));
    }
}

/// A script as the summary's sections show it.
#[derive(Clone, Copy, Debug)]
pub struct ScriptShape {
    /// "<builtin: TPC-B (sort of)>" or the file's name.
    pub desc: &'static str,
    pub weight: u32,
    /// Each command's first line.
    pub lines: &'static [&'static str],
}

/// `-P`'s line: "progress: 1.0 s, 2182.0 tps, lat 0.913 ms stddev 0.247, 0 failed", then,
/// as pgbench adds them, the lag behind `-R`'s schedule (and `-L`'s skipped transactions under
/// it) and, when `--max-tries` is not 1, the retried transactions and the retries.
/// `--progress-timestamp` puts the Unix time of the line where the seconds since the start go.
pub fn progress_line(iv: &Interval, st: &PgbenchStyle) -> String {
    let p = &iv.progress;
    let when = if st.progress_timestamp {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        format!("{}.{:03}", now.as_secs(), now.subsec_millis())
    } else {
        format!("{:.1}", iv.t)
    };
    let mut line = format!(
        "progress: {when} s, {:.1} tps, lat {:.3} ms stddev {:.3}, {} failed",
        iv.tps, iv.avg_ms, iv.stddev_ms, p.failed
    );
    if st.paced {
        let _ = write!(line, ", lag {:.3} ms", p.lag_ms);
        if st.latency_limit.is_some() {
            let _ = write!(line, ", {} skipped", p.skipped);
        }
    }
    if st.max_tries != 1 {
        let _ = write!(line, ", {} retried, {} retries", p.retried, p.retries);
    }
    line
}

/// "number of WHAT: N (P%)", N's share of `all` transactions.
fn share(s: &mut String, what: &str, n: u64, all: u64) {
    // pgbench divides 0 by 0 when no transaction ended, and prints what its printf makes
    // of that.
    let pct = if all > 0 {
        format!("{:.3}", 100.0 * n as f64 / all as f64)
    } else {
        "NaN".into()
    };
    let _ = writeln!(s, "number of {what}: {n} ({pct}%)");
}

/// The summary's head: what ran, how many clients, for how long, how many transactions.
fn header(s: &mut String, r: &Results, st: &PgbenchStyle) {
    let _ = writeln!(s, "transaction type: {}", st.transaction_type);
    let _ = writeln!(s, "scaling factor: {}", st.scale);
    if let Some((method, n)) = st.partitions {
        let _ = writeln!(s, "partition method: {method}\npartitions: {n}");
    }
    let _ = writeln!(s, "query mode: {}", st.query_mode);
    let _ = writeln!(s, "number of clients: {}", st.clients);
    let _ = writeln!(s, "number of threads: {}", st.threads);
    let _ = writeln!(s, "maximum number of tries: {}", st.max_tries);
    match st.per_client {
        Some(t) => {
            let _ = writeln!(s, "number of transactions per client: {t}");
            let _ = writeln!(
                s,
                "number of transactions actually processed: {}/{}",
                r.events,
                t * u64::from(st.clients)
            );
        }
        None => {
            let _ = writeln!(s, "duration: {} s", st.duration);
            let _ = writeln!(s, "number of transactions actually processed: {}", r.events);
        }
    }
}

pub fn summary(r: &Results, st: &PgbenchStyle) -> String {
    let mut s = String::new();
    // Transactions given up after their last try (--max-tries, 1 by default as pgbench's).
    let failed = r.failed_events;
    let all = r.events + failed + r.skipped_events;
    let pct = |n: u64, of: u64| {
        if of > 0 {
            100.0 * n as f64 / of as f64
        } else {
            0.0
        }
    };
    header(&mut s, r, st);
    share(&mut s, "failed transactions", failed, all);
    if st.failures_detailed {
        share(
            &mut s,
            "serialization failures",
            r.failed_serialization,
            all,
        );
        share(&mut s, "deadlock failures", r.failed_deadlocks, all);
    }
    if st.max_tries != 1 {
        share(&mut s, "transactions retried", r.retried_events, all);
        let _ = writeln!(s, "total number of retries: {}", r.retries);
    }
    // As pgbench: the rest means nothing when no transaction was done or skipped.
    if r.events + r.skipped_events == 0 {
        return s;
    }
    if let Some(limit) = st.latency_limit {
        if r.rate.is_some() {
            share(&mut s, "transactions skipped", r.skipped_events, all);
        }
        let _ = writeln!(
            s,
            "number of transactions above the {limit:.1} ms latency limit: {}/{} ({:.3}%)",
            r.late_events,
            r.events,
            pct(r.late_events, r.events)
        );
    }
    let stats = st.stddev || st.latency_limit.is_some();
    // pgbench's run time: with -C, the first connections' too.
    let run_s = if st.connect {
        r.time_s + r.connect_s.unwrap_or(0.0)
    } else {
        r.time_s
    };
    // Without -P, -R or -L pgbench measures no latency: its average is the run's time per
    // transaction and client, failed and skipped ones included.
    let avg_ms = if stats {
        r.latency_ms.avg
    } else if all > 0 {
        1000.0 * run_s * f64::from(st.clients) / all as f64
    } else {
        0.0
    };
    let _ = writeln!(
        s,
        "latency average = {avg_ms:.3} ms{}",
        if failed > 0 && !stats {
            " (including failures)"
        } else {
            ""
        }
    );
    if stats {
        let _ = writeln!(s, "latency stddev = {:.3} ms", r.latency_ms.stddev);
    }
    if let Some(rate) = &r.rate {
        let _ = writeln!(
            s,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            rate.lag_avg_ms, rate.lag_max_ms
        );
    }
    if st.connect {
        // The mean of the connections timed: each client's after its transactions but the
        // last (with one transaction each, the initial connections).
        let avg_s = match r.reconnect_s {
            Some(t) if r.reconnects > 0 => t / r.reconnects as f64,
            _ => r.connect_s.unwrap_or(0.0),
        };
        let _ = writeln!(s, "average connection time = {:.3} ms", avg_s * 1000.0);
        // pgbench's run time holds every transaction's connection, the first's too.
        let tps = if run_s > 0.0 {
            r.events as f64 / run_s
        } else {
            r.tps
        };
        let _ = writeln!(s, "tps = {tps:.6} (including reconnection times)");
    } else {
        let _ = writeln!(
            s,
            "initial connection time = {:.3} ms",
            r.connect_s.unwrap_or(0.0) * 1000.0
        );
        let _ = writeln!(s, "tps = {:.6} (without initial connection time)", r.tps);
    }
    scripts(&mut s, r, st);
    s
}

/// pgbench's sections after the totals: one per script when there are several (its weight,
/// transactions, failures and latency), each with its commands' latencies under `-r`.
fn scripts(s: &mut String, r: &Results, st: &PgbenchStyle) {
    let several = st.scripts.len() > 1;
    if !several && !st.per_command {
        return;
    }
    let total_weight: u64 = st.scripts.iter().map(|x| u64::from(x.weight)).sum();
    let pct = |a: f64, b: f64| if b > 0.0 { 100.0 * a / b } else { 0.0 };
    for (k, shape) in st.scripts.iter().enumerate() {
        let prefix = format!("{} ", k + 1);
        if several {
            let fig = r.scripts.iter().find(|f| f.name.starts_with(&prefix));
            let count = fig.map_or(0, |f| f.count);
            let _ = writeln!(s, "SQL script {}: {}", k + 1, shape.desc);
            let _ = writeln!(
                s,
                " - weight: {} (targets {:.1}% of total)",
                shape.weight,
                pct(f64::from(shape.weight), total_weight as f64)
            );
            let _ = writeln!(
                s,
                " - {count} transactions ({:.1}% of total, tps = {:.6})",
                pct(count as f64, r.events as f64),
                if r.time_s > 0.0 {
                    count as f64 / r.time_s
                } else {
                    0.0
                }
            );
            // Shares of the script's transactions, failed ones included.
            let n = |v: Option<u64>| v.unwrap_or(0);
            let failed = n(fig.and_then(|f| f.failures));
            let all = (count + failed) as f64;
            let _ = writeln!(
                s,
                " - number of failed transactions: {failed} ({:.3}%)",
                pct(failed as f64, all)
            );
            if st.failures_detailed {
                for (what, v) in [
                    (
                        "serialization failures",
                        fig.and_then(|f| f.failed_serialization),
                    ),
                    ("deadlock failures", fig.and_then(|f| f.failed_deadlocks)),
                ] {
                    let _ = writeln!(
                        s,
                        " - number of {what}: {} ({:.3}%)",
                        n(v),
                        pct(n(v) as f64, all)
                    );
                }
            }
            if st.max_tries != 1 {
                let retried = n(fig.and_then(|f| f.retried));
                let _ = writeln!(
                    s,
                    " - number of transactions retried: {retried} ({:.3}%)",
                    pct(retried as f64, all)
                );
                let _ = writeln!(
                    s,
                    " - total number of retries: {}",
                    n(fig.and_then(|f| f.retries))
                );
            }
            if let Some(f) = fig {
                let _ = writeln!(s, " - latency average = {:.3} ms", f.latency_ms.avg);
                let _ = writeln!(s, " - latency stddev = {:.3} ms", f.latency_ms.stddev);
            }
        }
        if st.per_command {
            let retries = st.max_tries != 1;
            let _ = writeln!(
                s,
                "{}statement latencies in milliseconds{}:",
                if several { " - " } else { "" },
                if retries {
                    ", failures and retries"
                } else {
                    " and failures"
                }
            );
            for (i, line) in shape.lines.iter().enumerate() {
                let name = format!("{}.{} ", k + 1, i + 1);
                let fig = r.statements.iter().find(|f| f.name.starts_with(&name));
                let avg = fig.map_or(0.0, |f| f.latency_ms.avg);
                let failures = fig.and_then(|f| f.failures).unwrap_or(0);
                if retries {
                    let tried = fig.and_then(|f| f.retries).unwrap_or(0);
                    let _ = writeln!(s, "   {avg:11.3}  {failures:>10}  {tried:>10}  {line}");
                } else {
                    let _ = writeln!(s, "   {avg:11.3}  {failures:>10}  {line}");
                }
            }
        }
    }
}
