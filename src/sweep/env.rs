//! The environment a sweep ran in, saved as `environment.json` in the sweep directory: host,
//! CPU, memory, kernel, OS, the storage device of the data, tool and server versions.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use serde::Serialize;

use crate::metrics::hw;

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
    let device = hw::device_of(dir);
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
    }
}
