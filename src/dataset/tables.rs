//! The report's table model: cells that know which way is better, rows, tables, the columns
//! laid out from a dataset, and the time unit each table takes. Every output format renders these.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::model::{Dataset, Group, Place};

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Num(f64),
    /// A count of things (transactions, retries): an integer.
    Count(u64),
    /// A value relative to the base: coloured below 0.95 and above 1.05.
    Ratio(#[serde(serialize_with = "ratio_json")] f64),
    Text(String),
    Missing,
    /// The median of repeated runs with its interval.
    Spread(super::stats::Estimate),
    /// A ratio of repeated runs with its interval: a difference only when it leaves out 1.
    RatioSpread(super::stats::Estimate),
}

pub(crate) fn ratio_json<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.is_finite() {
        s.serialize_f64(*v)
    } else {
        s.serialize_str("inf")
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub group: Option<Group>,
    pub label: String,
    /// A summary row (a group's median).
    pub summary: bool,
    pub cells: Vec<Cell>,
}

/// Which way a figure is better: throughput up, costs (CPU, switches, IO per op) down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    pub fn legend(self) -> &'static str {
        match self {
            Better::Higher => "higher is better",
            Better::Lower => "lower is better",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Table {
    pub id: String,
    pub title: String,
    /// Which way this table's figures are better; None for tables that are no verdict
    /// (scaling, the model's demands).
    pub better: Option<Better>,
    pub columns: Vec<String>,
    /// A second header line under the columns (the server version of each), or empty.
    pub under: Vec<String>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

impl Table {
    /// The heading of the label column: each row is a test, but in the machine table a
    /// property of the machine.
    pub fn label_heading(&self) -> &'static str {
        match self.id.as_str() {
            "machine" | "summary.warnings" | "summary.about" => "",
            "summary.efficiency" => "per event",
            "summary.throughput.relative" => "group",
            _ => "test",
        }
    }
}

/// Milliseconds columns whose figures are all below 1 ms are shown in microseconds, so that a
/// 5 us latency reads `5.40 us`, not `0.0054 ms` (or `0.00`): the unit is chosen per column and
/// said in its heading.
pub fn choose_time_units(t: &mut Table) {
    for i in 0..t.columns.len() {
        let Some(head) = t.columns[i]
            .strip_suffix(" ms")
            .map(str::to_string)
            .or_else(|| t.columns[i].contains(" ms ").then(|| t.columns[i].clone()))
        else {
            continue;
        };
        let values: Vec<f64> = t
            .rows
            .iter()
            .filter_map(|r| match r.cells.get(i) {
                Some(Cell::Num(v)) => Some(*v),
                Some(Cell::Spread(e)) => Some(e.hi),
                _ => None,
            })
            .collect();
        if values.iter().all(|v| *v == 0.0) || values.iter().any(|v| v.abs() >= 1.0) {
            continue;
        }
        t.columns[i] = if t.columns[i].ends_with(" ms") {
            format!("{head} us")
        } else {
            head.replace(" ms ", " us ")
        };
        for r in &mut t.rows {
            match r.cells.get_mut(i) {
                Some(Cell::Num(v)) => *v *= 1000.0,
                Some(Cell::Spread(e)) => {
                    e.value *= 1000.0;
                    e.lo *= 1000.0;
                    e.hi *= 1000.0;
                }
                _ => {}
            }
        }
    }
}

/// A set of columns compared side by side: one client count (or all of them as columns).
#[derive(Clone, Debug)]
pub struct Slice {
    /// "" or " at 4 clients".
    pub suffix: String,
    pub columns: Vec<(String, Vec<Place>)>,
}

/// For each column of `slice`, what `pick` finds in the first results of `test` there that
/// has it (None where no run of the column has it).
pub fn per_column<'a, T: ?Sized>(
    ds: &'a Dataset,
    slice: &Slice,
    test: &str,
    pick: impl Fn(&'a crate::results::Results) -> Option<&'a T>,
) -> Vec<Option<&'a T>> {
    slice
        .columns
        .iter()
        .map(|(_, places)| {
            ds.at(places)
                .filter(|e| e.test == test)
                .filter_map(|e| e.results.as_ref())
                .find_map(&pick)
        })
        .collect()
}

/// How the dataset is laid out: columns are configurations or targets (or inputs), one slice
/// per client count; with one configuration, the client counts are the columns.
pub fn layout(ds: &Dataset) -> Vec<Slice> {
    let (sources, targets, configs) = ds.distinct();
    let clients: BTreeSet<u32> = ds.entries.iter().map(|e| e.place.clients).collect();
    let label = |p: &Place| {
        let mut parts = Vec::new();
        if sources > 1 {
            parts.push(p.source.clone());
        }
        if targets > 1 {
            parts.push(p.target.clone());
        }
        if configs > 1 || parts.is_empty() {
            parts.push(p.config.clone());
        }
        parts.join("/")
    };
    // Columns in the order the inputs gave them.
    let mut order: Vec<&Place> = Vec::new();
    let mut seen: std::collections::HashSet<&Place> = std::collections::HashSet::new();
    for e in &ds.entries {
        if seen.insert(&e.place) {
            order.push(&e.place);
        }
    }
    if sources > 1 || targets > 1 || configs > 1 {
        clients
            .iter()
            .map(|&c| {
                let mut columns: Vec<(String, Vec<Place>)> = Vec::new();
                for p in order.iter().filter(|p| p.clients == c) {
                    columns.push((label(p), vec![(*p).clone()]));
                }
                Slice {
                    suffix: if clients.len() > 1 {
                        format!(" at {c} client(s)")
                    } else {
                        String::new()
                    },
                    columns,
                }
            })
            .collect()
    } else {
        let mut by_clients: Vec<&Place> = order.clone();
        by_clients.sort_by_key(|p| p.clients);
        vec![Slice {
            suffix: String::new(),
            columns: by_clients
                .iter()
                .map(|p| (format!("c{}", p.clients), vec![(*p).clone()]))
                .collect(),
        }]
    }
}

/// The tests in report order: the load first, then the groups, each in plan order.
pub fn tests(ds: &Dataset) -> Vec<(Group, String)> {
    let mut first: BTreeMap<String, (Group, usize)> = BTreeMap::new();
    for e in &ds.entries {
        let slot = first.entry(e.test.clone()).or_insert((e.group, e.order));
        slot.1 = slot.1.min(e.order);
    }
    let mut out: Vec<(Group, usize, String)> =
        first.into_iter().map(|(t, (g, o))| (g, o, t)).collect();
    out.sort();
    out.into_iter().map(|(g, _, t)| (g, t)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_columns_take_microseconds_only_when_every_figure_is_below_a_millisecond() {
        let row = |a: f64, b: f64| Row {
            group: None,
            label: "t".into(),
            summary: false,
            cells: vec![Cell::Num(a), Cell::Num(b), Cell::Num(a)],
        };
        let mut t = Table {
            id: "x".into(),
            title: "x".into(),
            better: None,
            columns: vec!["avg ms".into(), "p95 ms".into(), "tps".into()],
            under: Vec::new(),
            rows: vec![row(0.0054, 0.2), row(0.5, 3.0)],
            notes: Vec::new(),
        };
        choose_time_units(&mut t);
        assert_eq!(t.columns, ["avg us", "p95 ms", "tps"]);
        assert_eq!(t.rows[0].cells[0], Cell::Num(0.0054 * 1000.0));
        assert_eq!(t.rows[1].cells[1], Cell::Num(3.0));
        assert_eq!(t.rows[1].cells[2], Cell::Num(0.5), "not a time column");
    }
}
