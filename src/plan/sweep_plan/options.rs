//! A step's options: the plan's, the configuration's and the command line's, merged and parsed as
//! the run command parses its own.

use std::collections::BTreeMap;

use toml::Spanned;

use super::cells::Source;
use super::file::{PlanFile, RESERVED, TargetDef};
use crate::cli::SweepOverrides;
use crate::error::Error;
use crate::server::builds::ServerChoice;

/// Puts the command line's overrides into the plan; the plan keys they set (for errors, which
/// then name the option, not a line of the plan).
pub(crate) fn apply(file: &mut PlanFile, o: &SweepOverrides) -> Result<Vec<&'static str>, Error> {
    let given = [
        ("clients", o.clients.is_some()),
        ("tables", o.tables.is_some()),
        ("table_size", o.table_size.is_some()),
        ("read_time", o.read_time.is_some()),
        ("write_time", o.write_time.is_some()),
        ("warmup_time", o.warmup_time.is_some()),
        ("postwrite_pause", o.postwrite_pause.is_some()),
        ("repeat", o.repeat.is_some()),
        ("detect", o.detect.is_some()),
        ("rerun_busy", o.rerun_busy.is_some()),
    ];
    let given: Vec<&'static str> = given.iter().filter(|g| g.1).map(|g| g.0).collect();
    if let Some(c) = &o.clients {
        file.clients = c.0.clone();
    }
    if let Some(v) = o.tables {
        file.tables = v;
    }
    if let Some(v) = o.table_size {
        file.table_size = v;
    }
    if let Some(v) = o.read_time {
        file.read_time = v;
    }
    if let Some(v) = o.write_time {
        file.write_time = v;
    }
    if let Some(v) = o.warmup_time {
        file.warmup_time = v;
    }
    if let Some(v) = o.postwrite_pause {
        file.postwrite_pause = Some(v);
    }
    if let Some(v) = o.repeat {
        file.repeat = v;
    }
    if let Some(v) = &o.detect {
        file.detect = Some(v.clone());
    }
    if let Some(v) = o.rerun_busy {
        file.rerun_busy = Some(v);
    }
    for (k, v) in &o.option {
        // Another spelling of the same option (dash or underscore) in the plan gives way.
        file.options
            .retain(|mk, _| option_name(mk) != option_name(k));
        file.options
            .insert(k.clone(), toml::Value::String(v.clone()));
    }
    let managed = |choice: &ServerChoice| TargetDef {
        name: None,
        url: None,
        server: Some(choice.clone()),
        basedir: None,
        settings: BTreeMap::new(),
        socket: o.server_socket,
        datadir_in: None,
        tls: false,
        metrics: None,
    };
    let targets: Vec<TargetDef> = match &o.target {
        _ if !o.server.is_empty() => o.server.iter().map(managed).collect(),
        Some(url) => vec![TargetDef {
            name: None,
            url: Some(url.clone()),
            server: None,
            basedir: None,
            settings: BTreeMap::new(),
            socket: false,
            datadir_in: None,
            tls: false,
            metrics: None,
        }],
        None => Vec::new(),
    };
    if !targets.is_empty() {
        file.targets = targets.into_iter().map(|t| Spanned::new(0..0, t)).collect();
    }
    for set in &o.server_set {
        let mut taken = false;
        for t in &mut file.targets {
            let t = t.get_mut();
            if let Some(choice) = &t.server
                && set.kind.is_none_or(|k| k == choice.kind)
            {
                // Another spelling of the same setting (dash or underscore) gives way.
                t.settings
                    .retain(|k, _| k.replace('-', "_") != set.name.replace('-', "_"));
                t.settings
                    .insert(set.name.clone(), toml::Value::String(set.value.clone()));
                taken = true;
            }
        }
        if !taken {
            let of = set
                .kind
                .map_or(String::new(), |k| format!(" of kind {k:?}").to_lowercase());
            return Err(Error::Usage(format!(
                "--server-set {}={}: the sweep has no managed server{of} to set it on (a running server given by URL keeps its own settings)",
                set.name, set.value
            )));
        }
    }
    Ok(given)
}

/// The server settings of a plan's table (`what`: where they are, for errors), checked.
pub(crate) fn settings_of(
    src: &Source,
    span: &std::ops::Range<usize>,
    what: &str,
    settings: &BTreeMap<String, toml::Value>,
) -> Result<Vec<(String, String)>, Error> {
    let mut out = Vec::new();
    for (k, v) in settings {
        let v = option_value(v).ok_or_else(|| {
            src.error(
                span.clone(),
                format!("{what}: setting {k}: a value must be a string, number or boolean"),
            )
        })?;
        crate::server::parse_setting(&format!("{k}={v}"))
            .map_err(|e| src.error(span.clone(), format!("{what}: {e}")))?;
        out.push((k.clone(), v));
    }
    Ok(out)
}

/// A TOML value as a command-line value.
pub(crate) fn option_value(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "on" } else { "off" }.into()),
        _ => None,
    }
}

pub(crate) fn option_name(key: &str) -> String {
    key.replace('_', "-")
}

/// Options only TPC-C takes.
pub(crate) const TPCC_ONLY: &[&str] = &["warehouses", "wait", "think-scale", "mix"];
/// Options of the sbtest workloads that TPC-C does not take.
pub(crate) const SBTEST_ONLY: &[&str] = &[
    "analyze",
    "statement-times",
    "range-size",
    "skip-trx",
    "range-selects",
    "point-selects",
    "simple-ranges",
    "sum-ranges",
    "order-ranges",
    "distinct-ranges",
    "index-updates",
    "non-index-updates",
    "delete-inserts",
    "auto-inc",
    "create-secondary",
    "secondary",
    "random-points",
    "hot-points",
    "covered",
    "on-id",
    "number-of-ranges",
    "delta",
    "pipeline",
];

/// Whether a plan-wide option reaches `workload`'s steps: a plan that loads sbtest tables and
/// TPC-C's says each one's options once, and neither gets the other's.
pub(crate) fn takes(workload: &str, option: &str) -> bool {
    let option = option_name(option);
    if workload == "tpcc" {
        !SBTEST_ONLY.contains(&option.as_str())
    } else {
        !TPCC_ONLY.contains(&option.as_str())
    }
}

/// A step's options: the plan's that its workload takes, then its own (which win; a step's
/// own option its workload does not take is refused when the step is checked).
pub(crate) fn merge_options(workload: &str, plan: &toml::Table, step: &toml::Table) -> toml::Table {
    let mut merged: toml::Table = plan
        .iter()
        .filter(|(k, _)| takes(workload, k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in step {
        // Later spellings of the same option (dash or underscore) replace earlier ones.
        merged.retain(|mk, _| option_name(mk) != option_name(k));
        merged.insert(k.clone(), v.clone());
    }
    merged
}

pub(crate) fn option_args(t: &toml::Table) -> Vec<String> {
    t.iter()
        .filter_map(|(k, v)| Some(format!("--{}={}", option_name(k), option_value(v)?)))
        .collect()
}

pub(crate) fn check_options(
    src: &Source,
    span: std::ops::Range<usize>,
    t: &toml::Table,
) -> Result<(), Error> {
    for (k, v) in t {
        let name = option_name(k);
        if RESERVED.contains(&name.as_str()) {
            return Err(src.error(
                span,
                format!("option {k}: the sweep sets it (use the plan's clients, tables, table_size, read_time/write_time or targets)"),
            ));
        }
        if option_value(v).is_none() {
            return Err(src.error(
                span,
                format!("option {k}: a value must be a string, a number or a boolean"),
            ));
        }
    }
    Ok(())
}

pub(crate) fn check_seconds(src: &Source, key: &str, v: f64, min: f64) -> Result<(), Error> {
    if v.is_finite() && (min..=crate::plan::MAX_SECONDS).contains(&v) {
        Ok(())
    } else {
        Err(src.key_error(
            key,
            format!(
                "{v} must be a number of seconds from {min} to {} (a year)",
                crate::plan::MAX_SECONDS
            ),
        ))
    }
}

/// Parses `512M`, `2G`, `1048576` (bytes), `64K`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.char_indices().last()? {
        (i, 'k' | 'K') => (&s[..i], 1u64 << 10),
        (i, 'm' | 'M') => (&s[..i], 1 << 20),
        (i, 'g' | 'G') => (&s[..i], 1 << 30),
        (i, 't' | 'T') => (&s[..i], 1 << 40),
        _ => (s, 1),
    };
    num.trim().parse::<u64>().ok()?.checked_mul(mult)
}
