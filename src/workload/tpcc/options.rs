//! TPC-C's own options: on the command line under its heading, in a plan by the same names,
//! in the results file's options beside the shared ones (the mix as it was read, `tpcc_mix`).

use super::deck::Mix;
use crate::error::Error;

/// The heading `--help` gives TPC-C's options.
pub const HEADING: &str = "TPC-C";

#[derive(Clone, Debug, clap::Args, serde::Deserialize, serde::Serialize)]
#[serde(default)]
pub struct TpccArgs {
    /// tpcc: warehouses (each: 10 districts, 30,000 customers, 100,000 stock rows)
    #[arg(help_heading = HEADING, long, default_value_t = 1)]
    pub warehouses: u32,
    /// The transactions' mix as read from `--mix` (the plan reads it).
    #[arg(skip)]
    #[serde(skip_deserializing)]
    pub tpcc_mix: Mix,
    /// tpcc: keying and think times between transactions, as the specification's terminals
    #[arg(help_heading = HEADING, long, value_parser = crate::input::parse_bool, num_args = 0..=1, default_value = "off", default_missing_value = "on")]
    pub wait: bool,
    /// tpcc: the five transactions' shares in percent, adding up to 100: NO,P,OS,D,SL
    /// (`50,50,0,0,0`) or TYPE=PCT pairs (`new_order=50,payment=50`) [default: 45,43,4,4,4,
    /// the specification's least mix; below its minimums runs, with a warning, and does not
    /// conform]
    #[arg(help_heading = HEADING, long, value_name = "SHARES")]
    #[serde(skip_serializing)]
    pub mix: Option<String>,
    /// tpcc --wait: multiply keying and think times by this (for short studies and tests; a
    /// run with another value than 1 does not conform to the specification and says so)
    #[arg(help_heading = HEADING, long, default_value_t = 1.0, value_name = "F")]
    pub think_scale: f64,
}

impl Default for TpccArgs {
    fn default() -> TpccArgs {
        TpccArgs {
            warehouses: 1,
            tpcc_mix: Mix::default(),
            wait: false,
            mix: None,
            think_scale: 1.0,
        }
    }
}

impl crate::workload::FamilyOptions for TpccArgs {
    /// Refuses warehouses and keying and think times the benchmark cannot run.
    fn check(&self, rate: f64) -> Result<(), Error> {
        let bad = |option: &str, why: String| {
            Err(Error::Option {
                option: option.into(),
                why,
            })
        };
        if self.warehouses == 0 {
            return bad("warehouses", "must be at least 1".into());
        }
        if !(self.think_scale.is_finite() && self.think_scale > 0.0 && self.think_scale <= 100.0) {
            return bad(
                "think-scale",
                format!("{} must be above 0 and at most 100", self.think_scale),
            );
        }
        if self.wait && rate > 0.0 {
            return bad(
                "wait",
                "keying and think times pace the clients already; leave out --rate".into(),
            );
        }
        if self.think_scale != 1.0 && !self.wait {
            return bad(
                "think-scale",
                "scales the keying and think times of --wait; add --wait".into(),
            );
        }
        Ok(())
    }

    /// With keying and think times, ten terminals per warehouse, as the specification's.
    fn default_clients(&self, workload: &str) -> Option<u32> {
        (self.wait && workload == "tpcc").then(|| self.warehouses.saturating_mul(10))
    }

    fn resolve(&mut self, workload: &str) -> Result<(), Error> {
        let Some(mix) = &self.mix else {
            return Ok(());
        };
        let bad = |why: String| Error::Option {
            option: "mix".into(),
            why,
        };
        if workload != "tpcc" {
            return Err(bad("TPC-C's transaction mix: only for tpcc".into()));
        }
        self.tpcc_mix = Mix::parse(mix).map_err(bad)?;
        Ok(())
    }
}
