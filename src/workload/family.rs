//! A workload family: the unit a benchmark arrives as. Its folder owns its workloads' names and
//! descriptions, their builder, the tables it makes in the database, its built-in plans and
//! what a report shows of its steps; the registry ([`super::families`]) lists the families.

use super::FamilyArgs;
use super::{Workload, WorkloadOptions};
use crate::dataset::model::Dataset;
use crate::dataset::tables::Table;
use crate::db::Dialect;
use crate::error::Error;
use crate::results::Results;

/// What dbsweep knows of a workload family, asked of the family rather than by its names.
pub trait Family: Sync {
    /// Its workloads, each with a one-line description, in `dbsweep workloads` order.
    fn workloads(&self) -> &'static [(&'static str, &'static str)];

    /// Builds workload `name`, one of [`Family::workloads`].
    fn build(&self, name: &'static str, opts: &WorkloadOptions)
    -> Result<Box<dyn Workload>, Error>;

    /// Whether a results file's workload is a run of the family's (its workloads by name, by
    /// default).
    fn runs(&self, workload: &str) -> bool {
        self.workloads().iter().any(|(n, _)| *n == workload)
    }

    /// The tables it makes in the database (beside the sbtest tables): a sweep's pause finds
    /// them there.
    fn tables(&self) -> &'static [&'static str] {
        &[]
    }

    /// Its built-in plans (`dbsweep sweep NAME`): each name with its TOML.
    fn plans(&self) -> &'static [(&'static str, &'static str)] {
        &[]
    }

    /// A run's throughput in the family's own unit, where that is not the report's default
    /// (queries/s); see [`Family::throughput_unit`].
    fn throughput(&self, _r: &Results) -> Option<f64> {
        None
    }

    /// What the report's throughput title calls that unit ("rows/s for its inserts").
    fn throughput_unit(&self) -> Option<&'static str> {
        None
    }

    /// How many of the family's own units one event of `workload` is in a run with `options`,
    /// and the unit's name (" rows"): a background group's rate is said in them.
    fn per_event(
        &self,
        _workload: &str,
        _options: &serde_json::Value,
    ) -> Option<(f64, &'static str)> {
        None
    }

    /// Whether its runs are one event of tests each timed whole (sql-bench's groups): their
    /// figures are seconds per test, which the family's own table shows, not a rate.
    fn seconds_per_test(&self) -> bool {
        false
    }

    /// A guess of a run's seconds of `workload` with its options `args`, for a sweep's
    /// schedule, where the family's runs are a fixed amount of work.
    fn estimate_seconds(
        &self,
        _workload: &str,
        _args: &FamilyArgs,
        _dialect: Option<Dialect>,
    ) -> Option<f64> {
        None
    }

    /// A guess of a load's seconds with the options `args`, for a sweep's schedule, where the
    /// family loads tables of its own.
    fn estimate_load_seconds(&self, _args: &FamilyArgs) -> Option<f64> {
        None
    }

    /// The tables a report gives the family's steps (`base`: the report's `--base` column).
    fn report_tables(&self, _ds: &Dataset, _base: Option<&str>) -> Result<Vec<Table>, Error> {
        Ok(Vec::new())
    }

    /// The tables that open a report, before its warnings: what the family's users read first.
    fn lead_tables(&self, _ds: &Dataset) -> Vec<Table> {
        Vec::new()
    }

    /// Whether report table `id` is one of its lead tables, which open the summary too.
    fn leads(&self, _id: &str) -> bool {
        false
    }

    /// Whether report table `id` is one of its headline tables, which the summary keeps.
    fn headline(&self, _id: &str) -> bool {
        false
    }
}

/// Reads one family's options out of a plan's table of options, as the command line reads the
/// same text (the plan's reader implements it).
pub trait OptionsReader {
    fn read<T: for<'de> serde::Deserialize<'de>>(&mut self) -> Result<T, String>;
}

/// A family's options: what it refuses of them before a run (nothing, unless it says).
pub trait FamilyOptions {
    /// Refuses values it cannot run, in a run at `rate` events a second (0: a closed loop).
    fn check(&self, _rate: f64) -> Result<(), Error> {
        Ok(())
    }

    /// The clients a run of `workload` has where `--threads` does not say (None: not its to
    /// say).
    fn default_clients(&self, _workload: &str) -> Option<u32> {
        None
    }

    /// What they say for a run of `workload`: values read from others (TPC-C's mix from its
    /// text), and options it refuses for that workload.
    fn resolve(&mut self, _workload: &str) -> Result<(), Error> {
        Ok(())
    }
}
