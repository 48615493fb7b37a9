//! Capacity searches (`dbsweep capacity`): a table per search, a row per probe, its rate
//! against its percentile with the limit marked; the answer and the queueing model's bound in
//! the title, and a contradiction of the model said.

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

pub fn tables(ds: &Dataset) -> Vec<Table> {
    ds.entries
        .iter()
        .filter_map(|e| {
            let r = e.results.as_ref()?;
            let c = r.capacity.as_ref()?;
            let p = &e.place;
            let mut probes: Vec<_> = c.probes.iter().collect();
            // By rate, the closed loop last: the limit's crossing reads top to bottom.
            probes.sort_by(|a, b| {
                a.rate_per_s
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&b.rate_per_s.unwrap_or(f64::INFINITY))
            });
            let rows = probes
                .iter()
                .map(|pr| Row {
                    group: Some(e.group),
                    label: pr
                        .rate_per_s
                        .map_or("closed loop".into(), |r| format!("{r:.1}/s")),
                    summary: false,
                    cells: vec![
                        Cell::Num(pr.tps),
                        Cell::Num(pr.percentile_ms),
                        Cell::Text(if pr.percentile_ms <= c.limit_ms {
                            "under".into()
                        } else {
                            "OVER".into()
                        }),
                        Cell::Count(pr.errors),
                        Cell::Text(
                            if pr.rate_per_s.is_some() && pr.rate_per_s == c.rate_per_s {
                                format!("{} <- the answer", pr.verdict)
                            } else {
                                pr.verdict.clone()
                            },
                        ),
                    ],
                })
                .collect();
            let mut notes = vec![format!(
                "each probe's rate asked (open loop; the closed loop is the same clients flat out) against its p{} latency from each event's schedule; the limit is {} ms: under it or OVER; the answer is the highest rate under it that kept its rate without errors; the queueing model's bound is {} ({})",
                c.percentile,
                c.limit_ms,
                c.bound_per_s
                    .map_or("none".into(), |b| format!("{b:.1} events/s")),
                c.bound_from
            )];
            if let Some(x) = &c.contradiction {
                notes.push(format!("MODEL ERROR: {x}"));
            }
            Some(Table {
                id: format!("capacity-{}-{}-{}-c{}", e.test, p.target, p.config, p.clients),
                title: format!(
                    "Capacity of {} on {}/{} under p{} <= {} ms: {} (higher is better)",
                    e.test,
                    p.target,
                    p.config,
                    c.percentile,
                    c.limit_ms,
                    c.rate_per_s
                        .map_or("no rate probed kept it".into(), |r| format!("{r:.1} events/s"))
                ),
                better: None,
                columns: [
                    "done /s",
                    &format!("p{} ms", c.percentile),
                    "limit",
                    "errors",
                    "verdict",
                ]
                .map(String::from)
                .to_vec(),
                under: Vec::new(),
                rows,
                notes,
            })
        })
        .collect()
}

/// How far above the limit a probe's percentile is drawn: past it, at it (the table has the
/// figure), so that the rates near the limit are not squeezed against the axis.
const CHART_CAP: f64 = 3.0;

/// The HTML report's charts of the capacity searches: each search's probes, their percentile
/// against the rate they did, with the limit, the answer and the queueing model's bound.
pub fn html(ds: &Dataset) -> String {
    use super::charts::{Series, XAxis, line_chart};
    let mut charts = Vec::new();
    for e in &ds.entries {
        let Some(c) = e.results.as_ref().and_then(|r| r.capacity.as_ref()) else {
            continue;
        };
        let cap = c.limit_ms * CHART_CAP;
        let at = |p: &crate::results::figures::CapacityProbe| (p.tps, p.percentile_ms.min(cap));
        let mut open: Vec<(f64, f64)> = c
            .probes
            .iter()
            .filter(|p| p.rate_per_s.is_some())
            .map(at)
            .collect();
        open.sort_by(|a, b| a.0.total_cmp(&b.0));
        let done: Vec<f64> = c.probes.iter().map(|p| p.tps).collect();
        let (lo, hi) = done.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
        if open.is_empty() || !lo.is_finite() {
            continue;
        }
        let pct = c.percentile;
        let mut series = vec![Series::line(
            format!(
                "open-loop probes: p{pct} against the rate done (past {CHART_CAP}x the limit: at it)"
            ),
            open,
        )];
        let closed: Vec<(f64, f64)> = c
            .probes
            .iter()
            .filter(|p| p.rate_per_s.is_none())
            .map(at)
            .collect();
        if !closed.is_empty() {
            series.push(Series::line("the closed loop (flat out)".into(), closed));
        }
        if let Some(answer) = c
            .probes
            .iter()
            .find(|p| p.rate_per_s.is_some() && p.rate_per_s == c.rate_per_s)
        {
            series.push(Series::line(
                format!(
                    "the answer: {:.1} events/s",
                    answer.rate_per_s.unwrap_or(0.0)
                ),
                vec![at(answer)],
            ));
        }
        let mut limit = Series::line(
            format!("the limit: p{pct} {} ms (lower is better)", c.limit_ms),
            vec![(lo, c.limit_ms), (hi.max(lo), c.limit_ms)],
        );
        limit.dashed = true;
        series.push(limit);
        if let Some(b) = c.bound_per_s {
            let mut bound = Series::line(
                format!("the queueing model's bound: {b:.1} events/s"),
                vec![(b, 0.0), (b, cap)],
            );
            bound.dashed = true;
            series.push(bound);
        }
        let p = &e.place;
        charts.push(line_chart(
            &format!(
                "Capacity of {} on {}/{} c{}: p{pct} latency against rate",
                e.test, p.target, p.config, p.clients
            ),
            ("events/s done", XAxis::Plain),
            &format!("p{pct} ms"),
            &series,
        ));
    }
    if charts.is_empty() {
        return String::new();
    }
    format!(
        "<h2>Capacity searches</h2><p class=\"note\">Each probe's latency percentile (from each \
         event's schedule) against the rate it did; the highest open-loop rate under the limit \
         that kept its rate is the answer.</p><div class=\"grid\">{}</div>",
        charts.concat()
    )
}
