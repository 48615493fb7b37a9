//! The Insert Benchmark as a family: its workloads, the table it makes, its plan (iq.sh's
//! sequence of steps) and what a report shows of it.

use super::super::family::Family;
use super::super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::error::Error;
use crate::results::Results;

/// The Insert Benchmark: the registry's entry.
pub struct InsertBenchmark;

const WORKLOADS: &[(&str, &str)] = &[
    (
        "ibench_insert",
        "Insert Benchmark: insert --rows-per-commit rows in key order per transaction",
    ),
    (
        "ibench_delete",
        "Insert Benchmark: delete the --rows-per-commit oldest rows per transaction",
    ),
    (
        "ibench_range",
        "Insert Benchmark: a 10-row range on the (price, dateandtime, customerid) index",
    ),
    (
        "ibench_point",
        "Insert Benchmark: a point query by primary key",
    ),
    (
        "ibench_index",
        "Insert Benchmark: create the three secondary indexes (one event: --events 1)",
    ),
];

/// Rows each insert or delete transaction of a run with `options` writes.
fn rows_per_commit(options: &serde_json::Value) -> f64 {
    options["rows_per_commit"].as_f64().unwrap_or(1.0).max(1.0)
}

impl Family for InsertBenchmark {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        WORKLOADS
    }

    fn build(
        &self,
        name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        Ok(super::build(name, opts))
    }

    fn tables(&self) -> &'static [&'static str] {
        &[super::TABLE]
    }

    fn plans(&self) -> &'static [(&'static str, &'static str)] {
        &[("ibench", include_str!("plan.toml"))]
    }

    /// Its inserts' figure: rows inserted a second.
    fn throughput(&self, r: &Results) -> Option<f64> {
        (r.workload == "ibench_insert").then(|| r.tps * rows_per_commit(&r.options))
    }

    fn throughput_unit(&self) -> Option<&'static str> {
        Some("rows/s for ibench_insert")
    }

    /// Its background load is said in rows, as its rates are.
    fn per_event(
        &self,
        _workload: &str,
        options: &serde_json::Value,
    ) -> Option<(f64, &'static str)> {
        Some((rows_per_commit(options), " rows"))
    }

    fn report_tables(&self, ds: &Dataset, _base: Option<&str>) -> Result<Vec<Table>, Error> {
        Ok(super::report::tables(ds))
    }

    fn headline(&self, id: &str) -> bool {
        id == "ibench.summary"
    }
}
