//! Capacity under a latency limit (`dbsweep capacity WORKLOAD --p99 10ms`): the highest rate
//! whose latency percentile stays under a limit. A closed-loop probe measures what the clients
//! reach flat out; open-loop probes then rise through fractions of it (and beyond it, when it
//! fell short) until one goes over the limit (or meets errors, or cannot keep its rate), all
//! within `--max-probes`, and a bisection narrows the gap between
//! the last under and the first over. Each probe runs long enough that its percentile holds a
//! hundred events beyond it. The answer's probe is the results file, with every probe and the
//! queueing model's bound beside the answer.

use crate::cli::{CapacityOpts, RunArgs};
use crate::error::{Error, Outcome};
use crate::interrupt::INTERRUPT;
use crate::output::{Said, Style, Warning};
use crate::plan::search::{MIN_PROBE_S, duration_ms};
use crate::plan::{RunPlan, Search};
use crate::results::figures::{CapacityFigures, CapacityProbe};
use crate::results::{Results, ResultsFile};
use crate::workload::{self, Workload};

use super::open::{Db, load, load_line};
use super::step::measure;

/// The rising probes, as fractions of the closed-loop rate.
const RISING: [f64; 6] = [0.25, 0.5, 0.75, 0.9, 1.0, 1.25];
/// A probe that does less than this share of its rate did not keep it.
const KEPT: f64 = 0.95;
/// How far the answer may pass the model's bound before it contradicts it (the demands are
/// whole readings of /proc, as the report's bounds).
const PRECISION: f64 = 0.03;

/// The search's terms of `dbsweep capacity`'s options.
fn search_of(o: &CapacityOpts) -> Result<Search, Error> {
    let bad = |option: &str, why: String| Error::Option {
        option: option.into(),
        why,
    };
    let (percentile, limit) = match (&o.p99, o.percentile, &o.limit) {
        (Some(l), None, None) => (99.0, l),
        (None, Some(p), Some(l)) => (p, l),
        (None, None, None) => {
            return Err(Error::Usage(
                "capacity: give the limit, --p99 10ms (or --percentile P --limit 10ms)".into(),
            ));
        }
        _ => {
            return Err(Error::Usage(
                "capacity: give --p99 DURATION, or --percentile P with --limit DURATION".into(),
            ));
        }
    };
    let limit_ms = duration_ms(limit).map_err(|e| bad("limit", e))?;
    Search::new(
        percentile,
        limit_ms,
        o.precision / 100.0,
        o.max_probes,
        o.max_probe_time,
    )
    .map_err(|(option, why)| bad(option, why))
}

/// What the search keeps of a probe: its figures, and its results (for the file).
struct Probe {
    figures: CapacityProbe,
    results: Results,
}

pub(crate) fn capacity(o: &CapacityOpts, style: Style) -> Result<Outcome, Error> {
    let search = search_of(o)?;
    if o.args.rate > 0.0 || o.args.phases.is_some() {
        return Err(Error::Usage(
            "capacity: the search sets the rate of each probe; leave out --rate and --phases"
                .into(),
        ));
    }
    // A probe's length is the search's (long enough for its verdict's sample): a count of
    // events would cut every probe short of it.
    if o.args.events > 0 || o.args.events_per_client > 0 {
        return Err(Error::Usage(
            "capacity: the search sets each probe's length (until its percentile holds a hundred events beyond it, at least 2 s, at most --max-probe-time); leave out --events"
                .into(),
        ));
    }
    // Everything about the input is judged before anything runs.
    let plan = RunPlan::from_args(&o.workload, &o.args)?.styled(style);
    // The live metrics' port is taken first: each probe is a step of its own there.
    let endpoint = plan
        .metrics_listen
        .map(|a| crate::metrics::live::listen(&a.to_string(), "--metrics-listen"))
        .transpose()?;
    if let Some(e) = &endpoint {
        plan.style.say(Said::Remark(&format!(
            "live metrics at http://{}/metrics",
            e.addr
        )));
    }
    let out = plan
        .output
        .as_deref()
        .map(ResultsFile::create_results)
        .transpose()?;
    let workload = workload::build(&plan.workload, &plan.workload_opts)?;
    let db = Db::open(&plan, plan.prepare)?;
    if plan.prepare || (db.server.is_some() && !db.tables_exist(workload.as_ref())?) {
        let l = load(&plan, db.target.as_ref(), workload.as_ref())?;
        plan.style.say(Said::Remark(&load_line(&l)));
        workload.verify(db.target.as_ref())?;
    }
    let (results, figures) = Runner {
        workload_name: &o.workload,
        args: &o.args,
        search: &search,
        db: &db,
        workload: workload.as_ref(),
        style,
        live: endpoint.as_ref().map(|e| e.live.clone()),
        probes: Vec::new(),
    }
    .search()?;
    print!("{}", summary(&figures));
    if let Some(c) = &figures.contradiction {
        plan.style.say(Said::Warning(Warning::Other, c));
    }
    if let Some(out) = out {
        let path = out.path().display().to_string();
        out.commit(&results)?;
        plan.style
            .say(Said::Remark(&format!("results written to {path}")));
    }
    Ok(if INTERRUPT.load(std::sync::atomic::Ordering::Relaxed) {
        Outcome::Interrupted
    } else if figures.rate_per_s.is_none() {
        Outcome::Failed
    } else {
        Outcome::Done
    })
}

/// Runs the search for `workload_name` with the run options `args` on the opened `db`:
/// the answer's probe (the closed loop's when no rate kept the limit) with the search in its
/// `capacity` section, and that section.
pub(crate) fn search_on(
    workload_name: &str,
    args: &RunArgs,
    search: &Search,
    db: &Db,
    workload: &dyn Workload,
    style: Style,
) -> Result<(Results, CapacityFigures), Error> {
    Runner {
        workload_name,
        args,
        search,
        db,
        workload,
        style,
        live: None,
        probes: Vec::new(),
    }
    .search()
}

impl Runner<'_> {
    /// The search: the closed loop, the rising probes, the bisection.
    fn search(mut self) -> Result<(Results, CapacityFigures), Error> {
        let search = self.search;
        let run = &mut self;
        let closed = run.probe(None)?;
        let ceiling = closed.figures.tps;
        // Rising, then halving the gap between the highest under and the lowest over.
        let (mut under, mut over): (Option<f64>, Option<f64>) = (None, None);
        // A closed loop measured cold (a server still settling after the load) may fall
        // short of what the clients reach: past the last fraction the probes keep rising by
        // its step until one goes over, as far as --max-probes lets them.
        let last = RISING[RISING.len() - 1];
        let beyond = std::iter::successors(Some(last * 1.25), |f| Some(f * 1.25));
        for f in RISING.into_iter().chain(beyond) {
            if run.stopped() || run.probes.len() as u32 >= search.max_probes() {
                break;
            }
            let rate = (ceiling * f).max(0.001);
            if run.probe(Some(rate))?.figures.verdict == "under" {
                under = Some(rate);
            } else {
                over = Some(rate);
                break;
            }
        }
        while let Some(hi) = over {
            let lo = under.unwrap_or(0.0);
            let close = under.is_some_and(|lo| hi / lo <= 1.0 + search.precision());
            if close || run.probes.len() as u32 >= search.max_probes() || run.stopped() {
                break;
            }
            // Under nothing yet: down by halves (the lowest rising probe was over already).
            let mid = if under.is_some() {
                (lo + hi) / 2.0
            } else {
                hi / 2.0
            };
            if run.probe(Some(mid))?.figures.verdict == "under" {
                under = Some(mid);
            } else {
                over = Some(mid);
            }
            if under.is_none() && mid < 1.0 {
                break;
            }
        }
        let figures = run.figures(under, over, ceiling);
        let mut best = under
            .and_then(|u| run.probes.iter().find(|p| p.figures.rate_per_s == Some(u)))
            .map(|p| p.results.clone())
            .unwrap_or_else(|| run.probes[0].results.clone());
        best.capacity = Some(figures.clone());
        Ok((best, figures))
    }
}

struct Runner<'a> {
    workload_name: &'a str,
    args: &'a RunArgs,
    search: &'a Search,
    db: &'a Db,
    workload: &'a dyn Workload,
    style: Style,
    /// `--metrics-listen`'s figures: each probe is a step there (`WORKLOAD probe N`).
    live: Option<std::sync::Arc<crate::metrics::live::Live>>,
    probes: Vec<Probe>,
}

impl Runner<'_> {
    fn stopped(&self) -> bool {
        INTERRUPT.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs one probe: closed loop (None) or at `rate` events/s.
    fn probe(&mut self, rate: Option<f64>) -> Result<&Probe, Error> {
        let mut args: RunArgs = self.args.clone();
        args.prepare = false;
        args.output = None;
        args.report_interval = 0.0;
        args.metrics_listen = None;
        args.rate = rate.unwrap_or(0.0);
        args.time = rate.map_or(MIN_PROBE_S, |r| self.search.seconds(r));
        let mut plan = RunPlan::from_args(self.workload_name, &args)?.styled(self.style);
        if let Some(live) = &self.live {
            live.begin(crate::metrics::live::StepLabels {
                step: format!("{} probe {}", self.workload_name, self.probes.len() + 1),
                target: crate::db::dialect_of(&plan.target)
                    .map_or("unknown", |d| d.name())
                    .to_string(),
                configuration: String::new(),
                clients: plan.runner.threads,
            });
            plan.runner.live = Some(live.clone());
        }
        let quiet = |_: Said<'_>| {};
        let results = measure(
            &plan,
            self.db,
            self.workload,
            None,
            &mut |_| {},
            &quiet,
            &INTERRUPT,
        )?;
        let percentile_ms = percentile_ms(&results, self.search.percentile());
        let errors = results.errors.values().sum::<u64>() + results.failed_events;
        let verdict = match rate {
            None => "closed loop",
            Some(_) if errors > 0 || results.error.is_some() => "errors",
            Some(r) if results.tps < r * KEPT => "rate not kept",
            Some(_) if percentile_ms > self.search.limit_ms() => "over",
            Some(_) => "under",
        };
        let figures = CapacityProbe {
            rate_per_s: rate,
            tps: results.tps,
            time_s: results.time_s,
            events: results.events,
            percentile_ms,
            errors,
            verdict: verdict.into(),
        };
        self.style.progress(&format!(
            "probe {}: {}, {:.1}/s done, p{} {:.3} ms: {}",
            self.probes.len() + 1,
            rate.map_or("closed loop".into(), |r| format!("{r:.1}/s asked")),
            figures.tps,
            self.search.percentile(),
            percentile_ms,
            verdict
        ));
        self.probes.push(Probe { figures, results });
        Ok(self.probes.last().expect("just pushed"))
    }

    /// The search's figures: the answer, the probes, the model's bound beside them.
    fn figures(&self, under: Option<f64>, over: Option<f64>, ceiling: f64) -> CapacityFigures {
        let (bound, from) = bound(&self.probes);
        // The bound is on the rate done: the answer's probe may have done up to 5% less than
        // it asked and still kept its rate (KEPT), so what it did is set against the bound.
        let done = under.and_then(|u| {
            self.probes
                .iter()
                .find(|p| p.figures.rate_per_s == Some(u))
                .map(|p| p.figures.tps)
        });
        let contradiction = match (under, done, bound) {
            (Some(u), Some(d), Some(b)) if d > b * (1.0 + PRECISION) => Some(format!(
                "the answer's probe did {d:.1}/s (of {u:.1}/s asked), above the queueing model's bound of {b:.1}/s ({from}): the model does not hold here"
            )),
            _ => None,
        };
        CapacityFigures {
            percentile: self.search.percentile(),
            limit_ms: self.search.limit_ms(),
            rate_per_s: under,
            over_per_s: over,
            closed_loop_per_s: ceiling,
            bound_per_s: bound,
            bound_from: from,
            contradiction,
            probes: self.probes.iter().map(|p| p.figures.clone()).collect(),
        }
    }
}

/// The latency at `percentile` of a run, in ms, from its histogram (its fixed percentiles
/// when it has none).
fn percentile_ms(r: &Results, percentile: f64) -> f64 {
    match r.histogram.decode() {
        Ok(h) if !h.is_empty() => h.value_at_quantile(percentile / 100.0) as f64 / 1e6,
        _ => r.latency_ms.p99,
    }
}

/// The queueing model's upper bound of throughput from the probes: each client runs one event
/// at a time, so `clients / R` where R is the least mean response time seen; and the machine's
/// CPU serves `cores / D` events a second, D its least CPU per event. The lesser, and whence.
fn bound(probes: &[Probe]) -> (Option<f64>, String) {
    let least = |f: &dyn Fn(&Results) -> Option<f64>| {
        probes
            .iter()
            .filter_map(|p| f(&p.results))
            .filter(|v| *v > 0.0)
            .min_by(f64::total_cmp)
    };
    let mut bounds = Vec::new();
    let clients = probes.first().map_or(1, |p| p.results.threads);
    if let Some(r_s) = least(&|r| Some(r.latency_ms.avg / 1e3)) {
        bounds.push((
            f64::from(clients) / r_s,
            format!(
                "{clients} client(s) over a least mean response of {:.3} ms",
                r_s * 1e3
            ),
        ));
    }
    let cores = probes
        .first()
        .and_then(|p| p.results.hw.as_ref())
        .map_or(0, |h| h.cpus);
    if let Some(d_s) = least(&|r| r.hw.as_ref()?.cpu_us_per_op.machine.map(|us| us / 1e6))
        && cores > 0
    {
        bounds.push((
            cores as f64 / d_s,
            format!(
                "{cores} core(s) over a least machine CPU of {:.1} us per event",
                d_s * 1e6
            ),
        ));
    }
    match bounds.into_iter().min_by(|a, b| a.0.total_cmp(&b.0)) {
        Some((b, from)) => (Some(b), from),
        None => (None, "no demand measured".into()),
    }
}

/// What the command prints: the answer, the probes, the bound.
fn summary(c: &CapacityFigures) -> String {
    let mut s = format!(
        "\nCapacity under p{} <= {} ms (higher is better):\n",
        c.percentile,
        crate::cfmt::quoted(c.limit_ms)
    );
    match c.rate_per_s {
        Some(r) => s.push_str(&format!(
            "    {:<34}{r:.1} events/s\n",
            "highest rate under the limit:"
        )),
        None => s.push_str("    no rate probed kept the percentile under the limit\n"),
    }
    match (c.over_per_s, c.rate_per_s) {
        (Some(o), _) => s.push_str(&format!(
            "    {:<34}{o:.1} events/s\n",
            "lowest rate over it (or failing):"
        )),
        (None, Some(_)) => s.push_str(
            "    no rate probed went over the limit: the probes ran out first (--max-probes)\n",
        ),
        (None, None) => {}
    }
    s.push_str(&format!(
        "    {:<34}{:.1} events/s\n",
        "closed loop, the same clients:", c.closed_loop_per_s
    ));
    match c.bound_per_s {
        Some(b) => s.push_str(&format!(
            "    {:<34}{b:.1} events/s ({})\n",
            "queueing model's bound:", c.bound_from
        )),
        None => s.push_str(&format!(
            "    queueing model's bound: none ({})\n",
            c.bound_from
        )),
    }
    s.push_str("\n    probe  asked/s      done/s   latency ms   verdict\n");
    for (i, p) in c.probes.iter().enumerate() {
        s.push_str(&format!(
            "    {:>5}  {:>9}  {:>10.1}  {:>11.3}   {}\n",
            i + 1,
            p.rate_per_s.map_or("closed".into(), |r| format!("{r:.1}")),
            p.tps,
            p.percentile_ms,
            p.verdict
        ));
    }
    s
}
