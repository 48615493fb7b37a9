//! The commands, one small function each, called with the parsed command line; the top floor
//! of the library. A personality (the sysbench drop-in) turns its own command line into one
//! of these and hands it back here; a sysbench Lua script's command runs in `measure`.

mod dispatch;
mod limits;
mod personalities;
mod reference;
mod results;
mod tables;
mod tpcc;
pub use dispatch::run;
pub use personalities::as_personality;
