//! dbsweep as a drop-in for pgbench 15: the binary run through a link named `pgbench` (or
//! `dbsweep pgbench ARGS...`) takes pgbench's command line (getopt's short options, with their
//! values attached or apart, and the long ones), libpq's environment (PGHOST, PGPORT, PGUSER,
//! PGDATABASE, PGPASSWORD), initialises pgbench's tables (`-i`) or runs its built-in and custom
//! scripts, and prints what pgbench prints (its summary on stdout, `-P`'s progress and `-i`'s
//! steps on stderr) and nothing more; dbsweep's results file goes only into the directory
//! `DBSWEEP_RESULTS_DIR` names.

mod checks;
pub mod exit;
mod getopt;
mod help;
mod notes;
pub mod output;
mod setup;
mod translate;
mod txn_log;

pub use setup::PgbenchRun;
pub use translate::{Pgbench, invoked_as_pgbench, main};
use translate::{last, pgbench_words, usage};
