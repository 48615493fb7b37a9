//! The stability tables: how steady each step's throughput was over its full intervals
//! (coefficient of variation, worst second against the mean).

use super::absolute::{Metric, metric_tables};
use super::model::{Dataset, Entry};
use super::tables::{Better, Slice, Table, layout};
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
pub(crate) fn per_second(e: &Entry) -> Vec<f64> {
    e.results
        .as_ref()
        .map(|r| full_intervals(r).iter().map(|i| i.tps).collect())
        .unwrap_or_default()
}

pub(crate) fn cv(values: &[f64]) -> Option<f64> {
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

pub(crate) fn stability_tables(ds: &Dataset, slice: &Slice) -> Vec<Table> {
    let series: [Metric; 3] = [
        (
            "stability.tps_cv",
            "throughput: coefficient of variation of per-second tps, %",
            |e| cv(&per_second(e)),
        ),
        (
            "stability.tps_dip",
            "throughput: deepest dip, how far the worst second fell below the mean, %",
            |e| {
                let v = per_second(e);
                let mean = v.iter().sum::<f64>() / v.len().max(1) as f64;
                let min = v.iter().copied().fold(f64::INFINITY, f64::min);
                // A depth (0: no second below the mean), so that lower is better.
                (v.len() >= 2 && mean > 0.0).then(|| (1.0 - min / mean) * 100.0)
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

/// The stability tables (how steady each run's per-second throughput was), per slice.
pub fn stability(ds: &Dataset) -> Vec<Table> {
    layout(ds)
        .iter()
        .flat_map(|slice| stability_tables(ds, slice))
        .filter(|t| !t.rows.is_empty())
        .collect()
}
