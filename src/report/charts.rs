//! The HTML report's SVG charts: lines along client counts or time (with their bounds and
//! patterns), ratios against a base, bars; the palette and the frame they share.

use std::fmt::Write as _;

use super::render::{cell_verdict, esc, nice_max};
use super::tables::{self, Cell, Table};

pub(super) const PALETTE: [&str; 8] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// The colour of series `i`: the palette's eight, then hues spaced by the golden angle, so
/// that no two series of a chart share a colour however many there are.
pub(super) fn color(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => (*c).to_string(),
        None => format!("hsl({:.0},70%,40%)", (i as f64 * 137.508) % 360.0),
    }
}

/// A line series: its name, points, and whether it is a bound (drawn dashed).
pub(super) struct Series {
    pub(super) name: String,
    pub(super) points: Vec<(f64, f64)>,
    pub(super) dashed: bool,
    /// The stroke pattern of a measured line that shares its colour with others (its target's)
    /// and is told apart by it (its client count); None: solid.
    pub(super) pattern: Option<&'static str>,
    /// Palette index; None: the series' own position. A bound shares its configuration's.
    pub(super) color: Option<usize>,
    /// Points to ring in red: measurements that break their model's bound.
    pub(super) flagged: Vec<(f64, f64)>,
    /// Error bars: at x, the lowest and highest of the repeated runs a point is the median of.
    pub(super) spread: Vec<(f64, f64, f64)>,
}

impl Series {
    pub(super) fn line(name: String, points: Vec<(f64, f64)>) -> Series {
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
pub(super) const PLOT_W: f64 = 346.0;
pub(super) const H: f64 = 260.0;
pub(super) const LEFT: f64 = 64.0;
pub(super) const RIGHT: f64 = 150.0;
pub(super) const TOP: f64 = 28.0;
pub(super) const BOTTOM: f64 = 40.0;
/// The legend's line spacing.
pub(super) const LEGEND_ROW: f64 = 14.0;

/// A text's width in the charts' sans-serif at `size` px, from above: 0.62 em a character
/// (wider than the average glyph), so that a box made for it holds it.
pub(super) fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.62
}

/// The stroke patterns that tell apart the client counts of one target in the per-run charts
/// (the first solid); a bound's dash is another.
pub(super) const PATTERNS: [Option<&str>; 5] = [
    None,
    Some("9,3"),
    Some("2,3"),
    Some("9,3,2,3"),
    Some("14,4"),
];

/// How a chart's x axis maps values and labels its ticks.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum XAxis {
    /// Seconds and the like: ticks at round values.
    Plain,
    /// Client counts: whole numbers only.
    Count,
    /// Latency percentiles on the usual HDR axis, 1 / (1 - p): p50, p90, p99 and p99.9 equally
    /// spaced, so that the tail is not squeezed against 99.9.
    Percentile,
}

impl XAxis {
    pub(super) fn map(self, x: f64) -> f64 {
        match self {
            XAxis::Percentile => (1.0 / (1.0 - (x / 100.0).min(0.99999))).log10(),
            _ => x,
        }
    }

    /// The ticks between `lo` and `hi` (in values, not mapped) and their labels.
    pub(super) fn ticks(self, lo: f64, hi: f64) -> Vec<(f64, String)> {
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

pub(super) fn line_chart(
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
pub(super) fn bounds(series: &[Series], axis: XAxis) -> (f64, f64, f64) {
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
pub(super) struct Frame {
    axis: XAxis,
    m_min: f64,
    m_max: f64,
    pw: f64,
    ph: f64,
    y_max: f64,
}

impl Frame {
    pub(super) fn x(&self, x: f64) -> f64 {
        LEFT + (self.axis.map(x) - self.m_min) / (self.m_max - self.m_min).max(1e-12) * self.pw
    }

    pub(super) fn y(&self, y: f64) -> f64 {
        TOP + self.ph - (y.min(self.y_max) / self.y_max) * self.ph
    }
}

/// Series `i`'s line, its points (a few), their spread bars, the points beyond the model's
/// bound, and its legend row.
pub(super) fn draw_series(svg: &mut String, frame: &Frame, i: usize, s: &Series) {
    let color = color(s.color.unwrap_or(i));
    let path: Vec<String> = s
        .points
        .iter()
        .filter(|(_, y)| y.is_finite())
        .map(|&(x, y)| format!("{:.1},{:.1}", frame.x(x), frame.y(y)))
        .collect();
    let dash = match (s.dashed, s.pattern) {
        // A dashed line of its own pattern: a ceiling beside the model's bound.
        (true, Some(p)) => format!(r#" stroke-dasharray="{p}""#),
        (true, None) => r#" stroke-dasharray="5,4""#.to_string(),
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
pub(super) fn ratio_chart(t: &Table, base: usize) -> String {
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
pub(super) fn draw_bars(
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
