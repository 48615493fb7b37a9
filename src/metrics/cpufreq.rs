//! The CPUs' frequency over a step, where the kernel has cpufreq: every CPU's current
//! frequency read with each sample, and their least, greatest and mean.

use std::fs;

use crate::results::figures::MhzRange;

/// Collects frequency readings of every CPU.
#[derive(Default)]
pub(super) struct MhzAcc {
    min: Option<f64>,
    max: f64,
    sum: f64,
    n: u64,
}

impl MhzAcc {
    pub(super) fn add(&mut self, khz: &[u64]) {
        for &k in khz {
            let mhz = k as f64 / 1000.0;
            self.min = Some(self.min.map_or(mhz, |m| m.min(mhz)));
            self.max = self.max.max(mhz);
            self.sum += mhz;
            self.n += 1;
        }
    }

    pub(super) fn range(&self) -> Option<MhzRange> {
        Some(MhzRange {
            min: self.min?,
            max: self.max,
            mean: self.sum / self.n as f64,
        })
    }
}

/// Every CPU's current frequency in kHz (cpufreq's scaling_cur_freq); empty without cpufreq.
pub(super) fn cpu_khz() -> Vec<u64> {
    let Ok(cpus) = fs::read_dir("/sys/devices/system/cpu") else {
        return Vec::new();
    };
    cpus.filter_map(Result::ok)
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.strip_prefix("cpu")
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|e| {
            fs::read_to_string(e.path().join("cpufreq/scaling_cur_freq"))
                .ok()?
                .trim()
                .parse()
                .ok()
        })
        .collect()
}
