//! The command line, as parsed: raw values only. `plan` validates them and resolves defaults.
//! Option names and defaults are sysbench's, so that its users feel at home.

mod args;
mod help;
mod run;
pub(crate) mod sysbench;

pub use args::{
    CONNECT_TIMEOUT, CapacityOpts, Cli, ClientList, Command, CompareOpts, HdrOpts, KindSetting,
    LimitsOpts, MergeOpts, QUERY_TIMEOUT, ReportOpts, RunWords, ServersOpts, SweepOpts,
    SweepOverrides, SysbenchArgs, TpccAction, TpccCmd, TpccOpts, normalise_args, one_line,
};
pub(crate) use run::parse_bool;
pub use run::{DbArgs, Opts, RoleSpec, RunArgs, StartAt, parse_role};
