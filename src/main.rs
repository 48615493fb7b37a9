//! The dbsweep binary: parse, run, map the outcome to an exit code (0 ok, 1 run failed,
//! 2 bad usage, 130 interrupted by Ctrl-C).

use clap::Parser;

fn main() {
    // Output piped into `head` and the like ends quietly, as other command-line tools do.
    // SAFETY: restoring the default action of SIGPIPE before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // Every SQLite connection of this process is dbsweep's own.
    dbsweep::db::sqlite::allow_own_file_table(true);
    let raw: Vec<String> = std::env::args().collect();
    // sysbench's command line and output through a link named `sysbench` (or `dbsweep
    // sysbench`, whose words clap must not normalise either).
    let as_sysbench = match raw.first() {
        Some(argv0) if dbsweep::dropin::sysbench::invoked_as_sysbench(argv0) => Some(&raw[1..]),
        _ if raw.get(1).is_some_and(|a| a == "sysbench") => Some(&raw[2..]),
        _ => None,
    };
    if let Some(args) = as_sysbench {
        std::process::exit(sysbench_exit_code(dbsweep::commands::sysbench(args)));
    }
    // pgbench's command line and output through a link named `pgbench` (or `dbsweep pgbench`).
    let as_pgbench = match raw.first() {
        Some(argv0) if dbsweep::dropin::pgbench::invoked_as_pgbench(argv0) => Some(&raw[1..]),
        _ if raw.get(1).is_some_and(|a| a == "pgbench") => Some(&raw[2..]),
        _ => None,
    };
    if let Some(args) = as_pgbench {
        std::process::exit(pgbench_exit_code(dbsweep::commands::pgbench(args)));
    }
    // A sysbench Lua script has options of its own: its command line is parsed apart.
    if let Some((command, script, rest)) = dbsweep::lua::script_command(&raw) {
        let outcome = dbsweep::measure::run_script(&command, &script, &rest, Default::default());
        std::process::exit(exit_code(outcome));
    }
    let args = dbsweep::cli::normalise_args(raw);
    let cli = match dbsweep::cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // clap prints help and version to stdout (exit 0) and errors to stderr (exit 2).
        Err(e) => e.exit(),
    };
    std::process::exit(exit_code(dbsweep::commands::run(cli)));
}

/// sysbench's exit codes: 0 done, 1 anything that failed, with its FATAL line on stdout (where
/// sysbench's log goes); 130 for Ctrl-C.
fn sysbench_exit_code(outcome: Result<dbsweep::Outcome, dbsweep::error::Error>) -> i32 {
    match outcome {
        Ok(dbsweep::Outcome::Done) => 0,
        Ok(dbsweep::Outcome::Failed) => 1,
        Ok(dbsweep::Outcome::Interrupted) => 130,
        Err(dbsweep::error::Error::Worded(text)) => {
            eprintln!("{}", dbsweep::error::escape_controls(&text, false));
            1
        }
        Err(e) => {
            println!(
                "FATAL: {}",
                dbsweep::error::escape_controls(&e.to_string(), false)
            );
            if dbsweep::interrupted() { 130 } else { 1 }
        }
    }
}

/// pgbench's exit codes: 0 done, 1 a bad command line or a failed initialisation, 2 a run
/// that failed; its errors as pgbench prints them.
fn pgbench_exit_code(outcome: Result<dbsweep::Outcome, dbsweep::error::Error>) -> i32 {
    match outcome {
        Ok(dbsweep::Outcome::Done) => 0,
        Ok(dbsweep::Outcome::Failed) => 2,
        Ok(dbsweep::Outcome::Interrupted) => 130,
        Err(e) => {
            let message = e.to_string();
            let text = dbsweep::error::escape_controls(&message, false);
            // getopt's complaints come without pgbench's "error:" (the message names its
            // program itself).
            match text.strip_prefix("pgbench: ") {
                Some(own) => eprintln!("pgbench: {own}"),
                None => eprintln!("pgbench: error: {text}"),
            }
            if dbsweep::interrupted() {
                130
            } else if matches!(e, dbsweep::error::Error::Db { .. }) {
                2
            } else {
                1
            }
        }
    }
}

fn exit_code(outcome: Result<dbsweep::Outcome, dbsweep::error::Error>) -> i32 {
    match outcome {
        Ok(dbsweep::Outcome::Done) => 0,
        Ok(dbsweep::Outcome::Failed) => 1,
        Ok(dbsweep::Outcome::Interrupted) => 130,
        Err(e) => {
            eprintln!(
                "dbsweep: error: {}",
                dbsweep::error::escape_controls(&e.to_string(), false)
            );
            // A wait that Ctrl-C (SIGTERM, SIGHUP) ended fails its command: still the user's stop.
            if dbsweep::interrupted() {
                130
            } else {
                e.exit_code()
            }
        }
    }
}
