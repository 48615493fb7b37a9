//! Scaling against client counts, with the bounds of a closed queueing network whose demands
//! are measured (docs/workloads.md section 6): the tables, and the model each chart draws.

use std::collections::BTreeSet;

use super::model::{Dataset, Entry, Group, Place};
use super::queue::{Device, Model};
use super::tables::{Cell, Row, Table, tests};

const CPU_DISK_NOTE: &str = "D cpu = machine CPU busy per transaction over the machine's cores (the server host's, from node_exporter, when the run had --server-metrics); D disk = device busy time per transaction";
const PROBED_NOTE: &str = "where the sweep measured the machine's limits, the disk is two devices with the probes' service times: its reads (each the probe's read time at depth 1, as many at once as its best depth's rate over depth 1's) and the log's syncs (one at a time, each the one-writer probe's time); D disk is their sum";
const NET_NOTE: &str = "D net = the link's busy time per transaction (the busier direction's bytes over its speed; the server host's interface when known, else the client's)";
const DMAX_NOTE: &str = "the bottleneck is the device with the largest demand per server (Dmax)";

/// Scaling and queueing bounds per configuration, when several client counts ran.
pub fn tables(ds: &Dataset) -> Vec<Table> {
    let places: BTreeSet<&Place> = ds.entries.iter().map(|e| &e.place).collect();
    let clients: BTreeSet<u32> = places.iter().map(|p| p.clients).collect();
    if clients.len() < 2 {
        return Vec::new();
    }
    let mut configs: Vec<(String, String, String)> = Vec::new();
    for p in &places {
        let k = (p.source.clone(), p.target.clone(), p.config.clone());
        if !configs.contains(&k) {
            configs.push(k);
        }
    }
    let mut out = Vec::new();
    for (source, target, config) in configs {
        let name = if places
            .iter()
            .map(|p| &p.source)
            .collect::<BTreeSet<_>>()
            .len()
            > 1
        {
            format!("{source}/{target}/{config}")
        } else {
            format!("{target}/{config}")
        };
        let (mut scale, mut model_table) = empty_tables(&name);
        for (group, test) in tests(ds) {
            if group == Group::Load {
                continue;
            }
            let mut runs: Vec<&Entry> = ds
                .entries
                .iter()
                .filter(|e| {
                    e.test == test
                        && e.place.source == source
                        && e.place.target == target
                        && e.place.config == config
                        && e.results.is_some()
                })
                .collect();
            runs.sort_by_key(|e| e.place.clients);
            if runs.is_empty() {
                continue;
            }
            let bound = bound_of(&runs);
            let model = bound.as_ref().map(|b| b.model.clone());
            if let Some(b) = &bound {
                model_table.rows.push(model_row(group, &test, &runs, b));
                if b.from.contains("the probe's")
                    && !model_table.notes.iter().any(|n| n == PROBED_NOTE)
                {
                    model_table.notes.push(PROBED_NOTE.into());
                }
            }
            for e in runs {
                scale.rows.push(scale_row(group, &test, e, model.as_ref()));
            }
        }
        drop_empty_net_column(&mut model_table);
        out.push(scale);
        out.push(model_table);
    }
    out
}

/// The scaling table and the queueing model's table of configuration `name`, without rows.
fn empty_tables(name: &str) -> (Table, Table) {
    let scale = Table {
        better: None,
        id: "scaling".into(),
        title: format!("Scaling of {name}: throughput and latency against clients, with queueing bounds"),
        columns: ["clients", "tps", "X bound", "avg ms", "R bound ms", "p95 ms", "model"]
            .map(String::from)
            .to_vec(),
        under: Vec::new(),
        rows: Vec::new(),
        notes: vec![
            "bounds of a closed system (docs/workloads.md section 6), Z = 0, from the least demand per transaction of each device over the client counts measured (the queueing table says which run); a bound is a bound: a measurement beyond it by more than the figures' precision (3%) is flagged in the model column as an error of the model, not of the server".into(),
        ],
    };
    let model_table = Table {
        better: None,
        id: "queueing".into(),
        title: format!("Queueing model of {name}: service demands per transaction"),
        columns: [
            "D cpu ms",
            "D disk ms",
            "D net ms",
            "D ms",
            "bottleneck",
            "N_sat",
            "demands from",
        ]
        .map(String::from)
        .to_vec(),
        under: Vec::new(),
        rows: Vec::new(),
        notes: vec![format!("{CPU_DISK_NOTE}; {NET_NOTE}; {DMAX_NOTE}")],
    };
    (scale, model_table)
}

/// A test's service demands per device (the least over its runs), the bottleneck, N_sat.
fn model_row(group: Group, test: &str, runs: &[&Entry], b: &Bound) -> Row {
    let m = &b.model;
    let device = |pick: fn(&Demands) -> Option<f64>| {
        runs.iter()
            .filter_map(|e| pick(&demands(e)))
            .min_by(f64::total_cmp)
    };
    Row {
        group: Some(group),
        label: test.to_string(),
        summary: false,
        cells: vec![
            device(|d| d.cpu).map_or(Cell::Missing, |d| Cell::Num(d * 1e3)),
            device(|d| d.disk).map_or(Cell::Missing, |d| Cell::Num(d * 1e3)),
            device(|d| d.net).map_or(Cell::Missing, |d| Cell::Num(d * 1e3)),
            Cell::Num(m.d * 1e3),
            Cell::Text(m.bottleneck.into()),
            Cell::Num(m.n_sat()),
            Cell::Text(b.from.clone()),
        ],
    }
}

/// One run of a test against its bounds.
fn scale_row(group: Group, test: &str, e: &Entry, model: Option<&Model>) -> Row {
    let r = e.results.as_ref().expect("filtered");
    let n = f64::from(e.place.clients);
    Row {
        group: Some(group),
        label: test.to_string(),
        summary: false,
        cells: vec![
            Cell::Text(format!(
                "{}{}",
                e.place.clients,
                if model.as_ref().is_some_and(|m| n >= m.n_sat()) {
                    " (>= N_sat)"
                } else {
                    ""
                }
            )),
            Cell::Num(r.tps),
            model
                .as_ref()
                .map_or(Cell::Missing, |m| Cell::Num(m.x_bound(n))),
            Cell::Num(r.latency_ms.avg),
            model
                .as_ref()
                .map_or(Cell::Missing, |m| Cell::Num(m.r_bound(n) * 1e3)),
            Cell::Num(r.latency_ms.p95),
            Cell::Text(
                model
                    .as_ref()
                    .and_then(|m| breaks_bound(m, e.place.clients, r.tps, r.latency_ms.avg))
                    .unwrap_or("")
                    .into(),
            ),
        ],
    }
}

/// Embedded SQLite and runs without a network figure: no network column.
fn drop_empty_net_column(model_table: &mut Table) {
    if model_table
        .rows
        .iter()
        .all(|r| matches!(r.cells.get(2), Some(Cell::Missing) | None))
    {
        model_table.columns.remove(2);
        model_table.notes[0] = format!("{CPU_DISK_NOTE}; {DMAX_NOTE}");
        for r in &mut model_table.rows {
            if r.cells.len() > 2 {
                r.cells.remove(2);
            }
        }
    }
}

/// Service demands of one run in seconds per transaction, and the CPU's cores.
struct Demands {
    /// CPU busy over all cores.
    cpu: Option<f64>,
    disk: Option<f64>,
    net: Option<f64>,
    cores: f64,
    /// The disk's reads and the log's syncs with the probes' service times, where the sweep
    /// measured the machine's limits: they replace the device's busy time.
    probed: Vec<super::bound::ProbedDevice>,
}

/// A run's demands: the server host's (node_exporter) where the run has them, since that is
/// where the database's work is; else this machine's (the sampler's).
fn demands(e: &Entry) -> Demands {
    let none = Demands {
        cpu: None,
        disk: None,
        net: None,
        cores: 1.0,
        probed: Vec::new(),
    };
    let Some(r) = &e.results else {
        return none;
    };
    let probed = super::bound::probed_devices(r);
    // The disk's demand in the model's table: the probes' devices' where there are some.
    let probed_disk = (!probed.is_empty()).then(|| probed.iter().map(|p| p.demand).sum::<f64>());
    let busy = |pct: Option<f64>| pct.filter(|_| r.tps > 0.0).map(|p| p / 100.0 / r.tps);
    let hw = r.hw.as_ref();
    let local_net = hw.and_then(|h| h.net.as_ref()?.demand_s(r.tps));
    if let Some(h) = r.server_host.as_ref().filter(|h| h.cpu_us_per_op.is_some()) {
        return Demands {
            cpu: h.cpu_us_per_op.map(|us| us / 1e6),
            disk: probed_disk.or(busy(h.device_busy_pct)),
            net: h.net.as_ref().and_then(|n| n.demand_s(r.tps)).or(local_net),
            cores: h.cpus.unwrap_or(1).max(1) as f64,
            probed,
        };
    }
    let Some(hw) = hw else {
        return none;
    };
    Demands {
        cpu: hw.cpu_us_per_op.machine.map(|us| us / 1e6),
        disk: probed_disk.or(busy(hw.device_busy_pct)),
        net: local_net,
        cores: hw.cpus.max(1) as f64,
        probed,
    }
}

/// A queueing model of one test on one configuration, and where its demands came from.
pub struct Bound {
    pub model: Model,
    /// "CPU at 2 clients, disk at 4 clients".
    pub from: String,
}

/// The model of `runs` (one test and configuration at several client counts) from the least
/// demand per transaction of each device over the runs. Demands measured at one client are
/// inflated on a small machine (idle wake-ups: this VM's CPU per op is ~3.4x its 2-client
/// figure), which made the "upper" bound fall below what was measured; the least demand seen
/// keeps the bound an upper bound whatever the load of the run it came from.
pub fn bound_of(runs: &[&Entry]) -> Option<Bound> {
    let least = |pick: fn(&Entry) -> Option<f64>| {
        runs.iter()
            .filter_map(|e| pick(e).map(|d| (d, e.place.clients)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    };
    let cpu = least(|e| demands(e).cpu);
    let disk = least(|e| demands(e).disk);
    let net = least(|e| demands(e).net);
    let cores = runs.first().map_or(1.0, |e| demands(e).cores);
    let mut devices = Vec::new();
    let mut from = Vec::new();
    if let Some((d, n)) = cpu {
        devices.push(Device {
            name: "cpu",
            demand: d,
            capacity: cores,
        });
        from.push(format!("CPU at {n} clients"));
    }
    // The probes' devices where the runs have them (each the least over the runs), else the
    // device's busy time.
    let mut probed: Vec<(super::bound::ProbedDevice, u32)> = Vec::new();
    for e in runs {
        for p in demands(e).probed {
            match probed.iter_mut().find(|(q, _)| q.name == p.name) {
                Some((q, n)) if p.demand < q.demand => (*q, *n) = (p, e.place.clients),
                Some(_) => {}
                None => probed.push((p, e.place.clients)),
            }
        }
    }
    if probed.is_empty()
        && let Some((d, n)) = disk
    {
        devices.push(Device {
            name: "disk",
            demand: d,
            capacity: 1.0,
        });
        from.push(format!("disk at {n} clients"));
    }
    for (p, n) in probed {
        devices.push(Device {
            name: p.name,
            demand: p.demand,
            capacity: p.capacity,
        });
        from.push(format!(
            "{} at {n} clients ({}, the probe's)",
            p.name, p.service
        ));
    }
    if let Some((d, n)) = net {
        devices.push(Device {
            name: "network",
            demand: d,
            capacity: 1.0,
        });
        from.push(format!("network at {n} clients"));
    }
    let mut model = Model::new(&devices, 0.0)?;
    // The demand on a transaction's path cannot exceed its least mean response time: the
    // machine's CPU per op also counts work beside that path (background threads, the sampler,
    // a checkpointer on the other core), which would put the light-load bound N / D below
    // what was measured.
    let least_r = runs
        .iter()
        .filter_map(|e| e.results.as_ref().map(|r| r.latency_ms.avg / 1e3))
        .filter(|r| *r > 0.0)
        .min_by(f64::total_cmp);
    if let Some(r) = least_r.filter(|r| *r < model.d) {
        model.d = r.max(model.d_max);
        from.push(format!(
            "D capped at the least mean response time, {}",
            super::render::millis(r * 1e3)
        ));
    }
    Some(Bound {
        model,
        from: from.join(", "),
    })
}

/// How far a measurement may pass its bound before it contradicts the model: the demands are
/// busy time over the sampler's window (whole seconds of /proc readings, ticks of 10 ms) and
/// the throughput is events over the runner's measured time, and the two windows differ by up
/// to a reading at each end. The run a demand came from sits on its bound by construction, so
/// without this margin rounding alone would flag it (2,929 tps against a bound of 2,926).
pub const PRECISION: f64 = 0.03;

/// Whether a run's measurement contradicts the model: throughput above the throughput bound,
/// or a mean response time below the response-time bound, by more than [`PRECISION`].
pub fn breaks_bound(m: &Model, clients: u32, tps: f64, avg_ms: f64) -> Option<&'static str> {
    let n = f64::from(clients);
    if tps > m.x_bound(n) * (1.0 + PRECISION) {
        Some("tps above its bound: model error")
    } else if avg_ms > 0.0 && avg_ms < m.r_bound(n) * 1e3 * (1.0 - PRECISION) {
        Some("latency below its bound: model error")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measurement_on_its_bound_is_no_model_error_and_one_beyond_it_is() {
        // D = 1 ms, D_max = 0.5 ms: X(2) <= 2000 tps, R(2) >= 1 ms.
        let m = Model {
            d: 0.001,
            d_max: 0.0005,
            bottleneck: "cpu",
            z: 0.0,
        };
        assert_eq!(breaks_bound(&m, 2, 2002.0, 1.0), None, "rounding");
        assert_eq!(breaks_bound(&m, 2, 2040.0, 1.0), None, "within 3%");
        assert!(breaks_bound(&m, 2, 2100.0, 1.0).is_some());
        assert_eq!(breaks_bound(&m, 2, 1900.0, 0.98), None);
        assert!(breaks_bound(&m, 2, 1900.0, 0.9).is_some());
    }
}
