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
    /// The connections' bounds (`--connect-timeout`, `--query-timeout`).
    #[serde(skip)]
    pub timeouts: crate::db::Timeouts,
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
            timeouts: self.timeouts,
        }
    }
}
