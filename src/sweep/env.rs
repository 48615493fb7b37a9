//! The environment a sweep ran in, saved as `environment.json` in the sweep directory: host,
//! CPU, memory, kernel, OS, the storage device of the data, tool and server versions.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::Serialize;

#[derive(Serialize)]
pub struct Environment {
    pub host: String,
    pub kernel: String,
    pub os: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_kb: u64,
    pub storage: Storage,
    pub tool: crate::results::Tool,
    pub sqlite_version: String,
    /// The version line of each server kind the plan starts, and the version each URL target's
    /// server reports, by target name (or why it was not reached).
    pub servers: BTreeMap<String, String>,
    /// Whether the process ran as root (page cache drops and cgroups need it).
    pub root: bool,
    pub started_at: u64,
    /// What sets the CPUs' speed and the memory and IO paths: the settings that change
    /// figures between two machines of the same model.
    pub tuning: Tuning,
}

/// The frequency, SMT, huge page, IO scheduler and file system settings of the machine.
#[derive(Serialize, serde::Deserialize, Clone, Debug, Default, PartialEq)]
pub struct Tuning {
    /// cpufreq's governor and driver of cpu0; None where the kernel has no cpufreq (a virtual
    /// machine whose host sets the frequency).
    pub governor: Option<String>,
    pub cpufreq_driver: Option<String>,
    /// Turbo/boost: on, off, or None when the kernel does not say.
    pub turbo: Option<bool>,
    /// SMT (hyper-threading): `on`, `off`, `notsupported`, ...
    pub smt: Option<String>,
    /// Each CPU's current MHz (cpufreq's, else /proc/cpuinfo's) and its maximum where known.
    pub mhz: Vec<f64>,
    pub max_mhz: Option<f64>,
    /// Transparent huge pages: the selected mode (`always`, `madvise`, `never`).
    pub transparent_hugepages: Option<String>,
    /// The IO scheduler of the data's device (the selected one).
    pub io_scheduler: Option<String>,
    /// The file system of the sweep directory and its mount options.
    pub filesystem: Option<String>,
    pub mount_options: Option<String>,
}

/// The selected word of a sysfs choice list: `always [madvise] never` gives `madvise`.
fn selected(list: &str) -> Option<String> {
    let inside = list.split_once('[')?.1.split_once(']')?.0;
    Some(inside.to_string())
}

/// The mount that holds `dir`: its file system type and options, from /proc/self/mountinfo.
fn mount_of(dir: &Path) -> Option<(String, String)> {
    let dir = dir.canonicalize().ok()?;
    let info = read("/proc/self/mountinfo");
    info.lines()
        .filter_map(|l| {
            // id parent major:minor root mountpoint options ... - fstype source superoptions
            let (head, tail) = l.split_once(" - ")?;
            let f: Vec<&str> = head.split(' ').collect();
            let t: Vec<&str> = tail.split(' ').collect();
            Some((
                f.get(4)?.to_string(),
                f.get(5)?.to_string(),
                t.first()?.to_string(),
            ))
        })
        .filter(|(point, _, _)| dir.starts_with(point))
        .max_by_key(|(point, _, _)| point.len())
        .map(|(_, options, fstype)| (fstype, options))
}

/// Reads the machine's tuning; `device` is the data's block device.
pub fn tuning(dir: &Path, device: Option<&str>) -> Tuning {
    let opt = |p: &str| Some(read(p)).filter(|v| !v.is_empty());
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let mut mhz: Vec<f64> = (0..cpus)
        .filter_map(|i| {
            read(&format!(
                "/sys/devices/system/cpu/cpu{i}/cpufreq/scaling_cur_freq"
            ))
            .parse::<f64>()
            .ok()
            .map(|khz| khz / 1000.0)
        })
        .collect();
    if mhz.is_empty() {
        mhz = read("/proc/cpuinfo")
            .lines()
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "cpu MHz").then(|| v.trim().parse().ok())?
            })
            .collect();
    }
    let turbo = match (
        opt("/sys/devices/system/cpu/intel_pstate/no_turbo"),
        opt("/sys/devices/system/cpu/cpufreq/boost"),
    ) {
        (Some(no_turbo), _) => Some(no_turbo == "0"),
        (None, Some(boost)) => Some(boost == "1"),
        _ => None,
    };
    let mount = mount_of(dir);
    Tuning {
        governor: opt("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
        cpufreq_driver: opt("/sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
        turbo,
        smt: opt("/sys/devices/system/cpu/smt/control"),
        mhz,
        max_mhz: read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
            .parse::<f64>()
            .ok()
            .map(|khz| khz / 1000.0),
        transparent_hugepages: selected(&read("/sys/kernel/mm/transparent_hugepage/enabled")),
        io_scheduler: device.and_then(|d| {
            let own = read(&format!("/sys/class/block/{d}/queue/scheduler"));
            let list = if own.is_empty() {
                read(&format!("/sys/class/block/{d}/../queue/scheduler"))
            } else {
                own
            };
            selected(&list)
        }),
        filesystem: mount.as_ref().map(|(t, _)| t.clone()),
        mount_options: mount.map(|(_, o)| o),
    }
}

#[derive(Serialize)]
pub struct Storage {
    /// The block device that holds the sweep directory (where SQLite files and the managed
    /// servers' temporary data directories go).
    pub device: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
}

fn read(path: &str) -> String {
    fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Gathers the environment; `servers` are the managed kinds the plan uses.
pub fn gather(dir: &Path, servers: BTreeMap<String, String>, started_at: u64) -> Environment {
    let cpuinfo = read("/proc/cpuinfo");
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "model name").then(|| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_kb = read("/proc/meminfo")
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    let os = read("/etc/os-release")
        .lines()
        .find_map(|l| l.strip_prefix("PRETTY_NAME="))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_default();
    let device = crate::metrics::procfs::device_of(dir);
    let storage_device = device.clone();
    let sys = |d: &str, f: &str| {
        // A partition's attributes live with its parent disk.
        let own = format!("/sys/class/block/{d}/{f}");
        let parent = format!("/sys/class/block/{d}/../{f}");
        let v = read(&own);
        if v.is_empty() { read(&parent) } else { v }
    };
    let storage = Storage {
        model: device
            .as_deref()
            .map(|d| sys(d, "device/model"))
            .filter(|m| !m.is_empty()),
        rotational: device
            .as_deref()
            .map(|d| sys(d, "queue/rotational"))
            .and_then(|r| r.parse::<u8>().ok())
            .map(|r| r == 1),
        device,
    };
    Environment {
        host: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        os,
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, usize::from),
        memory_kb,
        storage,
        tool: crate::results::Tool::this(),
        sqlite_version: rusqlite::version().to_string(),
        servers,
        // SAFETY: geteuid has no preconditions.
        root: unsafe { libc::geteuid() } == 0,
        started_at,
        tuning: tuning(dir, storage_device.as_deref()),
    }
}
