//! What reports read and what they show: the entries of results files and sweep directories
//! ([`model`]), the tables they become ([`tables`]), and the statistics behind a comparison
//! ([`stats`]). Below the workloads, so that a workload family's folder can say what its
//! report shows, and below the report, which lays the tables out.

pub mod columns;
pub mod model;
pub mod stats;
pub mod tables;
