//! The options of a run, shared by `run`, `prepare`, `cleanup` and the TPC-C commands: the
//! database, the workload, the clients and what to measure.

use std::path::PathBuf;

use clap::Args;

pub(crate) use crate::input::parse_bool;

/// The headings `--help` groups a run's options under (each workload family's own options
/// have their family's).
pub mod heading {
    pub const CONNECTION: &str = "Connection";
    pub const RUN: &str = "Run";
    pub const MEASUREMENT: &str = "Measurement";
    pub const OUTPUT: &str = "Output";
    pub const SYSBENCH: &str = crate::workload::sysbench::options::HEADING;
    pub const PGBENCH: &str = crate::workload::pgbench::options::HEADING;
    /// What every run has, whatever its workload.
    pub const SHARED: [&str; 4] = [CONNECTION, RUN, MEASUREMENT, OUTPUT];
}
use crate::server::builds::ServerChoice;
use crate::server::parse_setting;
use crate::workload::PsMode;
use crate::workload::rand::RandType;

/// A wall-clock instant, in seconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StartAt(pub f64);

/// `--start-at`: seconds since the Unix epoch, or an RFC 3339 date and time with its offset
/// (`2026-11-23T07:00:00Z`, `2026-11-23 08:00:00.5+01:00`).
/// The last instant `--start-at` takes (9999-12-31T23:59:59Z): later ones overflow the
/// system clock's type.
const LAST_START: f64 = 253_402_300_799.0;

pub fn parse_start_at(s: &str) -> Result<StartAt, String> {
    let bad = || {
        format!(
            "'{s}' is not a time: give seconds since the Unix epoch or an RFC 3339 time such as 2026-11-23T07:00:00Z"
        )
    };
    if let Ok(secs) = s.parse::<f64>() {
        return match secs {
            _ if !secs.is_finite() || secs <= 0.0 => Err(format!(
                "'{s}' is not a time: seconds since the Unix epoch are above 0 (1970-01-01)"
            )),
            _ if secs > LAST_START => Err(format!(
                "'{s}' is past 9999-12-31, where the system clock's times end"
            )),
            _ => Ok(StartAt(secs)),
        };
    }
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let (y, mo, d) = (num(0..4), num(5..7), num(8..10));
    let (h, mi, sec) = (num(11..13), num(14..16), num(17..19));
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = (y, mo, d, h, mi, sec) else {
        return Err(bad());
    };
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return Err(bad());
    }
    let mut rest = &s[19..];
    let mut frac = 0.0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return Err(bad());
        }
        frac = format!("0.{}", &r[..digits]).parse().map_err(|_| bad())?;
        rest = &r[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let rb = rest.as_bytes();
            if rb.len() != 6 || !matches!(rb[0], b'+' | b'-') || rb[3] != b':' {
                return Err(bad());
            }
            let (Some(oh), Some(om)) = (
                rest.get(1..3).and_then(|t| t.parse::<i64>().ok()),
                rest.get(4..6).and_then(|t| t.parse::<i64>().ok()),
            ) else {
                return Err(bad());
            };
            let o = oh * 3600 + om * 60;
            if rb[0] == b'-' { -o } else { o }
        }
    };
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's civil algorithm).
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset;
    if secs <= 0 {
        return Err(format!(
            "'{s}' is not after 1970-01-01, where the Unix epoch begins"
        ));
    }
    if secs as f64 > LAST_START {
        return Err(format!(
            "'{s}' is past 9999-12-31, where the system clock's times end"
        ));
    }
    Ok(StartAt(secs as f64 + frac))
}

// A plan's options are read into RunArgs (plan::sweep_plan::step_options) with serde: the
// values clap parses with a function of its own are read through the same function.

/// A value of a command-line enum (`--rand-type`, `--ps-mode`) by its name, as clap reads it.
pub(crate) fn value_enum<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: clap::ValueEnum,
{
    let s = <String as serde::Deserialize>::deserialize(d)?;
    T::from_str(&s, true).map_err(|_| {
        let names: Vec<String> = T::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        serde::de::Error::custom(format!("'{s}' is not one of {}", names.join(", ")))
    })
}

/// `start_at`, as `--start-at` reads it.
pub(crate) fn start_at<'de, D>(d: D) -> Result<Option<StartAt>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let s = <String as serde::Deserialize>::deserialize(d)?;
    parse_start_at(&s)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// A group of clients beside the measured ones (`--role`).
#[derive(Clone, Debug, PartialEq)]
pub struct RoleSpec {
    pub workload: String,
    pub clients: Option<u32>,
    pub rate: Option<f64>,
}

/// `WORKLOAD[,clients=N][,rate=R]`.
pub fn parse_role(s: &str) -> Result<RoleSpec, String> {
    let mut parts = s.split(',');
    let workload = parts.next().unwrap_or_default().trim().to_string();
    if workload.is_empty() {
        return Err(format!(
            "'{s}': name the role's workload first (WORKLOAD[,clients=N][,rate=R])"
        ));
    }
    let mut role = RoleSpec {
        workload,
        clients: None,
        rate: None,
    };
    for part in parts {
        let (key, value) = part
            .split_once('=')
            .map_or((part, ""), |(k, v)| (k.trim(), v.trim()));
        match key {
            "clients" => {
                role.clients = Some(value.parse().map_err(|_| {
                    format!("'{s}': clients={value} is not a whole number of clients")
                })?);
            }
            "rate" => {
                role.rate = Some(value.parse().map_err(|_| {
                    format!("'{s}': rate={value} is not a number of events per second")
                })?);
            }
            other => {
                return Err(format!(
                    "'{s}': '{other}' is not clients=N or rate=R (the role's other options are the run's)"
                ));
            }
        }
    }
    Ok(role)
}

/// Where a command works: a database URL, or a managed server and its settings.
#[derive(Clone, Debug, Args)]
pub struct DbArgs {
    /// Database URL: sqlite://PATH[?pragma=value&...], postgres://USER[:PASSWORD]@HOST[:PORT]/DB,
    /// mysql://USER[:PASSWORD]@HOST[:PORT]/DB
    #[arg(help_heading = heading::CONNECTION, long, default_value = "sqlite://dbsweep.db")]
    pub target: String,
    /// Read the target URL from the first line of standard input, and stop (as Ctrl-C) when
    /// standard input closes: how a sweep hands its client hosts their target (no password in
    /// a command line) and how they notice the sweep going away
    #[arg(help_heading = heading::CONNECTION, long, hide = true, conflicts_with_all = ["target", "server"])]
    pub target_stdin: bool,
    /// Start a throwaway server of this kind instead of connecting to --target; KIND:VERSION
    /// (postgres:13, mariadb:11.4) starts that version's build (`dbsweep servers` lists them)
    #[arg(help_heading = heading::CONNECTION, long, conflicts_with = "target", value_name = "KIND[:VERSION]")]
    pub server: Option<ServerChoice>,
    /// The managed server's install tree (a directory holding bin/postgres and bin/initdb, or
    /// bin/mariadbd): a source build's prefix, an unpacked tarball, packages side by side
    #[arg(help_heading = heading::CONNECTION, long, requires = "server", value_name = "DIR")]
    pub server_basedir: Option<PathBuf>,
    /// A setting for the managed server's configuration file (repeatable), e.g. shared_buffers=1GB
    #[arg(help_heading = heading::CONNECTION, long, value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub server_set: Vec<(String, String)>,
    /// Data directory of the managed server (reused when it holds one), instead of a temporary one
    #[arg(help_heading = heading::CONNECTION, long)]
    pub server_datadir: Option<PathBuf>,
    /// Use --server-datadir even when it holds files dbsweep did not make or is another user's
    /// (links in it are still never followed)
    #[arg(help_heading = heading::CONNECTION, long, requires = "server_datadir")]
    pub server_datadir_force: bool,
    /// Leave the managed server's data directory in place (it is removed otherwise)
    #[arg(help_heading = heading::CONNECTION, long)]
    pub keep: bool,
    /// Connect to the managed server over its Unix socket instead of loopback TCP (less CPU
    /// per query for the client and the server)
    #[arg(help_heading = heading::CONNECTION, long)]
    pub server_socket: bool,
    /// Start the managed server with TLS on (a certificate made for the run, TLS required of
    /// every TCP connection) and connect with verify-ca
    #[arg(help_heading = heading::CONNECTION, long)]
    pub server_tls: bool,
    /// The connections' bounds: the command line's `--connect-timeout` and `--query-timeout`
    /// (options of every command), set by the command that runs.
    #[arg(skip)]
    pub timeouts: crate::db::Timeouts,
}

/// prepare, run and cleanup: a workload and every option. All three accept the same set, as
/// sysbench's commands do, so that one option list serves a whole prepare/run/cleanup cycle.
#[derive(Debug, Args)]
pub struct Opts {
    /// Workload name (see `dbsweep workloads`)
    pub workload: String,
    #[command(flatten)]
    pub args: RunArgs,
}

impl std::ops::Deref for Opts {
    type Target = RunArgs;
    fn deref(&self) -> &RunArgs {
        &self.args
    }
}

impl Default for RunArgs {
    /// Every option at its default: clap's, written once on the options themselves, for those
    /// who build a run's options in code (the pgbench personality, a sweep's steps).
    fn default() -> RunArgs {
        crate::input::clap_defaults()
    }
}

/// Every option of a run, whatever the workload (`dbsweep tpcc run` takes them too).
#[derive(Clone, Debug, Args, serde::Deserialize)]
#[serde(default)]
pub struct RunArgs {
    // A sweep's targets are its own (not a step's option).
    #[command(flatten)]
    #[serde(skip)]
    pub db: DbArgs,
    /// Clients (terminals, sessions), and tables loaded at once by prepare [default: 1; tpcc
    /// --wait: ten per warehouse]
    #[arg(help_heading = heading::RUN, long)]
    pub threads: Option<u32>,
    /// run: worker threads that serve the clients [default: one per client; with keying and
    /// think times (--wait) or --rate: four per core]. Fewer workers than clients multiplex
    /// them: a waiting client holds no thread
    #[arg(help_heading = heading::RUN, long, value_name = "W")]
    pub workers: Option<u32>,
    /// run: the clients share this many connections, as a transaction monitor's terminals do;
    /// the wait for a free one is in the latency and reported as queue time (0: a connection
    /// per client)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0, value_name = "M")]
    pub connections: u32,
    /// run: connections opened a second at most while the clients connect (0: no limit)
    #[arg(help_heading = heading::RUN, long, default_value_t = 200.0, value_name = "PER_S")]
    pub connect_rate: f64,

    /// run: seconds to measure (0 = no limit)
    #[arg(help_heading = heading::RUN, long, default_value_t = 10.0)]
    pub time: f64,
    /// run: stop after this many events in all (0 = no limit)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0)]
    pub events: u64,
    /// run: stop each client after this many events of its own (0 = no limit; pgbench's -t)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0, value_name = "N")]
    pub events_per_client: u64,
    /// run: give an event up as failed after this many tries ended in a serialization failure
    /// or deadlock (0 = retry until the run ends; pgbench's --max-tries)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0, value_name = "N")]
    pub max_tries: u32,
    /// run: count events slower than this many milliseconds as late; under --rate, skip events
    /// already this late when due (0 = no limit; pgbench's --latency-limit)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0.0, value_name = "MS")]
    pub latency_limit: f64,
    /// run: seconds of warm-up, excluded from every figure
    #[arg(help_heading = heading::RUN, long, visible_alias = "warmup-time", default_value_t = 0.0)]
    #[serde(alias = "warmup_time")]
    pub warmup: f64,
    /// run: events per second over all threads, an open loop (0 = closed loop)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0.0)]
    pub rate: f64,
    /// run: load that changes over time, phases of DURATION@LOAD from the measured part's
    /// start: a rate (`60s@100`), a ramp (`120s@ramp:200..1000`) or, closed loop, active
    /// clients (`60s@clients:8`); their seconds are the run's --time
    #[arg(help_heading = heading::RUN, long, value_name = "PHASES")]
    pub phases: Option<String>,
    /// run: how paced events (--rate, --phases) arrive: evenly spaced, or at exponential gaps
    /// (poisson)
    #[arg(help_heading = heading::RUN, long, value_enum, default_value_t = crate::runner::phases::Arrivals::Uniform)]
    #[serde(deserialize_with = "value_enum")]
    pub arrivals: crate::runner::phases::Arrivals,
    /// run: a group of clients beside the measured ones (repeatable), e.g. a background load:
    /// its workload, its clients (default 1) and its rate in events/s (default: closed loop);
    /// every other option is the run's. Its figures are kept apart in the results (`roles`)
    #[arg(long, value_name = "WORKLOAD[,clients=N][,rate=R]", value_parser = parse_role)]
    // A step's roles are its own table (not an option).
    #[serde(skip)]
    #[arg(help_heading = heading::RUN)]
    pub role: Vec<RoleSpec>,
    /// run: begin the measured part at this wall-clock instant (RFC 3339, such as
    /// 2026-11-23T07:00:00Z, or seconds since the Unix epoch), so that several client hosts
    /// measure the same seconds; the clients connect and warm up before it
    #[arg(help_heading = heading::RUN, long, value_parser = parse_start_at, value_name = "TIME", allow_hyphen_values = true)]
    #[serde(deserialize_with = "start_at")]
    pub start_at: Option<StartAt>,
    /// run: how late this host may be for --start-at (its clock behind the others', or a slow
    /// start) before it refuses to run
    #[arg(help_heading = heading::RUN, long, default_value_t = 1.0, value_name = "SECONDS")]
    pub start_tolerance: f64,
    /// run: this client host's name in the results, for `dbsweep merge`
    #[arg(help_heading = heading::RUN, long, value_name = "NAME")]
    pub client_id: Option<String>,
    /// run: prepare the tables first
    #[arg(help_heading = heading::RUN, long)]
    pub prepare: bool,
    /// prepare: drop and reload sbtest tables that already hold rows
    #[arg(help_heading = heading::RUN, long)]
    pub force: bool,
    /// run: reconnect every N events (0 = never)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0)]
    pub reconnect: u64,
    /// run: give up when the database stays unreachable this many seconds
    #[arg(help_heading = heading::RUN, long, default_value_t = 60.0)]
    pub reconnect_timeout: f64,
    /// Random seed (0 = a new one each run; the one used is saved in the results)
    #[arg(help_heading = heading::RUN, long, default_value_t = 0)]
    pub rand_seed: u64,
    /// Prepared statements: auto (server-side) or disable (text)
    #[arg(help_heading = heading::RUN, long, value_enum, visible_alias = "db-ps-mode", default_value_t = PsMode::Auto)]
    #[serde(deserialize_with = "value_enum", alias = "db_ps_mode")]
    pub ps_mode: PsMode,
    /// run: sample CPU, context switches and IO from /proc every second (off: no sampler)
    #[arg(help_heading = heading::MEASUREMENT, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub hw_sample: bool,
    /// run: sample what the server's sessions wait on this many times a second (PostgreSQL
    /// pg_stat_activity, MariaDB/MySQL process list and InnoDB lock waits; 0: off)
    #[arg(help_heading = heading::MEASUREMENT, long, default_value_t = 20.0, value_name = "HZ")]
    pub wait_sample_hz: f64,
    /// run: record an on-CPU profile of the server's processes over the measured part with
    /// perf (folded stacks, a flame graph and the top functions; beside --output)
    #[arg(help_heading = heading::MEASUREMENT, long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub profile: bool,
    /// Samples per second of --profile
    #[arg(help_heading = heading::MEASUREMENT, long, default_value_t = crate::metrics::profile::DEFAULT_HZ, value_name = "HZ")]
    pub profile_hz: u32,
    /// Serve live metrics (OpenMetrics: events, queries, errors, clients, latency) on PORT (on
    /// loopback) or HOST:PORT while the command runs, for Prometheus to scrape at /metrics
    #[arg(help_heading = heading::MEASUREMENT, long, value_name = "[HOST:]PORT")]
    pub metrics_listen: Option<String>,
    /// run: the database host's Prometheus node_exporter (http://HOST:9100/metrics), scraped
    /// every second for the server host's CPU, context switches, disk and network per operation
    #[arg(help_heading = heading::MEASUREMENT, long, value_name = "URL")]
    pub server_metrics: Option<String>,
    /// run: the disk of --server-metrics to report (default: the busiest in the step)
    #[arg(help_heading = heading::MEASUREMENT, long, value_name = "NAME")]
    pub server_device: Option<String>,
    /// run: the network interface of --server-metrics to report (default: the one that
    /// carried the most bytes in the step)
    #[arg(help_heading = heading::MEASUREMENT, long, value_name = "NAME")]
    pub server_net_device: Option<String>,
    /// run: the network link's speed in Mbit/s, where the system does not tell it (a veth, a
    /// virtual NIC), for the network's utilisation and its demand in the queueing bounds
    #[arg(help_heading = heading::MEASUREMENT, long, value_name = "MBIT")]
    pub link_speed: Option<f64>,
    /// Process id of an external server on this host, for its CPU and memory figures
    #[arg(help_heading = heading::MEASUREMENT, long)]
    pub server_pid: Option<u32>,
    /// Directory of an external server's data, for the IO figures of its device
    #[arg(help_heading = heading::MEASUREMENT, long)]
    pub data_dir: Option<PathBuf>,
    /// Time each statement of the oltp workloads' events apart (per-statement latency in the
    /// summary, results and reports); off saves a clock read per statement
    #[arg(help_heading = heading::MEASUREMENT, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub statement_times: bool,
    /// run: seconds between progress lines on stderr (0 = none)
    #[arg(help_heading = heading::OUTPUT, long, default_value_t = 1.0)]
    pub report_interval: f64,
    /// run: write the results file (JSON) here
    #[arg(help_heading = heading::OUTPUT, long)]
    pub output: Option<PathBuf>,
    /// Number of tables
    #[arg(help_heading = heading::SYSBENCH, long, default_value_t = 1)]
    pub tables: u32,
    /// Rows per table
    #[arg(help_heading = heading::SYSBENCH, long, default_value_t = 10_000)]
    pub table_size: u64,
    /// prepare: refresh the planner's statistics (ANALYZE) after loading, as a DBA would
    /// (off: leave them to autovacuum, as sysbench's prepare does)
    #[arg(help_heading = heading::SYSBENCH, long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub analyze: bool,

    /// Random distribution of ids
    #[arg(help_heading = heading::SYSBENCH, long, value_enum, default_value_t = RandType::Uniform)]
    #[serde(deserialize_with = "value_enum")]
    pub rand_type: RandType,
    /// Exponent of the zipfian distribution
    #[arg(help_heading = heading::SYSBENCH, long, default_value_t = 0.8)]
    pub rand_zipfian_exp: f64,
    /// h of the pareto distribution
    #[arg(help_heading = heading::SYSBENCH, long, default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// special: width of the hot window, percent of the range
    #[arg(help_heading = heading::SYSBENCH, long, default_value_t = 1.0)]
    pub rand_spec_pct: f64,
    /// special: percent of draws that fall in the hot window
    #[arg(help_heading = heading::SYSBENCH, long, default_value_t = 75.0)]
    pub rand_spec_res: f64,

    /// PostgreSQL, oltp_* workloads: send each transaction's statements in one round trip
    /// (the server runs them as before; the client waits once per event instead of once per
    /// statement)
    #[arg(help_heading = heading::SYSBENCH, long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub pipeline: bool,
    /// pgbench's tables (pgbench_*): the scaling factor
    #[arg(help_heading = heading::PGBENCH, long, default_value_t = 1, value_name = "N")]
    pub scale: u32,

    // Last: each under its family's heading, which would hold every option after it. A plan
    // reads them apart (plan::sweep_plan::step_options), each family's by its names.
    #[command(flatten)]
    #[serde(skip)]
    pub families: crate::workload::FamilyArgs,
}
