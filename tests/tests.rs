//! The integration tests: one binary, a module per area. Everything runs the real `dbsweep`
//! binary against real SQLite files, real PostgreSQL and MariaDB servers the tests start, or the
//! `mock` target. `util::Line` builds the command lines the tests repeat.

#[macro_use]
mod util;

mod bad_input;
mod bounded_waits;
mod capacity;
mod data_safety;
mod diagnosis;
mod docs;
mod dropin;
mod fairness;
mod fetched_builds;
mod hostile_servers;
mod house;
mod ibench;
mod interrupt;
mod limits;
mod limits_remote;
mod limits_sweep;
mod linkbench;
mod live_metrics;
mod lua;
mod lua_threads;
mod managed;
mod managed_failures;
mod mock;
mod pgbench;
mod pgbench_alike;
mod pgbench_figures;
mod phases;
mod profile;
mod progress;
mod reference;
mod remote;
mod remote_sweep;
mod report;
mod report_checks;
mod results_file;
mod series;
mod server_sweeps;
mod servers;
mod sqlbench;
mod sqlite;
mod sweep;
mod sweep_scripts;
mod sysbench_alike;
mod terminals;
mod tls;
mod tpcc;
mod versions;
