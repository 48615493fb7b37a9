//! The report's tables, built from a dataset: absolute and relative throughput, hardware
//! efficiency, scaling with queueing bounds, stability. Every output format renders these.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::model::{Dataset, Entry, Group, Place};
use super::stats::{median_of, ratio_of};
use crate::error::Error;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Cell {
    Num(f64),
    /// A value relative to the base: coloured below 0.95 and above 1.05.
    Ratio(#[serde(serialize_with = "ratio_json")] f64),
    Text(String),
    Missing,
    /// The median of repeated runs with its interval.
    Spread(super::stats::Estimate),
    /// A ratio of repeated runs with its interval: a difference only when it leaves out 1.
    RatioSpread(super::stats::Estimate),
}

fn ratio_json<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
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
            ds.entries
                .iter()
                .filter(|e| e.test == test && places.contains(&e.place))
                .filter_map(|e| e.results.as_ref())
                .find_map(&pick)
        })
        .collect()
}

/// How the dataset is laid out: columns are configurations or targets (or inputs), one slice
/// per client count; with one configuration, the client counts are the columns.
pub fn layout(ds: &Dataset) -> Vec<Slice> {
    let places: BTreeSet<&Place> = ds.entries.iter().map(|e| &e.place).collect();
    let count = |f: fn(&Place) -> &str| places.iter().map(|p| f(p)).collect::<BTreeSet<_>>().len();
    let (sources, targets, configs) = (
        count(|p| &p.source),
        count(|p| &p.target),
        count(|p| &p.config),
    );
    let clients: BTreeSet<u32> = places.iter().map(|p| p.clients).collect();
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
    for e in &ds.entries {
        if !order.contains(&&e.place) {
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

/// A metric of every run of a test in a column: one value, or one per repeat.
fn samples(
    ds: &Dataset,
    test: &str,
    places: &[Place],
    metric: &dyn Fn(&Entry) -> Option<f64>,
) -> Vec<f64> {
    ds.entries
        .iter()
        .filter(|e| e.test == test && places.contains(&e.place))
        .filter_map(metric)
        .collect()
}

/// Picks the base column: `--base` by its label, else the first.
pub fn base_index(ds: &Dataset, slice: &Slice, base: Option<&str>) -> Result<usize, Error> {
    match base {
        None => Ok(oldest_version(ds, slice).unwrap_or(0)),
        Some(name) => {
            let exact = slice.columns.iter().position(|(l, _)| l == name);
            // Or the one column that has `name` as a part of its label (a source or config).
            let parts: Vec<usize> = (0..slice.columns.len())
                .filter(|&i| slice.columns[i].0.split('/').any(|p| p == name))
                .collect();
            exact.or((parts.len() == 1).then(|| parts[0]))
        }
        .ok_or_else(|| {
            let names: Vec<&str> = slice.columns.iter().map(|(l, _)| l.as_str()).collect();
            Error::Usage(format!(
                "--base {name}: no such column; the columns are {}",
                names.join(", ")
            ))
        }),
    }
}

/// The server version of each column (`13.23`, `11.4.5`), from its results; empty where the
/// columns do not differ in version.
pub fn column_versions(ds: &Dataset, slice: &Slice) -> Vec<String> {
    let versions: Vec<String> = slice
        .columns
        .iter()
        .map(|(_, places)| {
            let mut vs: Vec<String> = ds
                .entries
                .iter()
                .filter(|e| places.contains(&e.place))
                .filter_map(|e| e.results.as_ref())
                .filter_map(|r| short_version(&r.target.version))
                .collect();
            vs.sort();
            vs.dedup();
            vs.join(",")
        })
        .collect();
    let distinct: BTreeSet<&String> = versions.iter().filter(|v| !v.is_empty()).collect();
    if distinct.len() > 1 {
        versions
    } else {
        Vec::new()
    }
}

/// The version number in a server's version string: `PostgreSQL 13.23 on x86_64...` and
/// `11.4.5-MariaDB` give `13.23` and `11.4.5`.
fn short_version(v: &str) -> Option<String> {
    v.split(|c: char| c.is_whitespace() || c == '-')
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()) && w.contains('.'))
        .map(|w| {
            w.chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect::<String>()
                .trim_end_matches('.')
                .to_string()
        })
}

/// The default base where the columns are one server kind at different versions (a version
/// study): the oldest version's column.
fn oldest_version(ds: &Dataset, slice: &Slice) -> Option<usize> {
    let versions = column_versions(ds, slice);
    if versions.is_empty() || versions.iter().any(|v| v.is_empty() || v.contains(',')) {
        return None;
    }
    let kinds: BTreeSet<&str> = ds
        .entries
        .iter()
        .filter_map(|e| e.results.as_ref())
        .map(|r| r.target.kind.as_str())
        .collect();
    if kinds.len() != 1 {
        return None;
    }
    (0..versions.len()).min_by_key(|&i| crate::server::builds::version_key(&versions[i]))
}

/// An absolute table of `metric` and, when `relative`, the ratio table with group medians.
fn metric_tables(
    ds: &Dataset,
    slice: &Slice,
    base: usize,
    (id, title, better): (&str, &str, Better),
    metric: &dyn Fn(&Entry) -> Option<f64>,
    with_load: bool,
) -> (Table, Table) {
    let columns: Vec<String> = slice.columns.iter().map(|(l, _)| l.clone()).collect();
    let under = column_versions(ds, slice);
    let mut abs = Table {
        id: id.to_string(),
        title: format!("{title}{} ({})", slice.suffix, better.legend()),
        better: Some(better),
        columns: columns.clone(),
        under: under.clone(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let mut rel = Table {
        id: format!("{id}.relative"),
        title: format!(
            "{title}, relative to {}{} ({})",
            columns.get(base).map_or("", String::as_str),
            slice.suffix,
            better.legend()
        ),
        better: Some(better),
        columns,
        under,
        rows: Vec::new(),
        notes: vec![format!(
            "value / base; 1 when both are 0, inf when only the base is 0; {}: ratios below 0.95 \
             and above 1.05 stand out, coloured green where better and red where worse",
            better.legend()
        )],
    };
    let mut group_ratios: Vec<Vec<f64>> = vec![Vec::new(); slice.columns.len()];
    let mut repeated = false;
    let mut current: Option<Group> = None;
    let tests = tests(ds);
    let flush = |rel: &mut Table, group: Option<Group>, ratios: &mut Vec<Vec<f64>>| {
        if let Some(g) = group.filter(|g| *g != Group::Load)
            && ratios.iter().any(|r| !r.is_empty())
        {
            rel.rows.push(Row {
                group: Some(g),
                label: format!("median of {}", g.title()),
                summary: true,
                cells: ratios
                    .iter()
                    .map(|r| median_of(r).map_or(Cell::Missing, Cell::Ratio))
                    .collect(),
            });
        }
        ratios.iter_mut().for_each(Vec::clear);
    };
    for (group, test) in &tests {
        if *group == Group::Load && !with_load {
            continue;
        }
        if current != Some(*group) {
            flush(&mut rel, current, &mut group_ratios);
            current = Some(*group);
        }
        let values: Vec<Vec<f64>> = slice
            .columns
            .iter()
            .map(|(_, places)| samples(ds, test, places, metric))
            .collect();
        if values.iter().all(Vec::is_empty) {
            continue;
        }
        if values.iter().any(|v| v.len() > 1) {
            repeated = true;
        }
        abs.rows.push(Row {
            group: Some(*group),
            label: test.clone(),
            summary: false,
            cells: values
                .iter()
                .map(|v| match v.as_slice() {
                    [] => Cell::Missing,
                    [one] => Cell::Num(*one),
                    many => super::stats::median(many).map_or(Cell::Missing, Cell::Spread),
                })
                .collect(),
        });
        let base_values = values.get(base).cloned().unwrap_or_default();
        let cells = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                if v.len() <= 1 && base_values.len() <= 1 {
                    let (Some(v), Some(b)) = (v.first(), base_values.first()) else {
                        return Cell::Missing;
                    };
                    let r = ratio_of(*v, *b);
                    group_ratios[i].push(r);
                    return Cell::Ratio(r);
                }
                match super::stats::ratio(v, &base_values) {
                    Some(e) => {
                        group_ratios[i].push(e.value);
                        Cell::RatioSpread(e)
                    }
                    None => Cell::Missing,
                }
            })
            .collect();
        rel.rows.push(Row {
            group: Some(*group),
            label: test.clone(),
            summary: false,
            cells,
        });
    }
    flush(&mut rel, current, &mut group_ratios);
    if repeated {
        let note = format!(
            "repeated runs: the median [and the interval of order statistics that holds the true median with the confidence it reaches, {:.0}% aimed for; the range of 3 runs has 75%]",
            super::stats::AIM * 100.0
        );
        abs.notes.push(note);
        rel.notes.push(
            "repeated runs: the Hodges-Lehmann ratio (the median of every value / base of the runs) [and its Mann-Whitney interval; 3 runs against 3 give the range of the ratios, 90%]; a ratio whose interval holds 1.00 is no difference and is not coloured"
                .into(),
        );
    }
    (abs, rel)
}

/// The hardware and server-counter metrics, per operation.
type Metric = (&'static str, &'static str, fn(&Entry) -> Option<f64>);

const HW_METRICS: [Metric; 18] = [
    ("cpu_us_per_op.client", "client CPU us/op", |e| {
        e.hw()?.cpu_us_per_op.client
    }),
    ("cpu_us_per_op.server", "server CPU us/op", |e| {
        e.hw()?.cpu_us_per_op.server
    }),
    ("cpu_us_per_op.machine", "machine CPU us/op", |e| {
        e.hw()?.cpu_us_per_op.machine
    }),
    ("cpu_per_o", "cpu/o (machine CPU % / ops per s)", |e| {
        e.hw()?.cpu_per_o
    }),
    ("cs_per_o", "cs/o (context switches / op)", |e| {
        e.hw()?.cs_per_o
    }),
    ("r_per_o", "r/o (device reads / op)", |e| e.hw()?.r_per_o),
    ("rkb_per_o", "rKB/o (KB read / op)", |e| e.hw()?.rkb_per_o),
    ("wkb_per_o", "wKB/o (KB written / op)", |e| {
        e.hw()?.wkb_per_o
    }),
    (
        "server.pages_read_per_op",
        "buffer pool reads/op (pages read by the server)",
        |e| e.results.as_ref()?.server_stats.as_ref()?.pages_read_per_op,
    ),
    ("server.pages_written_per_op", "pages flushed/op", |e| {
        e.results
            .as_ref()?
            .server_stats
            .as_ref()?
            .pages_written_per_op
    }),
    ("server.log_bytes_per_op", "log bytes/op (WAL, redo)", |e| {
        e.results.as_ref()?.server_stats.as_ref()?.log_bytes_per_op
    }),
    (
        "net.rx_kb_per_o",
        "network KB in/op (client's interface)",
        |e| Some(e.hw()?.net.as_ref()?.rx_kb_per_o),
    ),
    (
        "net.tx_kb_per_o",
        "network KB out/op (client's interface)",
        |e| Some(e.hw()?.net.as_ref()?.tx_kb_per_o),
    ),
    (
        "server_host.cpu_us_per_op",
        "server host CPU us/op (node_exporter; host-level)",
        |e| e.results.as_ref()?.server_host.as_ref()?.cpu_us_per_op,
    ),
    (
        "server_host.cs_per_o",
        "server host cs/o (node_exporter)",
        |e| e.results.as_ref()?.server_host.as_ref()?.cs_per_o,
    ),
    (
        "server_host.rkb_per_o",
        "server host rKB/o (node_exporter)",
        |e| e.results.as_ref()?.server_host.as_ref()?.rkb_per_o,
    ),
    (
        "server_host.wkb_per_o",
        "server host wKB/o (node_exporter)",
        |e| e.results.as_ref()?.server_host.as_ref()?.wkb_per_o,
    ),
    (
        "server_host.net_kb_per_o",
        "server host network KB/op, in + out (node_exporter)",
        |e| {
            let n = e.results.as_ref()?.server_host.as_ref()?.net.as_ref()?;
            Some(n.rx_kb_per_o + n.tx_kb_per_o)
        },
    ),
];

/// A managed server's CPU per op that the machine's contradicts: on one machine, what the
/// machine spent beyond the client is mostly the server's, so a server figure below a tenth of
/// it (with that difference above 5 us/op) means the sampler missed some of the server's
/// processes, or that something else ran. The tables keep the figure and say it is suspect.
fn server_cpu_contradictions(ds: &Dataset, slice: &Slice) -> Vec<String> {
    let mut out = Vec::new();
    for (label, places) in &slice.columns {
        for e in ds.entries.iter().filter(|e| places.contains(&e.place)) {
            let Some(c) = e.hw().map(|h| &h.cpu_us_per_op) else {
                continue;
            };
            let (Some(server), Some(client), Some(machine)) = (c.server, c.client, c.machine)
            else {
                continue;
            };
            let others = machine - client;
            if others > 5.0 && server < others / 10.0 {
                out.push(format!(
                    "Warning: {label} {}: server CPU {server:.3} us/op is far below what the machine spent beyond the client ({others:.1} us/op): the sampler missed some of the server's processes, or something else ran on the machine; do not use this figure unchecked",
                    e.test
                ));
            }
        }
    }
    out
}

/// The server's rates that explain a row: what each measures and which way is better.
type Rate = (
    &'static str,
    &'static str,
    Better,
    fn(&Entry) -> Option<f64>,
);

const SERVER_RATES: [Rate; 5] = [
    (
        "server.hit_rate",
        "buffer pool hit rate",
        Better::Higher,
        |e| e.results.as_ref()?.server_stats.as_ref()?.hit_rate,
    ),
    (
        "server.qcache_hit_rate",
        "query cache hit rate (Qcache_hits / (Qcache_hits + Com_select))",
        Better::Higher,
        |e| e.results.as_ref()?.server_stats.as_ref()?.qcache_hit_rate,
    ),
    (
        "server.qcache_insert_rate",
        "query cache insert rate (Qcache_inserts / (Qcache_hits + Com_select))",
        Better::Lower,
        |e| {
            e.results
                .as_ref()?
                .server_stats
                .as_ref()?
                .qcache_insert_rate
        },
    ),
    (
        "server.qcache_prune_rate",
        "query cache prune rate (Qcache_lowmem_prunes / Qcache_inserts)",
        Better::Lower,
        |e| e.results.as_ref()?.server_stats.as_ref()?.qcache_prune_rate,
    ),
    (
        "server.checkpoints",
        "checkpoints during the step",
        Better::Lower,
        |e| e.results.as_ref()?.server_stats.as_ref()?.checkpoints,
    ),
];

/// The intervals of a run that per-second charts and stability figures use: those at least half
/// as long as the run's longest. The last interval of a run is usually a sliver (8.9 ms with 2
/// events, say) whose rate is noise, not a collapse or a spike; it is left out, not scaled.
pub fn full_intervals(r: &crate::results::Results) -> Vec<&crate::results::figures::Interval> {
    let longest = r.intervals.iter().map(|i| i.seconds).fold(0.0, f64::max);
    r.intervals
        .iter()
        .filter(|i| i.seconds >= longest / 2.0)
        .collect()
}

/// Per-second throughput (events/s) of a run's full intervals.
pub fn per_second(e: &Entry) -> Vec<f64> {
    e.results
        .as_ref()
        .map(|r| full_intervals(r).iter().map(|i| i.tps).collect())
        .unwrap_or_default()
}

fn cv(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if mean == 0.0 {
        return None;
    }
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (values.len() - 1) as f64;
    Some(var.sqrt() / mean * 100.0)
}

fn stability_tables(ds: &Dataset, slice: &Slice) -> Vec<Table> {
    let series: [Metric; 3] = [
        (
            "stability.tps_cv",
            "throughput: coefficient of variation of per-second tps, %",
            |e| cv(&per_second(e)),
        ),
        (
            "stability.tps_dip",
            "throughput: deepest dip, worst second vs the mean, %",
            |e| {
                let v = per_second(e);
                let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
                let min = v.iter().copied().fold(f64::INFINITY, f64::min);
                (v.len() >= 2 && mean > 0.0).then(|| (min / mean - 1.0) * 100.0)
            },
        ),
        (
            "stability.p95_cv",
            "latency: coefficient of variation of per-second p95, %",
            |e| {
                let r = e.results.as_ref()?;
                let v: Vec<f64> = r
                    .intervals
                    .iter()
                    .filter(|i| i.seconds >= 0.5)
                    .map(|i| i.p95_ms)
                    .collect();
                cv(&v)
            },
        ),
    ];
    series
        .iter()
        .map(|(id, title, f)| {
            metric_tables(
                ds,
                slice,
                0,
                (id, &format!("Stability, {title}"), Better::Lower),
                f,
                false,
            )
            .0
        })
        .collect()
}

/// The absolute, relative and efficiency tables of the report, in order (scaling and
/// stability follow them: see `report::tables_of`).
pub fn build(ds: &Dataset, base: Option<&str>) -> Result<Vec<Table>, Error> {
    let mut out = Vec::new();
    let slices = layout(ds);
    let bases: Vec<usize> = slices
        .iter()
        .map(|s| base_index(ds, s, base))
        .collect::<Result<_, _>>()?;
    for (slice, &b) in slices.iter().zip(&bases) {
        let (abs, rel) = metric_tables(
            ds,
            slice,
            b,
            (
                "throughput",
                "Throughput (queries/s; rows/s for the load and scans; NOPM for TPC-C)",
                Better::Higher,
            ),
            &Entry::throughput,
            true,
        );
        out.push(abs);
        if slice.columns.len() > 1 {
            out.push(rel);
        }
    }
    for (slice, &b) in slices.iter().zip(&bases) {
        for (id, title, f) in HW_METRICS {
            let (abs, rel) = metric_tables(
                ds,
                slice,
                b,
                (id, &format!("Efficiency, {title}"), Better::Lower),
                &f,
                true,
            );
            if abs.rows.is_empty() {
                continue;
            }
            let mut abs = abs;
            let mut rel = rel;
            if id == "cpu_us_per_op.server" {
                let warnings = server_cpu_contradictions(ds, slice);
                abs.notes.extend(warnings.iter().cloned());
                rel.notes.extend(warnings);
            }
            out.push(abs);
            if slice.columns.len() > 1 {
                out.push(rel);
            }
        }
        for (id, title, better, f) in SERVER_RATES {
            let (abs, _) = metric_tables(
                ds,
                slice,
                b,
                (id, &format!("Server, {title}"), better),
                &f,
                false,
            );
            if !abs.rows.is_empty() {
                out.push(abs);
            }
        }
    }
    Ok(out)
}

/// The stability tables (how steady each run's per-second throughput was), per slice.
pub fn stability(ds: &Dataset) -> Vec<Table> {
    layout(ds)
        .iter()
        .flat_map(|slice| stability_tables(ds, slice))
        .filter(|t| !t.rows.is_empty())
        .collect()
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
