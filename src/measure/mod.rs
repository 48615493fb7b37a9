//! Measuring one step: open the database (or start the managed server), load it if asked, run
//! the workload with the samplers around it, print and save the results. The run, prepare and
//! sweep commands and a script's commands all come here.

mod capacity;
#[cfg(test)]
mod groups_tests;
mod open;
mod run;
mod samplers;
mod script;
mod step;

pub(crate) use capacity::{capacity, search_on};
pub(crate) use open::{Db, load, load_line};
pub(crate) use run::run_workload;
pub use script::run_script;
pub(crate) use step::measure;
