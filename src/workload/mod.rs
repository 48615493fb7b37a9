//! What each client does: the [`Workload`] trait, the options every workload shares, and the
//! registry of the workload families. A family is a folder here and its lines in this file
//! alone: its module, its entry in [`FAMILIES`] and, if it has options, its field in
//! [`FamilyArgs`]. The questions asked of the registry are [`families`]'.

pub mod families;
mod family;
pub mod loader;
mod options;
pub mod rand;
mod shared;
pub mod tables;
mod traits;

pub use families::{build, is_builtin, workloads};
pub use family::{Family, FamilyOptions, OptionsReader};

use crate::error::Error;
pub use options::{PsMode, WorkloadOptions};
pub use tables::TableSet;
pub use traits::{Client, EventLoop, Next, Workload};

/// Writes the registry out of its entries: each family's module, the list of the families
/// ([`FAMILIES`]) and their options ([`FamilyArgs`], a field named after the module).
macro_rules! registry {
    ($($module:ident: [$($family:expr),+] $(, options $args:ty)?;)*) => {
        $(pub mod $module;)*

        /// The families, in `dbsweep workloads` order.
        pub static FAMILIES: &[&dyn Family] = &[$($(&$family),+),*];

        /// The families' own options, one field per family that has any: on the command line
        /// each under its family's heading, in a plan by the same names (read through
        /// [`OptionsReader`]), in the results file's options beside the shared ones.
        #[derive(Clone, Debug, Default, clap::Args, serde::Serialize)]
        pub struct FamilyArgs {
            $($(
                #[command(flatten)]
                #[serde(flatten)]
                pub $module: $args,
            )?)*
        }

        impl FamilyArgs {
            /// Each family's options out of a plan's table.
            pub fn read(r: &mut impl OptionsReader) -> Result<FamilyArgs, String> {
                Ok(FamilyArgs {
                    $($($module: r.read::<$args>()?,)?)*
                })
            }

            /// Refuses what a family cannot run, in a run at `rate` events a second (0: a closed
            /// loop).
            pub fn check(&self, rate: f64) -> Result<(), Error> {
                $($(FamilyOptions::check(&self.$module as &$args, rate)?;)?)*
                Ok(())
            }

            /// The clients a run of `workload` has where `--threads` does not say (None: one).
            pub fn default_clients(&self, workload: &str) -> Option<u32> {
                None$($(.or_else(|| FamilyOptions::default_clients(&self.$module as &$args, workload)))?)*
            }

            /// What each family's options say for a run of `workload` (values read from
            /// others, options it refuses for that workload).
            pub fn resolve(&mut self, workload: &str) -> Result<(), Error> {
                $($(FamilyOptions::resolve(&mut self.$module as &mut $args, workload)?;)?)*
                Ok(())
            }
        }
    };
}

// The registry: each family's folder, its entries in `dbsweep workloads` order and its options
// (under its heading, in a plan by their names, in the results file beside the shared ones).
registry! {
    sysbench: [sysbench::SysbenchScripts, sysbench::Microbenchmarks],
        options sysbench::options::SysbenchArgs;
    ibench: [ibench::InsertBenchmark], options ibench::options::IbenchArgs;
    sqlbench: [sqlbench::SqlBenchSuite], options sqlbench::options::SqlbenchArgs;
    pgbench: [pgbench::PgbenchScripts], options pgbench::options::PgbenchArgs;
    linkbench: [linkbench::LinkBench], options linkbench::options::LinkbenchArgs;
    tpcc: [tpcc::TpccFamily], options tpcc::options::TpccArgs;
}
