//! A memory limit for a managed server: a cgroup of its own (v2, or v1's memory controller)
//! that its processes join once started; the children they fork later join with them.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A memory cgroup that this process created; removed on drop (after the server stopped).
pub struct MemoryCgroup {
    dir: PathBuf,
}

impl MemoryCgroup {
    /// Creates a cgroup called `name` limited to `bytes`. The error says why it cannot be.
    pub fn create(name: &str, bytes: u64) -> Result<MemoryCgroup, String> {
        let root = Path::new("/sys/fs/cgroup");
        let v2 = fs::read_to_string(root.join("cgroup.controllers"))
            .is_ok_and(|c| c.split_whitespace().any(|x| x == "memory"));
        let (dir, limit_file) = if v2 {
            (root.join(name), "memory.max")
        } else if root.join("memory").is_dir() {
            (root.join("memory").join(name), "memory.limit_in_bytes")
        } else {
            return Err("this system has no cgroup memory controller".into());
        };
        fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let cgroup = MemoryCgroup { dir };
        let file = cgroup.dir.join(limit_file);
        fs::write(&file, bytes.to_string())
            .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
        Ok(cgroup)
    }

    /// Moves process `pid` into the cgroup.
    pub fn add(&self, pid: u32) -> Result<(), String> {
        let file = self.dir.join("cgroup.procs");
        fs::write(&file, pid.to_string())
            .map_err(|e| format!("cannot move process {pid} into {}: {e}", file.display()))
    }

    /// The limit as the kernel holds it (rounded to pages).
    pub fn limit(&self) -> Option<u64> {
        ["memory.max", "memory.limit_in_bytes"]
            .iter()
            .find_map(|f| fs::read_to_string(self.dir.join(f)).ok())
            .and_then(|s| s.trim().parse().ok())
    }

    /// Process ids in the cgroup.
    pub fn pids(&self) -> Vec<u32> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        // The server has stopped; its last processes may take a moment to be reaped.
        for _ in 0..50 {
            if fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
