//! Capacity searches (`dbsweep capacity`): a table per search, a row per probe, its rate
//! against its percentile with the limit marked; the answer and the queueing model's bound in
//! the title, and a contradiction of the model said.

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

pub fn tables(ds: &Dataset) -> Vec<Table> {
    ds.entries
        .iter()
        .filter_map(|e| {
            let r = e.results.as_ref()?;
            let c = r.capacity.as_ref()?;
            let p = &e.place;
            let mut probes: Vec<_> = c.probes.iter().collect();
            // By rate, the closed loop last: the limit's crossing reads top to bottom.
            probes.sort_by(|a, b| {
                a.rate_per_s
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&b.rate_per_s.unwrap_or(f64::INFINITY))
            });
            let rows = probes
                .iter()
                .map(|pr| Row {
                    group: Some(e.group),
                    label: pr
                        .rate_per_s
                        .map_or("closed loop".into(), |r| format!("{r:.1}/s")),
                    summary: false,
                    cells: vec![
                        Cell::Num(pr.tps),
                        Cell::Num(pr.percentile_ms),
                        Cell::Text(if pr.percentile_ms <= c.limit_ms {
                            "under".into()
                        } else {
                            "OVER".into()
                        }),
                        Cell::Count(pr.errors),
                        Cell::Text(
                            if pr.rate_per_s.is_some() && pr.rate_per_s == c.rate_per_s {
                                format!("{} <- the answer", pr.verdict)
                            } else {
                                pr.verdict.clone()
                            },
                        ),
                    ],
                })
                .collect();
            let mut notes = vec![format!(
                "each probe's rate asked (open loop; the closed loop is the same clients flat out) against its p{} latency from each event's schedule; the limit is {} ms: under it or OVER; the answer is the highest rate under it that kept its rate without errors; the queueing model's bound is {} ({})",
                c.percentile,
                c.limit_ms,
                c.bound_per_s
                    .map_or("none".into(), |b| format!("{b:.1} events/s")),
                c.bound_from
            )];
            if let Some(x) = &c.contradiction {
                notes.push(format!("MODEL ERROR: {x}"));
            }
            Some(Table {
                id: format!("capacity-{}-{}-{}-c{}", e.test, p.target, p.config, p.clients),
                title: format!(
                    "Capacity of {} on {}/{} under p{} <= {} ms: {} (higher is better)",
                    e.test,
                    p.target,
                    p.config,
                    c.percentile,
                    c.limit_ms,
                    c.rate_per_s
                        .map_or("no rate probed kept it".into(), |r| format!("{r:.1} events/s"))
                ),
                better: None,
                columns: [
                    "done /s",
                    &format!("p{} ms", c.percentile),
                    "limit",
                    "errors",
                    "verdict",
                ]
                .map(String::from)
                .to_vec(),
                under: Vec::new(),
                rows,
                notes,
            })
        })
        .collect()
}
