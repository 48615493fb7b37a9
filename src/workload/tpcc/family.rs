//! TPC-C as a family: its one workload, its nine tables, and what a report shows of its steps
//! (a table of its transactions per step, against the specification's limits).

use super::super::family::Family;
use super::super::FamilyArgs;
use super::super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::error::Error;

/// TPC-C: the registry's entry.
pub struct TpccFamily;

const WORKLOADS: &[(&str, &str)] = &[(
    "tpcc",
    "TPC-C: the five transactions from a shuffled deck over --warehouses (see `dbsweep tpcc`)",
)];

impl Family for TpccFamily {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        WORKLOADS
    }

    fn build(
        &self,
        _name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        Ok(Box::new(super::Tpcc::new(opts)))
    }

    fn tables(&self) -> &'static [&'static str] {
        &super::schema::TABLES
    }

    /// About 550,000 rows per warehouse at about 150,000 rows/s.
    fn estimate_load_seconds(&self, args: &FamilyArgs) -> Option<f64> {
        Some(2.0 + f64::from(args.tpcc.warehouses) * 3.7)
    }

    fn report_tables(&self, ds: &Dataset, _base: Option<&str>) -> Result<Vec<Table>, Error> {
        Ok(super::report::tables(ds))
    }
}
