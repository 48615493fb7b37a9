//! The workload families' own options, one field per family that has any: on the command line
//! each under its family's heading, in a plan by the same names (read through
//! [`OptionsReader`]), in the results file's options beside the shared ones. Apart from the
//! registry of families, which builds the workloads that read them.

use crate::error::Error;

/// Reads one family's options out of a plan's table of options, as the command line reads the
/// same text (the plan's reader implements it).
pub trait OptionsReader {
    fn read<T: for<'de> serde::Deserialize<'de>>(&mut self) -> Result<T, String>;
}

#[derive(Clone, Debug, Default, clap::Args, serde::Serialize)]
pub struct FamilyArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub ibench: super::ibench::options::IbenchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub linkbench: super::linkbench::options::LinkbenchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub sqlbench: super::sqlbench::options::SqlbenchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub pgbench: super::pgbench::options::PgbenchArgs,
    #[command(flatten)]
    #[serde(flatten)]
    pub tpcc: super::tpcc::options::TpccArgs,
}

impl FamilyArgs {
    /// Each family's options out of a plan's table.
    pub fn read(r: &mut impl OptionsReader) -> Result<FamilyArgs, String> {
        Ok(FamilyArgs {
            ibench: r.read()?,
            linkbench: r.read()?,
            sqlbench: r.read()?,
            pgbench: r.read()?,
            tpcc: r.read()?,
        })
    }

    /// Refuses what a family cannot run.
    pub fn check(&self) -> Result<(), Error> {
        self.ibench.check()?;
        self.linkbench.check()?;
        self.tpcc.check()
    }
}
