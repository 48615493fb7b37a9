//! What a run measures. Each client thread records into its own [`Recorder`] (its mutex is
//! uncontended but for one reporter visit per interval); the reporter thread merges recorders
//! into [`Snapshot`]s. Nothing here prints.

mod beside;
mod cpufreq;
pub mod dbstats;
pub mod hist;
pub mod hw;
pub mod innodb;
pub mod live;
pub mod net;
pub mod node;
pub mod procfs;
pub mod profile;
mod recorder;
mod start;
pub mod waits;

pub use hist::Hist;
pub use recorder::{
    Counters, HIST_MAX_NS, KindStats, RETRY_CLASSES, Recorder, Snapshot, free_bytes, new_histogram,
    ns_to_ms, process_cpu_seconds, quantile_ms,
};
pub use start::MeasureStart;
