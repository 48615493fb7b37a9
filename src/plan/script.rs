//! The plan of a sysbench Lua script's run: the script reads its own options from the command
//! line (`lua::ScriptLine`), the rest are read as `dbsweep run` reads its options, and the
//! script's context learns what the run does.

use std::sync::Arc;

use super::RunPlan;
use crate::error::Error;
use crate::lua::{Ctx, ScriptLine};
use crate::workload::{PsMode, Workload};

/// The script's context and the run's plan for `command` of `script`; None for `help`
/// (printed).
pub fn script_plan(
    command: &str,
    script: &str,
    args: &[String],
) -> Result<Option<(Ctx, RunPlan)>, Error> {
    let Some(line) = ScriptLine::read(command, script, args)? else {
        return Ok(None);
    };
    let path = line.path();
    let (words, _) = crate::cli::RunWords::read(line.general.clone())?;
    let mut args = words.args.clone();
    args.db.timeouts = words.timeouts()?;
    let plan = RunPlan::from_args(&path, &args)?;
    let ctx = line.settle(&plan.runner, &plan.workload_opts);
    Ok(Some((ctx, plan)))
}

/// A script step of a sweep: `script` run with the step's options as its command line's
/// words (a sysbench script reads its options from its command line); the script's states
/// connect to `url`. Without a URL the script and its options are only checked (a plan's
/// validation). `timeouts`: the sweep's connection bounds.
pub fn script_step(
    script: &str,
    args: &[String],
    url: Option<&str>,
    timeouts: crate::db::Timeouts,
) -> Result<(RunPlan, Box<dyn Workload>), Error> {
    let Some((ctx, mut plan)) = script_plan("run", script, args)? else {
        return Err(Error::Usage(format!("{script}: a step runs the script")));
    };
    let Some(url) = url else {
        return Ok((plan, crate::lua::boxed(Arc::new(ctx))));
    };
    plan.target = url.to_string();
    plan.workload_opts.timeouts = timeouts;
    let target = crate::db::open(
        url,
        crate::db::OpenOptions {
            create: false,
            text_statements: plan.workload_opts.ps_mode == PsMode::Disable,
            pipeline: false,
            timeouts,
        },
    )?;
    let ctx = crate::lua::on_target(ctx, Arc::from(target));
    Ok((plan, crate::lua::boxed(ctx)))
}
