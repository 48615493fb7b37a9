//! What a reader must know before trusting a comparison: settings a server did not apply as
//! requested (with its log's words).

use std::collections::BTreeMap;

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

/// The parts of a place that tell it apart in `ds` (its source, target and configuration,
/// leaving out those that are the same everywhere), joined by `/`; with `config`, the
/// configuration is named even when there is only one.
pub(super) fn place_label(ds: &Dataset, p: &super::model::Place, config: bool) -> String {
    let distinct = |f: fn(&super::model::Place) -> &str| {
        ds.entries
            .iter()
            .map(|e| f(&e.place))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    let mut parts = Vec::new();
    if distinct(|p| &p.source) > 1 {
        parts.push(p.source.as_str());
    }
    if distinct(|p| &p.target) > 1 {
        parts.push(p.target.as_str());
    }
    if config || distinct(|p| &p.config) > 1 {
        parts.push(p.config.as_str());
    }
    parts.join("/")
}

/// Every requested setting a managed server did not apply as asked, per configuration, and the
/// warnings its log gave at start about one of them; None when every setting was applied (or
/// no results say).
pub fn settings_table(ds: &Dataset) -> Option<Table> {
    // (label, setting) -> (requested, effective, client counts)
    let mut rows: BTreeMap<(String, String), (String, String, Vec<u32>)> = BTreeMap::new();
    let mut log_lines: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in &ds.entries {
        let Some(server) = e.results.as_ref().and_then(|r| r.server.as_ref()) else {
            continue;
        };
        let p = &e.place;
        let label = place_label(ds, p, true);
        for (name, eff) in server.effective.iter().filter(|(_, e)| !e.applied) {
            let row = rows
                .entry((label.clone(), name.clone()))
                .or_insert_with(|| {
                    (
                        eff.requested.clone(),
                        eff.effective
                            .clone()
                            .unwrap_or_else(|| "(no such variable)".into()),
                        Vec::new(),
                    )
                });
            if !row.2.contains(&p.clients) {
                row.2.push(p.clients);
            }
        }
        let lines = log_lines.entry(label).or_default();
        for w in server
            .setting_warnings
            .iter()
            .filter(|w| w.starts_with("server log: "))
        {
            if !lines.contains(w) {
                lines.push(w.clone());
            }
        }
    }
    if rows.is_empty() && log_lines.values().all(Vec::is_empty) {
        return None;
    }
    let mut notes = vec![
        "The server was asked for these settings and did not run with them: the figures of these \
         configurations were measured without them, and a difference from the base is not their effect."
            .to_string(),
    ];
    for (label, lines) in &log_lines {
        for l in lines {
            notes.push(format!("{label}: {l}"));
        }
    }
    Some(Table {
        id: "settings-not-applied".into(),
        under: Vec::new(),
        title: "Warning: settings the server did not apply".into(),
        better: None,
        columns: vec![
            "setting".into(),
            "requested".into(),
            "server has".into(),
            "clients".into(),
        ],
        rows: rows
            .into_iter()
            .map(|((label, name), (requested, effective, mut clients))| {
                clients.sort_unstable();
                Row {
                    group: None,
                    label,
                    summary: false,
                    cells: vec![
                        Cell::Text(name),
                        Cell::Text(requested),
                        Cell::Text(effective),
                        Cell::Text(
                            clients
                                .iter()
                                .map(u32::to_string)
                                .collect::<Vec<_>>()
                                .join(","),
                        ),
                    ],
                }
            })
            .collect(),
        notes,
    })
}

/// Options that differ between runs by design (a cell's clients, a seed, where it ran).
const NOT_COMPARED: &[&str] = &[
    "target",
    "rand_seed",
    "threads",
    "report_interval",
    "prepare",
    "workload",
];

/// When a report reads several inputs, the workload options and durations each ran with
/// (over all its steps): a row per option whose values differ between inputs, so that a
/// 4 x 150k-row sweep is not set beside a 2 x 100k one without a word. None when they agree.
pub fn inputs_table(ds: &Dataset) -> Option<Table> {
    let mut sources: Vec<&str> = Vec::new();
    for e in &ds.entries {
        if !sources.contains(&e.place.source.as_str()) {
            sources.push(&e.place.source);
        }
    }
    if sources.len() < 2 {
        return None;
    }
    // option -> source -> the values it took
    let mut seen: BTreeMap<String, BTreeMap<&str, std::collections::BTreeSet<String>>> =
        BTreeMap::new();
    for e in &ds.entries {
        let Some(r) = &e.results else { continue };
        let Some(options) = r.options.as_object() else {
            continue;
        };
        for (k, v) in options {
            if NOT_COMPARED.contains(&k.as_str()) {
                continue;
            }
            let text = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            seen.entry(k.clone())
                .or_default()
                .entry(e.place.source.as_str())
                .or_default()
                .insert(text);
        }
    }
    let rows: Vec<Row> = seen
        .into_iter()
        .filter(|(_, by)| {
            // Only what every input has, and where they differ.
            by.len() == sources.len() && by.values().any(|v| *v != by[sources[0]])
        })
        .map(|(k, by)| Row {
            group: None,
            label: k,
            summary: false,
            cells: sources
                .iter()
                .map(|s| Cell::Text(by[s].iter().cloned().collect::<Vec<_>>().join(", ")))
                .collect(),
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        id: "inputs-differ".into(),
        title: "Warning: the inputs did not run alike".into(),
        better: None,
        columns: sources.iter().map(|s| s.to_string()).collect(),
        under: Vec::new(),
        rows,
        notes: vec![
            "Workload options and durations that differ between the inputs (the values each took over its steps): their figures differ by these as well as by what they compare."
                .into(),
        ],
    })
}

/// What each configuration connected to and how, when any run was over TLS: the server's
/// version and the negotiated TLS protocol and cipher (or "plain"), so that a table comparing
/// plain and TLS says which column is which.
pub fn connections_table(ds: &Dataset) -> Option<Table> {
    let any_tls = ds
        .entries
        .iter()
        .any(|e| e.results.as_ref().is_some_and(|r| r.target.tls.is_some()));
    if !any_tls {
        return None;
    }
    let mut rows: BTreeMap<String, (String, String)> = BTreeMap::new();
    for e in &ds.entries {
        let Some(r) = &e.results else { continue };
        let p = &e.place;
        let label = place_label(ds, p, true);
        rows.entry(label).or_insert_with(|| {
            (
                r.target.version.clone(),
                r.target.tls.clone().unwrap_or_else(|| "plain".into()),
            )
        });
    }
    Some(Table {
        id: "connections".into(),
        title: "Connections: each configuration's server and TLS".into(),
        better: None,
        columns: vec!["server".into(), "TLS".into()],
        under: Vec::new(),
        rows: rows
            .into_iter()
            .map(|(label, (version, tls))| Row {
                group: None,
                label,
                summary: false,
                cells: vec![Cell::Text(version), Cell::Text(tls)],
            })
            .collect(),
        notes: vec!["the negotiated protocol and cipher suite of the runs' connections".into()],
    })
}
