//! The personalities: dbsweep acting as another tool (sysbench 1.0.20, pgbench 15), each
//! chosen by the name it is run under (a link named after the tool) or as `dbsweep TOOL`. Each
//! answers its own command line in its folder (`dropin/`), or hands back a dbsweep command,
//! run here; its exit codes are its own.

use super::tables::{cleanup, prepare, prepare_plan};
use crate::dropin::sysbench::{self, BuiltinCommand, Dropin};
use crate::error::{Error, Outcome};
use crate::measure::run_workload;
use crate::plan::RunPlan;
use crate::{interrupt, server};

/// A personality: its name, whether the binary's name is its, its answer to its words, and
/// its exit code for an outcome (its failures said its way).
struct Personality {
    name: &'static str,
    invoked_as: fn(&str) -> bool,
    answer: fn(&[String]) -> Result<Outcome, Error>,
    exit_code: fn(Result<Outcome, Error>) -> i32,
}

static PERSONALITIES: [Personality; 2] = [
    Personality {
        name: "sysbench",
        invoked_as: sysbench::invoked_as_sysbench,
        answer: sysbench,
        exit_code: sysbench::exit::exit_code,
    },
    Personality {
        name: "pgbench",
        invoked_as: crate::dropin::pgbench::invoked_as_pgbench,
        answer: pgbench,
        exit_code: crate::dropin::pgbench::exit::exit_code,
    },
];

/// Answers a command line (`raw`, the program's name first) that a personality's name asks
/// for, with its exit code; None for dbsweep's own.
pub fn as_personality(raw: &[String]) -> Option<i32> {
    let (p, words) = PERSONALITIES.iter().find_map(|p| match raw.first() {
        Some(argv0) if (p.invoked_as)(argv0) => Some((p, &raw[1..])),
        _ if raw.get(1).is_some_and(|a| a == p.name) => Some((p, &raw[2..])),
        _ => None,
    })?;
    Some((p.exit_code)((p.answer)(words)))
}

/// A sysbench command line (the words after `sysbench`): the drop-in answers it, or turns it
/// into a dbsweep command, run here.
pub(super) fn sysbench(args: &[String]) -> Result<Outcome, Error> {
    match sysbench::main(args)? {
        Dropin::Done(outcome) => Ok(outcome),
        Dropin::Run(b) => {
            interrupt::install_ctrl_c(server::kill_all);
            match b.command {
                BuiltinCommand::Prepare => prepare(&b.opts, b.style),
                BuiltinCommand::Run => run_workload(&RunPlan::from_opts(&b.opts)?.styled(b.style)),
                BuiltinCommand::Cleanup => cleanup(&b.opts, b.style),
            }
        }
    }
}

/// A pgbench command line (the words after `pgbench`): the pgbench personality answers it,
/// or turns it into a dbsweep command, run here.
pub(super) fn pgbench(args: &[String]) -> Result<Outcome, Error> {
    use crate::dropin::pgbench::Pgbench;
    interrupt::install_ctrl_c(server::kill_all);
    match crate::dropin::pgbench::main(args)? {
        Pgbench::Done(outcome) => Ok(outcome),
        Pgbench::Init(plan) => prepare_plan(&plan),
        Pgbench::Run(run) => run_workload(&run.ready()?),
    }
}
