//! Reading /proc: the machine's CPU time and context switches, a process's CPU time (split into
//! user, system and iowait), context switches, RSS and IO, and a block device's counters.

use std::fs;
use std::path::Path;

/// Machine-wide CPU ticks (from the `cpu` line of /proc/stat) and context switches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MachineStat {
    pub busy: u64,
    pub total: u64,
    /// user + nice, system + irq + softirq, iowait.
    pub user: u64,
    pub system: u64,
    pub iowait: u64,
    pub idle: u64,
    /// Time the hypervisor ran something else while this machine's CPUs wanted to run.
    pub steal: u64,
    /// Online CPUs (the `cpuN` lines).
    pub cpus: u32,
    pub ctxt: u64,
}

/// The machine's busy and total CPU time between two readings `secs` apart, in ticks, and
/// the factor that scales the tick-sampled user/system split to that busy time.
///
/// The kernel charges busy time (user, system, irq...) one timer tick at a time to whatever
/// runs when the tick fires, and a virtual machine loses ticks while its vCPUs are busy (here
/// 6.8 of 8 CPU-seconds were counted), so busy ticks fall below a process's own CPU time,
/// which is exact. Idle and iowait time is measured exactly on tickless kernels, so the busy
/// time is the wall time of every CPU minus them, when that is more than the ticks say.
pub(crate) fn machine_delta(
    a: &MachineStat,
    b: &MachineStat,
    secs: f64,
    ticks_per_s: f64,
) -> (f64, f64, f64) {
    let ticks = b.busy.saturating_sub(a.busy) as f64;
    let counted = b.total.saturating_sub(a.total) as f64;
    let wall = secs * ticks_per_s * f64::from(b.cpus.max(1));
    let idle = (b.idle.saturating_sub(a.idle) + b.iowait.saturating_sub(a.iowait)) as f64;
    let total = counted.max(wall);
    let busy = ticks.max(wall - idle).min(total);
    let scale = if ticks > 0.0 { busy / ticks } else { 1.0 };
    (busy, total, scale)
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
                out.user = get(0) + get(1);
                out.system = get(2) + get(5) + get(6);
                out.iowait = get(4);
                out.idle = get(3);
                out.steal = get(7);
            }
            Some(name) if name.starts_with("cpu") => out.cpus += 1,
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
    parse_pid_cpu_split(text, reaped_children).map(|c| c.user + c.system)
}

/// User and system CPU ticks of a process (and of its reaped children, as above).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcCpu {
    pub user: u64,
    pub system: u64,
    /// Ticks spent waiting for block IO (delayacct_blkio_ticks; 0 unless the kernel's delay
    /// accounting is on: sysctl kernel.task_delayacct=1).
    pub iowait: u64,
}

impl std::ops::Add for ProcCpu {
    type Output = ProcCpu;
    fn add(self, o: ProcCpu) -> ProcCpu {
        ProcCpu {
            user: self.user + o.user,
            system: self.system + o.system,
            iowait: self.iowait + o.iowait,
        }
    }
}

pub fn parse_pid_cpu_split(text: &str, reaped_children: bool) -> Option<ProcCpu> {
    // Fields after the parenthesised command name: utime, stime, cutime, cstime are 14 to 17.
    let rest = text.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok());
    let (children_user, children_system) = if reaped_children {
        (n(13)?, n(14)?)
    } else {
        (0, 0)
    };
    Some(ProcCpu {
        user: n(11)? + children_user,
        system: n(12)? + children_system,
        // Field 42, delayacct_blkio_ticks; older kernels may not have it.
        iowait: n(39).unwrap_or(0),
    })
}

/// The user and system ticks of process `pid`'s reaped children (cutime + cstime).
pub(crate) fn reaped_children_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let all = parse_pid_cpu_split(&stat, true)?;
    let own = parse_pid_cpu_split(&stat, false)?;
    Some(all.user + all.system - own.user - own.system)
}

/// Voluntary plus involuntary context switches of one task, from /proc/PID/task/TID/status.
pub fn parse_ctxt_switches(text: &str) -> Option<u64> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some(field("voluntary_ctxt_switches:")? + field("nonvoluntary_ctxt_switches:")?)
}

/// Bytes a process made the storage layer read and write, from /proc/PID/io.
pub fn parse_pid_io(text: &str) -> Option<(u64, u64)> {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().parse::<u64>().ok())
    };
    Some((field("read_bytes:")?, field("write_bytes:")?))
}

/// What the sampler reads of one server process.
pub(crate) struct ProcessReading {
    pub(crate) cpu: ProcCpu,
    pub(crate) rss_kb: u64,
    pub(crate) cs: u64,
    pub(crate) io: Option<(u64, u64)>,
}

/// Reads process `pid`'s CPU (with its reaped children's when `main`), RSS, context switches
/// and IO. A process of one thread (a PostgreSQL backend) has its context switches in its own
/// status file; only a process of several has each thread's read.
pub(crate) fn read_process(pid: u32, main: bool) -> Option<ProcessReading> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let cpu = parse_pid_cpu_split(&stat, main)?;
    let threads = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(17)?.parse::<u64>().ok());
    let status = fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let cs = if threads == Some(1) {
        parse_ctxt_switches(&status).unwrap_or(0)
    } else {
        task_ctxt_switches(pid)
    };
    Some(ProcessReading {
        cpu,
        rss_kb: parse_rss_kb(&status).unwrap_or(0),
        cs,
        io: fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|t| parse_pid_io(&t)),
    })
}

/// Context switches of every thread of process `pid`.
pub(crate) fn task_ctxt_switches(pid: u32) -> u64 {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|t| parse_ctxt_switches(&fs::read_to_string(t.path().join("status")).ok()?))
        .sum()
}

/// Resets this process's peak resident memory (VmHWM) to its current size, so that
/// [`own_peak_rss_kb`] then tells the peak of what follows; false where the kernel refused.
pub fn reset_own_peak_rss() -> bool {
    // "5" in clear_refs resets the high-water mark (Linux 4.0 and later).
    fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// This process's peak resident memory in kB since it started or since
/// [`reset_own_peak_rss`], from /proc/self/status.
pub fn own_peak_rss_kb() -> Option<u64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    parse_status_kb(&status, "VmHWM:")
}

fn parse_status_kb(status: &str, key: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
}

/// Resident set size in kB, from /proc/PID/status.
pub fn parse_rss_kb(text: &str) -> Option<u64> {
    parse_status_kb(text, "VmRSS:")
}

/// Reads, sectors read, writes, sectors written of `device` in /proc/diskstats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub reads: u64,
    pub sectors_read: u64,
    pub writes: u64,
    pub sectors_written: u64,
    /// Milliseconds the device was busy (had IO in flight).
    pub io_ms: u64,
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
            io_ms: n(12),
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

/// The memory the kernel says new work can have without swapping (`MemAvailable` in
/// /proc/meminfo), in bytes; None where /proc does not say.
pub fn mem_available() -> Option<u64> {
    let text = fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// The kernel's clock ticks per second (USER_HZ), in which /proc counts CPU time.
pub fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const STAT: &str = "cpu  605110 0 100261 493758 22576 0 23289 12760 0 0\ncpu0 289287 0 44363 272620 5142 0 10300 6473 0 0\nintr 1 2 3\nctxt 93588637\nbtime 1\n";
    const PID_STAT: &str = "4242 (my (odd) name) S 1 4242 4242 0 -1 4194560 500 0 0 0 1500 250 0 0 20 0 3 0 100 1000000 500 18446744073709551615";
    const DISKSTATS: &str = "   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n 254       0 vda 9190 2050 797282 3950 47331 20516 1894512 36612 0 42128 40562 0 0 0 0 0 0\n";

    #[test]
    fn busy_time_lost_by_the_tick_is_taken_from_exact_idle_time() {
        // 4 s on 2 CPUs at 100 ticks/s: 800 CPU-ticks of wall time; the kernel counted 492
        // busy ticks but only 78 idle ones, so 722 were busy (a process alone used 545).
        let a = MachineStat {
            cpus: 2,
            ..MachineStat::default()
        };
        let b = MachineStat {
            busy: 492,
            total: 570,
            user: 300,
            system: 192,
            idle: 78,
            cpus: 2,
            ..MachineStat::default()
        };
        let (busy, total, scale) = machine_delta(&a, &b, 4.0, 100.0);
        assert_eq!((busy, total), (722.0, 800.0));
        assert!((scale - 722.0 / 492.0).abs() < 1e-12);
        // Ticks that kept up are taken as they are.
        let c = MachineStat {
            busy: 700,
            total: 800,
            idle: 100,
            cpus: 2,
            ..MachineStat::default()
        };
        assert_eq!(machine_delta(&a, &c, 4.0, 100.0), (700.0, 800.0, 1.0));
        assert_eq!(parse_proc_stat(STAT).unwrap().cpus, 1);
    }

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
                sectors_written: 1894512,
                io_ms: 42128
            }
        );
        assert!(parse_diskstats(DISKSTATS, "sdz").is_none());
    }

    #[test]
    fn a_single_threaded_process_counts_its_switches_from_its_status_file() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep");
        let pid = child.id();
        // Once the child sleeps, its counts stand still: both ways of reading them agree.
        // (Read before it sleeps, as it is still starting, it may have no memory mapped yet.)
        let sleeping = || {
            fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| Some(s.rsplit_once(')')?.1.split_whitespace().next()? == "S"))
                .unwrap_or(false)
        };
        let give_up = Instant::now() + Duration::from_secs(5);
        let one = loop {
            let asleep = sleeping();
            let before = read_process(pid, false).expect("the child is readable");
            let tasks = task_ctxt_switches(pid);
            let after = read_process(pid, false).expect("the child is readable");
            if asleep && sleeping() && before.cs == after.cs && before.cs == tasks {
                break after;
            }
            assert!(Instant::now() < give_up, "the child never settled");
            std::thread::yield_now();
        };
        assert!(one.cs > 0 && one.rss_kb > 0);
        let _ = child.kill();
        let _ = child.wait();
        assert!(
            read_process(pid, false).is_none(),
            "a reaped process is gone"
        );
    }

    // Files captured from a running Linux 6.x machine (`cp /proc/stat ...`).
    const CAPTURED_STAT: &str = include_str!("testdata/proc_stat.txt");
    const CAPTURED_PID_STAT: &str = include_str!("testdata/pid_stat.txt");
    const CAPTURED_STATUS: &str = include_str!("testdata/pid_status.txt");
    const CAPTURED_IO: &str = include_str!("testdata/pid_io.txt");
    const CAPTURED_DISKSTATS: &str = include_str!("testdata/diskstats.txt");

    #[test]
    fn captured_proc_files_parse() {
        let m = parse_proc_stat(CAPTURED_STAT).unwrap();
        // cpu  888236 0 173637 697631 32870 0 44310 14377 0 0
        assert_eq!(m.user, 888236);
        assert_eq!(m.system, 173637 + 44310);
        assert_eq!(m.iowait, 32870);
        assert_eq!(m.busy, 888236 + 173637 + 44310 + 14377);
        assert_eq!(m.total, m.busy + 697631 + 32870);
        assert!(m.ctxt > 0);
        // 1 (process_api) S ... utime 506 stime 1893 cutime 816324 cstime 200976
        let own = parse_pid_cpu_split(CAPTURED_PID_STAT, false).unwrap();
        assert_eq!((own.user, own.system, own.iowait), (506, 1893, 0));
        let all = parse_pid_cpu_split(CAPTURED_PID_STAT, true).unwrap();
        assert_eq!((all.user, all.system), (506 + 816324, 1893 + 200976));
        assert_eq!(parse_ctxt_switches(CAPTURED_STATUS), Some(585 + 29));
        assert!(parse_rss_kb(CAPTURED_STATUS).is_some());
        assert_eq!(parse_pid_io(CAPTURED_IO), Some((10430312448, 37969645568)));
        let vda = parse_diskstats(CAPTURED_DISKSTATS, "vda").unwrap();
        assert!(vda.reads > 0 && vda.sectors_written > 0);
        assert_eq!(parse_ctxt_switches("Name: x\n"), None);
        assert_eq!(parse_pid_io("rchar: 1\n"), None);
    }
}
