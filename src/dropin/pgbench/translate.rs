//! pgbench's command line read as pgbench reads it: the connection, -i's initialisation and a run's options made typed.

use super::PgbenchRun;
use std::path::Path;

use super::output::{PgbenchStyle, ScriptShape};
use super::txn_log::TxnLogOpts;
use crate::cli::RunArgs;
use crate::error::{Error, Outcome};
use crate::output::Style;
use crate::plan::RunPlan;
use crate::workload::PsMode;
use crate::workload::pgbench::init::TableOptions;
use crate::workload::pgbench::script;

use super::checks::{check_values, seed_value};
use super::getopt::getopt;
use super::setup::Vacuum;

/// Whether the program was started under pgbench's name.
pub fn invoked_as_pgbench(argv0: &str) -> bool {
    Path::new(argv0).file_name().is_some_and(|n| n == "pgbench")
}

/// What the command line asks: answered here, or a dbsweep command to run in `style`.
pub enum Pgbench {
    Done(Outcome),
    /// `-i`: the plan of the tables' prepare.
    Init(Box<RunPlan>),
    /// A run, its options judged; `PgbenchRun::ready` does what pgbench does before it.
    Run(Box<PgbenchRun>),
}

pub(super) fn usage(why: impl Into<String>) -> Error {
    Error::Run(why.into())
}

/// A number option's value, or pgbench's complaint.
fn number<T: std::str::FromStr>(name: &str, v: &str, what: &str) -> Result<T, Error> {
    v.trim()
        .parse::<T>()
        .map_err(|_| usage(format!("invalid {what}: \"{v}\" (option --{name})")))
}

/// Percent-encodes a URL part whole (a user, password, host or database name as given).
fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// The name of the effective user, as libpq's default user is taken (getpwuid of geteuid).
fn os_user() -> Option<String> {
    nix::unistd::User::from_uid(nix::unistd::Uid::effective())
        .ok()
        .flatten()
        .map(|u| u.name)
}

/// The target URL libpq would connect to with these options and environment, and its host,
/// port and database as `-d` names them.
fn url(opts: &[(&str, String)], db: Option<String>) -> (String, [String; 3]) {
    let last = |name: &str, env: &str| {
        opts.iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(env).ok().filter(|v| !v.is_empty()))
    };
    // As libpq: -U, then PGUSER, then the process's own user from the system ($USER is not
    // read: cron, systemd units and `runuser` leave it unset or stale).
    let user = last("username", "PGUSER")
        .or_else(os_user)
        .unwrap_or_else(|| "postgres".into());
    let host = last("host", "PGHOST").unwrap_or_else(|| "/var/run/postgresql".into());
    let port = last("port", "PGPORT").unwrap_or_else(|| "5432".into());
    let db = db
        .or_else(|| std::env::var("PGDATABASE").ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| user.clone());
    let password = std::env::var("PGPASSWORD")
        .ok()
        .filter(|p| !p.is_empty())
        .map_or(String::new(), |p| format!(":{}", encode(&p)));
    let mut url = format!(
        "postgres://{}{password}@{}:{port}/{}",
        encode(&user),
        encode(&host),
        encode(&db)
    );
    if let Ok(mode) = std::env::var("PGSSLMODE")
        && !mode.is_empty()
    {
        url.push_str(&format!("?sslmode={mode}"));
    }
    (url, [host, port, db])
}

/// Reads pgbench's command line: the answer, or the dbsweep command it is.
pub fn main(args: &[String]) -> Result<Pgbench, Error> {
    let (opts, db) = getopt(args)?;
    let has = |n: &str| has(&opts, n);
    if has("help") {
        print!("{}", super::help::text());
        return Ok(Pgbench::Done(Outcome::Done));
    }
    if has("version") {
        println!(
            "pgbench (PostgreSQL) 15 (dbsweep {})",
            env!("CARGO_PKG_VERSION")
        );
        return Ok(Pgbench::Done(Outcome::Done));
    }
    // `-b list` and `--show-script` answer when pgbench's option parsing reaches them.
    for (k, v) in &opts {
        match (*k, v.as_str()) {
            ("builtin", "list") => {
                eprint!("{}", script::builtin_list());
                return Ok(Pgbench::Done(Outcome::Done));
            }
            ("show-script", name) => {
                let (name, desc, text) = script::builtin(name).map_err(usage)?;
                eprintln!("-- {name}: {desc}\n{text}");
                return Ok(Pgbench::Done(Outcome::Done));
            }
            _ => {}
        }
    }
    // Every value is judged, in pgbench's words, before anything connects.
    check_values(&opts)?;
    let (target, at) = url(&opts, db);
    if has("initialize") {
        return init(&opts, &target).map(|plan| Pgbench::Init(Box::new(plan)));
    }
    run(&opts, &target, &at)
}

/// Whether option `n` was given.
fn has(opts: &[(&str, String)], n: &str) -> bool {
    opts.iter().any(|(k, _)| *k == n)
}

/// The value option `n` was last given.
pub(super) fn last<'a>(opts: &'a [(&str, String)], n: &str) -> Option<&'a str> {
    opts.iter()
        .rev()
        .find(|(k, _)| *k == n)
        .map(|(_, v)| v.as_str())
}

/// `-i`: the plan of dbsweep's prepare of pgbench's tables, with `-i`'s table options.
fn init(opts: &[(&str, String)], target: &str) -> Result<RunPlan, Error> {
    let last = |n: &str| last(opts, n);
    let has = |n: &str| has(opts, n);
    let scale: u32 = number("scale", last("scale").unwrap_or("1"), "scaling factor")?;
    let partitions: u32 = match last("partitions") {
        Some(p) => p
            .parse()
            .map_err(|_| usage(format!("invalid number of partitions: \"{p}\"")))?,
        None => 0,
    };
    let partition_method = match last("partition-method") {
        Some(m) if m != "range" && m != "hash" => {
            return Err(usage(format!(
                "invalid partition method, expecting \"range\" or \"hash\", got: \"{m}\""
            )));
        }
        Some(_) if partitions == 0 => {
            return Err(usage(
                "--partition-method requires greater than zero --partitions",
            ));
        }
        Some(m) => m,
        None => "range",
    };
    let init_steps = last("init-steps").unwrap_or("dtgvp");
    crate::workload::pgbench::init::check_steps(init_steps).map_err(usage)?;
    let mut args = RunArgs::default();
    args.db.target = target.to_string();
    args.scale = scale;
    args.force = true;
    let mut plan = RunPlan::from_args("pgbench_tpcb_like", &args).map_err(pgbench_words)?;
    plan.workload_opts.families.pgbench.tables = TableOptions {
        fillfactor: match last("fillfactor") {
            Some(f) => number("fillfactor", f, "fillfactor")?,
            None => 100,
        },
        init_steps: init_steps.to_string(),
        unlogged_tables: has("unlogged-tables"),
        foreign_keys: has("foreign-keys"),
        partitions,
        partition_method: partition_method.to_string(),
        tablespace: last("tablespace").map(String::from),
        index_tablespace: last("index-tablespace").map(String::from),
    };
    Ok(plan.styled(Style::As(Box::leak(Box::new(style_for_init())))))
}

/// A run's options judged by dbsweep's one validator (`RunPlan::from_args`), its complaint in
/// pgbench's form (exit 1).
pub(super) fn pgbench_words(e: Error) -> Error {
    usage(e.to_string())
}

fn style_for_init() -> PgbenchStyle {
    PgbenchStyle {
        transaction_type: "",
        scale: 1,
        query_mode: "simple",
        clients: 1,
        threads: 1,
        per_client: None,
        duration: 0,
        stddev: false,
        per_command: false,
        max_tries: 1,
        latency_limit: None,
        connect: false,
        failures_detailed: false,
        paced: false,
        progress_timestamp: false,
        partitions: None,
        scripts: &[],
    }
}

/// pgbench's MAX_ARGS less the statement itself.
const MAX_PARAMS: usize = 255;

/// The scripts of `-b`, `-f`, `-S`, `-N`: the dbsweep workload and its `--script` options.
/// What the summary prints of each script: its description, weight and commands' lines.
/// Under `-M extended` and `prepared` a statement takes at most 255 variables, as pgbench
/// judges it when it reads the script.
fn shapes(specs: &[(String, &'static str)], mode: &str) -> Result<&'static [ScriptShape], Error> {
    let mut out = Vec::new();
    for (spec, desc) in specs {
        let (s, weight) = crate::workload::pgbench::read_script(spec).map_err(|e| match e {
            Error::Option { why, .. } => usage(why),
            e => usage(e.to_string()),
        })?;
        for c in &s.commands {
            if let crate::workload::pgbench::script::Command::Sql {
                vars,
                source,
                semicolon,
                ..
            } = c
                && mode != "simple"
                && vars.len() > MAX_PARAMS
            {
                return Err(usage(format!(
                    "statement has too many arguments (maximum is {MAX_PARAMS}): {source}{}",
                    if *semicolon { ";" } else { "" }
                )));
            }
        }
        let lines: Vec<&'static str> = s
            .sources
            .into_iter()
            .map(|l| &*Box::leak(l.into_boxed_str()))
            .collect();
        out.push(ScriptShape {
            desc,
            weight,
            lines: Box::leak(lines.into_boxed_slice()),
        });
    }
    if !out.is_empty() && out.iter().all(|s| s.weight == 0) {
        return Err(usage("total script weight must not be zero"));
    }
    Ok(Box::leak(out.into_boxed_slice()))
}

type Scripts = (
    String,
    Vec<String>,
    &'static str,
    Vec<(String, &'static str)>,
);

fn scripts(opts: &[(&str, String)]) -> Result<Scripts, Error> {
    let mut specs: Vec<(String, &'static str)> = Vec::new();
    for (k, v) in opts {
        match *k {
            "builtin" => {
                let (name, weight) = v
                    .rsplit_once('@')
                    .map_or((v.as_str(), None), |(n, w)| (n, Some(w)));
                let (full, desc, _) = script::builtin(name).map_err(usage)?;
                let w = weight.map_or(String::new(), |w| format!("@{w}"));
                specs.push((format!("builtin:{full}{w}"), desc));
            }
            "select-only" => specs.push(("builtin:select-only".into(), script::BUILTINS[2].1)),
            "skip-some-updates" => {
                specs.push(("builtin:simple-update".into(), script::BUILTINS[1].1))
            }
            "file" => {
                let path = v.rsplit_once('@').map_or(v.as_str(), |(p, _)| p);
                specs.push((v.clone(), Box::leak(path.to_string().into_boxed_str())));
            }
            _ => {}
        }
    }
    if specs.len() > 128 {
        return Err(usage("at most 128 SQL scripts are allowed"));
    }
    if specs.is_empty() {
        specs.push(("builtin:tpcb-like".into(), script::BUILTINS[0].1));
    }
    if let [(spec, desc)] = specs.as_slice()
        && let Some(b) = spec.strip_prefix("builtin:").filter(|b| !b.contains('@'))
    {
        return Ok((
            format!("pgbench_{}", b.replace('-', "_")),
            Vec::new(),
            desc,
            specs.clone(),
        ));
    }
    let desc = if specs.len() == 1 {
        specs[0].1
    } else {
        "multiple scripts"
    };
    Ok((
        "pgbench".into(),
        specs.iter().map(|(s, _)| s.clone()).collect(),
        desc,
        specs,
    ))
}

fn run(opts: &[(&str, String)], target: &str, at: &[String; 3]) -> Result<Pgbench, Error> {
    let has = |n: &str| has(opts, n);
    let last = |n: &str| last(opts, n);
    let Counts {
        clients,
        threads,
        per_client,
        duration,
    } = counts(opts)?;
    let (workload, script_specs, transaction_type, all) = scripts(opts)?;
    let mode = match last("protocol").unwrap_or("simple") {
        "simple" => "simple",
        "extended" => "extended",
        "prepared" => "prepared",
        m => return Err(usage(format!("invalid query mode (-M): \"{m}\""))),
    };
    let shapes = shapes(&all, mode)?;
    // pgbench reads the scale from the tables whenever a builtin script runs, also beside -f.
    let uses_builtin = all.iter().any(|(spec, _)| spec.starts_with("builtin:"));
    let max_tries: u32 = number(
        "max-tries",
        last("max-tries").unwrap_or("1"),
        "number of maximum tries",
    )?;
    let latency_limit = latency_limit(opts)?;
    let log_args = log_options(opts, threads, duration)?;
    if max_tries == 0 && latency_limit.is_none() && last("time").is_none() {
        return Err(usage(
            "an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)",
        ));
    }
    let vacuum = if has("no-vacuum") {
        Vacuum::None
    } else if has("vacuum-all") {
        Vacuum::All
    } else {
        Vacuum::Default
    };
    let given_scale = last("scale")
        .map(|s| number::<i64>("scale", s, "scaling factor"))
        .transpose()?;
    let mut args = RunArgs::default();
    args.db.target = target.to_string();
    args.threads = Some(clients);
    args.ps_mode = if mode == "simple" {
        PsMode::Disable
    } else {
        PsMode::Auto
    };
    // Progress lines only under -P, as pgbench.
    args.report_interval = match last("progress") {
        Some(p) => number("progress", p, "thread progress report")?,
        None => 0.0,
    };
    args.metrics_listen = last("metrics-listen").map(str::to_string);
    args.scale = given_scale.map_or(1, |s| u32::try_from(s).unwrap_or(u32::MAX));
    args.output = results_path();
    args.max_tries = max_tries;
    if has("connect") {
        args.reconnect = 1;
    }
    match per_client {
        Some(t) => {
            args.events_per_client = t;
            args.time = 0.0;
        }
        None => args.time = duration as f64,
    }
    args.families.pgbench.scripts = script_specs;
    for (k, v) in opts {
        match *k {
            "define" => args.families.pgbench.defines.push(v.clone()),
            "rate" => args.rate = number("rate", v, "rate limit")?,
            "random-seed" => {
                args.rand_seed = match v.as_str() {
                    "time" => std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(1, |d| d.as_micros() as u64),
                    "rand" => rand::random(),
                    v => seed_value(v)?,
                };
                // pgbench's info line, said as the option is read.
                eprintln!("pgbench: setting random seed to {}", args.rand_seed);
            }
            _ => {}
        }
    }
    if let Some(ms) = latency_limit {
        args.latency_limit = ms;
    }
    // Judged now, as a whole, before pgbench's setup connects.
    RunPlan::from_args(&workload, &args).map_err(pgbench_words)?;
    let txn_log = log_args.map(|log| TxnLogOpts {
        paced: args.rate > 0.0,
        retries: max_tries != 1,
        failures_detailed: has("failures-detailed"),
        ..log
    });
    Ok(Pgbench::Run(Box::new(PgbenchRun {
        workload,
        args,
        builtin: uses_builtin,
        vacuum,
        given_scale,
        verbose_errors: has("verbose-errors"),
        extended: mode == "extended",
        debug_header: has("debug").then(|| {
            let [host, port, db] = at;
            let count = match per_client {
                Some(t) => format!("nxacts: {t}"),
                None => format!("duration: {duration}"),
            };
            format!("pghost: {host} pgport: {port} nclients: {clients} {count} dbName: {db}")
        }),
        debug: has("debug").then_some(match mode {
            "simple" => crate::workload::pgbench::Debug::Simple,
            "extended" => crate::workload::pgbench::Debug::Extended,
            _ => crate::workload::pgbench::Debug::Prepared,
        }),
        txn_log,
        style: PgbenchStyle {
            transaction_type,
            scale: 1,
            query_mode: mode,
            clients,
            threads,
            per_client,
            duration,
            stddev: has("progress") || has("rate"),
            per_command: has("report-per-command"),
            max_tries,
            latency_limit,
            connect: has("connect"),
            failures_detailed: has("failures-detailed"),
            paced: has("rate"),
            progress_timestamp: has("progress-timestamp"),
            partitions: None,
            scripts: shapes,
        },
    })))
}

/// How many clients and threads (`-c`, `-j`), and how long: `-t`'s transactions per client or
/// `-T`'s seconds.
struct Counts {
    clients: u32,
    threads: u32,
    per_client: Option<u64>,
    duration: u64,
}

fn counts(opts: &[(&str, String)]) -> Result<Counts, Error> {
    let last = |n: &str| last(opts, n);
    let clients: u32 = number("client", last("client").unwrap_or("1"), "number of clients")?;
    let threads: u32 = number("jobs", last("jobs").unwrap_or("1"), "number of threads")?;
    if clients == 0 || threads == 0 {
        return Err(usage(
            "invalid number of clients or threads: must be at least 1",
        ));
    }
    // As pgbench: no more threads than clients, lowered without a word.
    let threads = threads.min(clients);
    let (per_client, duration) = match (last("transactions"), last("time")) {
        (Some(_), Some(_)) => {
            return Err(usage(
                "specify either a number of transactions (-t) or a duration (-T), not both",
            ));
        }
        (Some(t), None) => (
            Some(number::<u64>("transactions", t, "number of transactions")?),
            0,
        ),
        (None, Some(t)) => (None, number::<u64>("time", t, "duration")?),
        (None, None) => (Some(10), 0),
    };
    Ok(Counts {
        clients,
        threads,
        per_client,
        duration,
    })
}

/// `-L`'s milliseconds, as pgbench judges them.
fn latency_limit(opts: &[(&str, String)]) -> Result<Option<f64>, Error> {
    Ok(match last(opts, "latency-limit") {
        Some(l) => {
            let ms: f64 = l
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v > 0.0)
                .ok_or_else(|| usage(format!("invalid latency limit: \"{l}\"")))?;
            Some(ms)
        }
        None => None,
    })
}

/// `-l` and its options as the run's transaction log options, checked as pgbench checks them.
fn log_options(
    opts: &[(&str, String)],
    jobs: u32,
    duration: u64,
) -> Result<Option<TxnLogOpts>, Error> {
    let last = |n: &str| last(opts, n);
    let log = has(opts, "log");
    for (option, what) in [
        ("sampling-rate", "log sampling (--sampling-rate)"),
        ("aggregate-interval", "log aggregation"),
        ("log-prefix", "log file prefix (--log-prefix)"),
    ] {
        if !log && has(opts, option) {
            return Err(usage(format!(
                "{what} is allowed only when logging transactions (-l)"
            )));
        }
    }
    if !log {
        return Ok(None);
    }
    let mut out = TxnLogOpts {
        prefix: last("log-prefix").unwrap_or("pgbench_log").to_string(),
        jobs: jobs.max(1),
        sampling: 1.0,
        aggregate: 0,
        // The run's, set by the caller.
        paced: false,
        retries: false,
        failures_detailed: false,
    };
    if let Some(r) = last("sampling-rate") {
        let rate: f64 = r
            .parse()
            .ok()
            .filter(|v: &f64| *v > 0.0 && *v <= 1.0)
            .ok_or_else(|| usage(format!("invalid sampling rate: \"{r}\"")))?;
        out.sampling = rate;
    }
    if let Some(a) = last("aggregate-interval") {
        let secs: u32 = a.parse().ok().filter(|v: &u32| *v > 0).ok_or_else(|| {
            usage(format!(
                "invalid number of seconds for aggregation: \"{a}\""
            ))
        })?;
        if has(opts, "sampling-rate") {
            return Err(usage(
                "log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time",
            ));
        }
        if duration > 0 && u64::from(secs) > duration {
            return Err(usage(format!(
                "number of seconds for aggregation ({secs}) must not be higher than test duration ({duration})"
            )));
        }
        if duration > 0 && !duration.is_multiple_of(u64::from(secs)) {
            return Err(usage(format!(
                "duration ({duration}) must be a multiple of aggregation interval ({secs})"
            )));
        }
        out.aggregate = secs;
    }
    Ok(Some(out))
}

/// Where the results file goes: only where asked, into the directory `DBSWEEP_RESULTS_DIR`
/// names, named by the time and the process (two runs in one second keep a file each). Without
/// it nothing is written: pgbench writes no file of its own, and drivers check the working
/// directory and stderr.
fn results_path() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os(crate::results::RESULTS_DIR_ENV).filter(|d| !d.is_empty())?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Some(
        std::path::Path::new(&dir)
            .join(format!("dbsweep-pgbench-{now}-{}.json", std::process::id())),
    )
}
