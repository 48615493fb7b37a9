//! The on-CPU profiles of the server (`--profile`): a "top functions" table per slice, and in
//! the HTML report each step's flame graph with a differential one against the first column.

use std::fmt::Write;

use base64::Engine;

use super::model::{Dataset, Entry};
use super::tables::{Cell, Row, Table, layout, per_column, tests};
use crate::metrics::profile::{self};
use crate::results::diagnosis::Profile;

/// Functions shown per test: the most self share in any column.
const TOP: usize = 8;

/// One table per slice with profiles: rows are a test's hottest functions (by self share in any
/// column), cells their self share in percent (total share in the notes' sense is in the
/// results).
pub fn tables(ds: &Dataset) -> Vec<Table> {
    let mut out = Vec::new();
    for slice in layout(ds) {
        let mut rows = Vec::new();
        for (group, test) in tests(ds) {
            let profiles = per_column(ds, &slice, &test, |r| r.profile.as_ref());
            if profiles.iter().all(Option::is_none) {
                continue;
            }
            let mut names: Vec<(&str, f64)> = Vec::new();
            for p in profiles.iter().flatten() {
                for f in &p.functions {
                    match names.iter_mut().find(|(n, _)| *n == f.function) {
                        Some((_, best)) => *best = best.max(f.self_share),
                        None => names.push((&f.function, f.self_share)),
                    }
                }
            }
            names.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(b.0)));
            for (name, _) in names.into_iter().take(TOP) {
                let cells = profiles
                    .iter()
                    .map(|p| match p {
                        None => Cell::Missing,
                        Some(p) => Cell::Num(
                            p.functions
                                .iter()
                                .find(|f| f.function == name)
                                .map_or(0.0, |f| f.self_share * 100.0),
                        ),
                    })
                    .collect();
                rows.push(Row {
                    group: Some(group),
                    label: format!("{test}: {name}"),
                    summary: false,
                    cells,
                });
            }
        }
        if rows.is_empty() {
            continue;
        }
        out.push(Table {
            id: "profile".into(),
            title: format!(
                "Top functions of the server's on-CPU profile{} (self share of samples, %)",
                slice.suffix
            ),
            better: None,
            columns: slice.columns.iter().map(|(l, _)| l.clone()).collect(),
            under: Vec::new(),
            rows,
            notes: vec![
                "perf samples of the server's processes over the measured part; self = the function was running, not a caller (0: not among its kept functions); [binary] = no symbol, _[k] = kernel; the HTML report has each step's flame graph"
                    .into(),
            ],
        });
    }
    out
}

/// The HTML section: per test, each column's flame graph, and for the columns after the first
/// a differential flame graph against it (red: a bigger share of the samples, blue: smaller).
pub fn html(ds: &Dataset, label: &dyn Fn(&Entry) -> String) -> String {
    let mut body = String::new();
    for (_, test) in tests(ds) {
        let entries: Vec<(&Entry, &Profile)> = ds
            .entries
            .iter()
            .filter(|e| e.test == test)
            .filter_map(|e| Some((e, e.results.as_ref()?.profile.as_ref()?)))
            .collect();
        let kind = |e: &Entry| e.results.as_ref().map(|r| r.target.kind.clone());
        for (i, (e, p)) in entries.iter().enumerate() {
            let title = format!("{test}: {}", label(e));
            let flame = |f: &str| profile::read_flame(std::path::Path::new(f));
            match p.flame_file.as_deref().map(flame) {
                Some(Ok(svg)) => figure(&mut body, &title, "flame graph", &svg),
                Some(Err(err)) => note(&mut body, &title, &err),
                None => note(&mut body, &title, "no flame graph was saved"),
            }
            // Against the first column of the same kind of database: another kind's code
            // shares no function to compare.
            let Some((base, base_profile)) = entries[..i].iter().find(|(b, _)| kind(b) == kind(e))
            else {
                continue;
            };
            let diff = match (
                base_profile.stacks_file.as_deref().map(read),
                p.stacks_file.as_deref().map(read),
            ) {
                (Some(Ok(before)), Some(Ok(after))) => {
                    profile::diff_svg(&before, &after, &format!("{title} against {}", label(base)))
                }
                (Some(Err(e)), _) | (_, Some(Err(e))) => Err(e),
                _ => Err("no folded stacks were saved".into()),
            };
            match diff {
                Ok(svg) => figure(&mut body, &title, "against the first column", &svg),
                Err(e) => note(&mut body, &title, &e),
            }
        }
    }
    if body.is_empty() {
        return body;
    }
    format!(
        "<h2>On-CPU profiles of the server</h2><p class=\"note\">perf samples of the server's \
         processes over each measured part; the width of a frame is its share of the samples. \
         The interactive SVG files are beside the results (NAME.flame.svg).</p>{body}"
    )
}

fn read(path: &str) -> Result<String, String> {
    profile::read_stacks(std::path::Path::new(path))
}

pub(super) fn figure(body: &mut String, title: &str, what: &str, svg: &str) {
    let data = base64::engine::general_purpose::STANDARD.encode(svg);
    let _ = write!(
        body,
        "<figure class=\"flame\"><figcaption>{}: {}</figcaption><img alt=\"{}\" \
         style=\"width:100%\" src=\"data:image/svg+xml;base64,{data}\"></figure>",
        super::render::esc(title),
        super::render::esc(what),
        super::render::esc(what)
    );
}

pub(super) fn note(body: &mut String, title: &str, why: &str) {
    let _ = write!(
        body,
        "<p class=\"note\">{}: {}</p>",
        super::render::esc(title),
        super::render::esc(why)
    );
}
