//! The integration tests: one binary, a module per area. Everything runs the real `dbsweep`
//! binary against real SQLite files or the `mock` target.

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
mod tls;
mod tpcc;
mod trust;
mod versions;
