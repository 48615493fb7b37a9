//! dbsweep: OLTP database benchmarking. Each step of the flow (plan -> db -> workload ->
//! runner -> metrics -> results -> output) has its module; `measure` measures one step,
//! `sweep` runs a plan of them, `commands` calls one function per command on top, and no file
//! imports one that imports it back (the README's Layout section lists the floors).

pub mod atomic;
pub mod cfmt;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod dataset;
pub mod db;
pub mod dropin;
pub mod error;
pub mod input;
pub mod interrupt;
pub mod ioengine;
pub mod limits;
pub mod lua;
pub mod measure;
pub mod metrics;
pub mod output;
pub mod plan;
pub mod report;
pub mod results;
pub mod runner;
pub mod server;
pub mod sweep;
pub mod workload;

pub use error::Outcome;
pub use interrupt::interrupted;
