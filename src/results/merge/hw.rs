//! Merging the client hosts' hardware, network and server-host figures: per-operation figures
//! weighted by each part's operations, levels and sums where they add up.

use std::collections::BTreeMap;

use crate::results::Results;
use crate::results::figures::NetFigures;
use crate::results::figures::{Beside, CpuPct, CpuPerOp, HwFigures, ProcIoKb};
/// How a figure combines over parts (see the module's comment).
#[derive(Clone, Copy)]
pub(super) enum Scope {
    /// One client process per part: totals add.
    Process,
    /// One machine per boot id: parts of one machine count once (their mean).
    Machine,
    /// The one server every part observed: the mean of the parts' totals.
    Server,
}

/// Combines a per-operation figure: each part's total (figure x its operations) by `scope`,
/// divided by the merged operations. None when no part has the figure.
pub(super) fn per_op(
    parts: &[(&Results, &HwFigures)],
    events: u64,
    scope: Scope,
    f: impl Fn(&HwFigures) -> Option<f64>,
) -> Option<f64> {
    let total = combine(parts, scope, |r, h| f(h).map(|x| x * r.events as f64))?;
    (events > 0).then(|| total / events as f64)
}

/// Combines a figure that is not per operation (a percentage of a CPU, of a device) by
/// `scope`: processes add, machines add, the server's is the parts' mean.
pub(super) fn level(
    parts: &[(&Results, &HwFigures)],
    scope: Scope,
    f: impl Fn(&HwFigures) -> Option<f64>,
) -> Option<f64> {
    combine(parts, scope, |_, h| f(h))
}

pub(super) fn combine(
    parts: &[(&Results, &HwFigures)],
    scope: Scope,
    value: impl Fn(&Results, &HwFigures) -> Option<f64>,
) -> Option<f64> {
    let values: Vec<(Option<&str>, f64)> = parts
        .iter()
        .filter_map(|(r, h)| {
            value(r, h).map(|v| (r.host.as_ref().map(|id| id.boot_id.as_str()), v))
        })
        .collect();
    if values.is_empty() {
        return None;
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    Some(match scope {
        Scope::Process => values.iter().map(|(_, v)| v).sum(),
        Scope::Server => mean(&values.iter().map(|(_, v)| *v).collect::<Vec<_>>()),
        Scope::Machine => {
            // A part without a boot id is a machine of its own.
            let mut machines: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            for (i, (boot, v)) in values.iter().enumerate() {
                let key = boot.map_or_else(|| format!("#{i}"), str::to_string);
                machines.entry(key).or_default().push(*v);
            }
            machines.values().map(|v| mean(v)).sum()
        }
    })
}

pub(super) fn merge_hw(files: &[(String, Results)], events: u64) -> Option<HwFigures> {
    let parts: Vec<(&Results, &HwFigures)> = files
        .iter()
        .filter_map(|(_, r)| r.hw.as_ref().map(|h| (r, h)))
        .collect();
    let (_, first) = parts.first()?;
    let p = &parts;
    use Scope::{Machine, Process, Server};
    Some(HwFigures {
        cpu_us_per_op: CpuPerOp {
            client: per_op(p, events, Process, |h| h.cpu_us_per_op.client),
            server: per_op(p, events, Server, |h| h.cpu_us_per_op.server),
            machine: per_op(p, events, Machine, |h| h.cpu_us_per_op.machine),
        },
        cpu_per_o: per_op(p, events, Machine, |h| h.cpu_per_o),
        cs_per_o: per_op(p, events, Machine, |h| h.cs_per_o),
        r_per_o: per_op(p, events, Machine, |h| h.r_per_o),
        rkb_per_o: per_op(p, events, Machine, |h| h.rkb_per_o),
        wkb_per_o: per_op(p, events, Machine, |h| h.wkb_per_o),
        server_rss_kb: parts.iter().filter_map(|(_, h)| h.server_rss_kb).max(),
        // Each client host's own peak: the largest of them.
        client_peak_rss_kb: parts.iter().filter_map(|(_, h)| h.client_peak_rss_kb).max(),
        sqlite_heap_peak_kb: parts
            .iter()
            .filter_map(|(_, h)| h.sqlite_heap_peak_kb)
            .max(),
        device: first.device.clone(),
        device_busy_pct: parts
            .iter()
            .filter_map(|(_, h)| h.device_busy_pct)
            .reduce(f64::max),
        cpus: first.cpus,
        cpu_pct: CpuPct {
            machine_user: first.cpu_pct.machine_user,
            machine_system: first.cpu_pct.machine_system,
            machine_iowait: first.cpu_pct.machine_iowait,
            machine_steal: first.cpu_pct.machine_steal,
            client_user: level(p, Process, |h| Some(h.cpu_pct.client_user)).unwrap_or(0.0),
            client_system: level(p, Process, |h| Some(h.cpu_pct.client_system)).unwrap_or(0.0),
            client_iowait: level(p, Process, |h| Some(h.cpu_pct.client_iowait)).unwrap_or(0.0),
            server_user: level(p, Server, |h| h.cpu_pct.server_user),
            server_system: level(p, Server, |h| h.cpu_pct.server_system),
            server_iowait: level(p, Server, |h| h.cpu_pct.server_iowait),
        },
        server_cs_per_o: per_op(p, events, Server, |h| h.server_cs_per_o),
        proc_io_kb: ProcIoKb {
            client_read: level(p, Process, |h| h.proc_io_kb.client_read),
            client_write: level(p, Process, |h| h.proc_io_kb.client_write),
            server_read: level(p, Server, |h| h.proc_io_kb.server_read),
            server_write: level(p, Server, |h| h.proc_io_kb.server_write),
        },
        series: first.series.clone(),
        cpu_mhz: first.cpu_mhz.clone(),
        net: merge_net(p, events),
        beside: merge_beside(p),
    })
}

/// How busy the parts' machines were beside them: the busiest. Parts that shared a machine
/// saw each other's client as another process: what else ran there is unknown.
fn merge_beside(parts: &[(&Results, &HwFigures)]) -> Option<Beside> {
    let mut boots = std::collections::BTreeSet::new();
    let shared = parts.iter().any(|(r, _)| {
        r.host
            .as_ref()
            .is_some_and(|h| !boots.insert(h.boot_id.as_str()))
    });
    let each: Vec<&Beside> = parts
        .iter()
        .filter_map(|(_, h)| h.beside.as_ref())
        .collect();
    if each.is_empty() {
        return None;
    }
    let others = if shared {
        None
    } else {
        each.iter()
            .map(|b| b.others_pct)
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().reduce(f64::max))
    };
    let steal = each.iter().map(|b| b.steal_pct).fold(0.0, f64::max);
    let mut b = Beside::of(others, steal);
    if !shared {
        b.busy |= each.iter().any(|b| b.busy);
    }
    Some(b)
}

/// The client hosts' network figures: bytes per operation add over the parts (each host's own
/// interface; parts of one machine through one interface count once), the busiest link's
/// utilisation stands for all.
pub(super) fn merge_net(parts: &[(&Results, &HwFigures)], events: u64) -> Option<NetFigures> {
    let first = parts.iter().find_map(|(_, h)| h.net.as_ref())?;
    let rx = per_op(parts, events, Scope::Machine, |h| {
        h.net.as_ref().map(|n| n.rx_kb_per_o)
    })?;
    let tx = per_op(parts, events, Scope::Machine, |h| {
        h.net.as_ref().map(|n| n.tx_kb_per_o)
    })?;
    Some(NetFigures {
        device: first.device.clone(),
        rx_kb_per_o: rx,
        tx_kb_per_o: tx,
        link_mbit: first.link_mbit,
        link_source: first.link_source.clone(),
        busy_pct: parts
            .iter()
            .filter_map(|(_, h)| h.net.as_ref().and_then(|n| n.busy_pct))
            .reduce(f64::max),
    })
}

/// The server host's figures: every part scraped the same host over the same seconds, so the
/// first part's counts stand, divided by every part's operations.
pub(super) fn merge_server_host(
    files: &[(String, Results)],
    events: u64,
) -> Option<crate::results::figures::HostFigures> {
    let (r, h) = files
        .iter()
        .find_map(|(_, r)| r.server_host.as_ref().map(|h| (r, h)))?;
    let scale = r.events as f64 / events.max(1) as f64;
    let mut h = h.clone();
    for v in [
        &mut h.cpu_us_per_op,
        &mut h.cs_per_o,
        &mut h.r_per_o,
        &mut h.w_per_o,
        &mut h.rkb_per_o,
        &mut h.wkb_per_o,
    ] {
        *v = v.map(|x| x * scale);
    }
    if let Some(n) = &mut h.net {
        n.rx_kb_per_o *= scale;
        n.tx_kb_per_o *= scale;
    }
    Some(h)
}
