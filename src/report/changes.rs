//! Where throughput changed along a series of columns (a series' versions, oldest first, as a
//! sweep of `--server 'postgres:15.*'` runs them): change points found by binary segmentation
//! with a permutation test, as change-point tools read a series of few noisy runs per build,
//! and the adjacent view, each column over the one before it.
//!
//! The method: on the logarithms of each column's runs, the split between two neighbouring
//! columns that best separates the runs before it from those after (the largest
//! |mean before - mean after| x sqrt(n_before n_after / n)) is tested against the same largest
//! separation over 999 random reorderings of the runs among the columns (each column keeping
//! its number of runs); when at most 5% of them separate as well, the split is a change point,
//! and each side is searched again. Under no change the test calls one in 5% of searches; a
//! change smaller than 2% is not called one (a sweep's runs resolve no less, and a
//! statistically certain 0.5% is no finding). Its size is the Hodges-Lehmann ratio of the runs
//! after to the runs before (up to the neighbouring change points) with its interval.

use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::SliceRandom;

use super::absolute::{HW_METRICS, Sample, column_versions, ratio_cell, samples_of};
use super::model::{Dataset, Entry};
use super::stats::{Estimate, median_of, ratio, ratio_of};
use super::tables::{Better, Cell, Row, Table, layout, tests};

/// The significance of each split's test.
pub const ALPHA: f64 = 0.05;
/// Random reorderings per test.
const PERMUTATIONS: usize = 999;
/// The least change called one.
pub const MIN_CHANGE: f64 = 0.02;

/// A change point: between column `at - 1` and column `at`, of `size` (after over before).
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub at: usize,
    pub size: Estimate,
    /// The permutation test's p-value.
    pub p: f64,
}

/// The change points of a series of columns' runs (each column's values, in order).
pub fn find(series: &[Vec<f64>], seed: u64) -> Vec<Change> {
    let logs: Vec<Vec<f64>> = series
        .iter()
        .map(|v| v.iter().filter(|x| **x > 0.0).map(|x| x.ln()).collect())
        .collect();
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut splits = Vec::new();
    segment(&logs, 0, logs.len(), &mut rng, &mut splits);
    splits.sort_by_key(|(at, _)| *at);
    // Each change's size from the runs between its neighbouring change points.
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(splits.iter().map(|(at, _)| *at))
        .chain(std::iter::once(series.len()))
        .collect();
    let mut out = Vec::new();
    for (i, (at, p)) in splits.iter().enumerate() {
        let before: Vec<f64> = series[bounds[i]..*at].concat();
        let after: Vec<f64> = series[*at..bounds[i + 2]].concat();
        if let Some(size) = ratio(&after, &before)
            && (size.value - 1.0).abs() >= MIN_CHANGE
        {
            out.push(Change {
                at: *at,
                size,
                p: *p,
            });
        }
    }
    out
}

/// Binary segmentation of columns `lo..hi`.
fn segment(
    logs: &[Vec<f64>],
    lo: usize,
    hi: usize,
    rng: &mut SmallRng,
    out: &mut Vec<(usize, f64)>,
) {
    let part = &logs[lo..hi];
    let counts: Vec<usize> = part.iter().map(Vec::len).collect();
    if counts.iter().filter(|&&c| c > 0).count() < 2 || counts.iter().sum::<usize>() < 4 {
        return;
    }
    let pooled: Vec<f64> = part.concat();
    let Some((stat, at)) = best_split(&pooled, &counts) else {
        return;
    };
    let mut shuffled = pooled.clone();
    let mut as_large = 0;
    for _ in 0..PERMUTATIONS {
        shuffled.shuffle(rng);
        if best_split(&shuffled, &counts).is_some_and(|(s, _)| s >= stat - 1e-12) {
            as_large += 1;
        }
    }
    let p = (1 + as_large) as f64 / (1 + PERMUTATIONS) as f64;
    if p > ALPHA {
        return;
    }
    out.push((lo + at, p));
    segment(logs, lo, lo + at, rng, out);
    segment(logs, lo + at, hi, rng, out);
}

/// The largest separation of the runs before a column boundary from those after it, and the
/// boundary (the first column after it), over runs laid out column by column (`counts`).
fn best_split(values: &[f64], counts: &[usize]) -> Option<(f64, usize)> {
    let n = values.len() as f64;
    let total: f64 = values.iter().sum();
    let mut best: Option<(f64, usize)> = None;
    let (mut left_sum, mut left_n) = (0.0, 0usize);
    let mut at = 0;
    for (k, &c) in counts.iter().enumerate().take(counts.len() - 1) {
        left_sum += values[at..at + c].iter().sum::<f64>();
        left_n += c;
        at += c;
        let right_n = values.len() - left_n;
        if left_n == 0 || right_n == 0 {
            continue;
        }
        let (l, r) = (left_n as f64, right_n as f64);
        let stat = (left_sum / l - (total - left_sum) / r).abs() * (l * r / n).sqrt();
        if best.is_none_or(|(b, _)| stat > b) {
            best = Some((stat, k + 1));
        }
    }
    best
}

/// The tables: for each client count with three columns or more, where throughput changed
/// along them, and each column over the one before it.
pub fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for slice in layout(ds).iter().filter(|s| s.columns.len() >= 3) {
        let columns: Vec<String> = slice.columns.iter().map(|(l, _)| l.clone()).collect();
        let mut changes = Table {
            id: "changes".into(),
            title: format!(
                "Where throughput changed along the columns, in their order{} (change points: binary segmentation, a permutation test at 5%, changes of 2% or more; size = the runs after over the runs before, with its interval; higher is better)",
                slice.suffix
            ),
            better: None,
            columns: vec!["change points".into()],
            under: Vec::new(),
            rows: Vec::new(),
            notes: vec![
                "each column is a build (a series' versions oldest first): a change is where the level of the runs shifts, tested against reorderings of the same runs; one run per column resolves only large changes, repeats (repeat = N) resolve smaller ones".into(),
            ],
        };
        let mut autopsies = Vec::new();
        let mut adjacent = Table {
            id: "throughput.adjacent".into(),
            title: format!(
                "Throughput, each column over the one before it{} (higher is better)",
                slice.suffix
            ),
            better: Some(Better::Higher),
            columns: columns.clone(),
            under: column_versions(ds, slice),
            rows: Vec::new(),
            notes: Vec::new(),
        };
        for (i, (group, test)) in tests(ds).iter().enumerate() {
            let values = throughput_runs(ds, slice, test);
            if values.iter().all(Vec::is_empty) {
                continue;
            }
            let cells = (0..values.len())
                .map(|c| match c {
                    0 => Cell::Missing,
                    _ => ratio_cell(&values[c], &values[c - 1]).0,
                })
                .collect();
            adjacent.rows.push(Row {
                group: Some(*group),
                label: test.clone(),
                summary: false,
                cells,
            });
            // Runs of a busy machine are searched too, and a change built on them says so.
            let busy: Vec<bool> = values.iter().map(|v| v.iter().any(|s| s.busy)).collect();
            let found = find(&usable(&values), seed(i));
            for (k, c) in found.iter().enumerate() {
                let from = if k == 0 { 0 } else { found[k - 1].at };
                let to = found.get(k + 1).map_or(columns.len(), |n| n.at);
                autopsies.push(autopsy(ds, slice, test, (from, c.at, to), &slice.suffix));
            }
            let moves: Vec<String> = autopsies[autopsies.len() - found.len()..]
                .iter()
                .map(largest_moves)
                .collect();
            let text = if found.is_empty() {
                "no change".to_string()
            } else {
                found
                    .iter()
                    .enumerate()
                    .map(|(k, c)| {
                        let from = if k == 0 { 0 } else { found[k - 1].at };
                        let to = found.get(k + 1).map_or(columns.len(), |n| n.at);
                        let on_busy = if busy[from..to].iter().any(|b| *b) {
                            " [runs of a busy machine among them: not called a difference until run again]"
                        } else {
                            ""
                        };
                        format!(
                            "{} -> {}: {:.3}x ({:.3}-{:.3}, p {:.3}){on_busy}{}",
                            columns[c.at - 1],
                            columns[c.at],
                            c.size.value,
                            c.size.lo,
                            c.size.hi,
                            c.p,
                            moves[k]
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("; ")
            };
            changes.rows.push(Row {
                group: Some(*group),
                label: test.clone(),
                summary: false,
                cells: vec![Cell::Text(text)],
            });
        }
        if values_busy(ds) {
            changes
                .notes
                .push("some runs were measured on a busy machine: a change built on them is marked, and is no finding until they run again on a quiet one".into());
        }
        if !changes.rows.is_empty() {
            out.push(changes);
            out.extend(autopsies);
            out.push(adjacent);
        }
    }
    out
}

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
fn largest_moves(t: &Table) -> String {
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

/// The entries of `test` in columns `cols` of `slice`.
fn side<'a>(
    ds: &'a Dataset,
    slice: &super::tables::Slice,
    test: &str,
    cols: std::ops::Range<usize>,
) -> Vec<&'a Entry> {
    ds.entries
        .iter()
        .filter(|e| {
            e.test == test
                && slice.columns[cols.clone()]
                    .iter()
                    .any(|(_, places)| places.contains(&e.place))
        })
        .collect()
}

/// Each column's throughput runs of `test`.
fn throughput_runs(ds: &Dataset, slice: &super::tables::Slice, test: &str) -> Vec<Vec<Sample>> {
    slice
        .columns
        .iter()
        .map(|(_, places)| samples_of(ds, "throughput", test, places, &Entry::throughput))
        .collect()
}

/// The runs a change is searched in: those not flagged (failed, short, under their floor).
fn usable(values: &[Vec<Sample>]) -> Vec<Vec<f64>> {
    values
        .iter()
        .map(|v| {
            v.iter()
                .filter(|s| s.flag.is_none())
                .map(|s| s.value)
                .collect()
        })
        .collect()
}

/// The permutation test's seed for the `i`th test: a report shows the same changes each time.
fn seed(i: usize) -> u64 {
    0x5eed ^ i as u64
}

/// A test's throughput along a series' columns and the changes in it, as a chart draws them.
pub struct Plot {
    pub title: String,
    pub columns: Vec<String>,
    /// Each column's searched runs: the value, and whether the machine was busy beside it.
    pub runs: Vec<Vec<(f64, bool)>>,
    pub changes: Vec<Change>,
    /// For each change, the folded-stacks files of the profiled runs before and after it.
    pub stacks: Vec<(Vec<String>, Vec<String>)>,
}

/// The plots of every test of every client count with three columns or more (the tables'
/// change points, found alike).
pub fn plots(ds: &Dataset) -> Vec<Plot> {
    let mut out = Vec::new();
    for slice in layout(ds).iter().filter(|s| s.columns.len() >= 3) {
        for (i, (_, test)) in tests(ds).iter().enumerate() {
            let values = throughput_runs(ds, slice, test);
            if values.iter().all(Vec::is_empty) {
                continue;
            }
            let changes = find(&usable(&values), seed(i));
            let bounds: Vec<usize> = std::iter::once(0)
                .chain(changes.iter().map(|c| c.at))
                .chain(std::iter::once(slice.columns.len()))
                .collect();
            let stacks = (0..changes.len())
                .map(|k| {
                    let files = |cols: std::ops::Range<usize>| -> Vec<String> {
                        side(ds, slice, test, cols)
                            .iter()
                            .filter_map(|e| {
                                e.results.as_ref()?.profile.as_ref()?.stacks_file.clone()
                            })
                            .collect()
                    };
                    (
                        files(bounds[k]..bounds[k + 1]),
                        files(bounds[k + 1]..bounds[k + 2]),
                    )
                })
                .collect();
            out.push(Plot {
                stacks,
                title: format!("{test}{}", slice.suffix),
                columns: slice.columns.iter().map(|(l, _)| l.clone()).collect(),
                runs: values
                    .iter()
                    .map(|v| {
                        v.iter()
                            .filter(|s| s.flag.is_none())
                            .map(|s| (s.value, s.busy))
                            .collect()
                    })
                    .collect(),
                changes,
            });
        }
    }
    out
}

/// The autopsy of a change of `test` between columns `at - 1` and `at` (the runs of columns
/// `from..at` before it, `at..to` after it): throughput and every figure per operation the runs
/// have, the median of each side and their ratio, and the servers' settings and versions that
/// differ between the builds on either side of it.
fn autopsy(
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
    rows.extend(shares_moved(
        "waits",
        &pooled(
            &before,
            |r| {
                let w = r.waits.as_ref()?;
                Some(
                    w.events
                        .iter()
                        .map(|e| (e.event.clone(), e.samples as f64))
                        .collect(),
                )
            },
            Pool::Whole,
        ),
        &pooled(
            &after,
            |r| {
                let w = r.waits.as_ref()?;
                Some(
                    w.events
                        .iter()
                        .map(|e| (e.event.clone(), e.samples as f64))
                        .collect(),
                )
            },
            Pool::Whole,
        ),
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

/// A run of the series as change-point tools read one: its attributes, then its metrics.
struct SeriesRow {
    attributes: Vec<(&'static str, String)>,
    metrics: Vec<(&'static str, Option<f64>)>,
}

/// Every run in the order the columns ran (a series' builds oldest first), tests in plan order.
fn series_rows(ds: &Dataset) -> Vec<SeriesRow> {
    let mut out = Vec::new();
    let versions = |e: &Entry| e.results.as_ref().map(|r| r.target.version.clone());
    for slice in layout(ds) {
        for (label, places) in &slice.columns {
            for (_, test) in tests(ds) {
                let mut runs: Vec<&Entry> = ds
                    .entries
                    .iter()
                    .filter(|e| e.test == test && places.contains(&e.place))
                    .collect();
                runs.sort_by_key(|e| e.repeat);
                for e in runs {
                    let started = e.results.as_ref().map_or(0, |r| r.started_at);
                    let mut metrics = vec![("throughput", e.throughput())];
                    metrics.push((
                        "latency_p95_ms",
                        e.results.as_ref().map(|r| r.latency_ms.p95),
                    ));
                    for (id, _, f) in HW_METRICS.iter() {
                        metrics.push((id, f(e)));
                    }
                    out.push(SeriesRow {
                        attributes: vec![
                            ("build", label.clone()),
                            ("version", versions(e).unwrap_or_default()),
                            ("test", test.clone()),
                            ("clients", e.place.clients.to_string()),
                            ("repeat", e.repeat.to_string()),
                            ("started_at", started.to_string()),
                            (
                                "busy",
                                e.hw()
                                    .and_then(|h| h.beside.as_ref())
                                    .is_some_and(|b| b.busy)
                                    .to_string(),
                            ),
                        ],
                        metrics,
                    });
                }
            }
        }
    }
    out
}

/// `report --format series-csv`: a header, then a row per run; an empty field where a run has
/// no such figure.
pub fn series_csv(ds: &Dataset) -> String {
    let rows = series_rows(ds);
    let Some(first) = rows.first() else {
        return String::new();
    };
    let quote = |s: &str| {
        if s.contains([',', '"', '\n']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out: String = first
        .attributes
        .iter()
        .map(|(k, _)| *k)
        .chain(first.metrics.iter().map(|(k, _)| *k))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for r in &rows {
        let fields: Vec<String> = r
            .attributes
            .iter()
            .map(|(_, v)| quote(v))
            .chain(
                r.metrics
                    .iter()
                    .map(|(_, v)| v.map_or(String::new(), |x| x.to_string())),
            )
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// `report --format series-json`: a list of objects, `attributes` and `metrics` each a map.
pub fn series_json(ds: &Dataset) -> String {
    let rows: Vec<serde_json::Value> = series_rows(ds)
        .into_iter()
        .map(|r| {
            serde_json::json!({
                "attributes": r.attributes.into_iter().map(|(k, v)| (k.to_string(), serde_json::Value::String(v))).collect::<serde_json::Map<_, _>>(),
                "metrics": r.metrics.into_iter().filter_map(|(k, v)| Some((k.to_string(), serde_json::json!(v?)))).collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    let mut text = serde_json::to_string_pretty(&rows).unwrap_or_default();
    text.push('\n');
    text
}

/// Whether any run of the dataset was measured on a busy machine.
fn values_busy(ds: &Dataset) -> bool {
    ds.entries.iter().any(|e| {
        e.hw()
            .and_then(|h| h.beside.as_ref())
            .is_some_and(|b| b.busy)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// `n` runs of level `level` with log-normal noise of `sigma`.
    fn runs(rng: &mut SmallRng, level: f64, sigma: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|_| {
                // Box-Muller.
                let (u, v): (f64, f64) = (rng.random(), rng.random());
                let z = (-2.0 * u.max(1e-12).ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                level * (sigma * z).exp()
            })
            .collect()
    }

    #[test]
    fn a_change_at_a_known_build_is_found_there_with_an_interval_that_holds_it() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut hits = 0;
        for trial in 0..50 {
            // Eight builds of three runs, 3% noise, 10% slower from build 5 on.
            let series: Vec<Vec<f64>> = (0..8)
                .map(|b| runs(&mut rng, if b >= 5 { 900.0 } else { 1000.0 }, 0.03, 3))
                .collect();
            let found = find(&series, trial);
            if let [c] = &found[..]
                && c.at == 5
                && c.size.lo <= 0.9
                && c.size.hi >= 0.9
            {
                hits += 1;
            }
        }
        assert!(
            hits >= 45,
            "found at build 5 with 0.9 inside in {hits} of 50"
        );
    }

    #[test]
    fn without_a_change_false_alarms_stay_at_the_stated_rate() {
        let mut rng = SmallRng::seed_from_u64(11);
        let trials = 400;
        let mut alarms = 0;
        for trial in 0..trials {
            // Six builds of three runs, 5% noise: changes of 2% and more are called, so the
            // minimum size does not hide the alarms the test makes.
            let series: Vec<Vec<f64>> = (0..6).map(|_| runs(&mut rng, 1000.0, 0.05, 3)).collect();
            if !find(&series, trial).is_empty() {
                alarms += 1;
            }
        }
        let rate = alarms as f64 / trials as f64;
        // The stated 5%, with the trials' binomial spread (3 standard errors: 3.3%).
        assert!(
            rate <= ALPHA + 3.0 * (ALPHA * (1.0 - ALPHA) / trials as f64).sqrt(),
            "{rate}"
        );
    }

    #[test]
    fn one_run_per_build_resolves_a_large_step_and_too_few_runs_nothing() {
        let series: Vec<Vec<f64>> = [100.0, 101.0, 99.0, 100.5, 70.0, 71.0, 69.5, 70.2]
            .iter()
            .map(|x| vec![*x])
            .collect();
        let found = find(&series, 1);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].at, 4);
        assert!((found[0].size.value - 0.70).abs() < 0.02);
        assert!(find(&[vec![100.0], vec![50.0], vec![100.0]], 1).is_empty());
    }
}
