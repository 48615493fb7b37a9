//! pgbench's exit codes and how it says a failure.

use crate::error::{Error, Outcome};

/// pgbench's exit codes: 0 done, 1 a bad command line or a failed initialisation, 2 a run
/// that failed; its errors as pgbench prints them.
pub fn exit_code(outcome: Result<Outcome, Error>) -> i32 {
    match outcome {
        Ok(Outcome::Done) => 0,
        Ok(Outcome::Failed) => 2,
        Ok(Outcome::Interrupted) => 130,
        Err(e) => {
            let message = e.to_string();
            let text = crate::error::escape_controls(&message, false);
            // getopt's complaints come without pgbench's "error:" (the message names its
            // program itself).
            match text.strip_prefix("pgbench: ") {
                Some(own) => eprintln!("pgbench: {own}"),
                None => eprintln!("pgbench: error: {text}"),
            }
            if crate::interrupted() {
                130
            } else if matches!(e, Error::Db { .. }) {
                2
            } else {
                1
            }
        }
    }
}
