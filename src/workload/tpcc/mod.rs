//! TPC-C (docs/workloads.md section 7): the nine tables, the loader, the transaction mix and
//! the twelve consistency checks (`commands::tpcc` runs `dbsweep tpcc prepare | check |
//! cleanup` with them).

pub mod check;
mod client;
pub mod deck;
mod family;
mod input;
pub mod load;
pub mod mix;
pub mod options;
mod report;
pub mod run;
pub mod schema;
pub mod stmts;
mod txns;

pub use family::TpccFamily;
pub use mix::Tpcc;
pub use txns::verify_conditions;
