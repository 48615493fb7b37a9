//! sysbench's exit codes and how it says a failure.

use crate::error::{Error, Outcome};

/// sysbench's exit codes: 0 done, 1 anything that failed, with its FATAL line on stdout (where
/// sysbench's log goes); 130 for Ctrl-C.
pub fn exit_code(outcome: Result<Outcome, Error>) -> i32 {
    match outcome {
        Ok(Outcome::Done) => 0,
        Ok(Outcome::Failed) => 1,
        Ok(Outcome::Interrupted) => 130,
        Err(Error::Worded(text)) => {
            eprintln!("{}", crate::error::escape_controls(&text, false));
            1
        }
        Err(e) => {
            println!(
                "FATAL: {}",
                crate::error::escape_controls(&e.to_string(), false)
            );
            if crate::interrupted() { 130 } else { 1 }
        }
    }
}
