//! The plan of a sysbench Lua script's run: the script reads its own options from the command
//! line (`lua::ScriptLine`), the rest are read as `dbsweep run` reads its options, and the
//! script's context learns what the run does.

use std::sync::Arc;

use super::RunPlan;
use crate::cli::Timeouts;
use crate::error::Error;
use crate::lua::{Ctx, ScriptLine};
use crate::workload::{PsMode, Workload};

/// The script's context and the run's plan for `command` of `script`; None for `help`
/// (printed).
pub fn script_plan(
    command: &str,
    script: &str,
    args: &[String],
) -> Result<Option<(Ctx, RunPlan, Timeouts)>, Error> {
    let Some(line) = ScriptLine::read(command, script, args)? else {
        return Ok(None);
    };
    let path = line.path();
    let (words, _) = crate::cli::RunWords::read(line.general.clone())?;
    let plan = RunPlan::from_args(&path, &words.args)?;
    let timeouts = words.timeouts();
    let ctx = line.settle(&plan.runner, &plan.workload_opts);
    Ok(Some((ctx, plan, timeouts)))
}

/// A script step of a sweep: `script` run with the step's options as its command line's
/// words (a sysbench script reads its options from its command line); the script's states
/// connect to `url`. Without a URL the script and its options are only checked (a plan's
/// validation).
pub fn script_step(
    script: &str,
    args: &[String],
    url: Option<&str>,
) -> Result<(RunPlan, Box<dyn Workload>), Error> {
    let Some((ctx, mut plan, _)) = script_plan("run", script, args)? else {
        return Err(Error::Usage(format!("{script}: a step runs the script")));
    };
    let Some(url) = url else {
        return Ok((plan, crate::lua::boxed(Arc::new(ctx))));
    };
    plan.target = url.to_string();
    let target = crate::db::open(
        url,
        crate::db::OpenOptions {
            create: false,
            text_statements: plan.workload_opts.ps_mode == PsMode::Disable,
            pipeline: false,
        },
    )?;
    let ctx = crate::lua::on_target(ctx, Arc::from(target));
    Ok((plan, crate::lua::boxed(ctx)))
}
