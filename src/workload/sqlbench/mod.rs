//! MySQL's sql-bench (docs/workloads.md section 11): each of its test scripts a group, a
//! workload whose one event runs the script's tests in order on a single client, each test
//! timed whole under the original's name (a statement kind of the results, in seconds in the
//! report), the group's total the event's latency. connect, create, insert, select,
//! alter-table, big-tables, transactions, Wisconsin and ATIS are the originals' scripts,
//! statement for statement, with their counts (`--small-test` gives their --small-test counts).
//!
//! A group makes its own tables (named `sqlbench_*`) and drops them at the end of its event;
//! it refuses to start when one is already there (an interrupted run's: `dbsweep cleanup
//! sqlbench_GROUP` drops them), so that it never drops a table it did not make.

mod alter;
mod atis;
mod big;
mod connect;
mod create;
mod ddl;
pub mod estimate;
mod family;
mod insert;
pub mod options;
mod report;
mod select;
mod suite;
mod transactions;
mod wisconsin;
pub use family::SqlBenchSuite;
pub use suite::build;
use suite::{Ctx, GROUPS, SqlBenchClient, not_interrupted};
