//! Tables as text (aligned, optionally coloured), markdown, CSV (long form: one value per line,
//! for spreadsheets and scripts) and JSON.

use std::fmt::Write as _;

use super::tables::{Better, Cell, Table};

/// Text made safe inside HTML and SVG: markup characters as entities.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A number with as many decimals as its size deserves.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.4}")
    } else {
        format!("{v:.2e}")
    }
}

/// A time given in milliseconds, with its unit: `5.40 us` below a millisecond, `12.3 ms` above.
pub fn millis(ms: f64) -> String {
    if ms != 0.0 && ms.abs() < 1.0 {
        format!("{} us", num(ms * 1000.0))
    } else {
        format!("{} ms", num(ms))
    }
}

pub fn ratio(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.2}")
    } else {
        "inf".into()
    }
}

/// A cell's verdict (+1 better, -1 worse, 0 neither) by the table's direction: only a ratio
/// of repeated runs whose interval leaves out 1 is a difference; a single run's ratio, however
/// far from 1, cannot tell a difference from run-to-run noise.
pub fn cell_verdict(better: Option<Better>, c: &Cell) -> i8 {
    match c {
        Cell::RatioSpread(e) if e.excludes_one() => {
            let up = if e.lo > 1.0 { 1 } else { -1 };
            match better {
                Some(Better::Higher) => up,
                Some(Better::Lower) => -up,
                None => 0,
            }
        }
        _ => 0,
    }
}

/// Whether a cell is a ratio that stands out (whichever way): an established difference.
fn stands_out(c: &Cell) -> bool {
    match c {
        Cell::RatioSpread(e) => e.excludes_one(),
        _ => false,
    }
}

/// The client count a CSV value was measured at, for filtering in a spreadsheet: the table's
/// (its title ends "at N client(s)") or the column's (`cN` where the client counts are the
/// columns); empty where neither says.
fn clients_of(t: &Table, column: &str) -> String {
    if let Some(at) = t.title.rfind(" at ") {
        let n: String = t.title[at + 4..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !n.is_empty() && t.title[at + 4 + n.len()..].starts_with(" client(s)") {
            return n;
        }
    }
    match column.strip_prefix('c') {
        Some(n) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => n.to_string(),
        _ => String::new(),
    }
}

pub fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Num(v) => num(*v),
        Cell::Count(n) => n.to_string(),
        Cell::Ratio(v) => ratio(*v),
        Cell::Text(t) => t.clone(),
        Cell::Missing => "-".into(),
        Cell::Spread(e) => format!("{} [{}, {}]", num(e.value), num(e.lo), num(e.hi)),
        Cell::RatioSpread(e) => format!("{} [{}, {}]", ratio(e.value), ratio(e.lo), ratio(e.hi)),
    }
}

/// The widest a text table's column is padded to: a longer name (a results file's, which can
/// hold anything) is printed whole past it, unaligned, rather than padding every row to it.
pub const WIDTH_MAX: usize = 160;

/// Where a table without columns (a list of warnings) wraps its lines.
const WRAP_AT: usize = 100;

/// `text` broken at spaces into lines of at most `width` characters (a word longer than that
/// stays whole), the lines after the first indented by `indent`.
fn wrapped(text: &str, width: usize, indent: &str) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            out.push_str(indent);
            line = indent.len();
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out
}

/// Aligned columns; group headings; with `color`, ratios that stand out in red or green.
pub fn text(tables: &[Table], color: bool) -> String {
    let mut out = String::new();
    for t in tables {
        let _ = writeln!(out, "{}", t.title);
        let _ = writeln!(out, "{}", "=".repeat(t.title.chars().count().min(100)));
        let label_w = t
            .rows
            .iter()
            .map(|r| r.label.chars().count())
            .chain([4])
            .max()
            .unwrap_or(4)
            .min(WIDTH_MAX)
            // A list (no columns) pads nothing: its lines wrap instead.
            .min(if t.columns.is_empty() { 0 } else { usize::MAX });
        let widths: Vec<usize> = t
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                t.rows
                    .iter()
                    .filter_map(|r| r.cells.get(i))
                    .map(|c| cell_text(c).chars().count())
                    .chain([c.chars().count()])
                    .chain(t.under.get(i).map(|u| u.chars().count()))
                    .max()
                    .unwrap_or(1)
                    .min(WIDTH_MAX)
            })
            .collect();
        let _ = write!(out, "{:<label_w$}", t.label_heading());
        for (c, w) in t.columns.iter().zip(&widths) {
            let _ = write!(out, "  {c:>w$}");
        }
        out.push('\n');
        if !t.under.is_empty() {
            let _ = write!(out, "{:<label_w$}", "version");
            for (u, w) in t.under.iter().zip(&widths) {
                let _ = write!(out, "  {u:>w$}");
            }
            out.push('\n');
        }
        let mut group = None;
        for r in &t.rows {
            if r.group != group && !r.summary {
                group = r.group;
                if let Some(g) = group {
                    let _ = writeln!(out, "-- {}", g.title());
                }
            }
            if t.columns.is_empty() {
                // A list (the warnings): each line wrapped, none padded to the longest.
                out.push_str(&wrapped(&r.label, WRAP_AT, "    "));
                out.push('\n');
                continue;
            }
            let _ = write!(out, "{:<label_w$}", r.label);
            for (c, w) in r.cells.iter().zip(&widths) {
                let s = cell_text(c);
                let paint = match cell_verdict(t.better, c) {
                    -1 if color => Some("\x1b[31m"),
                    1 if color => Some("\x1b[32m"),
                    _ => None,
                };
                match paint {
                    Some(code) => {
                        let _ = write!(out, "  {code}{s:>w$}\x1b[0m");
                    }
                    None => {
                        let _ = write!(out, "  {s:>w$}");
                    }
                }
            }
            out.push('\n');
        }
        for n in &t.notes {
            let _ = writeln!(out, "({n})");
        }
        out.push('\n');
    }
    out
}

/// GitHub-flavoured markdown; ratios that stand out in bold (the value says which way).
pub fn markdown(tables: &[Table]) -> String {
    let mut out = String::new();
    let esc = |s: &str| s.replace('|', "\\|");
    for t in tables {
        let _ = writeln!(out, "### {}\n", esc(&t.title));
        let _ = write!(out, "| {} |", t.label_heading());
        for c in &t.columns {
            let _ = write!(out, " {} |", esc(c));
        }
        out.push('\n');
        let _ = write!(out, "|---|");
        for _ in &t.columns {
            out.push_str("---:|");
        }
        out.push('\n');
        let mut group = None;
        for r in &t.rows {
            if r.group != group && !r.summary {
                group = r.group;
                if let Some(g) = group {
                    let _ = write!(out, "| *{}* |", g.title());
                    out.push_str(&" |".repeat(t.columns.len()));
                    out.push('\n');
                }
            }
            let label = if r.summary {
                format!("**{}**", esc(&r.label))
            } else {
                esc(&r.label)
            };
            let _ = write!(out, "| {label} |");
            for c in &r.cells {
                let s = esc(&cell_text(c));
                if stands_out(c) {
                    let _ = write!(out, " **{s}** |");
                } else {
                    let _ = write!(out, " {s} |");
                }
            }
            out.push('\n');
        }
        for n in &t.notes {
            let _ = writeln!(out, "\n_{}_", esc(n));
        }
        out.push('\n');
    }
    out
}

/// One CSV field: quoted where it holds a comma, a quote or a line break; and a name that a
/// spreadsheet would take for a formula (`=cmd|' /C calc'!A0`, `+`, `-`, `@`, a tab or a
/// carriage return first: builds, targets and versions come from results files and
/// registries) gets a `'` first, as spreadsheet users expect. Numbers (`-1.5`) stay numbers.
pub(crate) fn csv_field(s: &str) -> String {
    let formula =
        s.starts_with(['=', '+', '-', '@', '\t', '\r']) && s.len() > 1 && s.parse::<f64>().is_err();
    let s = if formula {
        std::borrow::Cow::Owned(format!("'{s}"))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.into_owned()
    }
}

/// One line per value: table, title, group, test, column, value.
pub fn csv(tables: &[Table]) -> String {
    let mut out = String::from("table,title,group,test,column,clients,value,lo,hi\n");
    let number = |v: f64| {
        if v.is_finite() {
            v.to_string()
        } else {
            "inf".into()
        }
    };
    for t in tables {
        for r in &t.rows {
            for (c, cell) in t.columns.iter().zip(&r.cells) {
                let (value, lo, hi) = match cell {
                    Cell::Num(v) | Cell::Ratio(v) => (number(*v), String::new(), String::new()),
                    Cell::Count(n) => (n.to_string(), String::new(), String::new()),
                    Cell::Text(s) => (s.clone(), String::new(), String::new()),
                    Cell::Missing => (String::new(), String::new(), String::new()),
                    Cell::Spread(e) | Cell::RatioSpread(e) => {
                        (number(e.value), number(e.lo), number(e.hi))
                    }
                };
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{lo},{hi}",
                    csv_field(&t.id),
                    csv_field(&t.title),
                    r.group.map_or("", |g| g.title()),
                    csv_field(&r.label),
                    csv_field(c),
                    clients_of(t, c),
                    csv_field(&value)
                );
            }
        }
    }
    out
}

pub fn json(tables: &[Table]) -> String {
    let mut s = serde_json::to_string_pretty(tables).expect("tables serialise");
    s.push('\n');
    s
}

/// The round value (1, 2, 2.5 or 5 times a power of ten) at or above `v`: a chart axis's top.
pub fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= v {
            return m * p;
        }
    }
    10.0 * p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tables::{Row, Table};

    #[test]
    fn long_lines_of_a_list_wrap_and_nothing_is_padded() {
        let long = "word ".repeat(60);
        let w = wrapped(long.trim_end(), 30, "  ");
        assert!(
            w.lines()
                .all(|l| l.chars().count() <= 30 && !l.ends_with(' ')),
            "{w}"
        );
        assert_eq!(w.split_whitespace().count(), 60);
        assert!(w.lines().skip(1).all(|l| l.starts_with("  ")));
        let t = Table {
            id: "w".into(),
            title: "Warnings".into(),
            better: None,
            columns: Vec::new(),
            under: Vec::new(),
            notes: Vec::new(),
            rows: [long.trim_end(), "short"]
                .iter()
                .map(|l| Row {
                    group: None,
                    label: l.to_string(),
                    summary: false,
                    cells: Vec::new(),
                })
                .collect(),
        };
        let text = text(&[t], false);
        assert!(text.lines().any(|l| l == "short"), "{text}");
        assert!(text.lines().all(|l| l.chars().count() <= WRAP_AT), "{text}");
    }
}
