//! Opening a target by its URL: which database a URL names, and its checks.

use super::{Dialect, OpenOptions, Target, redact_url};
use crate::error::Error;

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
        Some("sqlite") => Ok(Box::new(super::sqlite::SqliteTarget::from_url(
            url, o.create,
        )?)),
        Some("mock") => Ok(Box::new(super::mock::MockTarget::from_url(url)?)),
        Some("postgres" | "postgresql") => Ok(Box::new(super::postgres::PostgresTarget::from_url(
            url,
            o.text_statements,
            o.pipeline,
            o.timeouts,
        )?)),
        Some("mysql" | "mariadb") => Ok(Box::new(super::mysql::MysqlTarget::from_url(
            url,
            o.text_statements,
            o.timeouts,
        )?)),
        Some(other) => Err(Error::Usage(format!(
            "--target {shown}: unknown scheme '{other}'; use {URL_FORMS}"
        ))),
        None => Err(Error::Usage(format!(
            "--target {shown}: not a URL; use {URL_FORMS}"
        ))),
    }
}
