//! Each subcommand's entry: the command line's choice turned into the work it names.

use crate::cli::{Cli, Command, Opts, TpccAction};
use crate::error::{Error, Outcome};
use crate::measure::{Db, run_workload};
use crate::output::Style;
use crate::plan::RunPlan;
use crate::server::{self, ServerKind};
use crate::{db, interrupt, workload};

/// Runs one parsed command line.
pub fn run(cli: Cli) -> Result<Outcome, Error> {
    run_styled(cli, Style::Own)
}

/// Runs one parsed command line with its text in `style`.
fn run_styled(mut cli: Cli, style: Style) -> Result<Outcome, Error> {
    interrupt::install_ctrl_c(server::kill_all);
    let timeouts = db::Timeouts::from_seconds(cli.connect_timeout, cli.query_timeout)?;
    hand_down(&mut cli.command, timeouts);
    target_from_stdin(&mut cli.command)?;
    match cli.command {
        Command::Servers(o) => match o.available {
            Some(kind) => available(kind),
            None => servers(),
        },
        Command::Workloads => workloads(),
        Command::Limits(o) => super::limits::limits(&o),
        Command::Completions { shell } => completions(shell),
        Command::Man { markdown: false } => man(),
        Command::Man { markdown: true } => super::reference::markdown(),
        Command::Prepare(o) => super::tables::prepare(&o, style),
        Command::Cleanup(o) => super::tables::cleanup(&o, style),
        Command::Check(o) => check(&o),
        Command::Run(o) => run_workload(&RunPlan::from_opts(&o)?.styled(style)),
        Command::Sysbench(a) => super::personalities::sysbench(&a.args),
        Command::Pgbench(a) => super::personalities::pgbench(&a.args),
        Command::Tpcc(t) => match t.action {
            TpccAction::Run(a) => run_workload(&RunPlan::from_args("tpcc", &a)?),
            TpccAction::Prepare(o) => super::tpcc::prepare(&o),
            TpccAction::Check(o) => super::tpcc::check(&o),
            TpccAction::Cleanup(o) => super::tpcc::cleanup(&o),
        },
        Command::Report(o) => super::results::report(&o),
        Command::Compare(o) => super::results::compare(&o),
        Command::Merge(o) => super::results::merge(&o),
        Command::Hdr(o) => super::results::hdr(&o),
        Command::Sweep(o) => crate::sweep::run(&o),
        Command::Capacity(o) => crate::measure::capacity(&o, style),
    }
}

/// Gives the command's connections the command line's bounds.
fn hand_down(command: &mut Command, timeouts: db::Timeouts) {
    match command {
        Command::Prepare(o) | Command::Cleanup(o) | Command::Check(o) | Command::Run(o) => {
            o.args.db.timeouts = timeouts;
        }
        Command::Capacity(o) => o.args.db.timeouts = timeouts,
        Command::Sweep(o) => o.timeouts = timeouts,
        Command::Limits(o) => o.timeouts = timeouts,
        Command::Tpcc(t) => match &mut t.action {
            TpccAction::Run(a) => a.db.timeouts = timeouts,
            TpccAction::Prepare(o) | TpccAction::Check(o) | TpccAction::Cleanup(o) => {
                o.db.timeouts = timeouts;
            }
        },
        // No connection of theirs, or their own command lines (the personalities').
        _ => {}
    }
}

/// `dbsweep completions SHELL`: the shell's completion script, made from the command line's
/// own definitions (so that it cannot drift from them).
fn completions(shell: clap_complete::Shell) -> Result<Outcome, Error> {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    clap_complete::generate(shell, &mut cmd, "dbsweep", &mut std::io::stdout());
    Ok(Outcome::Done)
}

/// `dbsweep man`: the manual page, made from the command line's definitions: the main page
/// and each subcommand's section.
fn man() -> Result<Outcome, Error> {
    let cmd = <Cli as clap::CommandFactory>::command();
    let mut out = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut out)
        .map_err(|e| Error::Run(format!("writing the manual page: {e}")))?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("dbsweep-{}", sub.get_name());
        clap_mangen::Man::new(sub.clone().name(name))
            .render(&mut out)
            .map_err(|e| Error::Run(format!("writing the manual page: {e}")))?;
    }
    std::io::Write::write_all(&mut std::io::stdout(), &out)
        .map_err(|e| Error::Run(format!("writing the manual page: {e}")))?;
    Ok(Outcome::Done)
}

/// `--target-stdin` (a sweep's remote client host): the target URL is read from standard
/// input, off the command line.
fn target_from_stdin(command: &mut Command) -> Result<(), Error> {
    let db = match command {
        Command::Run(o) => &mut o.args.db,
        Command::Capacity(o) => &mut o.args.db,
        Command::Tpcc(t) => match &mut t.action {
            TpccAction::Run(a) => &mut a.db,
            _ => return Ok(()),
        },
        _ => return Ok(()),
    };
    if db.target_stdin {
        db.target = interrupt::target_from_stdin()?;
    }
    Ok(())
}

fn servers() -> Result<Outcome, Error> {
    let defaults = [ServerKind::Postgres, ServerKind::Mariadb, ServerKind::Mysql].map(|k| {
        let build = server::builds::resolve(k, None, None).ok().flatten();
        let line = match build {
            Some(b) => Some(format!("{} ({})", b.line, b.basedir.display())),
            None => server::binary_version(k).ok(),
        };
        (k, line)
    });
    print!(
        "{}",
        server::builds::listing(&server::builds::find_all(), &defaults)
    );
    Ok(Outcome::Done)
}

/// `dbsweep servers --available KIND`: what can be fetched, and what is here already.
fn available(kind: ServerKind) -> Result<Outcome, Error> {
    let releases = server::fetch::available(kind).map_err(Error::Run)?;
    let here = server::builds::find_all();
    for r in &releases {
        let at = here
            .iter()
            .find(|b| b.kind == kind && b.version == r.version)
            .map_or("fetched on demand".to_string(), |b| {
                format!("here: {}", b.basedir.display())
            });
        println!(
            "{}:{:<8} {}  {at}",
            server::builds::kind_name(kind),
            r.version,
            r.origin()
        );
    }
    Ok(Outcome::Done)
}

fn workloads() -> Result<Outcome, Error> {
    for (name, what) in workload::workloads() {
        println!("{name:<24}{what}");
    }
    Ok(Outcome::Done)
}

/// The workload's own consistency checks on its loaded (or run) tables.
fn check(o: &Opts) -> Result<Outcome, Error> {
    let plan = RunPlan::from_opts(o)?;
    if plan.workload == "tpcc" {
        return Err(Error::Usage(
            "check tpcc: TPC-C's checks need its warehouses; run `dbsweep tpcc check --warehouses N`".into(),
        ));
    }
    let workload = workload::build(&plan.workload, &plan.workload_opts)?;
    if !workload.checks() {
        return Err(Error::Usage(format!(
            "check {}: the workload has no consistency check (linkbench has; TPC-C's are \
             `dbsweep tpcc check`)",
            plan.workload
        )));
    }
    let db = Db::open(&plan, false)?;
    let mut conn = db
        .target
        .connect()
        .map_err(|e| Error::db(db.target.display_url(), e))?;
    workload.check_ready(conn.as_mut(), &plan.workload_opts, &db.target.display_url())?;
    drop(conn);
    workload.verify(db.target.as_ref())?;
    println!(
        "{}: the {} tables of {} are consistent",
        plan.workload,
        plan.workload,
        db.target.display_url()
    );
    Ok(Outcome::Done)
}
