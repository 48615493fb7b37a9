//! The one-page summary, `report`'s default view: what a post about a study shows. The
//! machine; per client count the throughput relative to the base by group (the groups'
//! medians, with intervals where the cells were repeated, and the load); the hardware
//! efficiency of each column relative to the base (CPU, context switches, reads and KB read
//! and written per event, each the median over the tests); and every warning of the full
//! report, named. `report --full` gives every table.

use super::absolute::{HW_METRICS, base_index, metric_tables};
use super::model::{Dataset, Group};
use super::tables::{Better, Cell, Row, Table, layout};
use crate::error::Error;

/// The efficiency figures of the summary, by their ids in [`HW_METRICS`].
const EFFICIENCY: [&str; 7] = [
    "cpu_us_per_op.client",
    "cpu_us_per_op.server",
    "cpu_us_per_op.machine",
    "cs_per_o",
    "r_per_o",
    "rkb_per_o",
    "wkb_per_o",
];

/// The summary's tables, from the dataset and the full report's tables (whose warnings it
/// lists).
pub fn tables(ds: &Dataset, full: &[Table], base: Option<&str>) -> Result<Vec<Table>, Error> {
    // A family's lead tables first (pgbench's transactions a second and their latency).
    let mut out: Vec<Table> = full
        .iter()
        .filter(|t| crate::workload::families::leads(&t.id))
        .cloned()
        .collect();
    // A series' answer first: where throughput changed along its builds.
    out.extend(full.iter().filter(|t| t.id == "changes").cloned());
    out.extend(full.iter().filter(|t| t.id == "machine").cloned());
    for slice in layout(ds) {
        let b = base_index(ds, &slice, base)?;
        let (abs, rel) = metric_tables(
            ds,
            &slice,
            b,
            (
                "summary.throughput",
                &super::absolute::throughput_title(),
                Better::Higher,
            ),
            &super::model::Entry::throughput,
            true,
        );
        if slice.columns.len() < 2 {
            // One column has nothing to be relative to: its figures are the summary.
            out.push(abs);
            continue;
        }
        let by_group = by_group(&rel);
        out.push(by_group);
        if let Some(eff) = efficiency(ds, &slice, b, &rel) {
            out.push(eff);
        }
    }
    // A workload family's headline tables (each step in its own unit: sql-bench's seconds
    // per group and the total).
    out.extend(
        full.iter()
            .filter(|t| {
                crate::workload::families::headline(&t.id)
                    // A capacity search's answer and a phased run's phases are the run's point.
                    || t.id.starts_with("capacity-")
                    || t.id.starts_with("phases-")
                    // What bound each step, where the sweep measured the machine's limits.
                    || t.id == "bounds"
            })
            .cloned(),
    );
    out.push(warnings_table(full));
    out.push(Table {
        id: "summary.about".into(),
        title: "About these figures".into(),
        better: None,
        columns: Vec::new(),
        under: Vec::new(),
        rows: Vec::new(),
        notes: vec![
            "An event is one call of the workload: a transaction (a query where the workload runs one query per event, a row of the load). Throughput is in queries/s. report --full gives every table: absolute figures, every test, every efficiency and server counter, scaling and queueing bounds, statements, waits, stability."
                .into(),
        ],
    });
    Ok(out)
}

/// The relative throughput table's group medians (and the load), a group of one test named
/// by its test.
fn by_group(rel: &Table) -> Table {
    let mut by_group = rel.clone();
    by_group.title = format!("{}, by group", rel.title);
    by_group
        .rows
        .retain(|r| r.summary || r.group == Some(Group::Load));
    // A group of one test has its test as its median: name the test.
    for row in &mut by_group.rows {
        if let Some(g) = row.group.filter(|_| row.summary) {
            let members: Vec<&Row> = rel
                .rows
                .iter()
                .filter(|r| !r.summary && r.group == Some(g))
                .collect();
            if let [one] = members.as_slice() {
                row.label = format!("{} ({})", g.title(), one.label);
            }
        }
    }
    by_group
}

/// Efficiency per event relative to column `b`: the median over the tests of each metric's
/// ratio; None when no column but the base has one.
fn efficiency(ds: &Dataset, slice: &super::tables::Slice, b: usize, rel: &Table) -> Option<Table> {
    let mut eff = Table {
        id: "summary.efficiency".into(),
        title: format!(
            "Efficiency per event, relative to {}{} (lower is better): the median over the tests",
            slice.columns[b].0, slice.suffix
        ),
        better: Some(Better::Lower),
        columns: rel.columns.clone(),
        under: rel.under.clone(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    for id in EFFICIENCY {
        let Some((_, title, f)) = HW_METRICS.iter().find(|m| m.0 == id) else {
            continue;
        };
        let (_, rel) = metric_tables(ds, slice, b, (id, title, Better::Lower), f, false);
        let cells: Vec<Cell> = (0..slice.columns.len())
            .map(|i| {
                let ratios: Vec<f64> = rel
                    .rows
                    .iter()
                    .filter(|r| !r.summary)
                    .filter_map(|r| match r.cells.get(i) {
                        Some(Cell::Ratio(v)) => Some(*v),
                        Some(Cell::RatioSpread(e)) => Some(e.value),
                        _ => None,
                    })
                    .collect();
                super::stats::median_of(&ratios).map_or(Cell::Missing, Cell::Ratio)
            })
            .collect();
        let others = cells
            .iter()
            .enumerate()
            .any(|(i, c)| i != b && matches!(c, Cell::Ratio(_)));
        if others {
            eff.rows.push(Row {
                group: None,
                label: (*title).to_string(),
                summary: false,
                cells,
            });
        }
    }
    if eff.rows.is_empty() {
        return None;
    }
    eff.notes.push(
        "each figure: the median over the tests of the column's ratio to the base; - where no base counted enough to divide by (see report --full)"
            .into(),
    );
    Some(eff)
}

/// Every warning of the full report, a line each.
fn warnings_table(full: &[Table]) -> Table {
    let warnings: Vec<Row> = full
        .iter()
        .flat_map(|t| {
            // A warning table without columns is its lines: each is said whole.
            let titled: Vec<String> = match t.title.strip_prefix("Warning: ") {
                Some(w) if t.columns.is_empty() => {
                    t.rows.iter().map(|r| format!("{w}: {}", r.label)).collect()
                }
                Some(w) => vec![format!("{w} ({} row(s))", t.rows.len())],
                None => Vec::new(),
            };
            let noted = t
                .notes
                .iter()
                .filter(|n| n.starts_with("? ") || n.starts_with("Warning"))
                .map(|n| format!("{}: {n}", t.title));
            titled.into_iter().chain(noted).collect::<Vec<_>>()
        })
        .map(|w| Row {
            group: None,
            label: w,
            summary: false,
            cells: Vec::new(),
        })
        .collect();
    Table {
        id: "summary.warnings".into(),
        title: "Warnings".into(),
        better: None,
        columns: Vec::new(),
        under: Vec::new(),
        notes: vec![if warnings.is_empty() {
            "none".into()
        } else {
            "each in full, with its figures, in report --full".into()
        }],
        rows: warnings,
    }
}
