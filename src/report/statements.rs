//! Per-statement latency of the oltp workloads (the results' `statements`): a row per test and
//! statement kind, a column per slice column, so that "read_write got slower" reads as "commit
//! p99 doubled".

use super::model::Dataset;
use super::tables::{Better, Cell, Row, Table, layout, per_column, tests};
use crate::results::StatementFigures;

/// Two tables per slice that has statement figures: the average and the 99th percentile.
pub fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for slice in layout(ds) {
        for (what, pick) in [
            (
                "average",
                (|f: &StatementFigures| f.latency_ms.avg) as fn(&_) -> f64,
            ),
            ("99th percentile", |f| f.latency_ms.p99),
        ] {
            let mut rows = Vec::new();
            for (group, test) in tests(ds) {
                let figures = per_column(ds, &slice, &test, |r| {
                    // Tests timed whole (sql-bench's) have their family's table, in seconds.
                    Some(&r.statements).filter(|s| {
                        !s.is_empty() && !crate::workload::families::seconds_per_test(&r.workload)
                    })
                });
                // The statement kinds in the order the first column that has them lists them.
                let mut names: Vec<&str> = Vec::new();
                for f in figures.iter().flatten() {
                    for x in f.iter() {
                        if !names.contains(&x.name.as_str()) {
                            names.push(&x.name);
                        }
                    }
                }
                for name in names {
                    let cells = figures
                        .iter()
                        .map(|f| {
                            f.and_then(|f| f.iter().find(|x| x.name == name))
                                .map_or(Cell::Missing, |x| Cell::Num(pick(x)))
                        })
                        .collect();
                    rows.push(Row {
                        group: Some(group),
                        label: format!("{test}: {name}"),
                        summary: false,
                        cells,
                    });
                }
            }
            if rows.is_empty() {
                continue;
            }
            out.push(Table {
                id: format!(
                    "statements-{}",
                    if what == "average" { "avg" } else { "p99" }
                ),
                title: format!(
                    "Statement latency, {what}{} ({})",
                    slice.suffix,
                    Better::Lower.legend()
                ),
                better: Some(Better::Lower),
                columns: slice
                    .columns
                    .iter()
                    .map(|(l, _)| format!("{l} ms"))
                    .collect(),
                under: Vec::new(),
                rows,
                notes: vec![
                    "each statement kind of the oltp events timed apart (as pgbench -r does): from the end of the event's statement before it, or the event's start, to its answer; a LinkBench row is an operation, its transaction whole"
                        .into(),
                ],
            });
        }
    }
    out
}
