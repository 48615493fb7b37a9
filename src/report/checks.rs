//! What a reader must know before trusting a comparison: settings a server did not apply as
//! requested (with its log's words).

use std::collections::BTreeMap;

use super::model::Dataset;
use super::tables::{Cell, Row, Table};

/// The configuration a place belongs to, as a row label: `source/target/config`, leaving out
/// parts that are the same everywhere.
fn config_label(ds: &Dataset, source: &str, target: &str, config: &str) -> String {
    let distinct = |f: fn(&super::model::Place) -> &str| {
        ds.entries
            .iter()
            .map(|e| f(&e.place))
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    let mut parts = Vec::new();
    if distinct(|p| &p.source) > 1 {
        parts.push(source);
    }
    if distinct(|p| &p.target) > 1 {
        parts.push(target);
    }
    parts.push(config);
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
        let label = config_label(ds, &p.source, &p.target, &p.config);
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
