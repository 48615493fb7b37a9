//! The HTML report's series charts: for a sweep of three columns or more (a series' builds,
//! oldest first), each test's throughput along the columns, every run a dot (hollow where the
//! machine was busy beside it) over its column's range, a line through the columns' medians, and each change point the
//! changes table names as a dashed line between its columns with its size.

use std::fmt::Write as _;

use super::changes::{self, Plot};
use super::model::Dataset;
use super::render::esc;

const LEFT: f64 = 64.0;
const TOP: f64 = 28.0;
const PLOT_H: f64 = 220.0;
/// A column's width: room for its dots and its label.
const COLUMN_W: f64 = 48.0;
const DOT: &str = "#1f77b4";
const BUSY: &str = "#ff7f0e";
const CHANGE: &str = "#d62728";

/// The section (empty without a series).
pub fn section(ds: &Dataset) -> String {
    let plots = changes::plots(ds);
    if plots.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<h2>Throughput along the series</h2><p class=\"note\">Each dot a run (hollow: measured on \
         a busy machine), a grey bar its column's range, the line through each column's median, a dashed red line at each change \
         point of the changes table with its size (the runs after over the runs before; higher is \
         better).</p><div class=\"grid\">",
    );
    for p in &plots {
        out.push_str(&chart(p));
    }
    out.push_str("</div>");
    // Each change's differential flame graph, where its runs were profiled on both sides.
    for p in &plots {
        for (ch, (before, after)) in p.changes.iter().zip(&p.stacks) {
            if before.is_empty() || after.is_empty() {
                continue;
            }
            let (b, a) = (&p.columns[ch.at - 1], &p.columns[ch.at]);
            let title = format!("{}: {b} -> {a}", p.title);
            let pooled = |files: &[String]| -> Result<String, String> {
                let mut all = String::new();
                for f in files {
                    all.push_str(&crate::metrics::profile::read_stacks(
                        std::path::Path::new(f),
                    )?);
                    if !all.ends_with('\n') {
                        all.push('\n');
                    }
                }
                Ok(all)
            };
            let svg = pooled(before).and_then(|b_stacks| {
                let a_stacks = pooled(after)?;
                crate::metrics::profile::diff_svg(
                    &b_stacks,
                    &a_stacks,
                    &format!("{title} (the runs after against the runs before)"),
                )
            });
            match svg {
                Ok(svg) => super::profile::figure(
                    &mut out,
                    &title,
                    "differential flame graph of the change (red: a bigger share of the samples after it, blue: smaller)",
                    &svg,
                ),
                Err(e) => super::profile::note(&mut out, &title, &e),
            }
        }
    }
    out
}

/// How many charts the section draws.
pub fn count(ds: &Dataset) -> usize {
    changes::plots(ds).len()
}

fn chart(p: &Plot) -> String {
    let n = p.columns.len().max(1);
    let plot_w = (COLUMN_W * n as f64).max(240.0);
    let step = plot_w / n as f64;
    let longest = p
        .columns
        .iter()
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(1) as f64;
    // Labels slant at 40 degrees: their height is about 0.65 of their length.
    let label_h = (longest * 10.0 * 0.62 * 0.65).max(14.0) + 10.0;
    let (w, h) = (LEFT + plot_w + 24.0, TOP + PLOT_H + label_h + 8.0);
    let top_value = p.runs.iter().flatten().map(|(v, _)| *v).fold(0.0, f64::max);
    let y_max = super::render::nice_max(top_value * 1.05);
    let x = |c: usize| LEFT + step * (c as f64 + 0.5);
    let y = |v: f64| TOP + PLOT_H * (1.0 - v / y_max);
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg class="chart" xmlns="http://www.w3.org/2000/svg" width="{w:.0}" height="{h:.0}" viewBox="0 0 {w:.0} {h:.0}"><rect x="0" y="0" width="{w:.0}" height="{h:.0}" fill="#fff"/><text x="{LEFT}" y="16" font-size="13" font-weight="bold">{}: throughput (per second)</text>"##,
        esc(&p.title)
    );
    // The y axis: five ticks from 0 to the top.
    for k in 0..=4 {
        let v = y_max * f64::from(k) / 4.0;
        let yy = y(v);
        let _ = write!(
            svg,
            r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#eee"/><text x="{:.1}" y="{:.1}" font-size="10" text-anchor="end">{}</text>"##,
            LEFT + plot_w,
            LEFT - 4.0,
            yy + 3.0,
            esc(&super::render::num(v))
        );
    }
    let _ = write!(
        svg,
        r##"<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}" stroke="#333"/><line x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#333"/>"##,
        TOP + PLOT_H,
        TOP + PLOT_H,
        LEFT + plot_w,
        TOP + PLOT_H
    );
    // Column labels, slanted.
    for (c, label) in p.columns.iter().enumerate() {
        let (lx, ly) = (x(c), TOP + PLOT_H + 12.0);
        let _ = write!(
            svg,
            r##"<text x="{lx:.1}" y="{ly:.1}" font-size="10" text-anchor="end" transform="rotate(-40 {lx:.1} {ly:.1})">{}</text>"##,
            esc(label)
        );
    }
    // The medians' line.
    let medians: Vec<String> = p
        .runs
        .iter()
        .enumerate()
        .filter_map(|(c, r)| {
            let mut v: Vec<f64> = r.iter().map(|(v, _)| *v).collect();
            v.sort_by(f64::total_cmp);
            let m = match v.len() {
                0 => return None,
                n if n % 2 == 1 => v[n / 2],
                n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
            };
            Some(format!("{:.1},{:.1}", x(c), y(m)))
        })
        .collect();
    let _ = write!(
        svg,
        r##"<polyline fill="none" stroke="{DOT}" stroke-width="1.5" points="{}"/>"##,
        medians.join(" ")
    );
    // Each column's range of runs, as a whisker behind its dots.
    for (c, r) in p.runs.iter().enumerate() {
        let lo = r.iter().map(|(v, _)| *v).fold(f64::INFINITY, f64::min);
        let hi = r.iter().map(|(v, _)| *v).fold(f64::NEG_INFINITY, f64::max);
        if r.len() > 1 {
            let _ = write!(
                svg,
                r##"<line class="range" x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#999"/>"##,
                x(c),
                y(lo),
                y(hi)
            );
        }
    }
    // The runs: spread a little across their column so that equal values stay apart.
    for (c, r) in p.runs.iter().enumerate() {
        let k = r.len().max(1) as f64;
        for (j, (v, busy)) in r.iter().enumerate() {
            let dx = (j as f64 - (k - 1.0) / 2.0) * (step * 0.5 / k).min(6.0);
            let (fill, stroke) = if *busy { ("#fff", BUSY) } else { (DOT, DOT) };
            let _ = write!(
                svg,
                r##"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{fill}" stroke="{stroke}"><title>{}: {}{}</title></circle>"##,
                x(c) + dx,
                y(*v),
                esc(&p.columns[c]),
                esc(&super::render::num(*v)),
                if *busy { " (busy machine)" } else { "" }
            );
        }
    }
    // The change points.
    for ch in &p.changes {
        let cx = LEFT + step * ch.at as f64;
        let _ = write!(
            svg,
            r##"<line class="change" x1="{cx:.1}" y1="{TOP}" x2="{cx:.1}" y2="{:.1}" stroke="{CHANGE}" stroke-dasharray="5,3"/><text x="{:.1}" y="{:.1}" font-size="10" fill="{CHANGE}">{:.3}x</text>"##,
            TOP + PLOT_H,
            cx + 3.0,
            TOP + 10.0,
            ch.size.value
        );
    }
    svg.push_str("</svg>");
    svg
}
