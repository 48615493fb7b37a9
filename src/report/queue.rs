//! Bounds of a closed queueing network (docs/workloads.md section 6), from measured service demands.
//!
//! Each device i has a service demand D_i (seconds of its service per transaction: its
//! utilisation, in busy servers, divided by the throughput) and a capacity c_i (servers: the CPU
//! has one per core, a disk one). With D = sum D_i, think time Z and the bottleneck's
//! D_max = max D_i / c_i:
//! X(N) <= min(N / (D + Z), 1 / D_max), R(N) >= max(D, N * D_max - Z), N_sat = (D + Z) / D_max.
//! With one CPU this is exactly the textbook form; with several, a CPU-bound system's
//! throughput bound is cores / D_cpu, which the per-capacity D_max gives.

/// A device's measured demand.
#[derive(Clone, Debug, PartialEq)]
pub struct Device {
    pub name: &'static str,
    /// Seconds of service per transaction, over all its servers.
    pub demand: f64,
    pub capacity: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Total demand D, seconds.
    pub d: f64,
    /// The bottleneck's demand per server, seconds.
    pub d_max: f64,
    pub bottleneck: &'static str,
    /// Think time Z, seconds.
    pub z: f64,
}

impl Model {
    /// None without any demand to work from.
    pub fn new(devices: &[Device], z: f64) -> Option<Model> {
        let d: f64 = devices.iter().map(|dev| dev.demand).sum();
        let bottleneck = devices
            .iter()
            .filter(|dev| dev.demand > 0.0 && dev.capacity > 0.0)
            .max_by(|a, b| (a.demand / a.capacity).total_cmp(&(b.demand / b.capacity)))?;
        Some(Model {
            d,
            d_max: bottleneck.demand / bottleneck.capacity,
            bottleneck: bottleneck.name,
            z,
        })
    }

    /// Upper bound of throughput (transactions/s) with `n` clients.
    pub fn x_bound(&self, n: f64) -> f64 {
        (n / (self.d + self.z)).min(1.0 / self.d_max)
    }

    /// Lower bound of the mean response time (seconds) with `n` clients.
    pub fn r_bound(&self, n: f64) -> f64 {
        self.d.max(n * self.d_max - self.z)
    }

    /// The concurrency at which queueing must begin.
    pub fn n_sat(&self) -> f64 {
        (self.d + self.z) / self.d_max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_example() {
        // 2 cores; each transaction needs 4 ms of CPU and 1 ms of disk; no think time.
        // D = 5 ms; per server: CPU 2 ms, disk 1 ms, so the CPU is the bottleneck with 2 ms.
        let m = Model::new(
            &[
                Device {
                    name: "cpu",
                    demand: 0.004,
                    capacity: 2.0,
                },
                Device {
                    name: "disk",
                    demand: 0.001,
                    capacity: 1.0,
                },
            ],
            0.0,
        )
        .unwrap();
        assert_eq!(m.bottleneck, "cpu");
        assert!((m.d - 0.005).abs() < 1e-15);
        assert!((m.d_max - 0.002).abs() < 1e-15);
        // N_sat = 5 / 2 = 2.5.
        assert!((m.n_sat() - 2.5).abs() < 1e-12);
        // One client: 1 / 5 ms = 200/s; ten: capped at 1 / 2 ms = 500/s.
        assert!((m.x_bound(1.0) - 200.0).abs() < 1e-9);
        assert!((m.x_bound(2.0) - 400.0).abs() < 1e-9);
        assert!((m.x_bound(10.0) - 500.0).abs() < 1e-9);
        // R >= D below saturation, N * D_max above: 10 clients wait at least 20 ms.
        assert!((m.r_bound(1.0) - 0.005).abs() < 1e-15);
        assert!((m.r_bound(10.0) - 0.020).abs() < 1e-15);
        // Think time moves the knee: Z = 5 ms doubles N_sat.
        let z = Model { z: 0.005, ..m };
        assert!((z.n_sat() - 5.0).abs() < 1e-12);
        assert!((z.r_bound(10.0) - 0.015).abs() < 1e-15);
    }

    #[test]
    fn disk_bound_and_no_demand() {
        let m = Model::new(
            &[
                Device {
                    name: "cpu",
                    demand: 0.001,
                    capacity: 4.0,
                },
                Device {
                    name: "disk",
                    demand: 0.003,
                    capacity: 1.0,
                },
            ],
            0.0,
        )
        .unwrap();
        assert_eq!(m.bottleneck, "disk");
        assert!((m.x_bound(100.0) - 1000.0 / 3.0).abs() < 1e-9);
        assert!(Model::new(&[], 0.0).is_none());
    }
}
