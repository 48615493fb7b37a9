//! LinkBench as a family: its workloads, the tables it makes, its plan and what a report shows
//! of it (a table of its operations per step).

use super::super::family::Family;
use super::super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::error::Error;

/// LinkBench: the registry's entry.
pub struct LinkBench;

const WORKLOADS: &[(&str, &str)] = &[
    (
        "linkbench",
        "LinkBench: the social graph's ten operations in their mix over --nodes, its measured out-degrees from --linkbench-data (see `dbsweep check`)",
    ),
    (
        "linkbench_synthetic",
        "LinkBench with a power law in place of its measured out-degrees (no Distribution.dat needed)",
    ),
];

impl Family for LinkBench {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        WORKLOADS
    }

    fn build(
        &self,
        name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        Ok(super::build(name, opts).expect("one of its workloads"))
    }

    fn tables(&self) -> &'static [&'static str] {
        &super::TABLES
    }

    fn plans(&self) -> &'static [(&'static str, &'static str)] {
        &[("linkbench", include_str!("plan.toml"))]
    }

    fn report_tables(&self, ds: &Dataset, _base: Option<&str>) -> Result<Vec<Table>, Error> {
        Ok(super::report::tables(ds))
    }
}
