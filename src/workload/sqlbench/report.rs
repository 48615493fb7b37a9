//! The sql-bench suite's tables, in the form its users publish: seconds per test and per group
//! with the suite's total as the headline (lower is better), one column per version or
//! configuration, and the same relative to the base column.

use crate::dataset::columns::base_index;
use crate::dataset::model::Dataset;
use crate::dataset::tables::{Better, Cell, Row, Table, layout, per_column, tests};
use crate::error::Error;
use crate::results::StatementFigures;

/// One row: its label, whether it sums others, and its seconds per column.
type Line = (String, bool, Vec<Option<f64>>);

pub(super) fn tables(ds: &Dataset, base: Option<&str>) -> Result<Vec<Table>, Error> {
    let mut out = Vec::new();
    for slice in layout(ds) {
        let mut lines: Vec<Line> = Vec::new();
        let mut total: Vec<Option<f64>> = vec![Some(0.0); slice.columns.len()];
        for (_, test) in tests(ds) {
            let figures = per_column(ds, &slice, &test, |r| {
                Some(&r.statements).filter(|s| super::suite::is_group(&r.workload) && !s.is_empty())
            });
            if figures.iter().all(Option::is_none) {
                continue;
            }
            let mut names: Vec<&str> = Vec::new();
            for x in figures.iter().flatten().flat_map(|f| f.iter()) {
                if !names.contains(&x.name.as_str()) {
                    names.push(&x.name);
                }
            }
            // A test's time is all its timings' (big-tables times two loops under each name, as
            // the original's summary adds them).
            let seconds = |f: &Option<&Vec<StatementFigures>>, name: &str| {
                f.and_then(|f| f.iter().find(|x| x.name == name))
                    .map(|x| x.latency_ms.avg * x.count as f64 / 1000.0)
            };
            let group: Vec<Option<f64>> = figures
                .iter()
                .map(|f| {
                    f.map(|f| {
                        f.iter()
                            .map(|x| x.latency_ms.avg * x.count as f64 / 1000.0)
                            .sum::<f64>()
                    })
                })
                .collect();
            lines.push((format!("{test} (group)"), true, group.clone()));
            for name in names {
                let cells = figures.iter().map(|f| seconds(f, name)).collect();
                lines.push((format!("{test}: {name}"), false, cells));
            }
            for (t, g) in total.iter_mut().zip(&group) {
                // A column without one of the groups has no total to compare.
                *t = t.zip(*g).map(|(a, b)| a + b);
            }
        }
        if lines.is_empty() {
            continue;
        }
        lines.insert(0, ("total".into(), true, total));
        let columns: Vec<String> = slice
            .columns
            .iter()
            .map(|(l, _)| format!("{l} s"))
            .collect();
        let row = |(label, summary, cells): &Line, cell: &dyn Fn(usize, Option<f64>) -> Cell| Row {
            group: None,
            label: label.clone(),
            summary: *summary,
            cells: cells.iter().enumerate().map(|(i, v)| cell(i, *v)).collect(),
        };
        let note = "each test timed whole on one client, as sql-bench; a group's time is its tests' sum, the total the groups' (missing where a column lacks a group)";
        out.push(Table {
            id: format!("sqlbench{}", slice.suffix.replace(' ', "-")),
            title: format!(
                "sql-bench: seconds per test{} ({})",
                slice.suffix,
                Better::Lower.legend()
            ),
            better: Some(Better::Lower),
            columns: columns.clone(),
            under: Vec::new(),
            rows: lines
                .iter()
                .map(|l| row(l, &|_, v| v.map_or(Cell::Missing, Cell::Num)))
                .collect(),
            notes: vec![note.into()],
        });
        if slice.columns.len() < 2 {
            continue;
        }
        let b = base_index(ds, &slice, base)?;
        out.push(Table {
            id: format!("sqlbench{}.relative", slice.suffix.replace(' ', "-")),
            title: format!(
                "sql-bench: seconds relative to {}{} ({})",
                slice.columns[b].0,
                slice.suffix,
                Better::Lower.legend()
            ),
            better: Some(Better::Lower),
            columns: slice.columns.iter().map(|(l, _)| l.clone()).collect(),
            under: Vec::new(),
            rows: lines
                .iter()
                .map(|l| {
                    let basis = l.2[b];
                    row(l, &|_, v| match (v, basis) {
                        (Some(v), Some(basis)) if basis > 0.0 => Cell::Ratio(v / basis),
                        _ => Cell::Missing,
                    })
                })
                .collect(),
            notes: vec![format!(
                "seconds / the base's ({}); below 1.00 is faster than the base",
                slice.columns[b].0
            )],
        });
    }
    Ok(out)
}
