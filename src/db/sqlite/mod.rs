//! The embedded SQLite target (rusqlite with bundled SQLite): the default, nothing to install.
//!
//! URL: `sqlite://PATH` (relative to the current directory) or `sqlite:///ABSOLUTE/PATH`, with
//! optional PRAGMAs as query parameters: `sqlite://db.sqlite?synchronous=NORMAL&cache_size=-65536`.
//! Connections use WAL unless `journal_mode` says otherwise.

mod busy;
mod connection;
mod exec;
mod files;
mod turns;

pub use busy::{busy_counters, heap_peak_kb, reset_heap_peak};
pub use connection::{SqliteConn, SqliteTarget};
pub use files::{OwnFileTable, allow_own_file_table, own_file_table};
