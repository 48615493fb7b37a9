//! The autopsy of a change along a series: before and after it, side by side, every figure per
//! operation the runs have, the waits and the functions on CPU that moved, and the builds'
//! versions and settings that differ (a default that changed is a likely cause).

use super::absolute::HW_METRICS;
use super::model::{Dataset, Entry};
use super::stats::{median_of, ratio_of};
use super::tables::{Cell, Row, Table};

/// The events of a side, most first: each run's list from `of` (`event -> weight`) summed over
/// the side's runs and divided by the sum of all weights (`Whole`: the lists are complete
/// counts), or by the runs (`Mean`: each list holds shares of its own run, its top only); empty
/// when no run has the list.
fn pooled(
    side: &[&Entry],
    of: impl Fn(&crate::results::Results) -> Option<Vec<(String, f64)>>,
    by: Pool,
) -> Vec<(String, f64)> {
    let mut sum: std::collections::BTreeMap<String, f64> = std::collections::BTreeMap::new();
    let mut runs = 0usize;
    for list in side.iter().filter_map(|e| of(e.results.as_ref()?)) {
        runs += 1;
        for (event, w) in list {
            *sum.entry(event).or_default() += w;
        }
    }
    let total: f64 = match by {
        Pool::Whole => sum.values().sum(),
        Pool::Mean => runs as f64,
    };
    if total <= 0.0 {
        return Vec::new();
    }
    let mut out: Vec<(String, f64)> = sum.into_iter().map(|(k, v)| (k, v / total)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    out
}

#[derive(Clone, Copy)]
enum Pool {
    Whole,
    Mean,
}

/// Events shown per side in an autopsy's waits and functions.
const AUTOPSY_TOP: usize = 5;

/// The rows of the events among either side's top [`AUTOPSY_TOP`]: their shares before and
/// after in percent, and the move in points (the largest moves first).
fn shares_moved(what: &str, before: &[(String, f64)], after: &[(String, f64)]) -> Vec<Row> {
    if before.is_empty() || after.is_empty() {
        return Vec::new();
    }
    let share = |side: &[(String, f64)], k: &str| {
        side.iter().find(|(e, _)| e == k).map_or(0.0, |(_, s)| *s)
    };
    let mut keys: Vec<&str> = before
        .iter()
        .take(AUTOPSY_TOP)
        .chain(after.iter().take(AUTOPSY_TOP))
        .map(|(k, _)| k.as_str())
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut moved: Vec<(&str, f64, f64)> = keys
        .into_iter()
        .map(|k| (k, share(before, k), share(after, k)))
        .collect();
    moved.sort_by(|a, b| {
        (b.2 - b.1)
            .abs()
            .total_cmp(&(a.2 - a.1).abs())
            .then_with(|| a.0.cmp(b.0))
    });
    moved
        .into_iter()
        .map(|(k, b, a)| Row {
            group: None,
            label: format!("{what}: {k} (% of samples)"),
            summary: false,
            cells: vec![
                Cell::Num(b * 100.0),
                Cell::Num(a * 100.0),
                Cell::Text(format!("{:+.1} pts", (a - b) * 100.0)),
            ],
        })
        .collect()
}

/// Whether setting `k` is one every server instance has its own of (its port, socket, data
/// and file paths), which differ between any two runs and explain nothing.
fn per_instance(
    k: &str,
    b: &std::collections::BTreeMap<String, String>,
    a: &std::collections::BTreeMap<String, String>,
) -> bool {
    const OWN: [&str; 4] = ["port", "socket", "unix_socket_directories", "server_id"];
    let path = |m: &std::collections::BTreeMap<String, String>| {
        m.get(k).is_some_and(|v| v.starts_with('/'))
    };
    OWN.contains(&k) || (path(b) && path(a))
}

/// The autopsy's largest moves as ` [moved most: wKB/o 0.04x, cs/o 0.69x, IO:WALSync -65.8
/// pts]`: the two figures per operation whose ratio is furthest from 1 (beyond 10%) and the wait
/// that moved most (beyond 5 points); empty when nothing moved that much.
pub(super) fn largest_moves(t: &Table) -> String {
    let short = |label: &str| label.split(" (").next().unwrap_or(label).to_string();
    let mut ratios: Vec<(String, f64)> = t
        .rows
        .iter()
        .filter(|r| r.label != "throughput")
        .filter_map(|r| match r.cells.get(2) {
            Some(Cell::Ratio(x)) if x.is_finite() && *x > 0.0 && (x.ln()).abs() > 1.1f64.ln() => {
                Some((short(&r.label), *x))
            }
            _ => None,
        })
        .collect();
    ratios.sort_by(|a, b| b.1.ln().abs().total_cmp(&a.1.ln().abs()));
    let mut out: Vec<String> = ratios
        .into_iter()
        .take(2)
        .map(|(l, x)| format!("{l} {x:.2}x"))
        .collect();
    // The waits' rows come largest move first.
    if let Some((label, pts)) = t.rows.iter().find_map(|r| {
        let event = r.label.strip_prefix("waits: ")?;
        let Some(Cell::Text(pts)) = r.cells.get(2) else {
            return None;
        };
        let moved: f64 = pts.trim_end_matches(" pts").parse().ok()?;
        (moved.abs() > 5.0).then(|| (short(event), pts.clone()))
    }) {
        out.push(format!("{label} {pts}"));
    }
    if out.is_empty() {
        String::new()
    } else {
        format!(" [moved most: {}]", out.join(", "))
    }
}

/// The autopsy of a change of `test` between columns `at - 1` and `at` (the runs of columns
/// `from..at` before it, `at..to` after it): throughput and every figure per operation the runs
/// have, the median of each side and their ratio, and the servers' settings and versions that
/// differ between the builds on either side of it.
pub(super) fn autopsy(
    ds: &Dataset,
    slice: &super::tables::Slice,
    test: &str,
    (from, at, to): (usize, usize, usize),
    suffix: &str,
) -> Table {
    let label = |c: usize| slice.columns[c].0.as_str();
    let (before, after) = (
        side(ds, slice, test, from..at),
        side(ds, slice, test, at..to),
    );
    let mut rows = Vec::new();
    let metrics = std::iter::once((
        "throughput",
        "throughput",
        Entry::throughput as fn(&Entry) -> Option<f64>,
    ))
    .chain(HW_METRICS.iter().map(|(id, title, f)| (*id, *title, *f)));
    for (_, title, f) in metrics {
        let (b, a): (Vec<f64>, Vec<f64>) = (
            before.iter().filter_map(|e| f(e)).collect(),
            after.iter().filter_map(|e| f(e)).collect(),
        );
        let (Some(mb), Some(ma)) = (median_of(&b), median_of(&a)) else {
            continue;
        };
        rows.push(Row {
            group: None,
            label: title.to_string(),
            summary: false,
            cells: vec![Cell::Num(mb), Cell::Num(ma), Cell::Ratio(ratio_of(ma, mb))],
        });
    }
    let waits = |r: &crate::results::Results| -> Option<Vec<(String, f64)>> {
        let w = r.waits.as_ref()?;
        Some(
            w.events
                .iter()
                .map(|e| (e.event.clone(), e.samples as f64))
                .collect(),
        )
    };
    rows.extend(shares_moved(
        "waits",
        &pooled(&before, waits, Pool::Whole),
        &pooled(&after, waits, Pool::Whole),
    ));
    // Functions by their self share of the CPU profile's samples (each run weighs the same).
    let functions = |r: &crate::results::Results| -> Option<Vec<(String, f64)>> {
        let p = r.profile.as_ref()?;
        Some(
            p.functions
                .iter()
                .map(|f| (f.function.clone(), f.self_share))
                .collect(),
        )
    };
    rows.extend(shares_moved(
        "on CPU",
        &pooled(&before, functions, Pool::Mean),
        &pooled(&after, functions, Pool::Mean),
    ));
    // The builds on either side: their versions and the settings that differ.
    let last = before
        .iter()
        .rev()
        .find(|e| e.place == slice.columns[at - 1].1[0])
        .and_then(|e| e.results.as_ref());
    let first = after
        .iter()
        .find(|e| e.place == slice.columns[at].1[0])
        .and_then(|e| e.results.as_ref());
    let mut notes = vec![format!(
        "before: {} (columns {} to {}); after: {} (columns {} to {}); medians of their runs",
        label(at - 1),
        label(from),
        label(at - 1),
        label(at),
        label(at),
        label(to - 1)
    )];
    if let (Some(b), Some(a)) = (last, first) {
        notes.extend(builds_differ(b, a));
    }
    Table {
        id: "changes.autopsy".into(),
        title: format!(
            "The autopsy of {test}{suffix}: {} -> {}, before and after (per operation; which way is better is the figure's own)",
            label(at - 1),
            label(at)
        ),
        better: None,
        columns: vec!["before".into(), "after".into(), "after/before".into()],
        under: Vec::new(),
        rows,
        notes,
    }
}

/// What differs between the builds on either side of a change: their versions, and the
/// settings read at start (each instance's own port, socket and paths left out).
fn builds_differ(b: &crate::results::Results, a: &crate::results::Results) -> Vec<String> {
    let mut notes = Vec::new();
    if b.target.version != a.target.version {
        notes.push(format!(
            "versions: {} -> {}",
            b.target.version, a.target.version
        ));
    }
    let keys: std::collections::BTreeSet<&String> = b
        .target
        .settings
        .keys()
        .chain(a.target.settings.keys())
        .collect();
    let differ: Vec<String> = keys
        .into_iter()
        .filter(|k| b.target.settings.get(*k) != a.target.settings.get(*k))
        .filter(|k| !per_instance(k, &b.target.settings, &a.target.settings))
        .map(|k| {
            let v = |m: &std::collections::BTreeMap<String, String>| {
                m.get(k).cloned().unwrap_or_else(|| "-".into())
            };
            format!(
                "{k}: {} -> {}",
                v(&b.target.settings),
                v(&a.target.settings)
            )
        })
        .collect();
    notes.push(if differ.is_empty() {
        "the servers' settings read at start are the same on both sides".into()
    } else {
        format!(
            "settings that differ (a changed default is a likely cause): {}",
            differ.join("; ")
        )
    });
    notes
}

/// The entries of `test` in columns `cols` of `slice`.
pub(super) fn side<'a>(
    ds: &'a Dataset,
    slice: &super::tables::Slice,
    test: &str,
    cols: std::ops::Range<usize>,
) -> Vec<&'a Entry> {
    let places: Vec<super::model::Place> = slice.columns[cols]
        .iter()
        .flat_map(|(_, places)| places.iter().cloned())
        .collect();
    ds.at(&places).filter(|e| e.test == test).collect()
}
