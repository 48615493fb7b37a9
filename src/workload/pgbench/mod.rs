//! pgbench's workloads in dbsweep: its built-in scripts (`pgbench_tpcb_like`,
//! `pgbench_simple_update`, `pgbench_select_only`) and custom scripts (`pgbench --script
//! FILE[@WEIGHT]`), each event one run of a script chosen by weight, with pgbench's meaning
//! (its variables, expressions and SQL). `prepare` makes pgbench's four tables as `pgbench -i`
//! does (`--scale`), so that pgbench and dbsweep run on each other's data.

mod builtin;
mod client;
mod command;
mod debug;
pub mod expr;
mod family;
pub mod init;
mod lexer;
mod meta;
pub mod options;
mod prepare;
mod report;
mod said;
pub mod script;
mod shell;
mod stmt;
mod vars;
pub use builtin::{TABLES, build, command_names, read_script};
pub use family::PgbenchScripts;

/// pgbench's `-d`: each client says what it executes and sends on stderr, the SQL as the
/// query mode (`-M`) sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Debug {
    /// The SQL with the variables' values in it.
    Simple,
    /// The SQL with `$1` for each variable.
    Extended,
    /// The prepared statement's name, `P_N` as pgbench numbers them.
    Prepared,
}
