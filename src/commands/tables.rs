//! The commands that load and drop a workload's tables: dbsweep's `prepare` and `cleanup`, and
//! the personalities' (sysbench's prepare and cleanup, pgbench's `-i`).

use crate::cli::Opts;
use crate::error::{Error, Outcome};
use crate::measure::{Db, load, load_line};
use crate::output::Style;
use crate::plan::RunPlan;
use crate::workload;

pub(super) fn prepare(o: &Opts, style: Style) -> Result<Outcome, Error> {
    prepare_plan(&RunPlan::from_opts(o)?.styled(style))
}

pub(super) fn prepare_plan(plan: &RunPlan) -> Result<Outcome, Error> {
    let workload = workload::build(&plan.workload, &plan.workload_opts)?;
    let db = Db::open(plan, true)?;
    let load = load(plan, db.target.as_ref(), workload.as_ref())?;
    match plan.style {
        Style::Own => println!("{}", load_line(&load)),
        Style::As(voice) => voice.loaded(&load),
    }
    workload.verify(db.target.as_ref())?;
    Ok(Outcome::Done)
}

pub(super) fn cleanup(o: &Opts, style: Style) -> Result<Outcome, Error> {
    let plan = RunPlan::from_opts(o)?.styled(style);
    let workload = workload::build(&plan.workload, &plan.workload_opts)?;
    let db = Db::open(&plan, false)?;
    let dropped = workload.cleanup(db.target.as_ref(), &plan.workload_opts)?;
    if plan.style.voice().is_none_or(|v| v.says_dropped()) {
        println!(
            "Dropped {dropped} table(s) from {}",
            db.target.display_url()
        );
    }
    Ok(Outcome::Done)
}
