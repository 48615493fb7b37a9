//! Live metrics (`--metrics-listen`): the running step's figures as OpenMetrics, served to a
//! scraper such as Prometheus while the run goes on. The reporter thread adds each interval it
//! collects (once a tick, never the clients), and a scrape reads what is there under one lock:
//! scraping costs the clients nothing.

mod figures;
mod serve;

pub use figures::{LATENCY_BUCKETS_S, Live, StepLabels};
pub use serve::{Endpoint, address, listen};
