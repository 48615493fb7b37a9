//! dbsweep: OLTP database benchmarking. This file dispatches the subcommands; each step of the
//! flow (plan -> db -> workload -> runner -> metrics -> results -> output) has its module.

pub mod cli;
pub mod db;
pub mod dropin;
pub mod error;
pub mod lua;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod server;
pub mod sweep;
pub mod workload;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use metrics::hw::{self, Sampler, Subject};

use cli::{Cli, Command};
use db::{ErrorClass, Target};
use error::Error;
use plan::RunPlan;
use results::figures::LoadReport;
use results::{
    HistogramData, Latency, Queries, RateInfo, Results, ResultsFile, ServerInfo, TargetInfo, Tool,
};
use runner::RunOutcome;
use server::{ManagedServer, ServerKind};
use workload::{WORKLOADS, Workload};

/// How a successful command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    /// Ctrl-C stopped a run; what it measured was reported and saved.
    Interrupted,
    /// The run stopped on an error; what it measured was reported and saved.
    Failed,
}

/// Set by Ctrl-C (SIGINT, SIGTERM, SIGHUP): every blocking wait looks, the run stops and
/// writes what it measured.
static INTERRUPT: AtomicBool = AtomicBool::new(false);

/// Whether Ctrl-C (or SIGTERM, SIGHUP) asked the process to stop: every blocking wait looks.
pub fn interrupted() -> bool {
    INTERRUPT.load(Ordering::Relaxed)
}

/// Signals after the first that still let the run write its summary and results file: `timeout
/// -s INT` signals the child and then its process group, so two come at once.
const SIGNALS_KEPT: u32 = 2;

/// How long after the first signal another one still waits for the files to be written.
const SIGNAL_GRACE: Duration = Duration::from_secs(5);

/// What a stop signal does, given how many came before it and how long ago the first came:
/// the first stops the run; a repeat within the grace keeps waiting for the summary and the
/// results file; a third, or one after the grace, abandons them.
fn abandon_on_signal(earlier: u32, since_first: Duration) -> bool {
    earlier >= SIGNALS_KEPT || (earlier > 0 && since_first > SIGNAL_GRACE)
}

pub(crate) fn install_ctrl_c() {
    static SIGNALS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    static FIRST: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    // Failing to install (a handler already set, as in tests calling `run` twice) only costs
    // the clean stop.
    let _ = ctrlc::set_handler(|| {
        let earlier = SIGNALS.fetch_add(1, Ordering::SeqCst);
        let first = *FIRST.get_or_init(std::time::Instant::now);
        INTERRUPT.store(true, Ordering::SeqCst);
        if abandon_on_signal(earlier, first.elapsed()) {
            server::kill_all();
            eprintln!(
                "dbsweep: stopped at once by a repeated signal: this run's summary and results file are not written"
            );
            std::process::exit(130);
        }
    });
}
/// Checks and applies `--connect-timeout` and `--query-timeout` (0: none).
pub fn set_timeouts(connect: f64, query: f64) -> Result<(), Error> {
    let check = |name: &str, v: f64, min: f64| {
        if v.is_finite() && v >= min && v <= plan::MAX_SECONDS {
            Ok(std::time::Duration::from_secs_f64(v))
        } else {
            Err(Error::Usage(format!(
                "--{name} {v}: must be a number of seconds from {min} to {} (a year)",
                plan::MAX_SECONDS
            )))
        }
    };
    let connect = check("connect-timeout", connect, 0.001)?;
    let query = check("query-timeout", query, 0.0)?;
    db::socket::set_timeouts(connect, (!query.is_zero()).then_some(query));
    Ok(())
}

/// Runs one parsed command line.
pub fn run(cli: Cli) -> Result<Outcome, Error> {
    install_ctrl_c();
    set_timeouts(cli.connect_timeout, cli.query_timeout)?;
    match cli.command {
        Command::Servers => {
            let defaults = [ServerKind::Postgres, ServerKind::Mariadb, ServerKind::Mysql]
                .map(|k| (k, server::binary_version(k).ok()));
            print!(
                "{}",
                server::builds::listing(&server::builds::find_all(), &defaults)
            );
            Ok(Outcome::Done)
        }
        Command::Workloads => {
            for (name, what) in WORKLOADS {
                println!("{name:<24}{what}");
            }
            Ok(Outcome::Done)
        }
        Command::Prepare(o) => {
            let plan = RunPlan::from_opts(&o)?;
            let workload = workload::build(&plan.workload, &plan.workload_opts)?;
            let db = Db::open(&plan, true)?;
            let load = load(&plan, db.target.as_ref(), workload.as_ref())?;
            if output::sysbench_style().is_none() {
                println!("{}", load_line(&load));
            }
            workload.verify(db.target.as_ref())?;
            Ok(Outcome::Done)
        }
        Command::Cleanup(o) => {
            let plan = RunPlan::from_opts(&o)?;
            let workload = workload::build(&plan.workload, &plan.workload_opts)?;
            let db = Db::open(&plan, false)?;
            let dropped = workload.cleanup(db.target.as_ref())?;
            if output::sysbench_style().is_none() {
                println!(
                    "Dropped {dropped} table(s) from {}",
                    db.target.display_url()
                );
            }
            Ok(Outcome::Done)
        }
        Command::Run(o) => run_workload(&RunPlan::from_opts(&o)?),
        Command::Sysbench(a) => dropin::main(&a.args),
        Command::Tpcc(t) => {
            use cli::TpccAction;
            let (action, o) = match t.action {
                TpccAction::Run(a) => return run_workload(&RunPlan::from_args("tpcc", &a)?),
                TpccAction::Prepare(o) => ("prepare", o),
                TpccAction::Check(o) => ("check", o),
                TpccAction::Cleanup(o) => ("cleanup", o),
            };
            let args = workload::tpcc::TpccArgs {
                warehouses: o.warehouses,
                server: plan::server_spec(&o.db)?,
                target: o.db.target,
                threads: o.threads.max(1),
                force: o.force,
                rand_seed: o.rand_seed,
                after_run: o.after_run,
            };
            let ok = match action {
                "prepare" => workload::tpcc::prepare(&args, &INTERRUPT)?,
                "check" => workload::tpcc::check(&args)?,
                _ => {
                    workload::tpcc::cleanup(&args)?;
                    true
                }
            };
            Ok(if ok { Outcome::Done } else { Outcome::Failed })
        }
        Command::Report(o) => {
            use std::io::IsTerminal;
            let color = match o.color.as_str() {
                "always" => true,
                "never" => false,
                _ => o.output.is_none() && std::io::stdout().is_terminal(),
            };
            let text = report::report(&o.inputs, o.base.as_deref(), o.format, color)?;
            report::emit(&text, o.output.as_deref())?;
            Ok(Outcome::Done)
        }
        Command::Compare(o) => {
            if let Some(p) = o.fail_on_regression
                && !(p.is_finite() && p >= 0.0)
            {
                return Err(Error::Usage(format!(
                    "--fail-on-regression {p}: give a percentage of 0 or more"
                )));
            }
            let (text, failed) = report::compare(
                &o.first,
                o.second.as_deref(),
                o.column_a.as_deref(),
                o.column_b.as_deref(),
                o.fail_on_regression,
            )?;
            print!("{text}");
            Ok(if failed {
                Outcome::Failed
            } else {
                Outcome::Done
            })
        }
        Command::Merge(o) => {
            let files = o
                .inputs
                .iter()
                .map(|p| Ok((p.display().to_string(), Results::read(p)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            let out = ResultsFile::create(&o.output)?;
            let (merged, warnings) = results::merge::merge(&files).map_err(Error::Usage)?;
            for w in warnings {
                eprintln!("warning: {w}");
            }
            out.commit(&merged)?;
            eprintln!(
                "merged {} parts: {} events, {:.2} tps, p99 {:.3} ms; written to {}",
                files.len(),
                merged.events,
                merged.tps,
                merged.latency_ms.p99,
                o.output.display()
            );
            Ok(Outcome::Done)
        }
        Command::Hdr(o) => {
            let log = report::hdr_log(&o.input)?;
            match &o.output {
                Some(path) => ResultsFile::create(path)?.commit_bytes(&log)?,
                None => {
                    use std::io::Write;
                    std::io::stdout()
                        .write_all(&log)
                        .map_err(|e| Error::Run(format!("writing to stdout: {e}")))?;
                }
            }
            Ok(Outcome::Done)
        }
        Command::Sweep(o) => {
            let clients = o.clients.map(|c| c.0);
            sweep::run(sweep::SweepArgs {
                plan: o.plan,
                output: o.output,
                resume: o.resume,
                dry_run: o.dry_run,
                fail_fast: o.fail_fast,
                force: o.force,
                keep: o.keep,
                overrides: plan::sweep::Overrides {
                    target: o.target,
                    server: o.server,
                    server_socket: o.server_socket,
                    clients,
                    tables: o.tables,
                    table_size: o.table_size,
                    read_time: o.read_time,
                    write_time: o.write_time,
                    warmup_time: o.warmup_time,
                    postwrite_pause: o.postwrite_pause,
                    repeat: o.repeat,
                },
            })
        }
    }
}

/// What a command works on: the target, and the managed server behind it, if any. Fields drop
/// in order: the target's connections go before the managed server stops.
pub(crate) struct Db {
    pub target: Box<dyn Target>,
    pub server: Option<ManagedServer>,
    /// The data directory of an external server (`--data-dir`), for the IO figures.
    pub data_dir: Option<std::path::PathBuf>,
    /// An external server's main process (`--server-pid`).
    pub server_pid: Option<u32>,
}

impl Db {
    /// Checks the target, or starts the managed server if the plan asks for one.
    pub(crate) fn open(plan: &RunPlan, create: bool) -> Result<Db, Error> {
        let options = plan.workload_opts.open_options(create);
        let (target, server) = match &plan.server {
            None => (db::open(&plan.target, options)?, None),
            Some(spec) => {
                let server = start_server(spec)?;
                (db::open(&server.url, options)?, Some(server))
            }
        };
        Ok(Db {
            target,
            server,
            data_dir: plan.data_dir.clone(),
            server_pid: plan.server_pid,
        })
    }

    /// Whether every table of the workload exists (a fresh managed server has none).
    fn tables_exist(&self, workload: &dyn Workload) -> Result<bool, Error> {
        let url = self.target.display_url();
        let mut conn = self.target.connect().map_err(|e| Error::db(&url, e))?;
        Ok(!workload
            .tables_missing(conn.as_mut())
            .map_err(|e| Error::db(&url, e))?)
    }

    /// What the hardware sampler follows: the managed server's processes (or `--server-pid`'s
    /// and its children) and the device that holds the data.
    fn hw_subject(&self) -> Subject {
        let root = self
            .server
            .as_ref()
            .and_then(ManagedServer::pid)
            .or(self.server_pid);
        let url = self.target.display_url();
        let data = match (&self.server, &self.data_dir) {
            (Some(s), _) => Some(s.dir.clone()),
            (None, Some(d)) => Some(d.clone()),
            (None, None) => url.strip_prefix("sqlite://").map(|p| {
                let file = std::path::Path::new(p.split('?').next().unwrap_or(p));
                file.parent()
                    .filter(|d| !d.as_os_str().is_empty())
                    .unwrap_or(std::path::Path::new("."))
                    .to_path_buf()
            }),
        };
        Subject {
            server_pids: root.map(|pid| {
                Box::new(move || server::process_tree(pid)) as Box<dyn Fn() -> Vec<u32> + Send>
            }),
            device: data.as_deref().and_then(hw::device_of),
            net_device: metrics::net::endpoint_of(&url)
                .and_then(|(host, port)| metrics::net::device_towards(&host, port)),
            link_mbit: None,
        }
    }

    /// Starts perf on the server's processes (or on dbsweep itself, whose embedded SQLite is
    /// the database), `delay` from now.
    fn start_profiler(
        &self,
        delay: Duration,
        hz: u32,
    ) -> Result<metrics::profile::Profiler, String> {
        let (pids, subject) = match self.hw_subject().server_pids {
            Some(pids) => (pids, "the server's processes"),
            None if self.target.kind() == "sqlite" => {
                let me = std::process::id();
                (
                    Box::new(move || vec![me]) as Box<dyn Fn() -> Vec<u32> + Send>,
                    "dbsweep (embedded SQLite)",
                )
            }
            None => {
                return Err(
                    "no server process to profile: use a managed server (--server) or give the server's --server-pid"
                        .into(),
                );
            }
        };
        metrics::profile::Profiler::start(pids, delay, hz, subject.into())
    }

    fn server_info(&self) -> Option<ServerInfo> {
        let s = self.server.as_ref()?;
        Some(ServerInfo {
            kind: format!("{:?}", s.kind).to_lowercase(),
            version: s.version.clone(),
            settings: s.settings().iter().cloned().collect(),
            datadir: s.dir.display().to_string(),
            kept: s.kept(),
            effective: s.effective.clone(),
            setting_warnings: s.setting_warnings.clone(),
            basedir: s.build.as_ref().map(|b| b.basedir.display().to_string()),
        })
    }
}

/// Starts a managed server, saying so on stderr.
pub(crate) fn start_server(spec: &server::ServerSpec) -> Result<ManagedServer, Error> {
    eprintln!("Starting a managed {:?} server...", spec.kind);
    let server = ManagedServer::start(spec)?;
    eprintln!(
        "{} running on 127.0.0.1:{} in {}",
        server.version,
        server.port,
        server.dir.display()
    );
    for w in &server.setting_warnings {
        eprintln!("warning: {w}");
    }
    Ok(server)
}

pub(crate) fn load(
    plan: &RunPlan,
    target: &dyn Target,
    workload: &dyn Workload,
) -> Result<LoadReport, Error> {
    workload
        .prepare(target, &plan.workload_opts, plan.force, &INTERRUPT)
        .map_err(|e| interrupted_load(e, plan.server.is_some()))
}

/// A load that Ctrl-C stopped on a throwaway server: nothing to clean up, the server and its
/// data go with it (the loader's advice to run cleanup is for servers that stay).
pub(crate) fn interrupted_load(e: Error, managed: bool) -> Error {
    if managed && interrupted() {
        Error::Run(
            "interrupted during the load; the throwaway server and its data are removed".into(),
        )
    } else {
        e
    }
}

pub(crate) fn load_line(l: &LoadReport) -> String {
    format!(
        "Loaded {} rows into {} table(s) in {:.2}s: {:.0} rows/s (dbsweep used {:.2} CPU s)",
        l.rows, l.tables, l.seconds, l.rows_per_s, l.client_cpu_s
    )
}

fn run_workload(plan: &RunPlan) -> Result<Outcome, Error> {
    // Everything that can be wrong with the input fails here, before any table is touched.
    let out = plan
        .output
        .as_deref()
        .map(ResultsFile::create)
        .transpose()?;
    let workload = workload::build(&plan.workload, &plan.workload_opts)?;
    let db = Db::open(plan, plan.prepare)?;
    run_opened(plan, db, workload.as_ref(), out, &mut OwnFormat)
}

/// Who prints a run's interval lines and summary: dbsweep itself, or a script's report hooks.
pub(crate) trait Printer {
    /// Prints one interval; false leaves it to dbsweep's own line.
    fn interval(&mut self, _iv: &results::figures::Interval) -> bool {
        false
    }
    /// Prints the run's summary; false leaves it to dbsweep's own.
    fn summary(&mut self, _r: &Results) -> bool {
        false
    }
}

/// dbsweep's own interval lines and summary.
struct OwnFormat;
impl Printer for OwnFormat {}

/// Runs `workload` on the database the plan opened (a script's run comes here, with its
/// report hooks as `printer`).
pub(crate) fn run_built(
    plan: &RunPlan,
    db: Db,
    workload: &dyn Workload,
    printer: &mut dyn Printer,
) -> Result<Outcome, Error> {
    let out = plan
        .output
        .as_deref()
        .map(ResultsFile::create)
        .transpose()?;
    run_opened(plan, db, workload, out, printer)
}

fn run_opened(
    plan: &RunPlan,
    db: Db,
    workload: &dyn Workload,
    out: Option<ResultsFile>,
    printer: &mut dyn Printer,
) -> Result<Outcome, Error> {
    // A managed server without the tables (a fresh one) is prepared first, as --prepare does.
    let prepare = plan.prepare || (db.server.is_some() && !db.tables_exist(workload)?);
    let prepared = if prepare {
        let l = load(plan, db.target.as_ref(), workload)?;
        output::remark(&load_line(&l));
        workload.verify(db.target.as_ref())?;
        Some(l)
    } else {
        None
    };
    if let Some(st) = output::sysbench_style() {
        let r = &plan.runner;
        let header = output::sysbench::Header {
            threads: r.threads,
            rate: r.rate,
            report_interval: r.report_interval,
            rand_seed: r.rand_seed,
        };
        print!("{}", output::sysbench::run_header(&header, st.seed_given));
    }
    let results = measure(
        plan,
        &db,
        workload,
        prepared,
        &mut |iv| {
            if !printer.interval(iv) {
                output::print_interval(iv);
            }
        },
        &|s| output::remark(s),
        &INTERRUPT,
    )?;
    if !printer.summary(&results) {
        output::print_summary(&results);
    }
    let mut results = results;
    if let Some(p) = results.profile.as_mut() {
        match &out {
            Some(out) => {
                let title = format!("{} on {}", results.workload, results.target.kind);
                if let Err(e) = p.save_beside(out.path(), &title) {
                    output::remark(&format!("warning: --profile: {e}"));
                }
            }
            None => output::remark(
                "warning: --profile without --output: the folded stacks and the flame graph are not saved",
            ),
        }
    }
    if let Some(out) = out {
        let path = out.path().display().to_string();
        out.commit(&results)?;
        output::remark(&format!("results written to {path}"));
    }
    Ok(match (&results.error, results.interrupted) {
        (Some(e), _) => {
            eprintln!("error: the run stopped: {e}");
            Outcome::Failed
        }
        (None, true) => Outcome::Interrupted,
        (None, false) => Outcome::Done,
    })
}

/// Runs `workload` on a prepared database and gathers everything the results file holds: the
/// runner's figures, the hardware sampler's, the server's counters.
pub(crate) fn measure(
    plan: &RunPlan,
    db: &Db,
    workload: &dyn Workload,
    prepared: Option<LoadReport>,
    on_interval: &mut dyn FnMut(&results::figures::Interval),
    say: &dyn Fn(&str),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Results, Error> {
    let target = db.target.as_ref();
    let url = target.display_url();
    if let Some(at) = plan.runner.start_at {
        let late = runner::epoch_now() - at;
        if late > plan.start_tolerance {
            return Err(Error::Usage(format!(
                "--start-at {}: that instant passed {late:.1} s ago by this host's clock, more than --start-tolerance allows ({} s): give a later time, or set this host's clock right (NTP)",
                results::utc_datetime(at as u64),
                plan.start_tolerance
            )));
        }
    }
    let mut conn = target.connect().map_err(|e| usage_if_missing(&url, e))?;
    workload.check_ready(conn.as_mut(), &plan.workload_opts, &url)?;
    check_connection_limit(conn.as_mut(), &plan.runner, db.server.is_some(), &url)?;
    let version = target
        .version(conn.as_mut())
        .map_err(|e| Error::db(&url, e))?;
    let settings = conn.server_settings().map_err(|e| Error::db(&url, e))?;
    let tls = conn.tls();
    drop(conn);
    let clients = match plan.runner.mode() {
        runner::Mode::Threads => format!("{} thread(s)", plan.runner.threads),
        runner::Mode::Workers => format!(
            "{} clients on {} worker threads",
            plan.runner.threads,
            plan.runner.worker_threads()
        ),
        runner::Mode::Pooled => format!(
            "{} clients on {} worker threads sharing {} connections",
            plan.runner.threads,
            plan.runner.worker_threads(),
            plan.runner.connections
        ),
    };
    say(&format!(
        "dbsweep {}: {} on {url} ({} {version}), {clients}, seed {}",
        env!("CARGO_PKG_VERSION"),
        workload.name(),
        target.kind(),
        plan.runner.rand_seed
    ));
    let started_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // The samplers start measuring where the warm-up ends: after it, or at --start-at.
    let warmup = Duration::from_secs_f64(match plan.runner.start_at {
        Some(at) => (at - runner::epoch_now()).max(0.0),
        None => plan.runner.warmup,
    });
    let probe = metrics::dbstats::Probe::start(target, warmup).map_err(|e| Error::db(&url, e))?;
    let sampler = plan.hw_sample.then(|| {
        let subject = Subject {
            link_mbit: plan.link_mbit,
            ..db.hw_subject()
        };
        Sampler::start(subject, warmup)
    });
    let waits = metrics::waits::WaitSampler::start(target, warmup, plan.wait_sample_hz)
        .map_err(|e| Error::db(&url, e))?;
    let profiler = plan
        .profile
        .and_then(|hz| match db.start_profiler(warmup, hz) {
            Ok(p) => Some(p),
            Err(e) => {
                say(&format!("warning: --profile: {e}; the run is not profiled"));
                None
            }
        });
    let node = plan
        .server_metrics
        .as_deref()
        .map(|url| metrics::node::NodeScraper::start(url, warmup));
    let outcome = runner::run(target, workload, &plan.runner, stop, on_interval);
    let waits = waits.map(metrics::waits::WaitSampler::finish);
    let profile = profiler.map(metrics::profile::Profiler::finish);
    let events = outcome.as_ref().map_or(0, |o| o.total.counters.events);
    let hw = sampler.and_then(|s| s.finish(events));
    let server_host = node.map(|n| {
        let devices = (
            plan.server_device.as_deref(),
            plan.server_net_device.as_deref(),
        );
        n.finish(events, devices, plan.link_mbit)
    });
    if let Some(note) = server_host.as_ref().and_then(|h| h.note.as_ref()) {
        say(&format!("warning: --server-metrics: {note}"));
    }
    let outcome = outcome?;
    let server_stats = probe.finish(outcome.cache_counters, events);
    let info = TargetInfo {
        kind: target.kind().into(),
        url: url.clone(),
        version,
        settings,
        tls,
    };
    if let Some(at) = plan.runner.start_at {
        let late = outcome.measured_from - at;
        if late > plan.start_tolerance {
            say(&format!(
                "warning: --start-at: the measured part began {late:.1} s late (the clients took that long to connect): merged with other hosts' results, its first seconds are not theirs"
            ));
        }
    }
    let mut results = build_results(plan, info, started_at, prepared, outcome);
    results.hw = hw;
    results.server_host = server_host;
    results.server = db.server_info();
    match profile {
        Some(Ok(p)) => {
            if p.unknown_share > 0.5 {
                say(&format!(
                    "warning: --profile: {:.0}% of the samples have no symbol for their function: the server's binaries are stripped (install their debug symbols)",
                    p.unknown_share * 100.0
                ));
            }
            results.profile = Some(p);
        }
        Some(Err(e)) => say(&format!("warning: --profile: {e}; the run is not profiled")),
        None => {}
    }
    match waits {
        Some(Ok(w)) => results.waits = Some(w),
        Some(Err(e)) => say(&format!(
            "warning: the wait profile of {url} stopped: {e} (the step has none)"
        )),
        None => {}
    }
    match server_stats {
        Ok(s) => results.server_stats = Some(s),
        // The measurement stands without them; a server gone at the end is said by the run.
        Err(e) => say(&format!(
            "warning: could not read the server's counters on {url}: {e}"
        )),
    }
    Ok(results)
}

/// Connections dbsweep itself may hold during a run beside its clients' (the server counters'
/// snapshot, the wait sampler, a sysbench script's own), kept free under the server's limit.
const OWN_CONNECTIONS: i64 = 3;

/// Refuses, before any client connects, a run whose clients need more connections than the
/// server has free: one line naming both numbers, rather than a thousand failed connects.
fn check_connection_limit(
    conn: &mut dyn db::Conn,
    runner: &runner::RunnerOptions,
    managed: bool,
    url: &str,
) -> Result<(), Error> {
    let need = i64::from(if runner.connections > 0 {
        runner.connections
    } else {
        runner.threads
    });
    let int = |v: &Option<String>| v.as_deref().and_then(|t| t.trim().parse::<i64>().ok());
    let (max, reserved, used) = match conn.dialect() {
        db::Dialect::Postgres => {
            let rows = conn
                .query_rows(
                    "SELECT current_setting('max_connections'), \
                     current_setting('superuser_reserved_connections'), \
                     (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')",
                    3,
                )
                .map_err(|e| Error::db(url, e))?;
            let Some(r) = rows.first() else { return Ok(()) };
            // The server's answer: a short row is read as missing values.
            let col = |i: usize| r.get(i).and_then(&int);
            (col(0), col(1).unwrap_or(0), col(2).unwrap_or(0))
        }
        db::Dialect::Mysql => {
            let max = conn
                .query_i64("SELECT @@max_connections")
                .map_err(|e| Error::db(url, e))?;
            let used = conn
                .query_rows("SHOW GLOBAL STATUS LIKE 'Threads_connected'", 2)
                .map_err(|e| Error::db(url, e))?
                .first()
                .and_then(|r| r.get(1).and_then(&int))
                .unwrap_or(0);
            (max, 0, used)
        }
        _ => return Ok(()),
    };
    let Some(max) = max else { return Ok(()) };
    // This connection closes before the clients connect.
    let free = max - reserved - (used - 1).max(0) - OWN_CONNECTIONS;
    if need <= free {
        return Ok(());
    }
    let option = if runner.connections > 0 {
        format!("--connections {need}")
    } else {
        format!("--threads {need}")
    };
    let raise = if managed {
        format!(
            "start the server with --server-set max_connections={}",
            need + reserved + (used - 1).max(0) + OWN_CONNECTIONS
        )
    } else {
        "raise the server's max_connections".to_string()
    };
    Err(Error::Usage(format!(
        "{option}: the clients need {need} connections and {url} has {} free (max_connections {max}, {reserved} reserved for superusers, {} in use, {OWN_CONNECTIONS} kept for dbsweep): {raise}, or let the clients share fewer with --connections",
        free.max(0),
        (used - 1).max(0)
    )))
}

/// A connection failure before the run: a missing database file is the user's to fix.
fn usage_if_missing(url: &str, e: db::DbError) -> Error {
    if e.code == "missing" {
        Error::Usage(format!("--target {url}: {}", e.message))
    } else {
        Error::db(url, e)
    }
}

fn build_results(
    plan: &RunPlan,
    target: TargetInfo,
    started_at: u64,
    prepare: Option<LoadReport>,
    o: RunOutcome,
) -> Results {
    let c = &o.total.counters;
    let per_s = |n: u64| {
        if o.seconds > 0.0 {
            n as f64 / o.seconds
        } else {
            0.0
        }
    };
    let mut errors: std::collections::BTreeMap<String, u64> = ErrorClass::RETRYABLE
        .iter()
        .zip(c.retries)
        .map(|(class, n)| (class.name().to_string(), n))
        .collect();
    if c.lost_events > 0 {
        errors.insert(ErrorClass::ConnectionLost.name().into(), c.lost_events);
    }
    if c.script_errors > 0 {
        errors.insert("script".into(), c.script_errors);
    }
    let rate = (plan.runner.rate > 0.0).then(|| RateInfo {
        target_per_s: plan.runner.rate,
        lag_avg_ms: if c.events > 0 {
            c.lag_sum_ns as f64 / c.events as f64 / 1e6
        } else {
            0.0
        },
        lag_max_ms: c.lag_max_ns as f64 / 1e6,
    });
    let tpcc = (plan.workload == "tpcc").then(|| {
        let w = &plan.workload_opts;
        let pacing = workload::tpcc::run::Pacing {
            wait: w.wait,
            think_scale: w.think_scale,
            terminals: plan.runner.threads,
        };
        workload::tpcc::run::figures(
            &o.total.kinds,
            &o.total.queue,
            o.seconds,
            w.warehouses,
            pacing,
        )
    });
    let statements =
        results::StatementFigures::of(o.statement_names, &o.total.statements, c.events);
    let serving = o.behind.map(|behind| {
        let mut queue = metrics::new_histogram();
        for k in &o.total.queue {
            queue.add(&k.latency).expect("histograms share bounds");
        }
        results::Serving {
            clients: plan.runner.threads,
            workers: plan.runner.worker_threads(),
            connections: (plan.runner.connections > 0).then_some(plan.runner.connections),
            connect_s: o.connect_seconds,
            clients_behind: behind,
            queue_ms: Latency::from_histogram(&queue),
            queue_histogram: Some(HistogramData::encode(&queue)),
        }
    });
    Results {
        tpcc,
        statements,
        client_id: plan.client_id.clone(),
        measured_from: Some(o.measured_from),
        host: results::HostId::this(),
        server_host: None,
        parts: Vec::new(),
        schema_version: results::SCHEMA_VERSION,
        tool: Tool::this(),
        workload: plan.workload.clone(),
        options: plan.saved_options(&target.url),
        target,
        server: None,
        started_at,
        threads: plan.runner.threads,
        time_s: o.seconds,
        warmup_s: plan.runner.warmup,
        events: c.events,
        tps: per_s(c.events),
        qps: per_s(c.queries.total()),
        rows_per_s: per_s(c.queries.rows),
        queries: Queries {
            read: c.queries.reads,
            write: c.queries.writes,
            other: c.queries.others,
            total: c.queries.total(),
            rows: c.queries.rows,
        },
        latency_ms: Latency::from_histogram(&o.total.latency),
        errors,
        retries: c.retried(),
        reconnects: c.reconnects,
        rate,
        serving,
        thread_events: o.thread_events,
        thread_time_s: o.thread_seconds,
        intervals: o.intervals,
        histogram: HistogramData::encode(&o.total.latency),
        prepare,
        hw: None,
        server_stats: None,
        waits: None,
        profile: None,
        interrupted: o.interrupted,
        error: o.error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_signal_at_once_keeps_the_files_and_a_third_or_a_late_one_does_not() {
        let now = Duration::ZERO;
        assert!(!abandon_on_signal(0, now));
        assert!(!abandon_on_signal(1, Duration::from_millis(1)));
        assert!(abandon_on_signal(2, Duration::from_millis(1)));
        assert!(abandon_on_signal(
            1,
            SIGNAL_GRACE + Duration::from_millis(1)
        ));
    }
}
