//! Merging the results files of one step's client hosts into one: counts summed, histograms added, intervals aligned.

use std::collections::BTreeMap;

use super::hw::{merge_hw, merge_server_host};
use super::kinds::{add_kind_histograms, merge_phases, merge_roles, merge_serving, merge_tpcc};
use crate::results::figures::Part;

use hdrhistogram::Histogram;

use crate::results::figures::Interval;
use crate::results::{HistogramData, Latency, Queries, RateInfo, Results, StatementFigures};

/// Parts whose measured parts began further apart than this did not measure the same seconds.
const ALIGNED_S: f64 = 1.0;

/// Merges `files` (name as given, contents); returns the merged results and warnings worth
/// printing. Err: the files cannot be merged (one line naming the file and why).
pub fn merge(files: &[(String, Results)]) -> Result<(Results, Vec<String>), String> {
    let [(first_name, first), ..] = files else {
        return Err("no results files to merge".into());
    };
    if files.len() < 2 {
        return Err(format!(
            "{first_name}: one file has nothing to merge with (give each client host's file)"
        ));
    }
    let mut warnings = check_parts(files)?;
    let (aligned, from, time_s) = measured_span(files, &mut warnings);
    let per_s = |n: f64| if time_s > 0.0 { n / time_s } else { 0.0 };
    let events = total("events", files.iter().map(|(_, r)| r.events))?;
    let queries = merge_queries(files)?;
    let errors = merge_errors(files)?;
    let histogram = add_histograms(
        files
            .iter()
            .map(|(name, r)| (name.as_str(), "histogram", Some(&r.histogram))),
    )?
    .ok_or("no histogram")?;
    let rate = merge_rate(files, events);
    let serving = merge_serving(files)?;
    let error = files.iter().find_map(|(name, r)| {
        r.error
            .as_ref()
            .map(|e| format!("{}: {e}", r.client_id.as_deref().unwrap_or(name)))
    });
    let tpcc = merge_tpcc(files, events, time_s)?;
    let statements = merge_lists(files, events, |r| &r.statements)?;
    let scripts = merge_lists(files, events, |r| &r.scripts)?;
    let roles = merge_roles(files, time_s)?;
    let server_stats = merge_server_stats(first, events);
    let phases = merge_phases(files, &mut warnings)?;
    let merged = Results {
        phases,
        capacity: None,
        schema_version: super::super::SCHEMA_VERSION,
        tool: merged_tool(first, files),
        workload: first.workload.clone(),
        target: first.target.clone(),
        server: first.server.clone(),
        started_at: files.iter().map(|(_, r)| r.started_at).min().unwrap_or(0),
        threads: total("threads", files.iter().map(|(_, r)| r.threads))?,
        time_s,
        warmup_s: files.iter().map(|(_, r)| r.warmup_s).fold(0.0, f64::max),
        events,
        tps: per_s(events as f64),
        qps: per_s(queries.total as f64),
        rows_per_s: per_s(queries.rows as f64),
        queries,
        latency_ms: Latency::from_histogram(&histogram),
        errors,
        retries: total("retries", files.iter().map(|(_, r)| r.retries))?,
        reconnects: total("reconnects", files.iter().map(|(_, r)| r.reconnects))?,
        failed_events: total("failed events", files.iter().map(|(_, r)| r.failed_events))?,
        failed_deadlocks: total(
            "failed deadlocks",
            files.iter().map(|(_, r)| r.failed_deadlocks),
        )?,
        failed_serialization: total(
            "failed serialization",
            files.iter().map(|(_, r)| r.failed_serialization),
        )?,
        retried_events: total(
            "retried events",
            files.iter().map(|(_, r)| r.retried_events),
        )?,
        late_events: total("late events", files.iter().map(|(_, r)| r.late_events))?,
        skipped_events: total(
            "skipped events",
            files.iter().map(|(_, r)| r.skipped_events),
        )?,
        reconnect_s: files
            .iter()
            .filter_map(|(_, r)| r.reconnect_s)
            .reduce(|a, b| a + b),
        rate,
        serving,
        thread_events: files
            .iter()
            .flat_map(|(_, r)| r.thread_events.iter().copied())
            .collect(),
        thread_time_s: files
            .iter()
            .flat_map(|(_, r)| r.thread_time_s.iter().copied())
            .collect(),
        since_checkpoint: None,
        intervals: merge_intervals(files, aligned.then_some(from))?,
        histogram: HistogramData::encode(&histogram),
        options: first.options.clone(),
        prepare: None,
        hw: merge_hw(files, events),
        server_stats,
        waits: files.iter().find_map(|(_, r)| r.waits.clone()),
        tpcc,
        profile: files.iter().find_map(|(_, r)| r.profile.clone()),
        statements,
        scripts,
        interrupted: files.iter().any(|(_, r)| r.interrupted),
        aborted_clients: files.iter().map(|(_, r)| r.aborted_clients).sum(),
        error,
        client_id: None,
        measured_from: aligned.then_some(from),
        host: None,
        server_host: merge_server_host(files, events),
        parts: parts_of(files),
        roles,
        connect_s: None,
        limits: files.iter().find_map(|(_, r)| r.limits.clone()),
    };
    // What merge writes, report and merge read back: refused here if they would not.
    merged
        .check()
        .map_err(|e| format!("the merged figures are not a results file's ({e}): not merged"))?;
    let text = serde_json::to_string(&merged).map_err(|e| e.to_string())?;
    crate::results::schema::parse_json::<Results>(
        std::path::Path::new("merged"),
        &text,
        "results file",
    )
    .map_err(|e| format!("the merged figures would not read back ({e}): not merged"))?;
    Ok((merged, warnings))
}

/// One list of statement figures (the statements, pgbench's scripts) of every part, merged.
fn merge_lists(
    files: &[(String, Results)],
    events: u64,
    list: fn(&Results) -> &Vec<StatementFigures>,
) -> Result<Vec<StatementFigures>, String> {
    merge_statements(
        files.iter().map(|(f, r)| (f.as_str(), list(r).as_slice())),
        events,
    )
}

/// This program, and the clients' clock where they all timed with the same one.
fn merged_tool(first: &Results, files: &[(String, Results)]) -> super::super::Tool {
    super::super::Tool {
        clock: first
            .tool
            .clock
            .clone()
            .filter(|c| files.iter().all(|(_, r)| r.tool.clock.as_ref() == Some(c))),
        ..super::super::Tool::this()
    }
}

/// The parts' queries by kind, summed.
fn merge_queries(files: &[(String, Results)]) -> Result<Queries, String> {
    let q = |f: fn(&Queries) -> u64| total("queries", files.iter().map(|(_, r)| f(&r.queries)));
    Ok(Queries {
        read: q(|q| q.read)?,
        write: q(|q| q.write)?,
        other: q(|q| q.other)?,
        total: q(|q| q.total)?,
        rows: q(|q| q.rows)?,
    })
}

/// The parts' errors by class, summed.
fn merge_errors(files: &[(String, Results)]) -> Result<BTreeMap<String, u64>, String> {
    let mut errors: BTreeMap<String, u64> = BTreeMap::new();
    for (_, r) in files {
        for (k, v) in &r.errors {
            let e = errors.entry(k.clone()).or_insert(0);
            *e = total("errors", [*e, *v])?;
        }
    }
    Ok(errors)
}

/// Checks that `files` are parts of one run, each once; warnings worth printing.
fn check_parts(files: &[(String, Results)]) -> Result<Vec<String>, String> {
    let [(first_name, first), ..] = files else {
        return Err("no results files to merge".into());
    };
    let mut warnings = Vec::new();
    let mut ids = BTreeMap::new();
    let mut runs = BTreeMap::new();
    for (name, r) in files {
        // One run given twice (the same file, or a copy) would count twice.
        let host = r.host.as_ref().map(|h| h.name.clone());
        let run = (
            host.clone(),
            r.client_id.clone(),
            r.started_at,
            r.measured_from.map(f64::to_bits),
        );
        if let Some(other) = runs.insert(run, name.clone()) {
            return Err(format!(
                "{name}: the same run as {other} (host {}, client id {}, started at {}): \
                 give each client host's file once",
                host.as_deref().unwrap_or("not recorded"),
                r.client_id.as_deref().unwrap_or("none"),
                r.started_at
            ));
        }
        let roles = |r: &Results| -> Vec<String> {
            r.roles
                .iter()
                .map(|g| match g.rate {
                    Some(_) => format!("{} (paced)", g.workload),
                    None => g.workload.clone(),
                })
                .collect()
        };
        if roles(r) != roles(first) {
            let list = |v: Vec<String>| {
                if v.is_empty() {
                    "none".to_string()
                } else {
                    v.join(", ")
                }
            };
            return Err(format!(
                "{name}: the groups beside its measured clients ({}) are not {first_name}'s ({}): only parts of one run merge",
                list(roles(r)),
                list(roles(first))
            ));
        }
        if !r.parts.is_empty() {
            return Err(format!(
                "{name}: already a merged file: merge the client hosts' own files instead"
            ));
        }
        if r.workload != first.workload {
            return Err(format!(
                "{name}: workload {} is not {first_name}'s {}: only parts of one run merge",
                r.workload, first.workload
            ));
        }
        if r.target.kind != first.target.kind {
            return Err(format!(
                "{name}: a {} target is not {first_name}'s {}: only parts of one run merge",
                r.target.kind, first.target.kind
            ));
        }
        if let Some(id) = &r.client_id
            && let Some(other) = ids.insert(id.clone(), name.clone())
        {
            return Err(format!(
                "{name}: client id '{id}' is {other}'s too: give each host its own --client-id"
            ));
        }
        if r.target.version != first.target.version {
            warnings.push(format!(
                "{name}: the server's version reads '{}', {first_name}'s '{}'",
                r.target.version, first.target.version
            ));
        }
    }
    Ok(warnings)
}

/// Whether every part says when it began measuring (the intervals are then aligned by the
/// clock), the first start, and the merged run's measured seconds: from the first start to
/// the last end.
fn measured_span(files: &[(String, Results)], warnings: &mut Vec<String>) -> (bool, f64, f64) {
    let starts: Vec<f64> = files.iter().filter_map(|(_, r)| r.measured_from).collect();
    let aligned = starts.len() == files.len();
    let from = starts.iter().copied().fold(f64::INFINITY, f64::min);
    if aligned {
        let spread = starts.iter().copied().fold(f64::NEG_INFINITY, f64::max) - from;
        if spread > ALIGNED_S {
            warnings.push(format!(
                "the parts' measured parts began up to {spread:.1} s apart (not started with one --start-at?): their totals cover different seconds"
            ));
        }
    } else {
        warnings.push(
            "a part has no measured_from (an older dbsweep): intervals are aligned by their index, not by the wall clock".into(),
        );
    }
    let time_s = if aligned {
        files
            .iter()
            .map(|(_, r)| r.measured_from.unwrap_or(from) + r.time_s)
            .fold(f64::NEG_INFINITY, f64::max)
            - from
    } else {
        files.iter().map(|(_, r)| r.time_s).fold(0.0, f64::max)
    };
    (aligned, from, time_s)
}

/// The parts' target rates added, their lag weighted by their events.
fn merge_rate(files: &[(String, Results)], events: u64) -> Option<RateInfo> {
    files
        .iter()
        .filter_map(|(_, r)| r.rate.as_ref().map(|rate| (rate, r.events)))
        .fold(None, |acc: Option<RateInfo>, (rate, ev)| {
            let mut a = acc.unwrap_or(RateInfo {
                target_per_s: 0.0,
                lag_avg_ms: 0.0,
                lag_max_ms: 0.0,
            });
            a.target_per_s += rate.target_per_s;
            a.lag_avg_ms += rate.lag_avg_ms * ev as f64 / events.max(1) as f64;
            a.lag_max_ms = a.lag_max_ms.max(rate.lag_max_ms);
            Some(a)
        })
}

/// Each part's own figures, as the merged file lists them.
fn parts_of(files: &[(String, Results)]) -> Vec<Part> {
    files
        .iter()
        .map(|(name, r)| Part {
            client_id: r.client_id.clone(),
            file: name.clone(),
            host: r.host.as_ref().map(|h| h.name.clone()),
            started_at: r.started_at,
            measured_from: r.measured_from,
            threads: r.threads,
            time_s: r.time_s,
            events: r.events,
            tps: r.tps,
            qps: r.qps,
            latency_ms: r.latency_ms.clone(),
            client_cpu_us_per_op: r.hw.as_ref().and_then(|h| h.cpu_us_per_op.client),
            interrupted: r.interrupted,
            error: r.error.clone(),
        })
        .collect()
}

/// Every part read the same server's counters over the same seconds: the first part's deltas
/// stand; its per-operation figures count every part's operations.
fn merge_server_stats(first: &Results, events: u64) -> Option<super::super::figures::ServerStats> {
    first.server_stats.clone().map(|mut s| {
        let scale = first.events as f64 / events.max(1) as f64;
        for v in [
            &mut s.pages_read_per_op,
            &mut s.pages_written_per_op,
            &mut s.log_bytes_per_op,
        ] {
            *v = v.map(|x| x * scale);
        }
        s
    })
}

/// Counts that add up, as the merged file's counts must: a sum past the type's range is
/// refused (a crafted or corrupt file), never wrapped.
pub(super) trait Count: Copy {
    const ZERO: Self;
    fn plus(self, other: Self) -> Option<Self>;
}

impl Count for u32 {
    const ZERO: u32 = 0;
    fn plus(self, other: u32) -> Option<u32> {
        self.checked_add(other)
    }
}

impl Count for u64 {
    const ZERO: u64 = 0;
    fn plus(self, other: u64) -> Option<u64> {
        self.checked_add(other)
    }
}

/// The sum of `values`; an error naming `what` when it overflows.
pub(super) fn total<T: Count>(
    what: &str,
    values: impl IntoIterator<Item = T>,
) -> Result<T, String> {
    values
        .into_iter()
        .try_fold(T::ZERO, T::plus)
        .ok_or_else(|| {
            format!("the parts' {what} add up past what a count holds: not the counts of real runs")
        })
}

/// The sum of histograms; None when there are none. Err names the file whose histogram does
/// not decode or add.
pub(super) fn add_histograms<'a>(
    hs: impl Iterator<Item = (&'a str, &'a str, Option<&'a HistogramData>)>,
) -> Result<Option<Histogram<u64>>, String> {
    let mut sum: Option<Histogram<u64>> = None;
    for (name, what, h) in hs {
        let Some(h) = h else { continue };
        let h = h.decode().map_err(|e| format!("{name}: {what}: {e}"))?;
        match &mut sum {
            None => sum = Some(h),
            Some(s) => {
                // Each bucket holds at most its histogram's total: totals that add keep every
                // bucket's sum in range too.
                if s.len().checked_add(h.len()).is_none() {
                    return Err(format!(
                        "{name}: {what}: its count and the others' add up past what a count holds"
                    ));
                }
                s.add(&h)
                    .map_err(|e| format!("{name}: {what}: cannot be added: {e:?}"))?
            }
        }
    }
    Ok(sum)
}

/// Intervals keyed by the wall-clock second they ended in (or by their index, when a part
/// has no start time): counts and rates add; a second's percentiles are the highest of the
/// parts' (an upper bound: the parts' histograms per second are not kept).
fn merge_intervals(
    files: &[(String, Results)],
    from: Option<f64>,
) -> Result<Vec<Interval>, String> {
    let mut by_key: BTreeMap<i64, Interval> = BTreeMap::new();
    for (_, r) in files {
        for (i, iv) in r.intervals.iter().enumerate() {
            let key = match (from, r.measured_from) {
                (Some(_), Some(m)) => (m + iv.t).round() as i64,
                _ => i as i64,
            };
            let t = match (from, r.measured_from) {
                (Some(f), Some(m)) => m + iv.t - f,
                _ => iv.t,
            };
            match by_key.get_mut(&key) {
                None => {
                    let mut first = iv.clone();
                    first.t = t.max(0.0);
                    by_key.insert(key, first);
                }
                Some(m) => {
                    m.threads = total("interval threads", [m.threads, iv.threads])?;
                    m.events = total("interval events", [m.events, iv.events])?;
                    m.seconds = m.seconds.max(iv.seconds);
                    m.tps += iv.tps;
                    m.qps += iv.qps;
                    m.reads_per_s += iv.reads_per_s;
                    m.writes_per_s += iv.writes_per_s;
                    m.others_per_s += iv.others_per_s;
                    m.rows_per_s += iv.rows_per_s;
                    m.err_per_s += iv.err_per_s;
                    m.reconn_per_s += iv.reconn_per_s;
                    m.p50_ms = m.p50_ms.max(iv.p50_ms);
                    m.p95_ms = m.p95_ms.max(iv.p95_ms);
                    m.p99_ms = m.p99_ms.max(iv.p99_ms);
                    m.max_ms = m.max_ms.max(iv.max_ms);
                    m.pct_ms = m.pct_ms.max(iv.pct_ms);
                    m.nopm = match (m.nopm, iv.nopm) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    };
                    let worst = |a: Option<f64>, b: Option<f64>| match (a, b) {
                        (Some(a), Some(b)) => Some(a.max(b)),
                        (a, b) => a.or(b),
                    };
                    m.new_order_p95_ms = worst(m.new_order_p95_ms, iv.new_order_p95_ms);
                    m.new_order_p90_ms = worst(m.new_order_p90_ms, iv.new_order_p90_ms);
                }
            }
        }
    }
    Ok(by_key.into_values().collect())
}

pub(super) fn merge_statements<'a>(
    files: impl Iterator<Item = (&'a str, &'a [StatementFigures])> + Clone,
    events: u64,
) -> Result<Vec<StatementFigures>, String> {
    let mut names: Vec<&str> = Vec::new();
    for (_, statements) in files.clone() {
        for s in statements {
            if !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let of: Vec<(&str, &StatementFigures)> = files
                .clone()
                .filter_map(|(f, statements)| {
                    statements.iter().find(|s| s.name == name).map(|s| (f, s))
                })
                .collect();
            let count = total(name, of.iter().map(|(_, s)| s.count))?;
            let retries = total(name, of.iter().map(|(_, s)| s.retries.unwrap_or(0)))?;
            let failures = total(name, of.iter().map(|(_, s)| s.failures.unwrap_or(0)))?;
            let retried = total(name, of.iter().map(|(_, s)| s.retried.unwrap_or(0)))?;
            let serialization = total(
                name,
                of.iter().map(|(_, s)| s.failed_serialization.unwrap_or(0)),
            )?;
            let deadlocks = total(
                name,
                of.iter().map(|(_, s)| s.failed_deadlocks.unwrap_or(0)),
            )?;
            let h = add_kind_histograms(&of, |s| s.histogram.as_ref(), name)?;
            Ok(StatementFigures {
                name: name.to_string(),
                count,
                per_event: if events > 0 {
                    count as f64 / events as f64
                } else {
                    0.0
                },
                latency_ms: Latency::from_histogram(&h),
                histogram: Some(HistogramData::encode(&h)),
                retries: (retries > 0).then_some(retries),
                failures: (failures > 0).then_some(failures),
                retried: (retried > 0).then_some(retried),
                failed_serialization: (serialization > 0).then_some(serialization),
                failed_deadlocks: (deadlocks > 0).then_some(deadlocks),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::hw::merge_hw;
    use super::*;
    use crate::results::HostId;
    use crate::results::figures::{CpuPerOp, HwFigures};

    fn part(events: u64, boot: &str, machine: f64, client: f64, server: f64) -> Results {
        let l = serde_json::json!({"min": 0.0, "avg": 0.0, "stddev": 0.0, "p50": 0.0, "p90": 0.0,
            "p95": 0.0, "p99": 0.0, "p999": 0.0, "max": 0.0, "sum": 0.0});
        let h = HistogramData::encode(&crate::results::new_histogram());
        let mut r: Results = serde_json::from_value(serde_json::json!({
            "schema_version": 1, "tool": {"name": "dbsweep", "version": "0"},
            "workload": "oltp_point_select",
            "target": {"kind": "postgres", "url": "postgres://h/db", "version": "15", "settings": {}},
            "server": null, "started_at": 1, "threads": 1, "time_s": 1.0, "warmup_s": 0.0,
            "events": 0, "tps": 0.0, "qps": 0.0, "rows_per_s": 0.0,
            "queries": {"read": 0, "write": 0, "other": 0, "total": 0, "rows": 0},
            "latency_ms": l, "errors": {}, "retries": 0, "reconnects": 0, "rate": null,
            "thread_events": [], "intervals": [], "histogram": h, "options": {},
            "prepare": null, "hw": null, "interrupted": false, "error": null
        }))
        .expect("a minimal results file");
        r.events = events;
        r.host = Some(HostId {
            name: boot.into(),
            boot_id: boot.into(),
        });
        r.hw = Some(HwFigures {
            cpu_us_per_op: CpuPerOp {
                client: Some(client),
                server: Some(server),
                machine: Some(machine),
            },
            cpus: 2,
            ..HwFigures::default()
        });
        r
    }

    #[test]
    fn figures_combine_by_what_they_measure() {
        // Two client processes on one machine (one boot id) and a third on another; 100, 300
        // and 600 events. Each part's machine and server figures are per its own events.
        let parts = [
            part(100, "m1", 50.0, 10.0, 30.0),
            part(300, "m1", 50.0 / 3.0, 10.0, 10.0),
            part(600, "m2", 5.0, 10.0, 5.0),
        ];
        let files: Vec<(String, Results)> = parts
            .into_iter()
            .enumerate()
            .map(|(i, r)| (format!("p{i}"), r))
            .collect();
        let hw = merge_hw(&files, 1000).unwrap();
        // Processes add: 10 us for each of 1000 events.
        assert!((hw.cpu_us_per_op.client.unwrap() - 10.0).abs() < 1e-9);
        // m1's two parts saw one machine's 5000 us; m2 its own 3000 us: 8 us per event.
        assert!((hw.cpu_us_per_op.machine.unwrap() - 8.0).abs() < 1e-9);
        // The one server, seen by all three as 3000 us: 3 us per event.
        assert!((hw.cpu_us_per_op.server.unwrap() - 3.0).abs() < 1e-9);
    }
}
