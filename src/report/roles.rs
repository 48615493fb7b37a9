//! What ran beside the measured clients (roles): one table, a row per run of a step that had
//! groups beside it, saying what each group did and whether it kept its rate. Every other
//! table shows the measured group's figures.

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

pub fn tables(ds: &Dataset) -> Vec<Table> {
    let several_sources = ds
        .entries
        .iter()
        .any(|e| e.place.source != ds.entries[0].place.source);
    let rows: Vec<Row> = ds
        .entries
        .iter()
        .filter_map(|e| {
            let r = e.results.as_ref().filter(|r| !r.roles.is_empty())?;
            let p = &e.place;
            let mut label = vec![p.target.clone(), p.config.clone()];
            if several_sources {
                label.insert(0, p.source.clone());
            }
            let repeat = if e.repeat > 1 {
                format!(" r{}", e.repeat)
            } else {
                String::new()
            };
            let beside: Vec<String> = r
                .roles
                .iter()
                .map(|g| {
                    // A family's background load is said in its own units, as its rates are.
                    let (per, unit) = crate::workload::families::per_event(&g.workload, &r.options);
                    let rate = match (g.rate, g.rate_met) {
                        (Some(asked), Some(met)) => format!(
                            " {:.1}{unit}/s of {}{unit}/s{}",
                            g.tps * per,
                            asked * per,
                            if met { "" } else { " NOT KEPT" }
                        ),
                        _ => format!(" {:.1}{unit}/s", g.tps * per),
                    };
                    format!(
                        "{} x{}{rate}, p99 {:.3} ms",
                        g.workload, g.clients, g.latency_ms.p99
                    )
                })
                .collect();
            let all_kept = r.roles.iter().all(|g| g.rate_met != Some(false));
            Some(Row {
                group: Some(e.group),
                label: format!("{} {} c{}{repeat}", e.test, label.join("/"), p.clients),
                summary: false,
                cells: vec![
                    Cell::Text(beside.join("; ")),
                    Cell::Text(if all_kept { "yes" } else { "no" }.into()),
                ],
            })
        })
        .collect();
    if rows.is_empty() {
        return Vec::new();
    }
    vec![Table {
        id: "roles".into(),
        title: "Beside the measured clients: the groups that ran with them".into(),
        better: None,
        columns: ["beside it", "rates kept"].map(String::from).to_vec(),
        under: Vec::new(),
        rows,
        notes: vec![
            "each group's events/s over the measured seconds, against the rate it was asked for (kept: at least 95% of it), and its p99 latency; rates kept: yes is the step as asked, no means the background load fell short and the measured figures are not of the load the step asked for; every other table shows the measured group's figures alone"
                .into(),
        ],
    }]
}
