//! The integration tests: one binary, a module per area. Everything runs the real `dbsweep`
//! binary against real SQLite files or the `mock` target.

#[macro_use]
mod util;

mod bad_input;
mod diagnosis;
mod dropin;
mod interrupt;
mod lua;
mod mock;
mod remote;
mod report;
mod results_file;
mod servers;
mod sqlite;
mod sweep;
mod terminals;
mod tls;
mod tpcc;
mod trust;
mod versions;
