//! sysbench Lua scripts, unmodified (docs/workloads.md section 8): finding a script as sysbench
//! does, parsing its options as sysbench does, and running its commands in embedded LuaJIT
//! states over dbsweep's own databases. Layers, each file importing only those below it:
//! `state` (what a state shares: context, data, error handling) <- `options`, `rand`, `sql` (one
//! area of the `sysbench` table each) <- `api` (a new state with its table) <- `workload` (a
//! script's `event` as a dbsweep workload, one state per client) <- `commands` (help, prepare,
//! cleanup, run and a script's own). `scripts` (finding a script), `say` (the SQL API's log lines) and `watch` (the hook that stops a script's code, the
//! heap cap) are below them all.

mod api;
mod commands;
mod histogram;
mod options;
mod rand;
mod say;
mod scripts;
mod sql;
mod state;
mod watch;
mod workload;

pub use commands::{ScriptLine, load_only};
pub use scripts::{
    SYSBENCH_DIR, find_script, is_script, resolve, script_command, set_notices, set_process_argv,
    set_verbosity,
};
pub use state::Ctx;
pub use state::MYSQL_IGNORE_DEFAULT;
pub use workload::{boxed, command, on_target, run};
