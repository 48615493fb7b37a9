//! The absolute, relative and efficiency tables of the report: one column per target,
//! configuration or version, one row per test, and the hardware figures per operation.

use std::collections::BTreeSet;

use super::model::{Dataset, Entry, Group, Place};
use super::stats::{Estimate, median_of, ratio_of};
use super::tables::{Better, Cell, Row, Slice, Table, layout, tests};
pub use crate::dataset::columns::{base_index, column_versions};
use crate::error::Error;
/// The least a base must have counted over its step for a ratio to it to mean something, by
/// metric: its figure times its operations (events, or a load's rows), and what that counts.
/// CPU time is read in clock ticks of 10 ms, so a base below 20 ticks moves by more than 5%
/// with one tick; counts of reads, pages, switches and bytes below these floors are background
/// noise (a journal commit, a sampler's own reads) rather than the workload's.
pub(crate) fn floor_of(id: &str) -> Option<(f64, &'static str)> {
    Some(match id {
        // cpu/o is the machine's CPU per op in other units: its floor is the machine's.
        "cpu_us_per_op.client" | "cpu_us_per_op.server" | "cpu_us_per_op.machine" | "cpu_per_o" => {
            (200_000.0, "0.2 s of CPU (20 clock ticks)")
        }
        "server_host.cpu_us_per_op" => (200_000.0, "0.2 s of CPU (20 clock ticks)"),
        "cs_per_o" | "server_host.cs_per_o" => (100.0, "100 context switches"),
        "r_per_o" => (100.0, "100 device reads"),
        "rkb_per_o" | "wkb_per_o" | "server_host.rkb_per_o" | "server_host.wkb_per_o" => {
            (1024.0, "1 MB of device IO")
        }
        "server.pages_read_per_op" => (100.0, "100 pages read"),
        "server.pages_written_per_op" => (100.0, "100 pages flushed"),
        "server.log_bytes_per_op" => (65_536.0, "64 KB of log"),
        "net.rx_kb_per_o" | "net.tx_kb_per_o" | "server_host.net_kb_per_o" => {
            (64.0, "64 KB of network traffic")
        }
        _ => return None,
    })
}

/// Why an entry's figure of metric `id` is not to be used (the report's own check found it
/// contradicted), or None.
pub(crate) fn flag_of(id: &str, e: &Entry) -> Option<String> {
    if id != "cpu_us_per_op.server" {
        return None;
    }
    let c = &e.hw()?.cpu_us_per_op;
    let (server, client, machine) = (c.server?, c.client?, c.machine?);
    let others = machine - client;
    (others > 5.0 && server < others / 10.0).then(|| {
        format!(
            "server CPU {server:.3} us/op is far below what the machine spent beyond the client ({others:.1} us/op)"
        )
    })
}

/// One run of a test in a column: which repeat, its figure, why it is flagged, and whether it
/// counted enough to be a base (see [`floor_of`]).
pub(crate) struct Sample {
    pub repeat: u32,
    pub value: f64,
    pub flag: Option<String>,
    pub above_floor: bool,
    /// Measured on a busy machine.
    pub busy: bool,
}

pub(crate) fn samples_of(
    ds: &Dataset,
    id: &str,
    test: &str,
    places: &[Place],
    metric: &dyn Fn(&Entry) -> Option<f64>,
) -> Vec<Sample> {
    let floor = floor_of(id);
    ds.at(places)
        .filter(|e| e.test == test)
        .filter_map(|e| {
            let value = metric(e)?;
            let counted = if id == "cpu_per_o" {
                e.hw().and_then(|h| h.cpu_us_per_op.machine)
            } else {
                Some(value)
            };
            let above_floor = match (floor, e.ops(), counted) {
                (Some((least, _)), Some(ops), Some(v)) => v * ops >= least,
                _ => true,
            };
            Some(Sample {
                repeat: e.repeat,
                value,
                flag: flag_of(id, e),
                above_floor,
                busy: e
                    .hw()
                    .and_then(|h| h.beside.as_ref())
                    .is_some_and(|b| b.busy),
            })
        })
        .collect()
}

/// The relative cell of one column against the base, and the per-repeat ratios it adds to its
/// group's median (repeat number, ratio).
pub(crate) fn ratio_cell(v: &[Sample], base: &[Sample]) -> (Cell, Vec<(u32, f64)>) {
    let usable = |s: &[Sample]| -> Vec<f64> {
        s.iter()
            .filter(|x| x.flag.is_none())
            .map(|x| x.value)
            .collect()
    };
    let (vals, bases) = (usable(v), usable(base));
    if v.is_empty() || base.is_empty() {
        return (Cell::Missing, Vec::new());
    }
    if vals.is_empty() || bases.is_empty() {
        return (Cell::Text("?".into()), Vec::new());
    }
    // No ratio without a basis: a base that counted too little (nothing read from disk, a
    // few ticks of CPU) says nothing about how much more the other did.
    let below: usize = base.iter().filter(|x| !x.above_floor).count();
    if below * 2 >= base.len() || bases.iter().all(|b| *b == 0.0) {
        return (Cell::Missing, Vec::new());
    }
    // Runs paired by repeat: run k of this column against run k of the base, which ran in
    // the same round of the sweep.
    let paired: Vec<(u32, f64)> = v
        .iter()
        .filter(|x| x.flag.is_none())
        .filter_map(|x| {
            let b = base
                .iter()
                .find(|b| b.repeat == x.repeat && b.flag.is_none() && b.value > 0.0)?;
            Some((x.repeat, x.value / b.value))
        })
        .collect();
    if vals.len() <= 1 && bases.len() <= 1 {
        let r = ratio_of(vals[0], bases[0]);
        if !r.is_finite() {
            return (Cell::Missing, Vec::new());
        }
        return (Cell::Ratio(r), vec![(0, r)]);
    }
    let busy = v.iter().chain(base).any(|x| x.busy);
    match super::stats::ratio(&vals, &bases) {
        Some(e) if e.value.is_finite() && e.hi.is_finite() => {
            (Cell::RatioSpread(Estimate { busy, ..e }), paired)
        }
        _ => (Cell::Missing, Vec::new()),
    }
}

/// A group's median ratio of a column: of single runs, a plain median (no interval, no
/// colour); of repeated runs, the median over the group's tests taken per repeat, and the
/// median of those with its interval of order statistics.
fn group_median(ratios: &[(u32, f64)]) -> Cell {
    if ratios.is_empty() {
        return Cell::Missing;
    }
    let repeats: BTreeSet<u32> = ratios.iter().map(|r| r.0).collect();
    if repeats.len() <= 1 {
        let v: Vec<f64> = ratios.iter().map(|r| r.1).collect();
        return median_of(&v).map_or(Cell::Missing, Cell::Ratio);
    }
    let per_repeat: Vec<f64> = repeats
        .iter()
        .filter_map(|k| {
            let v: Vec<f64> = ratios.iter().filter(|r| r.0 == *k).map(|r| r.1).collect();
            median_of(&v)
        })
        .collect();
    super::stats::median(&per_repeat).map_or(Cell::Missing, Cell::RatioSpread)
}

/// An absolute table of `metric` and, when `relative`, the ratio table with group medians.
/// A flagged figure shows as `?` and enters no ratio or median; a base below its floor
/// ([`floor_of`]) gives no ratio (`-`); only ratios of repeated runs whose interval leaves
/// out 1.00 are differences (coloured).
/// The throughput tables' title: each figure's unit, the families' own among them.
pub(crate) fn throughput_title() -> String {
    let mut units = vec![
        "queries/s",
        "rows/s for the load and scans",
        "NOPM for TPC-C",
        "operations/s for LinkBench",
        "transactions/s for pgbench",
    ];
    units.extend(crate::workload::families::throughput_units());
    format!("Throughput ({})", units.join("; "))
}

pub(crate) fn metric_tables(
    ds: &Dataset,
    slice: &Slice,
    base: usize,
    (id, title, better): (&str, &str, Better),
    metric: &dyn Fn(&Entry) -> Option<f64>,
    with_load: bool,
) -> (Table, Table) {
    let (mut abs, mut rel) = empty_pair(ds, slice, base, (id, title, better));
    let mut group_ratios: Vec<Vec<(u32, f64)>> = vec![Vec::new(); slice.columns.len()];
    // Whether a ratio of the group's so far stands on a run of a busy machine, per column.
    let mut group_busy = vec![false; slice.columns.len()];
    let mut repeated = false;
    let mut flags: Vec<String> = Vec::new();
    let mut current: Option<Group> = None;
    let tests = tests(ds);
    let flush = |rel: &mut Table,
                 group: Option<Group>,
                 ratios: &mut Vec<Vec<(u32, f64)>>,
                 busy: &mut Vec<bool>| {
        if let Some(g) = group.filter(|g| *g != Group::Load)
            && ratios.iter().any(|r| !r.is_empty())
        {
            rel.rows.push(Row {
                group: Some(g),
                label: format!("median of {}", g.title()),
                summary: true,
                cells: ratios
                    .iter()
                    .zip(busy.iter())
                    .map(|(r, &b)| match group_median(r) {
                        Cell::RatioSpread(e) => Cell::RatioSpread(Estimate { busy: b, ..e }),
                        other => other,
                    })
                    .collect(),
            });
        }
        ratios.iter_mut().for_each(Vec::clear);
        busy.iter_mut().for_each(|b| *b = false);
    };
    for (group, test) in &tests {
        if *group == Group::Load && !with_load {
            continue;
        }
        if current != Some(*group) {
            flush(&mut rel, current, &mut group_ratios, &mut group_busy);
            current = Some(*group);
        }
        let values: Vec<Vec<Sample>> = slice
            .columns
            .iter()
            .map(|(_, places)| samples_of(ds, id, test, places, metric))
            .collect();
        if values.iter().all(Vec::is_empty) {
            continue;
        }
        if values.iter().any(|v| v.len() > 1) {
            repeated = true;
        }
        for ((label, _), v) in slice.columns.iter().zip(&values) {
            for s in v.iter().filter_map(|s| s.flag.as_ref()) {
                flags.push(format!("? {label} {test}: {s}"));
            }
        }
        abs.rows.push(Row {
            group: Some(*group),
            label: test.clone(),
            summary: false,
            cells: values.iter().map(|v| absolute_cell(v)).collect(),
        });
        let empty = Vec::new();
        let base_values = values.get(base).unwrap_or(&empty);
        let cells = values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let (cell, ratios) = ratio_cell(v, base_values);
                if !ratios.is_empty() && v.iter().chain(base_values).any(|x| x.busy) {
                    group_busy[i] = true;
                }
                group_ratios[i].extend(ratios);
                cell
            })
            .collect();
        rel.rows.push(Row {
            group: Some(*group),
            label: test.clone(),
            summary: false,
            cells,
        });
    }
    flush(&mut rel, current, &mut group_ratios, &mut group_busy);
    add_notes(&mut abs, &mut rel, &flags, repeated, better);
    (abs, rel)
}

/// The absolute table and the relative one of a metric, without rows.
fn empty_pair(
    ds: &Dataset,
    slice: &Slice,
    base: usize,
    (id, title, better): (&str, &str, Better),
) -> (Table, Table) {
    let columns: Vec<String> = slice.columns.iter().map(|(l, _)| l.clone()).collect();
    let under = column_versions(ds, slice);
    let abs = Table {
        id: id.to_string(),
        title: format!("{title}{} ({})", slice.suffix, better.legend()),
        better: Some(better),
        columns: columns.clone(),
        under: under.clone(),
        rows: Vec::new(),
        notes: Vec::new(),
    };
    let rel = Table {
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
        notes: vec![match floor_of(id) {
            Some((_, what)) => format!(
                "value / base; - where the base counted less than {what} over its step (no ratio without a basis; nor in the group medians)"
            ),
            None => "value / base; - where the base is 0 (no ratio without a basis; nor in the group medians)".into(),
        }],
    };
    (abs, rel)
}

/// A test's figure in one column: the median of its runs, `?` when the report's checks
/// contradict every one of them.
fn absolute_cell(v: &[Sample]) -> Cell {
    let good: Vec<f64> = v
        .iter()
        .filter(|s| s.flag.is_none())
        .map(|s| s.value)
        .collect();
    match (v.is_empty(), good.as_slice()) {
        (true, _) => Cell::Missing,
        (false, []) => Cell::Text("?".into()),
        (false, [one]) => Cell::Num(*one),
        (false, many) => super::stats::median(many).map_or(Cell::Missing, Cell::Spread),
    }
}

/// The notes of both tables: contradicted figures, and how repeated (or single) runs read.
fn add_notes(abs: &mut Table, rel: &mut Table, flags: &[String], repeated: bool, better: Better) {
    if !flags.is_empty() {
        let note = format!(
            "? a figure the report's own checks contradict: shown as ?, in no ratio or median; do not use it unchecked. {}",
            flags.join("; ")
        );
        abs.notes.push(note.clone());
        rel.notes.push(note);
    }
    if repeated {
        let note = format!(
            "repeated runs: the median [and the interval of order statistics that holds the true median with the confidence it reaches, {:.0}% aimed for; the range of 3 runs has 75%]",
            super::stats::AIM * 100.0
        );
        abs.notes.push(note);
        rel.notes.push(format!(
            "repeated runs: the Hodges-Lehmann ratio (the median of every value / base of the runs) [and its Mann-Whitney interval; 3 runs against 3 give the range of the ratios, 90%]; a group's median is the median over its tests taken run by run, with its interval; only a ratio whose interval leaves out 1.00 is a difference, coloured green where better and red where worse ({})",
            better.legend()
        ));
    } else {
        rel.notes.push(
            "single runs: no ratio is coloured, since one run a side cannot tell a difference from run-to-run noise; repeat the cells (repeat = 3 in the plan, or --repeat 3) for intervals, and a ratio whose interval leaves out 1.00 is coloured"
                .into(),
        );
    }
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

/// The server's rates that explain a row: what each measures and which way is better.
pub(crate) type Rate = (
    &'static str,
    &'static str,
    Better,
    fn(&Entry) -> Option<f64>,
);

pub(crate) const SERVER_RATES: [Rate; 6] = [
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
    (
        "server.db_size_mb",
        "database size at the step's end, MB",
        Better::Lower,
        |e| e.results.as_ref()?.server_stats.as_ref()?.db_size_mb,
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
            ("throughput", &throughput_title(), Better::Higher),
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
            let ratios = rel.rows.iter().flat_map(|r| r.cells.iter().enumerate());
            let any_ratio = ratios
                .filter(|(i, _)| *i != b)
                .any(|(_, c)| matches!(c, Cell::Ratio(_) | Cell::RatioSpread(_)));
            if slice.columns.len() > 1 && !any_ratio {
                // A table of dashes says nothing: say why there is none instead.
                abs.notes.push(match floor_of(id) {
                    Some((_, what)) => format!(
                        "no relative table: no figure of the base column counted {what} over its step, the least a ratio needs"
                    ),
                    None => "no relative table: the base column's figures are 0".into(),
                });
            }
            out.push(abs);
            if slice.columns.len() > 1 && any_ratio {
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
