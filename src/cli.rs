//! The command line, as parsed: raw values only. `plan` validates them and resolves defaults.
//! Option names and defaults are sysbench's, so that its users feel at home.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::server::builds::ServerChoice;
use crate::server::parse_setting;
use crate::workload::PsMode;
use crate::workload::rand::RandType;

#[derive(Debug, Parser)]
#[command(
    name = "dbsweep",
    version,
    // A repeated option takes its last value, as sysbench's do (published command lines
    // sometimes repeat one); repeatable options such as --server-set still collect every value.
    args_override_self = true,
    about = "OLTP database benchmarks: sysbench workloads on SQLite, PostgreSQL and MySQL/MariaDB"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Seconds to wait for a server to accept a connection and log in before giving up
    #[arg(long, global = true, default_value_t = 10.0, value_name = "SECONDS")]
    pub connect_timeout: f64,
    /// Seconds to wait for any one statement's answer before giving up (0: no limit, the
    /// default: a benchmark's statements may take long; Ctrl-C always ends a wait)
    #[arg(long, global = true, default_value_t = 0.0, value_name = "SECONDS")]
    pub query_timeout: f64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create and load the tables of a workload
    Prepare(Opts),
    /// Run a workload and report throughput and latency
    Run(Opts),
    /// Drop the tables of a workload (only sbtest tables)
    Cleanup(Opts),
    /// Run a plan: steps x configurations x client counts, one results file per step
    Sweep(SweepOpts),
    /// TPC-C: load the nine tables, run the transaction mix, check consistency
    Tpcc(TpccCmd),
    /// Tables and charts from sweep directories or results files
    Report(ReportOpts),
    /// Compare two runs (results files or sweep directories) test by test
    Compare(CompareOpts),
    /// Export a run's latency histogram as an HDR histogram log
    Hdr(HdrOpts),
    /// Combine the results files of client hosts that ran at once (--start-at) into one:
    /// histograms added, counters summed, intervals aligned by wall-clock second
    Merge(MergeOpts),
    /// List the built-in workloads
    Workloads,
    /// List the server builds a managed target can start, and what each shorthand picks
    Servers,
    /// Act as sysbench 1.0.20: its command line and its output (also through a link named
    /// `sysbench` to this binary)
    #[command(disable_help_flag = true)]
    Sysbench(SysbenchArgs),
}

#[derive(Debug, Args)]
pub struct SysbenchArgs {
    /// sysbench's arguments: [options] SCRIPT [options] COMMAND [options]
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TpccCmd {
    #[command(subcommand)]
    pub action: TpccAction,
}

#[derive(Debug, Subcommand)]
pub enum TpccAction {
    /// Create and load the TPC-C tables, then run the consistency checks
    Prepare(TpccOpts),
    /// Run the TPC-C transaction mix (the options of `dbsweep run`)
    Run(Box<RunArgs>),
    /// Run the twelve consistency checks (exit 1 when one fails)
    Check(TpccOpts),
    /// Drop the TPC-C tables
    Cleanup(TpccOpts),
}

#[derive(Debug, Args)]
pub struct TpccOpts {
    /// Warehouses (each: 10 districts, 30,000 customers, 100,000 stock rows)
    #[arg(long, default_value_t = 1)]
    pub warehouses: u32,
    #[command(flatten)]
    pub db: DbArgs,
    /// prepare: warehouses loaded at once
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// prepare: drop and reload TPC-C tables that exist
    #[arg(long)]
    pub force: bool,
    /// prepare: random seed (0 = a new one)
    #[arg(long, default_value_t = 0)]
    pub rand_seed: u64,
    /// check: leave out condition 11, which holds only before any Delivery
    #[arg(long)]
    pub after_run: bool,
}

#[derive(Debug, Args)]
pub struct ReportOpts {
    /// Sweep directories or results files
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The column the relative tables divide by (default: the first)
    #[arg(long)]
    pub base: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: crate::report::Format,
    /// Write here instead of stdout
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Colour ratios in text output: auto (when stdout is a terminal), always, never
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

#[derive(Debug, Args)]
pub struct CompareOpts {
    /// The reference run (results file, step record or sweep directory)
    #[arg(value_name = "A")]
    pub first: PathBuf,
    /// The run compared with it (default: A again, with --a and --b choosing two of its columns)
    #[arg(value_name = "B")]
    pub second: Option<PathBuf>,
    /// The column of A to compare: a target or configuration name, or TARGET/CONFIG
    #[arg(long = "a", value_name = "COLUMN")]
    pub column_a: Option<String>,
    /// The column of B compared with it
    #[arg(long = "b", value_name = "COLUMN")]
    pub column_b: Option<String>,
    /// Exit 1 when a significant regression is worse than this many percent
    #[arg(long, value_name = "PCT")]
    pub fail_on_regression: Option<f64>,
}

#[derive(Debug, Args)]
pub struct HdrOpts {
    /// A results file, or a step record of a sweep directory
    pub input: PathBuf,
    /// The HDR log file to write (default: stdout)
    #[arg(long)]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct MergeOpts {
    /// The client hosts' results files (two or more)
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged results file to write
    #[arg(long, required = true)]
    pub output: PathBuf,
}

/// Client counts, as `--clients 1,4,16` gives them.
#[derive(Clone, Debug)]
pub struct ClientList(pub Vec<u32>);

/// A comma-separated list of client counts.
fn parse_clients(s: &str) -> Result<ClientList, String> {
    s.split(',')
        .map(|c| {
            c.trim()
                .parse::<u32>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("'{c}' is not a client count (a whole number of 1 or more)"))
        })
        .collect::<Result<_, _>>()
        .map(ClientList)
}

/// `dbsweep sweep`: a plan, where to write, and what the command line changes in the plan.
#[derive(Debug, Args)]
pub struct SweepOpts {
    /// A plan file (TOML) or a built-in plan: quick (the default) or small
    pub plan: Option<String>,
    /// Directory for the sweep's files (default: sweep-PLAN-DATE-TIME)
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Continue the interrupted sweep in this directory, skipping finished steps
    #[arg(long, value_name = "DIR")]
    pub resume: Option<PathBuf>,
    /// Print the schedule and its estimated duration, run nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Stop at the first failed step (by default it is recorded and the sweep goes on)
    #[arg(long)]
    pub fail_fast: bool,
    /// Let load steps drop and reload sbtest tables of a database given by --target
    #[arg(long)]
    pub force: bool,
    /// Leave the managed servers' data directories in place
    #[arg(long)]
    pub keep: bool,
    /// Run every cell on this database instead of the plan's targets
    #[arg(long)]
    pub target: Option<String>,
    /// Run every cell on a fresh managed server of this kind instead of the plan's targets;
    /// KIND:VERSION (postgres:13) starts that version's build, and a repeated --server gives
    /// one target per build (a version study)
    #[arg(long, conflicts_with = "target", value_name = "KIND[:VERSION]")]
    pub server: Vec<ServerChoice>,
    /// Connect to the --server over its Unix socket instead of loopback TCP
    #[arg(long, requires = "server")]
    pub server_socket: bool,
    /// Client counts, comma-separated (e.g. 1,4,16)
    #[arg(long, value_parser = parse_clients)]
    pub clients: Option<ClientList>,
    /// Number of tables
    #[arg(long)]
    pub tables: Option<u32>,
    /// Rows per table
    #[arg(long)]
    pub table_size: Option<u64>,
    /// Seconds of each read step (R)
    #[arg(long)]
    pub read_time: Option<f64>,
    /// Seconds of each write step (W)
    #[arg(long)]
    pub write_time: Option<f64>,
    /// Seconds of each warm-up step
    #[arg(long)]
    pub warmup_time: Option<f64>,
    /// Seconds of each postwrite pause
    #[arg(long)]
    pub postwrite_pause: Option<f64>,
    /// Run every cell this many times (a fresh server each time, the repeats interleaved);
    /// reports show medians with confidence intervals
    #[arg(long, value_name = "N")]
    pub repeat: Option<u32>,
}

/// sysbench-style booleans: on/off, true/false, yes/no, 1/0; a bare flag means on.
fn parse_bool(s: &str) -> Result<bool, String> {
    match s.to_ascii_lowercase().as_str() {
        "on" | "true" | "yes" | "1" => Ok(true),
        "off" | "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{s}' is not a boolean (use on or off)")),
    }
}

/// A wall-clock instant, in seconds since the Unix epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StartAt(pub f64);

/// `--start-at`: seconds since the Unix epoch, or an RFC 3339 date and time with its offset
/// (`2026-11-23T07:00:00Z`, `2026-11-23 08:00:00.5+01:00`).
pub fn parse_start_at(s: &str) -> Result<StartAt, String> {
    let bad = || {
        format!(
            "'{s}' is not a time: give seconds since the Unix epoch or an RFC 3339 time such as 2026-11-23T07:00:00Z"
        )
    };
    if let Ok(secs) = s.parse::<f64>() {
        return (secs.is_finite() && secs > 0.0)
            .then_some(StartAt(secs))
            .ok_or_else(bad);
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
        return Err(bad());
    }
    Ok(StartAt(secs as f64 + frac))
}

/// Where a command works: a database URL, or a managed server and its settings.
#[derive(Debug, Args)]
pub struct DbArgs {
    /// Database URL: sqlite://PATH[?pragma=value&...], postgres://USER[:PASSWORD]@HOST[:PORT]/DB,
    /// mysql://USER[:PASSWORD]@HOST[:PORT]/DB
    #[arg(long, default_value = "sqlite://dbsweep.db")]
    pub target: String,
    /// Start a throwaway server of this kind instead of connecting to --target; KIND:VERSION
    /// (postgres:13, mariadb:11.4) starts that version's build (`dbsweep servers` lists them)
    #[arg(long, conflicts_with = "target", value_name = "KIND[:VERSION]")]
    pub server: Option<ServerChoice>,
    /// The managed server's install tree (a directory holding bin/postgres and bin/initdb, or
    /// bin/mariadbd): a source build's prefix, an unpacked tarball, packages side by side
    #[arg(long, requires = "server", value_name = "DIR")]
    pub server_basedir: Option<PathBuf>,
    /// A setting for the managed server's configuration file (repeatable), e.g. shared_buffers=1GB
    #[arg(long, value_name = "NAME=VALUE", value_parser = parse_setting)]
    pub server_set: Vec<(String, String)>,
    /// Data directory of the managed server (reused when it holds one), instead of a temporary one
    #[arg(long)]
    pub server_datadir: Option<PathBuf>,
    /// Leave the managed server's data directory in place (it is removed otherwise)
    #[arg(long)]
    pub keep: bool,
    /// Connect to the managed server over its Unix socket instead of loopback TCP (less CPU
    /// per query for the client and the server)
    #[arg(long)]
    pub server_socket: bool,
    /// Start the managed server with TLS on (a certificate made for the run, TLS required of
    /// every TCP connection) and connect with verify-ca
    #[arg(long)]
    pub server_tls: bool,
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

/// Every option of a run, whatever the workload (`dbsweep tpcc run` takes them too).
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub db: DbArgs,
    /// run: sample CPU, context switches and IO from /proc every second (off: no sampler)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub hw_sample: bool,
    /// run: sample what the server's sessions wait on this many times a second (PostgreSQL
    /// pg_stat_activity, MariaDB/MySQL process list and InnoDB lock waits; 0: off)
    #[arg(long, default_value_t = 20.0, value_name = "HZ")]
    pub wait_sample_hz: f64,
    /// run: record an on-CPU profile of the server's processes over the measured part with
    /// perf (folded stacks, a flame graph and the top functions; beside --output)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub profile: bool,
    /// Samples per second of --profile
    #[arg(long, default_value_t = crate::metrics::profile::DEFAULT_HZ, value_name = "HZ")]
    pub profile_hz: u32,
    /// run: the database host's Prometheus node_exporter (http://HOST:9100/metrics), scraped
    /// every second for the server host's CPU, context switches, disk and network per operation
    #[arg(long, value_name = "URL")]
    pub server_metrics: Option<String>,
    /// run: the disk of --server-metrics to report (default: the busiest in the step)
    #[arg(long, value_name = "NAME")]
    pub server_device: Option<String>,
    /// run: the network interface of --server-metrics to report (default: the one that
    /// carried the most bytes in the step)
    #[arg(long, value_name = "NAME")]
    pub server_net_device: Option<String>,
    /// run: the network link's speed in Mbit/s, where the system does not tell it (a veth, a
    /// virtual NIC), for the network's utilisation and its demand in the queueing bounds
    #[arg(long, value_name = "MBIT")]
    pub link_speed: Option<f64>,
    /// Process id of an external server on this host, for its CPU and memory figures
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Directory of an external server's data, for the IO figures of its device
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Number of tables
    #[arg(long, default_value_t = 1)]
    pub tables: u32,
    /// Rows per table
    #[arg(long, default_value_t = 10_000)]
    pub table_size: u64,
    /// Clients (terminals, sessions), and tables loaded at once by prepare [default: 1; tpcc
    /// --wait: ten per warehouse]
    #[arg(long)]
    pub threads: Option<u32>,
    /// run: worker threads that serve the clients [default: one per client; with keying and
    /// think times (--wait) or --rate: four per core]. Fewer workers than clients multiplex
    /// them: a waiting client holds no thread
    #[arg(long, value_name = "W")]
    pub workers: Option<u32>,
    /// run: the clients share this many connections, as a transaction monitor's terminals do;
    /// the wait for a free one is in the latency and reported as queue time (0: a connection
    /// per client)
    #[arg(long, default_value_t = 0, value_name = "M")]
    pub connections: u32,
    /// run: connections opened a second at most while the clients connect (0: no limit)
    #[arg(long, default_value_t = 200.0, value_name = "PER_S")]
    pub connect_rate: f64,

    /// run: seconds to measure (0 = no limit)
    #[arg(long, default_value_t = 10.0)]
    pub time: f64,
    /// run: stop after this many events in all (0 = no limit)
    #[arg(long, default_value_t = 0)]
    pub events: u64,
    /// run: seconds of warm-up, excluded from every figure
    #[arg(long, visible_alias = "warmup-time", default_value_t = 0.0)]
    pub warmup: f64,
    /// run: events per second over all threads, an open loop (0 = closed loop)
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// run: seconds between progress lines on stderr (0 = none)
    #[arg(long, default_value_t = 1.0)]
    pub report_interval: f64,
    /// run: write the results file (JSON) here
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// run: begin the measured part at this wall-clock instant (RFC 3339, such as
    /// 2026-11-23T07:00:00Z, or seconds since the Unix epoch), so that several client hosts
    /// measure the same seconds; the clients connect and warm up before it
    #[arg(long, value_parser = parse_start_at, value_name = "TIME")]
    pub start_at: Option<StartAt>,
    /// run: how late this host may be for --start-at (its clock behind the others', or a slow
    /// start) before it refuses to run
    #[arg(long, default_value_t = 1.0, value_name = "SECONDS")]
    pub start_tolerance: f64,
    /// run: this client host's name in the results, for `dbsweep merge`
    #[arg(long, value_name = "NAME")]
    pub client_id: Option<String>,
    /// run: prepare the tables first
    #[arg(long)]
    pub prepare: bool,
    /// prepare: drop and reload sbtest tables that already hold rows
    #[arg(long)]
    pub force: bool,
    /// run: reconnect every N events (0 = never)
    #[arg(long, default_value_t = 0)]
    pub reconnect: u64,
    /// run: give up when the database stays unreachable this many seconds
    #[arg(long, default_value_t = 60.0)]
    pub reconnect_timeout: f64,

    /// Random distribution of ids
    #[arg(long, value_enum, default_value_t = RandType::Uniform)]
    pub rand_type: RandType,
    /// Random seed (0 = a new one each run; the one used is saved in the results)
    #[arg(long, default_value_t = 0)]
    pub rand_seed: u64,
    /// Exponent of the zipfian distribution
    #[arg(long, default_value_t = 0.8)]
    pub rand_zipfian_exp: f64,
    /// h of the pareto distribution
    #[arg(long, default_value_t = 0.2)]
    pub rand_pareto_h: f64,
    /// special: width of the hot window, percent of the range
    #[arg(long, default_value_t = 1.0)]
    pub rand_spec_pct: f64,
    /// special: percent of draws that fall in the hot window
    #[arg(long, default_value_t = 75.0)]
    pub rand_spec_res: f64,

    /// Rows of range selects
    #[arg(long, default_value_t = 100)]
    pub range_size: u64,
    /// No BEGIN/COMMIT: every statement in autocommit
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub skip_trx: bool,
    /// Enable the range selects
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub range_selects: bool,
    /// Point selects per transaction
    #[arg(long, default_value_t = 10)]
    pub point_selects: u32,
    /// Simple range selects per transaction
    #[arg(long, default_value_t = 1)]
    pub simple_ranges: u32,
    /// SUM() range selects per transaction
    #[arg(long, default_value_t = 1)]
    pub sum_ranges: u32,
    /// ORDER BY range selects per transaction
    #[arg(long, default_value_t = 1)]
    pub order_ranges: u32,
    /// DISTINCT range selects per transaction
    #[arg(long, default_value_t = 1)]
    pub distinct_ranges: u32,
    /// Index updates per transaction
    #[arg(long, default_value_t = 1)]
    pub index_updates: u32,
    /// Non-index updates per transaction
    #[arg(long, default_value_t = 1)]
    pub non_index_updates: u32,
    /// DELETE/INSERT pairs per transaction
    #[arg(long, default_value_t = 1)]
    pub delete_inserts: u32,
    /// Database-generated ids for inserts (off: client-generated)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub auto_inc: bool,
    /// Create the secondary index k_N after loading
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub create_secondary: bool,
    /// prepare: refresh the planner's statistics (ANALYZE) after loading, as a DBA would
    /// (off: leave them to autovacuum, as sysbench's prepare does)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub analyze: bool,
    /// Time each statement of the oltp workloads' events apart (per-statement latency in the
    /// summary, results and reports); off saves a clock read per statement
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub statement_times: bool,
    /// Make id a plain index instead of the primary key
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub secondary: bool,
    /// Values in IN () lists and rows of covered ranges (default 10 for select_random_points,
    /// 100 for the extended microbenchmarks)
    #[arg(long)]
    pub random_points: Option<u32>,
    /// oltp_inlist_select: always the same ids (from table_size/2+1)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub hot_points: bool,
    /// oltp_points_covered, oltp_range_covered: select only indexed columns (index-only reads)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub covered: bool,
    /// oltp_points_covered, oltp_range_covered: look up by id (off: by the secondary index k)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "on", default_missing_value = "on")]
    pub on_id: bool,
    /// select_random_ranges: ranges per query
    #[arg(long, default_value_t = 10)]
    pub number_of_ranges: u32,
    /// select_random_ranges: width of each range
    #[arg(long, default_value_t = 5)]
    pub delta: u64,
    /// MySQL storage engine of created tables
    #[arg(long, default_value = "innodb")]
    pub mysql_storage_engine: String,
    /// Prepared statements: auto (server-side) or disable (text)
    #[arg(long, value_enum, visible_alias = "db-ps-mode", default_value_t = PsMode::Auto)]
    pub ps_mode: PsMode,
    /// PostgreSQL, oltp_* workloads: send each transaction's statements in one round trip
    /// (the server runs them as before; the client waits once per event instead of once per
    /// statement)
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub pipeline: bool,

    /// tpcc: warehouses (each: 10 districts, 30,000 customers, 100,000 stock rows)
    #[arg(long, default_value_t = 1)]
    pub warehouses: u32,
    /// tpcc: keying and think times between transactions, as the specification's terminals
    #[arg(long, value_parser = parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub wait: bool,
    /// tpcc --wait: multiply keying and think times by this (for short studies and tests; a
    /// run with another value than 1 does not conform to the specification and says so)
    #[arg(long, default_value_t = 1.0, value_name = "F")]
    pub think_scale: f64,
}

/// Rewrites `--name_with_underscores[=v]` to dashes, as sysbench accepts both spellings.
pub fn normalise_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    args.into_iter()
        .map(|a| match a.strip_prefix("--") {
            Some(rest) => {
                let (name, value) = rest
                    .split_once('=')
                    .map_or((rest, None), |(n, v)| (n, Some(v)));
                let name = name.replace('_', "-");
                value.map_or(format!("--{name}"), |v| format!("--{name}={v}"))
            }
            None => a,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_option_takes_its_last_value_and_server_set_collects_all() {
        let cli = Cli::try_parse_from([
            "dbsweep",
            "run",
            "oltp_point_select",
            "--threads",
            "1",
            "--time=3",
            "--threads=4",
            "--time",
            "5",
            "--server",
            "postgres",
            "--server-set",
            "a=1",
            "--server-set",
            "b=2",
        ])
        .unwrap();
        let Command::Run(o) = cli.command else {
            panic!("not run");
        };
        assert_eq!((o.threads, o.time), (Some(4), 5.0));
        assert_eq!(
            o.db.server_set,
            [("a".to_string(), "1".to_string()), ("b".into(), "2".into())]
        );
    }

    #[test]
    fn underscores_become_dashes_in_names_only() {
        let out = normalise_args(
            [
                "dbsweep",
                "--table_size=5",
                "--output",
                "a_b.json",
                "--skip_trx",
            ]
            .map(String::from),
        );
        assert_eq!(
            out,
            [
                "dbsweep",
                "--table-size=5",
                "--output",
                "a_b.json",
                "--skip-trx"
            ]
        );
        let out = normalise_args(["--output=x_y.json".to_string()]);
        assert_eq!(out, ["--output=x_y.json"]);
    }

    #[test]
    fn start_times_read_as_epoch_seconds_or_rfc3339() {
        // `date -u -d 2026-11-23T07:00:00Z +%s` = 1795417200.
        let t = 1_795_417_200.0;
        assert_eq!(parse_start_at("1795417200"), Ok(StartAt(t)));
        assert_eq!(parse_start_at("2026-11-23T07:00:00Z"), Ok(StartAt(t)));
        assert_eq!(parse_start_at("2026-11-23 08:00:00+01:00"), Ok(StartAt(t)));
        assert_eq!(parse_start_at("2026-11-23T06:30:00-00:30"), Ok(StartAt(t)));
        assert_eq!(
            parse_start_at("2026-11-23T07:00:00.25Z"),
            Ok(StartAt(t + 0.25))
        );
        assert_eq!(
            parse_start_at("2000-02-29T00:00:00Z"),
            Ok(StartAt(951_782_400.0))
        );
        for bad in [
            "",
            "now",
            "-5",
            "NaN",
            "2026-11-23T07:00:00",
            "2026-13-01T00:00:00Z",
            "2026-11-23T07:00:00.Z",
            "2026-11-23T07:00:00+1:00",
            "2026-11-23T07:0a:00Z",
            "1969-01-01T00:00:00Z",
        ] {
            assert!(parse_start_at(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn booleans_accept_sysbench_spellings() {
        for (s, v) in [
            ("on", true),
            ("OFF", false),
            ("true", true),
            ("0", false),
            ("yes", true),
        ] {
            assert_eq!(parse_bool(s), Ok(v));
        }
        assert!(parse_bool("maybe").is_err());
    }
}
