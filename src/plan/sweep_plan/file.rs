//! The plan file as written: the TOML tables and their defaults, before any check.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::server::builds::ServerChoice;

/// The built-in plans: the house's, then the workload families' own; each name with its TOML.
pub fn builtin() -> impl Iterator<Item = (&'static str, &'static str)> {
    HOUSE.into_iter().chain(crate::workload::families::plans())
}

/// The house's built-in plans (the families' own are in their folders): name, its TOML.
const HOUSE: [(&str, &str); 7] = [
    ("quick", include_str!("../../../plans/quick.toml")),
    ("series", include_str!("../../../plans/series.toml")),
    ("small", include_str!("../../../plans/small.toml")),
    ("versions", include_str!("../../../plans/versions.toml")),
    ("forks", include_str!("../../../plans/forks.toml")),
    ("diagnosis", include_str!("../../../plans/diagnosis.toml")),
    (
        "query-cache",
        include_str!("../../../plans/query-cache.toml"),
    ),
];

/// Options a step may not set: the sweep sets them (per cell, per class, for the whole plan).
pub(crate) const RESERVED: [&str; 13] = [
    "target",
    "server",
    "server-set",
    "server-datadir",
    "server-datadir-force",
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
    /// The plan's name: the sweep directory is `sweep-NAME-DATE-TIME`.
    #[serde(default)]
    pub name: String,
    /// One line on what the plan studies (kept with it in the sweep directory).
    #[serde(default)]
    pub description: String,
    /// Client counts: every step runs at each.
    #[serde(default = "default_clients")]
    pub clients: Vec<u32>,
    /// The sysbench tables every step uses (`--tables`).
    #[serde(default = "default_tables")]
    pub tables: u32,
    /// Rows of each table (`--table-size`).
    #[serde(default = "default_table_size")]
    pub table_size: u64,
    /// Seconds of a `read` step (R).
    #[serde(default = "default_read_time")]
    pub read_time: f64,
    /// Seconds of a `write` step (W).
    #[serde(default = "default_write_time")]
    pub write_time: f64,
    /// Seconds of a `warmup` step (run, not reported).
    #[serde(default = "default_warmup_time")]
    pub warmup_time: f64,
    /// Seconds of the postwrite pause; unset: min(1200, 60 + rows / 1,000,000).
    pub postwrite_pause: Option<f64>,
    /// How many times every cell runs (fresh each time; the repeats interleaved: every cell
    /// once, then every cell again...).
    #[serde(default = "default_repeat")]
    pub repeat: u32,
    /// The least change between builds the runs must resolve (`"2%"`): rounds are added, from
    /// `repeat` (at least 3) up to `max_repeat`, until every step's spread resolves it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detect: Option<String>,
    /// The most rounds `detect` may run (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_repeat: Option<u32>,
    /// How many times a cell measured on a busy machine (other processes' CPU, steal) is run
    /// again at the end of the sweep (default 0; 2 where `detect` is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun_busy: Option<u32>,
    /// Workload options for every step (a step's own options win).
    #[serde(default)]
    pub options: toml::Table,
    /// Where to run; none: embedded SQLite in the sweep directory.
    #[serde(default)]
    pub targets: Vec<Spanned<TargetDef>>,
    /// Named configurations; none: one called `default` with no settings.
    #[serde(default)]
    pub configs: BTreeMap<String, Spanned<ConfigDef>>,
    /// The steps, in order: each runs in every configuration at every client count.
    pub steps: Vec<Spanned<StepDef>>,
    /// Run each workload step on these hosts at once (`ssh://[user@]host[:port]`), each
    /// with its share of the clients, started at one instant, and merge their results: ssh
    /// is the engine, with the dbsweep binary on each host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub client_hosts: Vec<String>,
    /// The dbsweep binary on the client hosts (default: `dbsweep` on their PATH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_dbsweep: Option<String>,
    /// Where live metrics are served while the sweep runs (`[HOST:]PORT`; `--metrics-listen`
    /// wins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics_listen: Option<String>,
    /// Measure the machine's ceilings (`dbsweep limits`) once per target before the cells
    /// run, or take them from the day's cache of the device, and record them in every step's
    /// results: `limits = true`, or `limits = { size = "512M", seconds = 2 }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsDef>,
}

/// `limits = true`, or the probes' shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LimitsDef {
    On(bool),
    Shaped(LimitsShape),
}

/// The probes' shape as a plan gives it (each default as `dbsweep limits`'s).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsShape {
    /// The data probe file's size (`2G`).
    pub size: Option<String>,
    /// Seconds per probe.
    pub seconds: Option<f64>,
    /// The random probes' queue depths.
    pub depths: Option<Vec<u32>>,
    /// The commit probe's writers beside the single one.
    pub writers: Option<u32>,
}

impl LimitsDef {
    /// The probes' shape on `dir` with `page`; None when the plan turns them off; an error
    /// says which value does not do.
    pub fn shape(&self, dir: PathBuf, page: u64) -> Result<Option<crate::limits::Shape>, String> {
        let mut s = crate::limits::Shape::new(dir, page);
        let given = match self {
            LimitsDef::On(false) => return Ok(None),
            LimitsDef::On(true) => return Ok(Some(s)),
            LimitsDef::Shaped(g) => g,
        };
        if let Some(size) = &given.size {
            s.size = super::parse_size(size)
                .filter(|&n| n >= 1 << 20)
                .ok_or_else(|| format!("size {size:?} is not a size of at least 1M (512M, 2G)"))?;
        }
        if let Some(secs) = given.seconds {
            if !(secs > 0.0 && secs <= 3600.0) {
                return Err(format!("seconds {secs} is not from 0 to 3600"));
            }
            s.seconds = secs;
        }
        if let Some(d) = &given.depths {
            if d.is_empty() || d.iter().any(|&n| !(1..=4096).contains(&n)) {
                return Err(format!("depths {d:?} are not queue depths from 1 to 4096"));
            }
            s.depths = d.clone();
        }
        if let Some(w) = given.writers {
            if !(1..=1024).contains(&w) {
                return Err(format!("writers {w} is not from 1 to 1024"));
            }
            s.writers = w;
        }
        Ok(Some(s))
    }
}

pub(crate) fn default_repeat() -> u32 {
    1
}

/// The most repeats of a cell a plan may ask for.
pub const MAX_REPEAT: u32 = 1000;

pub(crate) fn default_clients() -> Vec<u32> {
    vec![1]
}
pub(crate) fn default_tables() -> u32 {
    1
}
pub(crate) fn default_table_size() -> u64 {
    10_000
}
pub(crate) fn default_read_time() -> f64 {
    600.0
}
pub(crate) fn default_write_time() -> f64 {
    900.0
}
pub(crate) fn default_warmup_time() -> f64 {
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
    /// Runs its `events` (a step option) without a time limit: a step that does a fixed
    /// amount of work and is timed whole (sql-bench's groups, an index build).
    Once,
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
pub(crate) const SYSBENCH_LOAD: &str = "oltp_read_write";

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepDef {
    /// The step's name in results and reports; default: its workload's.
    pub name: Option<String>,
    /// The workload it runs (`dbsweep workloads` lists them).
    pub workload: Option<String>,
    /// `read` (runs read_time), `write` (write_time), `warmup` (warmup_time, not reported)
    /// or `once` (its `events`, timed whole).
    pub class: Option<Class>,
    /// Workload options of this step (as on the command line, without the dashes), over the
    /// plan's.
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
    /// Seconds after the warm-up at which a `crash` step kills the server.
    pub crash_after: Option<f64>,
    /// A step whose workload needs files of the user's that no rule makes (sql-bench's ATIS
    /// data): left out, with a line saying why, when they are not given, rather than failing
    /// the sweep.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub optional: bool,
    /// Groups of clients side by side in the step, one of them measured (the step's figures);
    /// the others run beside it as `--role`s do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roles: Option<Vec<RoleDef>>,
    /// A capacity search instead of one run (`search = { percentile = 99, limit_ms = 10 }`):
    /// the highest rate whose percentile stays under the limit, as `dbsweep capacity` finds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<SearchDef>,
}

/// A step's capacity search, as written.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchDef {
    /// The percentile the limit is on (default 99).
    pub percentile: Option<f64>,
    /// The latency limit, milliseconds.
    pub limit_ms: f64,
    /// How close the highest rate under and the lowest over must come, percent (default 5).
    pub precision: Option<f64>,
    /// The most probes the search runs (default 14).
    pub max_probes: Option<u32>,
    /// The longest probe, seconds (default 60).
    pub max_probe_time: Option<f64>,
}

/// A group of a step's clients (`roles = [{ workload = "...", clients = 1, rate = 100 }]`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleDef {
    /// The workload its clients run.
    pub workload: String,
    /// Its clients; the measured role's default is the cell's client count, another's 1.
    pub clients: Option<u32>,
    /// Events per second over its clients (an open loop); default: a closed loop.
    pub rate: Option<f64>,
    /// Whether its figures are the step's (exactly one role is).
    #[serde(default)]
    pub measured: bool,
}
