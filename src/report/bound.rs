//! Each step set against the machine's ceilings (`limits = true`, `dbsweep limits`): the
//! resource nearest its limit and how near, from what the step did per event and what the
//! probes measured the disk, the log's sync, the CPUs and the connection could do at most.
//!
//! A ceiling is a bound: a step measured above one (a read rate over the probe's at that
//! depth: read-ahead, the OS cache; commits over the sync rate: group commit) contradicts the
//! probe's model of the step, and the table says so rather than calling the resource the bound.

use super::model::{Dataset, Entry, Group};
use super::tables::{Cell, Row, Table};
use crate::limits::{Kind, Limits};
use crate::results::Results;
use crate::results::figures::HwFigures;

/// One resource's use against its ceiling.
#[derive(Clone, Debug, PartialEq)]
pub struct Use {
    /// "disk random reads at depth 1".
    pub resource: String,
    pub measured: f64,
    pub limit: f64,
    /// The unit of both figures ("reads/s").
    pub unit: &'static str,
}

impl Use {
    pub fn ratio(&self) -> f64 {
        if self.limit > 0.0 {
            self.measured / self.limit
        } else {
            0.0
        }
    }
}

/// How far above its ceiling a use may be before it contradicts the probe: the probe and the
/// step are two measurements of a few seconds each, a tenth apart on this kind of machine.
pub const OVER: f64 = 1.10;

/// The probe's depth that a step with `clients` clients meets: the deepest probed depth not
/// above the client count (each client waits on one request at a time), else the shallowest.
fn depth_for(l: &Limits, kind: Kind, clients: u32) -> Option<&crate::limits::Figure> {
    let mut of_kind: Vec<_> = l.figures.iter().filter(|f| f.kind == kind).collect();
    of_kind.sort_by_key(|f| f.depth);
    of_kind
        .iter()
        .rev()
        .find(|f| f.depth <= clients.max(1))
        .or_else(|| of_kind.first())
        .copied()
}

/// Whether the step's device figures are of the device the limits were probed on (a
/// partition's figures count as its disk's).
fn same_device(l: &Limits, device: Option<&str>) -> bool {
    let (Some(d), Some(dev)) = (l.device.as_ref(), device) else {
        return false;
    };
    let name = d.source.rsplit('/').next().unwrap_or(&d.source);
    !dev.is_empty() && (name == dev || name.starts_with(dev) || dev.starts_with(name))
}

/// How much more the device may have read than the step's processes for its mean request
/// to be theirs.
const MOSTLY_OWN: f64 = 1.25;

/// A step's disk use: read requests a second, MB/s read and written.
struct DiskUse {
    reads_per_s: Option<f64>,
    read_mb_s: Option<f64>,
    write_mb_s: Option<f64>,
}

fn disk_use(r: &Results, l: &Limits, h: &HwFigures) -> DiskUse {
    let eps = r.tps;
    let p = &h.proc_io_kb;
    let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    // The processes' figures count only where the server's are known (or the database is the
    // client itself): a client's alone says nothing of a server's reads.
    let known = p.server_read.is_some() || r.target.kind == "sqlite";
    let secs = r.time_s;
    let proc_read = sum(p.client_read, p.server_read).filter(|_| known && secs > 0.0);
    let proc_write = sum(p.client_write, p.server_write).filter(|_| known && secs > 0.0);
    let on_device = same_device(l, h.device.as_deref());
    // What a process's KB read are in requests: the device's mean read request where the
    // step's processes did most of the device's reads (others' large or small requests on a
    // shared device would make it theirs), else the page the server reads.
    let page_kb = l.page as f64 / 1024.0;
    let request_kb = match (h.rkb_per_o, h.r_per_o, proc_read) {
        (Some(kb), Some(n), Some(own))
            if on_device && n > 0.0 && kb > 0.0 && kb * eps * secs <= own * MOSTLY_OWN =>
        {
            kb / n
        }
        _ => page_kb,
    };
    let mb = |kb_s: f64| kb_s * 1024.0 / 1e6;
    match proc_read {
        Some(kb) => DiskUse {
            reads_per_s: Some(kb / secs / request_kb),
            read_mb_s: Some(mb(kb / secs)),
            write_mb_s: proc_write.map(|kb| mb(kb / secs)),
        },
        None if on_device => DiskUse {
            reads_per_s: h.r_per_o.map(|n| n * eps),
            read_mb_s: h.rkb_per_o.map(|kb| mb(kb * eps)),
            write_mb_s: h.wkb_per_o.map(|kb| mb(kb * eps)),
        },
        None => DiskUse {
            reads_per_s: None,
            read_mb_s: None,
            write_mb_s: None,
        },
    }
}

/// The server's log syncs per event, where its counters say (PostgreSQL's pg_stat_wal,
/// InnoDB's log fsyncs).
fn log_syncs_per_event(r: &Results) -> Option<f64> {
    let s = r.server_stats.as_ref()?;
    let d = |k: &str| s.deltas.get(k).copied().filter(|v| *v > 0.0);
    let syncs = d("pg_stat_wal.wal_sync")
        .or_else(|| d("global_status.Innodb_os_log_fsyncs"))
        .or_else(|| d("global_status.Innodb_data_fsyncs"))?;
    (r.events > 0).then(|| syncs / r.events as f64)
}

/// Every resource of step `r` (run with `clients` clients) that its limits and figures let
/// set against a ceiling, nearest first.
pub fn uses(r: &Results) -> Vec<Use> {
    let Some(l) = r.limits.as_deref() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let eps = r.tps;
    let clients = r.threads;
    let hw = r.hw.as_ref();
    // The CPUs: the server host's when node_exporter gave them (the database's work is
    // there), and this machine's, where the clients (and a local server) ran.
    // A closed loop of N clients keeps at most N requests going (each in its client or in the
    // server, not both): N of the cores, when there are more.
    let reach = |cpus: usize| 100.0 * f64::from(clients.max(1)).min(cpus.max(1) as f64);
    if let Some(h) = &r.server_host
        && let (Some(u), Some(s)) = (h.cpu_user_pct, h.cpu_system_pct)
    {
        let cpus = h.cpus.unwrap_or(1).max(1);
        out.push(Use {
            resource: "server host CPU".into(),
            measured: (u + s) * cpus as f64,
            limit: reach(cpus),
            unit: "% of one CPU",
        });
    }
    if let Some(h) = hw.filter(|h| h.cpus > 0) {
        // The step's own processes (the client, and the server where its processes are
        // known): what others take of the machine is the busy-machine warning's, not this
        // step's bound. A local server whose processes are not known: the machine's.
        let c = &h.cpu_pct;
        let client = c.client_user + c.client_system;
        let here = l.network.as_ref().is_none_or(|n| n.local);
        let (words, busy) = match (c.server_user, c.server_system) {
            (Some(u), Some(s)) => ("CPU", client + u + s),
            _ if r.target.kind == "sqlite" => ("CPU", client),
            _ if !here => ("client CPU", client),
            _ => (
                "CPU (the machine's)",
                (c.machine_user + c.machine_system) * h.cpus as f64,
            ),
        };
        if busy > 0.0 {
            out.push(Use {
                resource: words.into(),
                measured: busy,
                limit: reach(h.cpus),
                unit: "% of one CPU",
            });
        }
    }
    // The disk: what the step's own processes read and wrote (/proc/PID/io: other processes
    // on the device are not this step's), in the device's requests of its mean size over the
    // step; the device's own counts where the processes' are not known.
    if let Some(h) = hw {
        let disk = disk_use(r, l, h);
        if let (Some(reads), Some(f)) = (disk.reads_per_s, depth_for(l, Kind::RandomRead, clients))
            && reads > 0.0
        {
            out.push(Use {
                resource: format!(
                    "disk random reads ({} KB, depth {})",
                    f.block / 1024,
                    f.depth
                ),
                measured: reads,
                limit: f.iops,
                unit: "reads/s",
            });
        }
        for (m, kind, words) in [
            (disk.read_mb_s, Kind::SequentialRead, "disk read bandwidth"),
            (
                disk.write_mb_s,
                Kind::SequentialWrite,
                "disk write bandwidth",
            ),
        ] {
            if let (Some(m), Some(f)) = (m, l.best(kind))
                && m > 0.0
            {
                out.push(Use {
                    resource: words.into(),
                    measured: m,
                    limit: f.mb_s,
                    unit: "MB/s",
                });
            }
        }
    }
    // The log's sync: the server's own count of its syncs where it keeps one (one flusher at a
    // time: the one-writer ceiling); else a single client's commits.
    let one_writer = l.find(Kind::WriteFdatasync, 1, 1);
    let writes = r.queries.write > 0;
    if let Some(f) = one_writer.filter(|_| writes) {
        let syncs = log_syncs_per_event(r).map(|s| s * eps).or_else(|| {
            // Embedded SQLite's commits sync only where its settings say so: no count.
            (clients == 1 && r.target.kind != "sqlite").then_some(eps)
        });
        if let Some(s) = syncs.filter(|s| *s > 0.0) {
            out.push(Use {
                resource: "log sync (one writer)".into(),
                measured: s,
                limit: f.iops,
                unit: "syncs/s",
            });
        }
    }
    // The connection, for a server on another host.
    if let Some(n) = l.network.as_ref().filter(|n| !n.local) {
        if n.round_trip_us_p50 > 0.0 && clients > 0 && r.qps > 0.0 {
            out.push(Use {
                resource: "network round trip".into(),
                measured: r.qps / f64::from(clients),
                limit: 1e6 / n.round_trip_us_p50,
                unit: "round trips/s per client",
            });
        }
        if let Some(net) = hw.and_then(|h| h.net.as_ref())
            && n.result_mb_s > 0.0
        {
            out.push(Use {
                resource: "network bandwidth".into(),
                measured: net.rx_kb_per_o.max(net.tx_kb_per_o) * 1024.0 * eps / 1e6,
                limit: n.result_mb_s,
                unit: "MB/s",
            });
        }
    }
    out.sort_by(|a, b| b.ratio().total_cmp(&a.ratio()));
    out
}

/// A device of the queueing model as the probes measured it: its name, its service demand
/// per event in seconds (over all its servers) and its servers.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbedDevice {
    pub name: &'static str,
    pub demand: f64,
    pub capacity: f64,
    /// "a read 80 us, 3.4 at once".
    pub service: String,
}

/// The disk's reads and the log's syncs as devices of the queueing model, from the probes:
/// a read's service time is the probe's at depth 1 and the disk serves as many at once as
/// its best depth's rate over depth 1's; the log syncs one at a time, each the one-writer
/// probe's time.
pub fn probed_devices(r: &Results) -> Vec<ProbedDevice> {
    let (Some(l), Some(h)) = (r.limits.as_deref(), r.hw.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if r.tps <= 0.0 {
        return out;
    }
    let reads = l
        .figures
        .iter()
        .filter(|f| f.kind == Kind::RandomRead)
        .min_by_key(|f| f.depth);
    if let (Some(per_s), Some(first), Some(best)) = (
        disk_use(r, l, h).reads_per_s,
        reads,
        l.best(Kind::RandomRead),
    ) && per_s > 0.0
        && first.iops > 0.0
    {
        let s = 1.0 / first.iops;
        let c = (best.iops / first.iops).max(1.0);
        out.push(ProbedDevice {
            name: "disk reads",
            demand: per_s / r.tps * s,
            capacity: c,
            service: format!("a read {:.0} us, {c:.1} at once", s * 1e6),
        });
    }
    if let (Some(per_event), Some(f)) = (
        log_syncs_per_event(r).filter(|_| r.queries.write > 0),
        l.find(Kind::WriteFdatasync, 1, 1),
    ) && f.iops > 0.0
    {
        out.push(ProbedDevice {
            name: "log sync",
            demand: per_event / f.iops,
            capacity: 1.0,
            service: format!("a sync {:.0} us", 1e6 / f.iops),
        });
    }
    out
}

/// What bound a step: the nearest resource within its ceiling ("disk random reads (16 KB,
/// depth 1) 0.83"), with every resource above its ceiling named as contradicting the probe.
pub fn verdict(r: &Results) -> Option<String> {
    let all = uses(r);
    let within = all.iter().find(|u| u.ratio() <= OVER)?;
    let mut s = format!("{} {:.2}", within.resource, within.ratio());
    let over: Vec<String> = all
        .iter()
        .filter(|u| u.ratio() > OVER)
        .map(|u| format!("{} {:.2}", u.resource, u.ratio()))
        .collect();
    if !over.is_empty() {
        s.push_str(&format!(
            "; above the probe's ceiling, which the step contradicts: {}",
            over.join(", ")
        ));
    }
    Some(s)
}

/// The resource's name without its shape: "disk random reads (16 KB, depth 4)" is "disk random
/// reads" at every client count.
fn family(resource: &str) -> &str {
    resource.split(" (").next().unwrap_or(resource)
}

/// Each ceiling of `runs` (one test in one configuration at several client counts) in events
/// a second: at each client count, the throughput at which the resource would reach its
/// limit, from what that run used of it per event. Only the ceilings below `within` times the
/// highest throughput measured: one far above says nothing a chart can show.
pub fn ceilings(runs: &[&Entry], within: f64) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    let top = runs
        .iter()
        .filter_map(|e| e.results.as_ref().map(|r| r.tps))
        .fold(0.0, f64::max);
    for e in runs {
        let Some(r) = e.results.as_ref() else {
            continue;
        };
        for u in uses(r) {
            let ratio = u.ratio();
            if ratio <= 0.0 || r.tps <= 0.0 {
                continue;
            }
            let point = (f64::from(e.place.clients), r.tps / ratio);
            let name = family(&u.resource);
            match lines.iter_mut().find(|(n, _)| n == name) {
                Some((_, pts)) if !pts.iter().any(|p| p.0 == point.0) => pts.push(point),
                Some(_) => {}
                None => lines.push((name.to_string(), vec![point])),
            }
        }
    }
    lines.retain(|(_, pts)| pts.iter().any(|p| p.1 <= top * within));
    for (_, pts) in &mut lines {
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    lines
}

/// The entries that have limits: every test's first run in each place, in order.
fn with_limits(ds: &Dataset) -> Vec<&Entry> {
    ds.entries
        .iter()
        .filter(|e| e.group != Group::Load && e.repeat == 1)
        .filter(|e| e.results.as_ref().is_some_and(|r| r.limits.is_some()))
        .collect()
}

fn cell_of(e: &Entry) -> String {
    format!("{}/{} c{}", e.place.target, e.place.config, e.place.clients)
}

/// The bound table (each step's nearest ceiling) and, for `report --full`, every resource of
/// every step against its ceiling.
pub fn tables(ds: &Dataset) -> Vec<Table> {
    let entries = with_limits(ds);
    if entries.is_empty() {
        return Vec::new();
    }
    let mut bound = Table {
        id: "bounds".into(),
        title: "What bound each step: the resource nearest its ceiling (the machine's limits, measured with the sweep)".into(),
        better: None,
        columns: ["cell", "bound by", "of its ceiling"].map(String::from).to_vec(),
        under: Vec::new(),
        rows: Vec::new(),
        notes: vec![
            "each resource's use over what the probes measured it could do (dbsweep limits): the disk's random reads at the depth the clients make, its sequential bandwidth, the log's write + fdatasync by one writer, the CPUs (as many cores as the clients keep requests going, at most all), and for a server on another host its connection's round trip and bandwidth; 1.00 is at the ceiling. A use above its ceiling by more than a tenth contradicts the probe (read-ahead, a cache, group commit) and is named as such, not as the bound.".into(),
        ],
    };
    let mut full = Table {
        id: "bounds.full".into(),
        title: "Each step's resources against the machine's ceilings".into(),
        better: None,
        columns: [
            "cell",
            "resource",
            "measured",
            "ceiling",
            "unit",
            "of ceiling",
        ]
        .map(String::from)
        .to_vec(),
        under: Vec::new(),
        rows: Vec::new(),
        notes: vec![
            "measured: the step's rate of the resource; ceiling: the probe's (the same unit)"
                .into(),
        ],
    };
    for e in entries {
        let r = e.results.as_ref().expect("filtered");
        let all = uses(r);
        let (by, near) = match all.iter().find(|u| u.ratio() <= OVER) {
            Some(u) => (u.resource.clone(), Cell::Num(u.ratio())),
            None => ("none within its ceiling".into(), Cell::Missing),
        };
        let over: Vec<&str> = all
            .iter()
            .filter(|u| u.ratio() > OVER)
            .map(|u| u.resource.as_str())
            .collect();
        let by = if over.is_empty() {
            by
        } else {
            format!("{by} (contradicts the probe: {})", over.join(", "))
        };
        bound.rows.push(Row {
            group: Some(e.group),
            label: e.test.clone(),
            summary: false,
            cells: vec![Cell::Text(cell_of(e)), Cell::Text(by), near],
        });
        for u in &all {
            full.rows.push(Row {
                group: Some(e.group),
                label: e.test.clone(),
                summary: false,
                cells: vec![
                    Cell::Text(cell_of(e)),
                    Cell::Text(if u.ratio() > OVER {
                        format!("{} (above: contradicts the probe)", u.resource)
                    } else {
                        u.resource.clone()
                    }),
                    Cell::Num(u.measured),
                    Cell::Num(u.limit),
                    Cell::Text(u.unit.into()),
                    Cell::Num(u.ratio()),
                ],
            });
        }
    }
    vec![bound, full]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::{Device, Figure};

    fn figure(kind: Kind, block: u64, depth: u32, writers: u32, iops: f64) -> Figure {
        Figure {
            kind,
            block,
            depth,
            writers,
            direct: true,
            iops,
            mb_s: iops * block as f64 / 1e6,
            p50_us: 0.0,
            p99_us: 0.0,
            cpu_us_per_io: 0.0,
            seconds: 1.0,
        }
    }

    fn limits() -> Limits {
        Limits {
            measured_at: 0,
            host: "h".into(),
            dir: "/d".into(),
            device: Some(Device {
                source: "/dev/vda1".into(),
                number: "254:1".into(),
                fs: "ext4".into(),
                mount: "/".into(),
                bytes: 1 << 40,
            }),
            direct: true,
            page: 16384,
            log_block: 4096,
            file_bytes: 1 << 30,
            figures: vec![
                figure(Kind::RandomRead, 16384, 1, 1, 10_000.0),
                figure(Kind::RandomRead, 16384, 4, 1, 30_000.0),
                figure(Kind::SequentialRead, 1 << 20, 4, 1, 800.0),
                figure(Kind::SequentialWrite, 1 << 20, 4, 1, 2000.0),
                figure(Kind::WriteFdatasync, 4096, 1, 1, 500.0),
                figure(Kind::WriteFdatasync, 4096, 1, 8, 3000.0),
            ],
            notes: Vec::new(),
            network: None,
        }
    }

    /// A step's results: the fixture's point-select run, `tps` events a second with
    /// `reads` device reads each, its processes `busy` percent of one CPU, `writes` queries
    /// writing.
    fn step(tps: f64, reads: f64, busy: f64, writes: u64, clients: u32) -> Results {
        let mut r: Results =
            serde_json::from_str(include_str!("../../tests/fixtures/report/cmp-a.json")).unwrap();
        r.tps = tps;
        r.qps = tps;
        r.events = (tps * 10.0) as u64;
        r.threads = clients;
        r.queries.write = writes;
        r.target.kind = "mysql".into();
        let hw = r.hw.as_mut().unwrap();
        hw.r_per_o = Some(reads);
        hw.rkb_per_o = Some(reads * 16.0);
        hw.wkb_per_o = Some(0.0);
        // The client's and the server's processes, in percent of one CPU.
        hw.cpu_pct.client_user = busy / 2.0;
        hw.cpu_pct.client_system = 0.0;
        hw.cpu_pct.server_user = Some(busy / 2.0);
        hw.cpu_pct.server_system = Some(0.0);
        r.limits = Some(Box::new(limits()));
        r
    }

    #[test]
    fn an_io_bound_step_is_bound_by_the_disk_at_its_clients_depth() {
        // One client, 8,300 reads/s against 10,000 at depth 1: 0.83; CPU 20%.
        let r = step(8300.0, 1.0, 20.0, 0, 1);
        let u = uses(&r);
        assert_eq!(u[0].resource, "disk random reads (16 KB, depth 1)");
        assert!((u[0].ratio() - 0.83).abs() < 1e-9);
        assert_eq!(
            verdict(&r).unwrap(),
            "disk random reads (16 KB, depth 1) 0.83"
        );
        // Four clients meet the depth-4 figure.
        let r = step(24_000.0, 1.0, 20.0, 0, 6);
        assert_eq!(uses(&r)[0].resource, "disk random reads (16 KB, depth 4)");
        assert!((uses(&r)[0].ratio() - 0.8).abs() < 1e-9);
    }

    #[test]
    fn a_cached_step_is_bound_by_the_cpu() {
        let r = step(40_000.0, 0.0, 194.0, 0, 2);
        assert_eq!(verdict(&r).unwrap(), "CPU 0.97");
        // One client keeps one request going: one of the two cores is its ceiling.
        let r = step(20_000.0, 0.0, 98.0, 0, 1);
        assert_eq!(verdict(&r).unwrap(), "CPU 0.98");
    }

    #[test]
    fn one_client_committing_each_row_is_bound_by_the_log_sync() {
        // 480 commits/s against 500 syncs/s: the sync is the bound.
        let r = step(480.0, 0.0, 10.0, 4800, 1);
        assert_eq!(verdict(&r).unwrap(), "log sync (one writer) 0.96");
        // Several clients' commits without the server's count of its syncs: group commit
        // makes them no measure of the sync.
        let r = step(480.0, 0.0, 10.0, 4800, 4);
        assert!(uses(&r).iter().all(|u| !u.resource.starts_with("log")));
    }

    #[test]
    fn a_use_above_its_ceiling_is_said_to_contradict_the_probe() {
        // 15,000 reads/s at depth 1 against 10,000: read-ahead or a cache answered.
        let r = step(15_000.0, 1.0, 80.0, 0, 1);
        let v = verdict(&r).unwrap();
        assert!(v.starts_with("CPU 0.80"), "{v}");
        assert!(
            v.contains("contradicts: disk random reads (16 KB, depth 1) 1.50"),
            "{v}"
        );
    }

    #[test]
    fn the_steps_own_reads_count_not_the_devices_others() {
        // The server read 32 KB an event and the device 35.2 KB in 1.1 requests: the device's
        // reads are mostly the server's, 8,300 requests a second of the device's 32 KB.
        let mut r = step(8300.0, 1.1, 20.0, 0, 1);
        r.time_s = 10.0;
        let h = r.hw.as_mut().unwrap();
        h.rkb_per_o = Some(35.2);
        h.proc_io_kb.server_read = Some(8300.0 * 32.0 * 10.0);
        h.proc_io_kb.client_read = Some(0.0);
        let u = uses(&r);
        assert_eq!(u[0].resource, "disk random reads (16 KB, depth 1)");
        assert!((u[0].measured - 8300.0).abs() < 1e-6, "{u:?}");
        // Another process's 128 KB reads made most of the device's: its mean request is
        // theirs, and the server's 16 KB an event are pages.
        let h = r.hw.as_mut().unwrap();
        h.r_per_o = Some(3.0);
        h.rkb_per_o = Some(3.0 * 128.0);
        h.proc_io_kb.server_read = Some(8300.0 * 16.0 * 10.0);
        let u = uses(&r);
        assert_eq!(u[0].resource, "disk random reads (16 KB, depth 1)");
        assert!((u[0].measured - 8300.0).abs() < 1e-6, "{u:?}");
    }

    #[test]
    fn another_device_or_no_limits_gives_no_disk_figure() {
        let mut r = step(8300.0, 1.0, 20.0, 0, 1);
        r.hw.as_mut().unwrap().device = Some("sdb".into());
        assert!(uses(&r).iter().all(|u| !u.resource.starts_with("disk")));
        r.limits = None;
        assert!(uses(&r).is_empty() && verdict(&r).is_none());
    }

    fn entry(r: Results, clients: u32) -> Entry {
        Entry {
            place: crate::report::model::Place {
                source: "s".into(),
                target: "t".into(),
                config: "c".into(),
                clients,
            },
            test: "oltp_point_select".into(),
            order: 0,
            group: Group::PointQueries,
            results: Some(r),
            load_rows_per_s: None,
            load_rows: None,
            load_hw: None,
            repeat: 1,
            family_figure: None,
        }
    }

    #[test]
    fn each_ceiling_is_the_throughput_at_which_its_resource_would_be_full() {
        // 1 client: 10,000/s at 50% of its one core: the CPU's ceiling is 20,000/s; 2
        // clients: 16,000/s at 160% of two: 20,000/s. The disk reads nothing: no line.
        let one = entry(step(10_000.0, 0.0, 50.0, 0, 1), 1);
        let two = entry(step(16_000.0, 0.0, 160.0, 0, 2), 2);
        let lines = ceilings(&[&one, &two], 2.0);
        let cpu = lines
            .iter()
            .find(|(n, _)| n == "CPU")
            .expect("a CPU ceiling");
        assert_eq!(cpu.1.len(), 2);
        assert!((cpu.1[0].0 - 1.0).abs() < 1e-9 && (cpu.1[0].1 - 20_000.0).abs() < 1e-6);
        assert!((cpu.1[1].1 - 20_000.0).abs() < 1e-6, "{lines:?}");
        // A ceiling far above what was measured is left off the chart.
        assert!(ceilings(&[&one, &two], 1.1).iter().all(|(n, _)| n != "CPU"));
    }

    #[test]
    fn the_queueing_model_takes_the_disks_service_time_from_the_probe() {
        // One read an event; the probe reads 10,000/s at depth 1 and 30,000/s at depth 4:
        // a read is 100 us and the disk serves three at once, so 1 client is bounded by its
        // 100 us and many by 30,000/s (CPU aside: a fifth of a core an event each).
        let one = entry(step(8000.0, 1.0, 20.0, 0, 1), 1);
        let four = entry(step(24_000.0, 1.0, 60.0, 0, 4), 4);
        let b = crate::report::scaling::bound_of(&[&one, &four]).unwrap();
        assert!(
            b.from
                .contains("disk reads at 1 clients (a read 100 us, 3.0 at once, the probe's)"),
            "{}",
            b.from
        );
        assert_eq!(b.model.bottleneck, "disk reads");
        assert!(
            (b.model.x_bound(64.0) - 30_000.0).abs() < 1.0,
            "{:?}",
            b.model
        );
        // A run beyond the probe's ceiling contradicts the model, and is flagged.
        assert!(crate::report::scaling::breaks_bound(&b.model, 64, 36_000.0, 0.0).is_some());
    }
}
