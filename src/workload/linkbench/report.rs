//! LinkBench's figures per operation, in the form its users publish them: for each measured
//! LinkBench step, a row per operation with its rate, its share of the mix and its latency
//! percentiles.

use crate::dataset::model::Dataset;
use crate::dataset::tables::{Cell, Row, Table};

pub(super) fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for e in &ds.entries {
        let Some(r) = e.results.as_ref() else {
            continue;
        };
        if !crate::results::times_operations(&r.workload) || r.statements.is_empty() {
            continue;
        }
        let p = &e.place;
        let per_s = |n: u64| {
            if r.time_s > 0.0 {
                n as f64 / r.time_s
            } else {
                0.0
            }
        };
        out.push(Table {
            id: format!(
                "linkbench-{}-{}-{}-{}-c{}",
                e.test, p.source, p.target, p.config, p.clients
            ),
            under: Vec::new(),
            title: format!(
                "LinkBench operations of {}{} at {} client(s): {:.0} ops/s in all",
                e.test,
                crate::dataset::model::on_dbms(ds, e, r),
                p.clients,
                per_s(r.events)
            ),
            better: None,
            columns: ["ops/s", "share %", "avg ms", "p50 ms", "p99 ms", "max ms"]
                .into_iter()
                .map(String::from)
                .collect(),
            rows: r
                .statements
                .iter()
                .map(|x| Row {
                    group: None,
                    label: x.name.clone(),
                    summary: false,
                    cells: vec![
                        Cell::Num(per_s(x.count)),
                        Cell::Num(100.0 * x.per_event),
                        Cell::Num(x.latency_ms.avg),
                        Cell::Num(x.latency_ms.p50),
                        Cell::Num(x.latency_ms.p99),
                        Cell::Num(x.latency_ms.max),
                    ],
                })
                .collect(),
            notes: vec![
                "higher is better for ops/s, lower for every time; an operation's time is its transaction whole (add_link: the count row locked, the link read, written and counted)"
                    .into(),
            ],
        });
    }
    out
}
