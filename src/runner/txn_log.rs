//! A run's transaction log, where a personality asks for one (pgbench's `-l`): the runner
//! hands it each measured transaction, each one given up and each one skipped, and the
//! personality writes them in its own format.

use std::time::Instant;

/// One logged transaction: its client, number, script, latency and lag in microseconds,
/// retries, end; `failed` when given up.
pub struct Entry {
    pub client: u32,
    pub number: u64,
    pub script: usize,
    pub latency_us: f64,
    pub lag_us: f64,
    pub retries: u64,
    pub end: Instant,
    /// Given up after its last try: the class of its last error.
    pub failed: Option<crate::db::ErrorClass>,
}

/// Where a run's transactions go.
pub trait TxnLog: Sync {
    /// A transaction done or given up; `sample` is a uniform draw in [0, 1) for sampling.
    fn log(&self, e: &Entry, sample: f64);
    /// A transaction skipped (late past `--latency-limit` under `--rate`).
    fn skipped(&self, client: u32, number: u64, at: Instant);
    /// The run is over: what is still open is written.
    fn finish(&self);
}

/// How a run's transaction log opens for its `clients`: the personality's options for it.
pub trait TxnLogs: Send + Sync + std::fmt::Debug {
    fn open(&self, clients: u32) -> Result<Box<dyn TxnLog>, String>;
}
