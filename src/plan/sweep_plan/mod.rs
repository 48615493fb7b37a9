//! Sweep plans: a TOML file (or a built-in plan) naming targets, configurations, client counts
//! and an ordered list of steps, validated whole before anything runs. Every error names the
//! file, the line and the reason.
//!
//! Each workload step becomes the option list of a `dbsweep run`, parsed by the same CLI
//! parser and checked by the same [`RunPlan`] rules as a single run: a plan cannot say what the
//! command line could not.

mod cells;
mod file;
mod load;
mod options;
mod series;
mod step_options;
#[cfg(test)]
mod tests;
mod validate;

pub use cells::{Cell, Config, Host, Pause, Step, StepKind, Sweep, SweepTarget, TargetSpec};
pub use file::{Class, ConfigDef, LoadDef, PlanFile, StepDef, TargetDef};
pub use load::format_seconds;
pub use options::parse_size;
pub use step_options::StepOptions;
pub use validate::sqlite_url;
