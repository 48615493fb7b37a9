//! One measured run: the samplers around the runner, the checks before it, and the results file
//! built from what they measured.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::{db, metrics, results, runner, workload};

use super::open::Db;
use crate::db::ErrorClass;
use crate::error::Error;
use crate::output::{Said, Warning};
use crate::plan::RunPlan;
use crate::results::figures::LoadReport;
use crate::results::{HistogramData, Latency, Queries, RateInfo, Results, TargetInfo, Tool};
use crate::runner::RunOutcome;
use crate::workload::Workload;

/// Runs `workload` on a prepared database and gathers everything the results file holds: the
/// runner's figures, the hardware sampler's, the server's counters.
pub(crate) fn measure(
    plan: &RunPlan,
    db: &Db,
    workload: &dyn Workload,
    prepared: Option<LoadReport>,
    on_report: &mut dyn FnMut(runner::Report<'_>),
    say: &dyn Fn(Said<'_>),
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Results, Error> {
    let target = db.target.as_ref();
    let url = target.display_url();
    check_start_at(plan)?;
    let Checked {
        version,
        settings,
        tls,
        roles,
        offline,
    } = check_before(plan, db, workload, &url)?;
    let clients = clients_line(&plan.runner);
    say(Said::Remark(&format!(
        "dbsweep {}: {} on {url} ({} {version}), {clients}, seed {}",
        env!("CARGO_PKG_VERSION"),
        workload.name(),
        target.kind(),
        plan.runner.rand_seed
    )));
    for w in workload.warnings() {
        say(Said::Warning(Warning::Other, &w));
    }
    let started_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // The samplers measure from where the runner's measured part begins: once the clients
    // have connected, after the warm-up (or at --start-at). A handle of this step's own.
    let start = metrics::MeasureStart::new();
    let opts = runner::RunnerOptions {
        measure_start: start.clone(),
        ..plan.runner.clone()
    };
    let samplers = super::samplers::start(plan, db, &start, offline, say)?;
    let (outcome, role_outcomes) =
        run_measured(plan, &opts, target, workload, &roles, stop, on_report);
    let sampled = super::samplers::finish(
        samplers,
        &super::samplers::Ended {
            target,
            plan,
            events: outcome.as_ref().map_or(0, |o| o.total.counters.events),
            cache: outcome.as_ref().ok().map(|o| o.cache_counters),
        },
    );
    if let Some(note) = sampled.server_host.as_ref().and_then(|h| h.note.as_ref()) {
        say(Said::Warning(
            Warning::Other,
            &format!("--server-metrics: {note}"),
        ));
    }
    if let Some(b) = sampled
        .hw
        .as_ref()
        .and_then(|h| h.beside.as_ref())
        .filter(|b| b.busy)
    {
        say(Said::Warning(
            Warning::Other,
            &format!(
                "the machine was busy beside the run ({}): its figures hold that load too, and reports call no difference built on them one",
                b.describe()
            ),
        ));
    }
    let outcome = outcome?;
    if outcome.overran_s > 0.0 {
        say(Said::Warning(
            Warning::Other,
            &format!(
                "the clients ended {:.1} s after --time {} (an event held that long: a lock \
             of another process?); per-second figures are over the {:.1} s the run took",
                outcome.overran_s,
                plan.runner.time.unwrap_or_default(),
                outcome.seconds
            ),
        ));
    }
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
            say(Said::Warning(
                Warning::Other,
                &format!(
                    "--start-at: the measured part began {late:.1} s late (the clients took that long to connect): merged with other hosts' results, its first seconds are not theirs"
                ),
            ));
        }
    }
    let mut results = build_results(plan, workload, info, started_at, prepared, outcome);
    attach_roles(&mut results, plan, role_outcomes, say)?;
    results.server = db.server_info();
    sampled.attach(&mut results, &url, say);
    Ok(results)
}

/// What the checks before a run found: the server's version, settings and TLS, the roles'
/// workloads ready, and whether the run goes without a connection (a script of its own).
struct Checked {
    version: String,
    settings: std::collections::BTreeMap<String, String>,
    tls: Option<String>,
    roles: Vec<Box<dyn Workload>>,
    offline: bool,
}

/// Connects once before the run: the workload's tables ready, the server's connection limit
/// room for the clients, its version and settings; the roles' workloads ready.
fn check_before(
    plan: &RunPlan,
    db: &Db,
    workload: &dyn Workload,
    url: &str,
) -> Result<Checked, Error> {
    let target = db.target.as_ref();
    let mut conn = match target.connect() {
        Ok(c) => Some(c),
        // A script opens its own connections, and one that never does (a CPU test, a
        // report of its own) runs where no server answers or lets it in, as sysbench runs
        // it; one that does meets the same error at its own connect. For other workloads
        // every error (a refused login, a missing SQLite file) is said here.
        Err(_) if workload.own_connections() && plan.roles.is_empty() => None,
        Err(e) => return Err(usage_if_missing(url, e)),
    };
    let (version, settings, tls) = match conn.as_deref_mut() {
        Some(conn) => {
            workload.check_ready(conn, &plan.workload_opts, url)?;
            check_connection_limit(conn, &plan.runner, db.server.is_some(), url)?;
            let version = target.version(conn).map_err(|e| Error::db(url, e))?;
            let settings = conn.server_settings().map_err(|e| Error::db(url, e))?;
            (version, settings, conn.tls())
        }
        None => (NOT_CONNECTED.to_string(), Default::default(), None),
    };
    let roles = match conn.as_deref_mut() {
        Some(conn) => ready_roles(plan, conn, url)?,
        None => Vec::new(),
    };
    let offline = conn.is_none();
    drop(conn);
    Ok(Checked {
        version,
        settings,
        tls,
        roles,
        offline,
    })
}

/// The roles' figures into `results`; a role that failed fails the step, one that did not keep
/// its rate is said.
fn attach_roles(
    results: &mut Results,
    plan: &RunPlan,
    role_outcomes: Vec<Result<RunOutcome, Error>>,
    say: &dyn Fn(Said<'_>),
) -> Result<(), Error> {
    results.roles = plan
        .roles
        .iter()
        .zip(role_outcomes)
        .map(|(r, o)| role_figures(r, o))
        .collect();
    // A group beside the run that failed ended the run with it: its figures are of a shorter
    // run than asked, under another load than the plan's.
    if let Some((i, role)) = results
        .roles
        .iter()
        .enumerate()
        .find(|(_, r)| r.error.is_some())
    {
        return Err(Error::Run(format!(
            "--role {} (the {} group beside the run) failed: {}; the run ended with it and is \
             not kept",
            role.workload,
            ordinal(i + 1),
            role.error.as_deref().unwrap_or_default()
        )));
    }
    for role in results.roles.iter().filter(|r| r.rate_met == Some(false)) {
        say(Said::Warning(
            Warning::Other,
            &format!(
                "--role {}: {:.1} events/s of the {} asked for beside the run: the background load was not kept",
                role.workload,
                role.tps,
                role.rate.unwrap_or_default()
            ),
        ));
    }
    Ok(())
}

/// `1st`, `2nd`, `3rd`, `4th`...
fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (1, 11) | (2, 12) | (3, 13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// The workloads of the groups beside the measured one, each ready on its tables as the run's
/// own.
fn ready_roles(
    plan: &RunPlan,
    conn: &mut dyn db::Conn,
    url: &str,
) -> Result<Vec<Box<dyn Workload>>, Error> {
    plan.roles
        .iter()
        .map(|r| {
            let w = workload::build(&r.workload, &r.workload_opts)?;
            w.check_ready(conn, &r.workload_opts, url)?;
            Ok(w)
        })
        .collect()
}

/// The measured run, and beside it the plan's roles (each group's outcome apart).
fn run_measured(
    plan: &RunPlan,
    opts: &runner::RunnerOptions,
    target: &dyn db::Target,
    workload: &dyn Workload,
    roles: &[Box<dyn Workload>],
    stop: &std::sync::atomic::AtomicBool,
    on_report: &mut dyn FnMut(runner::Report<'_>),
) -> (Result<RunOutcome, Error>, Vec<Result<RunOutcome, Error>>) {
    if roles.is_empty() {
        return (
            runner::run(target, workload, opts, stop, on_report),
            Vec::new(),
        );
    }
    let groups: Vec<runner::Group> = std::iter::once(runner::Group {
        workload,
        opts,
        measured: true,
    })
    .chain(plan.roles.iter().zip(roles).map(|(r, w)| runner::Group {
        workload: w.as_ref(),
        opts: &r.runner,
        measured: false,
    }))
    .collect();
    let mut outs = runner::run_groups(target, &groups, stop, on_report).into_iter();
    let measured = outs.next().expect("the measured group runs first");
    (measured, outs.collect())
}

/// Refuses a `--start-at` that passed longer ago than `--start-tolerance`.
fn check_start_at(plan: &RunPlan) -> Result<(), Error> {
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
    Ok(())
}

/// How the run's clients are served, for its first line.
fn clients_line(r: &runner::RunnerOptions) -> String {
    match r.mode() {
        runner::Mode::Threads => format!("{} thread(s)", r.threads),
        runner::Mode::Workers => format!(
            "{} clients on {} worker threads",
            r.threads,
            r.worker_threads()
        ),
        runner::Mode::Pooled => format!(
            "{} clients on {} worker threads sharing {} connections",
            r.threads,
            r.worker_threads(),
            r.shared_connections()
        ),
    }
}

/// The server version of a run whose script never connected (no database was reachable).
pub(crate) const NOT_CONNECTED: &str = "not connected";

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
    let need = i64::from(runner.connections.map_or(runner.threads, |c| c.get()));
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
    let option = if runner.connections.is_some() {
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
pub(crate) fn usage_if_missing(url: &str, e: db::DbError) -> Error {
    if e.code == "missing" {
        Error::Usage(format!("--target {url}: {}", e.message))
    } else {
        Error::db(url, e)
    }
}

fn build_results(
    plan: &RunPlan,
    workload: &dyn Workload,
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
    let errors = error_counts(c);
    let rate = plan.runner.rate.map(|target_per_s| RateInfo {
        target_per_s,
        lag_avg_ms: if c.events > 0 {
            c.lag_sum_ns as f64 / c.events as f64 / 1e6
        } else {
            0.0
        },
        lag_max_ms: c.lag_max_ns as f64 / 1e6,
    });
    let tpcc = workload.figures(
        &o.total.kinds,
        &o.total.queue,
        o.seconds,
        plan.runner.threads,
    );
    let statements =
        results::StatementFigures::of(o.statement_names, &o.total.statements, c.events);
    // Transaction kinds of workloads other than TPC-C (whose figures are its own): pgbench's
    // scripts.
    let scripts = if tpcc.is_none() {
        results::StatementFigures::of(o.kind_names, &o.total.kinds, c.events)
    } else {
        Vec::new()
    };
    let serving = o.behind.map(|behind| serving(plan, &o, behind));
    let phases = phase_figures(plan, &o.phases);
    Results {
        capacity: None,
        phases,
        tpcc,
        statements,
        scripts,
        client_id: plan.client_id.clone(),
        measured_from: Some(o.measured_from),
        host: results::HostId::this(),
        server_host: None,
        parts: Vec::new(),
        roles: Vec::new(),
        connect_s: Some(o.connect_seconds),
        limits: None,
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
        queries: c.query_totals(),
        latency_ms: Latency::from_histogram(&o.total.latency.to_hdr()),
        errors,
        retries: c.retried(),
        reconnects: c.reconnects,
        failed_events: c.failed_events,
        failed_deadlocks: c.failed_deadlocks,
        failed_serialization: c.failed_serialization,
        retried_events: c.retried_events,
        late_events: c.late_events,
        skipped_events: c.skipped_events,
        reconnect_s: (c.reconnect_ns > 0).then(|| c.reconnect_ns as f64 / 1e9),
        rate,
        serving,
        thread_events: o.thread_events,
        thread_time_s: o.thread_seconds,
        since_checkpoint: o.since_checkpoint.map(Box::new),
        intervals: o.intervals,
        histogram: HistogramData::encode(&o.total.latency.to_hdr()),
        prepare,
        hw: None,
        server_stats: None,
        waits: None,
        profile: None,
        interrupted: o.interrupted,
        aborted_clients: o.aborted_clients,
        error: o.error.or_else(|| {
            (o.aborted_clients > 0).then(|| {
                format!(
                    "{} of {} clients aborted after an error; the others ran on",
                    o.aborted_clients, plan.runner.threads
                )
            })
        }),
    }
}

/// How the pooled clients were served: their connections and workers, and the wait for a
/// connection (`behind`: clients that fell behind).
fn serving(plan: &RunPlan, o: &RunOutcome, behind: u64) -> results::Serving {
    let mut queue = metrics::Hist::new();
    for k in &o.total.queue {
        queue.add(&k.latency);
    }
    let queue = queue.to_hdr();
    results::Serving {
        clients: plan.runner.threads,
        workers: plan.runner.worker_threads(),
        connections: plan.runner.connections.map(|c| c.get()),
        connect_s: o.connect_seconds,
        clients_behind: behind,
        queue_ms: Latency::from_histogram(&queue),
        queue_histogram: Some(HistogramData::encode(&queue)),
    }
}

/// Retried events by error class, lost events and script errors.
fn error_counts(c: &metrics::Counters) -> std::collections::BTreeMap<String, u64> {
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
    errors
}

/// What a group beside the measured one did (its outcome, or why it did not run).
fn role_figures(
    r: &crate::plan::RolePlan,
    outcome: Result<RunOutcome, Error>,
) -> results::figures::RoleFigures {
    let mut f = results::figures::RoleFigures {
        workload: r.workload.clone(),
        clients: r.runner.threads,
        rate: r.runner.rate,
        rate_met: None,
        events: 0,
        time_s: 0.0,
        tps: 0.0,
        queries: Queries::default(),
        latency_ms: Latency::default(),
        histogram: None,
        statements: Vec::new(),
        errors: error_counts(&metrics::Counters::default()),
        error: None,
    };
    match outcome {
        Ok(o) => {
            let c = &o.total.counters;
            f.events = c.events;
            f.time_s = o.seconds;
            f.tps = if o.seconds > 0.0 {
                c.events as f64 / o.seconds
            } else {
                0.0
            };
            f.rate_met = r
                .runner
                .rate
                .map(|rate| f.tps >= rate * results::figures::RATE_MET);
            f.queries = c.query_totals();
            f.latency_ms = Latency::from_histogram(&o.total.latency.to_hdr());
            f.histogram = Some(HistogramData::encode(&o.total.latency.to_hdr()));
            f.statements =
                results::StatementFigures::of(o.statement_names, &o.total.statements, c.events);
            f.errors = error_counts(c);
            f.error = o.error;
        }
        Err(e) => f.error = Some(e.to_string()),
    }
    f
}

/// `--phases`: each phase's figures from its intervals.
fn phase_figures(
    plan: &RunPlan,
    by_phase: &[(metrics::Snapshot, f64)],
) -> Vec<results::figures::PhaseFigures> {
    let Some(phases) = &plan.runner.phases else {
        return Vec::new();
    };
    phases
        .list()
        .iter()
        .zip(by_phase)
        .enumerate()
        .map(|(i, (p, (snap, seconds)))| {
            let c = &snap.counters;
            let latency = snap.latency.to_hdr();
            let closed = match p.load {
                crate::runner::phases::Load::Clients(n) => Some(n),
                _ => None,
            };
            results::figures::PhaseFigures {
                phase: crate::runner::phases::Phases::describe(p),
                start_s: phases.start_of(i),
                time_s: *seconds,
                target_per_s: closed.is_none().then(|| p.events() / p.seconds),
                clients: closed,
                events: c.events,
                tps: if *seconds > 0.0 {
                    c.events as f64 / seconds
                } else {
                    0.0
                },
                errors: c.errors(),
                failed: c.failed_events,
                latency_ms: results::Latency::from_histogram(&latency),
                histogram: Some(results::HistogramData::encode(&latency)),
            }
        })
        .collect()
}
