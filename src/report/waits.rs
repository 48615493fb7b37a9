//! The top waits of each test and column: what the server's sessions waited on (the share of
//! samples per event, docs/workloads.md's wait profile), so that a row of the throughput table
//! can be explained from the same runs.

use super::model::Dataset;
use super::tables::{Cell, Row, Table, layout, per_column, tests};

/// Events shown per cell.
const TOP: usize = 3;

/// One table per slice that has wait profiles: tests as rows, the slice's columns, each cell
/// the top events with their shares (and, in a column other than the first, how the first
/// column's top event changed there).
pub fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for slice in layout(ds) {
        let mut rows = Vec::new();
        for (group, test) in tests(ds) {
            let profiles = per_column(ds, &slice, &test, |r| {
                r.waits
                    .as_ref()
                    .filter(|w| w.samples > 0 || w.busy_waits.is_some())
            });
            if profiles.iter().all(Option::is_none) {
                continue;
            }
            let base_top = profiles
                .first()
                .copied()
                .flatten()
                .and_then(|w| w.events.first());
            let cells = profiles
                .iter()
                .enumerate()
                .map(|(i, w)| match w {
                    None => Cell::Missing,
                    Some(w) => {
                        let mut text = w.top(TOP);
                        if i > 0
                            && let Some(b) = base_top
                        {
                            let here = w
                                .events
                                .iter()
                                .find(|e| e.event == b.event)
                                .map_or(0.0, |e| e.share);
                            text.push_str(&format!(
                                " ({} {:+.0} pts)",
                                b.event,
                                (here - b.share) * 100.0
                            ));
                        }
                        if let Some(n) = w.row_lock_waits {
                            text.push_str(&format!("; row lock waits {n}"));
                        }
                        if let (Some(n), Some(ms)) = (w.busy_waits, w.busy_ms) {
                            if !text.is_empty() {
                                text.push_str("; ");
                            }
                            text.push_str(&format!("busy waits {n}, {ms:.1} ms"));
                        }
                        Cell::Text(text)
                    }
                })
                .collect();
            rows.push(Row {
                group: Some(group),
                label: test,
                summary: false,
                cells,
            });
        }
        if rows.is_empty() {
            continue;
        }
        out.push(Table {
            id: "waits".into(),
            title: format!(
                "Top waits of the server's sessions{} (share of samples)",
                slice.suffix
            ),
            better: None,
            columns: slice.columns.iter().map(|(l, _)| l.clone()).collect(),
            under: Vec::new(),
            rows,
            notes: vec![format!(
                "sampled from pg_stat_activity (PostgreSQL: Type:event, CPU = active without a wait) or the process list (MariaDB/MySQL: Lock:row lock wait = an InnoDB LOCK WAIT, Client:Sleep = waiting for the client); SQLite: busy waits = statements that found the database locked, counted by its busy handler; the top {TOP} per cell, and in the other columns the change of the first column's top event in percentage points"
            )],
        });
    }
    out
}
