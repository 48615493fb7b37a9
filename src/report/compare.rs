//! `dbsweep compare A B`: test by test, throughput and latency of two runs, the relative change,
//! and whether it is more than noise.
//!
//! The samples are the per-second throughputs of each step. They are autocorrelated (a slow
//! second tends to follow a slow second), which makes a plain t-test see significance that is
//! not there; so each side's sample count is shrunk to its effective size
//! n_eff = n (1 - r1) / (1 + r1), r1 the lag-1 autocorrelation, before a Welch t-test. Many
//! tests are compared at once: a change is significant when its p-value is below 0.05 / m
//! (Bonferroni over the m tests compared), so that pure noise does not raise alarms.

use std::fmt::Write as _;

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::model::{Dataset, Entry};
use super::render::num;
use super::stability::per_second;

/// The family-wise false-alarm rate.
const ALPHA: f64 = 0.05;

#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub test: String,
    /// `target/config cN`.
    pub place: String,
    pub a: f64,
    pub b: f64,
    /// (b / a - 1) in percent.
    pub change_pct: f64,
    /// None when there are too few per-second samples to test.
    pub p_value: Option<f64>,
    pub significant: bool,
    pub a_p95_ms: Option<f64>,
    pub b_p95_ms: Option<f64>,
}

/// Mean, variance of the mean (with the effective sample size) and the effective size.
fn summary(x: &[f64]) -> Option<(f64, f64, f64)> {
    let n = x.len();
    if n < 3 {
        return None;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let ss: f64 = x.iter().map(|v| (v - mean).powi(2)).sum();
    let var = ss / (n - 1) as f64;
    let r1 = if ss > 0.0 {
        x.windows(2)
            .map(|w| (w[0] - mean) * (w[1] - mean))
            .sum::<f64>()
            / ss
    } else {
        0.0
    };
    let r1 = r1.clamp(0.0, 0.95);
    let n_eff = (n as f64 * (1.0 - r1) / (1.0 + r1)).max(2.0);
    Some((mean, var / n_eff, n_eff))
}

/// Two-sided p-value of Welch's t-test on autocorrelation-adjusted samples.
pub fn p_value(a: &[f64], b: &[f64]) -> Option<f64> {
    welch(summary(a)?, summary(b)?)
}

/// Two-sided p-value of Welch's t-test on independent samples (repeated runs, in any order).
pub fn p_value_independent(a: &[f64], b: &[f64]) -> Option<f64> {
    let plain = |x: &[f64]| {
        let n = x.len();
        if n < 2 {
            return None;
        }
        let mean = x.iter().sum::<f64>() / n as f64;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        Some((mean, var / n as f64, n as f64))
    };
    welch(plain(a)?, plain(b)?)
}

fn welch((ma, va, na): (f64, f64, f64), (mb, vb, nb): (f64, f64, f64)) -> Option<f64> {
    let se2 = va + vb;
    if se2 <= 0.0 {
        return Some(if ma == mb { 1.0 } else { 0.0 });
    }
    let t = (mb - ma) / se2.sqrt();
    let df = se2.powi(2) / (va.powi(2) / (na - 1.0).max(1.0) + vb.powi(2) / (nb - 1.0).max(1.0));
    let dist = StudentsT::new(0.0, 1.0, df.max(1.0)).ok()?;
    Some((2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0))
}

fn place(e: &Entry) -> String {
    format!("{}/{} c{}", e.place.target, e.place.config, e.place.clients)
}

/// One column of a dataset: its entries of a target, a configuration, or both.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Column {
    pub target: Option<String>,
    pub config: Option<String>,
}

impl Column {
    /// `NAME` (a target, else a configuration, of `ds`) or `TARGET/CONFIG`; `option` names the
    /// command-line option in the error.
    pub fn parse(text: &str, ds: &Dataset, option: &str) -> Result<Column, crate::error::Error> {
        let has_target = |t: &str| ds.entries.iter().any(|e| e.place.target == t);
        let has_config = |c: &str| ds.entries.iter().any(|e| e.place.config == c);
        let column = match text.split_once('/') {
            Some((t, c)) if has_target(t) && has_config(c) => Column {
                target: Some(t.into()),
                config: Some(c.into()),
            },
            None if has_target(text) => Column {
                target: Some(text.into()),
                config: None,
            },
            None if has_config(text) => Column {
                target: None,
                config: Some(text.into()),
            },
            _ => {
                let mut names: Vec<String> = ds
                    .entries
                    .iter()
                    .map(|e| format!("{}/{}", e.place.target, e.place.config))
                    .collect();
                names.sort();
                names.dedup();
                return Err(crate::error::Error::Usage(format!(
                    "{option} {text}: no such target or configuration; the columns are {}",
                    names.join(", ")
                )));
            }
        };
        Ok(column)
    }

    fn holds(&self, e: &Entry) -> bool {
        self.target.as_ref().is_none_or(|t| *t == e.place.target)
            && self.config.as_ref().is_none_or(|c| *c == e.place.config)
    }
}

fn side<'a>(ds: &'a Dataset, col: Option<&Column>) -> Vec<&'a Entry> {
    ds.entries
        .iter()
        .filter(|e| col.is_none_or(|c| c.holds(e)))
        .collect()
}

/// What was compared, and what could not be, with why.
#[derive(Debug, Default)]
pub struct Outcome {
    pub rows: Vec<Row>,
    pub skipped: Vec<String>,
}

/// Compares every test present on both sides: the same step name and client count, and the
/// same target and configuration unless a column chooses them.
pub fn compare(
    a: &Dataset,
    b: &Dataset,
    col_a: Option<&Column>,
    col_b: Option<&Column>,
) -> Outcome {
    let by_target = [col_a, col_b]
        .iter()
        .all(|c| c.is_none_or(|c| c.target.is_none()));
    let by_config = [col_a, col_b]
        .iter()
        .all(|c| c.is_none_or(|c| c.config.is_none()));
    let (side_a, side_b) = (side(a, col_a), side(b, col_b));
    let pairs = |ea: &Entry, eb: &Entry| {
        eb.test == ea.test
            && eb.place.clients == ea.place.clients
            && (!by_target || eb.place.target == ea.place.target)
            && (!by_config || eb.place.config == ea.place.config)
    };
    let mut out = Outcome::default();
    for eb in &side_b {
        if !side_a.iter().any(|ea| pairs(ea, eb)) {
            out.skipped
                .push(format!("{} ({}): only in B", eb.test, place(eb)));
        }
    }
    let rows = &mut out.rows;
    let mut done: Vec<(&str, &super::model::Place)> = Vec::new();
    for ea in &side_a {
        // The repeats of a test in one place are one comparison.
        if done.contains(&(ea.test.as_str(), &ea.place)) {
            continue;
        }
        done.push((ea.test.as_str(), &ea.place));
        let runs_a: Vec<&Entry> = side_a
            .iter()
            .copied()
            .filter(|e| e.test == ea.test && e.place == ea.place)
            .collect();
        let runs_b: Vec<&Entry> = side_b.iter().copied().filter(|eb| pairs(ea, eb)).collect();
        let Some(eb) = runs_b.first().copied() else {
            out.skipped
                .push(format!("{} ({}): only in A", ea.test, place(ea)));
            continue;
        };
        let tputs =
            |runs: &[&Entry]| -> Vec<f64> { runs.iter().filter_map(|e| e.throughput()).collect() };
        let (all_a, all_b) = (tputs(&runs_a), tputs(&runs_b));
        let (Some(ta), Some(tb)) = (
            super::stats::median_of(&all_a),
            super::stats::median_of(&all_b),
        ) else {
            out.skipped
                .push(format!("{} ({}): no throughput", ea.test, place(ea)));
            continue;
        };
        // Repeated runs are independent samples of the whole run: the test uses them (their
        // medians are the figures); a single run's per-second throughputs otherwise.
        let p = if all_a.len() > 1 && all_b.len() > 1 {
            p_value_independent(&all_a, &all_b)
        } else {
            p_value(&per_second(ea), &per_second(eb))
        };
        // Where both ran: what the columns did not choose, and the client count.
        let mut at = Vec::new();
        if by_target {
            at.push(ea.place.target.as_str());
        }
        if by_config {
            at.push(ea.place.config.as_str());
        }
        let at = if at.is_empty() {
            format!("c{}", ea.place.clients)
        } else {
            format!("{} c{}", at.join("/"), ea.place.clients)
        };
        rows.push(Row {
            test: ea.test.clone(),
            place: at,
            a: ta,
            b: tb,
            change_pct: super::stats::ratio_of(tb, ta).mul_add(100.0, -100.0),
            p_value: p,
            significant: false,
            a_p95_ms: ea.results.as_ref().map(|r| r.latency_ms.p95),
            b_p95_ms: eb.results.as_ref().map(|r| r.latency_ms.p95),
        });
    }
    let m = rows.iter().filter(|r| r.p_value.is_some()).count().max(1);
    for r in rows.iter_mut() {
        r.significant = r.p_value.is_some_and(|p| p < ALPHA / m as f64);
    }
    out
}

/// The tests not compared, one per line, after the table.
pub fn skipped_text(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut out = format!("\nnot compared ({}):\n", skipped.len());
    for s in skipped {
        let _ = writeln!(out, "  {s}");
    }
    out
}

/// Regressions (significant, and worse than `pct` percent) that fail a CI gate.
pub fn regressions(rows: &[Row], pct: f64) -> Vec<&Row> {
    rows.iter()
        .filter(|r| r.significant && r.change_pct < -pct)
        .collect()
}

pub fn text(rows: &[Row], a_name: &str, b_name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A = {a_name}\nB = {b_name}");
    let _ = writeln!(
        out,
        "change = B / A - 1; significant: p < {ALPHA} / {} (Welch t-test on per-second throughput, autocorrelation-adjusted; on the runs' throughputs, medians shown, where both sides repeated)\n",
        rows.iter().filter(|r| r.p_value.is_some()).count().max(1)
    );
    let tw = rows
        .iter()
        .map(|r| r.test.len())
        .chain([4])
        .max()
        .unwrap_or(4);
    let pw = rows
        .iter()
        .map(|r| r.place.len())
        .chain([5])
        .max()
        .unwrap_or(5);
    // p95 in microseconds when every one is below a millisecond (embedded SQLite).
    let micro = rows
        .iter()
        .flat_map(|r| [r.a_p95_ms, r.b_p95_ms])
        .flatten()
        .all(|v| v < 1.0);
    let (unit, scale) = if micro { ("us", 1000.0) } else { ("ms", 1.0) };
    let _ = writeln!(
        out,
        "{:<tw$}  {:<pw$}  {:>10}  {:>10}  {:>8}  {:>8}  {:<14}  {:>9}  {:>9}",
        "test",
        "where",
        "A",
        "B",
        "change",
        "p",
        "verdict",
        format!("A p95 {unit}"),
        format!("B p95 {unit}")
    );
    for r in rows {
        let verdict = match (r.p_value, r.significant) {
            (None, _) => "too few samples",
            (_, false) => "noise",
            (_, true) if r.change_pct < 0.0 => "REGRESSION",
            (_, true) => "improvement",
        };
        let _ = writeln!(
            out,
            "{:<tw$}  {:<pw$}  {:>10}  {:>10}  {:>7.1}%  {:>8}  {:<14}  {:>9}  {:>9}",
            r.test,
            r.place,
            num(r.a),
            num(r.b),
            r.change_pct,
            r.p_value.map_or("-".into(), |p| format!("{p:.4}")),
            verdict,
            r.a_p95_ms.map_or("-".into(), |v| num(v * scale)),
            r.b_p95_ms.map_or("-".into(), |v| num(v * scale)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic AR(1) series around `mean`: x_t = mean + e_t, e_t = phi e_{t-1} + noise.
    fn series(mean: f64, n: usize, phi: f64, seed: u64) -> Vec<f64> {
        let mut s = seed;
        let mut e = 0.0;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                e = phi * e + u * 100.0;
                mean + e
            })
            .collect()
    }

    #[test]
    fn a_real_shift_is_significant_and_noise_is_not() {
        let a = series(10_000.0, 60, 0.5, 1);
        let b = series(9_000.0, 60, 0.5, 2);
        assert!(p_value(&a, &b).unwrap() < 1e-6);
        let c = series(10_000.0, 60, 0.5, 3);
        assert!(p_value(&a, &c).unwrap() > 0.01);
        assert_eq!(p_value(&a[..2], &c), None);
    }

    #[test]
    fn autocorrelation_shrinks_the_sample() {
        // The same series looks less certain when its samples are strongly correlated.
        let a = series(1000.0, 60, 0.9, 7);
        let (_, var_mean, n_eff) = summary(&a).unwrap();
        assert!(n_eff < 30.0, "{n_eff}");
        let naive = {
            let m = a.iter().sum::<f64>() / 60.0;
            a.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 59.0 / 60.0
        };
        assert!(var_mean > naive);
    }
}
