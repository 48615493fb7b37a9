//! Sweep plans: a TOML file (or a built-in plan) naming targets, configurations, client counts
//! and an ordered list of steps, validated whole before anything runs. Every error names the
//! file, the line and the reason.
//!
//! Each workload step becomes the option list of a `dbsweep run`, parsed by the same CLI
//! parser and checked by the same [`RunPlan`] rules as a single run: a plan cannot say what the
//! command line could not.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Parser;
use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::RunPlan;
use crate::cli::{Cli, Command};
use crate::error::Error;
use crate::server::ServerKind;
use crate::server::builds::{Build, ServerChoice, kind_name, resolve};

/// The built-in plans: name, what it is, its TOML.
pub const BUILTIN: [(&str, &str); 5] = [
    ("quick", include_str!("../../plans/quick.toml")),
    ("small", include_str!("../../plans/small.toml")),
    ("versions", include_str!("../../plans/versions.toml")),
    ("diagnosis", include_str!("../../plans/diagnosis.toml")),
    ("query-cache", include_str!("../../plans/query-cache.toml")),
];

/// Options a step may not set: the sweep sets them (per cell, per class, for the whole plan).
const RESERVED: [&str; 12] = [
    "target",
    "server",
    "server-set",
    "server-datadir",
    "keep",
    "output",
    "prepare",
    "force",
    "threads",
    "time",
    "tables",
    "table-size",
];

/// A plan as written (and as saved, resolved, in a sweep directory as `plan.toml`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanFile {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Client counts: every step runs at each.
    #[serde(default = "default_clients")]
    pub clients: Vec<u32>,
    #[serde(default = "default_tables")]
    pub tables: u32,
    #[serde(default = "default_table_size")]
    pub table_size: u64,
    /// Seconds of a `read` step (R) and of a `write` step (W); `warmup` steps run warmup_time.
    #[serde(default = "default_read_time")]
    pub read_time: f64,
    #[serde(default = "default_write_time")]
    pub write_time: f64,
    #[serde(default = "default_warmup_time")]
    pub warmup_time: f64,
    /// Seconds of the postwrite pause; unset: min(1200, 60 + rows / 1,000,000).
    pub postwrite_pause: Option<f64>,
    /// How many times every cell runs (fresh each time; the repeats interleaved: every cell
    /// once, then every cell again...).
    #[serde(default = "default_repeat")]
    pub repeat: u32,
    /// Workload options for every step (a step's own options win).
    #[serde(default)]
    pub options: toml::Table,
    /// Where to run; none: embedded SQLite in the sweep directory.
    #[serde(default)]
    pub targets: Vec<Spanned<TargetDef>>,
    /// Named configurations; none: one called `default` with no settings.
    #[serde(default)]
    pub configs: BTreeMap<String, Spanned<ConfigDef>>,
    pub steps: Vec<Spanned<StepDef>>,
    /// Run each workload step on these hosts at once (`ssh://[user@]host[:port]`), each
    /// with its share of the clients, started at one instant, and merge their results: ssh
    /// is the engine, with the dbsweep binary on each host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_hosts: Vec<String>,
    /// The dbsweep binary on the client hosts (default: `dbsweep` on their PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_dbsweep: Option<String>,
}

fn default_repeat() -> u32 {
    1
}

/// The most repeats of a cell a plan may ask for.
pub const MAX_REPEAT: u32 = 1000;

fn default_clients() -> Vec<u32> {
    vec![1]
}
fn default_tables() -> u32 {
    1
}
fn default_table_size() -> u64 {
    10_000
}
fn default_read_time() -> f64 {
    600.0
}
fn default_write_time() -> f64 {
    900.0
}
fn default_warmup_time() -> f64 {
    60.0
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDef {
    /// The label in step names and reports; default: the URL's scheme or the server kind.
    pub name: Option<String>,
    /// A running database (or a SQLite file).
    pub url: Option<String>,
    /// A managed server of this kind, started fresh for each configuration and client count:
    /// `"postgres"` (the system's), `"postgres:13"` (that version's build).
    pub server: Option<ServerChoice>,
    /// The managed server's install tree (bin/postgres and bin/initdb, or bin/mariadbd).
    pub basedir: Option<PathBuf>,
    /// Settings of this target's server, merged with each configuration's (which win where
    /// both name one): versions differ in what they accept.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub settings: BTreeMap<String, toml::Value>,
    /// Connect to the managed server over its Unix socket instead of loopback TCP.
    #[serde(default)]
    pub socket: bool,
    /// The directory (absolute) in which each fresh managed server's data directory is made,
    /// for example on the disk under test; default TMPDIR.
    pub datadir_in: Option<PathBuf>,
    /// Start the managed server with TLS on (required of TCP connections) and connect with
    /// verify-ca; a URL target says its TLS in its URL (`sslmode=`).
    #[serde(default)]
    pub tls: bool,
    /// The database host's Prometheus node_exporter (`http://HOST:9100/metrics`): every
    /// step on this target gets the server host's CPU, disk and network from it.
    pub metrics: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigDef {
    /// Server settings (managed servers), or PRAGMAs (SQLite).
    #[serde(default)]
    pub settings: BTreeMap<String, toml::Value>,
    /// Drop the OS page cache before each step (IO-bound runs; root only).
    #[serde(default)]
    pub drop_caches: bool,
    /// Memory limit of the managed server's processes (cgroups), like `512M` or `2G`.
    pub memory_limit: Option<String>,
    /// The managed server with TLS on, connected to over TLS (plain vs TLS in one sweep).
    #[serde(default)]
    pub tls: bool,
    /// Profile every measured step (perf, as `--profile`); a managed MariaDB/MySQL also gets
    /// performance_schema with its wait instruments on, for the waits by instrument.
    #[serde(default)]
    pub profile: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Class {
    /// Runs read_time (R).
    Read,
    /// Runs write_time (W).
    Write,
    /// Runs warmup_time and is not reported.
    Warmup,
}

/// `load = true` or `load = "tpcc"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LoadDef {
    Sysbench(bool),
    Workload(String),
}

/// What a load step prepares the tables of: sysbench's (as oltp_read_write has them) or a
/// named workload's.
const SYSBENCH_LOAD: &str = "oltp_read_write";

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepDef {
    pub name: Option<String>,
    pub workload: Option<String>,
    pub class: Option<Class>,
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub options: toml::Table,
    /// A load: `true` prepares the sysbench tables (dropping the sweep's own first); a
    /// workload's name (`"tpcc"`) prepares that workload's tables.
    pub load: Option<LoadDef>,
    /// A pause: `"postwrite"` or seconds.
    pub pause: Option<toml::Value>,
    /// A crash-recovery step (managed servers): the server is killed with SIGKILL while the
    /// workload runs, `crash_after` seconds after its warm-up (default 0: at full throughput
    /// once warmed up), and started again on the same data directory.
    #[serde(default)]
    pub crash: bool,
    pub crash_after: Option<f64>,
}

/// Where a cell runs.
#[derive(Clone, Debug, PartialEq)]
pub enum TargetSpec {
    /// Embedded SQLite, a fresh file per cell in the sweep directory.
    Sqlite,
    Url(String),
    Managed(ServerKind),
}

#[derive(Clone, Debug)]
pub struct SweepTarget {
    pub name: String,
    pub spec: TargetSpec,
    /// A managed server's clients connect over its Unix socket.
    pub socket: bool,
    /// Where a managed server's data directories are made (default TMPDIR).
    pub datadir_in: Option<PathBuf>,
    /// A managed server with TLS on.
    pub tls: bool,
    /// The managed server's build; None: the system's.
    pub build: Option<Build>,
    /// The target's own server settings (the configuration's come after them).
    pub settings: Vec<(String, String)>,
    /// The database host's node_exporter (`metrics = "..."`).
    pub metrics: Option<String>,
}

impl SweepTarget {
    /// The settings of `config` on this target: the target's, then the configuration's.
    pub fn settings_with(&self, config: &Config) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .settings
            .iter()
            .filter(|(k, _)| !config.settings.iter().any(|(c, _)| c == k))
            .cloned()
            .collect();
        out.extend(config.settings.iter().cloned());
        out
    }
}

#[derive(Clone, Debug)]
pub struct Config {
    pub name: String,
    pub settings: Vec<(String, String)>,
    pub drop_caches: bool,
    pub memory_limit: Option<u64>,
    pub tls: bool,
    pub profile: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Pause {
    Postwrite,
    Seconds(f64),
}

#[derive(Clone, Debug)]
pub enum StepKind {
    /// Loads the tables of this workload with these `--name=value` options (the plan's that
    /// it takes, then the step's own).
    Load(String, Vec<String>),
    Run {
        workload: String,
        class: Class,
        /// `--name=value` options, without the ones the sweep sets.
        args: Vec<String>,
    },
    Pause(Pause),
}

#[derive(Clone, Debug)]
pub struct Step {
    pub name: String,
    pub kind: StepKind,
    /// A crash-recovery step: seconds into the measured part at which the server is killed.
    pub crash: Option<f64>,
}

/// One configuration of one target at one client count: a fresh server (or SQLite file) that
/// runs every step in order.
#[derive(Clone, Copy, Debug)]
pub struct Cell<'a> {
    pub target: &'a SweepTarget,
    pub config: &'a Config,
    pub clients: u32,
    /// Which run of the cell this is (1-based) of the plan's `repeats`.
    pub repeat: u32,
    pub repeats: u32,
}

impl Cell<'_> {
    /// `target.config.cN` (and `.rK` when the plan repeats cells): the cell's directory name.
    pub fn id(&self) -> String {
        let id = format!(
            "{}.{}.c{}",
            self.target.name, self.config.name, self.clients
        );
        if self.repeats > 1 {
            format!("{id}.r{}", self.repeat)
        } else {
            id
        }
    }
}

/// What the command line changes in a plan.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub target: Option<String>,
    /// `--server`, repeatable: one target per build.
    pub server: Vec<ServerChoice>,
    pub server_socket: bool,
    pub clients: Option<Vec<u32>>,
    pub tables: Option<u32>,
    pub table_size: Option<u64>,
    pub read_time: Option<f64>,
    pub write_time: Option<f64>,
    pub warmup_time: Option<f64>,
    pub postwrite_pause: Option<f64>,
    pub repeat: Option<u32>,
}

/// A validated plan, ready to run.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// The plan with the overrides applied: what `plan.toml` in the sweep directory holds.
    pub file: PlanFile,
    pub targets: Vec<SweepTarget>,
    pub configs: Vec<Config>,
    pub steps: Vec<Step>,
}

/// Where a plan's text came from, for error messages.
struct Source<'a> {
    name: &'a str,
    text: &'a str,
}

impl Source<'_> {
    fn line_of(&self, offset: usize) -> usize {
        self.text[..offset.min(self.text.len())]
            .bytes()
            .filter(|b| *b == b'\n')
            .count()
            + 1
    }

    fn error(&self, span: std::ops::Range<usize>, why: impl std::fmt::Display) -> Error {
        Error::Usage(format!("{}:{}: {why}", self.name, self.line_of(span.start)))
    }

    /// The line of a top-level `key =` (or line 1 when the key is not written).
    fn key_error(&self, key: &str, why: impl std::fmt::Display) -> Error {
        let line = self
            .text
            .lines()
            .position(|l| {
                l.trim_start()
                    .strip_prefix(key)
                    .is_some_and(|r| r.trim_start().starts_with('='))
            })
            .map_or(1, |i| i + 1);
        Error::Usage(format!("{}:{line}: {key}: {why}", self.name))
    }
}

impl Sweep {
    /// Loads `plan`: a built-in plan's name, or a TOML file.
    pub fn load(plan: &str, overrides: &Overrides) -> Result<Sweep, Error> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == plan) {
            return Sweep::parse(&format!("{plan} (built-in plan)"), text, overrides);
        }
        let path = Path::new(plan);
        if !path.exists() && !plan.contains('/') && !plan.ends_with(".toml") {
            let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
            return Err(Error::Usage(format!(
                "plan {plan}: no such file and no such built-in plan (built-in: {})",
                names.join(", ")
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Usage(format!("plan {plan}: cannot read it: {e}")))?;
        Sweep::parse(plan, &text, overrides)
    }

    /// Parses and validates a plan's text; `name` is what errors call it.
    pub fn parse(name: &str, text: &str, overrides: &Overrides) -> Result<Sweep, Error> {
        let src = Source { name, text };
        let mut file: PlanFile = toml::from_str(text).map_err(|e| {
            let why = e.message().trim_end().to_string();
            match e.span() {
                Some(span) => src.error(span, why),
                None => Error::Usage(format!("{name}: {why}")),
            }
        })?;
        apply(&mut file, overrides);
        validate(&src, file)
    }

    /// Every cell, in the order they run: target, then configuration, then client count.
    pub fn cells(&self) -> Vec<Cell<'_>> {
        let mut out = Vec::new();
        // Repeats interleave: every cell once, then every cell again, so that a slow drift
        // of the machine (warming disks, a neighbour's load) does not favour one of them.
        let repeats = self.file.repeat;
        for repeat in 1..=repeats {
            for target in &self.targets {
                for config in &self.configs {
                    for &clients in &self.file.clients {
                        out.push(Cell {
                            target,
                            config,
                            clients,
                            repeat,
                            repeats,
                        });
                    }
                }
            }
        }
        out
    }

    /// The options of a `dbsweep run` for workload `workload` at `clients` clients running
    /// `time` seconds, plus `args`.
    fn run_args(&self, workload: &str, clients: u32, time: f64, args: &[String]) -> Vec<String> {
        let mut out: Vec<String> = vec![
            "dbsweep".into(),
            "run".into(),
            workload.into(),
            format!("--tables={}", self.file.tables),
            format!("--table-size={}", self.file.table_size),
            format!("--threads={clients}"),
            format!("--time={time}"),
        ];
        out.extend(args.iter().cloned());
        out
    }

    /// The command line (after the program's name) of a workload step at `clients`: what a
    /// client host runs; None for other steps.
    pub fn step_argv(&self, step: &Step, clients: u32) -> Option<Vec<String>> {
        let StepKind::Run {
            workload,
            class,
            args,
        } = &step.kind
        else {
            return None;
        };
        let mut argv = self.run_args(workload, clients, self.class_time(*class), args);
        argv.remove(0);
        Some(argv)
    }

    /// The resolved options of a workload step in a cell whose database is at `target_url`.
    pub fn step_plan(&self, step: &Step, clients: u32, target_url: &str) -> Result<RunPlan, Error> {
        let (workload, time, args) = match &step.kind {
            StepKind::Run {
                workload,
                class,
                args,
            } => (workload.as_str(), self.class_time(*class), args.clone()),
            // A load prepares the tables with the plan's options.
            StepKind::Load(workload, args) => (workload.as_str(), 0.0, args.clone()),
            StepKind::Pause(_) => ("oltp_read_write", 0.0, Vec::new()),
        };
        let argv = self.run_args(workload, clients, time, &args);
        let mut plan = parse_run(&argv)?;
        plan.target = target_url.to_string();
        Ok(plan)
    }

    /// A workload step's plan and workload, on `target_url` (None: only checked, as the plan's
    /// validation does). A sysbench Lua script (`workload = "x.lua"`) runs in dbsweep's Lua
    /// states, with the step's options parsed as the script's command line.
    pub fn step_workload(
        &self,
        step: &Step,
        clients: u32,
        target_url: Option<&str>,
    ) -> Result<(RunPlan, Box<dyn crate::workload::Workload>), Error> {
        if let StepKind::Run {
            workload,
            class,
            args,
        } = &step.kind
            && crate::lua::is_script(workload)
        {
            let argv = self.run_args(workload, clients, self.class_time(*class), args);
            return crate::lua::step_workload(&argv, target_url);
        }
        let plan = self.step_plan(step, clients, target_url.unwrap_or("sqlite://check.db"))?;
        let workload = crate::workload::build(&plan.workload, &plan.workload_opts)?;
        Ok((plan, workload))
    }

    pub fn class_time(&self, class: Class) -> f64 {
        match class {
            Class::Read => self.file.read_time,
            Class::Write => self.file.write_time,
            Class::Warmup => self.file.warmup_time,
        }
    }

    /// Seconds of the postwrite pause.
    pub fn postwrite_seconds(&self) -> f64 {
        self.file.postwrite_pause.unwrap_or_else(|| {
            let rows = f64::from(self.file.tables) * self.file.table_size as f64;
            (60.0 + rows / 1e6).min(1200.0)
        })
    }

    /// A guess of a step's seconds, for the schedule and the progress bar's ETA.
    pub fn estimate(&self, step: &Step) -> f64 {
        match &step.kind {
            StepKind::Run { class, .. } => self.class_time(*class) + 0.5,
            // About 150,000 rows/s, and the secondary index.
            StepKind::Load(w, args) if w == "tpcc" => {
                // About 550,000 rows per warehouse at about 150,000 rows/s.
                let warehouses = args
                    .iter()
                    .rev()
                    .find_map(|a| a.strip_prefix("--warehouses=")?.parse::<u32>().ok())
                    .unwrap_or(1);
                2.0 + warehouses as f64 * 3.7
            }
            StepKind::Load(..) => {
                2.0 + f64::from(self.file.tables) * self.file.table_size as f64 / 150_000.0
            }
            StepKind::Pause(Pause::Postwrite) => self.postwrite_seconds(),
            StepKind::Pause(Pause::Seconds(s)) => *s,
        }
    }

    /// Seconds to start a cell's server (or create its file).
    pub fn cell_overhead(cell: &Cell) -> f64 {
        match cell.target.spec {
            TargetSpec::Managed(_) => 5.0,
            _ => 0.0,
        }
    }

    /// The schedule, as `--dry-run` prints it.
    pub fn schedule(&self) -> String {
        let cells = self.cells();
        let mut out = String::new();
        // The sbtest tables' size matters only to a plan that loads them.
        let sbtest = self
            .steps
            .iter()
            .any(|s| matches!(&s.kind, StepKind::Load(w, _) if w == SYSBENCH_LOAD));
        let tables = if sbtest {
            format!(
                "; {} table(s) of {} rows",
                self.file.tables, self.file.table_size
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "plan {}: {} target(s) x {} configuration(s) x {} client count(s){} = {} cell(s) of {} step(s){tables}",
            self.file.name,
            self.targets.len(),
            self.configs.len(),
            self.file.clients.len(),
            if self.file.repeat > 1 {
                format!(" x {} runs (interleaved)", self.file.repeat)
            } else {
                String::new()
            },
            cells.len(),
            self.steps.len(),
        );
        let mut total = 0.0;
        for cell in &cells {
            let _ = writeln!(out, "\n{}: {}", cell.id(), describe_cell(cell));
            total += Sweep::cell_overhead(cell);
            for (i, step) in self.steps.iter().enumerate() {
                let secs = self.estimate(step);
                total += secs;
                let what = match &step.kind {
                    StepKind::Load(w, _) if w != SYSBENCH_LOAD => {
                        format!("load the {w} tables ({} at once)", cell.clients)
                    }
                    StepKind::Load(..) => format!(
                        "load {} x {} rows ({} at once)",
                        self.file.tables, self.file.table_size, cell.clients
                    ),
                    StepKind::Pause(Pause::Postwrite) => "postwrite pause".to_string(),
                    StepKind::Pause(Pause::Seconds(s)) => format!("pause {s} s"),
                    StepKind::Run {
                        workload,
                        class,
                        args,
                    } => {
                        let class = match class {
                            Class::Read => "R",
                            Class::Write => "W",
                            Class::Warmup => "warm-up, not reported",
                        };
                        let mut s = format!("{workload} ({class})");
                        for a in args {
                            s.push(' ');
                            s.push_str(a);
                        }
                        s
                    }
                };
                let _ = writeln!(
                    out,
                    "  {:>3} {:<26} {:>8}  {what}",
                    i + 1,
                    step.name,
                    format_seconds(secs)
                );
            }
        }
        let _ = writeln!(out, "\nestimated duration: {}", format_seconds(total));
        out
    }
}

/// `90` -> `1m30s`.
pub fn format_seconds(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, sec) => format!("{h}h{m:02}m{sec:02}s"),
    }
}

fn describe_cell(cell: &Cell) -> String {
    let target = match &cell.target.spec {
        TargetSpec::Sqlite => "embedded SQLite (a fresh file)".to_string(),
        TargetSpec::Url(u) => crate::db::redact_url(u),
        TargetSpec::Managed(k) => {
            let mut s = format!("a fresh managed {k:?} server");
            if let Some(d) = &cell.target.datadir_in {
                let _ = write!(s, " in {}", d.display());
            }
            if cell.target.socket {
                s.push_str(" over its Unix socket");
            }
            if cell.target.tls || cell.config.tls {
                s.push_str(" over TLS (verify-ca)");
            }
            s
        }
    };
    let mut s = format!("{target}, {} client(s)", cell.clients);
    if !cell.config.settings.is_empty() {
        let set: Vec<String> = cell
            .config
            .settings
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let _ = write!(s, ", {}", set.join(" "));
    }
    if cell.config.drop_caches {
        s.push_str(", page cache dropped before each step");
    }
    if let Some(m) = cell.config.memory_limit {
        let _ = write!(s, ", memory limit {} MB", m >> 20);
    }
    s
}

fn apply(file: &mut PlanFile, o: &Overrides) {
    if let Some(c) = &o.clients {
        file.clients = c.clone();
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
}

/// The server settings of a plan's table (`what`: where they are, for errors), checked.
fn settings_of(
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
fn option_value(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(if *b { "on" } else { "off" }.into()),
        _ => None,
    }
}

fn option_name(key: &str) -> String {
    key.replace('_', "-")
}

/// Options only TPC-C takes.
const TPCC_ONLY: &[&str] = &["warehouses", "wait"];
/// Options of the sbtest workloads that TPC-C does not take.
const SBTEST_ONLY: &[&str] = &[
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
fn takes(workload: &str, option: &str) -> bool {
    let option = option_name(option);
    if workload == "tpcc" {
        !SBTEST_ONLY.contains(&option.as_str())
    } else {
        !TPCC_ONLY.contains(&option.as_str())
    }
}

/// A step's options: the plan's that its workload takes, then its own (which win; a step's
/// own option its workload does not take is refused when the step is checked).
fn merge_options(workload: &str, plan: &toml::Table, step: &toml::Table) -> toml::Table {
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

fn option_args(t: &toml::Table) -> Vec<String> {
    t.iter()
        .filter_map(|(k, v)| Some(format!("--{}={}", option_name(k), option_value(v)?)))
        .collect()
}

/// Parses a `dbsweep run` command line into a checked plan; the error is clap's or the plan's
/// first line.
fn parse_run(argv: &[String]) -> Result<RunPlan, String> {
    let cli = Cli::try_parse_from(argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or("").trim();
        first.strip_prefix("error: ").unwrap_or(first).to_string()
    })?;
    let Command::Run(opts) = cli.command else {
        unreachable!("argv starts with run")
    };
    RunPlan::from_opts(&opts).map_err(|e| e.to_string())
}

impl From<String> for Error {
    fn from(s: String) -> Error {
        Error::Usage(s)
    }
}

fn check_options(src: &Source, span: std::ops::Range<usize>, t: &toml::Table) -> Result<(), Error> {
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

fn check_seconds(src: &Source, key: &str, v: f64, min: f64) -> Result<(), Error> {
    if v.is_finite() && (min..=super::MAX_SECONDS).contains(&v) {
        Ok(())
    } else {
        Err(src.key_error(
            key,
            format!(
                "{v} must be a number of seconds from {min} to {} (a year)",
                super::MAX_SECONDS
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

fn validate(src: &Source, file: PlanFile) -> Result<Sweep, Error> {
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
            .any(|c| *c == 0 || *c > super::MAX_CLIENTS)
    {
        return Err(src.key_error(
            "clients",
            format!(
                "needs one or more client counts, each from 1 to {}",
                super::MAX_CLIENTS
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
        let span = 0..0;
        for h in &file.client_hosts {
            crate::sweep::hosts::Host::parse(h)
                .map_err(|e| src.error(span.clone(), format!("client_hosts: {e}")))?;
        }
        let n = file.client_hosts.len() as u32;
        if let Some(c) = file.clients.iter().find(|c| **c % n != 0) {
            return Err(src.error(
                span,
                format!(
                    "clients = {c} with {n} client_hosts: each host runs an equal share, so give multiples of {n}"
                ),
            ));
        }
        if let Some(t) = targets
            .iter()
            .find(|t| !matches!(t.spec, TargetSpec::Url(_)))
        {
            return Err(src.error(
                span,
                format!(
                    "client_hosts need targets given by url (the client hosts connect to the database themselves), and target {} is not one",
                    t.name
                ),
            ));
        }
        if configs_have_profile(&file) {
            return Err(src.error(
                span,
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
                toml::Value::Integer(i) if (0..=super::MAX_SECONDS as i64).contains(i) => {
                    Pause::Seconds(*i as f64)
                }
                toml::Value::Float(f) if (0.0..=super::MAX_SECONDS).contains(f) => {
                    Pause::Seconds(*f)
                }
                other => {
                    return Err(src.error(
                        span,
                        format!(
                            "pause = {other}: use \"postwrite\" or a number of seconds from 0 to {} (a year)",
                            super::MAX_SECONDS
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
                if !(0.0..=super::MAX_SECONDS).contains(&after) {
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

fn configs_have_profile(file: &PlanFile) -> bool {
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

fn is_label(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match Sweep::parse("p.toml", text, &Overrides::default()) {
            Err(Error::Usage(m)) => m,
            Err(e) => panic!("not a usage error: {e}"),
            Ok(_) => panic!("accepted: {text}"),
        }
    }

    const ONE_STEP: &str = "[[steps]]\nworkload = \"oltp_point_select\"\nclass = \"read\"\n";

    #[test]
    fn builtin_plans_are_valid() {
        for (name, _) in BUILTIN {
            let s = Sweep::load(name, &Overrides::default()).expect(name);
            assert!(!s.steps.is_empty());
            assert_eq!(s.file.name, name);
        }
        let small = Sweep::load("small", &Overrides::default()).unwrap();
        // docs/workloads.md section 4: the suite starts with the load and ends with insert.
        assert_eq!(small.steps.first().unwrap().name, "load");
        assert_eq!(small.steps.last().unwrap().name, "insert");
        let pauses = small
            .steps
            .iter()
            .filter(|s| matches!(s.kind, StepKind::Pause(Pause::Postwrite)))
            .count();
        assert_eq!(pauses, 2);
    }

    #[test]
    fn builtin_steps_that_write_run_the_write_time() {
        for (name, _) in BUILTIN {
            let s = Sweep::load(name, &Overrides::default()).unwrap();
            for step in &s.steps {
                if let StepKind::Run {
                    workload, class, ..
                } = &step.kind
                {
                    let writes = ["write", "update", "insert", "delete"]
                        .iter()
                        .any(|w| workload.contains(w) && !workload.contains("read_write"));
                    if writes {
                        assert!(
                            matches!(class, Class::Write),
                            "{name}: step {} ({workload}) is class {class:?}",
                            step.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn errors_name_the_line() {
        let text = format!(
            "clients = [1]\n\n{ONE_STEP}\n[[steps]]\nworkload = \"nope\"\nclass = \"read\"\n"
        );
        let e = err(&text);
        assert!(e.starts_with("p.toml:7:"), "{e}");
        assert!(e.contains("nope"), "{e}");

        let e = err(&format!("{ONE_STEP}options = {{ range_size = 0 }}\n"));
        assert!(
            e.starts_with("p.toml:1:") && e.contains("range-size"),
            "{e}"
        );

        let e = err(&format!("{ONE_STEP}options = {{ threads = 4 }}\n"));
        assert!(e.contains("the sweep sets it"), "{e}");

        let e = err(&format!("{ONE_STEP}options = {{ no_such_option = 4 }}\n"));
        assert!(e.contains("no-such-option"), "{e}");

        let e = err(&format!("name = \"x\"\nclients = [0]\n{ONE_STEP}"));
        assert!(e.starts_with("p.toml:2: clients"), "{e}");

        // A TOML syntax error, and an unknown key, name their line.
        let e = err(&format!("{ONE_STEP}class = \"read\"\n"));
        assert!(e.starts_with("p.toml:"), "{e}");
        let e = err(&format!("tabels = 3\n{ONE_STEP}"));
        assert!(e.starts_with("p.toml:1:") && e.contains("tabels"), "{e}");

        let e = err("[[steps]]\nworkload = \"oltp_point_select\"\n");
        assert!(e.contains("class"), "{e}");
        let e = err("[[steps]]\nload = true\npause = 3\n");
        assert!(e.contains("exactly one"), "{e}");
        let e = err("steps = []\n");
        assert!(e.contains("at least one"), "{e}");
    }

    #[test]
    fn targets_and_configs_are_checked() {
        let e = err(&format!(
            "[[targets]]\nurl = \"postgres://u@h/db\"\n[configs.big]\nsettings = {{ shared_buffers = \"1GB\" }}\n{ONE_STEP}"
        ));
        assert!(
            e.starts_with("p.toml:3:") && e.contains("managed server"),
            "{e}"
        );
        let e = err(&format!("[[targets]]\nurl = \"oracle://x\"\n{ONE_STEP}"));
        assert!(e.starts_with("p.toml:1:"), "{e}");
        let e = err(&format!("[[targets]]\nname = \"a\"\n{ONE_STEP}"));
        assert!(e.contains("exactly one of url"), "{e}");
        let e = err(&format!(
            "[[targets]]\nserver = \"postgres\"\n[configs.x]\nmemory_limit = \"lots\"\n{ONE_STEP}"
        ));
        assert!(e.contains("memory_limit"), "{e}");
        let s = Sweep::parse(
            "p",
            &format!(
                "clients = [1, 4]\n[[targets]]\nserver = \"mariadb\"\n[configs.a]\nsettings = {{ innodb_buffer_pool_size = \"64M\" }}\nmemory_limit = \"1G\"\n[configs.b]\n{ONE_STEP}"
            ),
            &Overrides::default(),
        )
        .unwrap();
        let ids: Vec<String> = s.cells().iter().map(Cell::id).collect();
        assert_eq!(
            ids,
            [
                "mariadb.a.c1",
                "mariadb.a.c4",
                "mariadb.b.c1",
                "mariadb.b.c4"
            ]
        );
        assert_eq!(s.configs[0].memory_limit, Some(1 << 30));
    }

    #[test]
    fn overrides_and_step_options_resolve() {
        let o = Overrides {
            server: vec!["postgres".parse().unwrap()],
            clients: Some(vec![2]),
            read_time: Some(3.0),
            table_size: Some(500),
            ..Overrides::default()
        };
        let text = format!(
            "options = {{ range_size = 7, skip_trx = true }}\n{ONE_STEP}options = {{ range-size = 9 }}\n"
        );
        let s = Sweep::parse("p", &text, &o).unwrap();
        assert_eq!(s.targets[0].spec, TargetSpec::Managed(ServerKind::Postgres));
        let plan = s.step_plan(&s.steps[0], 2, "sqlite://x.db").unwrap();
        assert_eq!(plan.runner.threads, 2);
        assert_eq!(plan.runner.time, 3.0);
        assert_eq!(plan.workload_opts.table_size, 500);
        assert_eq!(plan.workload_opts.range_size, 9);
        assert!(plan.workload_opts.skip_trx);
        assert_eq!(plan.target, "sqlite://x.db");
        // The resolved plan saves and reads back the same.
        let saved = toml::to_string(&s.file).unwrap();
        let again = Sweep::parse("plan.toml", &saved, &Overrides::default()).unwrap();
        assert_eq!(again.file.read_time, 3.0);
        assert_eq!(again.targets[0].spec, s.targets[0].spec);
        assert_eq!(again.steps.len(), s.steps.len());
    }

    #[test]
    fn sizes_and_durations_format() {
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("x"), None);
        assert_eq!(format_seconds(59.6), "1m00s");
        assert_eq!(format_seconds(3725.0), "1h02m05s");
    }
}
