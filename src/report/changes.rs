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

use super::absolute::{Sample, column_versions, ratio_cell, samples_of};
use super::model::{Dataset, Entry};
use super::stats::{Estimate, ratio};
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
                autopsies.push(super::autopsy::autopsy(
                    ds,
                    slice,
                    test,
                    (from, c.at, to),
                    &slice.suffix,
                ));
            }
            let moves: Vec<String> = autopsies[autopsies.len() - found.len()..]
                .iter()
                .map(|a: &super::autopsy::Autopsy| a.moves.clone())
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
            out.extend(autopsies.into_iter().map(|a| a.table));
            out.push(adjacent);
        }
    }
    out
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
                        super::autopsy::side(ds, slice, test, cols)
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
