//! The results file: the contract between runs and reports. Written and read by the same
//! types, versioned, checked by `schema/results.schema.json`, written atomically (a temporary
//! file in the same directory, then a rename), so a crash never leaves half a file.

pub mod diagnosis;
pub mod figures;
mod fuzzing;
mod histogram;
pub mod limits;
pub mod merge;
mod record;
mod schema;

pub use crate::atomic::{
    ResultsFile, check_output_apart, check_replaceable, is_sweep_dir, write_atomic,
};
pub use figures::{Latency, Part};
pub use fuzzing::{fuzz_histogram_bytes, fuzz_results_text};
pub use histogram::{HIST_MAX_NS, HistogramData, new_histogram};
pub use record::{PauseReport, Recovery, StepRecord};
use schema::parse_json;

/// The environment variable naming a directory for the drop-ins' results files: pgbench's
/// personality writes one there only when it is set (pgbench's own command line has no room
/// for dbsweep's `--output`, and drivers check the working directory).
pub const RESULTS_DIR_ENV: &str = "DBSWEEP_RESULTS_DIR";
pub use schema::{
    HISTOGRAM_ENCODING, HostId, MAX_SECONDS, Queries, RateInfo, Results, SCHEMA_VERSION,
    ServerInfo, Serving, StatementFigures, TargetInfo, Tool, TpccFigures, TxnFigures, names_a_tool,
    times_operations, utc_datetime, utc_parts,
};
