//! dbsweep: OLTP database benchmarking. This file only dispatches the subcommands; each step of
//! the flow (plan -> db -> workload -> runner -> metrics -> results -> output) has its module,
//! `measure` measures one step, and no file imports one that imports it back (the README's
//! Layout section lists the layers).

pub mod cli;
pub mod db;
pub mod dropin;
pub mod error;
pub mod input;
pub mod interrupt;
pub mod lua;
pub mod measure;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod server;
pub mod sweep;
pub mod workload;

pub use error::Outcome;
pub use interrupt::interrupted;

use std::path::{Path, PathBuf};

use cli::{Cli, Command};
use error::Error;
use interrupt::INTERRUPT;
use measure::{Db, load, load_line, run_workload};
use plan::RunPlan;
use results::{Results, ResultsFile};
use server::ServerKind;
use workload::WORKLOADS;

/// Runs one parsed command line.
pub fn run(mut cli: Cli) -> Result<Outcome, Error> {
    interrupt::install_ctrl_c(server::kill_all);
    db::socket::set_timeouts(cli.connect_timeout, cli.query_timeout)?;
    let db_args = match &mut cli.command {
        Command::Run(o) => Some(&mut o.args.db),
        Command::Tpcc(t) => match &mut t.action {
            cli::TpccAction::Run(a) => Some(&mut a.db),
            _ => None,
        },
        _ => None,
    };
    if let Some(db) = db_args.filter(|d| d.target_stdin) {
        db.target = interrupt::target_from_stdin()?;
    }
    match cli.command {
        Command::Servers => {
            let defaults =
                [ServerKind::Postgres, ServerKind::Mariadb, ServerKind::Mysql].map(|k| {
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
        Command::Workloads => {
            for (name, what) in WORKLOADS {
                println!("{name:<24}{what}");
            }
            Ok(Outcome::Done)
        }
        Command::Prepare(o) => {
            let plan = RunPlan::from_opts(&o)?;
            let workload = workload::build(&plan.workload, &plan.workload_opts)?;
            let db = Db::open(&plan, true)?;
            let load = load(&plan, db.target.as_ref(), workload.as_ref())?;
            if output::sysbench_style().is_none() {
                println!("{}", load_line(&load));
            }
            workload.verify(db.target.as_ref())?;
            Ok(Outcome::Done)
        }
        Command::Cleanup(o) => {
            let plan = RunPlan::from_opts(&o)?;
            let workload = workload::build(&plan.workload, &plan.workload_opts)?;
            let db = Db::open(&plan, false)?;
            let dropped = workload.cleanup(db.target.as_ref())?;
            if output::sysbench_style().is_none() {
                println!(
                    "Dropped {dropped} table(s) from {}",
                    db.target.display_url()
                );
            }
            Ok(Outcome::Done)
        }
        Command::Run(o) => run_workload(&RunPlan::from_opts(&o)?),
        Command::Sysbench(a) => dropin::main(&a.args),
        Command::Tpcc(t) => {
            use cli::TpccAction;
            let (action, o) = match t.action {
                TpccAction::Run(a) => return run_workload(&RunPlan::from_args("tpcc", &a)?),
                TpccAction::Prepare(o) => ("prepare", o),
                TpccAction::Check(o) => ("check", o),
                TpccAction::Cleanup(o) => ("cleanup", o),
            };
            let args = workload::tpcc::TpccArgs {
                warehouses: o.warehouses,
                server: plan::server_spec(&o.db)?,
                target: o.db.target,
                threads: o.threads.max(1),
                force: o.force,
                rand_seed: o.rand_seed,
                after_run: o.after_run,
            };
            let ok = match action {
                "prepare" => workload::tpcc::prepare(&args, &INTERRUPT)?,
                "check" => workload::tpcc::check(&args)?,
                _ => {
                    workload::tpcc::cleanup(&args)?;
                    true
                }
            };
            Ok(if ok { Outcome::Done } else { Outcome::Failed })
        }
        Command::Report(o) => {
            use std::io::IsTerminal;
            let color = match o.color.as_str() {
                "always" => true,
                "never" => false,
                _ => o.output.is_none() && std::io::stdout().is_terminal(),
            };
            if let Some(out) = &o.output {
                let inputs: Vec<&Path> = o.inputs.iter().map(PathBuf::as_path).collect();
                results::check_output_apart(out, &inputs)?;
            }
            let text = report::report(&o.inputs, o.base.as_deref(), o.format, color, o.full)?;
            report::emit(&text, o.output.as_deref())?;
            Ok(Outcome::Done)
        }
        Command::Compare(o) => {
            if let Some(p) = o.fail_on_regression
                && !(p.is_finite() && p >= 0.0)
            {
                return Err(Error::Usage(format!(
                    "--fail-on-regression {p}: give a percentage of 0 or more"
                )));
            }
            let (text, failed) = report::compare(
                &o.first,
                o.second.as_deref(),
                o.column_a.as_deref(),
                o.column_b.as_deref(),
                o.fail_on_regression,
            )?;
            print!("{text}");
            Ok(if failed {
                Outcome::Failed
            } else {
                Outcome::Done
            })
        }
        Command::Merge(o) => {
            let inputs: Vec<&Path> = o.inputs.iter().map(PathBuf::as_path).collect();
            results::check_output_apart(&o.output, &inputs)?;
            let files = o
                .inputs
                .iter()
                .map(|p| Ok((p.display().to_string(), Results::read(p)?)))
                .collect::<Result<Vec<_>, Error>>()?;
            let out = ResultsFile::create(&o.output)?;
            let (merged, warnings) = results::merge::merge(&files).map_err(Error::Usage)?;
            for w in warnings {
                eprintln!("warning: {w}");
            }
            out.commit(&merged)?;
            eprintln!(
                "merged {} parts: {} events, {:.2} tps, p99 {:.3} ms; written to {}",
                files.len(),
                merged.events,
                merged.tps,
                merged.latency_ms.p99,
                o.output.display()
            );
            Ok(Outcome::Done)
        }
        Command::Hdr(o) => {
            if let Some(out) = &o.output {
                results::check_output_apart(out, &[&o.input])?;
            }
            let log = report::hdr_log(&o.input)?;
            match &o.output {
                Some(path) => ResultsFile::create(path)?.commit_bytes(&log)?,
                None => {
                    use std::io::Write;
                    std::io::stdout()
                        .write_all(&log)
                        .map_err(|e| Error::Run(format!("writing to stdout: {e}")))?;
                }
            }
            Ok(Outcome::Done)
        }
        Command::Sweep(o) => {
            let clients = o.clients.map(|c| c.0);
            sweep::run(sweep::SweepArgs {
                plan: o.plan,
                output: o.output,
                resume: o.resume,
                dry_run: o.dry_run,
                fail_fast: o.fail_fast,
                force: o.force,
                keep: o.keep,
                overrides: plan::sweep::Overrides {
                    target: o.target,
                    server: o.server,
                    server_socket: o.server_socket,
                    clients,
                    tables: o.tables,
                    table_size: o.table_size,
                    read_time: o.read_time,
                    write_time: o.write_time,
                    warmup_time: o.warmup_time,
                    postwrite_pause: o.postwrite_pause,
                    repeat: o.repeat,
                },
            })
        }
    }
}
