//! Where a benchmark runs: a database reached through a [`Target`], one [`Conn`] per client.
//!
//! Workloads see only these traits (`conn.rs`), so each database is one folder here (its
//! connection in `mod.rs`, its protocol client, authentication and helpers beside it), and
//! this file only opens the right one. Each database classifies
//! its errors into what the runner does about them (`crate::error::ErrorClass`: retry,
//! reconnect, stop).

mod conn;
#[doc(hidden)]
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod mock;
pub mod mysql;
pub mod postgres;
mod server_conn;
pub mod server_url;
mod shape;
pub mod socket;
pub mod sqlite;
pub mod tls;
mod url;

pub use conn::{
    Conn, Count, Detached, Dialect, OnRow, OpenOptions, Param, QueryCounts, RowValue, StmtId,
    StmtOutcome, Target, TextRow,
};
pub use shape::{TableShape, declared_columns, table_shape};
pub use url::{interpolate, redact_url, sqlite_dir};

use crate::error::Error;
pub use crate::error::{DbError, ErrorClass};

const URL_FORMS: &str = "sqlite://PATH, postgres://USER[:PASSWORD]@HOST[:PORT]/DB or mysql://USER[:PASSWORD]@HOST[:PORT]/DB";

/// Checks a target URL as `open` would, without connecting or creating anything.
pub fn check_url(url: &str) -> Result<(), String> {
    let o = OpenOptions {
        create: true,
        ..OpenOptions::default()
    };
    open(url, o).map(drop).map_err(|e| {
        let m = e.to_string();
        m.strip_prefix("--target ")
            .map_or(m.clone(), str::to_string)
    })
}

/// The dialect of the database a URL names, by its scheme; None for no URL or an unknown scheme.
pub fn dialect_of(url: &str) -> Option<Dialect> {
    match url.split_once("://")?.0 {
        "sqlite" => Some(Dialect::Sqlite),
        "postgres" | "postgresql" => Some(Dialect::Postgres),
        "mysql" | "mariadb" => Some(Dialect::Mysql),
        "mock" => Some(Dialect::Any),
        _ => None,
    }
}

/// Opens the target named by `--target`.
pub fn open(url: &str, o: OpenOptions) -> Result<Box<dyn Target>, Error> {
    let scheme = url.split_once("://").map(|(s, _)| s);
    let shown = redact_url(url);
    // `pipeline` is for a PostgreSQL target (the plan checks it: plan::check_pipeline); other
    // targets have no pipeline to use.
    match scheme {
        Some("sqlite") => Ok(Box::new(sqlite::SqliteTarget::from_url(url, o.create)?)),
        Some("mock") => Ok(Box::new(mock::MockTarget::from_url(url)?)),
        Some("postgres" | "postgresql") => Ok(Box::new(postgres::PostgresTarget::from_url(
            url,
            o.text_statements,
            o.pipeline,
        )?)),
        Some("mysql" | "mariadb") => Ok(Box::new(mysql::MysqlTarget::from_url(
            url,
            o.text_statements,
        )?)),
        Some(other) => Err(Error::Usage(format!(
            "--target {shown}: unknown scheme '{other}'; use {URL_FORMS}"
        ))),
        None => Err(Error::Usage(format!(
            "--target {shown}: not a URL; use {URL_FORMS}"
        ))),
    }
}
