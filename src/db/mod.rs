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
mod open;
pub mod postgres;
mod server_conn;
pub mod server_url;
mod shape;
pub mod socket;
pub mod sqlite;
pub mod tls;
pub(crate) mod url;

pub use crate::error::{DbError, ErrorClass};
pub use conn::{
    Conn, Count, Detached, Dialect, OnRow, OpenOptions, Param, QueryCounts, RowValue, StmtId,
    StmtOutcome, Target, TextRow,
};
pub use open::{check_url, dialect_of, open};
pub use shape::{TableShape, declared_columns, table_shape};
pub use socket::Timeouts;
pub use url::{interpolate, redact_url, sqlite_dir};
