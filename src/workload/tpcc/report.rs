//! TPC-C's figures per transaction type (count, share, latency against the 90th-percentile
//! limit of clause 5.2.5.3), one table per measured TPC-C step: the run's summary and results
//! file have them, and a report that shows only NOPM hides a type that failed its limit.

use crate::dataset::model::Dataset;
use crate::dataset::tables::{Cell, Row, Table};

pub(super) fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for e in &ds.entries {
        let Some(r) = e.results.as_ref() else {
            continue;
        };
        let Some(t) = r.tpcc.as_ref() else {
            continue;
        };
        let queued = t.transactions.iter().any(|x| x.queue_ms.is_some());
        let p = &e.place;
        let at = crate::dataset::model::on_dbms(ds, e, r);
        out.push(Table {
            id: format!("tpcc-{}-{}-{}-{}-c{}", e.test, p.source, p.target, p.config, p.clients),
            under: Vec::new(),
            title: format!(
                "TPC-C transactions of {}{at} at {} client(s): {} warehouse(s){}, NOPM {:.0}{}, limits {}",
                e.test,
                p.clients,
                t.warehouses,
                t.mix
                    .filter(|m| *m != crate::results::figures::TPCC_LEAST_MIX)
                    .map_or(String::new(), |m| format!(
                        ", mix {}{}",
                        m.map(|x| x.to_string()).join(","),
                        if t.mix_below_minimums.is_empty() { "" } else { " (below the specification's minimums)" }
                    )),
                t.nopm,
                t.nopm_ceiling_per_warehouse.map_or(String::new(), |c| format!(
                    " ({:.2} per warehouse of at most {c:.2} with its pacing{})",
                    t.nopm_per_warehouse,
                    if t.conforming { "" } else { ", not the specification's" }
                )),
                if t.limits_met { "met" } else { "NOT met" }
            ),
            better: None,
            columns: [
                "count", "share %", "retries", "rollbacks", "avg ms", "p90 ms", "p99 ms", "max ms",
                "p90 limit ms", "limit",
            ]
            .into_iter()
            .chain(queued.then_some("queue p90 ms"))
            .map(String::from)
            .collect(),
            rows: t
                .transactions
                .iter()
                .map(|x| Row {
                    group: None,
                    label: x.name.clone(),
                    summary: false,
                    cells: vec![
                        Cell::Count(x.count),
                        Cell::Num(x.share_pct),
                        Cell::Count(x.retries),
                        Cell::Count(x.rollbacks),
                        Cell::Num(x.latency_ms.avg),
                        Cell::Num(x.latency_ms.p90),
                        Cell::Num(x.latency_ms.p99),
                        Cell::Num(x.latency_ms.max),
                        Cell::Num(x.limit_p90_ms),
                        Cell::Text(if x.limit_met { "pass" } else { "FAIL" }.into()),
                    ]
                    .into_iter()
                    .chain(
                        queued.then(|| Cell::Num(x.queue_ms.as_ref().map_or(0.0, |q| q.p90))),
                    )
                    .collect(),
                })
                .collect(),
            notes: std::iter::once(
                "unaudited: NOPM is committed New-Orders per minute, not tpmC; a type passes when its 90th-percentile response time is within its limit (5 s, Stock-Level 20 s); lower is better for every time"
                    .to_string(),
            )
            .chain(r.serving.as_ref().map(|sv| {
                format!(
                    "{} terminals on {} worker threads{}: {} fell behind their schedule; the queue time (waiting for a worker or a connection) is part of each latency",
                    sv.clients,
                    sv.workers,
                    sv.connections
                        .map_or(String::new(), |m| format!(" sharing {m} connections")),
                    sv.clients_behind
                )
            }))
            .collect(),
        });
    }
    out
}
