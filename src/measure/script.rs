//! A sysbench Lua script's commands (`dbsweep run x.lua`, `sysbench x.lua prepare`): the plan
//! from the script's command line, its database opened as any run's, and its `run` measured
//! by the same path as a built-in workload's, with the script's report hooks printing.

use std::sync::Arc;

use super::open::Db;
use super::run::run_built;
use crate::db::{self, OpenOptions};
use crate::error::{Error, Outcome};
use crate::output::Style;
use crate::workload::PsMode;

/// `dbsweep COMMAND SCRIPT [options]`: help, prepare, cleanup, run, or a command the script
/// defines.
pub fn run_script(
    command: &str,
    script: &str,
    args: &[String],
    style: Style,
) -> Result<Outcome, Error> {
    // Ctrl-C stops a script's run as any other: summary, results file, managed server gone.
    crate::interrupt::install_ctrl_c(crate::server::kill_all);
    let Some((ctx, plan)) = crate::plan::script_plan(command, script, args)? else {
        return Ok(Outcome::Done);
    };
    let plan = plan.styled(style);
    let create = command != "cleanup";
    let db = Db::open(&plan, create)?;
    let url = db
        .server
        .as_ref()
        .map_or_else(|| plan.target.clone(), |s| s.url.clone());
    let target = db::open(
        &url,
        OpenOptions {
            create,
            text_statements: plan.workload_opts.ps_mode == PsMode::Disable,
            pipeline: false,
            timeouts: plan.workload_opts.timeouts,
        },
    )?;
    let ctx = crate::lua::on_target(ctx, Arc::from(target));
    match command {
        "run" => crate::lua::run(&ctx, |workload, hooks| {
            run_built(&plan, db, workload, hooks)
        }),
        other => {
            crate::lua::command(&ctx, other)?;
            Ok(Outcome::Done)
        }
    }
}
