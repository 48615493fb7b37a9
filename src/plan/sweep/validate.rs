//! Checking a plan file whole, before anything runs: every error names the file, the line and
//! the reason.

use std::fmt::Write as _;

use super::cells::{Config, Host, Pause, Source, Step, StepKind, Sweep, SweepTarget, TargetSpec};
use super::file::{Class, LoadDef, MAX_REPEAT, PlanFile, SYSBENCH_LOAD};
use super::options::{
    check_options, check_seconds, merge_options, option_args, parse_size, settings_of, takes,
};
use crate::error::Error;
use crate::server::ServerKind;
use crate::server::builds::{kind_name, resolve};

pub(crate) fn validate(src: &Source, file: PlanFile) -> Result<Sweep, Error> {
    // The name becomes part of the sweep directory's name: no path separators, no dot-dots.
    if !file.name.is_empty()
        && (!is_label(&file.name.replace('.', "")) || file.name.starts_with('.'))
    {
        return Err(src.key_error(
            "name",
            format!(
                "{:?}: use letters, digits, ., - and _ only, not starting with a dot",
                file.name
            ),
        ));
    }
    if file.clients.is_empty()
        || file
            .clients
            .iter()
            .any(|c| *c == 0 || *c > crate::plan::MAX_CLIENTS)
    {
        return Err(src.key_error(
            "clients",
            format!(
                "needs one or more client counts, each from 1 to {}",
                crate::plan::MAX_CLIENTS
            ),
        ));
    }
    if let Some((i, c)) = file
        .clients
        .iter()
        .enumerate()
        .find(|(i, c)| file.clients[..*i].contains(c))
    {
        // A cell is named by its client count: a second cell of one count would be taken for
        // the first one's, already run.
        return Err(src.key_error(
            "clients",
            format!(
                "{c} is given twice (entry {}): each client count runs once; `repeat = N` runs \
                 every step N times",
                i + 1
            ),
        ));
    }
    if file.tables == 0 {
        return Err(src.key_error("tables", "must be at least 1"));
    }
    if !(1..=MAX_REPEAT).contains(&file.repeat) {
        return Err(src.key_error(
            "repeat",
            format!("{} must be from 1 to {MAX_REPEAT}", file.repeat),
        ));
    }
    if file.table_size == 0 || file.table_size > i32::MAX as u64 {
        return Err(src.key_error(
            "table_size",
            format!("{} must be between 1 and {}", file.table_size, i32::MAX),
        ));
    }
    check_seconds(src, "read_time", file.read_time, 0.1)?;
    check_seconds(src, "write_time", file.write_time, 0.1)?;
    check_seconds(src, "warmup_time", file.warmup_time, 0.1)?;
    if let Some(p) = file.postwrite_pause {
        check_seconds(src, "postwrite_pause", p, 0.0)?;
    }
    check_options(src, 0..0, &file.options).map_err(|_| {
        src.key_error(
            "options",
            "every value must be a string, number or boolean, and none an option the sweep sets",
        )
    })?;

    let mut targets = Vec::new();
    for t in &file.targets {
        let span = t.span();
        let def = t.get_ref();
        let spec = match (&def.url, &def.server) {
            (Some(url), None) => {
                // The same check as --target, without opening anything.
                crate::db::check_url(url).map_err(|e| src.error(span.clone(), e))?;
                TargetSpec::Url(url.clone())
            }
            (None, Some(choice)) => TargetSpec::Managed(choice.kind),
            _ => {
                return Err(src.error(
                    span,
                    "a target needs exactly one of url = \"...\" or server = \"postgres|mariadb|mysql\" (with :VERSION where wanted)",
                ));
            }
        };
        let name = def
            .name
            .clone()
            .unwrap_or_else(|| match (&spec, &def.server) {
                (TargetSpec::Url(u), _) => u.split("://").next().unwrap_or("target").to_string(),
                (_, Some(choice)) => match &choice.version {
                    Some(v) => format!("{}-{}", kind_name(choice.kind), v.replace('.', "_")),
                    None => kind_name(choice.kind).to_string(),
                },
                _ => "sqlite".into(),
            });
        let build = match &def.server {
            Some(choice) => resolve(
                choice.kind,
                choice.version.as_deref(),
                def.basedir.as_deref(),
            )
            .map_err(|e| src.error(span.clone(), format!("target {name}: {e}")))?,
            None if def.basedir.is_some() => {
                return Err(src.error(
                    span,
                    "basedir is for a managed server (server = \"...\"): the install tree it starts",
                ));
            }
            None => None,
        };
        if !def.settings.is_empty() && !matches!(spec, TargetSpec::Managed(_)) {
            return Err(src.error(
                span,
                format!("target {name}: settings are for a managed server (server = \"...\")"),
            ));
        }
        let target_settings = settings_of(src, &span, &format!("target {name}"), &def.settings)?;
        if !is_label(&name) {
            return Err(src.error(
                span,
                format!("target name {name:?}: use letters, digits, - and _ only"),
            ));
        }
        check_name_length(src, &span, "target", &name, MAX_CELL_PART)?;
        if targets.iter().any(|t: &SweepTarget| t.name == name) {
            return Err(src.error(
                span,
                format!("two targets are called {name}: give them names (name = \"...\")"),
            ));
        }
        if def.tls && !matches!(spec, TargetSpec::Managed(_)) {
            return Err(src.error(
                span,
                "tls = true is for a managed server (server = \"...\"); a url says its TLS itself (sslmode=... or ssl-mode=...)",
            ));
        }
        if def.tls && def.socket {
            return Err(src.error(
                span,
                "tls = true and socket = true do not go together: a managed server's TLS is over TCP",
            ));
        }
        if def.socket && !matches!(spec, TargetSpec::Managed(_)) {
            return Err(src.error(
                span,
                "socket = true is for a managed server (server = \"...\"); a url names its own socket",
            ));
        }
        if let Some(d) = &def.datadir_in {
            if !matches!(spec, TargetSpec::Managed(_)) {
                return Err(src.error(
                    span,
                    "datadir_in is for a managed server (server = \"...\"): it is where its data directories are made",
                ));
            }
            if !d.is_absolute() {
                return Err(src.error(
                    span,
                    format!(
                        "datadir_in = {:?}: give an absolute path (the plan is saved with the sweep and may be resumed from elsewhere)",
                        d.display().to_string()
                    ),
                ));
            }
            if !d.is_dir() {
                return Err(src.error(
                    span,
                    format!(
                        "datadir_in = {:?}: no such directory; create it on the disk to measure",
                        d.display().to_string()
                    ),
                ));
            }
            if let TargetSpec::Managed(kind) = spec {
                crate::server::check_datadir_in(kind, d).map_err(|e| {
                    src.error(
                        span.clone(),
                        format!("datadir_in = {:?}: {e}", d.display().to_string()),
                    )
                })?;
            }
        }
        if let Some(url) = &def.metrics {
            crate::plan::check_metrics_url(url)
                .map_err(|e| src.error(span.clone(), format!("metrics: {e}")))?;
        }
        targets.push(SweepTarget {
            name,
            spec,
            socket: def.socket,
            datadir_in: def.datadir_in.clone(),
            tls: def.tls,
            build,
            settings: target_settings,
            metrics: def.metrics.clone(),
        });
    }
    if targets.is_empty() {
        targets.push(SweepTarget {
            name: "sqlite".into(),
            spec: TargetSpec::Sqlite,
            socket: false,
            datadir_in: None,
            tls: false,
            build: None,
            settings: Vec::new(),
            metrics: None,
        });
    }

    if !file.client_hosts.is_empty() {
        for h in &file.client_hosts {
            Host::parse(h).map_err(|e| src.entry_error("client_hosts", h, e))?;
        }
        let n = file.client_hosts.len() as u32;
        if let Some(c) = file.clients.iter().find(|c| **c % n != 0) {
            return Err(src.key_error(
                "client_hosts",
                format!(
                    "clients = {c} with {n} client_hosts: each host runs an equal share, so give multiples of {n}"
                ),
            ));
        }
        if let Some(t) = targets
            .iter()
            .find(|t| !matches!(t.spec, TargetSpec::Url(_)))
        {
            return Err(src.key_error(
                "client_hosts",
                format!(
                    "client_hosts need targets given by url (the client hosts connect to the database themselves), and target {} is not one",
                    t.name
                ),
            ));
        }
        if configs_have_profile(&file) {
            return Err(src.key_error(
                "client_hosts",
                "profile = true does not go with client_hosts: perf records on the database's host",
            ));
        }
    }
    let mut configs = Vec::new();
    for (name, c) in &file.configs {
        let span = c.span();
        let def = c.get_ref();
        if !is_label(name) {
            return Err(src.error(
                span,
                format!("configuration name {name:?}: use letters, digits, - and _ only"),
            ));
        }
        check_name_length(src, &span, "configuration", name, MAX_CELL_PART)?;
        let settings = settings_of(src, &span, &format!("configs.{name}"), &def.settings)?;
        let memory_limit = match &def.memory_limit {
            None => None,
            Some(m) => Some(parse_size(m).filter(|b| *b >= 16 << 20).ok_or_else(|| {
                src.error(
                    span.clone(),
                    format!("configs.{name}: memory_limit {m:?}: use a size of 16M or more, like 512M or 2G"),
                )
            })?),
        };
        let managed_only = !settings.is_empty() || memory_limit.is_some();
        for t in &targets {
            if def.tls && !matches!(t.spec, TargetSpec::Managed(_)) {
                return Err(src.error(
                    span.clone(),
                    format!(
                        "configs.{name}: tls = true needs a managed server (server = \"...\"), not {}",
                        t.name
                    ),
                ));
            }
            if def.tls && t.socket {
                return Err(src.error(
                    span.clone(),
                    format!(
                        "configs.{name}: tls = true and target {}'s socket = true do not go together",
                        t.name
                    ),
                ));
            }
            let sqlite = match &t.spec {
                TargetSpec::Sqlite => Some("sqlite://check.db"),
                TargetSpec::Url(u) if u.starts_with("sqlite:") => Some(u.as_str()),
                _ => None,
            };
            if let (Some(url), false) = (sqlite, settings.is_empty()) {
                // On SQLite the settings are PRAGMAs on the URL.
                crate::db::check_url(&sqlite_url(url, &settings))
                    .map_err(|e| src.error(span.clone(), format!("configs.{name}: {e}")))?;
            }
            // A setting the target's server no longer has, with what replaced it, before
            // any cell starts (MySQL 8+ has no query cache, no innodb_log_file_size since 9).
            let version = t.build.as_ref().map(|b| b.version.as_str());
            if let TargetSpec::Managed(kind) = &t.spec
                && let Some((setting, why)) = settings.iter().find_map(|(k, _)| {
                    crate::server::effective::removed(*kind, version, k).map(|r| (k, r))
                })
            {
                return Err(src.error(
                    span.clone(),
                    format!("configs.{name}: {setting} on target {}: {why}", t.name),
                ));
            }
            if let TargetSpec::Url(u) = &t.spec {
                let sqlite = u.starts_with("sqlite:");
                if memory_limit.is_some() || (managed_only && !sqlite) {
                    return Err(src.error(
                        span.clone(),
                        format!(
                            "configs.{name}: settings and memory_limit need a managed server (server = \"...\"), not the running database {}",
                            t.name
                        ),
                    ));
                }
            }
        }
        configs.push(Config {
            name: name.clone(),
            settings,
            drop_caches: def.drop_caches,
            memory_limit,
            tls: def.tls,
            profile: def.profile,
        });
    }
    if configs.is_empty() {
        configs.push(Config {
            name: "default".into(),
            settings: Vec::new(),
            drop_caches: false,
            memory_limit: None,
            tls: false,
            profile: false,
        });
    }

    if file.steps.is_empty() {
        return Err(src.key_error("steps", "a plan needs at least one [[steps]]"));
    }
    let mut sweep = Sweep {
        file: file.clone(),
        targets,
        configs,
        steps: Vec::new(),
    };
    for s in &file.steps {
        let span = s.span();
        let def = s.get_ref();
        let kinds = usize::from(def.workload.is_some())
            + usize::from(def.load.is_some() && def.load != Some(LoadDef::Sysbench(false)))
            + usize::from(def.pause.is_some());
        if kinds != 1 {
            return Err(src.error(
                span,
                "a step needs exactly one of workload = \"...\", load = true (or load = \"tpcc\") or pause = \"postwrite\" | SECONDS",
            ));
        }
        check_options(src, span.clone(), &def.options)?;
        let step_workload = match (&def.workload, &def.load) {
            (Some(w), _) => w.as_str(),
            (None, Some(LoadDef::Workload(w))) => w.as_str(),
            _ => SYSBENCH_LOAD,
        };
        if let Some(k) = def.options.keys().find(|k| !takes(step_workload, k)) {
            return Err(src.error(
                span,
                format!(
                    "option {k}: {} does not take it (it is {})",
                    if step_workload == "tpcc" {
                        "TPC-C"
                    } else {
                        "this workload"
                    },
                    if step_workload == "tpcc" {
                        "the sbtest workloads'"
                    } else {
                        "TPC-C's"
                    }
                ),
            ));
        }
        let kind = if let Some(workload) = &def.workload {
            let Some(class) = def.class else {
                return Err(src.error(
                    span,
                    format!("step {workload}: needs class = \"read\", \"write\" or \"warmup\" (how long it runs)"),
                ));
            };
            StepKind::Run {
                workload: workload.clone(),
                class,
                args: option_args(&merge_options(workload, &file.options, &def.options)),
            }
        } else if let Some(load) = &def.load {
            if def.class.is_some() {
                return Err(src.error(
                    span,
                    "a load step takes no class: it is not measured as a workload",
                ));
            }
            let workload = match load {
                LoadDef::Workload(w) => w.clone(),
                LoadDef::Sysbench(_) => SYSBENCH_LOAD.into(),
            };
            let args = option_args(&merge_options(&workload, &file.options, &def.options));
            StepKind::Load(workload, args)
        } else {
            let pause = match def.pause.as_ref().expect("counted") {
                toml::Value::String(s) if s == "postwrite" => Pause::Postwrite,
                toml::Value::Integer(i) if (0..=crate::plan::MAX_SECONDS as i64).contains(i) => {
                    Pause::Seconds(*i as f64)
                }
                toml::Value::Float(f) if (0.0..=crate::plan::MAX_SECONDS).contains(f) => {
                    Pause::Seconds(*f)
                }
                other => {
                    return Err(src.error(
                        span,
                        format!(
                            "pause = {other}: use \"postwrite\" or a number of seconds from 0 to {} (a year)",
                            crate::plan::MAX_SECONDS
                        ),
                    ));
                }
            };
            StepKind::Pause(pause)
        };
        let name = def.name.clone().unwrap_or_else(|| match &kind {
            StepKind::Run { workload, .. } => workload.clone(),
            StepKind::Load(..) => "load".into(),
            StepKind::Pause(_) => "pause".into(),
        });
        if !is_label(&name.replace('.', "")) {
            return Err(src.error(
                span,
                format!("step name {name:?}: use letters, digits, ., - and _ only"),
            ));
        }
        check_name_length(src, &span, "step", &name, MAX_STEP_NAME)?;
        // Reports tell measured steps apart by name; pauses, loads and warm-ups may repeat.
        let measured = |k: &StepKind| matches!(k, StepKind::Run { class, .. } if !matches!(class, Class::Warmup));
        if measured(&kind)
            && sweep
                .steps
                .iter()
                .any(|s| s.name == name && measured(&s.kind))
        {
            return Err(src.error(
                span,
                format!(
                    "two measured steps are called {name}: give each a name of its own \
                     (name = \"...\"); reports tell steps apart by name"
                ),
            ));
        }
        let crash = match (def.crash, def.crash_after) {
            (false, None) => None,
            (false, Some(_)) => {
                return Err(src.error(span, "crash_after needs crash = true"));
            }
            (true, after) => {
                let after = after.unwrap_or(0.0);
                if !matches!(kind, StepKind::Run { .. }) {
                    return Err(src.error(
                        span,
                        "crash = true needs a workload step (the server crashes while it runs)",
                    ));
                }
                if !(0.0..=crate::plan::MAX_SECONDS).contains(&after) {
                    return Err(src.error(
                        span,
                        format!("crash_after = {after}: seconds into the measured part, from 0"),
                    ));
                }
                if let Some(t) = sweep
                    .targets
                    .iter()
                    .find(|t| !matches!(t.spec, TargetSpec::Managed(_)))
                {
                    return Err(src.error(
                        span,
                        format!(
                            "crash = true needs managed servers (server = \"...\"): dbsweep kills and restarts only the servers it started, and target {} is not one",
                            t.name
                        ),
                    ));
                }
                Some(after)
            }
        };
        if !sweep.file.client_hosts.is_empty() {
            if crash.is_some() {
                return Err(src.error(
                    span,
                    "crash = true does not go with client_hosts: the crash needs the managed server, on this host",
                ));
            }
            if let StepKind::Run { workload, .. } = &kind
                && crate::lua::is_script(workload)
            {
                return Err(src.error(
                    span,
                    format!(
                        "workload = {workload:?}: client_hosts run built-in workloads (a script would have to be on every host)"
                    ),
                ));
            }
        }
        let step = Step { name, kind, crash };
        // Every workload step is checked as its `dbsweep run` would be, at every client count.
        if matches!(step.kind, StepKind::Run { .. } | StepKind::Load(..)) {
            for &clients in &sweep.file.clients {
                let (plan, _) = sweep
                    .step_workload(&step, clients, None)
                    .map_err(|e| src.error(span.clone(), format!("step {}: {e}", step.name)))?;
                let not_postgres = sweep.targets.iter().find(|t| match &t.spec {
                    TargetSpec::Sqlite => true,
                    TargetSpec::Url(u) => !u.starts_with("postgres"),
                    TargetSpec::Managed(kind) => *kind != ServerKind::Postgres,
                });
                if let (true, Some(t)) = (plan.workload_opts.pipeline, not_postgres) {
                    return Err(src.error(
                        span.clone(),
                        format!(
                            "step {}: pipeline: only PostgreSQL targets pipeline statements, and target {} is not one",
                            step.name, t.name
                        ),
                    ));
                }
            }
        }
        sweep.steps.push(step);
    }
    Ok(sweep)
}

pub(crate) fn configs_have_profile(file: &PlanFile) -> bool {
    file.configs.values().any(|c| c.get_ref().profile)
}

/// A SQLite URL with `settings` added as PRAGMAs.
pub fn sqlite_url(url: &str, settings: &[(String, String)]) -> String {
    let mut out = url.to_string();
    for (i, (k, v)) in settings.iter().enumerate() {
        let sep = if i == 0 && !url.contains('?') {
            '?'
        } else {
            '&'
        };
        let _ = write!(out, "{sep}{k}={v}");
    }
    out
}

pub(crate) fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The longest step name: its record `NNN-NAME.json` and the temporary file beside it
/// (`.NNN-NAME.json.tmp-PID`) must fit a file name (255 bytes on Linux file systems).
const MAX_STEP_NAME: usize = 200;
/// The longest target or configuration name: a cell's directory is `TARGET.CONFIG.cN[.rN]`.
const MAX_CELL_PART: usize = 100;

/// Refuses a name too long to be part of a file name in the sweep directory, before anything
/// runs (not after a step has run in full and cannot be recorded).
fn check_name_length(
    src: &Source,
    span: &std::ops::Range<usize>,
    what: &str,
    name: &str,
    max: usize,
) -> Result<(), Error> {
    if name.len() <= max {
        return Ok(());
    }
    Err(src.error(
        span.clone(),
        format!(
            "{what} name {}... is {} characters long: the sweep directory's file names hold \
             {max} at most; give it a shorter name",
            &name[..24],
            name.len()
        ),
    ))
}
