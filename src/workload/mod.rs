//! What each client does: the [`Workload`] trait, the registry of built-in workloads, and the
//! options they share (sysbench's names and defaults).

pub mod ibench;
pub mod linkbench;
pub mod loader;
pub mod micro;
mod names;
mod options;
pub mod pgbench;
pub mod rand;
mod shared;
pub mod sqlbench;
pub mod sysbench;
pub mod tables;
pub mod tpcc;
mod traits;

pub use names::WORKLOADS;
pub use options::{PsMode, WorkloadOptions};
pub use tables::TableSet;
pub use traits::{Client, EventLoop, Next, Workload};

use crate::error::Error;

/// Whether `name` is a built-in workload's (`dbsweep workloads` lists them).
pub fn is_builtin(name: &str) -> bool {
    WORKLOADS.iter().any(|(n, _)| *n == name)
}

/// Builds the workload called `name`.
pub fn build(name: &str, opts: &WorkloadOptions) -> Result<Box<dyn Workload>, Error> {
    let w: Box<dyn Workload> = if name == "tpcc" {
        Box::new(tpcc::Tpcc::new(opts))
    } else if let Some(w) = pgbench::build(name, opts) {
        w?
    } else {
        sysbench::build(name, opts)
            .or_else(|| micro::build(name, opts))
            .or_else(|| ibench::build(name, opts))
            .or_else(|| linkbench::build(name, opts))
            .or_else(|| sqlbench::build(name, opts))
            .ok_or_else(|| {
            let names: Vec<&str> = WORKLOADS.iter().map(|(n, _)| *n).collect();
            Error::Usage(format!(
                "unknown workload '{name}'; built-in workloads are: {} (see `dbsweep workloads`)",
                names.join(", ")
            ))
        })?
    };
    if opts.pipeline && !w.pipelines() {
        return Err(Error::Usage(format!(
            "--pipeline: {name} does not pipeline (only the oltp_* transactions of sysbench do: \
             their statements do not depend on each other's results); leave out --pipeline"
        )));
    }
    Ok(w)
}
