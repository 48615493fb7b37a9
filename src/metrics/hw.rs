//! The hardware sampler: reads /proc once a second during a step and turns the deltas into
//! per-operation figures (WORKLOADS.md section 5): CPU microseconds per operation for the
//! client, the server's processes and the machine, cpu/o, cs/o, r/o, rKB/o, wKB/o for the
//! device that holds the data, and the server's RSS.

use std::fs;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

/// Machine-wide CPU ticks (from the `cpu` line of /proc/stat) and context switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MachineStat {
    pub busy: u64,
    pub total: u64,
    pub ctxt: u64,
}

/// Parses /proc/stat: busy = user + nice + system + irq + softirq + steal; total adds idle
/// and iowait.
pub fn parse_proc_stat(text: &str) -> Option<MachineStat> {
    let mut out = MachineStat::default();
    for line in text.lines() {
        let mut f = line.split_whitespace();
        match f.next() {
            Some("cpu") => {
                let v: Vec<u64> = f.filter_map(|x| x.parse().ok()).collect();
                let get = |i: usize| v.get(i).copied().unwrap_or(0);
                out.busy = get(0) + get(1) + get(2) + get(5) + get(6) + get(7);
                out.total = out.busy + get(3) + get(4);
            }
            Some("ctxt") => out.ctxt = f.next()?.parse().ok()?,
            _ => {}
        }
    }
    (out.total > 0).then_some(out)
}

/// CPU ticks (utime + stime) of a process, from /proc/PID/stat; with `reaped_children`, also
/// those of its children that have exited (cutime + cstime): a PostgreSQL backend's CPU moves
/// into the postmaster's count when it exits, so none is lost between samples.
pub fn parse_pid_cpu(text: &str, reaped_children: bool) -> Option<u64> {
    // Fields after the parenthesised command name: utime, stime, cutime, cstime are 14 to 17.
    let rest = text.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    let own = n(11)? + n(12)?;
    Some(if reaped_children {
        own + n(13)? + n(14)?
    } else {
        own
    })
}

/// Resident set size in kB, from /proc/PID/status.
pub fn parse_rss_kb(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Reads, sectors read, writes, sectors written of `device` in /proc/diskstats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub reads: u64,
    pub sectors_read: u64,
    pub writes: u64,
    pub sectors_written: u64,
}

pub fn parse_diskstats(text: &str, device: &str) -> Option<DiskStat> {
    text.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        if f.get(2) != Some(&device) {
            return None;
        }
        let n = |i: usize| f.get(i).and_then(|v| v.parse().ok()).unwrap_or(0);
        Some(DiskStat {
            reads: n(3),
            sectors_read: n(5),
            writes: n(7),
            sectors_written: n(9),
        })
    })
}

/// The block device (as /proc/diskstats names it) that holds `path`.
pub fn device_of(path: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let dev = fs::metadata(path).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let uevent = fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent")).ok()?;
    uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .map(String::from)
}

/// One reading of everything the sampler follows.
#[derive(Clone, Debug)]
struct Reading {
    at: Instant,
    machine: MachineStat,
    client_ticks: u64,
    server_ticks: Option<u64>,
    server_rss_kb: Option<u64>,
    disk: Option<DiskStat>,
}

/// What to sample: the server's processes (a function, since they come and go) and the
/// data device.
pub struct Subject {
    pub server_pids: Option<Box<dyn Fn() -> Vec<u32> + Send>>,
    pub device: Option<String>,
}

fn read(subject: &Subject) -> Option<Reading> {
    let machine = parse_proc_stat(&fs::read_to_string("/proc/stat").ok()?)?;
    let client_ticks = parse_pid_cpu(&fs::read_to_string("/proc/self/stat").ok()?, false)?;
    let (server_ticks, server_rss_kb) = match &subject.server_pids {
        Some(pids) => {
            // The first pid is the server's main process: count its exited children too.
            let pids = pids();
            let ticks = pids
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    parse_pid_cpu(&fs::read_to_string(format!("/proc/{p}/stat")).ok()?, i == 0)
                })
                .sum();
            let rss = pids
                .iter()
                .filter_map(|p| {
                    parse_rss_kb(&fs::read_to_string(format!("/proc/{p}/status")).ok()?)
                })
                .sum();
            (Some(ticks), Some(rss))
        }
        None => (None, None),
    };
    let disk = subject
        .device
        .as_deref()
        .and_then(|d| parse_diskstats(&fs::read_to_string("/proc/diskstats").ok()?, d));
    Some(Reading {
        at: Instant::now(),
        machine,
        client_ticks,
        server_ticks,
        server_rss_kb,
        disk,
    })
}

/// Per-operation figures of a step, as the results file stores them under `hw`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HwFigures {
    pub cpu_us_per_op: CpuPerOp,
    pub cpu_per_o: Option<f64>,
    pub cs_per_o: Option<f64>,
    pub r_per_o: Option<f64>,
    pub rkb_per_o: Option<f64>,
    pub wkb_per_o: Option<f64>,
    pub server_rss_kb: Option<u64>,
    /// The device the IO figures are for.
    pub device: Option<String>,
    /// Per-second machine CPU busy percent, client and server CPU percent of one core.
    pub series: Vec<HwSecond>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuPerOp {
    pub client: Option<f64>,
    pub server: Option<f64>,
    pub machine: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HwSecond {
    pub t: f64,
    pub machine_busy_pct: f64,
    pub client_cpu_pct: f64,
    pub server_cpu_pct: Option<f64>,
    pub cs_per_s: f64,
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
    let m = (
        last.machine.busy - first.machine.busy,
        last.machine.total - first.machine.total,
    );
    let busy_pct = if m.1 > 0 {
        m.0 as f64 * 100.0 / m.1 as f64
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
            machine: per_op(ticks_us(m.0)),
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
        device,
        series: Vec::new(),
    }
}

fn second(prev: &Reading, cur: &Reading, t: f64, ticks_per_s: f64) -> HwSecond {
    let secs = cur.at.duration_since(prev.at).as_secs_f64().max(1e-9);
    let pct = |ticks: u64| ticks as f64 / ticks_per_s / secs * 100.0;
    let m = (
        cur.machine.busy - prev.machine.busy,
        cur.machine.total - prev.machine.total,
    );
    HwSecond {
        t,
        machine_busy_pct: if m.1 > 0 {
            m.0 as f64 * 100.0 / m.1 as f64
        } else {
            0.0
        },
        client_cpu_pct: pct(cur.client_ticks - prev.client_ticks),
        server_cpu_pct: prev
            .server_ticks
            .zip(cur.server_ticks)
            .map(|(a, b)| pct(b.saturating_sub(a))),
        cs_per_s: (cur.machine.ctxt - prev.machine.ctxt) as f64 / secs,
    }
}

/// A running sampler thread.
pub struct Sampler {
    stop: mpsc::Sender<()>,
    handle: JoinHandle<(Option<Reading>, Option<Reading>, Vec<HwSecond>)>,
    device: Option<String>,
}

impl Sampler {
    /// Starts sampling once a second after `delay` (the warm-up).
    pub fn start(subject: Subject, delay: Duration) -> Sampler {
        let (stop, stopped) = mpsc::channel::<()>();
        let device = subject.device.clone();
        let handle = std::thread::spawn(move || {
            if stopped.recv_timeout(delay).is_ok() {
                return (None, None, Vec::new());
            }
            let ticks_per_s = ticks_per_second();
            let first = read(&subject);
            let mut prev = first.clone();
            let mut series = Vec::new();
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(Duration::from_secs(1))
            {
                let cur = read(&subject);
                if let (Some(f), Some(p), Some(c)) = (&first, &prev, &cur) {
                    series.push(second(
                        p,
                        c,
                        c.at.duration_since(f.at).as_secs_f64(),
                        ticks_per_s,
                    ));
                }
                prev = cur;
            }
            (first, read(&subject), series)
        });
        Sampler {
            stop,
            handle,
            device,
        }
    }

    /// Stops sampling and returns the step's figures for `ops` operations.
    pub fn finish(self, ops: u64) -> Option<HwFigures> {
        let _ = self.stop.send(());
        let (first, last, series) = self.handle.join().ok()?;
        let mut f = figures(&first?, &last?, ops, self.device, ticks_per_second());
        f.series = series;
        Some(f)
    }
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  605110 0 100261 493758 22576 0 23289 12760 0 0\ncpu0 289287 0 44363 272620 5142 0 10300 6473 0 0\nintr 1 2 3\nctxt 93588637\nbtime 1\n";
    const PID_STAT: &str = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 1500 250 0 0 20 0 3 0 100 1000000 500 18446744073709551615";
    const DISKSTATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n 254       0 vda 9190 2050 797282 3950 47331 20516 1894512 36612 0 42128 40562 0 0 0 0 0 0\n";

    #[test]
    fn proc_stat_gives_busy_total_and_context_switches() {
        let s = parse_proc_stat(STAT).unwrap();
        assert_eq!(s.busy, 605110 + 100261 + 23289 + 12760);
        assert_eq!(s.total, s.busy + 493758 + 22576);
        assert_eq!(s.ctxt, 93588637);
        assert!(parse_proc_stat("garbage").is_none());
    }

    #[test]
    fn pid_stat_handles_parentheses_in_the_command_name() {
        assert_eq!(parse_pid_cpu(PID_STAT, false), Some(1750));
        // cutime and cstime (fields 16, 17) are 0 and 0 in this sample.
        let with_children = PID_STAT.replace("1500 250 0 0", "1500 250 30 12");
        assert_eq!(parse_pid_cpu(&with_children, true), Some(1792));
        assert_eq!(parse_rss_kb("Name:\tx\nVmRSS:\t    2116 kB\n"), Some(2116));
    }

    #[test]
    fn diskstats_pick_the_device() {
        let d = parse_diskstats(DISKSTATS, "vda").unwrap();
        assert_eq!(
            d,
            DiskStat {
                reads: 9190,
                sectors_read: 797282,
                writes: 47331,
                sectors_written: 1894512
            }
        );
        assert!(parse_diskstats(DISKSTATS, "sdz").is_none());
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
            },
            client_ticks: 100,
            server_ticks: Some(200),
            server_rss_kb: Some(1),
            disk: Some(DiskStat::default()),
        };
        let b = Reading {
            at: t0 + Duration::from_secs(2),
            machine: MachineStat {
                busy: 1300,
                total: 2400,
                ctxt: 4000,
            },
            client_ticks: 150,
            server_ticks: Some(300),
            server_rss_kb: Some(4096),
            disk: Some(DiskStat {
                reads: 100,
                sectors_read: 800,
                writes: 50,
                sectors_written: 400,
            }),
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
        assert_eq!(f.server_rss_kb, Some(4096));
        let none = Reading {
            server_ticks: None,
            server_rss_kb: None,
            disk: None,
            ..b.clone()
        };
        let f = figures(
            &Reading {
                server_ticks: None,
                disk: None,
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
    }
}
