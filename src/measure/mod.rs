//! Measuring one step: open the database (or start the managed server), load it if asked, run
//! the workload with the samplers around it, print and save the results. The run, prepare and
//! sweep commands and a script's run all come here.

mod open;
mod run;
mod step;

pub(crate) use open::{Db, load, load_line};
pub(crate) use run::{Printer, run_built, run_workload};
pub(crate) use step::measure;
