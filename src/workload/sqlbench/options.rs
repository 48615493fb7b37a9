//! sql-bench's own options: on the command line under its heading, in a plan by the same
//! names, in the results file's options beside the shared ones (its `--scale` is shared with
//! pgbench's tables, and stays with the run's).

#[derive(Clone, Debug, Default, clap::Args, serde::Deserialize, serde::Serialize)]
#[serde(default)]
#[command(next_help_heading = "sql-bench")]
pub struct SqlbenchArgs {
    /// The sql-bench suite (sqlbench_*): the counts of its scripts' --small-test (on: a
    /// hundredth or a tenth of their loops, as each script has it)
    #[arg(long, value_parser = crate::input::parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub small_test: bool,
    /// sql-bench: its checkout's directory, whose Data/Wisconsin files the wisconsin group
    /// loads [default: $SQLBENCH_HOME; without either, the same rows generated]
    #[arg(long, value_name = "DIR")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sqlbench_data: Option<String>,
}

impl crate::workload::FamilyOptions for SqlbenchArgs {}
