//! The absolute, relative and efficiency tables of the report: one column per target,
//! configuration or version, one row per test, and the hardware figures per operation.

use std::collections::BTreeSet;

use super::model::{Dataset, Entry, Group, Place};
use super::stats::{median_of, ratio_of};
use super::tables::{Better, Cell, Row, Slice, Table, layout, tests};
use crate::error::Error;
/// A metric of every run of a test in a column: one value, or one per repeat.
pub(crate) fn samples(
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
        Some(given) => {
            // `--server postgres:13` named its target `postgres-13` (and 11.4 `11_4`): the
            // shorthand picks that column too.
            let spelled = given.replacen(':', "-", 1).replace('.', "_");
            let name = if slice.columns.iter().any(|(l, _)| l == given)
                || !slice
                    .columns
                    .iter()
                    .any(|(l, _)| l == &spelled || l.split('/').any(|p| p == spelled))
            {
                given
            } else {
                spelled.as_str()
            };
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
                "--base {}: no such column; the columns are {}",
                base.unwrap_or_default(),
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
pub(crate) fn short_version(v: &str) -> Option<String> {
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
pub(crate) fn oldest_version(ds: &Dataset, slice: &Slice) -> Option<usize> {
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
pub(crate) fn metric_tables(
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
            "value / base; 1 when both are 0, - when only the base is 0 (no ratio without a \
             basis; nor in the group medians); {}: ratios below 0.95 and above 1.05 stand out, \
             coloured green where better and red where worse",
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
                    if r.is_infinite() {
                        // No ratio without a basis: a base of 0 (nothing read from disk, no
                        // IO) says nothing about how much more the other did.
                        return Cell::Missing;
                    }
                    group_ratios[i].push(r);
                    return Cell::Ratio(r);
                }
                match super::stats::ratio(v, &base_values) {
                    Some(e) if !e.value.is_finite() || !e.hi.is_finite() => Cell::Missing,
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
pub(crate) type Metric = (&'static str, &'static str, fn(&Entry) -> Option<f64>);

pub(crate) const HW_METRICS: [Metric; 18] = [
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
pub(crate) fn server_cpu_contradictions(ds: &Dataset, slice: &Slice) -> Vec<String> {
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
pub(crate) type Rate = (
    &'static str,
    &'static str,
    Better,
    fn(&Entry) -> Option<f64>,
);

pub(crate) const SERVER_RATES: [Rate; 5] = [
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
