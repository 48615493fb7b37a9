//! `dbsweep compare A B`: test by test, throughput and latency of two runs, the relative change,
//! and whether it is more than noise.
//!
//! The samples are runs, not seconds: the per-second throughputs of one run share its server
//! start, its data files' layout and the machine's state, so they say nothing of how a second
//! run would differ, and a test on them calls a run's luck a regression. With one run a side
//! the change is shown and called what it is, not significant; with repeats (`--repeat 3`)
//! the change is the Hodges-Lehmann ratio of B's runs over A's with its Mann-Whitney interval,
//! as the report's relative tables give it, and it is a difference when the interval leaves
//! out no change.

use std::fmt::Write as _;

use super::model::{Dataset, Entry};
use super::render::num;

#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub test: String,
    /// `target/config cN`.
    pub place: String,
    /// The medians of each side's runs.
    pub a: f64,
    pub b: f64,
    /// (B / A - 1) in percent: the Hodges-Lehmann ratio with repeats, else of the two runs.
    pub change_pct: f64,
    /// With repeats on both sides: the change's interval in percent and its confidence.
    pub interval: Option<(f64, f64, f64)>,
    /// The runs of each side.
    pub runs: (usize, usize),
    /// The interval leaves out 0% (never with one run a side).
    pub significant: bool,
    /// A run of either side was measured on a busy machine: never significant.
    pub busy: bool,
    pub a_p95_ms: Option<f64>,
    pub b_p95_ms: Option<f64>,
    /// How the two did not run alike: the step's place in its plan, the server's version, the
    /// workload's options.
    pub unlike: Vec<String>,
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
pub struct Comparison {
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
) -> Comparison {
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
    let mut out = Comparison::default();
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
        let repeated = all_a.len() > 1 && all_b.len() > 1;
        // A run measured on a busy machine: its change is shown, never called significant.
        let busy = runs_a.iter().chain(&runs_b).any(|e| {
            e.hw()
                .and_then(|h| h.beside.as_ref())
                .is_some_and(|b| b.busy)
        });
        let estimate = super::stats::ratio(&all_b, &all_a)
            .filter(|_| repeated)
            .map(|e| super::stats::Estimate { busy, ..e });
        let change = |r: f64| r.mul_add(100.0, -100.0);
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
            change_pct: change(estimate.map_or(super::stats::ratio_of(tb, ta), |e| e.value)),
            interval: estimate.map(|e| (change(e.lo), change(e.hi), e.confidence)),
            runs: (all_a.len(), all_b.len()),
            significant: estimate.is_some_and(|e| e.excludes_one()),
            busy,
            a_p95_ms: ea.results.as_ref().map(|r| r.latency_ms.p95),
            b_p95_ms: eb.results.as_ref().map(|r| r.latency_ms.p95),
            unlike: unlike(ea, eb, by_target)
                .into_iter()
                .chain(busy_runs("A", &runs_a))
                .chain(busy_runs("B", &runs_b))
                .collect(),
        });
    }
    out
}

/// The runs of a side measured on a busy machine, a line each.
fn busy_runs(side: &str, runs: &[&Entry]) -> Vec<String> {
    runs.iter()
        .filter_map(|e| {
            let b = e.hw()?.beside.as_ref().filter(|b| b.busy)?;
            Some(format!(
                "{side} run {} measured on a busy machine ({})",
                e.repeat.max(1),
                b.describe()
            ))
        })
        .collect()
}

/// How two runs of a test did not run alike: the step's position in its plan (after the
/// writes in one sweep, after the load in the other), the server's version where the columns
/// did not choose different targets, and the workload's options (rows, range size, time ...).
fn unlike(a: &Entry, b: &Entry, same_target: bool) -> Vec<String> {
    let mut out = Vec::new();
    if a.order != b.order {
        out.push(format!("step {} in A, {} in B", a.order, b.order));
    }
    let (Some(ra), Some(rb)) = (&a.results, &b.results) else {
        return out;
    };
    if same_target && ra.target.version != rb.target.version {
        out.push(format!(
            "version {} in A, {} in B",
            ra.target.version, rb.target.version
        ));
    }
    // Seeds, URLs and the progress interval differ between any two runs without changing
    // what they measure.
    const SAME_WORK: [&str; 4] = ["rand_seed", "target", "report_interval", "threads"];
    if let (Some(oa), Some(ob)) = (ra.options.as_object(), rb.options.as_object()) {
        for (k, va) in oa {
            let vb = ob.get(k).unwrap_or(&serde_json::Value::Null);
            if !SAME_WORK.contains(&k.as_str()) && va != vb {
                out.push(format!("{k} {va} in A, {vb} in B"));
            }
        }
    }
    out
}

/// The tests not compared, in one line after the table: how many, and the first few of each
/// side by name.
pub fn skipped_text(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let few = |side: char| -> String {
        let tail = format!("only in {side}");
        let names: Vec<&str> = skipped
            .iter()
            .filter_map(|s| s.strip_suffix(&tail))
            .map(|s| s.trim_end_matches(": "))
            .collect();
        if names.is_empty() {
            return String::new();
        }
        let shown = names.iter().take(3).copied().collect::<Vec<_>>().join(", ");
        let more = names.len().saturating_sub(3);
        format!(
            "{} only in {side}: {shown}{}",
            names.len(),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        )
    };
    let others = skipped
        .iter()
        .filter(|s| !s.ends_with("only in A") && !s.ends_with("only in B"))
        .count();
    let mut parts: Vec<String> = [few('A'), few('B')]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect();
    if others > 0 {
        parts.push(format!("{others} without a throughput"));
    }
    format!("\nnot compared ({}): {}\n", skipped.len(), parts.join("; "))
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
    let single = rows.iter().filter(|r| r.interval.is_none()).count();
    let _ = writeln!(
        out,
        "change = B / A - 1 (higher throughput is better); with repeats on both sides the Hodges-Lehmann change of the runs [its Mann-Whitney interval, and the interval's confidence], a difference when the interval leaves out 0%"
    );
    if single > 0 {
        let _ = writeln!(
            out,
            "{single} test(s) with one run a side: no run-to-run variance, so not significant however large the change; repeat the runs (--repeat 3) to tell a difference from noise"
        );
    }
    out.push('\n');
    let tw = rows
        .iter()
        .map(|r| r.test.len())
        .chain([4])
        .max()
        .unwrap_or(4)
        .min(super::render::WIDTH_MAX);
    let pw = rows
        .iter()
        .map(|r| r.place.len())
        .chain([5])
        .max()
        .unwrap_or(5)
        .min(super::render::WIDTH_MAX);
    // p95 in microseconds when every one is below a millisecond (embedded SQLite).
    let micro = rows
        .iter()
        .flat_map(|r| [r.a_p95_ms, r.b_p95_ms])
        .flatten()
        .all(|v| v < 1.0);
    let (unit, scale) = if micro { ("us", 1000.0) } else { ("ms", 1.0) };
    let change = |r: &Row| match r.interval {
        Some((lo, hi, conf)) => format!(
            "{:+.1}% [{lo:+.1}, {hi:+.1}] {:.0}%",
            r.change_pct,
            conf * 100.0
        ),
        None => format!("{:+.1}%", r.change_pct),
    };
    let cw = rows
        .iter()
        .map(|r| change(r).len())
        .chain([6])
        .max()
        .unwrap_or(6);
    let _ = writeln!(
        out,
        "{:<tw$}  {:<pw$}  {:>10}  {:>10}  {:>4}  {:<cw$}  {:<16}  {:>9}  {:>9}",
        "test",
        "where",
        "A",
        "B",
        "runs",
        "change",
        "verdict",
        format!("A p95 {unit}"),
        format!("B p95 {unit}")
    );
    for r in rows {
        let verdict = match (r.interval, r.significant) {
            (None, _) => "not significant",
            (_, false) if r.busy => "busy machine",
            (_, false) => "noise",
            (_, true) if r.change_pct < 0.0 => "REGRESSION",
            (_, true) => "improvement",
        };
        let _ = writeln!(
            out,
            "{:<tw$}  {:<pw$}  {:>10}  {:>10}  {:>4}  {:<cw$}  {:<16}  {:>9}  {:>9}",
            r.test,
            r.place,
            num(r.a),
            num(r.b),
            format!("{}/{}", r.runs.0, r.runs.1),
            change(r),
            verdict,
            r.a_p95_ms.map_or("-".into(), |v| num(v * scale)),
            r.b_p95_ms.map_or("-".into(), |v| num(v * scale)),
        );
    }
    let unlike: Vec<String> = rows
        .iter()
        .filter(|r| !r.unlike.is_empty())
        .map(|r| format!("{} ({}): {}", r.test, r.place, r.unlike.join(", ")))
        .collect();
    if !unlike.is_empty() {
        let _ = writeln!(
            out,
            "\nWarning: {} pair(s) did not run alike, so their change is not the change between A and B alone:",
            unlike.len()
        );
        for u in unlike {
            let _ = writeln!(out, "  {u}");
        }
    }
    out
}
