//! Crash-recovery steps (`crash = true`): one table per step name, a row per target,
//! configuration and client count: how long the server took to answer again, and the redo it
//! had to replay (log size x buffer pool size is the classic question).

use super::model::Dataset;
use super::tables::{Better, Cell, Row, Table};

pub fn tables(ds: &Dataset) -> Vec<Table> {
    let mut steps: Vec<&str> = Vec::new();
    for r in &ds.recoveries {
        if !steps.contains(&r.step.as_str()) {
            steps.push(&r.step);
        }
    }
    steps
        .into_iter()
        .map(|step| {
            let mut rows: Vec<Row> = ds
                .recoveries
                .iter()
                .filter(|r| r.step == step)
                .map(|r| {
                    let p = &r.place;
                    let mut label = vec![p.target.clone(), p.config.clone()];
                    if ds.recoveries.iter().any(|o| o.place.source != p.source) {
                        label.insert(0, p.source.clone());
                    }
                    let x = &r.recovery;
                    Row {
                        group: None,
                        label: format!("{} c{}", label.join("/"), p.clients),
                        summary: false,
                        cells: vec![
                            Cell::Num(x.seconds),
                            x.redo_bytes
                                .map_or(Cell::Missing, |b| Cell::Num(b as f64 / 1e6)),
                            Cell::Num(x.crash_after_s),
                            x.recovered_txns
                                .map_or(Cell::Missing, |n| Cell::Text(n.to_string())),
                            match (x.rollback_s, x.rollback_left) {
                                (Some(s), Some(n)) => {
                                    Cell::Text(format!("{s:.2}, {n} stalled"))
                                }
                                (Some(s), None) => Cell::Num(s),
                                (None, _) => Cell::Missing,
                            },
                            Cell::Text(x.checks.clone().unwrap_or_else(|| "-".into())),
                        ],
                    }
                })
                .collect();
            rows.sort_by(|a, b| a.label.cmp(&b.label));
            Table {
                id: format!("recovery-{step}"),
                title: format!(
                    "Crash recovery of {step}: seconds until the server answered again ({})",
                    Better::Lower.legend()
                ),
                better: Some(Better::Lower),
                columns: [
                    "recovery s",
                    "redo MB",
                    "crashed after s",
                    "open txns",
                    "rollback s",
                    "TPC-C checks",
                ]
                    .map(String::from)
                    .to_vec(),
                under: Vec::new(),
                rows,
                notes: vec![
                    "every process of the managed server killed with SIGKILL while the step's clients ran, crashed after s into its measured part; recovery runs from the restart on the same data directory until it accepted a connection and answered SELECT 1; redo = WAL (PostgreSQL) or InnoDB log (MariaDB/MySQL) written since the last checkpoint at the crash; open txns = transactions the crash left open that InnoDB rolled back in the background after the server answered, rollback s = seconds from the answer until the last of them was rolled back (the TPC-C checks run after it; 'N stalled': N were still listed as rolling back with no progress for 10 s, and the time runs to the last progress)"
                        .into(),
                ],
            }
        })
        .collect()
}
