//! The shapes dbsweep's own text shares with sysbench's (its interval line, the head of its
//! SQL statistics), so that sysbench's users read dbsweep's at a glance; the sysbench
//! personality prints them too.

use std::fmt::Write as _;

use crate::results::figures::Interval;

/// sysbench's interval line with the latency `pct_ms` at `percentile`.
pub fn line(iv: &Interval, percentile: u32, pct_ms: f64) -> String {
    format!(
        "[ {}s ] thds: {} tps: {:.2} qps: {:.2} (r/w/o: {:.2}/{:.2}/{:.2}) lat (ms,{percentile}%): {pct_ms:.2} err/s: {:.2} reconn/s: {:.2}",
        iv.t.round() as u64,
        iv.threads,
        iv.tps,
        iv.qps,
        iv.reads_per_s,
        iv.writes_per_s,
        iv.others_per_s,
        iv.err_per_s,
        iv.reconn_per_s
    )
}

/// The head of sysbench's SQL statistics: the queries by kind.
pub fn queries_performed(q: &crate::results::Queries) -> String {
    let mut s = String::from("SQL statistics:\n    queries performed:\n");
    for (name, n) in [
        ("read", q.read),
        ("write", q.write),
        ("other", q.other),
        ("total", q.total),
    ] {
        let _ = writeln!(s, "        {:<33}{n}", format!("{name}:"));
    }
    s
}
