//! The HTML report: one self-contained file (inline CSS and SVG, nothing fetched) with every
//! table and four kinds of chart: relative throughput by group, scaling with the queueing
//! bounds, per-second throughput over each step, and latency percentiles.

use std::fmt::Write as _;

use super::charts::{PATTERNS, Series, XAxis, line_chart, ratio_chart};
use super::model::{Dataset, Entry, Group};
use super::render::{cell_text, cell_verdict, esc};
use super::scaling;
use super::tables::{self, Cell, Table};

/// The page with an anchor on every heading and, after its title, a list of contents: each
/// section, and under it each table or chart heading of its own.
fn with_contents(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 4096);
    let mut contents = String::from("<nav class=\"contents\"><b>Contents</b><ul>");
    let mut rest = body;
    let mut n = 0;
    let mut open_sub = false;
    while let Some(at) = rest.find("<h") {
        let level = rest[at + 2..].chars().next();
        let closing = match level {
            Some('2') => "</h2>",
            Some('3') => "</h3>",
            _ => {
                out.push_str(&rest[..at + 2]);
                rest = &rest[at + 2..];
                continue;
            }
        };
        let Some(end) = rest[at..].find(closing) else {
            break;
        };
        let Some(inner_at) = rest[at..].find('>') else {
            break;
        };
        let inner = &rest[at + inner_at + 1..at + end];
        n += 1;
        out.push_str(&rest[..at]);
        let _ = write!(out, "<h{} id=\"s{n}\">{inner}{closing}", &closing[3..4]);
        if closing == "</h2>" {
            if open_sub {
                contents.push_str("</ul>");
                open_sub = false;
            }
            let _ = write!(contents, "<li><a href=\"#s{n}\">{inner}</a></li>");
        } else {
            if !open_sub {
                contents.push_str("<ul>");
                open_sub = true;
            }
            let _ = write!(contents, "<li><a href=\"#s{n}\">{inner}</a></li>");
        }
        rest = &rest[at + end + closing.len()..];
    }
    out.push_str(rest);
    if open_sub {
        contents.push_str("</ul>");
    }
    contents.push_str("</ul></nav>");
    match out.find("</h1>") {
        Some(at) => {
            out.insert_str(at + 5, &contents);
            out
        }
        None => contents + &out,
    }
}

fn html_table(t: &Table) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<h3>{}</h3><table><tr><th>{}</th>",
        esc(&t.title),
        t.label_heading()
    );
    for c in &t.columns {
        let _ = write!(s, "<th>{}</th>", esc(c));
    }
    s.push_str("</tr>");
    if !t.under.is_empty() {
        s.push_str("<tr><th>version</th>");
        for u in &t.under {
            let _ = write!(s, "<th>{}</th>", esc(u));
        }
        s.push_str("</tr>");
    }
    let mut group = None;
    for r in &t.rows {
        if r.group != group && !r.summary {
            group = r.group;
            if let Some(g) = group {
                let _ = write!(
                    s,
                    r#"<tr class="group"><td colspan="{}">{}</td></tr>"#,
                    t.columns.len() + 1,
                    g.title()
                );
            }
        }
        let cls = if r.summary { r#" class="summary""# } else { "" };
        let _ = write!(s, "<tr{cls}><td>{}</td>", esc(&r.label));
        for c in &r.cells {
            let class = match cell_verdict(t.better, c) {
                -1 => " class=\"worse\"",
                1 => " class=\"better\"",
                _ => "",
            };
            let _ = write!(s, "<td{class}>{}</td>", esc(&cell_text(c)));
        }
        s.push_str("</tr>");
    }
    s.push_str("</table>");
    for n in &t.notes {
        let _ = write!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    s
}

/// How many charts of each kind a dataset gives (the browser test counts them).
pub fn chart_count(ds: &Dataset, tables: &[Table]) -> usize {
    let relative = tables
        .iter()
        .filter(|t| t.id == "throughput.relative" && t.columns.len() > 1)
        .count();
    let runs = tables::tests(ds)
        .iter()
        .filter(|(g, _)| *g != Group::Load)
        .count();
    let scaling = scaling_charts(ds).len();
    relative + 2 * runs + scaling + super::series_chart::count(ds)
}

/// The colour and stroke pattern of a run's line in every chart: with several targets (or
/// configurations, or inputs) the column's colour, as in the relative charts, and a pattern per
/// client count; with one, a colour per client count (the columns are then client counts).
fn run_style(ds: &Dataset, e: &Entry) -> (usize, Option<&'static str>) {
    let mut columns: Vec<(&str, &str, &str)> = Vec::new();
    let mut clients: Vec<u32> = Vec::new();
    for x in &ds.entries {
        let k = x.place.column();
        if !columns.contains(&k) {
            columns.push(k);
        }
        if !clients.contains(&x.place.clients) {
            clients.push(x.place.clients);
        }
    }
    clients.sort_unstable();
    let nth_clients = clients
        .iter()
        .position(|c| *c == e.place.clients)
        .unwrap_or(0);
    if columns.len() < 2 {
        return (nth_clients, None);
    }
    let column = columns
        .iter()
        .position(|k| *k == e.place.column())
        .unwrap_or(0);
    (column, PATTERNS[nth_clients % PATTERNS.len()])
}

/// The machine's ceilings of `runs` (where the sweep measured its limits), in transactions a
/// second, as dotted lines in the colour of their configuration.
fn ceiling_series(series: &mut Vec<Series>, runs: &[&Entry], name: &str, color: Option<usize>) {
    for (resource, points) in super::bound::ceilings(runs, 2.0) {
        series.push(Series {
            dashed: true,
            pattern: Some("2,3"),
            color,
            ..Series::line(format!("{name} ceiling: {resource}"), points)
        });
    }
}

fn scaling_charts(ds: &Dataset) -> Vec<String> {
    let clients: std::collections::BTreeSet<u32> =
        ds.entries.iter().map(|e| e.place.clients).collect();
    if clients.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (group, test) in tables::tests(ds) {
        if group == Group::Load {
            continue;
        }
        let mut configs: Vec<(&str, &str, &str)> = Vec::new();
        for e in ds.entries.iter().filter(|e| e.test == test) {
            let k = e.place.column();
            if !configs.contains(&k) {
                configs.push(k);
            }
        }
        let mut series = Vec::new();
        for &(source, target, config) in &configs {
            let mut runs: Vec<&Entry> = ds
                .entries
                .iter()
                .filter(|e| {
                    e.test == test
                        && e.place.column() == (source, target, config)
                        && e.results.is_some()
                })
                .collect();
            runs.sort_by_key(|e| e.place.clients);
            let name = if configs.len() > 1 {
                format!("{target}/{config}")
            } else {
                "tps".into()
            };
            // One point per client count: the median of its repeated runs, and their range.
            let mut points: Vec<(f64, f64)> = Vec::new();
            let mut spread = Vec::new();
            for e in &runs {
                let x = f64::from(e.place.clients);
                if points.iter().any(|(px, _)| *px == x) {
                    continue;
                }
                let tps: Vec<f64> = runs
                    .iter()
                    .filter(|o| o.place.clients == e.place.clients)
                    .filter_map(|o| o.results.as_ref().map(|r| r.tps))
                    .collect();
                points.push((x, super::stats::median_of(&tps).unwrap_or(0.0)));
                let lo = tps.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = tps.iter().copied().fold(0.0, f64::max);
                if hi > lo {
                    spread.push((x, lo, hi));
                }
            }
            let color = runs.first().map(|e| run_style(ds, e).0);
            let Some(b) = scaling::bound_of(&runs) else {
                series.push(Series {
                    color,
                    spread,
                    ..Series::line(name.clone(), points)
                });
                ceiling_series(&mut series, &runs, &name, color);
                continue;
            };
            let m = &b.model;
            let flagged = runs
                .iter()
                .filter_map(|e| {
                    let r = e.results.as_ref()?;
                    scaling::breaks_bound(m, e.place.clients, r.tps, r.latency_ms.avg)
                        .map(|_| (f64::from(e.place.clients), r.tps))
                })
                .collect();
            let max_n = runs.last().map_or(1, |e| e.place.clients);
            let bound = (1..=max_n)
                .map(|n| (f64::from(n), m.x_bound(f64::from(n))))
                .collect();
            series.push(Series {
                color,
                flagged,
                spread,
                ..Series::line(name.clone(), points)
            });
            series.push(Series {
                dashed: true,
                color,
                ..Series::line(
                    format!("{name} bound ({}, N_sat {:.1})", m.bottleneck, m.n_sat()),
                    bound,
                )
            });
            ceiling_series(&mut series, &runs, &name, color);
        }
        out.push(line_chart(
            &format!("{test}: scaling"),
            ("clients", XAxis::Count),
            "transactions/s",
            &series,
        ));
    }
    out
}

/// Under one heading, the ratio chart of every relative table with id `id`. The base column
/// is `--base` where it names one, else the column whose ratios are all 1 (the default base
/// may be the oldest version, not the first column), else the first.
fn relative_charts(body: &mut String, tables: &[Table], id: &str, base: Option<&str>) {
    let relative: Vec<&Table> = tables
        .iter()
        .filter(|t| t.id == id && t.columns.len() > 1)
        .collect();
    if !relative.is_empty() {
        body.push_str("<h2>Relative throughput by group</h2>");
    }
    for t in relative {
        let named = base.and_then(|b| t.columns.iter().position(|c| c == b));
        let ones = (0..t.columns.len()).find(|&i| {
            t.rows.iter().all(|r| match r.cells.get(i) {
                Some(Cell::Ratio(v)) => *v == 1.0,
                Some(Cell::RatioSpread(e)) => e.value == 1.0,
                _ => true,
            })
        });
        body.push_str(&ratio_chart(t, named.or(ones).unwrap_or(0)));
    }
}

/// The whole report page.
pub fn page(ds: &Dataset, tables: &[Table], base: Option<&str>, title: &str) -> String {
    let mut body = String::new();
    let _ = write!(body, "<h1>{}</h1>", esc(title));
    relative_charts(&mut body, tables, "throughput.relative", base);
    body.push_str(&super::series_chart::section(ds));
    scaling_section(&mut body, ds);
    body.push_str(&super::capacity::html(ds));
    let runs: Vec<String> = tables::tests(ds)
        .into_iter()
        .filter(|(g, _)| *g != Group::Load)
        .map(|(_, t)| t)
        .collect();
    body.push_str(
        "<h2>Throughput over each step</h2><p class=\"note\">Each interval's rate; a last \
         interval shorter than half the others (the run's end falls inside it) is left out.</p>\
         <div class=\"grid\">",
    );
    for test in &runs {
        step_charts(&mut body, ds, test);
    }
    body.push_str("</div><h2>Latency percentiles</h2><div class=\"grid\">");
    let pcts = [50.0, 90.0, 95.0, 99.0, 99.9];
    for test in &runs {
        let series = run_series(ds, test, |r| {
            let l = &r.latency_ms;
            Some(
                pcts.iter()
                    .copied()
                    .zip([l.p50, l.p90, l.p95, l.p99, l.p999])
                    .collect(),
            )
        });
        body.push_str(&line_chart(
            &format!("{test}: latency"),
            ("percentile", XAxis::Percentile),
            "ms",
            &series,
        ));
    }
    body.push_str("</div>");
    body.push_str(&super::profile::html(ds, &|e: &Entry| run_label(ds, e)));
    body.push_str("<h2>Tables</h2>");
    for t in tables {
        body.push_str(&html_table(t));
    }
    document(title, &with_contents(&body))
}

/// Throughput and latency against clients, with the queueing-model bound.
fn scaling_section(body: &mut String, ds: &Dataset) {
    let scaling = scaling_charts(ds);
    if scaling.is_empty() {
        return;
    }
    body.push_str("<h2>Scaling, with the queueing-model bound (dashed)</h2>");
    if ds.entries.iter().any(|e| e.repeat > 1) {
        body.push_str(
            "<p class=\"note\">Each point is the median of its repeated runs; its bar spans \
             the lowest to the highest of them.</p>",
        );
    }
    body.push_str("<div class=\"grid\">");
    for c in scaling {
        body.push_str(&c);
    }
    body.push_str("</div>");
}

/// A run's name in a chart's legend: what tells it apart from the others (source, target,
/// configuration, clients, repeat).
fn run_label(ds: &Dataset, e: &Entry) -> String {
    let differs = |f: fn(&Entry) -> &str| ds.entries.iter().any(|x| f(x) != f(e));
    format!(
        "{}{}{} c{}{}",
        if differs(|x| &x.place.source) {
            format!("{}/", e.place.source)
        } else {
            String::new()
        },
        if differs(|x| &x.place.target) {
            format!("{}/", e.place.target)
        } else {
            String::new()
        },
        e.place.config,
        e.place.clients,
        if ds.entries.iter().any(|x| x.repeat > 1) {
            format!(" r{}", e.repeat)
        } else {
            String::new()
        }
    )
}

/// A line per run of `test`, in its target's colour and its client count's pattern; a run
/// whose `points` are None or empty has none.
fn run_series(
    ds: &Dataset,
    test: &str,
    points: impl Fn(&crate::results::Results) -> Option<Vec<(f64, f64)>>,
) -> Vec<Series> {
    ds.entries
        .iter()
        .filter(|e| e.test == test)
        .filter_map(|e| {
            let points = points(e.results.as_ref()?)?;
            let (color, pattern) = run_style(ds, e);
            Some(Series {
                color: Some(color),
                pattern,
                ..Series::line(run_label(ds, e), points)
            })
        })
        .collect()
}

/// A step's throughput over its intervals, in the tables' unit (NOPM for TPC-C, rows/s for
/// scans, queries/s otherwise), and TPC-C's New-Order p90 beside it.
fn step_charts(body: &mut String, ds: &Dataset, test: &str) {
    let first = ds
        .entries
        .iter()
        .find(|e| e.test == test)
        .and_then(|e| e.results.as_ref());
    let (unit, of): (&str, fn(&crate::results::figures::Interval) -> f64) = match first {
        Some(r) if r.tpcc.is_some() => ("NOPM", |i| i.nopm.unwrap_or(0.0)),
        Some(r) if r.workload == "oltp_scan" => ("rows/s", |i| i.rows_per_s),
        _ => ("queries/s", |i| i.qps),
    };
    let series = run_series(ds, test, |r| {
        Some(
            super::stability::full_intervals(r)
                .iter()
                .map(|i| (i.t, of(i)))
                .collect(),
        )
    });
    body.push_str(&line_chart(
        &format!("{test}: per second"),
        ("seconds", XAxis::Plain),
        unit,
        &series,
    ));
    // TPC-C's response-time limit is on New-Order's 90th percentile: its course over the
    // step, beside NOPM's (results files from before it was kept have none).
    let p90 = run_series(ds, test, |r| {
        let points: Vec<(f64, f64)> = super::stability::full_intervals(r)
            .iter()
            .filter_map(|i| Some((i.t, i.new_order_p90_ms?)))
            .collect();
        (!points.is_empty()).then_some(points)
    });
    if !p90.is_empty() {
        body.push_str(&line_chart(
            &format!("{test}: New-Order p90 per second"),
            ("seconds", XAxis::Plain),
            "ms",
            &p90,
        ));
    }
}

/// The one-page summary as HTML: the relative chart of each by-group table (one colour per
/// column, kept in every chart), a series' charts, the capacity searches' charts, then the
/// summary's tables.
pub fn summary_page(ds: &Dataset, tables: &[Table], base: Option<&str>, title: &str) -> String {
    let mut body = String::new();
    let _ = write!(body, "<h1>{}</h1>", esc(title));
    relative_charts(&mut body, tables, "summary.throughput.relative", base);
    body.push_str(&super::series_chart::section(ds));
    // A capacity search's answer is the run's point (its table is in the summary too).
    body.push_str(&super::capacity::html(ds));
    body.push_str("<h2>Tables</h2>");
    for t in tables {
        body.push_str(&html_table(t));
    }
    document(title, &with_contents(&body))
}

/// A page of `body` with the report's style.
fn document(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{}</title><style>\
         body{{font-family:sans-serif;margin:20px;color:#222}}\
         table{{border-collapse:collapse;margin-bottom:8px}}\
         td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right;font-size:12px}}\
         td:first-child,th:first-child{{text-align:left}}\
         tr.group td{{background:#eee;font-style:italic;text-align:left}}\
         tr.summary td{{font-weight:bold}}\
         td.worse{{background:#f8d0d0;color:#900}} td.better{{background:#d0f0d0;color:#060}}\
         .grid{{display:flex;flex-wrap:wrap;gap:8px}} svg.chart{{border:1px solid #ddd}}\
         .note{{font-size:11px;color:#666}}</style></head><body>{body}</body></html>\n",
        esc(title)
    )
}
