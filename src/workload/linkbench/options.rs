//! LinkBench's own options: on the command line under its heading, in a plan by the same
//! names, in the results file's options beside the shared ones.

use crate::error::Error;

/// The most nodes `--nodes` takes (ids and their products stay within 64 bits).
pub const MAX_NODES: u64 = 1_000_000_000;

#[derive(Clone, Debug, clap::Args, serde::Deserialize, serde::Serialize)]
#[serde(default)]
#[command(next_help_heading = "LinkBench")]
pub struct LinkbenchArgs {
    /// LinkBench: nodes to load (links and counts follow from them)
    #[arg(long, default_value_t = 10_000_000, value_name = "N")]
    pub nodes: u64,
    /// LinkBench: its checkout's config/Distribution.dat, the out-degrees it measured
    /// [default: $LINKBENCH_HOME/config/Distribution.dat]
    #[arg(long, value_name = "FILE")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linkbench_data: Option<String>,
}

impl Default for LinkbenchArgs {
    fn default() -> LinkbenchArgs {
        LinkbenchArgs {
            nodes: 10_000_000,
            linkbench_data: None,
        }
    }
}

impl crate::workload::FamilyOptions for LinkbenchArgs {
    /// Refuses a graph the benchmark cannot load.
    fn check(&self, _rate: f64) -> Result<(), Error> {
        if !(1..=MAX_NODES).contains(&self.nodes) {
            return Err(Error::Option {
                option: "nodes".into(),
                why: format!("{} must be from 1 to {}", self.nodes, MAX_NODES),
            });
        }
        Ok(())
    }
}
