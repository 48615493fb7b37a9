//! Checking a plan file whole, before anything runs: every error names the file, the line and
//! the reason. One file per part of the plan: its own keys and client hosts (`keys`), targets,
//! configurations, steps; each rule is checked in one of them.

mod configs;
mod keys;
mod steps;
mod targets;
mod whole;
pub use whole::sqlite_url;
use whole::{MAX_CELL_PART, MAX_STEP_NAME, check_name_length};
#[cfg(test)]
use whole::{ONE_STEP, refused};
pub(crate) use whole::{configs_have_profile, detect_fraction, is_label, validate};
