//! The Insert Benchmark's own options: on the command line under its heading, in a plan by the
//! same names, in the results file's options beside the shared ones.

use crate::error::Error;

/// Rows a transaction of the Insert Benchmark's inserts or deletes may write at most.
const MAX_ROWS_PER_COMMIT: u32 = 1000;

#[derive(Clone, Debug, clap::Args, serde::Deserialize, serde::Serialize)]
#[serde(default)]
#[command(next_help_heading = "Insert Benchmark")]
pub struct IbenchArgs {
    /// The Insert Benchmark (ibench_insert, ibench_delete): rows per transaction
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub rows_per_commit: u32,
}

impl Default for IbenchArgs {
    fn default() -> IbenchArgs {
        IbenchArgs { rows_per_commit: 1 }
    }
}

impl crate::workload::FamilyOptions for IbenchArgs {
    /// Refuses what the benchmark cannot run.
    fn check(&self, _rate: f64) -> Result<(), Error> {
        if !(1..=MAX_ROWS_PER_COMMIT).contains(&self.rows_per_commit) {
            return Err(Error::Option {
                option: "rows-per-commit".into(),
                why: format!(
                    "{} must be from 1 to {MAX_ROWS_PER_COMMIT}",
                    self.rows_per_commit
                ),
            });
        }
        Ok(())
    }
}
