//! A script's commands: help, prepare, cleanup, run and those it defines itself, and the plan
//! a `run` gets from the script's options.

use std::sync::Arc;

use clap::Parser;

use super::api::new_state;
use super::options::declared_options;
use super::options::print_help;
use super::options::split_args;
use super::options::split_legacy;
use super::state::Ctx;
use super::state::MYSQL_IGNORE_DEFAULT;
use super::state::OptValue;
use super::state::lua_fail;
use crate::error::Error;
use crate::workload::rand::{RandOptions, RandType};
use crate::{error::Outcome, plan::RunPlan};

/// `dbsweep COMMAND SCRIPT [options]`.
pub fn run_command(command: &str, script: &str, args: &[String]) -> Result<Outcome, Error> {
    // Ctrl-C stops a script's run as any other: summary, results file, managed server gone.
    crate::interrupt::install_ctrl_c(crate::server::kill_all);
    match script_plan(command, script, args)? {
        Some((ctx, plan)) => super::workload::run(ctx, &plan, command),
        None => Ok(Outcome::Done),
    }
}

/// The run of a script as a sweep step: `argv` is the step's `dbsweep run SCRIPT [options]`
/// command line; the script's states connect to `url`.
/// Without a URL the script and its options are only checked (a plan's validation).
pub fn step_workload(
    argv: &[String],
    url: Option<&str>,
) -> Result<(RunPlan, Box<dyn crate::workload::Workload>), Error> {
    let [_, _, script, args @ ..] = argv else {
        return Err(Error::Usage("a script step names its script".into()));
    };
    let (mut ctx, mut plan) = script_plan("run", script, args)?.expect("not help");
    if let Some(url) = url {
        plan.target = url.to_string();
        let target = crate::db::open(
            url,
            crate::db::OpenOptions {
                create: false,
                text_statements: plan.workload_opts.ps_mode == crate::workload::PsMode::Disable,
                pipeline: false,
            },
        )?;
        ctx.target = Some(Arc::from(target));
    }
    Ok((plan, super::workload::boxed(Arc::new(ctx))))
}

/// A script's context and run plan from its command line; None for `help` (printed here).
fn script_plan(
    command: &str,
    script: &str,
    args: &[String],
) -> Result<Option<(Ctx, RunPlan)>, Error> {
    let path = super::scripts::resolve(script)?;
    let source = crate::input::read_text(&path, crate::input::SCRIPT)
        .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
    let mut ctx = Ctx {
        path: path.clone(),
        source,
        command: command.to_string(),
        argv: std::iter::once(script.to_string())
            .chain(args.iter().cloned())
            .collect(),
        opts: Vec::new(),
        target: None,
        rand: RandOptions {
            rand_type: RandType::Uniform,
            rand_seed: 1,
            rand_zipfian_exp: 0.8,
            rand_pareto_h: 0.2,
            rand_spec_pct: 1.0,
            rand_spec_res: 75.0,
        },
        threads: 1,
        mysql_ignore_errors: MYSQL_IGNORE_DEFAULT.map(String::from).to_vec(),
        legacy: Vec::new(),
    };
    // The top level declares the options; it runs once before they are known.
    let (main, _) = new_state(&Arc::new(ctx.clone()), None).map_err(|e| lua_fail(&e))?;
    let declared = declared_options(&main).map_err(|e| lua_fail(&e))?;
    if command == "help" {
        print_help(&main, script, &declared)?;
        return Ok(None);
    }
    let (script_opts, general) = split_args(args, &declared)?;
    let (mut general, ignore) = crate::cli::sysbench::sysbench_connection(general)?;
    if let Some(list) = ignore {
        ctx.mysql_ignore_errors = list;
    }
    if declared.is_empty() {
        (ctx.legacy, general) = split_legacy(general);
    }
    let argv: Vec<String> = ["dbsweep", "run", script]
        .iter()
        .map(|s| s.to_string())
        .chain(general)
        .collect();
    let cli = crate::cli::Cli::try_parse_from(crate::cli::normalise_args(argv))
        .map_err(|e| crate::cli::one_line(&e))?;
    crate::db::socket::set_timeouts(cli.connect_timeout, cli.query_timeout)?;
    let crate::cli::Command::Run(o) = cli.command else {
        unreachable!("parsed as run");
    };
    let plan = RunPlan::from_args(&path.display().to_string(), &o.args)?;
    // Defaults first, then the command line, then what dbsweep's own options say.
    let mut opts: Vec<(String, OptValue)> = declared
        .iter()
        .filter_map(|o| Some((o.key(), o.default.clone()?)))
        .collect();
    for (n, v) in script_opts {
        opts.retain(|(m, _)| *m != n);
        opts.push((n, v));
    }
    let r = &plan.runner;
    for (n, v) in [
        ("threads", OptValue::Num(f64::from(r.threads))),
        ("time", OptValue::Num(r.time)),
        ("events", OptValue::Num(r.events as f64)),
        ("rate", OptValue::Num(r.rate)),
        ("report_interval", OptValue::Num(r.report_interval)),
        ("warmup_time", OptValue::Num(r.warmup)),
        (
            "rand_type",
            OptValue::Str(format!("{:?}", plan.workload_opts.rand.rand_type).to_lowercase()),
        ),
        (
            "rand_seed",
            OptValue::Num(plan.workload_opts.rand.rand_seed as f64),
        ),
    ] {
        // What the run does, whatever a script option of the same name declares.
        opts.retain(|(m, _)| m != n);
        opts.push((n.to_string(), v));
    }
    opts.push((
        "mysql_ignore_errors".into(),
        OptValue::List(ctx.mysql_ignore_errors.clone()),
    ));
    ctx.opts = opts;
    ctx.rand = plan.workload_opts.rand.clone();
    ctx.threads = r.threads;
    Ok(Some((ctx, plan)))
}
