//! pgbench's scripts as a family: its built-in scripts and custom ones, its options (the
//! scripts and their variables), and what a report shows of its runs first (transactions a
//! second and their latency).

use super::super::family::Family;
use super::super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::error::Error;
use crate::results::Results;

/// pgbench's scripts: the registry's entry.
pub struct PgbenchScripts;

const WORKLOADS: &[(&str, &str)] = &[
    (
        "pgbench_tpcb_like",
        "pgbench's TPC-B (sort of): three updates, a select and an insert; its tables by prepare --scale",
    ),
    (
        "pgbench_simple_update",
        "pgbench's simple update (-N): the account's update, select and the history's insert",
    ),
    (
        "pgbench_select_only",
        "pgbench's select only (-S): one account by its key",
    ),
    (
        "pgbench",
        "pgbench scripts: --script FILE[@WEIGHT] (repeatable), with pgbench's language",
    ),
];

impl Family for PgbenchScripts {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        WORKLOADS
    }

    fn build(
        &self,
        name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        super::build(name, opts).expect("one of its workloads")
    }

    fn runs(&self, workload: &str) -> bool {
        super::report::is_run(workload)
    }

    /// Transactions (script runs) a second.
    fn throughput(&self, r: &Results) -> Option<f64> {
        Some(r.tps)
    }

    fn lead_tables(&self, ds: &Dataset) -> Vec<Table> {
        super::report::tables(ds)
    }

    fn leads(&self, id: &str) -> bool {
        id == super::report::TRANSACTIONS
    }
}
