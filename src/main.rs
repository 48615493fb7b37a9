//! The dbsweep binary: parse, run, map the outcome to an exit code (0 ok, 1 run failed,
//! 2 bad usage, 130 interrupted by Ctrl-C).

use clap::Parser;

fn main() {
    let args = dbsweep::cli::normalise_args(std::env::args());
    let cli = match dbsweep::cli::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // clap prints help and version to stdout (exit 0) and errors to stderr (exit 2).
        Err(e) => e.exit(),
    };
    let code = match dbsweep::run(cli) {
        Ok(dbsweep::Outcome::Done) => 0,
        Ok(dbsweep::Outcome::Failed) => 1,
        Ok(dbsweep::Outcome::Interrupted) => 130,
        Err(e) => {
            eprintln!("dbsweep: error: {e}");
            e.exit_code()
        }
    };
    std::process::exit(code);
}
