//! Runs whose load changed over time (`--phases`): a table per run, a row per phase, the load
//! it asked for beside what it did. A phase that did not keep its rate says so.

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

/// The share of its asked rate a phase must reach to have kept it.
const KEPT: f64 = 0.95;

pub fn tables(ds: &Dataset) -> Vec<Table> {
    ds.entries
        .iter()
        .filter_map(|e| {
            let r = e.results.as_ref().filter(|r| !r.phases.is_empty())?;
            let p = &e.place;
            let repeat = if e.repeat > 1 {
                format!(" r{}", e.repeat)
            } else {
                String::new()
            };
            let rows = r
                .phases
                .iter()
                .enumerate()
                .map(|(i, ph)| Row {
                    group: Some(e.group),
                    label: format!("{}. {}", i + 1, ph.phase),
                    summary: false,
                    cells: vec![
                        ph.target_per_s.map_or(Cell::Missing, Cell::Num),
                        Cell::Num(ph.tps),
                        Cell::Num(ph.latency_ms.p95),
                        Cell::Num(ph.latency_ms.p99),
                        Cell::Count(ph.errors + ph.failed),
                        Cell::Text(match ph.target_per_s {
                            Some(t) if ph.tps < t * KEPT => "NO".into(),
                            Some(_) => "yes".into(),
                            None => String::new(),
                        }),
                    ],
                })
                .collect();
            Some(Table {
                id: format!(
                    "phases-{}-{}-{}-{}-c{}{}",
                    e.test,
                    p.source,
                    p.target,
                    p.config,
                    p.clients,
                    repeat.trim()
                ),
                title: format!(
                    "Phases of {} on {}/{} at {} client(s){repeat}",
                    e.test, p.target, p.config, p.clients
                ),
                better: None,
                columns: ["asked /s", "events/s", "p95 ms", "p99 ms", "errors", "rate kept"]
                    .map(String::from)
                    .to_vec(),
                under: Vec::new(),
                rows,
                notes: vec![format!(
                    "each phase's events (an event counts in the phase it ended in): events/s higher is better, latencies lower; rate kept: at least {:.0}% of the rate the phase asked for (open loop), NO means the server or the client could not keep the load",
                    KEPT * 100.0
                )],
            })
        })
        .collect()
}
