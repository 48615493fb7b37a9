//! What a step measured, as the results file stores it: the intervals, the load, the hardware
//! per operation (client, server, network, the server's host) and the server's counters. The
//! metrics layer computes these; here they are only data.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The whole statistics of the events since the last checkpoint (sysbench's
/// `--report-checkpoints`, whose counters start again at each): printed as the run goes and in
/// place of the summary's; the results file keeps the whole run's.
#[derive(Clone, Debug, Default)]
pub struct Checkpoint {
    /// Seconds into the measured part, and since the last checkpoint (or the start).
    pub t: f64,
    pub seconds: f64,
    /// Clients still running.
    pub threads: u32,
    pub events: u64,
    pub queries: super::Queries,
    pub errors: u64,
    pub reconnects: u64,
    pub latency_ms: super::Latency,
    /// The latency at the run's percentile (`--percentile`).
    pub pct_ms: f64,
    /// Each worker's events and busy seconds.
    pub thread_events: Vec<u64>,
    pub thread_time_s: Vec<f64>,
}

/// One interval's figures, as the live line shows them and the results file stores them.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    /// Seconds from the start of measurement to the end of this interval.
    pub t: f64,
    pub seconds: f64,
    pub threads: u32,
    pub events: u64,
    pub tps: f64,
    pub qps: f64,
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    pub others_per_s: f64,
    pub rows_per_s: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub err_per_s: f64,
    pub reconn_per_s: f64,
    /// The latency at the run's `percentile`, for sysbench's interval line (not saved).
    #[serde(skip)]
    pub pct_ms: f64,
    /// The latency's mean and standard deviation, for pgbench's progress line (not saved).
    #[serde(skip)]
    pub avg_ms: f64,
    #[serde(skip)]
    pub stddev_ms: f64,
    /// Under `--rate`, at the interval's end: events due and not yet begun, and events
    /// running, for sysbench's queue line (not saved).
    #[serde(skip)]
    pub queue: Option<(u64, u64)>,
    /// The interval's failed, skipped and retried events, retries, and the mean lag behind
    /// the `--rate` schedule, for a personality's progress line (not saved).
    #[serde(skip)]
    pub progress: ProgressCounts,
    /// `--phases`: the phase (from 1) the interval's middle falls in (its label; the phases'
    /// own figures are collected at each phase's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<u32>,
    /// TPC-C: committed New-Order transactions per minute, and New-Order's 95th percentile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_order_p95_ms: Option<f64>,
    /// TPC-C: New-Order's 90th percentile, the one its response-time limit is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_order_p90_ms: Option<f64>,
}

/// What a progress line may count of an interval beyond its rates (pgbench's counts them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProgressCounts {
    pub failed: u64,
    pub skipped: u64,
    pub retried: u64,
    pub retries: u64,
    pub lag_ms: f64,
}

/// What a load did, for the prepare figure.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadReport {
    pub tables: u32,
    pub rows: u64,
    pub seconds: f64,
    pub rows_per_s: f64,
    /// CPU seconds (user + system) that dbsweep itself used during the load.
    pub client_cpu_s: f64,
    /// Each step's name and seconds, where the load has named steps (pgbench's `-i`): for the
    /// load's last line, not the results file.
    #[serde(skip)]
    pub steps: Vec<(&'static str, f64)>,
}

impl LoadReport {
    /// A load of `rows` rows into `tables` tables in `seconds`, dbsweep using `client_cpu_s`.
    pub fn new(tables: u32, rows: u64, seconds: f64, client_cpu_s: f64) -> LoadReport {
        LoadReport {
            tables,
            rows,
            seconds,
            rows_per_s: if seconds > 0.0 {
                rows as f64 / seconds
            } else {
                0.0
            },
            client_cpu_s,
            steps: Vec::new(),
        }
    }
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
    /// The client's (dbsweep's own) peak resident memory over the step in KB: its high-water
    /// mark, reset where the step's clients began to connect. Absent from earlier versions'
    /// files, and where the kernel does not let a process reset its mark.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_peak_rss_kb: Option<u64>,
    /// Of it, on embedded SQLite: the most heap SQLite itself held over the step in KB (its
    /// page caches, lookaside buffers, schemas and statements), the database's part of the
    /// client's memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sqlite_heap_peak_kb: Option<u64>,
    /// The device the IO figures are for.
    pub device: Option<String>,
    /// Share of the step the device was busy, in percent (its utilisation).
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub device_busy_pct: Option<f64>,
    /// CPUs of the machine (the CPU's capacity in the queueing model).
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub cpus: usize,
    /// Mean CPU busy over the step, split: the machine's in percent of all its CPUs, the
    /// processes' in percent of one CPU.
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub cpu_pct: CpuPct,
    /// The server's context switches (its live threads) per operation.
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub server_cs_per_o: Option<f64>,
    /// KB the processes had the storage layer read and write over the step (/proc/PID/io).
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub proc_io_kb: ProcIoKb,
    /// Per-second machine CPU busy percent, client and server CPU percent of one core.
    pub series: Vec<HwSecond>,
    /// The CPUs' frequency over the step (cpufreq's scaling_cur_freq of every CPU, read with
    /// each sample); absent where the kernel has no cpufreq (most virtual machines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_mhz: Option<MhzRange>,
    /// The client's network interface towards the database: bytes per operation and how busy
    /// its link was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<NetFigures>,
    /// How busy the machine was beside the run. Absent from earlier versions' files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beside: Option<Beside>,
}

/// What else ran on the machine over the step: other processes' CPU and the hypervisor's
/// steal, each in percent of all the machine's CPUs. `busy` when either took enough to move the
/// figures: such a step is flagged, and no difference built on it is called one.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Beside {
    /// None where a share of this machine's CPU is a database server whose processes dbsweep
    /// does not know (a local server given by URL without --server-pid).
    pub others_pct: Option<f64>,
    pub steal_pct: f64,
    pub busy: bool,
}

/// Other processes' share of the machine's CPUs over which a step counts as measured on a busy
/// machine: a tenth (a fifth of one core on two), well above the kernel's own threads.
pub const BUSY_OTHERS_PCT: f64 = 10.0;
/// The hypervisor's steal over which a step counts as measured on a busy machine.
pub const BUSY_STEAL_PCT: f64 = 5.0;

impl Beside {
    pub fn of(others_pct: Option<f64>, steal_pct: f64) -> Beside {
        Beside::judged(others_pct, steal_pct, 0.0)
    }

    /// As `of`, for shares measured to within `unsure_pct` (a short step's few clock ticks):
    /// busy only when a share is over its limit by more than that.
    pub fn judged(others_pct: Option<f64>, steal_pct: f64, unsure_pct: f64) -> Beside {
        Beside {
            others_pct,
            steal_pct,
            busy: others_pct.is_some_and(|o| o > BUSY_OTHERS_PCT + unsure_pct)
                || steal_pct > BUSY_STEAL_PCT + unsure_pct,
        }
    }

    /// "other processes 45% of the CPUs, steal 0%".
    pub fn describe(&self) -> String {
        let others = self
            .others_pct
            .map_or("other processes unknown".into(), |o| {
                format!("other processes {o:.0}% of the CPUs")
            });
        format!("{others}, steal {:.0}%", self.steal_pct)
    }
}

/// The least, greatest and mean frequency any CPU had at the sampler's readings, in MHz.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MhzRange {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

impl MhzRange {
    /// Whether the frequency moved by more than a tenth of its top during the step (a
    /// governor, power capping or thermal throttling at work).
    pub fn varied(&self) -> bool {
        self.max > 0.0 && (self.max - self.min) / self.max > 0.10
    }
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
pub struct CpuPct {
    pub machine_user: f64,
    pub machine_system: f64,
    pub machine_iowait: f64,
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub machine_steal: f64,
    pub client_user: f64,
    pub client_system: f64,
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub client_iowait: f64,
    pub server_user: Option<f64>,
    pub server_system: Option<f64>,
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub server_iowait: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProcIoKb {
    pub client_read: Option<f64>,
    pub client_write: Option<f64>,
    pub server_read: Option<f64>,
    pub server_write: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HwSecond {
    pub t: f64,
    pub machine_busy_pct: f64,
    pub client_cpu_pct: f64,
    pub server_cpu_pct: Option<f64>,
    pub cs_per_s: f64,
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub machine_iowait_pct: f64,
    /// Absent from results files of earlier versions.
    #[serde(default)]
    pub server_cs_per_s: Option<f64>,
}

/// Bytes through one interface per operation over a step, and how busy its link was.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NetFigures {
    /// The interface (`eth0`, `lo`, a veth ...).
    pub device: String,
    /// KB received and sent per operation.
    pub rx_kb_per_o: f64,
    pub tx_kb_per_o: f64,
    /// The link's speed in Mbit/s, and where it came from (`sysfs`, `node_exporter`,
    /// `--link-speed`); None when unknown (a loopback has no speed).
    pub link_mbit: Option<f64>,
    pub link_source: Option<String>,
    /// Percent of the link's capacity used by its busier direction (full duplex).
    pub busy_pct: Option<f64>,
}

/// The server host's figures over a step, as node_exporter gave them.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostFigures {
    /// The endpoint scraped (without credentials).
    pub source: String,
    /// Always "host": every process of the machine counts, not only the server's.
    pub scope: String,
    /// Answered scrapes, and the seconds between the first and the last of them.
    pub scrapes: u32,
    pub seconds: f64,
    pub cpus: Option<usize>,
    /// Busy CPU (all modes but idle and iowait) per operation, microseconds.
    pub cpu_us_per_op: Option<f64>,
    /// Percent of all the host's CPUs.
    pub cpu_user_pct: Option<f64>,
    pub cpu_system_pct: Option<f64>,
    pub cpu_iowait_pct: Option<f64>,
    pub cs_per_o: Option<f64>,
    /// The disk the IO figures are for (`--server-device`, else the busiest).
    pub device: Option<String>,
    pub r_per_o: Option<f64>,
    pub w_per_o: Option<f64>,
    pub rkb_per_o: Option<f64>,
    pub wkb_per_o: Option<f64>,
    pub device_busy_pct: Option<f64>,
    /// The busiest network interface other than the loopback.
    pub net: Option<NetFigures>,
    /// What is missing and why (a series the endpoint lacks, scrapes that failed).
    pub note: Option<String>,
}

/// Numeric counters by `source.name`.
pub type Counters = BTreeMap<String, f64>;

/// What a step's results keep of the server's counters.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerStats {
    /// After minus before, for every numeric counter (gauges too: their change).
    pub deltas: Counters,
    /// `SHOW ENGINE INNODB STATUS` at the end of the step (MySQL, MariaDB).
    pub innodb_status: Option<String>,
    /// Share of page requests served from the cache, 0 to 1.
    pub hit_rate: Option<f64>,
    pub pages_read_per_op: Option<f64>,
    pub pages_written_per_op: Option<f64>,
    /// Write-ahead or redo log bytes per operation.
    pub log_bytes_per_op: Option<f64>,
    /// MariaDB/MySQL's query cache, when it was used in the step: hit rate = Qcache_hits /
    /// (Qcache_hits + Com_select), insert rate = Qcache_inserts / (Qcache_hits + Com_select),
    /// prune rate = Qcache_lowmem_prunes / Qcache_inserts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcache_hit_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcache_insert_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcache_prune_rate: Option<f64>,
    /// PostgreSQL: checkpoints (timed and requested) during the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoints: Option<f64>,
    /// The database's size at the step's end, MB (10^6 bytes): PostgreSQL's
    /// `pg_database_size`; MySQL/MariaDB's tables' data and index lengths (InnoDB's own
    /// estimate of its pages); SQLite's pages (the WAL not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_size_mb: Option<f64>,
}

/// TPC-C's least mix, percent of new_order, payment, order_status, delivery, stock_level: the
/// specification's minimums (payment 43, the other three 4 each), New-Order the rest; a results
/// file without `mix` ran it.
pub const TPCC_LEAST_MIX: [u32; 5] = [45, 43, 4, 4, 4];

/// `dbsweep capacity`: the highest rate found whose latency percentile stays under the limit,
/// every probe that found it, and the queueing model's bound beside it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityFigures {
    pub percentile: f64,
    pub limit_ms: f64,
    /// The answer: the highest rate probed whose percentile stayed under the limit (events/s);
    /// None when none did.
    pub rate_per_s: Option<f64>,
    /// The lowest rate probed over the limit (or that failed otherwise), when one was.
    pub over_per_s: Option<f64>,
    /// The closed-loop rate of the same clients: the first probe.
    pub closed_loop_per_s: f64,
    /// The queueing model's upper bound of throughput (events/s) from the probes' demands,
    /// and what it came from.
    pub bound_per_s: Option<f64>,
    pub bound_from: String,
    /// Said when the answer is above the bound: the model does not hold here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contradiction: Option<String>,
    pub probes: Vec<CapacityProbe>,
}

/// One probe of a capacity search.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityProbe {
    /// The rate asked (events/s); None for the closed-loop probe.
    pub rate_per_s: Option<f64>,
    /// The rate done.
    pub tps: f64,
    pub time_s: f64,
    pub events: u64,
    /// The latency at the search's percentile, from each event's scheduled time.
    pub percentile_ms: f64,
    pub errors: u64,
    /// `under` (the limit), `over`, `errors`, `rate not kept` (under 95% of it done), or
    /// `closed loop`.
    pub verdict: String,
}

/// One phase of a run whose load changed over time (`--phases`), and what it did: its
/// events' counts (an event counts in the phase it ended in: the reporter collects at each
/// phase's end).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseFigures {
    /// The phase as given: `60s@100/s`, `120s@200..1000/s`, `60s@8 clients`.
    pub phase: String,
    /// Where it begins, in seconds into the measured part.
    pub start_s: f64,
    /// The seconds its intervals cover.
    pub time_s: f64,
    /// Open loop: the rate it asked for, on average over the phase (events/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_per_s: Option<f64>,
    /// Closed loop: its active clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<u32>,
    pub events: u64,
    pub tps: f64,
    /// Errors met (retried or ignored) and events given up.
    pub errors: u64,
    pub failed: u64,
    pub latency_ms: Latency,
    /// The phase's latencies, so that merged runs have its exact percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<super::HistogramData>,
}

/// A group of clients that ran beside the measured ones, and what it did.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleFigures {
    pub workload: String,
    pub clients: u32,
    /// The rate it was asked for, events/s over its clients (an open loop); None: a closed
    /// loop.
    pub rate: Option<f64>,
    /// Whether it kept that rate: at least 95% of it over the measured seconds.
    pub rate_met: Option<bool>,
    pub events: u64,
    pub time_s: f64,
    pub tps: f64,
    pub queries: super::Queries,
    pub latency_ms: Latency,
    /// The latencies themselves, so that merged runs have the group's exact percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<super::HistogramData>,
    /// Each operation type's count and latency (the statement kinds of the oltp workloads,
    /// LinkBench's operations), as the measured group's `statements`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<super::StatementFigures>,
    /// Retried events by error class.
    pub errors: BTreeMap<String, u64>,
    /// Why it stopped early, if it did.
    pub error: Option<String>,
}

/// How close to its rate a paced group must come to have kept it.
pub const RATE_MET: f64 = 0.95;

/// One client host's figures in a merged file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    /// `--client-id` of the run, if it had one.
    pub client_id: Option<String>,
    /// The file it came from, as given to `dbsweep merge`.
    pub file: String,
    /// The client machine's host name.
    pub host: Option<String>,
    pub started_at: u64,
    pub measured_from: Option<f64>,
    pub threads: u32,
    pub time_s: f64,
    pub events: u64,
    pub tps: f64,
    pub qps: f64,
    pub latency_ms: Latency,
    /// Client CPU per operation of this host's dbsweep, in microseconds.
    pub client_cpu_us_per_op: Option<f64>,
    pub interrupted: bool,
    pub error: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    pub min: f64,
    pub avg: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    /// Sum of all event latencies, as sysbench reports it.
    pub sum: f64,
}
