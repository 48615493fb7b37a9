//! TPC-C's figures per transaction type (count, share, latency against the 90th-percentile
//! limit of clause 5.2.5.3), one table per measured TPC-C step: the run's summary and results
//! file have them, and a report that shows only NOPM hides a type that failed its limit.

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

pub fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for e in &ds.entries {
        let Some(t) = e.results.as_ref().and_then(|r| r.tpcc.as_ref()) else {
            continue;
        };
        let p = &e.place;
        let at = super::checks::place_label(ds, p, false);
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" on {at}")
        };
        out.push(Table {
            id: format!("tpcc-{}-{}-{}-{}-c{}", e.test, p.source, p.target, p.config, p.clients),
            under: Vec::new(),
            title: format!(
                "TPC-C transactions of {}{at} at {} client(s): {} warehouse(s), NOPM {:.0}, limits {}",
                e.test,
                p.clients,
                t.warehouses,
                t.nopm,
                if t.limits_met { "met" } else { "NOT met" }
            ),
            better: None,
            columns: [
                "count", "share %", "retries", "rollbacks", "avg ms", "p90 ms", "p99 ms", "max ms",
                "p90 limit ms", "limit",
            ]
            .map(String::from)
            .to_vec(),
            rows: t
                .transactions
                .iter()
                .map(|x| Row {
                    group: None,
                    label: x.name.clone(),
                    summary: false,
                    cells: vec![
                        Cell::Num(x.count as f64),
                        Cell::Num(x.share_pct),
                        Cell::Num(x.retries as f64),
                        Cell::Num(x.rollbacks as f64),
                        Cell::Num(x.latency_ms.avg),
                        Cell::Num(x.latency_ms.p90),
                        Cell::Num(x.latency_ms.p99),
                        Cell::Num(x.latency_ms.max),
                        Cell::Num(x.limit_p90_ms),
                        Cell::Text(if x.limit_met { "pass" } else { "FAIL" }.into()),
                    ],
                })
                .collect(),
            notes: vec![
                "unaudited: NOPM is committed New-Orders per minute, not tpmC; a type passes when its 90th-percentile response time is within its limit (5 s, Stock-Level 20 s)"
                    .into(),
            ],
        });
    }
    out
}
