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
    /// The pgbench personality's `-d`: its debugging lines, in its query mode's words.
    #[arg(skip)]
    #[serde(skip)]
    pub debug: Option<super::Debug>,
    /// `-M extended`: each statement parsed as it is sent, so that an error in one is the
    /// command's, not the setup's (`-M prepared` reports it and runs on, as pgbench).
    #[arg(skip)]
    #[serde(skip)]
    pub extended: bool,
    /// pgbench's tables as `pgbench -i` makes them (the pgbench personality's options; a plan
    /// does not set them).
    #[arg(skip)]
    #[serde(flatten, skip_deserializing)]
    pub tables: TableOptions,
}

impl crate::workload::FamilyOptions for PgbenchArgs {}

/// `pgbench -i`'s options for its tables, set by the pgbench personality (dbsweep's own
/// `prepare pgbench_*` makes them as `pgbench -i -s N` does); saved in the results file.
#[derive(Clone, Debug, serde::Serialize)]
pub struct TableOptions {
    /// `-F`: the fill factor of pgbench_accounts, pgbench_tellers and pgbench_branches.
    pub fillfactor: u32,
    /// `-I`: the initialisation steps.
    pub init_steps: String,
    pub unlogged_tables: bool,
    pub foreign_keys: bool,
    /// `--partitions` (0: none) and `--partition-method` of pgbench_accounts.
    pub partitions: u32,
    pub partition_method: String,
    /// `--tablespace`, `--index-tablespace` (PostgreSQL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tablespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index_tablespace: Option<String>,
}

impl Default for TableOptions {
    /// pgbench's defaults.
    fn default() -> TableOptions {
        TableOptions {
            fillfactor: 100,
            init_steps: "dtgvp".into(),
            unlogged_tables: false,
            foreign_keys: false,
            partitions: 0,
            partition_method: "range".into(),
            tablespace: None,
            index_tablespace: None,
        }
    }
}
