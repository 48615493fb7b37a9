//! The library's error type: what went wrong, and whether it was the user's input (exit 2) or
//! the run (exit 1). Only `main` turns these into exit codes.

use crate::db::DbError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: an unknown option or workload, a malformed URL, a missing table, an unwritable
    /// path. Detected before any table is touched.
    #[error("{0}")]
    Usage(String),
    /// The run failed after it started.
    #[error("{0}")]
    Run(String),
    #[error("{context}: {source}")]
    Db { context: String, source: DbError },
}

impl Error {
    pub fn db(context: impl Into<String>, source: DbError) -> Error {
        Error::Db {
            context: context.into(),
            source,
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) => 2,
            Error::Run(_) | Error::Db { .. } => 1,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
