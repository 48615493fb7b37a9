//! The hardware sampler: reads /proc once a second during a step and turns the deltas into
//! per-operation figures (docs/workloads.md section 5): CPU microseconds per operation for the
//! client, the server's processes and the machine, cpu/o, cs/o, r/o, rKB/o, wKB/o for the
//! device that holds the data, and the server's RSS; and, per step, CPU busy split into user,
//! system and iowait (machine, client, server), the server's context switches, and the bytes
//! the client and server processes read and wrote (/proc/PID/io).

use std::fs;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::cpufreq::{MhzAcc, cpu_khz};
use super::procfs::{
    DiskStat, MachineStat, ProcCpu, machine_delta, parse_diskstats, parse_pid_cpu_split,
    parse_pid_io, parse_proc_stat, read_process, reaped_children_ticks, ticks_per_second,
};
use crate::results::figures::{
    CpuPct, CpuPerOp, HwFigures, HwSecond, MhzRange, NetFigures, ProcIoKb,
};

/// One reading of everything the sampler follows.
#[derive(Clone, Debug)]
struct Reading {
    at: Instant,
    machine: MachineStat,
    client_ticks: u64,
    server_ticks: Option<u64>,
    server_rss_kb: Option<u64>,
    disk: Option<DiskStat>,
    client_cpu: ProcCpu,
    server_cpu: Option<ProcCpu>,
    /// Context switches of the server's live threads.
    server_cs: Option<u64>,
    /// (read, written) bytes of the client and of the server's live processes.
    client_io: Option<(u64, u64)>,
    server_io: Option<(u64, u64)>,
    /// (received, sent) bytes of the interface towards the database.
    net: Option<(u64, u64)>,
    /// The server's processes, when this reading read them.
    procs: Option<usize>,
}

/// What to sample: the server's processes (a function, since they come and go) and the
/// data device.
pub struct Subject {
    pub server_pids: Option<Box<dyn Fn() -> Vec<u32> + Send>>,
    pub device: Option<String>,
    /// The network interface that carries the connection to the database, and its speed in
    /// Mbit/s when sysfs does not know it (`--link-speed`).
    pub net_device: Option<String>,
    pub link_mbit: Option<f64>,
    /// Whether every process of this machine that serves the run is known (the client, and
    /// the server's processes or none here): the rest of its CPU is then others'.
    pub all_known: bool,
}

/// Server processes whose files the sampler reads a second, on average: with more (a server
/// process per connection, thousands of connections), it reads them every few seconds only, so
/// that sampling stays a small part of the client's CPU. The step's figures come from the first
/// and last readings, which always read them all.
const SERVER_PROCS_PER_SECOND: usize = 32;

/// Passes over the server's processes a consistent reading may take (the step's first and last).
const STABLE_TRIES: usize = 20;

/// The server's processes summed: (how many, CPU, RSS kB, context switches, IO).
type ServerSum = (usize, ProcCpu, u64, u64, Option<(u64, u64)>);

/// One pass over `pids` (the first is the server's main process, whose reaped children count).
fn server_pass(
    pids: &[u32],
    read_one: &dyn Fn(u32, bool) -> Option<crate::metrics::procfs::ProcessReading>,
) -> ServerSum {
    let (mut cpu, mut rss, mut cs) = (ProcCpu::default(), 0, 0);
    let mut io: Option<(u64, u64)> = None;
    for (i, p) in pids.iter().enumerate() {
        let Some(one) = read_one(*p, i == 0) else {
            continue;
        };
        cpu = cpu + one.cpu;
        rss += one.rss_kb;
        cs += one.cs;
        // /proc/PID/io of another user's process needs root (or the same user).
        if let Some((r, w)) = one.io {
            let sum = io.get_or_insert((0, 0));
            *sum = (sum.0 + r, sum.1 + w);
        }
    }
    (pids.len(), cpu, rss, cs, io)
}

/// The server's processes read consistently. A backend that exits and is reaped while a pass
/// reads is counted twice or not at all (its times move from its own stat into its parent's
/// reaped-children times), and the kernel's children lists may skip entries while they
/// change: both happen when a step's clients disconnect and their backends exit, just before
/// the step's last reading, which then lost the backends' whole CPU (a step once recorded
/// 0.037 us of server CPU per query at 54k queries/s). A pass is kept when the process list and
/// the main process's reaped-children times are the same before and after it (at most
/// [`STABLE_TRIES`] passes, 5 ms apart; the last one otherwise).
fn stable_server_pass(
    list: &dyn Fn() -> Vec<u32>,
    reaped: &dyn Fn(u32) -> Option<u64>,
    read_one: &dyn Fn(u32, bool) -> Option<crate::metrics::procfs::ProcessReading>,
) -> ServerSum {
    let mut last = None;
    for attempt in 0..STABLE_TRIES {
        if attempt > 0 {
            std::thread::sleep(Duration::from_millis(5));
        }
        let pids = list();
        let root = pids.first().copied();
        let reaped_before = root.and_then(reaped);
        let sum = server_pass(&pids, read_one);
        let stable = list() == pids && root.and_then(reaped) == reaped_before;
        if stable {
            return sum;
        }
        last = Some(sum);
    }
    last.unwrap_or_default()
}

/// `server`: whether to read the server's processes (a full reading), or only the machine, the
/// client, the disk and the network; `stable`: a reading the step's figures come from (its
/// first and last), read until consistent.
fn read(subject: &Subject, server: bool, stable: bool) -> Option<Reading> {
    let machine = parse_proc_stat(&fs::read_to_string("/proc/stat").ok()?)?;
    let client_cpu = parse_pid_cpu_split(&fs::read_to_string("/proc/self/stat").ok()?, false)?;
    let client_io = fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|t| parse_pid_io(&t));
    let mut server_cpu = None;
    let mut server_rss_kb = None;
    let mut server_cs = None;
    let mut server_io = None;
    let mut procs = None;
    if let Some(pids) = subject.server_pids.as_ref().filter(|_| server) {
        // The first pid is the server's main process: count its exited children too.
        let (n, cpu, rss, cs, io) = if stable {
            stable_server_pass(pids.as_ref(), &reaped_children_ticks, &read_process)
        } else {
            server_pass(&pids(), &read_process)
        };
        procs = Some(n);
        (server_cpu, server_rss_kb, server_cs, server_io) = (Some(cpu), Some(rss), Some(cs), io);
    }
    let disk = subject
        .device
        .as_deref()
        .and_then(|d| parse_diskstats(&fs::read_to_string("/proc/diskstats").ok()?, d));
    let net = subject
        .net_device
        .as_deref()
        .and_then(super::net::read_device);
    Some(Reading {
        net,
        procs,
        at: Instant::now(),
        machine,
        client_ticks: client_cpu.user + client_cpu.system,
        server_ticks: server_cpu.map(|c| c.user + c.system),
        server_rss_kb,
        disk,
        client_cpu,
        server_cpu,
        server_cs,
        client_io,
        server_io,
    })
}

/// Turns the first and last readings into per-operation figures for `ops` operations.
fn figures(
    first: &Reading,
    last: &Reading,
    ops: u64,
    device: Option<String>,
    ticks_per_s: f64,
) -> HwFigures {
    let secs = last.at.duration_since(first.at).as_secs_f64();
    let per_op = |x: f64| (ops > 0).then(|| x / ops as f64);
    let ticks_us = |t: u64| t as f64 / ticks_per_s * 1e6;
    let ops_per_s = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
    let per_o = |per_s: f64| (ops_per_s > 0.0).then(|| per_s / ops_per_s);
    let (busy, total, _) = machine_delta(&first.machine, &last.machine, secs, ticks_per_s);
    let busy_pct = if total > 0.0 {
        busy * 100.0 / total
    } else {
        0.0
    };
    let disk = first.disk.zip(last.disk).filter(|_| secs > 0.0);
    HwFigures {
        cpu_us_per_op: CpuPerOp {
            client: per_op(ticks_us(last.client_ticks - first.client_ticks)),
            server: first
                .server_ticks
                .zip(last.server_ticks)
                .and_then(|(a, b)| per_op(ticks_us(b.saturating_sub(a)))),
            machine: per_op(busy / ticks_per_s * 1e6),
        },
        cpu_per_o: per_o(busy_pct),
        cs_per_o: (secs > 0.0)
            .then(|| (last.machine.ctxt - first.machine.ctxt) as f64 / secs)
            .and_then(per_o),
        r_per_o: disk.and_then(|(a, b)| per_o((b.reads - a.reads) as f64 / secs)),
        rkb_per_o: disk
            .and_then(|(a, b)| per_o((b.sectors_read - a.sectors_read) as f64 / 2.0 / secs)),
        wkb_per_o: disk
            .and_then(|(a, b)| per_o((b.sectors_written - a.sectors_written) as f64 / 2.0 / secs)),
        server_rss_kb: last.server_rss_kb,
        client_peak_rss_kb: None,
        sqlite_heap_peak_kb: None,
        device,
        device_busy_pct: disk.map(|(a, b)| {
            (b.io_ms.saturating_sub(a.io_ms) as f64 / (secs * 1000.0) * 100.0).min(100.0)
        }),
        cpus: std::thread::available_parallelism().map_or(1, usize::from),
        cpu_pct: cpu_pct(first, last, secs, ticks_per_s),
        server_cs_per_o: first
            .server_cs
            .zip(last.server_cs)
            .filter(|_| secs > 0.0)
            .and_then(|(a, b)| per_o(b.saturating_sub(a) as f64 / secs)),
        proc_io_kb: {
            let kb = |a: Option<(u64, u64)>, b: Option<(u64, u64)>| {
                a.zip(b).map(|(a, b)| {
                    (
                        b.0.saturating_sub(a.0) as f64 / 1024.0,
                        b.1.saturating_sub(a.1) as f64 / 1024.0,
                    )
                })
            };
            let client = kb(first.client_io, last.client_io);
            let server = kb(first.server_io, last.server_io);
            ProcIoKb {
                client_read: client.map(|c| c.0),
                client_write: client.map(|c| c.1),
                server_read: server.map(|c| c.0),
                server_write: server.map(|c| c.1),
            }
        },
        series: Vec::new(),
        cpu_mhz: None,
        net: None,
        beside: None,
    }
}

fn cpu_pct(first: &Reading, last: &Reading, secs: f64, ticks_per_s: f64) -> CpuPct {
    let (_, total, scale) = machine_delta(&first.machine, &last.machine, secs, ticks_per_s);
    // User and system shares are the ticks' split of the busy time; iowait is exact.
    let share = |a: u64, b: u64, scale: f64| {
        if total > 0.0 {
            b.saturating_sub(a) as f64 * scale * 100.0 / total
        } else {
            0.0
        }
    };
    let machine = |a: u64, b: u64| share(a, b, scale);
    let one_cpu = |a: u64, b: u64| {
        if secs > 0.0 {
            b.saturating_sub(a) as f64 / ticks_per_s / secs * 100.0
        } else {
            0.0
        }
    };
    let server = first.server_cpu.zip(last.server_cpu);
    CpuPct {
        machine_user: machine(first.machine.user, last.machine.user),
        machine_system: machine(first.machine.system, last.machine.system),
        machine_iowait: share(first.machine.iowait, last.machine.iowait, 1.0),
        machine_steal: share(first.machine.steal, last.machine.steal, 1.0),
        client_user: one_cpu(first.client_cpu.user, last.client_cpu.user),
        client_system: one_cpu(first.client_cpu.system, last.client_cpu.system),
        client_iowait: one_cpu(first.client_cpu.iowait, last.client_cpu.iowait),
        server_user: server.map(|(a, b)| one_cpu(a.user, b.user)),
        server_system: server.map(|(a, b)| one_cpu(a.system, b.system)),
        server_iowait: server.map(|(a, b)| one_cpu(a.iowait, b.iowait)),
    }
}

/// One second's figures from two readings; the server's are over the time since `server_prev`,
/// the last reading that read the server's processes (None when `cur` did not).
fn second(
    prev: &Reading,
    cur: &Reading,
    server_prev: &Reading,
    t: f64,
    ticks_per_s: f64,
) -> HwSecond {
    let secs = cur.at.duration_since(prev.at).as_secs_f64().max(1e-9);
    let server_secs = cur
        .at
        .duration_since(server_prev.at)
        .as_secs_f64()
        .max(1e-9);
    let pct = |ticks: u64| ticks as f64 / ticks_per_s / secs * 100.0;
    let (busy, total, _) = machine_delta(&prev.machine, &cur.machine, secs, ticks_per_s);
    HwSecond {
        t,
        machine_busy_pct: if total > 0.0 {
            busy * 100.0 / total
        } else {
            0.0
        },
        client_cpu_pct: pct(cur.client_ticks - prev.client_ticks),
        server_cpu_pct: server_prev
            .server_ticks
            .zip(cur.server_ticks)
            .map(|(a, b)| b.saturating_sub(a) as f64 / ticks_per_s / server_secs * 100.0),
        cs_per_s: (cur.machine.ctxt - prev.machine.ctxt) as f64 / secs,
        machine_iowait_pct: if total > 0.0 {
            cur.machine.iowait.saturating_sub(prev.machine.iowait) as f64 * 100.0 / total
        } else {
            0.0
        },
        server_cs_per_s: server_prev
            .server_cs
            .zip(cur.server_cs)
            .map(|(a, b)| b.saturating_sub(a) as f64 / server_secs),
    }
}

/// What the sampler thread ends with: the first and last readings, the seconds between, and
/// the CPUs' frequency range.
type Sampled = (
    Option<Reading>,
    Option<Reading>,
    Vec<HwSecond>,
    Option<MhzRange>,
);

/// A running sampler thread.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<Sampled>,
    all_known: bool,
    device: Option<String>,
    net_device: Option<String>,
    link_mbit: Option<f64>,
}

impl Sampler {
    /// Starts sampling once a second from `from` (the measured part's start).
    pub fn start(subject: Subject, from: super::MeasureStart) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let device = subject.device.clone();
        let all_known = subject.all_known;
        let (net_device, link_mbit) = (subject.net_device.clone(), subject.link_mbit);
        let handle = std::thread::spawn(move || {
            if !from.wait(&stopped) {
                return (None, None, Vec::new(), None);
            }
            let ticks_per_s = ticks_per_second();
            let mut mhz = MhzAcc::default();
            mhz.add(&cpu_khz());
            let first = read(&subject, true, true);
            let mut prev = first.clone();
            let mut server_prev = first.clone();
            let mut series = Vec::new();
            let mut light = 0;
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_secs(1))
            {
                let procs = server_prev.as_ref().and_then(|r| r.procs).unwrap_or(0);
                let every = procs.div_ceil(SERVER_PROCS_PER_SECOND).max(1);
                light += 1;
                let full = light >= every;
                if full {
                    light = 0;
                }
                let cur = read(&subject, full, false);
                mhz.add(&cpu_khz());
                if let (Some(f), Some(p), Some(c), Some(sp)) = (&first, &prev, &cur, &server_prev) {
                    series.push(second(
                        p,
                        c,
                        sp,
                        c.at.duration_since(f.at).as_secs_f64(),
                        ticks_per_s,
                    ));
                }
                if full && cur.is_some() {
                    server_prev = cur.clone();
                }
                prev = cur;
            }
            (first, read(&subject, true, true), series, mhz.range())
        });
        Sampler {
            stop,
            handle,
            all_known,
            device,
            net_device,
            link_mbit,
        }
    }

    /// Stops sampling and returns the step's figures for `ops` operations.
    pub fn finish(self, ops: u64) -> Option<HwFigures> {
        let _ = self.stop.send(());
        let (first, last, series, mhz) = self.handle.join().ok()?;
        let (first, last) = (first?, last?);
        let mut f = figures(&first, &last, ops, self.device, ticks_per_second());
        let secs = last.at.duration_since(first.at).as_secs_f64();
        f.beside = Some(super::beside::beside(&f, self.all_known, secs));
        f.series = series;
        f.cpu_mhz = mhz;
        if let (Some(dev), Some(a), Some(b)) = (&self.net_device, first.net, last.net) {
            let link = super::net::sysfs_speed(dev)
                .map(|m| (m, "sysfs"))
                .or(self.link_mbit.map(|m| (m, "--link-speed")));
            f.net = NetFigures::of(
                dev,
                (
                    b.0.saturating_sub(a.0) as f64,
                    b.1.saturating_sub(a.1) as f64,
                ),
                last.at.duration_since(first.at).as_secs_f64(),
                ops as f64,
                link,
            );
        }
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backend_reaped_while_the_server_is_read_is_counted_once() {
        use crate::metrics::procfs::ProcessReading;
        use std::cell::Cell;
        // The main process 1 (10 ticks of its own) and backend 2 (1,000 ticks), which exits
        // and is reaped just after the pass has read the main process: its ticks move into
        // the main process's reaped-children times.
        let reaped_now = Cell::new(false);
        let list = || {
            if reaped_now.get() {
                vec![1]
            } else {
                vec![1, 2]
            }
        };
        let reaped = |_: u32| Some(if reaped_now.get() { 1000 } else { 0 });
        let read_one = |pid: u32, main: bool| -> Option<ProcessReading> {
            let user = match pid {
                1 => {
                    let own = 10 + if main && reaped_now.get() { 1000 } else { 0 };
                    // The backend goes while the pass reads on.
                    reaped_now.set(true);
                    own
                }
                _ if reaped_now.get() => return None,
                _ => 1000,
            };
            Some(ProcessReading {
                cpu: ProcCpu {
                    user,
                    system: 0,
                    iowait: 0,
                },
                rss_kb: 0,
                cs: 0,
                io: None,
            })
        };
        // One pass, as the sampler read before: the backend's 1,000 ticks are lost.
        assert_eq!(server_pass(&list(), &read_one).1.user, 10);
        // Read until the list and the reaped times hold still: counted once.
        reaped_now.set(false);
        let (n, cpu, ..) = stable_server_pass(&list, &reaped, &read_one);
        assert_eq!((n, cpu.user), (1, 1010));
    }

    #[test]
    fn frequency_readings_give_a_range_that_says_when_it_varied() {
        let mut acc = MhzAcc::default();
        assert!(acc.range().is_none(), "no cpufreq: no range");
        acc.add(&[3_000_000, 2_900_000]);
        acc.add(&[3_000_000, 2_950_000]);
        let r = acc.range().unwrap();
        assert_eq!((r.min, r.max), (2900.0, 3000.0));
        assert!((r.mean - 2962.5).abs() < 1e-9);
        assert!(!r.varied(), "3% is steady");
        acc.add(&[1_200_000]);
        assert!(
            acc.range().unwrap().varied(),
            "1200 against 3000 MHz varied"
        );
    }

    #[test]
    fn seconds_between_full_readings_give_the_server_over_their_span() {
        let t0 = Instant::now();
        let at = |s: u64, server: Option<u64>| Reading {
            at: t0 + Duration::from_secs(s),
            machine: MachineStat {
                busy: 100 * s,
                total: 200 * s,
                ctxt: 10 * s,
                ..MachineStat::default()
            },
            client_ticks: 5 * s,
            server_ticks: server,
            server_rss_kb: server.map(|_| 1),
            disk: None,
            client_cpu: ProcCpu::default(),
            server_cpu: None,
            server_cs: server.map(|t| t * 3),
            client_io: None,
            server_io: None,
            net: None,
            procs: server.map(|_| 500),
        };
        let (full0, light1, full2) = (at(0, Some(0)), at(1, None), at(3, Some(300)));
        // A light reading has no server figures of its own.
        let s1 = second(&full0, &light1, &full0, 1.0, 100.0);
        assert_eq!((s1.server_cpu_pct, s1.server_cs_per_s), (None, None));
        assert!((s1.client_cpu_pct - 5.0).abs() < 1e-9);
        // The next full one: the server over the 3 s since the last full reading, the rest
        // over the 2 s since the light one.
        let s2 = second(&light1, &full2, &full0, 3.0, 100.0);
        assert!((s2.server_cpu_pct.expect("full") - 100.0).abs() < 1e-9);
        assert!((s2.server_cs_per_s.expect("full") - 300.0).abs() < 1e-9);
        assert!((s2.client_cpu_pct - 5.0).abs() < 1e-9);
    }

    #[test]
    fn figures_are_per_operation() {
        let t0 = Instant::now();
        let a = Reading {
            at: t0,
            machine: MachineStat {
                busy: 1000,
                total: 2000,
                ctxt: 0,
                ..MachineStat::default()
            },
            client_ticks: 100,
            server_ticks: Some(200),
            server_rss_kb: Some(1),
            disk: Some(DiskStat::default()),
            client_cpu: ProcCpu {
                user: 80,
                system: 20,
                iowait: 0,
            },
            server_cpu: Some(ProcCpu {
                user: 150,
                system: 50,
                iowait: 10,
            }),
            server_cs: Some(10),
            client_io: Some((0, 0)),
            server_io: Some((1024, 2048)),
            net: None,
            procs: Some(1),
        };
        let b = Reading {
            at: t0 + Duration::from_secs(2),
            machine: MachineStat {
                busy: 1300,
                total: 2400,
                ctxt: 4000,
                ..MachineStat::default()
            },
            client_ticks: 150,
            server_ticks: Some(300),
            server_rss_kb: Some(4096),
            disk: Some(DiskStat {
                reads: 100,
                sectors_read: 800,
                writes: 50,
                sectors_written: 400,
                io_ms: 500,
            }),
            client_cpu: ProcCpu {
                user: 110,
                system: 40,
                iowait: 0,
            },
            server_cpu: Some(ProcCpu {
                user: 220,
                system: 80,
                iowait: 50,
            }),
            server_cs: Some(2010),
            client_io: Some((4096, 0)),
            server_io: Some((1024, 2048 + 10240)),
            net: None,
            procs: Some(1),
        };
        let f = figures(&a, &b, 1000, Some("vda".into()), 100.0);
        // 50 client ticks = 0.5 s = 500,000 us over 1000 ops.
        assert_eq!(f.cpu_us_per_op.client, Some(500.0));
        assert_eq!(f.cpu_us_per_op.server, Some(1000.0));
        assert_eq!(f.cpu_us_per_op.machine, Some(3000.0));
        // 300 of 400 ticks busy = 75%; 500 ops/s.
        assert!((f.cpu_per_o.unwrap() - 75.0 / 500.0).abs() < 1e-12);
        assert!((f.cs_per_o.unwrap() - 2000.0 / 500.0).abs() < 1e-12);
        assert!((f.r_per_o.unwrap() - 50.0 / 500.0).abs() < 1e-12);
        assert!((f.rkb_per_o.unwrap() - 200.0 / 500.0).abs() < 1e-12);
        assert!((f.wkb_per_o.unwrap() - 100.0 / 500.0).abs() < 1e-12);
        // 500 ms busy in 2 s.
        assert_eq!(f.device_busy_pct, Some(25.0));
        assert_eq!(f.server_rss_kb, Some(4096));
        // 2000 server context switches in 2 s at 500 ops/s.
        assert!((f.server_cs_per_o.unwrap() - 2.0).abs() < 1e-12);
        // 30 client user ticks in 2 s at 100 ticks/s: 15% of one CPU.
        assert!((f.cpu_pct.client_user - 15.0).abs() < 1e-9);
        assert!((f.cpu_pct.server_system.unwrap() - 15.0).abs() < 1e-9);
        assert!((f.cpu_pct.server_iowait.unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(f.proc_io_kb.client_read, Some(4.0));
        assert_eq!(f.proc_io_kb.server_write, Some(10.0));
        assert_eq!(f.proc_io_kb.server_read, Some(0.0));
        let none = Reading {
            server_ticks: None,
            server_rss_kb: None,
            disk: None,
            server_cpu: None,
            server_cs: None,
            server_io: None,
            ..b.clone()
        };
        let f = figures(
            &Reading {
                server_ticks: None,
                disk: None,
                server_cpu: None,
                server_cs: None,
                server_io: None,
                ..a
            },
            &none,
            1000,
            None,
            100.0,
        );
        assert_eq!(
            (f.cpu_us_per_op.server, f.r_per_o, f.server_rss_kb),
            (None, None, None)
        );
        assert_eq!((f.server_cs_per_o, f.cpu_pct.server_user), (None, None));
        assert_eq!(f.proc_io_kb.server_read, None);
    }
}
