//! The samplers beside a measured run, as one list: each started before the run from the
//! measured part's start, each finished after it into what the step sampled (`Sampled`), which
//! goes into the results with a warning for each that failed.

use super::open::Db;
use crate::db::{DbError, Target};
use crate::error::Error;
use crate::metrics::{self, MeasureStart};
use crate::output::{Said, Warning};
use crate::plan::RunPlan;
use crate::results::Results;
use crate::results::diagnosis::{Profile, WaitProfile};
use crate::results::figures::{HostFigures, HwFigures, ServerStats};

/// What a sampler learns at the run's end.
pub(super) struct Ended<'a> {
    pub target: &'a dyn Target,
    pub plan: &'a RunPlan,
    /// The run's events (the figures are per event).
    pub events: u64,
    /// The pool's page cache counters where the run ended well; None where it failed (the
    /// server's counters are then not read).
    pub cache: Option<Option<[u64; 3]>>,
}

/// What the samplers measured.
#[derive(Default)]
pub(super) struct Sampled {
    pub hw: Option<HwFigures>,
    pub server_host: Option<HostFigures>,
    pub profile: Option<Result<Profile, String>>,
    pub waits: Option<Result<WaitProfile, DbError>>,
    pub server_stats: Option<Result<ServerStats, DbError>>,
}

/// A sampler of the step.
pub(super) trait StepSampler {
    /// Stops it and keeps what it measured in `into`.
    fn finish(self: Box<Self>, end: &Ended, into: &mut Sampled);
}

/// The samplers a run's plan asks for, started from `start` (`offline`: no connection to the
/// database, so none of those that need one). A sampler that cannot start on the database is
/// an error; a profiler that cannot start is said and left out.
pub(super) fn start(
    plan: &RunPlan,
    db: &Db,
    start: &MeasureStart,
    offline: bool,
    say: &dyn Fn(Said<'_>),
) -> Result<Vec<Box<dyn StepSampler>>, Error> {
    let target = db.target.as_ref();
    let url = target.display_url();
    let mut out: Vec<Box<dyn StepSampler>> = Vec::new();
    // The server's counters first (a database that cannot give them fails the step before
    // anything else starts), finished last.
    let probe = if offline {
        None
    } else {
        Some(
            metrics::dbstats::Probe::start(target, start.clone())
                .map_err(|e| Error::db(&url, e))?,
        )
    };
    // First to finish: the client's peaks are read right after the run.
    if plan.hw_sample {
        let subject = metrics::hw::Subject {
            link_mbit: plan.link_mbit,
            ..db.hw_subject()
        };
        let peak_reset = metrics::procfs::reset_own_peak_rss();
        // Embedded SQLite's memory is in the client's: its own peak is told apart.
        let embedded = target.dialect() == crate::db::Dialect::Sqlite;
        if embedded {
            crate::db::sqlite::reset_heap_peak();
        }
        out.push(Box::new(Hardware {
            sampler: metrics::hw::Sampler::start(subject, start.clone()),
            peak_reset,
            embedded,
        }));
    }
    if !offline
        && let Some(w) =
            metrics::waits::WaitSampler::start(target, start.clone(), plan.wait_sample_hz)
                .map_err(|e| Error::db(&url, e))?
    {
        out.push(Box::new(w));
    }
    if let Some(hz) = plan.profile {
        match db.start_profiler(start.clone(), hz) {
            Ok(p) => out.push(Box::new(p)),
            Err(e) => say(Said::Warning(
                Warning::Other,
                &format!("--profile: {e}; the run is not profiled"),
            )),
        }
    }
    if let Some(node) = plan.server_metrics.as_deref() {
        out.push(Box::new(metrics::node::NodeScraper::start(
            node,
            start.clone(),
        )));
    }
    if let Some(probe) = probe {
        out.push(Box::new(probe));
    }
    Ok(out)
}

/// Every sampler finished, in the list's order.
pub(super) fn finish(samplers: Vec<Box<dyn StepSampler>>, end: &Ended) -> Sampled {
    let mut sampled = Sampled::default();
    for s in samplers {
        s.finish(end, &mut sampled);
    }
    sampled
}

/// The hardware sampler, and the client's peak memory (and embedded SQLite's) over the run.
struct Hardware {
    sampler: metrics::hw::Sampler,
    peak_reset: bool,
    embedded: bool,
}

impl StepSampler for Hardware {
    fn finish(self: Box<Self>, end: &Ended, into: &mut Sampled) {
        let client_peak_rss_kb = self
            .peak_reset
            .then(metrics::procfs::own_peak_rss_kb)
            .flatten();
        let sqlite_heap_peak_kb =
            (self.peak_reset && self.embedded).then(crate::db::sqlite::heap_peak_kb);
        into.hw = self.sampler.finish(end.events).map(|mut h| {
            h.client_peak_rss_kb = client_peak_rss_kb;
            h.sqlite_heap_peak_kb = sqlite_heap_peak_kb;
            h
        });
    }
}

impl StepSampler for metrics::waits::WaitSampler {
    fn finish(self: Box<Self>, _: &Ended, into: &mut Sampled) {
        into.waits = Some((*self).finish());
    }
}

impl StepSampler for metrics::profile::Profiler {
    fn finish(self: Box<Self>, _: &Ended, into: &mut Sampled) {
        into.profile = Some((*self).finish());
    }
}

impl StepSampler for metrics::node::NodeScraper {
    fn finish(self: Box<Self>, end: &Ended, into: &mut Sampled) {
        let devices = (
            end.plan.server_device.as_deref(),
            end.plan.server_net_device.as_deref(),
        );
        into.server_host = Some((*self).finish(end.events, devices, end.plan.link_mbit));
    }
}

impl StepSampler for metrics::dbstats::Probe {
    /// The server's counters, read only after a run that ended well.
    fn finish(self: Box<Self>, end: &Ended, into: &mut Sampled) {
        if let Some(cache) = end.cache {
            into.server_stats = Some((*self).finish(end.target, cache, end.events));
        }
    }
}

impl Sampled {
    /// Into `results`: each figure measured; each sampler that failed said as a warning, the
    /// measurement standing without it.
    pub(super) fn attach(self, results: &mut Results, url: &str, say: &dyn Fn(Said<'_>)) {
        results.hw = self.hw;
        results.server_host = self.server_host;
        match self.profile {
            Some(Ok(p)) => {
                if p.unknown_share > 0.5 {
                    say(Said::Warning(
                        Warning::Other,
                        &format!(
                            "--profile: {:.0}% of the samples have no symbol for their function: the server's binaries are stripped (install their debug symbols)",
                            p.unknown_share * 100.0
                        ),
                    ));
                }
                results.profile = Some(p);
            }
            Some(Err(e)) => say(Said::Warning(
                Warning::Other,
                &format!("--profile: {e}; the run is not profiled"),
            )),
            None => {}
        }
        match self.waits {
            Some(Ok(w)) => results.waits = Some(w),
            Some(Err(e)) => say(Said::Warning(
                Warning::ServerLost,
                &format!("the wait profile of {url} stopped: {e} (the step has none)"),
            )),
            None => {}
        }
        match self.server_stats {
            None => {}
            Some(Ok(s)) => results.server_stats = Some(s),
            // The measurement stands without them; a server gone at the end is said by the run.
            Some(Err(e)) => say(Said::Warning(
                Warning::ServerLost,
                &format!("could not read the server's counters on {url}: {e}"),
            )),
        }
    }
}
