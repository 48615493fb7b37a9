//! dbsweep as a drop-in for sysbench 1.0.20: `dbsweep sysbench ARGS...`, or the binary run
//! through a link named `sysbench`. sysbench's grammar (`[options] SCRIPT [options] COMMAND
//! [options]`, options only as `--name[=value]`), its option names and aliases, its default
//! driver (MySQL), and its text on stdout, so that a driver script swaps the binary with one
//! `ln -s` and parses what it always parsed. A built-in workload name (`oltp_read_write`) runs
//! dbsweep's own workload, which sends sysbench's statements; any other script runs in the Lua
//! API. dbsweep's extras (every percentile, the HDR histogram) go to the `--output` results file.

mod ctests;
pub mod exit;
mod help;
pub mod output;
mod translate;
pub use translate::{Builtin, BuiltinCommand, Dropin, invoked_as_sysbench, main};
