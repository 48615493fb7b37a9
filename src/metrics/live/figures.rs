//! What a scrape reads: for each step that ran (its labels), the measured part's counts since
//! it began, and the latency and queue-time histograms in Prometheus' buckets.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};

use crate::error::ErrorClass;
use crate::metrics::{Hist, Snapshot};

/// The latency histogram's bucket bounds in seconds (100 us to a minute, about three a decade):
/// a dashboard's quantiles are as fine as these; the results file keeps the exact histogram.
pub const LATENCY_BUCKETS_S: [f64; 20] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 25.0, 50.0, 60.0, 120.0,
];

/// Who a series is of: the step (its workload), the target (a sweep target's name, or the
/// database kind of a single run: never a URL, whose user or password it could show), the
/// configuration and the client count.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct StepLabels {
    pub step: String,
    pub target: String,
    pub configuration: String,
    pub clients: u32,
}

impl StepLabels {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("step", self.step.clone()),
            ("target", self.target.clone()),
            ("configuration", self.configuration.clone()),
            ("clients", self.clients.to_string()),
        ]
    }
}

/// A histogram in Prometheus' buckets, filled from dbsweep's (whose counts sit at each
/// HDR bucket's lowest value, within 0.1% of the values recorded).
#[derive(Debug, Default)]
struct Buckets {
    counts: [u64; LATENCY_BUCKETS_S.len()],
    count: u64,
    sum_s: f64,
}

impl Buckets {
    fn add(&mut self, h: &Hist) {
        for (ns, n) in h.recorded() {
            let s = ns as f64 / 1e9;
            let i = LATENCY_BUCKETS_S.partition_point(|b| *b < s);
            if let Some(c) = self.counts.get_mut(i) {
                *c += n;
            }
            self.count += n;
            self.sum_s += s * n as f64;
        }
    }

    /// (upper bound, values in the bucket), +Inf last: the encoder makes them cumulative.
    fn per_bucket(&self) -> Vec<(f64, u64)> {
        let under: u64 = self.counts.iter().sum();
        let mut out: Vec<(f64, u64)> = LATENCY_BUCKETS_S.iter().copied().zip(self.counts).collect();
        out.push((f64::INFINITY, self.count - under));
        out
    }
}

/// One step's figures since its measured part began.
#[derive(Debug, Default)]
struct Totals {
    /// Seconds of the measured part the figures cover (the last interval's end).
    seconds: f64,
    events: u64,
    kinds: BTreeMap<&'static str, u64>,
    /// Reads, writes, others.
    queries: [u64; 3],
    /// Errors met, by class (each retried or ignored error counted once).
    errors: BTreeMap<&'static str, u64>,
    failed: u64,
    reconnects: u64,
    /// Under a rate: how late events began against their schedule, added up.
    lag_s: f64,
    latency: Buckets,
    queue: Option<Buckets>,
}

impl Totals {
    fn add(&mut self, snap: &Snapshot, kinds: &[&'static str], t: f64) {
        self.seconds = t;
        let c = &snap.counters;
        self.events += c.events;
        for (name, k) in kinds.iter().zip(&snap.kinds) {
            *self.kinds.entry(name).or_default() += k.events;
        }
        self.queries[0] += c.queries.reads;
        self.queries[1] += c.queries.writes;
        self.queries[2] += c.queries.others;
        for (class, n) in ErrorClass::RETRYABLE.iter().zip(c.retries) {
            *self.errors.entry(class.name()).or_default() += n;
        }
        self.failed += c.failed_events;
        self.reconnects += c.reconnects;
        self.lag_s += c.lag_sum_ns as f64 / 1e9;
        self.latency.add(&snap.latency);
        for q in &snap.queue {
            self.queue
                .get_or_insert_with(Buckets::default)
                .add(&q.latency);
        }
    }
}

#[derive(Debug, Default)]
struct State {
    /// The step running now, and its connected clients.
    running: Option<(StepLabels, u32)>,
    steps: BTreeMap<StepLabels, Totals>,
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> std::sync::MutexGuard<'_, State> {
    // The state holds sums only: one a panic left half-added is still readable.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The figures a scrape reads: the reporter adds to them, the endpoint encodes them.
#[derive(Debug)]
pub struct Live {
    state: Shared,
    registry: Registry,
}

impl Default for Live {
    fn default() -> Live {
        let state = Shared::default();
        let mut registry = Registry::default();
        registry.register_collector(Box::new(Scrape(state.clone())));
        Live { state, registry }
    }
}

impl Live {
    /// A step begins: its series start at zero (a step run again under the same labels, as a
    /// sweep's next round, goes on counting: counters only rise).
    pub fn begin(&self, labels: StepLabels) {
        let mut s = lock(&self.state);
        s.steps.entry(labels.clone()).or_default();
        s.running = Some((labels, 0));
    }

    /// The running step's clients are connected (`n`), or gone (0).
    pub fn clients(&self, n: u32) {
        if let Some((_, c)) = &mut lock(&self.state).running {
            *c = n;
        }
    }

    /// Adds an interval of the running step (the reporter's, once a tick), which ends `t`
    /// seconds into the measured part.
    pub fn add(&self, snap: &Snapshot, kinds: &[&'static str], t: f64) {
        let mut s = lock(&self.state);
        let State { running, steps } = &mut *s;
        if let Some((labels, _)) = running {
            steps.entry(labels.clone()).or_default().add(snap, kinds, t);
        }
    }

    /// The running step ended.
    pub fn end(&self) {
        lock(&self.state).running = None;
    }

    /// The figures as OpenMetrics text.
    pub fn text(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The collector the registry holds: encodes the figures at each scrape.
#[derive(Debug)]
struct Scrape(Shared);

impl Collector for Scrape {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let s = lock(&self.0);
        let series: Vec<(Vec<(&str, String)>, &Totals)> =
            s.steps.iter().map(|(l, t)| (l.pairs(), t)).collect();
        let counter = |enc: &mut DescriptorEncoder,
                       name: &str,
                       help: &str,
                       values: &mut dyn Iterator<Item = (Vec<(&str, String)>, u64)>|
         -> Result<(), std::fmt::Error> {
            let mut m = enc.encode_descriptor(name, help, None, MetricType::Counter)?;
            for (labels, v) in values {
                m.encode_family(&labels)?
                    .encode_counter::<NoLabelSet, _, u64>(&v, None)?;
            }
            Ok(())
        };
        counter(
            &mut enc,
            "dbsweep_events",
            "Events (transactions) done in the measured part.",
            &mut series.iter().map(|(l, t)| (l.clone(), t.events)),
        )?;
        counter(
            &mut enc,
            "dbsweep_kind_events",
            "Events done, by the workload's kind of event.",
            &mut series
                .iter()
                .flat_map(|(l, t)| t.kinds.iter().map(move |(k, n)| (with(l, "kind", k), *n))),
        )?;
        counter(
            &mut enc,
            "dbsweep_queries",
            "Queries sent, by type (read, write, other).",
            &mut series.iter().flat_map(|(l, t)| {
                ["read", "write", "other"]
                    .iter()
                    .zip(t.queries)
                    .map(move |(k, n)| (with(l, "type", k), n))
            }),
        )?;
        counter(
            &mut enc,
            "dbsweep_errors",
            "Errors met, by class (each retried or ignored error once).",
            &mut series
                .iter()
                .flat_map(|(l, t)| t.errors.iter().map(move |(k, n)| (with(l, "class", k), *n))),
        )?;
        counter(
            &mut enc,
            "dbsweep_failed_events",
            "Events given up after their last try failed.",
            &mut series.iter().map(|(l, t)| (l.clone(), t.failed)),
        )?;
        counter(
            &mut enc,
            "dbsweep_reconnects",
            "Reconnections of the clients.",
            &mut series.iter().map(|(l, t)| (l.clone(), t.reconnects)),
        )?;
        let mut m = enc.encode_descriptor(
            "dbsweep_schedule_lag",
            "Under a rate: how late events began against their schedule, added up (over events: the mean).",
            Some(&Unit::Seconds),
            MetricType::Counter,
        )?;
        for (labels, t) in &series {
            m.encode_family(labels)?
                .encode_counter::<NoLabelSet, _, u64>(&t.lag_s, None)?;
        }
        gauges(&mut enc, &series, s.running.as_ref())?;
        histograms(&mut enc, &series)
    }
}

/// A step's labels and its figures, as a scrape encodes them.
type Series<'a> = [(Vec<(&'static str, String)>, &'a Totals)];

/// The measured seconds and the connected clients of each step.
fn gauges(
    enc: &mut DescriptorEncoder,
    series: &Series,
    running: Option<&(StepLabels, u32)>,
) -> Result<(), std::fmt::Error> {
    let mut m = enc.encode_descriptor(
        "dbsweep_measured",
        "Seconds of the measured part the counts cover (events over it: the step's rate so far, as its results file will say).",
        Some(&Unit::Seconds),
        MetricType::Gauge,
    )?;
    for (labels, t) in series {
        m.encode_family(labels)?.encode_gauge(&t.seconds)?;
    }
    let mut m = enc.encode_descriptor(
        "dbsweep_clients",
        "Clients connected in the running step (0 once it ended).",
        None,
        MetricType::Gauge,
    )?;
    for (labels, _) in series {
        let n = match running {
            Some((r, n)) if r.pairs() == *labels => i64::from(*n),
            _ => 0,
        };
        m.encode_family(labels)?.encode_gauge(&n)?;
    }
    Ok(())
}

/// The latency and queue-time histograms of each step.
fn histograms(enc: &mut DescriptorEncoder, series: &Series) -> Result<(), std::fmt::Error> {
    let seconds = Unit::Seconds;
    let mut m = enc.encode_descriptor(
        "dbsweep_latency",
        "Event latency in the measured part.",
        Some(&seconds),
        MetricType::Histogram,
    )?;
    for (labels, t) in series {
        m.encode_family(labels)?.encode_histogram::<NoLabelSet>(
            t.latency.sum_s,
            t.latency.count,
            &t.latency.per_bucket(),
            None,
        )?;
    }
    let mut m = enc.encode_descriptor(
        "dbsweep_queue",
        "How long events waited for a worker or a shared connection before they began.",
        Some(&seconds),
        MetricType::Histogram,
    )?;
    for (labels, t) in series {
        if let Some(q) = &t.queue {
            m.encode_family(labels)?.encode_histogram::<NoLabelSet>(
                q.sum_s,
                q.count,
                &q.per_bucket(),
                None,
            )?;
        }
    }
    Ok(())
}

fn with(
    labels: &[(&'static str, String)],
    k: &'static str,
    v: &str,
) -> Vec<(&'static str, String)> {
    let mut l = labels.to_vec();
    l.push((k, v.to_string()));
    l
}
