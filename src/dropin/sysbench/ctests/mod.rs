//! sysbench's tests written in C (`cpu`, `memory`, `threads`, `mutex`, `fileio`), run by dbsweep
//! with sysbench 1.0.20's options, defaults, event counts and text: its threads each take
//! events until `--events` or `--time` (or the test) ends them, every event timed, and the same
//! closing statistics as a database test's.

mod cpu;
mod engine;
mod fileio;
mod memory;
mod mutex;
mod threads;
mod values;

use super::help::{self, Opt};
use super::output::SysbenchStyle;
use crate::error::{Error, Outcome};
pub(crate) use engine::Limits;
pub(crate) use values::Values;

/// Whether `name` is one of sysbench's tests written in C.
pub fn is_ctest(name: &str) -> bool {
    help::TESTS.iter().any(|(n, _)| *n == name)
}

/// A test's `prepare` or `cleanup`.
type Command = fn(&Values, &SysbenchStyle) -> Result<Outcome, Error>;

/// What a test's module offers: its options and its commands.
struct Family {
    options: &'static [Opt],
    /// The test's own `prepare` and `cleanup` (fileio's files); None where it has none.
    prepare: Option<Command>,
    cleanup: Option<Command>,
    run: fn(&Values, &Limits, &SysbenchStyle) -> Result<Outcome, Error>,
}

fn family(name: &str) -> Family {
    match name {
        "cpu" => Family {
            options: cpu::OPTIONS,
            prepare: None,
            cleanup: None,
            run: cpu::run,
        },
        "memory" => Family {
            options: memory::OPTIONS,
            prepare: None,
            cleanup: None,
            run: memory::run,
        },
        "threads" => Family {
            options: threads::OPTIONS,
            prepare: None,
            cleanup: None,
            run: threads::run,
        },
        "mutex" => Family {
            options: mutex::OPTIONS,
            prepare: None,
            cleanup: None,
            run: mutex::run,
        },
        _ => Family {
            options: fileio::OPTIONS,
            prepare: Some(fileio::prepare),
            cleanup: Some(fileio::cleanup),
            run: fileio::run,
        },
    }
}

/// Runs `command` of C test `test` with the general options `rest` left by the drop-in: as
/// sysbench does, an option neither sysbench's nor the test's is refused
/// (`invalid option: --x`), and a command the test lacks says so; both exit 1.
pub fn main(
    test: &str,
    command: &str,
    rest: &[String],
    style: &SysbenchStyle,
) -> Result<Outcome, Error> {
    let fam = family(test);
    let (values, limits) = match Values::read(fam.options, rest) {
        Ok(v) => v,
        Err(values::Refused(said)) => {
            eprintln!("{said}");
            return Ok(Outcome::Failed);
        }
    };
    let missing = |what: &str| {
        eprintln!("'{test}' test does not implement the '{what}' command.");
        Ok(Outcome::Failed)
    };
    match command {
        "help" => {
            println!("{test} options:\n{}", help::table(fam.options));
            Ok(Outcome::Done)
        }
        "prepare" => match fam.prepare {
            Some(f) => f(&values, style),
            None => missing("prepare"),
        },
        "cleanup" => match fam.cleanup {
            Some(f) => f(&values, style),
            None => missing("cleanup"),
        },
        "run" => {
            crate::interrupt::install_ctrl_c(|| {});
            (fam.run)(&values, &limits, style)
        }
        other => {
            eprintln!("Unknown command: {other}");
            Ok(Outcome::Failed)
        }
    }
}

/// sysbench's FATAL line (on stdout, where its log goes), and the failed outcome.
pub(crate) fn fatal(line: &str) -> Result<Outcome, Error> {
    println!("FATAL: {line}");
    Ok(Outcome::Failed)
}
