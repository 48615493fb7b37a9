//! The registry of built-in workloads: whether a name is one, and building it.

use super::{WORKLOADS, Workload, WorkloadOptions};
use crate::error::Error;

/// Whether `name` is a built-in workload's (`dbsweep workloads` lists them).
pub fn is_builtin(name: &str) -> bool {
    WORKLOADS.iter().any(|(n, _)| *n == name)
}

/// Builds the workload called `name`.
pub fn build(name: &str, opts: &WorkloadOptions) -> Result<Box<dyn Workload>, Error> {
    let w: Box<dyn Workload> = if name == "tpcc" {
        Box::new(super::tpcc::Tpcc::new(opts))
    } else if let Some(w) = super::pgbench::build(name, opts) {
        w?
    } else {
        super::sysbench::build(name, opts)
            .or_else(|| super::micro::build(name, opts))
            .or_else(|| super::ibench::build(name, opts))
            .or_else(|| super::linkbench::build(name, opts))
            .or_else(|| super::sqlbench::build(name, opts))
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
