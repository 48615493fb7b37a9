//! pgbench's runs as pgbench's users read them first: transactions a second and the
//! transactions' latency percentiles, a row per run, before anything else of the report.

use crate::dataset::model::{Dataset, place_label};
use crate::dataset::tables::{Better, Cell, Row, Table};

/// Whether a results file's workload is a run of pgbench's scripts (its builtins, or scripts
/// run as pgbench runs them).
pub(super) fn is_run(workload: &str) -> bool {
    workload.starts_with("pgbench")
}

/// The id of its table of transactions.
pub(super) const TRANSACTIONS: &str = "pgbench.transactions";

pub(super) fn tables(ds: &Dataset) -> Vec<Table> {
    let rows: Vec<Row> = ds
        .entries
        .iter()
        .filter_map(|e| {
            let r = e.results.as_ref().filter(|r| is_run(&r.workload))?;
            let place = place_label(ds, &e.place, false);
            let label = if place.is_empty() {
                format!("{} c{}", e.test, e.place.clients)
            } else {
                format!("{} {place} c{}", e.test, e.place.clients)
            };
            let l = &r.latency_ms;
            Some(Row {
                group: None,
                label,
                summary: false,
                cells: vec![
                    Cell::Num(r.tps),
                    Cell::Num(l.avg),
                    Cell::Num(l.p50),
                    Cell::Num(l.p95),
                    Cell::Num(l.p99),
                    Cell::Num(l.max),
                    Cell::Count(r.failed_events),
                    Cell::Count(r.retried_events),
                ],
            })
        })
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    vec![Table {
        id: TRANSACTIONS.into(),
        title: "pgbench: transactions a second and their latency".into(),
        better: Some(Better::Higher),
        columns: [
            "tps", "avg ms", "p50 ms", "p95 ms", "p99 ms", "max ms", "failed", "retried",
        ]
        .into_iter()
        .map(String::from)
        .collect(),
        under: Vec::new(),
        rows,
        notes: vec![
            "tps: transactions (script runs) done a second over the measured time; the latency \
             of each transaction whole, from dbsweep's histogram (lower is better); failed: \
             given up after their last try (--max-tries); retried: tried more than once"
                .into(),
        ],
    }]
}
