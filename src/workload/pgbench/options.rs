//! pgbench's scripts' own options: on the command line under the pgbench heading, in a plan
//! by the same names (`script`, `define`), in the results file's options beside the shared
//! ones. Its `--scale` stays with the run's: the other families refuse one that is not 1.

/// The heading `--help` gives pgbench's options (`--scale` among them).
pub const HEADING: &str = "pgbench workloads";

#[derive(Clone, Debug, Default, clap::Args, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct PgbenchArgs {
    /// The pgbench workload: a pgbench script FILE (or builtin:NAME) with its weight
    /// (repeatable)
    #[arg(help_heading = HEADING, long = "script", value_name = "FILE[@WEIGHT]")]
    #[serde(rename(serialize = "pgbench_scripts", deserialize = "script"))]
    pub scripts: Vec<String>,
    /// pgbench scripts: a variable NAME=VALUE (repeatable)
    #[arg(help_heading = HEADING, long = "define", value_name = "NAME=VALUE")]
    #[serde(rename(serialize = "pgbench_defines", deserialize = "define"))]
    pub defines: Vec<String>,
}

impl crate::workload::FamilyOptions for PgbenchArgs {}
