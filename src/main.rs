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
    // A personality's command line and output (sysbench's, pgbench's): through a link named
    // after the tool, or `dbsweep TOOL`, whose words clap must not normalise either.
    if let Some(code) = dbsweep::commands::as_personality(&raw) {
        std::process::exit(code);
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
