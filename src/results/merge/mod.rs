//! `dbsweep merge`: the results files of client hosts that measured the same seconds
//! (`--start-at`) combined into one results file. Latency histograms are added, so every
//! percentile of the whole is exact; counters are summed; intervals are aligned by the
//! wall-clock second they ended in; each host's own figures stay under `parts`.
//!
//! Hardware figures are combined by what they measure: a client process's are summed over
//! the parts; a machine's are counted once per machine (two network namespaces of one
//! machine share it: their boot id says so); the server's, which every part observed over
//! the same seconds, are the mean of the parts' totals. All are then divided by the merged
//! operations.

mod combine;
mod hw;
mod kinds;
pub use combine::merge;
use combine::{add_histograms, merge_statements, total};
