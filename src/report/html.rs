//! The HTML report: one self-contained file (inline CSS and SVG, nothing fetched) with every
//! table and four kinds of chart: relative throughput by group, scaling with the queueing
//! bounds, per-second throughput over each step, and latency percentiles.

use std::fmt::Write as _;

use super::model::{Dataset, Entry, Group};
use super::render::{cell_text, cell_verdict, esc, nice_max};
use super::scaling;
use super::tables::{self, Cell, Table};

const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// The colour of series `i`: the palette's eight, then hues spaced by the golden angle, so
/// that no two series of a chart share a colour however many there are.
fn color(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => (*c).to_string(),
        None => format!("hsl({:.0},70%,40%)", (i as f64 * 137.508) % 360.0),
    }
}

/// A line series: its name, points, and whether it is a bound (drawn dashed).
struct Series {
    name: String,
    points: Vec<(f64, f64)>,
    dashed: bool,
    /// The stroke pattern of a measured line that shares its colour with others (its target's)
    /// and is told apart by it (its client count); None: solid.
    pattern: Option<&'static str>,
    /// Palette index; None: the series' own position. A bound shares its configuration's.
    color: Option<usize>,
    /// Points to ring in red: measurements that break their model's bound.
    flagged: Vec<(f64, f64)>,
    /// Error bars: at x, the lowest and highest of the repeated runs a point is the median of.
    spread: Vec<(f64, f64, f64)>,
}

impl Series {
    fn line(name: String, points: Vec<(f64, f64)>) -> Series {
        Series {
            name,
            points,
            dashed: false,
            pattern: None,
            color: None,
            flagged: Vec::new(),
            spread: Vec::new(),
        }
    }
}

/// The plot's own size and margins; a chart grows beyond them for its title and legend.
const PLOT_W: f64 = 346.0;
const H: f64 = 260.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 150.0;
const TOP: f64 = 28.0;
const BOTTOM: f64 = 40.0;
/// The legend's line spacing.
const LEGEND_ROW: f64 = 14.0;

/// A text's width in the charts' sans-serif at `size` px, from above: 0.62 em a character
/// (wider than the average glyph), so that a box made for it holds it.
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.62
}

/// The stroke patterns that tell apart the client counts of one target in the per-run charts
/// (the first solid); a bound's dash is another.
const PATTERNS: [Option<&str>; 5] = [
    None,
    Some("9,3"),
    Some("2,3"),
    Some("9,3,2,3"),
    Some("14,4"),
];

/// How a chart's x axis maps values and labels its ticks.
#[derive(Clone, Copy, PartialEq)]
enum XAxis {
    /// Seconds and the like: ticks at round values.
    Plain,
    /// Client counts: whole numbers only.
    Count,
    /// Latency percentiles on the usual HDR axis, 1 / (1 - p): p50, p90, p99 and p99.9 equally
    /// spaced, so that the tail is not squeezed against 99.9.
    Percentile,
}

impl XAxis {
    fn map(self, x: f64) -> f64 {
        match self {
            XAxis::Percentile => (1.0 / (1.0 - (x / 100.0).min(0.99999))).log10(),
            _ => x,
        }
    }

    /// The ticks between `lo` and `hi` (in values, not mapped) and their labels.
    fn ticks(self, lo: f64, hi: f64) -> Vec<(f64, String)> {
        match self {
            XAxis::Percentile => [50.0, 90.0, 99.0, 99.9, 99.99]
                .into_iter()
                .filter(|p| *p >= lo - 1e-9 && *p <= hi + 1e-9)
                .map(|p| (p, format!("p{p}")))
                .collect(),
            XAxis::Count | XAxis::Plain => {
                let step = nice_max((hi - lo) / 4.0);
                let step = if self == XAxis::Count {
                    step.max(1.0).round()
                } else {
                    step
                };
                let first = (lo / step).ceil() * step;
                (0..=8)
                    .map(|k| first + step * f64::from(k))
                    .take_while(|v| *v <= hi + step * 1e-9)
                    .map(|v| {
                        let label = if step >= 1.0 {
                            format!("{v:.0}")
                        } else {
                            format!("{v:.1}")
                        };
                        (v, label)
                    })
                    .collect()
            }
        }
    }
}

fn line_chart(
    title: &str,
    (x_label, axis): (&str, XAxis),
    y_label: &str,
    series: &[Series],
) -> String {
    let mut svg = String::new();
    let (x_min, x_max, y_max) = bounds(series, axis);
    let pw = PLOT_W;
    // The legend's column holds its longest name; the chart holds its title and every
    // legend row.
    let right = series
        .iter()
        .map(|s| text_width(&s.name, 10.0) + 42.0)
        .fold(RIGHT, f64::max)
        .ceil();
    let w = (LEFT + pw + right)
        .max(LEFT + text_width(title, 13.0) + 8.0)
        .ceil();
    let h = H.max(TOP + LEGEND_ROW * series.len() as f64 + 8.0).ceil();
    let ph = h - TOP - BOTTOM;
    let (m_min, m_max) = (axis.map(x_min), axis.map(x_max));
    let sx = |x: f64| LEFT + (axis.map(x) - m_min) / (m_max - m_min).max(1e-12) * pw;
    let sy = |y: f64| TOP + ph - (y.min(y_max) / y_max) * ph;
    let _ = write!(
        svg,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}"><rect x="0" y="0" width="{w}" height="{h}" fill="#fff"/><text x="{LEFT}" y="16" font-size="13" font-weight="bold">{}</text>"##,
        esc(title)
    );
    // Axes and grid.
    for i in 0..=4 {
        let y = y_max * f64::from(i) / 4.0;
        let py = sy(y);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" x2="{}" y1="{py:.1}" y2="{py:.1}" stroke="#ddd"/><text x="{}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 4.0,
            py + 3.0,
            super::render::num(y)
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{}" stroke="#333"/><line x1="{LEFT}" x2="{}" y1="{}" y2="{}" stroke="#333"/>"##,
        TOP + ph,
        LEFT + pw,
        TOP + ph,
        TOP + ph
    );
    for (x, label) in axis.ticks(x_min, x_max) {
        let _ = write!(
            svg,
            r#"<text class="tick" x="{:.1}" y="{}" font-size="10" text-anchor="middle">{}</text>"#,
            sx(x),
            TOP + ph + 14.0,
            esc(&label)
        );
    }
    let _ = write!(
        svg,
        r#"<text x="{:.1}" y="{}" font-size="11" text-anchor="middle">{}</text><text x="12" y="{:.1}" font-size="11" transform="rotate(-90 12 {:.1})" text-anchor="middle">{}</text>"#,
        LEFT + pw / 2.0,
        h - 6.0,
        esc(x_label),
        TOP + ph / 2.0,
        TOP + ph / 2.0,
        esc(y_label)
    );
    let frame = Frame {
        axis,
        m_min,
        m_max,
        pw,
        ph,
        y_max,
    };
    for (i, s) in series.iter().enumerate() {
        draw_series(&mut svg, &frame, i, s);
    }
    svg.push_str("</svg>");
    svg
}

/// The ranges a line chart's axes hold: x from its least (0 unless percentiles) to its
/// largest, y from 0 to a round figure above the largest.
fn bounds(series: &[Series], axis: XAxis) -> (f64, f64, f64) {
    let pts = series.iter().flat_map(|s| s.points.iter());
    let (mut x_max, mut y_max) = (0f64, 0f64);
    let mut x_min = f64::INFINITY;
    for &(x, y) in pts {
        x_max = x_max.max(x);
        x_min = x_min.min(x);
        if y.is_finite() {
            y_max = y_max.max(y);
        }
    }
    if !x_min.is_finite() {
        x_min = 0.0;
    }
    let x_min = if axis == XAxis::Percentile {
        x_min
    } else {
        x_min.min(0.0)
    };
    let x_max = if x_max > x_min { x_max } else { x_min + 1.0 };
    let y_max = nice_max(y_max * 1.05);
    (x_min, x_max, y_max)
}

/// Where a line chart's plot area lies: its axes' ranges and its size.
struct Frame {
    axis: XAxis,
    m_min: f64,
    m_max: f64,
    pw: f64,
    ph: f64,
    y_max: f64,
}

impl Frame {
    fn x(&self, x: f64) -> f64 {
        LEFT + (self.axis.map(x) - self.m_min) / (self.m_max - self.m_min).max(1e-12) * self.pw
    }

    fn y(&self, y: f64) -> f64 {
        TOP + self.ph - (y.min(self.y_max) / self.y_max) * self.ph
    }
}

/// Series `i`'s line, its points (a few), their spread bars, the points beyond the model's
/// bound, and its legend row.
fn draw_series(svg: &mut String, frame: &Frame, i: usize, s: &Series) {
    let color = color(s.color.unwrap_or(i));
    let path: Vec<String> = s
        .points
        .iter()
        .filter(|(_, y)| y.is_finite())
        .map(|&(x, y)| format!("{:.1},{:.1}", frame.x(x), frame.y(y)))
        .collect();
    let dash = match (s.dashed, s.pattern) {
        (true, _) => r#" stroke-dasharray="5,4""#.to_string(),
        (false, Some(p)) => format!(r#" stroke-dasharray="{p}""#),
        (false, None) => String::new(),
    };
    let _ = write!(
        svg,
        r#"<polyline fill="none" stroke="{color}" stroke-width="2"{dash} points="{}"/>"#,
        path.join(" ")
    );
    if s.points.len() <= 12 && !s.dashed {
        for p in &path {
            let (x, y) = p.split_once(',').unwrap_or(("0", "0"));
            let _ = write!(svg, r#"<circle cx="{x}" cy="{y}" r="3" fill="{color}"/>"#);
        }
    }
    for &(x, lo, hi) in &s.spread {
        let (px, top, bottom) = (frame.x(x), frame.y(hi), frame.y(lo));
        let _ = write!(
            svg,
            r#"<path class="spread" d="M{:.1},{top:.1}h8M{px:.1},{top:.1}V{bottom:.1}M{:.1},{bottom:.1}h8" stroke="{color}" stroke-width="1.5" fill="none"/>"#,
            px - 4.0,
            px - 4.0,
        );
    }
    for &(x, y) in &s.flagged {
        let _ = write!(
            svg,
            r##"<circle class="model-error" cx="{:.1}" cy="{:.1}" r="7" fill="none" stroke="#d62728" stroke-width="2"><title>above the model's bound: an error of the model</title></circle>"##,
            frame.x(x),
            frame.y(y)
        );
    }
    let ly = TOP + LEGEND_ROW * i as f64 + 8.0;
    let _ = write!(
        svg,
        r#"<line x1="{}" x2="{}" y1="{ly:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="3"{dash}/><text class="legend" x="{}" y="{:.1}" font-size="10">{}</text>"#,
        LEFT + frame.pw + 10.0,
        LEFT + frame.pw + 28.0,
        LEFT + frame.pw + 32.0,
        ly + 3.0,
        esc(&s.name)
    );
}

/// Horizontal bars of ratios (one row per test, one bar per compared column), a line at 1.
/// Each column keeps its colour (by its place among the columns, the same in every chart)
/// and its legend; an axis from 0 with round ticks holds every ratio up to 10 (beyond, the bar
/// stops at the edge with its value printed); each bar's value is printed at its end, with
/// "better" or "worse" only where the difference is established (repeats whose interval
/// leaves out 1), and repeats draw their interval as an error bar.
fn ratio_chart(t: &Table, base: usize) -> String {
    let compared: Vec<usize> = (0..t.columns.len()).filter(|&i| i != base).collect();
    let rows: Vec<&tables::Row> = t.rows.iter().collect();
    let bar_h = 9.0;
    let row_h = bar_h * compared.len().max(1) as f64 + 6.0;
    let label_w = rows
        .iter()
        .map(|r| r.label.chars().count() as f64 * 6.0 + 12.0)
        .fold(120.0, f64::max);
    let plot_w = 360.0;
    let h = TOP + row_h * rows.len() as f64 + 30.0;
    let legend_w = compared
        .iter()
        .map(|&c| t.columns[c].chars().count() as f64 * 6.5 + 40.0)
        .fold(80.0, f64::max);
    // Room for a value and its verdict after the longest bar.
    let value_w = 90.0;
    let w = (label_w + plot_w + value_w + legend_w)
        .max(t.title.chars().count() as f64 * 7.5 + 12.0)
        .ceil();
    let top_value = rows
        .iter()
        .flat_map(|r| r.cells.iter())
        .filter_map(|c| match c {
            Cell::Ratio(v) => Some(*v),
            Cell::RatioSpread(e) => Some(e.hi),
            _ => None,
        })
        .filter(|v| v.is_finite())
        .fold(1.0, f64::max);
    let max = nice_max(top_value.min(10.0));
    let sx = |r: f64| label_w + r.clamp(0.0, max) / max * plot_w;
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h:.0}" viewBox="0 0 {w} {h:.0}"><rect x="0" y="0" width="{w}" height="{h:.0}" fill="#fff"/><text x="4" y="16" font-size="13" font-weight="bold">{}</text>"##,
        esc(&t.title)
    );
    // Round ticks from 0: 5 to 10 of them.
    let step = nice_max(max / 8.0);
    let mut tick = 0.0;
    while tick <= max + 1e-9 {
        let x = sx(tick);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="{TOP}" y2="{:.1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"##,
            h - 26.0,
            h - 12.0,
            super::render::num(tick)
        );
        tick += step;
    }
    for (i, r) in rows.iter().enumerate() {
        let y0 = TOP + row_h * i as f64;
        let weight = if r.summary { "bold" } else { "normal" };
        let _ = write!(
            svg,
            r#"<text x="{}" y="{:.1}" font-size="10" text-anchor="end" font-weight="{weight}">{}</text>"#,
            label_w - 6.0,
            y0 + row_h / 2.0 + 3.0,
            esc(&r.label)
        );
        draw_bars(&mut svg, t, r, &compared, (y0, bar_h, label_w), &sx);
    }
    let x1 = sx(1.0);
    let _ = write!(
        svg,
        r##"<line x1="{x1:.1}" x2="{x1:.1}" y1="{TOP}" y2="{:.1}" stroke="#000" stroke-dasharray="3,3"/>"##,
        h - 26.0,
    );
    let legend_x = label_w + plot_w + value_w;
    for (k, &c) in compared.iter().enumerate() {
        let _ = write!(
            svg,
            r#"<rect x="{legend_x}" y="{:.1}" width="12" height="8" fill="{}"/><text class="legend" x="{}" y="{:.1}" font-size="10">{}</text>"#,
            TOP + 14.0 * k as f64,
            color(c),
            legend_x + 16.0,
            TOP + 14.0 * k as f64 + 8.0,
            esc(&t.columns[c])
        );
    }
    svg.push_str("</svg>");
    svg
}

/// A row's bars, one per compared column at `y0`, each with its interval and its value.
fn draw_bars(
    svg: &mut String,
    t: &Table,
    r: &tables::Row,
    compared: &[usize],
    (y0, bar_h, label_w): (f64, f64, f64),
    sx: &dyn Fn(f64) -> f64,
) {
    for (k, &c) in compared.iter().enumerate() {
        let (v, cell) = match r.cells.get(c) {
            Some(cell @ Cell::Ratio(v)) => (*v, cell),
            Some(cell @ Cell::RatioSpread(e)) => (e.value, cell),
            _ => continue,
        };
        let y = y0 + 3.0 + bar_h * k as f64;
        let _ = write!(
            svg,
            r#"<rect x="{label_w}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"/>"#,
            sx(v) - label_w,
            bar_h - 1.0,
            color(c)
        );
        let mut end = sx(v);
        if let Cell::RatioSpread(e) = cell {
            let (lo, hi) = (sx(e.lo), sx(e.hi));
            let ym = y + (bar_h - 1.0) / 2.0;
            let _ = write!(
                svg,
                r##"<line class="interval" x1="{lo:.1}" x2="{hi:.1}" y1="{ym:.1}" y2="{ym:.1}" stroke="#000" stroke-width="1"/>"##
            );
            end = end.max(hi);
        }
        let verdict = match cell_verdict(t.better, cell) {
            -1 => " worse",
            1 => " better",
            _ => "",
        };
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="9">{}{verdict}</text>"#,
            end + 3.0,
            y + bar_h - 2.0,
            super::render::ratio(v)
        );
    }
}

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
                    ..Series::line(name, points)
                });
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
/// column, kept in every chart), a series' charts, then the summary's tables.
pub fn summary_page(ds: &Dataset, tables: &[Table], base: Option<&str>, title: &str) -> String {
    let mut body = String::new();
    let _ = write!(body, "<h1>{}</h1>", esc(title));
    relative_charts(&mut body, tables, "summary.throughput.relative", base);
    body.push_str(&super::series_chart::section(ds));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_colours_do_not_repeat_beyond_the_palette() {
        let colours: Vec<String> = (0..40).map(color).collect();
        let distinct: std::collections::BTreeSet<&String> = colours.iter().collect();
        assert_eq!(distinct.len(), colours.len(), "{colours:?}");
    }
}
