//! sql-bench as a family: its groups, its plan and what a report shows of it (seconds per test
//! and per group, the suite's total the headline).

use super::super::family::Family;
use super::super::FamilyArgs;
use super::super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::db::Dialect;
use crate::error::Error;

/// The sql-bench suite: the registry's entry.
pub struct SqlBenchSuite;

const WORKLOADS: &[(&str, &str)] = &[
    (
        "sqlbench_connect",
        "sql-bench's test-connect: connects, simple selects, 1- and 2-row selects, a 65 KB record; 500,000 a test (--small-test: 5,000) (one event: --events 1)",
    ),
    (
        "sqlbench_create",
        "sql-bench's test-create: 400 tables made, counted and dropped; 10,000 made and dropped, plain and with 16 keys (one event: --events 1)",
    ),
    (
        "sqlbench_insert",
        "sql-bench's test-insert: 300,000 rows in three orders, then key, range, sorted, grouped and joined reads, updates, deletes, a table of 16 keys, a multi-row insert (one event: --events 1)",
    ),
    (
        "sqlbench_select",
        "sql-bench's test-select: 10,000 rows on keys of many parts: sums, big selects, ranges of 500 ORs, MIN/MAX and COUNT on keys, GROUP BY, COUNT(DISTINCT) (one event: --events 1)",
    ),
    (
        "sqlbench_alter",
        "sql-bench's test-alter-table: 1,000 rows, widened to 1,000 columns one at a time, indexed, narrowed (one event: --events 1)",
    ),
    (
        "sqlbench_transactions",
        "sql-bench's test-transactions: 500,000 inserts, updates and deletes in one transaction, in autocommit, rolled back in batches (one event: --events 1)",
    ),
    (
        "sqlbench_big_tables",
        "sql-bench's test-big-tables: a table of 1,000 columns read and written whole, 70,000 times each (one event: --events 1)",
    ),
    (
        "sqlbench_wisconsin",
        "sql-bench's test-wisconsin: onek, tenk1, tenk2 and Bprime loaded, its 24 queries (one event: --events 1)",
    ),
    (
        "sqlbench_atis",
        "sql-bench's test-ATIS: its 28 tables from a sql-bench checkout's Data/ATIS files (--sqlbench-data), five groups of joins, DISTINCT and GROUP BY (one event: --events 1)",
    ),
];

impl Family for SqlBenchSuite {
    fn workloads(&self) -> &'static [(&'static str, &'static str)] {
        WORKLOADS
    }

    fn build(
        &self,
        name: &'static str,
        opts: &WorkloadOptions,
    ) -> Result<Box<dyn Workload>, Error> {
        Ok(super::build(name, opts).expect("one of its groups"))
    }

    fn plans(&self) -> &'static [(&'static str, &'static str)] {
        &[("sqlbench", include_str!("plan.toml"))]
    }

    fn seconds_per_test(&self) -> bool {
        true
    }

    fn estimate_seconds(
        &self,
        workload: &str,
        args: &FamilyArgs,
        dialect: Option<Dialect>,
    ) -> Option<f64> {
        Some(super::estimate::seconds(workload, args.sqlbench.small_test, dialect).unwrap_or(0.5))
    }

    fn report_tables(&self, ds: &Dataset, base: Option<&str>) -> Result<Vec<Table>, Error> {
        super::report::tables(ds, base)
    }

    fn headline(&self, id: &str) -> bool {
        // Its headline is its own table: seconds per group and the total.
        id.starts_with("sqlbench")
    }
}
