//! What a reader must know before trusting a comparison: settings a server did not apply as
//! requested (with its log's words).

use std::collections::BTreeMap;

use super::model::Dataset;
use super::tables::{Cell, Row, Table};
pub(super) use crate::dataset::model::place_label;

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

/// Where the server targets compared with one another (within an input and a
/// configuration) do different work per commit: a binary log synced on one side only, a log
/// not synced at commit, doublewrite or full-page writes off, checksums, the character set
/// (server::durability). A row per difference; None when they agree or no results say.
pub fn durability_table(ds: &Dataset) -> Option<Table> {
    use crate::server::durability::{differences, profile};
    // (input, configuration) -> the profile of each target, from its first results.
    let mut groups: BTreeMap<(String, String), Vec<(String, Vec<_>)>> = BTreeMap::new();
    for e in &ds.entries {
        let Some(r) = e.results.as_ref() else {
            continue;
        };
        let Some(p) = profile(&r.target.kind, &r.target.settings) else {
            continue;
        };
        let group = groups
            .entry((e.place.source.clone(), e.place.config.clone()))
            .or_default();
        if !group.iter().any(|(t, _)| *t == e.place.target) {
            group.push((e.place.target.clone(), p));
        }
    }
    let several = groups.len() > 1;
    let rows: Vec<Row> = groups
        .iter()
        .flat_map(|((source, config), targets)| {
            differences(targets).into_iter().map(move |d| Row {
                group: None,
                label: if several {
                    format!("{source}/{config}: {d}")
                } else {
                    d
                },
                summary: false,
                cells: Vec::new(),
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        id: "durability-differs".into(),
        title: "Warning: the targets do different work per commit".into(),
        better: None,
        columns: Vec::new(),
        under: Vec::new(),
        rows,
        notes: vec![
            "Each server kept a committed transaction in its own way: a difference in throughput between them holds this difference too, not only the servers'. `sweep --server-set` sets them alike."
                .into(),
        ],
    })
}

/// Every step measured on a busy machine (other processes' CPU, the hypervisor's steal), a
/// row each; None when none was.
pub fn busy_table(ds: &Dataset) -> Option<Table> {
    let rows: Vec<Row> = ds
        .entries
        .iter()
        .filter_map(|e| {
            let b = e.hw()?.beside.as_ref().filter(|b| b.busy)?;
            let place = place_label(ds, &e.place, false);
            let at = if place.is_empty() {
                format!("c{}", e.place.clients)
            } else {
                format!("{place} c{}", e.place.clients)
            };
            Some(Row {
                group: None,
                label: format!("{} ({at}{}): {}", e.test, repeat_of(e), b.describe()),
                summary: false,
                cells: Vec::new(),
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        id: "busy-machine".into(),
        title: "Warning: steps measured on a busy machine".into(),
        better: None,
        columns: Vec::new(),
        under: Vec::new(),
        rows,
        notes: vec![
            "Other processes or the hypervisor took CPU beside these steps: their figures hold that load, and no ratio built on them is called a difference (none is coloured).              Run them again on a quiet machine."
                .into(),
        ],
    })
}

fn repeat_of(e: &super::model::Entry) -> String {
    if e.repeat > 1 {
        format!(" run {}", e.repeat)
    } else {
        String::new()
    }
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

/// The machine each sweep ran on, from its `environment.json`: what sets the figures besides
/// the database (CPU, frequency governor, turbo, SMT, huge pages, IO scheduler, file system).
/// Warns where the governor is not `performance`.
pub fn machine_table(ds: &Dataset) -> Option<Table> {
    use super::tables::{Cell, Row};
    if ds.machines.is_empty() {
        return None;
    }
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::Null => "-".to_string(),
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Bool(b) => if *b { "on" } else { "off" }.to_string(),
        other => other.to_string(),
    };
    type Fact = (&'static str, fn(&serde_json::Value) -> serde_json::Value);
    let facts: [Fact; 11] = [
        ("CPU", |e| e["cpu_model"].clone()),
        ("CPUs", |e| e["cpus"].clone()),
        ("memory GB", |e| {
            e["memory_kb"]
                .as_f64()
                .map_or(serde_json::Value::Null, |kb| {
                    serde_json::Value::String(format!("{:.1}", kb / 1048576.0))
                })
        }),
        ("kernel", |e| e["kernel"].clone()),
        ("governor", |e| e["tuning"]["governor"].clone()),
        ("turbo", |e| e["tuning"]["turbo"].clone()),
        ("SMT", |e| e["tuning"]["smt"].clone()),
        ("MHz", |e| {
            let mhz: Vec<f64> = e["tuning"]["mhz"]
                .as_array()
                .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
                .unwrap_or_default();
            match (
                mhz.iter().copied().reduce(f64::min),
                mhz.iter().copied().reduce(f64::max),
            ) {
                (Some(lo), Some(hi)) if (hi - lo).abs() < 1.0 => format!("{lo:.0}").into(),
                (Some(lo), Some(hi)) => format!("{lo:.0}-{hi:.0}").into(),
                _ => serde_json::Value::Null,
            }
        }),
        ("transparent huge pages", |e| {
            e["tuning"]["transparent_hugepages"].clone()
        }),
        ("IO scheduler", |e| e["tuning"]["io_scheduler"].clone()),
        ("file system", |e| {
            match (
                e["tuning"]["filesystem"].as_str(),
                e["tuning"]["mount_options"].as_str(),
            ) {
                (Some(fs), Some(o)) => format!("{fs} ({o})").into(),
                (Some(fs), None) => fs.into(),
                _ => serde_json::Value::Null,
            }
        }),
    ];
    let rows = facts
        .iter()
        .map(|(label, f)| Row {
            group: None,
            label: label.to_string(),
            summary: false,
            cells: ds
                .machines
                .iter()
                .map(|(_, env)| Cell::Text(text(&f(env))))
                .collect(),
        })
        .collect();
    let mut notes = Vec::new();
    for (source, env) in &ds.machines {
        match env["tuning"]["governor"].as_str() {
            Some("performance") => {}
            Some(g) => notes.push(format!(
                "Warning: {source} ran with the {g} frequency governor, not performance: its CPU speed varied with load, which changes latency and CPU per op"
            )),
            None if env.get("tuning").is_some() => notes.push(format!(
                "{source}: no cpufreq in the kernel: the hypervisor or the firmware sets the CPU frequency"
            )),
            None => {}
        }
    }
    Some(Table {
        id: "machine".into(),
        title: "Machine (each sweep's environment.json)".into(),
        better: None,
        columns: ds.machines.iter().map(|(s, _)| s.clone()).collect(),
        under: Vec::new(),
        rows,
        notes,
    })
}

/// The steps during which the CPU frequency moved by more than a tenth of its top (the
/// hardware sampler reads cpufreq with each sample): a warning, since latency and CPU per op
/// then measure the frequency as much as the database. None when no step varied.
pub fn frequency_table(ds: &Dataset) -> Option<Table> {
    use super::tables::{Cell, Row};
    let rows: Vec<Row> = ds
        .entries
        .iter()
        .filter_map(|e| {
            let mhz = e.results.as_ref()?.hw.as_ref()?.cpu_mhz.as_ref()?;
            mhz.varied().then(|| {
                let at = place_label(ds, &e.place, false);
                Row {
                    group: None,
                    label: format!(
                        "{}{}{} c{}",
                        e.test,
                        if at.is_empty() { "" } else { " on " },
                        at,
                        e.place.clients
                    ),
                    summary: false,
                    cells: vec![Cell::Num(mhz.min), Cell::Num(mhz.max), Cell::Num(mhz.mean)],
                }
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        id: "frequency".into(),
        title: "Warning: the CPU frequency varied during these steps (MHz)".into(),
        better: None,
        columns: ["min MHz", "max MHz", "mean MHz"].map(String::from).to_vec(),
        under: Vec::new(),
        rows,
        notes: vec![
            "every CPU's scaling_cur_freq read with each hardware sample; a spread above 10% of the top means a governor, power capping or thermal throttling changed the speed the figures were measured at"
                .into(),
        ],
    })
}

/// The repeats of a cell whose throughputs disagree by more than a fifth of their median: the
/// spread that a small machine's idle wake-ups or a neighbour give one-client figures (3x
/// between two sweeps of one build has been seen), which no single run would show. Each row
/// is a test in a place, with its runs' throughputs.
pub fn spread_table(ds: &Dataset) -> Option<Table> {
    // Each test at each place, in the order they first come, with its runs.
    let mut places: Vec<(&str, &super::model::Place)> = Vec::new();
    let mut runs_of: std::collections::HashMap<(&str, &super::model::Place), Vec<(u32, f64)>> =
        std::collections::HashMap::new();
    for e in &ds.entries {
        let key = (e.test.as_str(), &e.place);
        let runs = runs_of.entry(key).or_insert_with(|| {
            places.push(key);
            Vec::new()
        });
        if let Some(t) = e.throughput() {
            runs.push((e.repeat, t));
        }
    }
    let mut rows = Vec::new();
    for (test, place) in places {
        let runs = runs_of.remove(&(test, place)).unwrap_or_default();
        if runs.len() < 2 {
            continue;
        }
        let values: Vec<f64> = runs.iter().map(|r| r.1).collect();
        let Some(median) = super::stats::median_of(&values) else {
            continue;
        };
        let (lo, hi) = values
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
        if median <= 0.0 || (hi - lo) / median <= 0.2 {
            continue;
        }
        let mut shown: Vec<(u32, f64)> = runs;
        shown.sort_by_key(|r| r.0);
        rows.push(Row {
            group: None,
            label: format!(
                "{test} ({}/{} c{})",
                place.target, place.config, place.clients
            ),
            summary: false,
            cells: vec![
                Cell::Text(
                    shown
                        .iter()
                        .map(|(r, v)| format!("r{r} {}", super::render::num(*v)))
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                Cell::Text(format!("{:.0}%", (hi - lo) / median * 100.0)),
            ],
        });
    }
    if rows.is_empty() {
        return None;
    }
    Some(Table {
        id: "repeats-disagree".into(),
        title: "Warning: repeated runs of a cell disagree".into(),
        better: None,
        columns: vec!["throughput of each run".into(), "spread".into()],
        under: Vec::new(),
        rows,
        notes: vec![
            "The runs of these cells differ by more than a fifth of their median (spread = (highest - lowest) / median): the machine, not the database, moved between them (idle wake-ups on a small VM, a neighbour, a warming disk). Their medians and intervals hold, but a single run of such a cell would have said anything in this range."
                .into(),
        ],
    })
}
