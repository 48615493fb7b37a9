//! The options every workload shares (sysbench's names and defaults).

use serde::Serialize;

use super::rand::RandOptions;
/// `--ps-mode`: server-side prepared statements (auto) or text statements (disable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum PsMode {
    Auto,
    Disable,
}

/// Every workload option, resolved; saved in the results file.
#[derive(Clone, Debug, Serialize)]
pub struct WorkloadOptions {
    /// Where a load's progress lines and a client's notes go: the command's voice prints them.
    #[serde(skip)]
    pub notes: crate::output::Events,
    pub tables: u32,
    /// prepare: ANALYZE after loading (`--analyze`).
    pub analyze: bool,
    /// The oltp workloads time each statement apart (`--statement-times`).
    pub statement_times: bool,
    pub table_size: u64,
    pub ps_mode: PsMode,
    /// `--pipeline`: each event's statements go to the server in one round trip.
    pub pipeline: bool,
    /// Client threads: bulk_insert has a table per client, select_random_* a key segment.
    pub threads: u32,
    /// The workload families' own options, each family's in its own type.
    #[serde(flatten)]
    pub families: super::FamilyArgs,
    /// The pgbench personality's `-d`: its debugging lines, in its query mode's words.
    #[serde(skip)]
    pub pgbench_debug: Option<crate::workload::pgbench::Debug>,
    /// `-M extended`: each statement parsed as it is sent, so that an error in one is the
    /// command's, not the setup's (`-M prepared` reports it and runs on, as pgbench).
    #[serde(skip)]
    pub pgbench_extended: bool,
    /// pgbench's tables as `pgbench -i` makes them (the pgbench personality's options).
    #[serde(flatten)]
    pub pgbench_tables: TableOptions,
    /// The sql-bench suite: every test's rows and repetitions times this; pgbench: the
    /// scaling factor.
    pub scale: u32,
    #[serde(flatten)]
    pub rand: RandOptions,
}

impl WorkloadOptions {
    /// How the target of a run with these options opens.
    pub fn open_options(&self, create: bool) -> crate::db::OpenOptions {
        crate::db::OpenOptions {
            create,
            text_statements: self.ps_mode == PsMode::Disable,
            pipeline: self.pipeline,
        }
    }
}

/// `pgbench -i`'s options for its tables, set by the pgbench personality (dbsweep's own
/// `prepare pgbench_*` makes them as `pgbench -i -s N` does); saved in the results file.
#[derive(Clone, Debug, Serialize)]
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
