//! Merging what only some runs have: the roles beside the measured clients, the pooled
//! connections' serving figures, TPC-C's transactions.

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{add_histograms, merge_statements, total};
use crate::results::figures::TPCC_LEAST_MIX as DECK;
use crate::results::figures::{PhaseFigures, RATE_MET, RoleFigures};
use crate::results::{HistogramData, Latency, Queries, Results, TxnFigures};

/// The phases of `--phases` runs, each the sum of its parts on every host (the hosts ran the
/// same phases, each with its own clients): events, errors and the asked rates or clients
/// added, latencies from the added histograms, the rate over the longest of the parts' spans
/// of the phase. Err: a part whose phases are not the first's. Parts written before phases
/// kept their histograms merge without phases, with a warning.
pub(super) fn merge_phases(
    files: &[(String, Results)],
    warnings: &mut Vec<String>,
) -> Result<Vec<PhaseFigures>, String> {
    let Some((_, first)) = files.first() else {
        return Ok(Vec::new());
    };
    let names = |r: &Results| r.phases.iter().map(|p| p.phase.clone()).collect::<Vec<_>>();
    if let Some((f, _)) = files.iter().find(|(_, r)| names(r) != names(first)) {
        return Err(format!(
            "{f}: its phases are not the first file's ({})",
            names(first).join(",")
        ));
    }
    if let Some((f, _)) = files
        .iter()
        .find(|(_, r)| r.phases.iter().any(|p| p.histogram.is_none()))
    {
        warnings.push(format!(
            "{f}: its phases have no latency histograms (written by an older dbsweep): the merged run has no phases"
        ));
        return Ok(Vec::new());
    }
    first
        .phases
        .iter()
        .enumerate()
        .map(|(i, p)| {
            // The names matched above: every part has phase i.
            let of: Vec<(&str, &PhaseFigures)> = files
                .iter()
                .filter_map(|(f, r)| Some((f.as_str(), r.phases.get(i)?)))
                .collect();
            let what = format!("phase {} ({})", i + 1, p.phase);
            let events = total(&what, of.iter().map(|(_, x)| x.events))?;
            let h = add_kind_histograms(&of, |x| x.histogram.as_ref(), &what)?;
            let time_s = of.iter().map(|(_, x)| x.time_s).fold(0.0, f64::max);
            let clients = match p.clients {
                Some(_) => Some(total(
                    &what,
                    of.iter().map(|(_, x)| x.clients.unwrap_or(0)),
                )?),
                None => None,
            };
            Ok(PhaseFigures {
                phase: p.phase.clone(),
                start_s: p.start_s,
                time_s,
                target_per_s: of
                    .iter()
                    .map(|(_, x)| x.target_per_s)
                    .try_fold(0.0, |a, r| r.map(|r| a + r)),
                clients,
                events,
                tps: if time_s > 0.0 {
                    events as f64 / time_s
                } else {
                    0.0
                },
                errors: total(&what, of.iter().map(|(_, x)| x.errors))?,
                failed: total(&what, of.iter().map(|(_, x)| x.failed))?,
                latency_ms: Latency::from_histogram(&h),
                histogram: Some(HistogramData::encode(&h)),
            })
        })
        .collect()
}

/// The groups beside the measured clients, each the sum of its parts on every host (the
/// parts ran the same groups, `check_parts` says so): clients, rates, events, queries and
/// errors added, latencies from the added histograms, the rate kept judged on the sums over
/// the merged seconds.
pub(super) fn merge_roles(
    files: &[(String, Results)],
    time_s: f64,
) -> Result<Vec<RoleFigures>, String> {
    let Some((_, first)) = files.first() else {
        return Ok(Vec::new());
    };
    (0..first.roles.len())
        .map(|i| {
            // check_parts gave every file the first's groups; a file that has fewer is refused.
            let of = files
                .iter()
                .map(|(f, r)| {
                    r.roles.get(i).map(|g| (f.as_str(), g)).ok_or_else(|| {
                        format!("{f}: fewer groups beside its clients than the first file's")
                    })
                })
                .collect::<Result<Vec<(&str, &RoleFigures)>, String>>()?;
            let role = of[0].1;
            let what = format!("group {}", role.workload);
            let events = total(&what, of.iter().map(|(_, g)| g.events))?;
            let q = |f: fn(&Queries) -> u64| total(&what, of.iter().map(|(_, g)| f(&g.queries)));
            let h = add_kind_histograms(&of, |g| g.histogram.as_ref(), &what)?;
            let mut errors: BTreeMap<String, u64> = BTreeMap::new();
            for (_, g) in &of {
                for (k, v) in &g.errors {
                    let e = errors.entry(k.clone()).or_insert(0);
                    *e = total(&what, [*e, *v])?;
                }
            }
            let rate = of
                .iter()
                .map(|(_, g)| g.rate)
                .try_fold(0.0, |a, r| r.map(|r| a + r));
            let tps = if time_s > 0.0 {
                events as f64 / time_s
            } else {
                0.0
            };
            Ok(RoleFigures {
                workload: role.workload.clone(),
                clients: total(&what, of.iter().map(|(_, g)| g.clients))?,
                rate,
                rate_met: rate.map(|r| tps >= r * RATE_MET),
                events,
                time_s,
                tps,
                queries: Queries {
                    read: q(|q| q.read)?,
                    write: q(|q| q.write)?,
                    other: q(|q| q.other)?,
                    total: q(|q| q.total)?,
                    rows: q(|q| q.rows)?,
                },
                latency_ms: Latency::from_histogram(&h),
                histogram: Some(HistogramData::encode(&h)),
                statements: merge_statements(
                    of.iter().map(|(f, g)| (*f, g.statements.as_slice())),
                    events,
                )?,
                errors,
                error: of
                    .iter()
                    .find_map(|(f, g)| g.error.as_ref().map(|e| format!("{f}: {e}"))),
            })
        })
        .collect()
}

/// The histograms of one statement or transaction kind across parts; every part must have
/// one (results of a dbsweep before merging existed do not).
pub(super) fn add_kind_histograms<T>(
    of: &[(&str, &T)],
    histogram: impl Fn(&T) -> Option<&HistogramData>,
    kind: &str,
) -> Result<Histogram<u64>, String> {
    for (file, t) in of {
        if histogram(t).is_none() {
            return Err(format!(
                "{file}: {kind} has no latency histogram (written by an older dbsweep): its percentiles cannot be merged"
            ));
        }
    }
    add_histograms(of.iter().map(|(f, t)| (*f, kind, histogram(t))))?
        .ok_or_else(|| format!("{kind}: no histogram"))
}

/// The parts' serving figures, where every part has them: clients, workers and connections
/// add, as do the clients behind; queue times from the added histograms.
pub(super) fn merge_serving(
    files: &[(String, Results)],
) -> Result<Option<crate::results::Serving>, String> {
    let Some(all) = files
        .iter()
        .map(|(f, r)| r.serving.as_ref().map(|s| (f.as_str(), s)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let Some(h) = add_histograms(
        all.iter()
            .map(|(f, s)| (*f, "serving.queue_histogram", s.queue_histogram.as_ref())),
    )?
    else {
        return Ok(None);
    };
    let pooled = all.iter().all(|(_, s)| s.connections.is_some());
    Ok(Some(crate::results::Serving {
        clients: total("clients", all.iter().map(|(_, s)| s.clients))?,
        workers: total("workers", all.iter().map(|(_, s)| s.workers))?,
        connections: match pooled {
            true => Some(total(
                "connections",
                all.iter().filter_map(|(_, s)| s.connections),
            )?),
            false => None,
        },
        connect_s: all.iter().map(|(_, s)| s.connect_s).fold(0.0, f64::max),
        clients_behind: total("clients behind", all.iter().map(|(_, s)| s.clients_behind))?,
        queue_ms: Latency::from_histogram(&h),
        queue_histogram: Some(HistogramData::encode(&h)),
    }))
}

pub(super) fn merge_tpcc(
    files: &[(String, Results)],
    _events: u64,
    time_s: f64,
) -> Result<Option<crate::results::TpccFigures>, String> {
    let parts: Vec<(&str, &Results, &crate::results::TpccFigures)> = files
        .iter()
        .filter_map(|(f, r)| r.tpcc.as_ref().map(|t| (f.as_str(), r, t)))
        .collect();
    let Some((_, _, first)) = parts.first() else {
        return Ok(None);
    };
    // Per minute over each part's seconds, back to counts, then over the merged seconds.
    let per_min = |f: &dyn Fn(&crate::results::TpccFigures) -> f64| {
        let n: f64 = parts.iter().map(|(_, r, t)| f(t) * r.time_s / 60.0).sum();
        if time_s > 0.0 { n * 60.0 / time_s } else { 0.0 }
    };
    let all_txns = total(
        "transactions",
        parts
            .iter()
            .flat_map(|(_, _, t)| t.transactions.iter().map(|x| x.count)),
    )?;
    let transactions = first
        .transactions
        .iter()
        .map(|kind| {
            let of: Vec<(&str, &TxnFigures)> = parts
                .iter()
                .filter_map(|(f, _, t)| {
                    t.transactions
                        .iter()
                        .find(|x| x.name == kind.name)
                        .map(|x| (*f, x))
                })
                .collect();
            let h = add_kind_histograms(&of, |x| x.histogram.as_ref(), &kind.name)?;
            let count = total(&kind.name, of.iter().map(|(_, x)| x.count))?;
            let latency_ms = Latency::from_histogram(&h);
            // Queue times per type where every part has them (parts that shared no workers
            // or connections have none, nor has a file of an older dbsweep).
            let queue = if of.iter().all(|(_, x)| x.queue_histogram.is_some()) {
                add_histograms(
                    of.iter()
                        .map(|(f, x)| (*f, kind.name.as_str(), x.queue_histogram.as_ref())),
                )?
            } else {
                None
            };
            Ok(TxnFigures {
                name: kind.name.clone(),
                count,
                share_pct: if all_txns > 0 {
                    count as f64 * 100.0 / all_txns as f64
                } else {
                    0.0
                },
                retries: total("retries", of.iter().map(|(_, x)| x.retries))?,
                rollbacks: total("rollbacks", of.iter().map(|(_, x)| x.rollbacks))?,
                limit_met: latency_ms.p90 <= kind.limit_p90_ms,
                latency_ms,
                limit_p90_ms: kind.limit_p90_ms,
                queue_ms: queue.as_ref().map(Latency::from_histogram),
                queue_histogram: queue.as_ref().map(HistogramData::encode),
                histogram: Some(HistogramData::encode(&h)),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let nopm = per_min(&|t| t.nopm);
    let w = f64::from(first.warehouses.max(1));
    let terminals: f64 = parts
        .iter()
        .map(|(_, _, t)| t.terminals_per_warehouse)
        .sum();
    // Every part's terminals worked on the same warehouses: their ceilings add.
    let ceiling = parts
        .iter()
        .map(|(_, _, t)| t.nopm_ceiling_per_warehouse)
        .sum::<Option<f64>>();
    let scales: Vec<Option<f64>> = parts.iter().map(|(_, _, t)| t.think_scale).collect();
    let think_scale = scales[0].filter(|s| scales.iter().all(|x| *x == Some(*s)));
    // One mix for all parts (a step's hosts run its options; a file without one ran the
    // least mix).
    let mix_of = |t: &crate::results::TpccFigures| t.mix.unwrap_or(DECK);
    if let Some((f, _, t)) = parts.iter().find(|(_, _, t)| mix_of(t) != mix_of(first)) {
        return Err(format!(
            "{f}: its TPC-C mix is {:?}, the first file's {:?}: parts of one step run one mix",
            mix_of(t),
            mix_of(first)
        ));
    }
    Ok(Some(crate::results::TpccFigures {
        mix: first.mix,
        mix_below_minimums: first.mix_below_minimums.clone(),
        nopm_per_warehouse: nopm / w,
        terminals_per_warehouse: terminals,
        nopm_ceiling_per_warehouse: ceiling,
        think_scale,
        conforming: think_scale == Some(1.0)
            && (terminals - 10.0).abs() < 1e-9
            && first.mix_below_minimums.is_empty(),
        warehouses: first.warehouses,
        nopm,
        tpm: per_min(&|t| t.tpm),
        limits_met: transactions.iter().all(|t| t.limit_met),
        transactions,
    }))
}
