//! Runs a workload: client threads with their own connections, warm-up, stop at `--time` or
//! `--events`, open-loop pacing under `--rate`, Ctrl-C; and one reporter (the calling thread)
//! that merges the clients' recorders every interval and hands each interval to a callback.

mod connect;
mod groups;
mod multiplex;
pub mod phases;
mod pool;
mod report;
mod run;
pub mod txn_log;
mod worker;
mod zero_for_none;

pub use groups::{Group, run_groups};
pub use report::Report;
use run::{Done, paced_queue, run_group};
pub use run::{Mode, RunOutcome, RunnerOptions, epoch_now, positive, run};
