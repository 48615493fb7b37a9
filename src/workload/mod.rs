//! What each client does: the [`Workload`] trait, the registry of built-in workloads, and the
//! options they share (sysbench's names and defaults).

pub mod families;
mod family;
pub mod family_args;
pub mod ibench;
pub mod linkbench;
pub mod loader;
mod options;
pub mod pgbench;
pub mod rand;
mod shared;
pub mod sqlbench;
pub mod sysbench;
pub mod tables;
pub mod tpcc;
mod traits;

pub use families::{build, is_builtin, workloads};
pub use family::Family;
pub use options::{PsMode, WorkloadOptions};
pub use tables::TableSet;
pub use traits::{Client, EventLoop, Next, Workload};
