//! A run's plan: the command line's options judged once, and the runner's and workloads' options made from them.

use super::checks::{bad, check_values};
use std::path::PathBuf;

use serde::Serialize;

use crate::cli::{DbArgs, Opts, RoleSpec, RunArgs};
use crate::error::Error;
use std::num::{NonZeroU32, NonZeroU64};

use crate::runner::phases::Phases;
use crate::runner::{RunnerOptions, positive};
use crate::server::ServerSpec;
use crate::workload::WorkloadOptions;
use crate::workload::rand::RandOptions;

#[derive(Clone, Debug)]
pub struct RunPlan {
    pub workload: String,
    /// Groups of clients beside the measured ones (`--role`), each resolved as a run's options.
    pub roles: Vec<RolePlan>,
    /// How the command's text looks (dbsweep's, or sysbench's for the drop-in).
    pub style: crate::output::Style,
    pub target: String,
    pub workload_opts: WorkloadOptions,
    pub runner: RunnerOptions,
    pub output: Option<PathBuf>,
    pub prepare: bool,
    pub force: bool,
    pub server: Option<ServerSpec>,
    /// An external server's main process (`--server-pid`) and data directory (`--data-dir`).
    pub server_pid: Option<u32>,
    pub data_dir: Option<PathBuf>,
    /// Whether the hardware sampler runs (`--hw-sample`).
    pub hw_sample: bool,
    /// Wait-profile samples per second (`--wait-sample-hz`; 0: none).
    pub wait_sample_hz: f64,
    /// `--profile`: perf's samples per second, or None for no profile.
    pub profile: Option<u32>,
    /// `--client-id`: this client host's name in the results.
    pub client_id: Option<String>,
    /// `--start-tolerance`: how late for `--start-at` a run may begin.
    pub start_tolerance: f64,
    /// `--server-metrics`: the database host's node_exporter, and `--server-device`, the disk
    /// to report from it.
    pub server_metrics: Option<String>,
    /// `--metrics-listen`: where the live metrics are served.
    pub metrics_listen: Option<std::net::SocketAddr>,
    pub server_device: Option<String>,
    /// `--server-net-device`: the interface to report from it.
    pub server_net_device: Option<String>,
    /// `--link-speed`: Mbit/s of links whose speed the system does not tell.
    pub link_mbit: Option<f64>,
}

/// What the results file stores as `options`.
#[derive(Serialize)]
struct SavedOptions<'a> {
    workload: &'a str,
    target: &'a str,
    #[serde(flatten)]
    workload_opts: &'a WorkloadOptions,
    #[serde(flatten)]
    runner: &'a RunnerOptions,
    prepare: bool,
}

/// The run's options with `--phases` applied: its seconds are `--time`; open loop, its mean
/// rate is `--rate` (which turns pacing on); closed loop, its most clients are `--threads`.
fn with_phases(o: &RunArgs, spec: &str) -> Result<(RunArgs, Phases), Error> {
    let p = Phases::parse(spec).map_err(|e| bad("phases", e))?;
    let mut a = o.clone();
    let default_time = RunArgs::default().time;
    if o.time != default_time && (o.time - p.seconds()).abs() > 1e-9 {
        return Err(bad(
            "time",
            format!(
                "{}: the phases' {} s are the measured part; leave out --time",
                o.time,
                p.seconds()
            ),
        ));
    }
    a.time = p.seconds();
    if o.rate > 0.0 {
        return Err(bad(
            "rate",
            "--phases sets the rate over time; leave out --rate",
        ));
    }
    if o.families.tpcc.wait {
        return Err(bad("phases", "TPC-C's --wait paces terminals itself"));
    }
    if p.closed_loop() {
        let most = p.max_clients();
        match o.threads {
            Some(t) if t < most => {
                return Err(bad(
                    "threads",
                    format!("{t}: the phases run up to {most} clients"),
                ));
            }
            Some(_) => {}
            None => a.threads = Some(most),
        }
    } else {
        a.rate = p.mean_rate();
    }
    Ok((a, p))
}

/// The most clients a run may have. Past this, even waiting clients on a few workers (a few
/// hundred bytes and a connection each) are the machine's limit, not the database's.
pub const MAX_CLIENTS: u32 = 100_000;

/// The most worker threads a run may have (with a thread per client, the most clients): past a
/// few thousand the machine, not the database, is what a run would measure (or the thread limit
/// would end it half-started).
pub const MAX_WORKERS: u32 = 5_000;

/// Default worker threads per core for clients that wait (keying and think times, `--rate`): a
/// worker blocks while the server answers, so a few per core keep the cores busy.
pub const WORKERS_PER_CORE: u32 = 4;

/// The clients, worker threads and shared connections of a run of `workload` with options `o`.
fn clients_of(workload: &str, o: &RunArgs) -> Result<(u32, u32), Error> {
    let threads = o
        .threads
        .unwrap_or_else(|| o.families.default_clients(workload).unwrap_or(1));
    if threads == 0 || threads > MAX_CLIENTS {
        return Err(bad(
            "threads",
            format!("{threads} must be from 1 to {MAX_CLIENTS}"),
        ));
    }
    // Not a built-in: a sysbench Lua script's path (the script's plan names its workload so).
    let script = !crate::workload::is_builtin(workload);
    let paced = o.families.tpcc.wait || o.rate > 0.0;
    let workers = match o.workers {
        Some(w) if w == 0 || w > MAX_WORKERS => {
            return Err(bad(
                "workers",
                format!("{w} must be from 1 to {MAX_WORKERS}"),
            ));
        }
        Some(w) if script && w < threads => {
            return Err(bad(
                "workers",
                format!(
                    "{w} is fewer than the {threads} clients: a sysbench script's clients run a \
                     thread each (its thread_run blocks)"
                ),
            ));
        }
        Some(w) => w.min(threads),
        None if paced && !script => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
            threads.min(cores.saturating_mul(WORKERS_PER_CORE).max(1))
        }
        None => threads,
    };
    if workers > MAX_WORKERS {
        return Err(bad(
            "threads",
            format!(
                "{threads} clients on a thread each: more than {MAX_WORKERS} need --workers \
                 (clients multiplexed on fewer threads)"
            ),
        ));
    }
    if o.connections > 0 {
        let why = if script {
            Some("a sysbench script's clients open their own connections")
        } else if workload == "bulk_insert" {
            Some("bulk_insert keeps a transaction open across events")
        } else if o.connections > threads {
            Some("more connections than clients; leave it out for one per client")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(bad("connections", format!("{}: {why}", o.connections)));
        }
    }
    if !(o.connect_rate == 0.0 || (o.connect_rate.is_finite() && o.connect_rate >= 0.1)) {
        return Err(bad(
            "connect-rate",
            format!(
                "{} must be 0 (no limit) or at least 0.1 connections/s",
                o.connect_rate
            ),
        ));
    }
    Ok((threads, workers))
}

/// The managed server that `--server` and its options ask for, if any.
pub fn server_spec(a: &DbArgs) -> Result<Option<ServerSpec>, Error> {
    let spec = match &a.server {
        Some(choice) => Some(ServerSpec {
            settings: a.server_set.clone(),
            datadir: a.server_datadir.clone(),
            datadir_force: a.server_datadir_force,
            keep: a.keep,
            socket: a.server_socket,
            tls: a.server_tls,
            build: crate::server::builds::resolve(
                choice.kind,
                choice.version.as_deref(),
                a.server_basedir.as_deref(),
            )?,
            ..ServerSpec::new(choice.kind)
        }),
        None => None,
    };
    if spec.is_none()
        && (!a.server_set.is_empty()
            || a.server_datadir.is_some()
            || a.keep
            || a.server_socket
            || a.server_tls)
    {
        return Err(bad(
            "server-set",
            "--server-set, --server-datadir, --server-socket, --server-tls and --keep need --server postgres|mariadb|mysql",
        ));
    }
    Ok(spec)
}

/// A group of clients beside a run's measured ones: its workload and options, the run's own but
/// for its clients and rate.
#[derive(Clone, Debug)]
pub struct RolePlan {
    pub workload: String,
    pub workload_opts: WorkloadOptions,
    pub runner: RunnerOptions,
}

/// The plan of role `i` of a run with options `o` and generator seed `seed` (each role's
/// generator is seeded apart).
fn role_plan(o: &RunArgs, spec: &RoleSpec, seed: u64, i: usize) -> Result<RolePlan, Error> {
    if !crate::workload::is_builtin(&spec.workload) {
        return Err(bad(
            "role",
            format!(
                "{}: not a built-in workload (`dbsweep workloads` lists them)",
                spec.workload
            ),
        ));
    }
    let mut r = o.clone();
    r.role.clear();
    r.threads = Some(spec.clients.unwrap_or(1));
    r.rate = spec.rate.unwrap_or(0.0);
    r.workers = None;
    r.connections = 0;
    let within = |e: Error| bad("role", format!("{}: {e}", spec.workload));
    let (threads, workers) = clients_of(&spec.workload, &r).map_err(within)?;
    check_values(&r).map_err(within)?;
    let seed = seed.wrapping_add((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1;
    Ok(RolePlan {
        workload: spec.workload.clone(),
        workload_opts: workload_options(&r, threads, seed),
        runner: runner_options(&r, threads, workers, seed),
    })
}

/// `--pipeline` is PostgreSQL's: the one rule, for a run's target and for each of a plan's
/// targets. `dialect`: the target's; None when unknown.
pub fn check_pipeline(
    pipeline: bool,
    dialect: Option<crate::db::Dialect>,
) -> Result<(), &'static str> {
    if pipeline && dialect != Some(crate::db::Dialect::Postgres) {
        Err("only PostgreSQL targets pipeline statements")
    } else {
        Ok(())
    }
}

/// The dialect of a managed server of `kind`.
pub fn server_dialect(kind: crate::server::ServerKind) -> crate::db::Dialect {
    match kind {
        crate::server::ServerKind::Postgres => crate::db::Dialect::Postgres,
        crate::server::ServerKind::Mariadb | crate::server::ServerKind::Mysql => {
            crate::db::Dialect::Mysql
        }
    }
}

impl RunPlan {
    /// The plan with its text in `style`, for everyone who prints.
    pub fn styled(mut self, style: crate::output::Style) -> RunPlan {
        self.style = style;
        self.runner.notes = style.events();
        if let Some(v) = style.voice() {
            self.runner.checkpoints = v.checkpoints().to_vec();
            if let Some(p) = v.percentile() {
                self.runner.percentile = p;
            }
        }
        self.workload_opts.notes = style.events();
        for r in &mut self.roles {
            r.runner.notes = style.events();
            r.workload_opts.notes = style.events();
        }
        self
    }

    /// The plan without progress bars (a sweep's step, under the sweep's bar).
    pub fn without_bars(&mut self) {
        self.runner.notes = self.runner.notes.without_bars();
        self.workload_opts.notes = self.workload_opts.notes.without_bars();
        for r in &mut self.roles {
            r.runner.notes = r.runner.notes.without_bars();
            r.workload_opts.notes = r.workload_opts.notes.without_bars();
        }
    }

    pub fn from_opts(o: &Opts) -> Result<RunPlan, Error> {
        RunPlan::from_args(&o.workload, &o.args)
    }

    /// The plan of `workload` run with options `o`.
    pub fn from_args(workload: &str, o: &RunArgs) -> Result<RunPlan, Error> {
        let phased;
        let (o, phases) = match &o.phases {
            Some(spec) => {
                let (args, phases) = with_phases(o, spec)?;
                phased = args;
                (&phased, Some(phases))
            }
            None => (o, None),
        };
        let (threads, workers) = clients_of(workload, o)?;
        check_values(o)?;
        let seed = if o.rand_seed == 0 {
            rand::random::<u64>() | 1
        } else {
            o.rand_seed
        };
        let mut workload_opts = workload_options(o, threads, seed);
        workload_opts.families.resolve(workload)?;
        let roles = o
            .role
            .iter()
            .enumerate()
            .map(|(i, spec)| role_plan(o, spec, seed, i))
            .collect::<Result<Vec<_>, Error>>()?;
        let mut runner = runner_options(o, threads, workers, seed);
        runner.phases = phases.map(std::sync::Arc::new);
        if o.arrivals == crate::runner::phases::Arrivals::Poisson {
            if runner.rate.is_none() {
                return Err(bad(
                    "arrivals",
                    "poisson spaces paced events: give --rate or --phases of rates",
                ));
            }
            runner.poisson = true;
        }
        let server = server_spec(&o.db)?;
        Ok(RunPlan {
            workload: workload.to_string(),
            roles,
            style: Default::default(),
            target: o.db.target.clone(),
            workload_opts,
            runner,
            output: o.output.clone(),
            prepare: o.prepare,
            force: o.force,
            server,
            server_pid: o.server_pid,
            data_dir: o.data_dir.clone(),
            hw_sample: o.hw_sample,
            wait_sample_hz: o.wait_sample_hz,
            profile: o.profile.then_some(o.profile_hz),
            client_id: o.client_id.clone(),
            start_tolerance: o.start_tolerance,
            server_metrics: o.server_metrics.clone(),
            metrics_listen: o
                .metrics_listen
                .as_deref()
                .map(crate::metrics::live::address)
                .transpose()
                .map_err(|e| bad("metrics-listen", e))?,
            server_device: o.server_device.clone(),
            server_net_device: o.server_net_device.clone(),
            link_mbit: o.link_speed,
        })
    }

    /// Every resolved option, for the results file.
    pub fn saved_options(&self, target_url: &str) -> serde_json::Value {
        serde_json::to_value(SavedOptions {
            workload: &self.workload,
            target: target_url,
            workload_opts: &self.workload_opts,
            runner: &self.runner,
            prepare: self.prepare,
        })
        .expect("options serialise")
    }
}

/// The workload's options of a run of `threads` clients with generator seed `seed`.
fn workload_options(o: &RunArgs, threads: u32, seed: u64) -> WorkloadOptions {
    WorkloadOptions {
        notes: Default::default(),
        timeouts: o.db.timeouts,
        tables: o.tables,
        table_size: o.table_size,
        analyze: o.analyze,
        statement_times: o.statement_times,
        ps_mode: o.ps_mode,
        pipeline: o.pipeline,
        threads,
        families: o.families.clone(),
        scale: o.scale,
        rand: RandOptions {
            rand_type: o.rand_type,
            rand_seed: seed,
            rand_zipfian_exp: o.rand_zipfian_exp,
            rand_pareto_h: o.rand_pareto_h,
            rand_spec_pct: o.rand_spec_pct,
            rand_spec_res: o.rand_spec_res,
        },
    }
}

/// The runner's options of a run of `threads` clients on `workers` threads.
fn runner_options(o: &RunArgs, threads: u32, workers: u32, seed: u64) -> RunnerOptions {
    RunnerOptions {
        live: None,
        phases: None,
        poisson: false,
        notes: Default::default(),
        threads,
        workers: NonZeroU32::new(workers).filter(|_| workers < threads),
        connections: NonZeroU32::new(o.connections),
        connect_rate: positive(o.connect_rate),
        time: positive(o.time),
        events: NonZeroU64::new(o.events),
        events_per_client: NonZeroU64::new(o.events_per_client),
        max_tries: NonZeroU32::new(o.max_tries),
        // pgbench's error lines and transaction log: the pgbench personality's, set by it.
        verbose_errors: false,
        clients_alone: false,
        latency_limit: positive(o.latency_limit),
        txn_log: None,
        warmup: o.warmup,
        rate: positive(o.rate),
        report_interval: positive(o.report_interval),
        reconnect: NonZeroU64::new(o.reconnect),
        reconnect_timeout: o.reconnect_timeout,
        rand_seed: seed,
        percentile: 95.0,
        checkpoints: Vec::new(),
        start_at: o.start_at.map(|t| t.0),
        measure_start: crate::metrics::MeasureStart::new(),
    }
}
