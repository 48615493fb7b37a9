//! The results file's schema: what a step writes, field by field, and its version.

use super::{HistogramData, Latency, Part};
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use crate::error::Error;
use crate::results::figures::Interval;
use crate::results::figures::LoadReport;

pub const SCHEMA_VERSION: u32 = 1;
pub const HISTOGRAM_ENCODING: &str = "hdrhistogram-v2-deflate-base64";

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Results {
    pub schema_version: u32,
    pub tool: Tool,
    pub workload: String,
    pub target: TargetInfo,
    /// The managed server, when dbsweep started one (`--server`).
    pub server: Option<ServerInfo>,
    /// Seconds since the Unix epoch when the run started.
    pub started_at: u64,
    pub threads: u32,
    /// Measured seconds (warm-up excluded).
    pub time_s: f64,
    pub warmup_s: f64,
    pub events: u64,
    pub tps: f64,
    pub qps: f64,
    pub rows_per_s: f64,
    pub queries: Queries,
    pub latency_ms: Latency,
    /// Retried events by error class.
    pub errors: BTreeMap<String, u64>,
    pub retries: u64,
    pub reconnects: u64,
    /// Under `--max-tries`: events given up after their last try failed, and events that
    /// succeeded after one retry or more (pgbench's failed and retried transactions).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_events: u64,
    /// Of the failed events, those whose last try met a deadlock, and a serialization
    /// failure (pgbench's `--failures-detailed`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_deadlocks: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub failed_serialization: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retried_events: u64,
    /// Under `--latency-limit`: measured events over the limit, and (with `--rate`) events
    /// skipped because they were already that late when due.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub late_events: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_events: u64,
    /// Under `--reconnect`: seconds the clients spent in their reconnections, in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnect_s: Option<f64>,
    pub rate: Option<RateInfo>,
    /// Clients on fewer worker threads or sharing connections: how they were served and how
    /// long due clients waited; None when every client had a thread and a connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<Serving>,
    pub thread_events: Vec<u64>,
    /// Seconds each thread spent in its events (sysbench's "execution time" per thread).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_time_s: Vec<f64>,
    /// Under `--report-checkpoints`, the figures since the last checkpoint reached, which the
    /// personality's summary gives (not saved: the file has the whole run's).
    #[serde(skip)]
    pub since_checkpoint: Option<Box<super::figures::Checkpoint>>,
    pub intervals: Vec<Interval>,
    pub histogram: HistogramData,
    /// Every resolved option of the run.
    pub options: serde_json::Value,
    /// The load, when this command prepared the tables first.
    pub prepare: Option<LoadReport>,
    /// Hardware figures per operation (None when the sampler could not read /proc).
    pub hw: Option<crate::results::figures::HwFigures>,
    /// The server's counters over the measured part: deltas and per-operation figures.
    #[serde(default)]
    pub server_stats: Option<crate::results::figures::ServerStats>,
    /// What the server's sessions waited on over the measured part (sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waits: Option<crate::results::diagnosis::WaitProfile>,
    /// TPC-C runs: NOPM, tpm and each transaction type's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tpcc: Option<TpccFigures>,
    /// `--profile`: the on-CPU profile of the server's processes over the measured part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<crate::results::diagnosis::Profile>,
    /// The oltp workloads: each statement kind's count and latency over the measured part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<StatementFigures>,
    pub interrupted: bool,
    /// Clients that aborted after an error while the others ran on (pgbench's rule, in the
    /// pgbench drop-in): the figures are those of the clients that were left.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub aborted_clients: u64,
    /// Why the run stopped early, if it did.
    pub error: Option<String>,
    /// `--client-id`: the client host's name, for merging.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// When the measured part began, in seconds since the Unix epoch (the client host's
    /// clock); intervals end at `measured_from + t`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_from: Option<f64>,
    /// The machine the client ran on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostId>,
    /// The database host's CPU, disk and network from node_exporter (`--server-metrics`):
    /// host-level figures, per operation as the local sampler's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_host: Option<crate::results::figures::HostFigures>,
    /// A merged file (`dbsweep merge`): each client host's own figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<Part>,
    /// pgbench's scripts: each one's transactions (`count`, `per_event` its share of them) and
    /// latency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<StatementFigures>,
    /// The groups of clients that ran beside the measured ones (`--role`, a step's `roles`),
    /// each counted apart; every other figure of the file is the measured group's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<super::figures::RoleFigures>,
    /// `dbsweep capacity`: the search, its probes and its answer (the rest of the file is the
    /// answer's probe).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<super::figures::CapacityFigures>,
    /// `--phases`: each phase's figures, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<super::figures::PhaseFigures>,
    /// Seconds the clients took to connect, before any event (pgbench's "initial connection
    /// time").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_s: Option<f64>,
    /// The machine's ceilings where the step ran (a sweep with `limits = true`): the disk's,
    /// the log's sync and the connection's, as `dbsweep limits` measures them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<Box<super::limits::Limits>>,
}

pub use crate::input::MAX_SECONDS;

/// Which machine a client ran on: its host name and the kernel's boot id, which tells two
/// network namespaces (or containers) of one machine from two machines.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HostId {
    pub name: String,
    pub boot_id: String,
}

impl HostId {
    pub fn this() -> Option<HostId> {
        let read = |p: &str| Some(fs::read_to_string(p).ok()?.trim().to_string());
        Some(HostId {
            name: read("/proc/sys/kernel/hostname")?,
            boot_id: read("/proc/sys/kernel/random/boot_id")?,
        })
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: String,
    pub version: String,
    /// The clock the events and statements were timed with: "tsc" (the CPU's counter, where
    /// the kernel's clock runs on it) or "os" (see `crate::clock`); absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<String>,
}

impl Tool {
    pub fn this() -> Tool {
        Tool {
            name: "dbsweep".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            clock: Some(crate::clock::source().into()),
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetInfo {
    pub kind: String,
    /// The target URL with any password hidden.
    pub url: String,
    pub version: String,
    /// The server's non-default settings (PostgreSQL), global variables (MySQL), or PRAGMAs
    /// (SQLite).
    pub settings: BTreeMap<String, String>,
    /// The negotiated TLS protocol and cipher suite (`TLSv1_3 TLS13_AES_256_GCM_SHA384`);
    /// None on plain connections.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<String>,
}

/// The managed server a run started, if any.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerInfo {
    pub kind: String,
    /// The server binary's version line.
    pub version: String,
    /// The `--server-set` settings it was started with.
    pub settings: BTreeMap<String, String>,
    pub datadir: String,
    /// Whether the data directory was left in place.
    pub kept: bool,
    /// Each requested setting as the server has it, read back after start.
    #[serde(default)]
    pub effective: BTreeMap<String, crate::results::diagnosis::Effective>,
    /// Settings not applied as requested, and the server log's warnings about them.
    #[serde(default)]
    pub setting_warnings: Vec<String>,
    /// The install tree of the build that ran (absent for the system's default build).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basedir: Option<String>,
    /// Where that tree came from (`Debian unstable mysql-server-core 9.7.4-2`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Queries {
    pub read: u64,
    pub write: u64,
    pub other: u64,
    pub total: u64,
    /// Rows returned by reads.
    pub rows: u64,
}

/// A TPC-C run's headline figures (unaudited: NOPM, not tpmC).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TpccFigures {
    pub warehouses: u32,
    /// Committed New-Order transactions per minute.
    pub nopm: f64,
    /// Transactions of every type per minute (rolled-back New-Orders included).
    pub tpm: f64,
    /// Whether every type met its 90th-percentile response-time limit.
    pub limits_met: bool,
    /// NOPM per warehouse, and with --wait the most this run's terminals could reach (the
    /// specification's 12.86 per warehouse for ten terminals per warehouse and unscaled
    /// keying and think times).
    #[serde(default)]
    pub nopm_per_warehouse: f64,
    /// Terminals (clients) per warehouse; the specification has ten.
    #[serde(default)]
    pub terminals_per_warehouse: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nopm_ceiling_per_warehouse: Option<f64>,
    /// --wait's `--think-scale`; None without --wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_scale: Option<f64>,
    /// Keying and think times as specified, ten terminals per warehouse, the mix at or above
    /// the specification's least shares: a run that the specification's pacing describes
    /// (still unaudited).
    #[serde(default)]
    pub conforming: bool,
    /// The transactions' shares in percent (`--mix`; new_order, payment, order_status,
    /// delivery, stock_level); absent in files from before it: the least mix, 45,43,4,4,4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<[u32; 5]>,
    /// The types the mix gives less than the specification's least share (`stock_level 0% <
    /// 4%`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix_below_minimums: Vec<String>,
    pub transactions: Vec<TxnFigures>,
}

/// One TPC-C transaction type over the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TxnFigures {
    pub name: String,
    pub count: u64,
    /// Percent of all transactions.
    pub share_pct: f64,
    pub retries: u64,
    /// Expected rollbacks (New-Order's unused item ids).
    pub rollbacks: u64,
    pub latency_ms: Latency,
    /// The 90th-percentile limit and whether the run met it.
    pub limit_p90_ms: f64,
    pub limit_met: bool,
    /// Of the latency: the time a due terminal waited for a worker or a shared connection
    /// (only when terminals were multiplexed or pooled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_ms: Option<Latency>,
    /// The queue times themselves (with `queue_ms`), so that merged runs keep them per type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_histogram: Option<HistogramData>,
    /// The latencies themselves, so that merged runs have exact percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<HistogramData>,
}

/// One statement kind of the oltp workloads' events (point select, COMMIT, ...) over the run.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatementFigures {
    pub name: String,
    pub count: u64,
    /// Statements of this kind per event.
    pub per_event: f64,
    /// From the end of the event's statement before it (or the event's start) to its answer.
    pub latency_ms: Latency,
    /// The latencies themselves, so that merged runs have exact percentiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<HistogramData>,
    /// Tries that failed with a serialization failure or deadlock and were retried (pgbench's
    /// scripts); absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retries: Option<u64>,
    /// Events given up (`--max-tries`) after their last try failed here; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failures: Option<u64>,
    /// Scripts: events retried at least once (done or failed), and of the failed events those
    /// whose last error was a serialization failure, and a deadlock; absent when none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retried: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_serialization: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_deadlocks: Option<u64>,
}

/// How a run's clients were served when they were more than its worker threads or its
/// connections.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Serving {
    pub clients: u32,
    pub workers: u32,
    /// Connections the clients shared; None: one per client.
    pub connections: Option<u32>,
    /// Seconds the clients (or the shared connections) took to connect.
    pub connect_s: f64,
    /// Clients that fell behind their schedule: one of their measured events started later
    /// than due by more than the wait before it (at least 10 ms, at most 1 s).
    pub clients_behind: u64,
    /// Queue time: from an event's due instant to its start, waiting for a worker or a
    /// connection. It is part of the event's latency.
    pub queue_ms: Latency,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_histogram: Option<HistogramData>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateInfo {
    pub target_per_s: f64,
    /// How late events started against their schedule (their latency counts from the schedule).
    pub lag_avg_ms: f64,
    pub lag_max_ms: f64,
}

impl Latency {
    pub fn from_histogram(h: &Histogram<u64>) -> Latency {
        let ms = |ns: f64| ns / 1e6;
        if h.is_empty() {
            return Latency {
                min: 0.0,
                avg: 0.0,
                stddev: 0.0,
                p50: 0.0,
                p90: 0.0,
                p95: 0.0,
                p99: 0.0,
                p999: 0.0,
                max: 0.0,
                sum: 0.0,
            };
        }
        let q = |x: f64| ms(h.value_at_quantile(x) as f64);
        Latency {
            min: ms(h.min() as f64),
            avg: ms(h.mean()),
            stddev: ms(h.stdev()),
            p50: q(0.5),
            p90: q(0.9),
            p95: q(0.95),
            p99: q(0.99),
            p999: q(0.999),
            max: ms(h.max() as f64),
            sum: ms(h.mean() * h.len() as f64),
        }
    }
}

impl Results {
    pub fn read(path: &Path) -> Result<Results, Error> {
        let text = crate::input::read_text(path, crate::input::RESULTS)
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        let r: Results = parse_json(path, &text, "results file")?;
        r.check()
            .map_err(|e| Error::Usage(format!("{}: {e}", path.display())))?;
        Ok(r)
    }

    /// A file read from disk is input: its figures must be ones a run can have.
    pub fn check(&self) -> Result<(), String> {
        let max = MAX_SECONDS;
        let seconds = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=max).contains(&v) {
                Ok(())
            } else {
                Err(format!(
                    "{name} = {} is not a duration from 0 to {max} s",
                    crate::cfmt::quoted(v)
                ))
            }
        };
        seconds("time_s", self.time_s)?;
        seconds("warmup_s", self.warmup_s)?;
        // Rates and latencies are numbers a report can add and divide: a value beyond f64's
        // range (1e308 parts merged into an infinity) is no figure.
        let figure = |name: &str, v: f64| {
            if v.is_finite() && (0.0..=MAX_FIGURE).contains(&v) {
                Ok(())
            } else {
                Err(format!(
                    "{name} = {} is not a figure from 0 to {MAX_FIGURE:e}",
                    crate::cfmt::quoted(v)
                ))
            }
        };
        for (name, v) in [
            ("tps", self.tps),
            ("qps", self.qps),
            ("rows_per_s", self.rows_per_s),
        ] {
            figure(name, v)?;
        }
        let l = &self.latency_ms;
        for (name, v) in [
            ("min", l.min),
            ("avg", l.avg),
            ("stddev", l.stddev),
            ("p50", l.p50),
            ("p90", l.p90),
            ("p95", l.p95),
            ("p99", l.p99),
            ("p999", l.p999),
            ("max", l.max),
            ("sum", l.sum),
        ] {
            figure(&format!("latency_ms.{name}"), v)?;
        }
        for (i, iv) in self.intervals.iter().enumerate() {
            seconds(&format!("intervals[{i}].t"), iv.t)?;
            seconds(&format!("intervals[{i}].seconds"), iv.seconds)?;
            for (name, v) in [
                ("tps", iv.tps),
                ("qps", iv.qps),
                ("reads_per_s", iv.reads_per_s),
                ("writes_per_s", iv.writes_per_s),
                ("others_per_s", iv.others_per_s),
                ("rows_per_s", iv.rows_per_s),
                ("p50_ms", iv.p50_ms),
                ("p95_ms", iv.p95_ms),
                ("p99_ms", iv.p99_ms),
                ("max_ms", iv.max_ms),
                ("err_per_s", iv.err_per_s),
                ("reconn_per_s", iv.reconn_per_s),
            ] {
                figure(&format!("intervals[{i}].{name}"), v)?;
            }
        }
        if self.threads == 0 {
            return Err("threads = 0: a run has at least one client".into());
        }
        // Lists a run writes a bounded number of (a plan has at most 1,000 phases; a script,
        // a few dozen statements): a crafted file's tens of thousands, each with a histogram,
        // would make merge and report spend minutes.
        for (name, n, max) in [
            ("phases", self.phases.len(), MAX_PHASES),
            ("statements", self.statements.len(), MAX_STATEMENTS),
            ("scripts", self.scripts.len(), MAX_STATEMENTS),
            ("roles", self.roles.len(), MAX_STATEMENTS),
        ] {
            if n > max {
                return Err(format!("{n} {name}: a run has at most {max}"));
            }
        }
        // 9999-12-31: later start times overflow the system clock's type.
        if self.started_at > 253_402_300_799 {
            return Err(format!("started_at = {} is not a date", self.started_at));
        }
        Ok(())
    }
}

/// Whether the JSON object in `path` has a top-level `tool`, as a run's results file has and a
/// sweep's step record has not: which of the two a file that is neither was meant to be.
pub fn names_a_tool(path: &Path) -> bool {
    crate::input::read_text(path, crate::input::RESULTS)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("tool").is_some())
}

/// The phases a results file may hold: as many as `--phases` takes.
const MAX_PHASES: usize = 1000;
/// The statements (or scripts, or roles) a results file may hold.
const MAX_STATEMENTS: usize = 1000;

/// The largest rate or latency a results file may hold: far beyond any machine (1e15 events a
/// second), and small enough that a report's sums over thousands of files stay finite.
pub const MAX_FIGURE: f64 = 1e15;

/// `text` (read from `path`) as a `what`, with an error that says what is wrong: a file cut
/// short, text that is not JSON (NaN and Infinity are not), or JSON of another shape.
pub(super) fn parse_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    what: &str,
) -> Result<T, Error> {
    use serde_json::error::Category;
    serde_json::from_str(text).map_err(|e| {
        let why = match e.classify() {
            Category::Eof => format!(
                "cut short: the file ends inside its JSON (line {}); it was not written whole",
                e.line()
            ),
            Category::Syntax => format!("not valid JSON: {e}"),
            Category::Data | Category::Io => format!("not a dbsweep {what}: {e}"),
        };
        Error::Usage(format!("{}: {why}", path.display()))
    })
}

/// (year, month, day, hour, minute, second) in UTC of a Unix time.
pub fn utc_parts(epoch: u64) -> (i64, i64, i64, u64, u64, u64) {
    let (days, secs) = ((epoch / 86_400) as i64, epoch % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, secs / 3600, secs / 60 % 60, secs % 60)
}

/// `YYYY-MM-DD HH:MM:SS` in UTC: what SQL timestamps accept.
pub fn utc_datetime(epoch: u64) -> String {
    let (y, m, d, hh, mm, ss) = utc_parts(epoch);
    format!("{y:04}-{m:02}-{d:02} {hh:02}:{mm:02}:{ss:02}")
}

/// Whether the statement figures of `workload`'s results are its operations, one per event
/// (LinkBench's), rather than the statements of each event.
pub fn times_operations(workload: &str) -> bool {
    workload == "linkbench" || workload == "linkbench_synthetic"
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine;

    fn encoded(blob: &[u8]) -> HistogramData {
        HistogramData {
            encoding: HISTOGRAM_ENCODING.into(),
            unit: "ns".into(),
            data: base64::engine::general_purpose::STANDARD.encode(blob),
        }
    }

    #[test]
    fn a_histogram_header_claiming_gigabytes_is_refused_without_allocating_them() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        h.record_n(12_345, 7).unwrap();
        let good = HistogramData::encode(&h);
        assert_eq!(good.decode().unwrap().len(), 7);
        // The same counts, uncompressed, with a payload length of 4 GB in the header.
        let raw = base64::engine::general_purpose::STANDARD
            .decode(&good.data)
            .unwrap();
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::ZlibDecoder::new(&raw[8..]), &mut plain)
            .unwrap();
        plain[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        let e = encoded(&plain).decode().unwrap_err().to_string();
        assert!(e.contains("claims 4294967295 bytes of counts"), "{e}");
        // Words, not a debug dump, for data that is not a histogram at all.
        let e = encoded(b"not a histogram")
            .decode()
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an HdrHistogram V2 encoding"), "{e}");
        let e = HistogramData {
            data: "%%%".into(),
            ..encoded(b"")
        }
        .decode()
        .unwrap_err()
        .to_string();
        assert!(e.contains("not base64"), "{e}");
    }
}
