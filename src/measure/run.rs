//! Running a workload on the opened database: the header, the measured run, the printed
//! summary and the results file written.

use crate::output::{Printer, Said, Warning};
use crate::{output, workload};

use super::open::{Db, load, load_line};
use super::step::measure;
use crate::error::{Error, Outcome};
use crate::interrupt::INTERRUPT;
use crate::metrics::live::{self, Endpoint, StepLabels};
use crate::plan::RunPlan;
use crate::results::ResultsFile;
use crate::runner::Report;
use crate::workload::Workload;

pub(crate) fn run_workload(plan: &RunPlan) -> Result<Outcome, Error> {
    // Everything that can be wrong with the input fails here, before any table is touched:
    // first the live metrics' port.
    let endpoint = listen(plan)?;
    let plan = &with_live(plan, endpoint.as_ref());
    let out = plan
        .output
        .as_deref()
        .map(ResultsFile::create_results)
        .transpose()?;
    let workload = workload::build(&plan.workload, &plan.workload_opts)?;
    let db = Db::open(plan, plan.prepare)?;
    run_opened(plan, db, workload.as_ref(), out, &mut OwnFormat)
}

/// The live metrics' endpoint of `--metrics-listen`, listening.
fn listen(plan: &RunPlan) -> Result<Option<Endpoint>, Error> {
    let Some(addr) = plan.metrics_listen else {
        return Ok(None);
    };
    let e = live::listen(&addr.to_string(), "--metrics-listen")?;
    // Said on stderr in every voice: the option is dbsweep's own, so a drop-in's driver that
    // gives it reads the port it took (`--metrics-listen=0`) here, and nothing else moves.
    let line = format!("live metrics at http://{}/metrics", e.addr);
    match plan.style {
        crate::output::Style::Own => eprintln!("{line}"),
        crate::output::Style::As(_) => eprintln!("dbsweep: {line}"),
    }
    Ok(Some(e))
}

/// The plan whose runner adds its intervals to `endpoint`'s figures, as the run's step: its
/// workload, the kind of database (never its URL), its clients.
fn with_live(plan: &RunPlan, endpoint: Option<&Endpoint>) -> RunPlan {
    let mut plan = plan.clone();
    if let Some(e) = endpoint {
        e.live.begin(StepLabels {
            step: plan.workload.clone(),
            target: crate::db::dialect_of(&plan.target)
                .map_or("unknown", |d| d.name())
                .to_string(),
            configuration: String::new(),
            clients: plan.runner.threads,
        });
        plan.runner.live = Some(e.live.clone());
    }
    plan
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
    let endpoint = listen(plan)?;
    let plan = &with_live(plan, endpoint.as_ref());
    let out = plan
        .output
        .as_deref()
        .map(ResultsFile::create_results)
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
        plan.style.say(Said::Remark(&load_line(&l)));
        workload.verify(db.target.as_ref())?;
        Some(l)
    } else {
        None
    };
    if let Some(voice) = plan.style.voice() {
        let r = &plan.runner;
        voice.run_header(&output::RunHeader {
            threads: r.threads,
            rate: r.rate,
            report_interval: r.report_interval,
            rand_seed: r.rand_seed,
        });
    }
    let results = measure(
        plan,
        &db,
        workload,
        prepared,
        &mut |report| match report {
            Report::Interval(iv) => {
                if !printer.interval(iv) {
                    plan.style.interval(iv, printer.sql_used());
                }
            }
            Report::Checkpoint(cp) => {
                if !printer.checkpoint(cp) {
                    plan.style.checkpoint(cp, printer.sql_used());
                }
            }
        },
        &|s| plan.style.say(s),
        &INTERRUPT,
    )?;
    if !printer.summary(&results) {
        plan.style.summary(&results, printer.sql_used());
    }
    let mut results = results;
    if let Some(p) = results.profile.as_mut() {
        match &out {
            Some(out) => {
                let title = format!("{} on {}", results.workload, results.target.kind);
                if let Err(e) = p.save_beside(out.path(), &title) {
                    plan.style
                        .say(Said::Warning(Warning::Other, &format!("--profile: {e}")));
                }
            }
            None => plan.style.say(Said::Warning(
                Warning::Other,
                "--profile without --output: the folded stacks and the flame graph are not saved",
            )),
        }
    }
    if let Some(out) = out {
        let path = out.path().display().to_string();
        out.commit(&results)?;
        match plan.style.voice() {
            Some(voice) => voice.results_written(&path),
            None => plan
                .style
                .say(Said::Remark(&format!("results written to {path}"))),
        }
    }
    Ok(match (&results.error, results.interrupted) {
        // The personality's last word when clients aborted alone (pgbench's): its figures
        // above are of those left.
        (Some(_), _)
            if let Some(line) = plan.style.voice().and_then(|v| v.aborted())
                && results.aborted_clients > 0 =>
        {
            eprintln!("{line}");
            Outcome::Failed
        }
        (Some(e), _) => {
            eprintln!("error: the run stopped: {e}");
            Outcome::Failed
        }
        (None, true) => Outcome::Interrupted,
        (None, false) => Outcome::Done,
    })
}
