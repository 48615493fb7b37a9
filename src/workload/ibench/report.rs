//! The Insert Benchmark's summary as its own pages show it: a row per step in the step's unit
//! (inserts/s for l.i0, l.i1 and l.i2; indexed rows/s for l.x; queries/s for qr* and qp*), a
//! column per target and configuration, and a step whose background load did not keep its rate
//! marked (the original greys it); a warning lists every rate not kept.

use crate::dataset::model::{Dataset, Entry, place_label};
use crate::dataset::tables::{Better, Cell, Row, Table};

/// The unit of an Insert Benchmark step and its figure; None for other steps.
fn figure(e: &Entry) -> Option<(&'static str, f64)> {
    if let Some(rows_s) = e.load_rows_per_s {
        // The plan's one load, l.i0: its rows inserted 100 per statement.
        return Some(("inserts/s", rows_s));
    }
    let r = e.results.as_ref()?;
    let rows_per_commit = r.options["rows_per_commit"]
        .as_f64()
        .unwrap_or(1.0)
        .max(1.0);
    match r.workload.as_str() {
        "ibench_insert" => Some(("inserts/s", r.tps * rows_per_commit)),
        "ibench_index" => {
            let rows = r.options["table_size"].as_f64()?;
            let secs = r.latency_ms.avg / 1000.0;
            (secs > 0.0).then(|| ("indexed rows/s", rows / secs))
        }
        "ibench_range" | "ibench_point" => Some(("queries/s", r.tps)),
        _ => None,
    }
}

/// The background groups of a step that did not keep their rate, in rows/s: "ibench_insert
/// 80 rows/s of 100".
fn not_kept(e: &Entry) -> Vec<String> {
    let Some(r) = e.results.as_ref() else {
        return Vec::new();
    };
    r.roles
        .iter()
        .filter(|g| g.rate_met == Some(false))
        .map(|g| {
            let (per_row, _) = crate::workload::families::per_event(&g.workload, &r.options);
            format!(
                "{} {:.0} rows/s of {:.0}",
                g.workload,
                g.tps * per_row,
                g.rate.unwrap_or(0.0) * per_row
            )
        })
        .collect()
}

pub(super) fn tables(ds: &Dataset) -> Vec<Table> {
    let is_ibench = |e: &Entry| {
        e.results
            .as_ref()
            .is_some_and(|r| r.workload.starts_with("ibench_"))
    };
    let sources: std::collections::BTreeSet<&str> = ds
        .entries
        .iter()
        .filter(|e| is_ibench(e))
        .map(|e| e.place.source.as_str())
        .collect();
    if sources.is_empty() {
        return Vec::new();
    }
    // Columns: every place of the Insert Benchmark's steps, in the dataset's order.
    let mut columns: Vec<String> = Vec::new();
    let mut rows: Vec<(String, &'static str)> = Vec::new();
    let mut values: std::collections::BTreeMap<(String, String), (Vec<f64>, bool)> =
        Default::default();
    let mut warnings = Vec::new();
    let mut entries: Vec<&Entry> = ds
        .entries
        .iter()
        .filter(|e| sources.contains(e.place.source.as_str()))
        .collect();
    entries.sort_by_key(|e| e.order);
    for e in entries {
        let Some((unit, v)) = figure(e) else {
            continue;
        };
        let mut col = place_label(ds, &e.place, false);
        if col.is_empty() {
            col = e.place.target.clone();
        }
        let col = format!("{col} c{}", e.place.clients);
        if !columns.contains(&col) {
            columns.push(col.clone());
        }
        if !rows.iter().any(|(t, _)| *t == e.test) {
            rows.push((e.test.clone(), unit));
        }
        let missed = not_kept(e);
        for m in &missed {
            warnings.push(format!("{} ({col}): {m}", e.test));
        }
        let cell = values.entry((e.test.clone(), col)).or_default();
        cell.0.push(v);
        cell.1 |= !missed.is_empty();
    }
    let table_rows = rows
        .iter()
        .map(|(test, unit)| Row {
            group: None,
            label: format!("{test} ({unit})"),
            summary: false,
            cells: columns
                .iter()
                .map(|c| match values.get(&(test.clone(), c.clone())) {
                    None => Cell::Missing,
                    Some((v, missed)) => {
                        let m = crate::dataset::stats::median_of(v).unwrap_or(0.0);
                        if *missed {
                            Cell::Text(format!("{m:.0} (rate not kept)"))
                        } else {
                            Cell::Num(m)
                        }
                    }
                })
                .collect(),
        })
        .collect();
    let mut out = vec![Table {
        id: "ibench.summary".into(),
        title: "Insert Benchmark: each step in its own unit (higher is better)".into(),
        better: Some(Better::Higher),
        columns,
        under: Vec::new(),
        rows: table_rows,
        notes: vec![
            "l.i0, l.i1, l.i2: rows inserted a second; l.x: the table's rows over the seconds the \
             three indexes took; qr*, qp*: queries a second of the one query client (10 rows \
             each); (rate not kept): the background inserts or deletes fell short of their rate \
             (less than 95%), so the step did not run the load it names"
                .into(),
        ],
    }];
    if !warnings.is_empty() {
        out.push(Table {
            id: "ibench.rates-not-kept".into(),
            title: "Warning: Insert Benchmark steps whose background load did not keep its rate"
                .into(),
            better: None,
            columns: Vec::new(),
            under: Vec::new(),
            rows: warnings
                .into_iter()
                .map(|w| Row {
                    group: None,
                    label: w,
                    summary: false,
                    cells: Vec::new(),
                })
                .collect(),
            notes: Vec::new(),
        });
    }
    out
}
