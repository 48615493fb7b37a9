//! The questions asked of the registry of workload families ([`super::FAMILIES`]), in
//! `dbsweep workloads` order: every question about a built-in workload (is it one, build it,
//! what a report shows of it) goes through the family that has it.

use super::FAMILIES;
use super::family::Family;
use super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::error::Error;
use crate::results::Results;

/// Every built-in workload with its one-line description, in `dbsweep workloads` order.
pub fn workloads() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAMILIES.iter().flat_map(|f| f.workloads().iter().copied())
}

/// The family of built-in workload `name`, and the name as the family keeps it.
pub fn family_of(name: &str) -> Option<(&'static dyn Family, &'static str)> {
    FAMILIES.iter().find_map(|f| {
        f.workloads()
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, _)| (*f, *n))
    })
}

/// Whether `name` is a built-in workload's (`dbsweep workloads` lists them).
pub fn is_builtin(name: &str) -> bool {
    family_of(name).is_some()
}

/// Builds the workload called `name`.
pub fn build(name: &str, opts: &WorkloadOptions) -> Result<Box<dyn Workload>, Error> {
    let Some((family, name)) = family_of(name) else {
        let names: Vec<&str> = workloads().map(|(n, _)| n).collect();
        return Err(Error::Usage(format!(
            "unknown workload '{name}'; built-in workloads are: {} (see `dbsweep workloads`)",
            names.join(", ")
        )));
    };
    let w = family.build(name, opts)?;
    if opts.pipeline && !w.pipelines() {
        return Err(Error::Usage(format!(
            "--pipeline: {name} does not pipeline (only the oltp_* transactions of sysbench do: \
             their statements do not depend on each other's results); leave out --pipeline"
        )));
    }
    Ok(w)
}

/// The tables the families make in the database, beside the sbtest tables.
pub fn tables() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().flat_map(|f| f.tables().iter().copied())
}

/// The families' built-in plans: each name with its TOML.
pub fn plans() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAMILIES.iter().flat_map(|f| f.plans().iter().copied())
}

/// A run's throughput in its family's own unit, where that is not queries/s.
pub fn throughput(r: &Results) -> Option<f64> {
    FAMILIES.iter().find(|f| f.runs(&r.workload))?.throughput(r)
}

/// The families' own units of throughput, as the report's title names them.
pub fn throughput_units() -> impl Iterator<Item = &'static str> {
    FAMILIES.iter().filter_map(|f| f.throughput_unit())
}

/// How many of its family's units one event of `workload` is in a run with `options`, and the
/// unit (" rows"); one event, and no unit, for a workload whose family has none.
pub fn per_event(workload: &str, options: &serde_json::Value) -> (f64, &'static str) {
    family_of(workload)
        .and_then(|(f, _)| f.per_event(workload, options))
        .unwrap_or((1.0, ""))
}

/// The tables the families give their steps in a report.
pub fn report_tables(ds: &Dataset, base: Option<&str>) -> Result<Vec<Table>, Error> {
    let mut out = Vec::new();
    for f in FAMILIES {
        out.extend(f.report_tables(ds, base)?);
    }
    Ok(out)
}

/// Whether a run of built-in workload `name` is one event of tests each timed whole, its
/// figures seconds per test ([`Family::seconds_per_test`]).
pub fn seconds_per_test(name: &str) -> bool {
    family_of(name).is_some_and(|(f, _)| f.seconds_per_test())
}

/// The tables that open a report, before its warnings: what a family's users read first.
pub fn lead_tables(ds: &Dataset) -> Vec<Table> {
    FAMILIES.iter().flat_map(|f| f.lead_tables(ds)).collect()
}

/// Whether report table `id` opens the summary ([`Family::lead_tables`]).
pub fn leads(id: &str) -> bool {
    FAMILIES.iter().any(|f| f.leads(id))
}

/// Whether report table `id` is a family's headline table, which the summary keeps.
pub fn headline(id: &str) -> bool {
    FAMILIES.iter().any(|f| f.headline(id))
}
